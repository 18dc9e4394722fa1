"""mixrank.engine.lmm: the linear mixed model of the paired differences (REML, Satterthwaite).

Modules: :mod:`.native` (the pair driver: every requested pair from a shared
Frame), :mod:`.driver` (the steps every pair of both fits goes through: common
cells, structure cache, degenerate check, fit, record), :mod:`.balanced` (the closed form for balanced designs),
:mod:`.criterion` (the REML criterion for p >= 1 fixed columns, defined once),
:mod:`.objective` (the intercept-only pair's objective), :mod:`.reml` (start,
optimisation with a KKT certificate, faces, packaging -- the one optimiser of
both fits), :mod:`.newton` (the one projected Newton loop),
:mod:`.one_term`, :mod:`.reml_grad`, :mod:`.reml_hess` (analytic
derivatives), :mod:`.satterthwaite` (df), :mod:`.estimand` (the estimand
weights, defined once), :mod:`.fixed`, :mod:`.reml_fixed` (the model x
covariate fits), :mod:`.unit_se` (df at the unit), :mod:`.crossed_df` (df of
the variance components, crossed designs), :mod:`.single` (each
model's own scores).
"""
