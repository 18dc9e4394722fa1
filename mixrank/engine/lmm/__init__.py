"""mixrank.engine.lmm: the linear mixed model of the paired differences (REML, Satterthwaite).

Modules: :mod:`.native` (the pair driver: every requested pair from a shared
Frame), :mod:`.balanced` (the closed form for balanced designs),
:mod:`.objective` (the profiled REML criterion), :mod:`.reml` (start,
optimisation with a KKT certificate, faces, packaging), :mod:`.newton`,
:mod:`.newton1d` (projected Newton), :mod:`.reml_grad`, :mod:`.reml_hess`
(analytic derivatives), :mod:`.satterthwaite` (df), :mod:`.fixed`,
:mod:`.reml_fixed` (the model x covariate fits), :mod:`.unit_se` (df at the
unit), :mod:`.single` (each model's own scores).
"""
