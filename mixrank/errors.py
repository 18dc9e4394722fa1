"""Exceptions and warnings (all stages).

One tree: :class:`MixrankError` is the root of every error mixrank raises on
purpose; :class:`MixrankWarning` the root of its warnings.  Messages say what
was received, what was expected and how to fix it.
"""

from __future__ import annotations


class MixrankError(Exception):
    """Root of all mixrank errors."""


class FormulaError(MixrankError, ValueError):
    """A formula could not be parsed or is not supported.

    ``formula`` and ``position`` locate the problem; the message quotes the
    formula with a caret under the offending part.
    """

    def __init__(self, message: str, formula: str | None = None,
                 position: int | None = None, length: int = 1) -> None:
        self.reason = message
        self.formula = formula
        self.position = position
        self.length = max(1, length)
        text = message
        if formula is not None and position is not None:
            caret = " " * position + "^" * self.length
            text = f"{message}\n    {formula}\n    {caret}"
        super().__init__(text)


class DataError(MixrankError, ValueError):
    """The data do not fit the formula or the canonical long format."""


class DesignError(MixrankError, ValueError):
    """The design cannot support the requested analysis."""


class OptionError(DesignError):
    """An argument's value is outside its allowed set (or range).

    The one rule for bad options (docs/vocabulary.md): a value an argument
    cannot take -- an unknown ``adjust=``, ``engine=``, ``backend=``,
    ``format=``, a level outside (0, 1) -- raises :class:`OptionError`,
    naming the argument, the value received and the values allowed.  It is a
    :class:`DesignError` (and a ``ValueError``), so older handlers still catch
    it.  Problems in the data themselves raise :class:`DataError`.
    """


class ConvergenceError(MixrankError, RuntimeError):
    """An optimiser failed to reach a verified optimum."""


class PirlsError(ConvergenceError):
    """The binomial GLMM's penalised IRLS did not converge at some (theta, beta).

    Raised inside the optimiser (which treats it as an infinite deviance); a
    fit that cannot recover reports a :class:`ConvergenceError`.  It is a
    :class:`MixrankError` and still a ``RuntimeError``.
    """


class MissingDependencyError(MixrankError, ImportError):
    """An optional dependency (extra) is not installed."""


class MixrankWarning(UserWarning):
    """Root of all mixrank warnings."""


class MixrankDeprecationWarning(MixrankWarning, DeprecationWarning):
    """An old spelling of an argument or name was used; it works for one more release.

    The message names the new spelling (docs/vocabulary.md lists them all).
    """


class MixrankFutureWarning(MixrankWarning, FutureWarning):
    """A table's column was renamed; the former name works for one more release.

    Shown by default (a ``FutureWarning``, unlike
    :class:`MixrankDeprecationWarning`): raised when an input table still
    carries the former column name (e.g. ``design_effect`` for
    ``variance_ratio`` in :func:`mixrank.design.resolution.resolution_table`).
    The message names the new column (docs/vocabulary.md, "Nouns").
    """


class SingularFitWarning(MixrankWarning):
    """A variance component was estimated at zero (boundary, singular fit)."""


class ConvergenceWarning(MixrankWarning):
    """An optimum failed its convergence check (see ``Control(convergence=...)``)."""


class GlmmConvergenceWarning(ConvergenceWarning):
    """The binomial GLMM optimiser stopped before its convergence criterion was met.

    A :class:`ConvergenceWarning`, so one filter on ``mixrank.ConvergenceWarning``
    covers both families (``GlmmControl(convergence=...)`` sets the action).
    """


class UnitOfInferenceWarning(MixrankWarning):
    """The binomial fit's contrasts are at the cell level (no model-by-unit term)."""


class SmallSampleWarning(MixrankWarning):
    """Too few units for the asymptotics the method relies on."""


class WeakDesignWarning(SmallSampleWarning):
    """A random term has fewer levels among a pair's common cells than ``Control(min_units=)``.

    One warning per fit names each such term, its level count and the
    alternatives (a fixed stratum ``model * term``, ``method="aggregate"``);
    docs/messy.md §2.
    """


class OmittedKeyWarning(MixrankWarning):
    """A pairing key (prompt, template, seed ...) crossed with the unit has no random term
    while the models' scores vary across its levels: the standard errors are too small.

    The message names the key, the estimated SE inflation and the formula to write;
    docs/methods.md §9 ("A forgotten pairing key").
    """


class IncompletePairWarning(MixrankWarning):
    """Pairs the formula cannot estimate were kept as NaN rows (or their models dropped).

    One warning per fit names every affected model and pair; docs/messy.md §3.
    """


class UnpairedCellsWarning(MixrankWarning):
    """Cells scored for one model only were left out of its pairs (counts per model).

    docs/methods.md §1 ("Unbalanced designs").
    """


class MissingDataWarning(MixrankWarning):
    """Rows or cells were dropped on request and are reported."""


class DegeneratePairWarning(MixrankWarning):
    """A pair of models has no estimable variance (identical differences, one unit).

    Its row is kept, flagged in ``diagnostics()``; ``contrasts()`` tests it with the
    exact sign test (p = 1 for identical vectors; docs/hardening.md §1).
    """


class DataQualityWarning(MixrankWarning):
    """The data look unintended (e.g. a stray 2 among 0/1 scores) and are used as given."""


def require(module: str, extra: str, purpose: str):
    """Import an optional dependency or raise a :class:`MissingDependencyError`.

    The message names the extra to install, e.g. ``pip install 'mixrank[plot]'``.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on environment
        raise MissingDependencyError(
            f"{purpose} needs the optional package '{module}', which is not installed. "
            f"Install the extra with: pip install 'mixrank[{extra}]'"
        ) from exc
