"""The report says what few units cost when the family-wise answers come from the exact unit
randomization: the smallest family-wise p is 1 / 2^(T-1)."""

from __future__ import annotations

import re
import warnings

import mixrank
from mixrank.report.html import render_report


def test_contrasts_section_names_the_smallest_familywise_p():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = mixrank.fit("correct ~ model + (1|subject)", mixrank.load_example())
        c = fit.contrasts()
        text = re.sub("<[^>]+>", "", str(render_report(fit))).replace("&#x27;", "'")
    T = fit.frame.term_levels["subject"]
    assert c.attrs["mixrank"]["adjust"] == "stepdown" and c.attrs["mixrank"]["flips"] == 2 ** (T - 1)
    assert (f"{T} levels of 'subject': the smallest family-wise p possible is "
            f"{1 / 2 ** (T - 1):.2g}") in text
    won = c.loc[c["p_adjusted"] < 0.05, "estimate"].abs()
    assert f"smallest gap resolved family-wise here is {won.min():.3g}" in text
