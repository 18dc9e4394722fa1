"""Stage formula: glmer's literal reading of a binomial formula.

Inputs: a formula string as written for ``lme4::glmer``, e.g.
``"correct ~ model + (1|question) + (1|subject:model)"`` or
``"cbind(k, n - k) ~ model + (1|question)"``.  Outputs: :class:`GlmmFormula`
-- the :class:`~mixrank.formula.spec.Spec` of the terms that do not involve
the comparison factor (parsed by :func:`mixrank.formula.parse`, so every
error of the linear engine's parser applies), the random terms that do
(model-by-unit terms such as ``(1|subject:model)``), and the count columns
of a ``cbind`` response.

Contents: :class:`GlmmFormula`, :func:`parse_glmm`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import FormulaError
from .fixed import InteractionSpec, parse
from .spec import Spec

__all__ = ["GlmmFormula", "parse_glmm"]

_BAR = re.compile(r"\(\s*([^()|]*?)\s*\|\s*([^()|]*?)\s*\)")
_CBIND = re.compile(r"^\s*cbind\s*\(\s*([A-Za-z_.][\w.]*)\s*,\s*(.+?)\s*\)\s*$")
_MINUS = re.compile(r"^([A-Za-z_.][\w.]*)\s*-\s*([A-Za-z_.][\w.]*)$")
_NAME = re.compile(r"^[A-Za-z_.][\w.]*$")


@dataclass(frozen=True)
class GlmmFormula:
    """A binomial formula read literally as glmer reads it.

    Attributes
    ----------
    formula : str
        The text as given.
    spec : Spec
        Response (the success column for ``cbind``), comparison factor and
        the random terms that do not name the comparison factor.
    model_terms : tuple of tuple of str
        Random terms naming the comparison factor, as written (e.g.
        ``("subject", "model")``).
    failures, trials : str or None
        ``cbind(k, f)``: the failure column ``f``; ``cbind(k, n - k)``: the
        trials column ``n``.
    by : str or None
        ``model * x``: the covariate crossed with the comparison factor
        (docs/glmm.md §11).
    """

    formula: str
    spec: Spec
    model_terms: tuple[tuple[str, ...], ...] = ()
    failures: str | None = None
    trials: str | None = None
    by: str | None = None

    @property
    def term_names(self) -> tuple[str, ...]:
        """Every random term's name as written, the comparison-free ones first."""
        return self.spec.term_names + tuple(":".join(t) for t in self.model_terms)


def _expand(group: str) -> list[tuple[str, ...]]:
    """``a/b:c`` -> [(a,), (a, b, c)]; ``a:b`` -> [(a, b)]."""
    out: list[tuple[str, ...]] = []
    acc: tuple[str, ...] = ()
    for seg in group.split("/"):
        acc = acc + tuple(x.strip() for x in seg.split(":"))
        out.append(acc)
    return out


def parse_glmm(formula: str) -> GlmmFormula:
    """Parse a glmer binomial formula (see module docstring).

    Raises
    ------
    FormulaError
        A ``cbind`` response that is not ``cbind(k, f)`` or ``cbind(k, n -
        k)``; a random term grouping by the comparison factor alone
        (``(1|model)``: the model effects are fixed); every error of
        :func:`mixrank.formula.parse` on the remaining formula.
    """
    if not isinstance(formula, str) or "~" not in formula:
        return GlmmFormula(formula=str(formula), spec=parse(formula))
    lhs, rhs = formula.split("~", 1)
    failures = trials = None
    m = _CBIND.match(lhs)
    if m:
        succ, second = m.group(1), m.group(2).strip()
        mm = _MINUS.match(second)
        if mm and mm.group(2) == succ:
            trials = mm.group(1)
        elif _NAME.match(second):
            failures = second
        else:
            raise FormulaError(
                f"The response '{lhs.strip()}' is not cbind(successes, failures). Expected "
                "'cbind(k, f)' (columns of successes and failures) or 'cbind(k, n - k)' "
                "(successes and trials), e.g. 'cbind(k, n - k) ~ model + (1|question)'.",
                formula, lhs.find("cbind"), len(lhs.strip()))
        lhs = succ + " "
    fixed = _BAR.sub("", rhs)
    words = re.findall(r"[A-Za-z_.][\w.]*", fixed)
    comparison = words[0] if words else None
    model_terms: list[tuple[str, ...]] = []
    kept: list[str] = []
    for bm in _BAR.finditer(rhs):
        group = bm.group(2)
        for factors in _expand(group):
            if comparison is not None and comparison in factors:
                others = tuple(f for f in factors if f != comparison)
                if not others:
                    start = formula.find(bm.group(0))
                    raise FormulaError(
                        f"The random term '{bm.group(0)}' groups by the comparison factor "
                        f"'{comparison}' alone, but the model effects are fixed. Expected a "
                        f"model-by-unit term such as '(1|subject:{comparison})'; remove "
                        f"'{bm.group(0)}'.", formula, max(start, 0), len(bm.group(0)))
                model_terms.append(factors)
            else:
                kept.append(f"(1|{':'.join(factors)})" if bm.group(1) == "1" else bm.group(0))
    fixed_terms = [t.strip() for t in fixed.split("+") if t.strip()]
    spec = parse(lhs + "~ " + " + ".join(fixed_terms + kept))
    by = None
    if isinstance(spec, InteractionSpec):
        if len(spec.covariates) != 1 or spec.fixed_terms != ((spec.covariates[0],),):
            start = formula.find(fixed.strip().split("+")[0].strip()) if fixed.strip() else 0
            raise FormulaError(
                f"The binomial fixed part crosses the comparison factor with "
                f"{list(spec.covariates)} as {list(spec.interaction_names)}; family='binomial' "
                f"supports one covariate crossed with the model, e.g. "
                f"'{spec.comparison} * {spec.covariates[0]}'. Fit one covariate at a time, or "
                "use family='gaussian' for several (docs/interactions.md)",
                formula, max(start, 0), max(len(fixed.strip()), 1))
        by = spec.covariates[0]
    spec = Spec(formula=formula, response=spec.response, comparison=spec.comparison,
                random=spec.random)
    return GlmmFormula(formula=formula, spec=spec, model_terms=tuple(model_terms),
                       failures=failures, trials=trials, by=by)
