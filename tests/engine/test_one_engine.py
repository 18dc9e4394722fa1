"""One LMM engine for p >= 1 fixed columns and one home for estimand weights.

Structure (parsed from the source with :mod:`ast`, every module of mixrank/):

* a **REML criterion** is an expression using ``log(2 pi)`` (the name
  ``LOG2PI`` or a call ``log(2 * pi)``) -- every evaluation of lme4's
  ``REMLcrit`` / the unprofiled REML deviance has that constant.  Exactly one
  module may hold one (engine/lmm/criterion.py); the balanced closed form
  (engine/lmm/balanced.py), which the issue keeps as a fast path, states the
  criterion's value from the strata mean squares and is the one exception;
* a **Newton loop** is a ``for``/``while`` loop whose body calls a function
  whose name contains ``deriv`` or ``hess`` (the exact derivatives) and also
  holds a backtracking ``while`` loop or a linear solve (``solve``,
  ``cholesky``, ``eigh``).  In the LMM engine (mixrank/engine outside
  engine/glmm, whose Laplace/PIRLS iterations optimise a different
  objective) exactly one module may hold one: engine/lmm/newton.py;
* the **L-BFGS-B fallback** (``scipy.optimize.minimize``) is called by one
  module of the LMM engine, engine/lmm/reml.py;
* an **estimand-weights function** is a function named ``estimand_weights``;
  exactly one module defines one (engine/lmm/estimand.py).

Before the engines were merged each count was two or more (objective.py,
reml_fixed.py and reml_hess.py each wrote the criterion; newton.py and
newton1d.py each had a Newton loop; reml.py and reml_fixed.py each ran
L-BFGS-B; design/estimand.py and engine/lmm/satterthwaite.py each defined
``estimand_weights``).

Behaviour: every field of :class:`mixrank.Control` is honoured on the model x
covariate path or refused there with an :class:`~mixrank.errors.OptionError`.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank.engine.control import DEFAULT_CONTROL
from mixrank.engine.lmm import fixed, reml
from mixrank.errors import MixrankDeprecationWarning, OptionError

PKG = Path(mixrank.__file__).resolve().parent


@functools.lru_cache(maxsize=1)
def _modules() -> dict[str, ast.Module]:
    return {p.relative_to(PKG.parent).as_posix(): ast.parse(p.read_text(), str(p))
            for p in sorted(PKG.rglob("*.py"))}


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _is_log_2pi(node: ast.AST) -> bool:
    """``log(2 * pi)`` in any spelling (math/np, 2 or 2.0, either order)."""
    if not (isinstance(node, ast.Call) and _callee(node) == "log" and len(node.args) == 1):
        return False
    arg = node.args[0]
    if not (isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mult)):
        return False
    parts = (arg.left, arg.right)
    two = any(isinstance(p, ast.Constant) and p.value == 2 for p in parts)
    pi = any((isinstance(p, ast.Attribute) and p.attr == "pi")
             or (isinstance(p, ast.Name) and p.id == "pi") for p in parts)
    return two and pi


def _uses_log_2pi(tree: ast.Module) -> bool:
    """An expression with ``log(2 pi)`` other than the one ``LOG2PI = log(2 * pi)`` assignment."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "LOG2PI" and isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "LOG2PI"
                                                for t in node.targets):
            continue
        if _is_log_2pi(node) and not _in_log2pi_assignment(tree, node):
            return True
    return False


def _in_log2pi_assignment(tree: ast.Module, target: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "LOG2PI"
                                                for t in node.targets):
            if any(n is target for n in ast.walk(node.value)):
                return True
    return False


def _newton_loops(tree: ast.Module) -> list[int]:
    """Line numbers of the Newton loops (see the module notes) in ``tree``."""
    found = []
    for loop in ast.walk(tree):
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        body = [n for stmt in loop.body for n in ast.walk(stmt)]
        calls = [_callee(n) for n in body if isinstance(n, ast.Call)]
        derivs = any("deriv" in c.lower() or "hess" in c.lower() for c in calls)
        inner = any(isinstance(n, ast.While) for n in body)
        solve = any(c in ("solve", "cholesky", "eigh", "cho_solve") for c in calls)
        if derivs and (inner or solve):
            found.append(loop.lineno)
    return found


def _calls_minimize(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.Call) and _callee(n) == "minimize" for n in ast.walk(tree))


def _defines(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name
               for n in ast.walk(tree))


def _lmm_engine(mods: dict[str, ast.Module]) -> dict[str, ast.Module]:
    return {p: t for p, t in mods.items()
            if p.startswith("mixrank/engine/") and not p.startswith("mixrank/engine/glmm/")}


def test_detectors_recognise_the_patterns_they_count():
    """Each detector fires on a minimal instance of its pattern (and not on its absence)."""
    crit = ast.parse("import math\ndef f(r2, nu):\n    return nu * (1 + math.log(2 * math.pi) + "
                     "math.log(r2))\n")
    assert _uses_log_2pi(crit)
    assert not _uses_log_2pi(ast.parse("import math\nLOG2PI = math.log(2 * math.pi)\n"))
    newton = ast.parse("def g(f, x):\n    for _ in range(9):\n        v, g, h = f.derivatives(x)\n"
                       "        while True:\n            break\n    return x\n")
    assert _newton_loops(newton) == [2]
    assert _newton_loops(ast.parse("def g(x):\n    for i in x:\n        while i:\n"
                                   "            i -= 1\n")) == []


def test_one_module_defines_the_reml_criterion():
    mods = _modules()
    found = {p for p, t in mods.items() if _uses_log_2pi(t)}
    assert found - {"mixrank/engine/lmm/balanced.py"} == {"mixrank/engine/lmm/criterion.py"}
    assert [p for p, t in mods.items() if _defines(t, "reml_criterion")] == \
        ["mixrank/engine/lmm/criterion.py"]


def test_one_module_defines_the_newton_loop():
    mods = _lmm_engine(_modules())
    found = {p: _newton_loops(t) for p, t in mods.items() if _newton_loops(t)}
    assert list(found) == ["mixrank/engine/lmm/newton.py"], found
    assert len(found["mixrank/engine/lmm/newton.py"]) == 1   # projected_newton, once
    assert [p for p, t in mods.items() if _defines(t, "projected_newton")] == \
        ["mixrank/engine/lmm/newton.py"]


def test_one_module_runs_the_lbfgsb_fallback():
    mods = _lmm_engine(_modules())
    assert [p for p, t in mods.items() if _calls_minimize(t)] == ["mixrank/engine/lmm/reml.py"]


def test_one_module_defines_the_estimand_weights():
    mods = _modules()
    assert [p for p, t in mods.items() if _defines(t, "estimand_weights")] == \
        ["mixrank/engine/lmm/estimand.py"]


def test_the_former_design_estimand_weights_name_still_works():
    from mixrank.design import estimand

    fit = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example(), estimand="units",
                      pairs=[("m01", "m02")])
    with pytest.warns(MixrankDeprecationWarning, match="pair_estimand_weights"):
        old = estimand.estimand_weights
    w = old(fit, "m01", "m02")
    assert np.array_equal(w, estimand.pair_estimand_weights(fit, "m01", "m02"))
    # the units weights: 1 / (T m_u) over the common cells, summing to 1 (exact reference)
    codes = fit.frame.term_codes["subject"][fit.frame.common_mask(0, 1)]
    cnt = np.bincount(codes)
    assert np.allclose(w, 1.0 / (np.count_nonzero(cnt) * cnt[codes]), rtol=0, atol=0)
    assert w.sum() == pytest.approx(1.0, rel=1e-12)


# --- every Control field on the model x covariate path --------------------------------------

FORMULA = "correct ~ model * difficulty + (1|subject) + (1|subject:question)"


def _data(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for m in ("a", "b", "c"):
        for s in range(8):
            u = rng.normal(0, 0.8)
            for qq in range(6):
                v = rng.normal(0, 0.7)
                for pr in range(2):
                    rows.append(dict(model=m, subject=f"s{s}", question=f"q{qq}", prompt=f"p{pr}",
                                     difficulty=("easy", "hard", "mid")[qq % 3],
                                     correct=float(u + v + rng.normal())))
    return pd.DataFrame(rows)


def _fit(control: mixrank.Control | None = None, data: pd.DataFrame | None = None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.SingularFitWarning)
        warnings.simplefilter("ignore", mixrank.WeakDesignWarning)
        return mixrank.fit(FORMULA, _data() if data is None else data, control=control)


class _Spy:
    """Records the calls of the one optimiser's L-BFGS-B runs and KKT verdicts."""

    def __init__(self, monkeypatch, fake_face_gain: float = 0.0) -> None:
        self.runs: list[tuple[np.ndarray, tuple[int, ...]]] = []
        self.controls: list[mixrank.Control] = []
        real_min, real_kkt = reml._minimise, reml.kkt_verdict

        def minimise(obj, x0, control, fixed_zero=()):
            self.runs.append((np.array(x0, dtype=float), tuple(fixed_zero)))
            self.controls.append(control)
            x, fx, k, hit = real_min(obj, x0, control, fixed_zero)
            return x, fx - (fake_face_gain if fixed_zero else 0.0), k, hit

        def kkt(g, psi, crit, control=DEFAULT_CONTROL, hit_limit=False):
            self.controls.append(control)
            return real_kkt(g, psi, crit, control, hit_limit)

        monkeypatch.setattr(reml, "_minimise", minimise)
        monkeypatch.setattr(reml, "kkt_verdict", kkt)


def _spied(monkeypatch, control, **kw) -> tuple[_Spy, mixrank.FitResult]:
    spy = _Spy(monkeypatch, **kw)
    return spy, _fit(control)


#: field -> how the test below shows it acts on the model x covariate path.
HONOURED = {
    "ftol": "passed to the one optimiser", "gtol": "passed to the one optimiser",
    "max_iterations": "passed to the one optimiser", "gradient_tol": "KKT verdict",
    "kkt_tol": "KKT verdict", "fd_gradient_step": "passed to the one optimiser",
    "starts": "first start", "certify": "more runs", "check_faces": "face runs",
    "boundary_tol": "face accepted or not", "fd_steps": "df", "singular": "action",
    "convergence": "action", "small_sample": "action", "min_units": "action",
    "workers": "forked workers",
}
REFUSED = {"orthogonality_tol": "balanced closed form of d ~ 1 only"}


def test_every_control_field_is_classified():
    names = {f.name for f in dataclasses.fields(mixrank.Control)}
    assert names == set(HONOURED) | set(REFUSED)
    assert not set(HONOURED) & set(REFUSED)


@pytest.mark.parametrize("field,value", [("ftol", 1e-11), ("gtol", 1e-7), ("max_iterations", 77),
                                         ("fd_gradient_step", 1e-5), ("gradient_tol", 1e-2),
                                         ("kkt_tol", 1e-6)])
def test_optimiser_fields_reach_the_one_optimiser(monkeypatch, field, value):
    control = mixrank.Control(**{field: value})
    spy, _ = _spied(monkeypatch, control)
    assert spy.runs and spy.controls
    assert all(getattr(c, field) == value for c in spy.controls)


def test_starts_set_the_first_start(monkeypatch):
    spy, _ = _spied(monkeypatch, mixrank.Control(starts=("default",)))
    assert np.array_equal(spy.runs[0][0], np.ones(2))
    spy2 = _Spy(monkeypatch)
    _fit(mixrank.Control(starts=("moment",)))
    assert not np.array_equal(spy2.runs[0][0], np.ones(2))


def test_certify_stops_at_a_certified_optimum_and_false_runs_the_full_search(monkeypatch):
    spy, res = _spied(monkeypatch, mixrank.Control())
    n_pairs = len(res.pairs)
    assert all(p.converged for p in res.pairs)
    assert len(spy.runs) == n_pairs                     # one run per pair: certified
    spy2 = _Spy(monkeypatch)
    full = _fit(mixrank.Control(certify=False))
    # a second start, a face per positive component and a polish, per pair
    assert len(spy2.runs) >= 3 * n_pairs
    assert any(z for _, z in spy2.runs)
    for p, q in zip(res.pairs, full.pairs):
        assert q.criterion <= p.criterion + 1e-9


def test_check_faces_false_skips_the_boundary_faces(monkeypatch):
    spy, _ = _spied(monkeypatch, mixrank.Control(certify=False, check_faces=False))
    assert spy.runs and not any(z for _, z in spy.runs)


def test_boundary_tol_decides_whether_a_better_face_replaces_the_optimum(monkeypatch):
    """Faces made to look better by 1e3: accepted under boundary_tol 1e-10, not under 1e4."""
    _, res = _spied(monkeypatch, mixrank.Control(certify=False, boundary_tol=1e-10),
                    fake_face_gain=1e3)
    assert all(p.boundary for p in res.pairs)
    _, res2 = _spied(monkeypatch, mixrank.Control(certify=False, boundary_tol=1e4),
                     fake_face_gain=1e3)
    assert not any(p.boundary for p in res2.pairs)


def test_fd_steps_set_the_satterthwaite_steps():
    a = _fit().contrasts()
    b = _fit(mixrank.Control(fd_steps=(2e-4, 3e-2))).contrasts()
    assert not np.array_equal(a["df"].to_numpy(), b["df"].to_numpy())
    assert np.allclose(a["df"], b["df"], rtol=0.05)      # the same df, another step
    assert np.array_equal(a["estimate"].to_numpy(), b["estimate"].to_numpy())


def test_check_actions_apply():
    with pytest.raises(mixrank.ConvergenceError):
        _fit(mixrank.Control(gradient_tol=1e-300, convergence="error"))
    with pytest.raises(mixrank.DesignError, match="min_units"):
        _fit(mixrank.Control(min_units=100, small_sample="error"))
    # no question effect left in these data: (1|subject:question) is estimated at 0
    flat = _data(seed=5)
    keys = ["model", "subject", "question"]
    flat["correct"] = (flat["correct"] - flat.groupby(keys)["correct"].transform("mean")
                       + flat.groupby(["model", "subject"])["correct"].transform("mean"))
    with pytest.raises(mixrank.DesignError, match="singular"):
        _fit(mixrank.Control(singular="error"), data=flat)


def test_workers_fit_pairs_in_forked_processes_with_identical_results(monkeypatch):
    from mixrank.engine.lmm import driver

    seen: list[int] = []
    real = driver.run_pairs

    def run_pairs(task, pairs, workers):
        seen.append(workers)
        return real(task, pairs, workers)

    monkeypatch.setattr(driver, "run_pairs", run_pairs)
    one = _fit(mixrank.Control(workers=1))
    assert seen == []
    two = _fit(mixrank.Control(workers=2))
    assert seen == [2]
    assert one.contrasts().equals(two.contrasts())
    assert one.contrasts(by="difficulty").equals(two.contrasts(by="difficulty"))


def test_orthogonality_tol_is_refused_on_the_model_x_covariate_path():
    with pytest.raises(OptionError, match="orthogonality_tol"):
        _fit(mixrank.Control(orthogonality_tol=1e-6))
    # the intercept-only path uses it (its balanced closed form)
    mixrank.fit("correct ~ model + (1|subject)", _data(), control=mixrank.Control(
        orthogonality_tol=1e-6))


def test_fixed_engine_refuses_directly_too():
    res = _fit()
    with pytest.raises(OptionError):
        fixed.fit_pairs_fixed(res.frame, fixed.build_design(res.frame, res.frame.spec), [(0, 1)],
                              control=mixrank.Control(orthogonality_tol=1e-3))
