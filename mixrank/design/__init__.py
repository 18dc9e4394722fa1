"""mixrank.design: how well a benchmark resolves its comparisons, and how to plan one.

Stage: design, beside ``inference`` (it may import formula, frame, engine,
io, inference; ``results`` -- whose ``FitResult.resolution`` and
``FitResult.plan`` call it -- only under ``TYPE_CHECKING``; the stages are
listed in ``tests/test_import_graph.py``).  docs/methods.md §4 and §6
describe the statistics.

Modules (closed forms first, then what builds on a fit):

* :mod:`~mixrank.design.checks` -- validators shared by the closed forms
  (levels, powers, accuracies, Frechet bounds of a 0/1 correlation);
* :mod:`~mixrank.design.estimand` -- the estimand of a fitted pair as weights
  over its common cells;
* :mod:`~mixrank.design.judged` -- the pairs a verdict table (or a
  sensitivity check) is about;
* :mod:`~mixrank.design.paradigms` -- per-pair closed forms of the verdict-table
  paradigms;
* :mod:`~mixrank.design.summaries` -- the summaries the resolution papers
  report (unresolved share by effect size, shortcut and bootstrap N*);
* :mod:`~mixrank.design.power` -- ``sigma_d``, ``n_star``, ``mde``,
  ``resolution_ratio`` and ``power`` for one paired comparison;
* :mod:`~mixrank.design.power.audit` -- the Cohen-h shortcut lemma, the calculator
  audit and multiplicity-adjusted levels;
* :mod:`~mixrank.design.anytime` -- the normal-mixture anytime-valid
  boundary and ``monitor``;
* :mod:`~mixrank.design.resolution` -- verdict tables (fixed-n,
  multiplicity, anytime-valid, clustered) from a fit or per-pair numbers;
* :mod:`~mixrank.design.verdict_stepdown` -- the multiplicity paradigm's default for a
  fit and its per-step levels from the unit-randomization step-down;
* :mod:`~mixrank.design.verdict_view` -- the verdict table's views (``columns=``: the
  default 14-column table or every column);
* :mod:`~mixrank.design.sensitivity` -- leave-one-out, cluster-bootstrap
  and other-clustering checks of the clustered verdict (a subpackage);
* :mod:`~mixrank.design.plan` -- design planning from fitted variance
  components;
* :mod:`~mixrank.design.simulate` -- long-format data simulated from
  variance components;
* :mod:`~mixrank.design.omitted_keys` -- the check for a pairing key the
  formula leaves out while the models vary across its levels.

``mixrank.power`` gathers the closed-form functions in one namespace.
Item-level reliable change lives in its own subpackage, :mod:`mixrank.change`.
"""
