"""Stage results: ``omnibus()``, the test that every model's score is equal (a mixin of
:class:`~mixrank.results.FitResult`; the computation is :mod:`mixrank.inference.omnibus`).

Inputs: the fit's :class:`~mixrank.frame.Frame` (cell scores, the unit's codes) and its
``df_method``.  Outputs: a one-row tidy DataFrame (docs/methods.md §12).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._util import as_rng, check_draws, tidy
from ..errors import DesignError, OptionError
from ..inference.omnibus import cochran, cr2_htz, friedman, randomization

if TYPE_CHECKING:
    from ..frame import Frame

__all__ = ["OmnibusMixin", "OMNIBUS_METHODS"]

#: The methods of ``omnibus()``: the cluster-robust Wald test (CR2 path) and the classic
#: cell-level rank / 0-1 tests.
OMNIBUS_METHODS = ("cr2", "randomization", "friedman", "cochran")

_LABEL = {"cr2": "Wald test, CR2 at the unit, HTZ small-sample F (Pustejovsky & Tipton 2018)",
          "randomization": "the CR2 HTZ statistic, p-value from permutations of the model "
          "labels within each unit",
          "friedman": "Friedman's rank test over cells", "cochran": "Cochran's Q over cells"}


class OmnibusMixin:
    """``omnibus()`` for a fit whose :attr:`frame` holds the cell scores."""

    frame: Frame
    df_method: str

    if TYPE_CHECKING:
        @property
        def df_label(self) -> str: ...

        def _meta(self, table: str, **extra: Any) -> dict: ...

    def omnibus(self, *, method: str | None = None, draws: int | None = None,
                rng: Any = None) -> pd.DataFrame:
        """Do the models differ at all?  The test that every model's score is equal.

        ``method=None`` (default) is ``"cr2"``, offered where the fit's contrasts use CR2 at
        the unit (``df="cr2"``, the default of nested designs): the Wald test of the model
        means of ``lm(score ~ 0 + model)`` on the cells, clustered by the formula's unit,
        with the CR2 covariance and the HTZ small-sample F (clubSandwich's
        ``Wald_test(..., vcov = "CR2", test = "HTZ")``).  ``"randomization"``: the same
        statistic with its p-value from permutations of the model labels, one per unit
        applied to all its cells (complete cells; every permutation when there are at most
        ``draws`` -- default 2000 -- of them, else ``draws`` random ones drawn with
        ``rng``).  ``"friedman"`` and ``"cochran"``
        are the classic cell-level tests (cells as blocks; complete cells only, Cochran's Q
        0/1 scores only).

        Parameters
        ----------
        method : {"cr2", "randomization", "friedman", "cochran"}, optional
            The test (docs/methods.md §12); default ``"cr2"`` on CR2 fits, refused
            elsewhere (pass a cell-level test there).
        draws : int, optional
            ``method="randomization"`` only: the largest number of permutations enumerated,
            else drawn (default 2000).
        rng : Generator or int, optional
            ``method="randomization"`` only: the randomness of drawn permutations.

        Raises
        ------
        OptionError
            An unknown ``method``; ``"cr2"`` / ``"randomization"`` on a fit whose contrasts do
            not use CR2 at the unit; ``draws`` or ``rng`` with a method that draws nothing.
        DesignError
            A fit with one model.
        DataError
            A singular covariance (fewer units than models, or two models whose scores
            differ by the same amount in every unit); missing cells for the cell-level tests.

        Returns
        -------
        pandas.DataFrame
            One row: ``statistic`` (F for ``cr2``, chi-square otherwise), ``df_num``,
            ``df_den`` (infinite for the chi-square tests), ``p_value``, ``method`` and
            ``unit`` (the clustering unit, ``"cell"`` for the cell-level tests).
            ``attrs['mixrank']['test']`` names the test (``permutations`` and ``exact``
            too for ``"randomization"``).

        Examples
        --------
        >>> import mixrank as mr
        >>> res = mr.fit("correct ~ model + (1|subject)", mr.load_example())
        >>> om = res.omnibus()
        >>> list(om.columns)
        ['statistic', 'df_num', 'df_den', 'p_value', 'method', 'unit']
        >>> om.loc[0, "unit"]
        'subject'
        """
        fr = self.frame
        if len(fr.models) < 2:
            raise DesignError(f"omnibus() compares models; this fit has one model "
                              f"({fr.models[0]!r}): there is nothing to test")
        if method is None:
            method = "cr2" if self.df_method == "cr2" else None
            if method is None:
                raise OptionError(
                    f"omnibus(): this fit's contrasts use {self.df_label}, not CR2 at the "
                    "unit, and the cluster-robust omnibus test is offered on CR2 fits only "
                    "(df='cr2': a REML fit whose only clustering is the unit); pass "
                    "method='friedman' or method='cochran' for the cell-level tests, or "
                    "refit with df='cr2'")
        if method not in OMNIBUS_METHODS:
            raise OptionError(f"omnibus(method={method!r}) is not a method; expected one of "
                              f"{list(OMNIBUS_METHODS)}")
        if method != "randomization" and (draws is not None or rng is not None):
            raise OptionError(f"omnibus(method={method!r}) draws nothing; draws= and rng= "
                              "set method='randomization': drop them or pass that method")
        scores = np.asarray(fr.scores, dtype=float)
        extra: dict[str, Any] = {}
        if method in ("cr2", "randomization"):
            if self.df_method != "cr2":
                raise OptionError(
                    f"omnibus(method={method!r}) needs a fit whose contrasts use CR2 at the "
                    f"unit (df='cr2'); this fit uses {self.df_label}: refit with "
                    "df='cr2' or use method='friedman' or method='cochran'")
            unit = fr.spec.unit
            codes = (np.asarray(fr.term_codes[unit]) if unit is not None
                     else np.arange(scores.shape[0]))
            if method == "cr2":
                res = cr2_htz(scores, codes)
            else:
                n = check_draws(2000 if draws is None else draws)
                res, count, exact = randomization(scores, codes, n, as_rng(rng))
                extra = dict(permutations=count, exact=exact)
            unit_name = unit if unit is not None else "cell"
        else:
            res = (friedman if method == "friedman" else cochran)(scores)
            unit_name = "cell"
        row = dict(statistic=res.statistic, df_num=res.df_num, df_den=res.df_den,
                   p_value=res.p_value, method=method, unit=unit_name)
        return tidy([row], **self._meta("omnibus", test=_LABEL[method],
                                        models=list(fr.models), **extra))
