"""mixrank.engine: variance components and contrasts of every pair of models.

Stage: engine, after ``frame`` and ``io`` in the one-way import order (it
imports formula, frame and io; inference, design, results, report and cli
build on it; the stages are listed in ``tests/test_import_graph.py``).
docs/methods.md §3 describes the model and the estimates.

Subpackages: :mod:`~mixrank.engine.lmm` (the linear mixed model of the
paired differences), :mod:`~mixrank.engine.glmm` (the binomial GLMM),
:mod:`~mixrank.engine.crosscheck` (statsmodels and lme4 adapters); shared at
this level: records, control, parallel, structure, estimability.

Modules, from the data to a fitted pair:

* :mod:`~mixrank.engine.lmm.native` -- fits every requested pair from a shared
  :class:`~mixrank.frame.Frame` (common cells, estimands, the aggregate
  method) and returns one ``PairFit`` per pair;
* :mod:`~mixrank.engine.records` -- the frozen records the engine produces
  (``PairFit``, ``CrossCheck``, ``RemlFit``);
* :mod:`~mixrank.engine.structure` -- the random-effects structure of a
  pair's cells (shared by pairs scored on the same cells) and the
  difference-dependent sums;
* :mod:`~mixrank.engine.estimability` -- which pairs the formula can
  estimate on their common cells, and how weak the estimable ones are;
* :mod:`~mixrank.engine.lmm.objective` -- the profiled REML criterion of one
  pair (cf. lme4's ``mkLmerDevfun``);
* :mod:`~mixrank.engine.lmm.reml` -- the fit as public stages: moment start,
  optimisation accepted on a KKT certificate (else more starts and the
  boundary faces), convergence check, packaging (docs/engine.md §1-§2);
* :mod:`~mixrank.engine.lmm.newton` -- the one projected Newton loop (several
  terms; the one-term fast path), :mod:`~mixrank.engine.lmm.one_term` -- the
  exact derivatives and Satterthwaite Hessian for one random term;
* :mod:`~mixrank.engine.lmm.satterthwaite` -- Satterthwaite df (Hessian from
  the analytic gradient or second differences, balanced closed form;
  docs/engine.md §3); :mod:`~mixrank.engine.lmm.estimand` -- the estimand
  weights;
* :mod:`~mixrank.engine.parallel` -- pairs on every core in forked
  workers, one BLAS thread each (docs/engine.md §4);
* :mod:`~mixrank.engine.control` -- :class:`Control`, every numerical
  tolerance and the action of each check;
* :mod:`~mixrank.engine.lmm.reml_grad` -- the dense-mode quadratic forms and
  the analytic gradient of the criterion;
* :mod:`~mixrank.engine.lmm.balanced` -- the closed form for balanced designs
  (stratum mean squares);
* :mod:`~mixrank.engine.lmm.single` -- each model's own scores fitted with the
  formula's random terms (``FitResult.model_scores``);
* :mod:`~mixrank.engine.glmm.fit` (with ``glmm.problem``,
  ``glmm.system``, ``glmm.pirls``, ``glmm.optim``) -- the binomial GLMM over all models at
  once (``family="binomial"``): data checks, the penalised least-squares
  system, penalised IRLS with the Laplace deviance, the outer optimisation;
* :mod:`~mixrank.engine.crosscheck.statsmodels_engine`,
  :mod:`~mixrank.engine.crosscheck.lme4_engine` -- cross-check adapters that fit the
  same pairs with statsmodels MixedLM or R lme4 + lmerTest.
"""

from typing import Any

__all__ = ["fit_pairs"]


def __getattr__(name: str) -> Any:
    """``mixrank.engine.fit_pairs``: the native engine's stage over index pairs (lazy)."""
    if name == "fit_pairs":
        from .lmm.native import fit_pairs

        return fit_pairs
    raise AttributeError(f"module 'mixrank.engine' has no attribute {name!r}")
