"""Stage results: FitResult (immutable, cheap accessors), Summary, and GlmmResult (binomial GLMM)."""

from .fit_result import FitResult
from .glmm_result import GlmmResult
from .summary import Summary

__all__ = ["FitResult", "GlmmResult", "Summary"]
