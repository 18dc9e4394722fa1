"""Exceptions and warnings (all stages).

One tree: :class:`MixrankError` is the root of every error mixrank raises on
purpose; :class:`MixrankWarning` the root of its warnings.  Messages say what
was received, what was expected and how to fix it.
"""

from __future__ import annotations


class MixrankError(Exception):
    """Root of all mixrank errors.

    Examples
    --------
    >>> import mixrank
    >>> try:
    ...     mixrank.fit("correct ~ model + (1|nope)", mixrank.load_example())
    ... except mixrank.MixrankError as e:        # every error mixrank raises on purpose
    ...     print(type(e).__name__)
    DataError
    """


class FormulaError(MixrankError, ValueError):
    """A formula could not be parsed or is not supported.

    ``formula`` and ``position`` locate the problem; the message quotes the
    formula with a caret under the offending part.

    Examples
    --------
    >>> import mixrank
    >>> try:
    ...     mixrank.parse("correct ~ model +")
    ... except mixrank.FormulaError as e:
    ...     print(e.position, str(e).splitlines()[0][:31])
    16 Trailing '+' with no term after
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
    """The data do not fit the formula or the canonical long format.

    Examples
    --------
    >>> import mixrank
    >>> try:
    ...     mixrank.fit("correct ~ model + (1|nope)", mixrank.load_example())
    ... except mixrank.DataError as e:
    ...     print(str(e)[:48])
    column 'nope' (a random-term grouping) is not in
    """


class DesignError(MixrankError, ValueError):
    """The design cannot support the requested analysis.

    Examples
    --------
    >>> import mixrank
    >>> try:
    ...     mixrank.mde(0, sigma_d=0.4)
    ... except mixrank.DesignError as e:
    ...     print(str(e).split(";")[0])
    n must be > 0 (the interval (0, inf))
    """


class OptionError(DesignError):
    """An argument's value is outside its allowed set (or range).

    The one rule for bad options (docs/vocabulary.md): a value an argument
    cannot take -- an unknown ``adjust=``, ``engine=``, ``backend=``,
    ``format=``, a level outside (0, 1) -- raises :class:`OptionError`,
    naming the argument, the value received and the values allowed.  It is a
    :class:`DesignError` (and a ``ValueError``), so older handlers still catch
    it.  Problems in the data themselves raise :class:`DataError`.

    Examples
    --------
    >>> import mixrank
    >>> r = mixrank.fit("correct ~ model + (1|subject)",
    ...                 mixrank.load_example().query("model in ['m01', 'm02']"))
    >>> try:
    ...     r.contrasts(adjust="nope")
    ... except mixrank.OptionError as e:
    ...     print(str(e).split(";")[0])
    adjust='nope' is not supported by FitResult.contrasts()
    """


class ConvergenceError(MixrankError, RuntimeError):
    """An optimiser failed to reach a verified optimum.

    Examples
    --------
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> df = df.drop(index=df.index[::7])         # unbalanced: the iterative optimiser
    >>> ctl = mixrank.Control(max_iterations=1, starts=("default",), check_faces=False,
    ...                       convergence="error")
    >>> try:
    ...     mixrank.fit("correct ~ model + (1|subject)", df, control=ctl)
    ... except mixrank.ConvergenceError as e:
    ...     print(str(e)[:48])
    the optimum of 14 pair(s) failed the convergence
    """


class PirlsError(ConvergenceError):
    """The binomial GLMM's penalised IRLS did not converge at some (theta, beta).

    Raised inside the optimiser (which treats it as an infinite deviance); a
    fit that cannot recover reports a :class:`ConvergenceError`.  It is a
    :class:`MixrankError` and still a ``RuntimeError``.

    Examples
    --------
    >>> import mixrank
    >>> issubclass(mixrank.PirlsError, mixrank.ConvergenceError), issubclass(mixrank.PirlsError, RuntimeError)
    (True, True)
    """


class MissingDependencyError(MixrankError, ImportError):
    """An optional dependency (extra) is not installed.

    Examples
    --------
    >>> import mixrank
    >>> from mixrank.errors import require
    >>> try:
    ...     require("no_such_module", "plot", "this example")
    ... except mixrank.MissingDependencyError as e:
    ...     print(str(e).split(". ")[1])
    Install the extra with: pip install 'mixrank[plot]'
    """


class MixrankWarning(UserWarning):
    """Root of all mixrank warnings.

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> df.loc[0, "correct"] = 2                 # a stray 2 among 0/1 scores
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", mixrank.MixrankWarning)   # every mixrank warning
    ...     try:
    ...         mixrank.fit("correct ~ model + (1|subject)", df)
    ...     except mixrank.MixrankWarning as w:
    ...         print(type(w).__name__)
    DataQualityWarning
    """


class MixrankDeprecationWarning(MixrankWarning, DeprecationWarning):
    """An old spelling of an argument or name was used; it works for one more release.

    The message names the new spelling (docs/vocabulary.md lists them all).

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.monitor([1.0, 0.0, 0.5, 0.25] * 5, sigma=1.0, kind="normal")  # anytime=
    >>> mixrank.MixrankDeprecationWarning in {w.category for w in caught}
    True
    """


class MixrankFutureWarning(MixrankWarning, FutureWarning):
    """A table's column was renamed; the former name works for one more release.

    Shown by default (a ``FutureWarning``, unlike
    :class:`MixrankDeprecationWarning`): raised when an input table still
    carries the former column name (e.g. ``design_effect`` for
    ``variance_ratio`` in :func:`mixrank.design.resolution.resolution_table`).
    The message names the new column (docs/vocabulary.md, "Nouns").

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> import mixrank
    >>> from mixrank.design.resolution import resolution_table
    >>> old = pd.DataFrame({"model_a": ["a"], "model_b": ["b"], "estimate": [0.2], "n": [200],
    ...                     "sigma_d": [0.5], "design_effect": [2.0]})   # now variance_ratio
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = resolution_table(old)
    >>> mixrank.MixrankFutureWarning in {w.category for w in caught}
    True
    """


class SingularFitWarning(MixrankWarning):
    """A variance component was estimated at zero (boundary, singular fit).

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> sub = df.query("subject in ['s01', 's02', 's03']")     # 3 units
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject)", sub)
    >>> mixrank.SingularFitWarning in {w.category for w in caught}
    True
    """


class ConvergenceWarning(MixrankWarning):
    """An optimum failed its convergence check (see ``Control(convergence=...)``).

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> df = df.drop(index=df.index[::7])         # unbalanced: the iterative optimiser
    >>> ctl = mixrank.Control(max_iterations=1, starts=("default",), check_faces=False)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject)", df, control=ctl)
    >>> mixrank.ConvergenceWarning in {w.category for w in caught}
    True
    """


class GlmmConvergenceWarning(ConvergenceWarning):
    """The binomial GLMM optimiser stopped before its convergence criterion was met.

    A :class:`ConvergenceWarning`, so one filter on ``mixrank.ConvergenceWarning``
    covers both families (``GlmmControl(convergence=...)`` sets the action).

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> ctl = mixrank.GlmmControl(laplace_max_iterations=1)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject:model)", df, family="binomial", control=ctl)
    >>> mixrank.GlmmConvergenceWarning in {w.category for w in caught}
    True
    """


class UnitOfInferenceWarning(MixrankWarning):
    """The binomial fit's contrasts are at the cell level (no model-by-unit term).

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject)", df, family="binomial")
    >>> mixrank.UnitOfInferenceWarning in {w.category for w in caught}
    True
    """


class SmallSampleWarning(MixrankWarning):
    """Too few units for the asymptotics the method relies on.

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> sub = df.query("subject in ['s01', 's02', 's03']")     # 3 units
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject)", sub)
    >>> mixrank.WeakDesignWarning in {w.category for w in caught}
    True
    >>> issubclass(mixrank.WeakDesignWarning, mixrank.SmallSampleWarning)
    True
    """


class WeakDesignWarning(SmallSampleWarning):
    """A random term has fewer levels among a pair's common cells than ``Control(min_units=)``.

    One warning per fit names each such term, its level count and the
    alternatives (a fixed stratum ``model * term``, ``method="aggregate"``);
    docs/messy.md §2.

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> sub = df.query("subject in ['s01', 's02', 's03']")     # 3 units
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject)", sub)
    >>> mixrank.WeakDesignWarning in {w.category for w in caught}
    True
    """


class OmittedKeyWarning(MixrankWarning):
    """A pairing key (prompt, template, seed ...) crossed with the unit has no random term
    while the models' scores vary across its levels: the standard errors are too small.

    The message names the key, the estimated SE inflation and the formula to write;
    docs/methods.md §9 ("A forgotten pairing key").

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> m02 = df["model"] == "m02"                 # m02 right on prompts p1, p2, wrong on p3, p4
    >>> df.loc[m02, "correct"] = df.loc[m02, "prompt"].isin(["p1", "p2"]).astype(int)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject)", df)     # no term for prompt
    >>> mixrank.OmittedKeyWarning in {w.category for w in caught}
    True
    """


class IncompletePairWarning(MixrankWarning):
    """Pairs the formula cannot estimate were kept as NaN rows (or their models dropped).

    One warning per fit names every affected model and pair; docs/messy.md §3.

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> df = df[(df["model"] != "m03") | (df["prompt"] == "p1")]   # m03 only on prompt p1
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject) + (1|subject:question)", df)
    >>> mixrank.IncompletePairWarning in {w.category for w in caught}
    True
    """


class UnpairedCellsWarning(MixrankWarning):
    """Cells scored for one model only were left out of its pairs (counts per model).

    docs/methods.md §1 ("Unbalanced designs").

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> df = df[(df["model"] != "m02") | (df["subject"] != "s01")]  # m02 misses subject s01
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject)", df)
    >>> mixrank.UnpairedCellsWarning in {w.category for w in caught}
    True
    """


class MissingDataWarning(MixrankWarning):
    """Rows or cells were dropped on request and are reported.

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> df.loc[:3, "correct"] = float("nan")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject)", df, na="drop")
    >>> mixrank.MissingDataWarning in {w.category for w in caught}
    True
    """


class DegeneratePairWarning(MixrankWarning):
    """A pair of models has no estimable variance (identical differences, one unit).

    Its row is kept, flagged in ``diagnostics()``; ``contrasts()`` tests it with the
    exact sign test (p = 1 for identical vectors; docs/hardening.md §1).

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> import pandas as pd
    >>> df = mixrank.load_example()
    >>> df = df.query("model in ['m01', 'm02']")
    >>> twin = df.query("model == 'm01'").assign(model="m00")      # identical to m01
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject)", pd.concat([df, twin]))
    >>> mixrank.DegeneratePairWarning in {w.category for w in caught}
    True
    """


class DataQualityWarning(MixrankWarning):
    """The data look unintended (e.g. a stray 2 among 0/1 scores) and are used as given.

    Examples
    --------
    >>> import warnings
    >>> import mixrank
    >>> df = mixrank.load_example()
    >>> df.loc[0, "correct"] = 2                 # a stray 2 among 0/1 scores
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = mixrank.fit("correct ~ model + (1|subject)", df)
    >>> mixrank.DataQualityWarning in {w.category for w in caught}
    True
    """


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
