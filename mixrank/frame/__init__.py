"""Stage frame: DataFrame + Spec -> Frame (validated, encoded, paired)."""

from .build import CONVENTIONAL_KEYS, build_frame, default_pair_by, refuse_build_options
from .frame import Frame, SufficientStats, compute_stats
from .source import to_pandas

__all__ = ["build_frame", "default_pair_by", "refuse_build_options", "CONVENTIONAL_KEYS", "Frame", "SufficientStats",
           "compute_stats", "to_pandas"]
