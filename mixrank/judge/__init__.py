"""Stage judge: judge-corrected (prediction-powered, PPI++) scores and contrasts (docs/judge.md).

Inputs: long data whose response is an LLM judge's score, plus a column of
reference labels on a subset of cells.  Outputs: the PPI++ estimates per
model and pair (:mod:`mixrank.judge.ppi`, :mod:`mixrank.judge.estimate`),
the fitted :class:`~mixrank.judge.result.JudgeResult`, judge diagnostics
(:mod:`mixrank.judge.diagnostics`) and label planning
(:mod:`mixrank.judge.plan`).  The judge scores and reference labels aligned on
the cells of a frame are :mod:`mixrank.judge.data`; the joint covariance of the
corrected contrasts :mod:`mixrank.judge.joint`; the fit and its result
:mod:`mixrank.judge.result`.
"""
