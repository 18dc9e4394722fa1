"""Stage results: FitResult (immutable, cheap accessors) and Summary."""

from .fit_result import FitResult
from .summary import Summary

__all__ = ["FitResult", "Summary"]
