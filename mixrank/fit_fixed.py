"""Composition for model x covariate formulas: formula -> frame + covariates -> design.

Inputs: an :class:`~mixrank.formula.InteractionSpec` and long-format data.
Outputs: the :class:`~mixrank.frame.Frame` with the covariates in its
``cells`` and the fixed :class:`~mixrank.engine.lmm.fixed.Design`, ready for
:func:`mixrank.engine.lmm.fixed.fit_pairs_fixed`.  Called by :func:`mixrank.fit`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .engine.control import DEFAULT_CONTROL, Control
from .engine.lmm.fixed import Design, build_design, fit_pairs_fixed
from .engine.records import PairFit
from .errors import DataError, OptionError
from .formula import InteractionSpec
from .frame import Frame, build_frame

__all__ = ["interaction_frame", "fit_interaction"]


def interaction_frame(spec: InteractionSpec, data: Any, *, method: str, engine: str,
                      backend: str, pair_by: Sequence[str] | None, replicate: str | None,
                      na: str) -> tuple[Frame, Design]:
    """Frame (with covariates) and fixed design of an interaction formula.

    Raises
    ------
    OptionError
        ``method`` other than ``"reml"``, an engine other than the native one,
        an out-of-core backend (covariates are read from the rows in memory).
    DataError
        Everything :func:`~mixrank.frame.build_frame` and
        :func:`~mixrank.frame.covariates.attach_covariates` raise; a prebuilt
        Frame without the covariates.
    """
    if method != "reml":
        raise OptionError(f"method={method!r} does not support covariates in the fixed part "
                          f"({spec.formula!r}); use method='reml'")
    if engine not in ("auto", "native"):
        raise OptionError(f"engine={engine!r} does not support covariates in the fixed part; "
                          "use engine='native' (the default)")
    if backend != "pandas":
        raise OptionError(f"backend={backend!r} does not support covariates in the fixed part "
                          "yet; use backend='pandas'")
    if isinstance(data, Frame):
        frame = data
        missing = [c for c in spec.covariates if c not in frame.cells.columns]
        if missing or frame.spec != spec:
            raise DataError(f"the Frame was built without the covariates {missing or list(spec.covariates)} "
                            "of this formula; pass the raw data instead")
    else:
        frame = build_frame(data, spec, pair_by=pair_by, replicate=replicate, na=na)
    return frame, build_design(frame, spec)


def fit_interaction(spec: InteractionSpec, data: Any,
                    resolve: Callable[[Frame, Any], list[tuple[int, int]]], *, pairs: Any,
                    method: str, engine: str, family: str, estimand: str, backend: str,
                    pair_by: Sequence[str] | None, replicate: str | None,
                    na: str, control: Control = DEFAULT_CONTROL, client: Any = None,
                    backend_options: Any = None,
                    progress: Callable[[int, int], Any] | None = None
                    ) -> tuple[Frame, list[PairFit], list[tuple[int, int]]]:
    """Frame, per-pair fits and pair indices of an interaction formula
    (``resolve``: :func:`mixrank.frame.pairs.resolve_pairs`).

    ``progress(done, total)`` is called before and after the pairs are fitted
    (once at the end, as the cross-check engines do).  ``client`` and
    ``backend_options`` configure out-of-core backends, which this path does
    not have: set, they raise :class:`~mixrank.errors.OptionError`.
    """
    for name, value in (("client", client), ("backend_options", backend_options)):
        if value is not None:
            raise OptionError(f"{name}= configures the out-of-core backends ('duckdb', "
                              "'dask'), which model x covariate formulas do not use (their "
                              "covariates are read from the rows in memory, backend='pandas'); "
                              f"drop {name}=")
    if family != "gaussian":
        raise OptionError(f"family={family!r} does not support covariates in the fixed part "
                          "yet; use family='gaussian'")
    frame, design = interaction_frame(spec, data, method=method, engine=engine, backend=backend,
                                      pair_by=pair_by, replicate=replicate, na=na)
    idx = resolve(frame, pairs)
    if progress is not None:
        progress(0, len(idx))
    try:
        fits = fit_pairs_fixed(frame, design, idx, estimand=estimand, control=control)
        if progress is not None:
            progress(len(idx), len(idx))
    finally:
        close = getattr(progress, "close", None)
        if callable(close):
            close()
    return frame, fits, idx
