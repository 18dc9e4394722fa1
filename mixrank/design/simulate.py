"""Stage design: simulate long-format benchmark data from variance components.

Inputs: model effects and standard deviations of the random components.
Outputs: a long DataFrame ``model, subject, question, prompt[, sample], correct``.

Model (latent scale), for model m, subject s, question q in s, prompt p and
sample k::

    eta = effect_m + a_s + b_sq + c_p + (ma)_ms + (mb)_msq + (mc)_mp + e_msqpk

Continuous scores (``family="gaussian"``) are ``eta`` with
``e ~ N(0, sd_residual^2)``; binary scores (``family="binomial"``) are
``1[eta + logistic noise > 0]`` (latent logistic), with ``sd_residual`` an
extra normal term.  The paired difference of two models therefore carries
the model-interaction components: ``(1|subject)`` from ``sd_model_subject``,
``(1|subject:question)`` from ``sd_model_question``, ``(1|prompt)`` from
``sd_model_prompt``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, cast

import numpy as np
import pandas as pd

from .._util import as_rng
from ..errors import DesignError

__all__ = ["simulate"]


def simulate(models: int | Sequence[str] = 4, subjects: int = 10,
             questions: int | Sequence[int] = 20, prompts: int = 1, *,
             samples: int = 1,
             effects: Sequence[float] | None = None,
             sd_subject: float = 0.5, sd_question: float = 1.0, sd_prompt: float = 0.2,
             sd_model_subject: float = 0.3, sd_model_question: float = 0.5,
             sd_model_prompt: float = 0.1, sd_residual: float = 0.0,
             family: Literal["binomial", "gaussian"] = "binomial", missing: float = 0.0,
             rng: Any = None) -> pd.DataFrame:
    """Simulate a long-format benchmark.

    Parameters
    ----------
    models : int or sequence of str
        Number of models (named ``m01, m02, ...``) or their names.
    subjects : int
        Number of subjects (``s01, ...``).
    questions : int or sequence of int
        Questions per subject; a sequence gives unequal subject sizes.
    prompts : int
        Number of prompt templates shared by all models.
    samples : int
        Repeated generations per cell (a ``sample`` column when > 1).
    effects : sequence of float, optional
        Latent model effects; default evenly spaced in [0.5, -0.5].
    sd_subject, sd_question, sd_prompt : float
        Main-effect standard deviations (cancel in paired differences).
    sd_model_subject, sd_model_question, sd_model_prompt : float
        Model-interaction standard deviations (the components of the
        paired difference).
    sd_residual : float
        Residual standard deviation (gaussian) or extra latent noise (binomial).
    family : {"binomial", "gaussian"}
    missing : float
        Share of cells dropped independently for each model (unbalanced).
    rng : Generator or int, optional

    Returns
    -------
    pandas.DataFrame
        ``model, subject, question, prompt, correct`` (and ``sample``).

    Examples
    --------
    >>> import mixrank
    >>> df = mixrank.simulate(3, 4, 5, 2, rng=1)
    >>> df.shape
    (120, 5)
    """
    rng = as_rng(rng)
    names = [f"m{i + 1:02d}" for i in range(models)] if isinstance(models, int) else [str(m) for m in models]
    M = len(names)
    if M < 1 or subjects < 1 or prompts < 1 or samples < 1:
        raise DesignError("models, subjects, prompts and samples must all be at least 1")
    qs = ([int(cast(int, questions))] * subjects if np.isscalar(questions)
          else [int(q) for q in cast(Sequence[int], questions)])
    if len(qs) != subjects or min(qs) < 1:
        raise DesignError(f"questions must be a positive int or {subjects} positive ints; got {questions!r}")
    if family not in ("binomial", "gaussian"):
        raise DesignError(f"family={family!r}; expected 'binomial' or 'gaussian'")
    if not 0 <= missing < 1:
        raise DesignError(f"missing={missing} must be in [0, 1)")
    eff = np.linspace(0.5, -0.5, M) if effects is None else np.asarray(effects, dtype=float)
    if eff.shape != (M,):
        raise DesignError(f"effects must have one value per model ({M}); got {len(eff)}")
    sds = dict(sd_subject=sd_subject, sd_question=sd_question, sd_prompt=sd_prompt,
               sd_model_subject=sd_model_subject, sd_model_question=sd_model_question,
               sd_model_prompt=sd_model_prompt, sd_residual=sd_residual)
    for k, v in sds.items():
        if not np.isfinite(v) or v < 0:
            raise DesignError(f"{k}={v} must be a finite non-negative standard deviation")

    subj = np.repeat(np.arange(subjects), qs)                 # question -> subject
    Q = len(subj)
    a = rng.normal(0, sd_subject, subjects)
    b = rng.normal(0, sd_question, Q)
    c = rng.normal(0, sd_prompt, prompts)
    ma = rng.normal(0, sd_model_subject, (M, subjects))
    mb = rng.normal(0, sd_model_question, (M, Q))
    mc = rng.normal(0, sd_model_prompt, (M, prompts))
    # eta[m, q, p]
    eta = (eff[:, None, None] + (a[subj] + b)[None, :, None] + c[None, None, :]
           + ma[:, subj][:, :, None] + mb[:, :, None] + mc[:, None, :])
    eta = np.repeat(eta[..., None], samples, axis=3)          # (M, Q, P, K)
    if family == "gaussian":
        y = eta + rng.normal(0, sd_residual, eta.shape)
    else:
        noise = rng.logistic(0, 1, eta.shape) + (rng.normal(0, sd_residual, eta.shape)
                                                 if sd_residual > 0 else 0.0)
        y = (eta + noise > 0).astype(np.int64)
    qlab = np.concatenate([np.arange(n) for n in qs])
    sw = len(str(subjects))
    qw = len(str(max(qs)))
    pw = len(str(prompts))
    subj_names = np.array([f"s{i + 1:0{sw}d}" for i in range(subjects)])
    q_names = np.array([f"{subj_names[s]}_q{k + 1:0{qw}d}" for s, k in zip(subj, qlab)])
    p_names = np.array([f"p{i + 1:0{pw}d}" for i in range(prompts)])
    mi, qi, pi, ki = np.meshgrid(np.arange(M), np.arange(Q), np.arange(prompts), np.arange(samples),
                                 indexing="ij")
    mi, qi, pi, ki = mi.ravel(), qi.ravel(), pi.ravel(), ki.ravel()
    out = {"model": np.asarray(names, dtype=object)[mi], "subject": subj_names[subj[qi]],
           "question": q_names[qi], "prompt": p_names[pi]}
    if samples > 1:
        out["sample"] = ki
    out["correct"] = y.ravel()
    df = pd.DataFrame(out)
    if missing > 0:
        cell = qi * prompts + pi
        drop = rng.random((M, Q * prompts)) < missing
        df = df[~drop[mi, cell]].reset_index(drop=True)
    return df
