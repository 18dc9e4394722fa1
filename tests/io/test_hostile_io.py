"""Hostile inputs at the readers (docs/hardening.md §7): archive members are read with a
decompressed-size cap, zstandard is a core dependency, and a parquet folder
with a non-finite score names the file and the column."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import mixrank
from mixrank import DataError
from mixrank.io.inspect_logs import MAX_MEMBER_BYTES, _member, member_cap

ROOT = Path(__file__).resolve().parents[2]
GEN = Path(__file__).resolve().parent / "fixtures" / "generated"


def _eval_file() -> Path:
    return sorted((GEN / "inspect").glob("*_arith_*.eval"))[0]


def test_zstandard_is_a_core_dependency():
    text = (ROOT / "pyproject.toml").read_text()
    deps = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert deps is not None and re.search(r'"zstandard>=', deps.group(1)), text[:800]
    import zstandard  # noqa: F401  (installed with the package itself)


def test_real_eval_log_reads_under_the_default_cap():
    assert member_cap() == MAX_MEMBER_BYTES
    df = mixrank.read(GEN / "inspect")
    assert len(df) > 0


def _bomb(tmp_path: Path, method: str) -> Path:
    """A .eval archive whose header is small but one sample member expands to 8 MB."""
    src = _eval_file()
    dst = tmp_path / f"bomb_{method}.eval"
    with zipfile.ZipFile(src) as z:
        members = {n: _member(z, n, src) for n in z.namelist()}
    big = b'{"id": 1, "pad": "' + b" " * (8 << 20) + b'"}'
    name = next(n for n in members if n.startswith("samples/"))
    if method == "zstd":
        import zstandard

        with zipfile.ZipFile(dst, "w") as z:
            for n, data in members.items():
                z.writestr(n, data)
        # re-write the one member zstd-compressed by hand (zipfile cannot write method 93)
        raw = zstandard.ZstdCompressor().compress(big)
        return _with_zstd_member(dst, name, raw, len(big))
    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for n, data in members.items():
            z.writestr(n, big if n == name else data)
    assert dst.stat().st_size < 1 << 20     # small on disk, 8 MB decompressed
    return dst


def _with_zstd_member(path: Path, name: str, raw: bytes, size: int) -> Path:
    """Replace ``name`` in ``path`` by a stored member whose bytes are ``raw`` and whose
    compression method is patched to zstd (93), as Inspect writes it."""
    with zipfile.ZipFile(path) as z:
        others = {n: z.read(n) for n in z.namelist() if n != name}
    with zipfile.ZipFile(path, "w") as z:
        for n, data in others.items():
            z.writestr(n, data)
        z.writestr(name, raw)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(name)
    off = info.header_offset
    data[off + 8:off + 10] = (93).to_bytes(2, "little")          # local header method
    cd = data.find(b"PK\x01\x02")                                # central directory
    while cd >= 0:
        nlen = int.from_bytes(data[cd + 28:cd + 30], "little")
        if data[cd + 46:cd + 46 + nlen] == name.encode():
            data[cd + 10:cd + 12] = (93).to_bytes(2, "little")
            data[cd + 24:cd + 28] = size.to_bytes(4, "little")
            break
        cd = data.find(b"PK\x01\x02", cd + 4)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("method", ["deflate", "zstd"])
def test_eval_member_past_the_cap_is_a_clear_error(tmp_path, monkeypatch, method):
    pytest.importorskip("zstandard")
    f = _bomb(tmp_path, method)
    monkeypatch.setenv("MIXRANK_MAX_MEMBER_BYTES", str(1 << 20))
    with pytest.raises(DataError, match=r"decompresses to more than 1048576 bytes.*"
                                        r"MIXRANK_MAX_MEMBER_BYTES"):
        mixrank.read(f, format="inspect")
    # raised cap: the member is read (and then judged as a sample, not as a size)
    monkeypatch.setenv("MIXRANK_MAX_MEMBER_BYTES", str(64 << 20))
    with zipfile.ZipFile(f) as z:
        sizes = [len(_member(z, n, f)) for n in z.namelist() if n.startswith("samples/")]
    assert max(sizes) > 8 << 20


@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_bad_cap_value_is_named(monkeypatch, value):
    monkeypatch.setenv("MIXRANK_MAX_MEMBER_BYTES", value)
    with pytest.raises(DataError, match=re.escape(f"MIXRANK_MAX_MEMBER_BYTES={value!r}")):
        member_cap()


@pytest.mark.parametrize("backend", ["pandas", "duckdb", "dask"])
@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_parquet_folder_with_infinite_score_names_file_and_column(tmp_path, bad, backend):
    pytest.importorskip("pyarrow")
    pytest.importorskip({"dask": "dask.dataframe"}.get(backend, backend))
    rng = np.random.default_rng(1)
    for part in range(3):
        df = pd.DataFrame({"model": np.repeat(["a", "b"], 10),
                           "subject": np.tile(np.repeat(["s1", "s2"], 5), 2),
                           "question": np.tile([f"q{part}_{i}" for i in range(10)], 2),
                           "correct": rng.random(20)})
        if part == 1:
            df.loc[3, "correct"] = bad
        df.to_parquet(tmp_path / f"part{part}.parquet")
    with pytest.raises(DataError, match=r"'correct'.*infinite.*part1\.parquet"):
        mixrank.fit("correct ~ model + (1|subject)", tmp_path, backend=backend)
