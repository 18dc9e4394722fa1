"""The HTML page of a binomial GLMM fit: scale line, unit sentence, both scales' contrasts."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import mixrank
from mixrank.report import render_report


@pytest.fixture(scope="module")
def page() -> str:
    df = pd.read_csv("tests/reference/glmm_cases/nested.csv.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        res = mixrank.fit("correct ~ model + (1|subject) + (1|subject:question)", df,
                          family="binomial", nagq=0)
    return render_report(res)


def test_scale_and_unit_lines(page):
    assert '<p class="scale">Scale: binomial GLMM' in page
    assert "unit of inference for model contrasts: cells" in page
    assert "add (1|subject:model) to make subject the unit of inference" in page


def test_sections(page):
    for sid in ("scores", "contrasts_logit", "contrasts_response", "components",
                "fixed_effects", "ranks", "resolution", "diagnostics"):
        assert f'<section id="{sid}">' in page
    assert "odds_ratio" in page and 'class="omitted"' not in page
    assert "N* = n (z_{1-alpha/2} + z_{1-beta})^2 SE^2 / delta^2" in page


def test_each_ranked_table_states_its_scale(page):
    assert "Scale: logit. Point ranks order estimate = log-odds beta_j" in page
    assert "Scale: response. estimate = probability averaged over the frame&#x27;s cells" in page
    assert "response 0/1" in page
    for name in ("scores", "contrasts_logit", "contrasts_response", "components", "ranks",
                 "resolution"):
        assert f'data-plot="{name}"' in page


def test_other_objects_still_rejected():
    with pytest.raises(mixrank.DataError, match="FitResult or GlmmResult"):
        render_report(object())


def test_model_by_covariate_page_has_where_the_gaps_live():
    df = pd.read_csv("tests/reference/glmm_by_cases/levels3.csv.gz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        res = mixrank.fit("cbind(k, n - k) ~ model * difficulty + (1|subject:question) + "
                          "(1|subject:model)", df, family="binomial", nagq=0)
    page = render_report(res)
    assert '<section id="gaps"><h2>Where the gaps live (model \u00d7 difficulty)' in page
    for name in ("gaps", "ranks_by", "scores", "contrasts_logit", "ranks", "resolution"):
        assert f'data-plot="{name}"' in page
    assert 'class="omitted"' not in page and "(all)" in page
    assert "response counts (cbind(successes, failures))" in page
