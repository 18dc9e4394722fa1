"""Stage results: FitResult (immutable, cheap accessors), Summary, and GlmmResult (binomial GLMM;
GlmmByResult for ``model * x`` with a categorical x, GlmmSlopeResult with a numeric x)."""

from .fit_result import FitResult
from .glmm_by import GlmmByResult
from .glmm_result import GlmmResult
from .glmm_slope import GlmmSlopeResult
from .summary import Summary

__all__ = ["FitResult", "GlmmResult", "GlmmByResult", "GlmmSlopeResult", "Summary"]
