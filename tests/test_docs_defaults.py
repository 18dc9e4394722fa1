"""Words that match the code: docs/defaults.md, the one page that names the
defaults, states the ones the code has now (read from what a fit does when given no
option, not copied here), and
no page repeats a stale default; the stale claims are listed once, in STALE."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import mixrank

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = ROOT / "docs" / "defaults.md"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

#: Claims that were once true and are not any more: pattern -> why it is stale.
STALE: dict[str, str] = {
    r"standard error and\s+Satterthwaite\s+(df|degrees of freedom)\s+\*?at the unit":
        "the headline SE/df is CR2 with Bell-McCaffrey df at the unit where it applies",
    r"SE and Satterthwaite df from the mixed\s+model at the formula's unit":
        "the headline SE/df is CR2 with Bell-McCaffrey df at the unit where it applies",
    r"Satterthwaite df (is )?(by )?default":
        "Satterthwaite is the default only where CR2 does not apply",
    r"estimand\s*=\s*\"?gls\"?\)?,? (is )?(the )?default":
        "the default estimand is cells",
    r"pip install (-e )?'?\.?\[plot\]'? (before|to get|for) (the )?report":
        "matplotlib is a core dependency: the report needs no extra",
}

#: Every adjustment name; outside docs/defaults.md none may be called the default.
ADJUST_NAMES = ("holm", "bonferroni", "bh", "maxt", "stepdown", "step-down", "none")


def _code_defaults() -> dict[str, str]:
    res = mixrank.fit("correct ~ model + (1|subject) + (1|subject:question)",
                      mixrank.load_example())
    adjust = res.contrasts().attrs["mixrank"]["adjust"]     # contrasts() with no option
    with warnings.catch_warnings():          # a 4-level (1|prompt): weak and singular
        warnings.simplefilter("ignore", mixrank.MixrankWarning)
        crossed = mixrank.fit("correct ~ model + (1|subject) + (1|prompt)",
                              mixrank.load_example(), pairs=[("m01", "m02")])
    return {"adjust": adjust,
            "estimand": res.contrasts().attrs["mixrank"]["estimand"],
            "df_nested": res.contrasts().attrs["mixrank"]["df_method"],
            "df_crossed": crossed.contrasts().attrs["mixrank"]["df_method"]}


def test_the_defaults_page_states_the_code_defaults():
    code = _code_defaults()
    text = DEFAULTS.read_text(encoding="utf-8")
    row = {m.group(1): m.group(2) for m in re.finditer(r"^\| ([^|]+?) \| (.+?) \|", text, re.M)}
    adjust_row = next(v for k, v in row.items() if "multiplicity" in k)
    assert f'adjust="{code["adjust"]}"' in adjust_row, (code["adjust"], adjust_row)
    estimand_row = next(v for k, v in row.items() if "estimate" in k)
    assert f"estimand `{code['estimand']}`" in estimand_row
    se_row = next(v for k, v in row.items() if "standard error" in k)
    assert "CR2" in code["df_nested"] and "Bell-McCaffrey" in code["df_nested"]
    assert "CR2 with Bell–McCaffrey df" in se_row
    assert "satterthwaite" in code["df_crossed"].lower() and "**Satterthwaite df** otherwise" in se_row


def test_no_page_repeats_a_stale_default():
    found = []
    for page in PAGES:
        text = re.sub(r"\s+", " ", page.read_text(encoding="utf-8"))
        for pattern, why in STALE.items():
            for m in re.finditer(pattern, text, re.I):
                found.append(f"{page.relative_to(ROOT)}: '{m.group(0)}' ({why})")
    assert found == []


def test_only_the_defaults_page_names_the_default_adjustment():
    names = "|".join(re.escape(n) for n in ADJUST_NAMES)
    pattern = re.compile(rf"`?\b({names})\b`?\s*\(?(by |is the |the )?default\b"
                         rf"|default\s*(adjustment\s*)?(is\s*|:\s*|=\s*)?`?\"?({names})\b", re.I)
    found = []
    for page in PAGES:
        if page == DEFAULTS:
            continue
        text = re.sub(r"\s+", " ", page.read_text(encoding="utf-8"))
        found += [f"{page.relative_to(ROOT)}: '{m.group(0)}'" for m in pattern.finditer(text)]
    assert found == [], "name the default adjustment only in docs/defaults.md: " + "; ".join(found)


def test_the_stale_patterns_catch_what_they_describe():
    old_readme = ("for every pair of models, the difference, its standard error and "
                  "Satterthwaite degrees of freedom *at the unit of inference")
    assert re.search(next(iter(STALE)), old_readme, re.I)
