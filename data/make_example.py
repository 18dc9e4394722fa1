"""Write the bundled example benchmark (deterministic; run from the repo root).

    python data/make_example.py

Produces ``mixrank/data/example.csv.gz`` (shipped inside the package so that
``mixrank.load_example()`` works after ``pip install``).  Parameters are
listed in ``data/README.md`` and in ``mixrank.load_example``'s docstring (which an
installed package carries; tests/io/test_datasets.py compares it with PARAMS); change all
three together.
"""

from pathlib import Path

import mixrank

PARAMS = dict(
    models=["m01", "m02", "m03", "m04", "m05", "m06"],
    subjects=12, questions=20, prompts=4,
    effects=[0.9, 0.75, 0.7, 0.4, 0.35, 0.0],
    sd_subject=0.8, sd_question=1.5, sd_prompt=0.3,
    sd_model_subject=0.35, sd_model_question=0.6, sd_model_prompt=0.15,
    sd_residual=0.0, family="binomial", rng=20260101,
)

if __name__ == "__main__":
    df = mixrank.simulate(**PARAMS)
    out = Path(__file__).resolve().parent.parent / "mixrank" / "data" / "example.csv.gz"
    df.to_csv(out, index=False, compression={"method": "gzip", "mtime": 0})
    print(f"wrote {out} ({len(df)} rows)")
