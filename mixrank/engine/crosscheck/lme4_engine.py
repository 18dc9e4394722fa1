"""Stage engine: cross-check adapter fitting each pair with R lme4 + lmerTest.

Inputs: :class:`~mixrank.frame.Frame` and index pairs into ``frame.models``.
Outputs: one :class:`~mixrank.engine.records.PairFit` per pair, with the same
fields as the native engine.

Contents: :func:`fit_pairs_lme4`, :func:`check_lme4`, :data:`R_INSTALL_HINT`.
No rpy2: the pairs' differences and grouping codes are written to a
temporary CSV, an R snippet is run with ``Rscript`` (one process for all
pairs), and its JSON output is read back.  Each pair is fitted by::

    lmerTest::lmer(d ~ 1 + (1|g1) + (1|g1:g2) + ..., REML = TRUE,
                   control = lmerControl(optimizer = "bobyqa",
                       optCtrl = list(rhoend = 1e-12, maxfun = 1e5)))

with the random terms of the formula (interactions passed to R as such).
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import DesignError, MissingDependencyError
from ...frame import Frame
from ..records import CrossCheck, PairFit

__all__ = ["fit_pairs_lme4", "check_lme4", "R_INSTALL_HINT", "BOUNDARY_THETA"]

R_INSTALL_HINT = ("install R and the packages from Debian: apt-get install r-base-core "
                  "r-cran-lme4 r-cran-lmertest r-cran-jsonlite")

# A component with sigma_r / sigma below this is reported as a boundary
# component: lme4's isSingular() tolerance.
BOUNDARY_THETA = 1e-4

_CHECK_R = r"""
pk <- c("lme4", "lmerTest", "jsonlite")
ok <- vapply(pk, requireNamespace, logical(1), quietly = TRUE)
v <- vapply(pk, function(p) if (requireNamespace(p, quietly = TRUE))
  as.character(packageVersion(p)) else "", character(1))
cat(paste0("MIXRANK|", R.version$major, ".", R.version$minor, "|",
           paste(pk, ok, v, sep = "=", collapse = ";"), "\n"))
"""

_FIT_R = r"""
suppressPackageStartupMessages({library(lme4); library(lmerTest); library(jsonlite)})
a <- commandArgs(trailingOnly = TRUE)
spec <- fromJSON(a[1], simplifyVector = TRUE)
dat <- read.csv(a[2], colClasses = c("integer", "numeric", rep("character", spec$ncol)))
for (g in spec$columns) dat[[g]] <- factor(dat[[g]])
ctrl <- lmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-12, maxfun = 1e5))
f <- as.formula(paste("d ~ 1 +", paste0("(1|", spec$terms, ")", collapse = " + ")))
out <- lapply(split(dat, dat$pair), function(pd) {
  msgs <- character(0)
  m <- tryCatch(withCallingHandlers(
      lmerTest::lmer(f, data = pd, REML = TRUE, control = ctrl),
      warning = function(w) { msgs <<- c(msgs, conditionMessage(w)); invokeRestart("muffleWarning") },
      message = function(w) { msgs <<- c(msgs, trimws(conditionMessage(w))); invokeRestart("muffleMessage") }),
    error = function(e) conditionMessage(e))
  if (is.character(m)) return(list(pair = pd$pair[1], error = m))
  co <- summary(m)$coefficients
  vc <- as.data.frame(VarCorr(m))
  gr <- m@optinfo$derivs$gradient
  list(pair = pd$pair[1], n = nrow(pd), REMLcrit = REMLcrit(m),
       groups = I(vc$grp), variances = I(vc$vcov),
       estimate = unname(co[1, "Estimate"]), std_error = unname(co[1, "Std. Error"]),
       df = unname(co[1, "df"]), isSingular = isSingular(m),
       gradient = if (is.null(gr)) NA else max(abs(gr)),
       feval = m@optinfo$feval, opt_code = m@optinfo$conv$opt,
       messages = I(unique(c(msgs, unlist(m@optinfo$conv$lme4$messages)))))
})
writeLines(toJSON(unname(out), auto_unbox = TRUE, digits = NA, na = "null"), a[3])
"""


def _rscript(rscript: str | None) -> str:
    path = rscript or os.environ.get("MIXRANK_RSCRIPT") or shutil.which("Rscript")
    if not path:
        raise MissingDependencyError(
            "engine='lme4' needs R's Rscript on the PATH, which was not found. To use it, "
            + R_INSTALL_HINT + ", or set MIXRANK_RSCRIPT to the Rscript executable; "
            "otherwise use engine='native'")
    return path


@functools.lru_cache(maxsize=4)
def _check(path: str) -> tuple[tuple[str, str], ...]:
    try:
        proc = subprocess.run([path, "--vanilla", "-e", _CHECK_R], capture_output=True,
                              text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise MissingDependencyError(f"could not run {path!r} ({exc}); to use engine='lme4', "
                                     + R_INSTALL_HINT) from exc
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("MIXRANK|")), None)
    if proc.returncode != 0 or line is None:
        raise MissingDependencyError(
            f"{path!r} failed (exit {proc.returncode}: {proc.stderr.strip()[:300]}); to use "
            "engine='lme4', " + R_INSTALL_HINT)
    _, rver, pk = line.split("|")
    versions = [("R", rver)]
    missing = []
    for item in pk.split(";"):
        name, ok, ver = item.split("=")
        if ok != "TRUE":
            missing.append(name)
        versions.append((name, ver))
    if missing:
        raise MissingDependencyError(
            f"engine='lme4' needs the R package(s) {missing}, not installed for {path!r}; "
            + R_INSTALL_HINT)
    return tuple(versions)


def check_lme4(rscript: str | None = None) -> dict[str, str]:
    """Check that Rscript, lme4, lmerTest and jsonlite are available.

    Parameters
    ----------
    rscript : str, optional
        Path of ``Rscript``; default ``$MIXRANK_RSCRIPT`` or ``Rscript`` on
        the PATH.

    Returns
    -------
    dict
        Versions: ``R, lme4, lmerTest, jsonlite``.

    Raises
    ------
    MissingDependencyError
        Rscript or one of the packages is missing; the message says how to
        install them (Debian packages).
    """
    return dict(_check(_rscript(rscript)))


def _pair_table(frame: Frame, pairs: list[tuple[int, int]]) -> tuple[pd.DataFrame, list[str]]:
    cols = list(frame.spec.grouping_columns)
    gname = {c: f"g{i + 1}" for i, c in enumerate(cols)}
    codes = {c: pd.factorize(frame.cells[c], sort=True)[0] for c in cols}
    parts = []
    for p, (j, k) in enumerate(pairs):
        mask = frame.common_mask(j, k)
        a, b = frame.models[j], frame.models[k]
        if mask.sum() < 3:
            raise DesignError(f"models {a!r} and {b!r} share {int(mask.sum())} cell(s); the lme4 "
                              "engine needs at least 3 common cells. Exclude the pair with "
                              "pairs=[...]")
        d = (frame.scores[:, j] - frame.scores[:, k])[mask]
        if float(np.ptp(d)) == 0.0:
            raise DesignError(f"all paired differences of {a!r} vs {b!r} are identical; no "
                              "variance can be estimated. Compare them with an exact test instead")
        part = {"pair": np.full(int(mask.sum()), p), "d": d}
        part.update({gname[c]: codes[c][mask] for c in cols})
        parts.append(pd.DataFrame(part))
    terms = [":".join(gname[f] for f in t.factors) for t in frame.spec.random]
    return pd.concat(parts, ignore_index=True), terms


def _to_pairfit(frame: Frame, j: int, k: int, r: dict, terms: list[str]) -> PairFit:
    a, b = frame.models[j], frame.models[k]
    if "error" in r:
        raise DesignError(f"lme4 could not fit {a!r} vs {b!r}: {r['error']}. Check the design "
                          "(e.g. a term with one level per cell is not identifiable) or use "
                          "engine='native'")
    by_grp = dict(zip(r["groups"], r["variances"], strict=True))
    sigma2 = float(by_grp["Residual"])
    names = list(frame.spec.term_names)
    comps = {name: float(by_grp[t]) for name, t in zip(names, terms, strict=True)}
    comps["residual"] = sigma2
    boundary = tuple(name for name in names
                     if math.sqrt(max(comps[name], 0.0) / sigma2) < BOUNDARY_THETA)
    msgs = [m for m in (r.get("messages") or []) if m]
    conv_msgs = [m for m in msgs if "singular" not in m]
    mask = frame.common_mask(j, k)
    n = int(mask.sum())
    per_model = frame.n_observed()
    d = (frame.scores[:, j] - frame.scores[:, k])[mask]
    se = float(r["std_error"])
    grad = r.get("gradient")
    return PairFit(model_a=a, model_b=b, n=n, only_a=int(per_model[j]) - n,
                   only_b=int(per_model[k]) - n,
                   estimate=float(r["estimate"]), variance=se * se, df=float(r["df"]),
                   sigma_d=float(np.std(d, ddof=1)), components=comps,
                   criterion=float(r["REMLcrit"]),
                   converged=int(r["opt_code"]) == 0 and not conv_msgs,
                   boundary=boundary, gradient=float("nan") if grad is None else float(grad),
                   message="; ".join(msgs) if msgs else "ok", nfev=int(r["feval"]),
                   crosscheck=CrossCheck(engine="lme4", df_method="lmerTest satterthwaite",
                                         is_singular=bool(r["isSingular"])))


def fit_pairs_lme4(frame: Frame, pairs: list[tuple[int, int]], *, estimand: str = "gls",
                   rscript: str | None = None, timeout: float = 1800.0) -> list[PairFit]:
    """Fit ``pairs`` with R lme4 + lmerTest (REML), as a cross-check engine.

    Parameters
    ----------
    frame : Frame
        The encoded data (:func:`mixrank.build_frame`).
    pairs : list of (int, int)
        Index pairs ``(j, k)`` into ``frame.models``; ``d = y_j - y_k`` over
        the pair's common cells.
    estimand : {"gls"}
        Only lme4's fixed effect (the GLS estimate) is available.
    rscript : str, optional
        Path of ``Rscript`` (default ``$MIXRANK_RSCRIPT`` or the PATH).
    timeout : float
        Seconds allowed for the R process.

    Returns
    -------
    list of PairFit
        One per pair: ``estimate, variance`` (square of lmerTest's SE),
        ``df`` (lmerTest Satterthwaite), ``components`` (``VarCorr``, named as
        in the formula, ``residual``), ``criterion`` (``REMLcrit(m)``),
        ``converged`` (bobyqa exit code 0 and no lme4 convergence warning),
        ``boundary`` (terms with ``sigma_r / sigma < 1e-4``, the tolerance of
        ``isSingular``), ``gradient`` (max absolute gradient reported by
        lme4's convergence check), ``message`` (lme4's warnings and
        messages), ``nfev`` (bobyqa evaluations).

    Raises
    ------
    MissingDependencyError
        Rscript, lme4, lmerTest or jsonlite is missing (the message gives the
        Debian packages to install).
    DesignError
        ``estimand`` other than ``"gls"``, a formula without random terms,
        fewer than 3 common cells, identical differences, or a design lme4
        rejects (its message is included).

    Notes
    -----
    Model of docs/methods.md §3 for each pair:
    ``d = mu 1 + sum_r Z_r b_r + e``, fitted by ``lmerTest::lmer(..., REML =
    TRUE)`` with bobyqa (``rhoend = 1e-12, maxfun = 1e5``; verified with the
    Debian packages lme4 1.1-31, lmerTest 3.1-3).  lme4's default checks stay
    on: e.g. a term with as many levels as cells is rejected.

    Validated against: this is the reference; ``tests/engine/test_lme4_live.py``
    compares it with the native engine on fresh simulations.

    References
    ----------
    Bates, Maechler, Bolker & Walker (2015), lme4, J. Stat. Softw. 67(1);
    Kuznetsova, Brockhoff & Christensen (2017), lmerTest, J. Stat. Softw. 82(13).
    """
    if estimand != "gls":
        raise DesignError(f"estimand={estimand!r} is not available from the lme4 engine, which "
                          "reports lme4's fixed effect; use estimand='gls' or engine='native'")
    if not frame.spec.random:
        raise DesignError(f"formula {frame.spec.formula!r} has no random term; the lme4 engine "
                          "fits mixed models only. Use engine='native' (a paired t-test on "
                          "cells) or add a term such as (1|subject)")
    path = _rscript(rscript)
    _check(path)
    if not pairs:
        return []
    table, terms = _pair_table(frame, pairs)
    ncol = len(frame.spec.grouping_columns)
    with tempfile.TemporaryDirectory(prefix="mixrank_lme4_") as tmp:
        tdir = Path(tmp)
        (tdir / "spec.json").write_text(json.dumps(dict(
            terms=terms, columns=[f"g{i + 1}" for i in range(ncol)], ncol=ncol)))
        table.to_csv(tdir / "pairs.csv", index=False, float_format="%.17g")
        (tdir / "fit.R").write_text(_FIT_R)
        try:
            proc = subprocess.run([path, "--vanilla", str(tdir / "fit.R"), str(tdir / "spec.json"),
                                   str(tdir / "pairs.csv"), str(tdir / "out.json")],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise DesignError(f"the lme4 fit of {len(pairs)} pair(s) took more than {timeout} s; "
                              "fit fewer pairs or raise timeout") from exc
        out = tdir / "out.json"
        if proc.returncode != 0 or not out.exists():
            raise DesignError(f"R failed while fitting with lme4 (exit {proc.returncode}): "
                              f"{proc.stderr.strip()[-800:]}")
        results = json.loads(out.read_text())
    by_pair = {int(r["pair"]): r for r in results}
    return [_to_pairfit(frame, j, k, by_pair[p], terms) for p, (j, k) in enumerate(pairs)]
