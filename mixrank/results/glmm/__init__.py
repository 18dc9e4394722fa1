"""Stage results: the binomial GLMM's results, in one subpackage (docs/glmm.md).

Modules:

* :mod:`~mixrank.results.glmm.result` -- :class:`GlmmResult`, the joint
  glmer-style fit and its tidy accessors, :class:`GlmmSummary`;
* :mod:`~mixrank.results.glmm.by` -- :class:`GlmmByResult`, ``model * x``
  with a categorical ``x``;
* :mod:`~mixrank.results.glmm.slope` -- :class:`GlmmSlopeResult`, ``model * x``
  with a numeric ``x``;
* :mod:`~mixrank.results.glmm.flips` -- the unit sign-flip max-t and step-down
  of the contrasts (per-unit contributions from the score contributions).

The GLMM's other pieces sit in their own stages: the formula's reading
(``formula/glmm_terms.py``), the binomial frame (``frame/glmm.py``), the fit
(``engine/glmm/``), the route (``routes/binomial.py``) and the page
(``report/html_glmm.py``, ``report/plots_glmm.py``); see docs/architecture.md.
"""
