"""The per-model refits behind ``model_scores()`` use the fit's ``Control``
(no argument silently ignored), on the intercept-only and the model x covariate paths."""

from __future__ import annotations

import mixrank
import mixrank.results.interactions as interactions
import mixrank.results.scores as scores


def _spy(monkeypatch, module, name):
    seen = []
    real = getattr(module, name)

    def wrapper(*args, **kwargs):
        seen.append(kwargs.get("control"))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return seen


def test_model_scores_refits_use_the_fits_control(monkeypatch):
    seen = _spy(monkeypatch, scores, "fit_models")
    ctl = mixrank.Control(gtol=1e-7)
    res = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example(), control=ctl)
    assert res.control is ctl
    res.model_scores()
    assert seen == [ctl]
    # the per-model fits themselves still match the default-control ones (a tolerance only)
    plain = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example()).model_scores()
    assert (res.model_scores()["estimate"].to_numpy() == plain["estimate"].to_numpy()).all()


def test_model_scores_by_refits_use_the_fits_control(monkeypatch):
    seen = _spy(monkeypatch, interactions, "fit_models_fixed")
    ctl = mixrank.Control(gtol=1e-7)
    data = mixrank.load_example()
    res = mixrank.fit("correct ~ model * prompt + (1|subject)", data,
                      pairs=[("m01", "m02")], control=ctl)
    res.model_scores(by="prompt")
    assert seen and all(c is ctl for c in seen)
