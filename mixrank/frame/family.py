"""Stage frame: the one frame builder, by family -- data + formula -> Frame.

Inputs: long-format data (or a file), a formula and the response family.
Outputs: the :class:`~mixrank.frame.Frame` every fit of that family works from.

* ``family="gaussian"``: the rows validated and encoded by
  :func:`mixrank.frame.build.build_frame`; for a model x covariate formula
  (:class:`~mixrank.formula.InteractionSpec`) with its covariates attached to
  the cells (:func:`mixrank.frame.covariates.attach_covariates`), the frame
  ``fit()`` uses for such a formula;
* ``family="binomial"``: the formula read as glmer reads it
  (:func:`mixrank.formula.glmm_terms.parse_glmm`) and the data by
  :func:`mixrank.frame.glmm.binomial_frame` (0/1 rows or ``cbind`` counts).

Contents: :data:`FRAME_FAMILIES`, :func:`build_frame`.  ``mixrank.build_frame``
is this function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._util import did_you_mean
from ..errors import OptionError
from ..formula.fixed import InteractionSpec
from ..formula.glmm_terms import GlmmFormula, parse_glmm
from ..formula.spec import Spec
from .build import as_spec
from .build import build_frame as build_rows
from .covariates import attach_covariates
from .frame import Frame
from .glmm import binomial_frame

__all__ = ["FRAME_FAMILIES", "build_frame"]

#: Values of ``build_frame(family=)`` (the response families of :func:`mixrank.fit`).
FRAME_FAMILIES = ("gaussian", "binomial")


def build_frame(data: Any, formula: str | Spec | GlmmFormula, *,
                pair_by: Sequence[str] | None = None, replicate: str | None = None,
                na: str = "error", family: str = "gaussian",
                load: Callable[..., Frame] | None = None) -> Frame:
    """Validate and encode long-format data for ``formula`` and ``family``.

    Parameters
    ----------
    data : DataFrame, polars.DataFrame, pyarrow.Table or path
        One row per observation (``.csv``, ``.csv.gz``, ``.parquet``, ``.jsonl``).
    formula : str or Spec
        e.g. ``"correct ~ model + (1|subject)"``; for ``family="binomial"``
        as ``lme4::glmer`` reads it (``cbind(k, n - k) ~ ...``,
        ``(1|subject:model)``).
    pair_by, replicate, na
        As in :func:`mixrank.frame.build.build_frame` (pairing keys, the
        replicate column, missing scores).
    family : {"gaussian", "binomial"}
        The response family of the fit the frame is for.
    load : callable, optional
        How rows become a frame (``load(data, spec, pair_by=, replicate=,
        na=)``; default the rows in memory); the fit passes an out-of-core
        backend's loader here.  Used for gaussian formulas without
        covariates and for binomial 0/1 rows.

    Returns
    -------
    Frame
        The encoded cells, one row per cell and a column per model (see :class:`~mixrank.Frame`).

    Raises
    ------
    OptionError
        An unknown ``family``.
    FormulaError, DataError
        Everything the family's parser and builder raise.

    Examples
    --------
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> mixrank.build_frame(df, "correct ~ model + (1|subject)").n_cells
    960
    >>> mixrank.build_frame(df, "correct ~ model + (1|subject:model)", family="binomial",
    ...                     pair_by=["subject", "question", "prompt"]).n_cells
    960
    """
    if family not in FRAME_FAMILIES:
        raise OptionError(f"family={family!r} is not an option; expected one of "
                          f"{', '.join(repr(f) for f in FRAME_FAMILIES)}"
                          f"{did_you_mean(family, FRAME_FAMILIES)}")
    if family == "binomial":
        gf = formula if isinstance(formula, GlmmFormula) else parse_glmm(
            formula.formula if isinstance(formula, Spec) else formula)
        return binomial_frame(gf, data, pair_by=pair_by, replicate=replicate, na=na,
                              load=load)[0]
    if isinstance(formula, GlmmFormula):
        raise OptionError("a binomial formula (GlmmFormula) was given with family='gaussian'; "
                          "pass family='binomial' or the formula text")
    spec = as_spec(formula)
    if isinstance(spec, InteractionSpec):
        frame = build_rows(data, spec, pair_by=pair_by, replicate=replicate, na=na)
        return attach_covariates(frame, data, spec, na=na)
    return (load or build_rows)(data, spec, pair_by=pair_by, replicate=replicate, na=na)
