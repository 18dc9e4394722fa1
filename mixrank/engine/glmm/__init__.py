"""mixrank.engine.glmm: the binomial GLMM over all models at once (``family="binomial"``).

Modules: :mod:`.fit` (the fit and its checks), :mod:`.control`
(:class:`~mixrank.engine.glmm.control.GlmmControl`), :mod:`.system` (the
penalised least-squares system), :mod:`.pirls` (penalised IRLS and the Laplace
deviance), :mod:`.optim` (the outer optimisation), :mod:`.problem` (the
problem of one observation per (model, cell) and its design checks), :mod:`.scores`
(per-unit score contributions and information, for the unit sign flips).  The
binomial frame itself is built in :mod:`mixrank.frame.glmm`.
"""
