"""One home each: every warning and error in mixrank.errors, in one
hierarchy and exported; no argument of the Python API silently ignored; the top-level
namespace holds user-level names (moved names resolve for one release with a warning)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank import GlmmControl, MixrankDeprecationWarning, OptionError, errors

SUBJ = "correct ~ model + (1|subject)"
GLMM = "correct ~ model + (1|subject:question:prompt) + (1|subject:model)"
INTER = "correct ~ model * difficulty + (1|subject)"


def _example():
    return mixrank.load_example()


def _inter_data(seed=3):
    rng = np.random.default_rng(seed)
    rows = []
    for m in ("a", "b", "c"):
        for s in range(8):
            u = rng.normal(0, 0.8)
            for qq in range(6):
                rows.append(dict(model=m, subject=f"s{s}", question=f"s{s}q{qq}",
                                 difficulty=("easy", "hard", "mid")[qq % 3],
                                 correct=float(u + rng.normal())))
    return pd.DataFrame(rows)


def _binomial(formula=GLMM, data=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.UnitOfInferenceWarning)
        return mixrank.fit(formula, _example() if data is None else data, family="binomial",
                           **kw)


# -- one hierarchy ------------------------------------------------------------------------

def test_moved_warnings_and_errors_live_in_errors_and_are_exported():
    from mixrank.engine.glmm.fit import GlmmConvergenceWarning as old_conv
    from mixrank.engine.glmm.pirls import PirlsError as old_pirls
    from mixrank.routes.binomial import UnitOfInferenceWarning as old_unit

    assert old_conv is errors.GlmmConvergenceWarning is mixrank.GlmmConvergenceWarning
    assert old_unit is errors.UnitOfInferenceWarning is mixrank.UnitOfInferenceWarning
    assert old_pirls is errors.PirlsError is mixrank.PirlsError
    assert issubclass(mixrank.GlmmConvergenceWarning, mixrank.ConvergenceWarning)
    assert issubclass(mixrank.UnitOfInferenceWarning, mixrank.MixrankWarning)
    assert issubclass(mixrank.PirlsError, mixrank.MixrankError)
    assert issubclass(mixrank.PirlsError, RuntimeError)
    for name in ("GlmmConvergenceWarning", "UnitOfInferenceWarning", "PirlsError"):
        assert name in mixrank.__all__


def test_every_error_and_warning_class_is_in_errors_and_exported():
    import inspect
    import pkgutil

    homes = {}
    for mod in pkgutil.walk_packages(mixrank.__path__, "mixrank."):
        if mod.name.startswith(("mixrank.cli", "mixrank.report", "mixrank.__main__")):
            continue
        module = __import__(mod.name, fromlist=["_"])
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, (mixrank.MixrankError,
                                                         mixrank.MixrankWarning)):
                homes.setdefault(obj, obj.__module__)
    assert {cls: home for cls, home in homes.items() if home != "mixrank.errors"} == {}
    assert {cls.__name__ for cls in homes} <= set(mixrank.__all__)


def test_a_convergence_warning_filter_catches_glmm_non_convergence():
    ctl = GlmmControl(max_iterations=1, em_steps=0)
    with pytest.warns(mixrank.ConvergenceWarning, match="did not meet its criterion"):
        _binomial(nagq=0, control=ctl)
    with warnings.catch_warnings():
        warnings.simplefilter("error", mixrank.ConvergenceWarning)
        with pytest.raises(mixrank.ConvergenceWarning):
            _binomial(nagq=0, control=ctl)


# -- control= on the binomial path --------------------------------------------------------

def test_a_gaussian_control_maps_its_check_fields_or_names_the_others():
    with pytest.raises(mixrank.DesignError, match="fewer than min_units=20"):
        _binomial(nagq=0, control=mixrank.Control(small_sample="error", min_units=20))
    for kw, names in ((dict(ftol=1e-8), "ftol"), (dict(workers=2), "workers"),
                      (dict(certify=False, gtol=1e-6), "gtol, certify")):
        with pytest.raises(OptionError, match=rf"Control\({names}=\.\.\.\).*only singular, "
                           "convergence, small_sample, min_units apply"):
            _binomial(nagq=0, control=mixrank.Control(**kw))
    with pytest.raises(OptionError, match="expected mixrank.GlmmControl"):
        _binomial(nagq=0, control={"tol": 1e-3})


# -- no argument silently ignored ---------------------------------------------------------

def test_nagq_on_a_gaussian_fit_is_refused():
    with pytest.raises(OptionError, match=r"nagq=0 .*family='gaussian'.*family='binomial'"):
        mixrank.fit(SUBJ, _example(), nagq=0)
    with pytest.raises(OptionError, match="nagq=1"):
        mixrank.fit(SUBJ, _example(), nagq=1)


def test_progress_is_used_on_the_interaction_path():
    calls = []
    res = mixrank.fit(INTER, _inter_data(), progress=lambda d, t: calls.append((d, t)))
    n = len(res.pairs)
    assert n == 3 and calls[0] == (0, n) and calls[-1] == (n, n)


@pytest.mark.parametrize("kw, name", [(dict(client="tcp://127.0.0.1:1"), "client"),
                                      (dict(backend_options={"threads": 2}), "backend_options")])
def test_backend_options_on_the_interaction_path_are_refused(kw, name):
    with pytest.raises(OptionError, match=f"{name}= configures the out-of-core backends"):
        mixrank.fit(INTER, _inter_data(), **kw)


@pytest.mark.parametrize("kw", [dict(backend="duckdb"), dict(client="tcp://127.0.0.1:1"),
                                dict(backend_options={"threads": 2}), dict(pair_by=["subject"]),
                                dict(replicate="prompt"), dict(na="drop")])
@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_build_options_on_a_prebuilt_frame_are_refused(kw, family):
    fr = mixrank.build_frame(_example(), SUBJ)
    (name, value), = kw.items()
    with pytest.raises(OptionError, match=rf"{name}={value!r}: data is a prebuilt Frame"
                       .replace("[", r"\[").replace("{", r"\{")):
        mixrank.fit(SUBJ, fr, family=family, **kw)


def test_backend_options_a_backend_does_not_read_are_refused():
    df = mixrank.simulate(3, 4, 5, 1, rng=2)
    with pytest.raises(OptionError, match=r"\['threads'\] are not read by backend='pandas'"):
        mixrank.fit(SUBJ, df, backend_options={"threads": 2})
    with pytest.raises(OptionError, match=r"\['timeout'\] are not read by backend='duckdb'.*"
                       "'dask': timeout"):
        mixrank.fit(SUBJ, df, backend="duckdb", backend_options={"timeout": 3})


def test_optimiser_control_on_a_cross_check_engine_is_refused():
    with pytest.raises(OptionError, match=r"Control\(ftol=\.\.\.\) sets the native engine's "
                       "optimiser, which engine='statsmodels' does not use"):
        mixrank.fit(SUBJ, _example(), engine="statsmodels", estimand="gls",
                    control=mixrank.Control(ftol=1e-8))


# -- the top-level namespace --------------------------------------------------------------

@pytest.mark.parametrize("name, home", [("fit_pairs", "mixrank.engine.fit_pairs"),
                                        ("load_shared", "mixrank.load_dataset")])
def test_moved_names_resolve_for_one_release_with_a_warning(name, home):
    assert name not in mixrank.__all__
    with pytest.warns(MixrankDeprecationWarning, match=f"mixrank.{name} has moved to {home}"):
        obj = getattr(mixrank, name)
    if name == "fit_pairs":
        assert obj is mixrank.engine.fit_pairs
    else:
        from mixrank.io.datasets import load_shared

        assert obj is load_shared


@pytest.mark.parametrize("fmt, module", [("helm", "helm"), ("inspect", "inspect_logs"),
                                         ("lighteval", "lighteval"), ("lm_eval", "lm_eval")])
def test_harness_readers_leave_the_top_level_for_read_format(fmt, module):
    import importlib

    name = f"read_{fmt}"
    assert name not in mixrank.__all__
    with pytest.warns(MixrankDeprecationWarning,
                      match=rf"mixrank.{name} has moved to mixrank.read\(path, format='{fmt}'\)"):
        obj = getattr(mixrank, name)
    assert obj is getattr(importlib.import_module(f"mixrank.io.{module}"), name)
    from mixrank.io.read import INPUT_FORMATS

    assert fmt in INPUT_FORMATS


@pytest.mark.parametrize("engine", ["statsmodels", "lme4"])
def test_a_cross_check_engine_with_the_aggregate_method_is_refused(engine):
    with pytest.raises(OptionError, match=f"method='aggregate' is computed by the native engine; "
                       f"engine='{engine}' would be ignored"):
        mixrank.fit(SUBJ, _example(), method="aggregate", engine=engine)
    # the native engine (named or by default) computes it
    a = mixrank.fit(SUBJ, _example(), method="aggregate", pairs=[("m01", "m02")])
    b = mixrank.fit(SUBJ, _example(), method="aggregate", engine="native", pairs=[("m01", "m02")])
    assert a.pairs[0].estimate == b.pairs[0].estimate


def test_common_cells_of_a_pair_come_from_the_frame():
    """Only frame/ forms ``observed[:, j] & observed[:, k]``: everything else asks
    ``Frame.common_mask``, so a compressed frame is not expanded to dense matrices."""
    import re
    from pathlib import Path

    root = Path(mixrank.__file__).parent
    pattern = re.compile(r"observed\[:,\s*\w+\]\s*&\s*[\w.]*observed\[")
    inline = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py")
                    if pattern.search(p.read_text(encoding="utf-8")))
    assert inline and all(p.startswith("frame/") for p in inline), inline


def test_the_aggregate_method_estimates_the_units_mean_and_refuses_another_estimand():
    data = _example()
    res = mixrank.fit(SUBJ, data, method="aggregate", pairs=[("m01", "m02")])
    assert res.estimand == "units"
    units = mixrank.fit(SUBJ, data, method="aggregate", estimand="units", pairs=[("m01", "m02")])
    pd.testing.assert_frame_equal(res.contrasts(), units.contrasts())
    for est in ("cells", "gls"):
        with pytest.raises(OptionError, match=f"method='aggregate'.*estimand={est!r} would be "
                           "ignored"):
            mixrank.fit(SUBJ, data, method="aggregate", estimand=est)
