"""Stage formula: glmer's literal reading of a binomial formula.

Inputs: a formula string as written for ``lme4::glmer``, e.g.
``"correct ~ model + (1|question) + (1|subject:model)"`` or
``"cbind(k, n - k) ~ model + (1|question)"``.  Outputs: :class:`GlmmFormula`
-- the :class:`~mixrank.formula.spec.Spec` of the terms that do not involve
the comparison factor, the random terms that do (model-by-unit terms such as
``(1|subject:model)``), and the count columns of a ``cbind`` response.  The
formula is read by the one parser, :func:`mixrank.formula.parse` with
``binomial=True`` (tokens of :mod:`mixrank.formula.tokens`, the fixed part
through formulaic), so every error quotes the user's text with its caret.

Contents: :class:`GlmmFormula`, :func:`parse_glmm`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FormulaError
from .fixed import InteractionSpec, parse
from .spec import Spec
from .tokens import tokenize

__all__ = ["GlmmFormula", "parse_glmm"]


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


def _fixed_span(formula: str) -> tuple[int, int]:
    """Offsets of the fixed part as written (first to last fixed name outside parentheses)."""
    depth, names = 0, []
    tokens = tokenize(formula)
    tilde = next(k for k, t in enumerate(tokens) if t.is_op("~"))
    for tok in tokens[tilde + 1:]:
        depth += tok.is_op("(") - tok.is_op(")")
        if depth == 0 and tok.kind == "name":
            names.append(tok)
    if not names:
        return 0, max(len(formula), 1)
    return names[0].start, names[-1].end - names[0].start


def parse_glmm(formula: str) -> GlmmFormula:
    """Parse a glmer binomial formula (see module docstring).

    The one parser reads it: :func:`mixrank.formula.parse` with
    ``binomial=True`` (a ``cbind`` response and model-by-unit terms
    allowed), so every error carries the caret under the formula as given.

    Raises
    ------
    FormulaError
        A ``cbind`` response that is not ``cbind(k, f)`` or ``cbind(k, n -
        k)``; a random term grouping by the comparison factor alone
        (``(1|model)``: the model effects are fixed); a fixed part crossing
        the model with more than one covariate term; every error of
        :func:`mixrank.formula.parse`.
    """
    spec = parse(formula, binomial=True)
    by = None
    if isinstance(spec, InteractionSpec):
        if len(spec.covariates) != 1 or spec.fixed_terms != ((spec.covariates[0],),):
            start, length = _fixed_span(formula)
            raise FormulaError(
                f"The binomial fixed part crosses the comparison factor with "
                f"{list(spec.covariates)} as {list(spec.interaction_names)}; family='binomial' "
                f"supports one covariate crossed with the model, e.g. "
                f"'{spec.comparison} * {spec.covariates[0]}'. Fit one covariate at a time, or "
                "use family='gaussian' for several (docs/interactions.md)",
                formula, start, length)
        by = spec.covariates[0]
    plain = Spec(formula=formula, response=spec.response, comparison=spec.comparison,
                 random=spec.random)
    return GlmmFormula(formula=formula, spec=plain, model_terms=spec.model_terms,
                       failures=spec.failures, trials=spec.trials, by=by)
