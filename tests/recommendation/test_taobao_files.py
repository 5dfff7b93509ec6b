"""The Taobao loader on files in the published format with one bad cell each: refused with the
file, its line and the column; the summary of what was loaded; the extra it needs."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpbandits.recommendation import taobao

from .test_auctions import _write_taobao


def _files(d):
    return [d / f for f in ("raw_sample.csv", "ad_feature.csv", "user_profile.csv")]


def _spoil(path, line, column, value):
    """Set ``column`` of file line ``line`` (the header is line 1) to ``value``."""
    lines = path.read_text().splitlines()
    head = [h.strip() for h in lines[0].split(",")]
    cells = lines[line - 1].split(",")
    cells[head.index(column)] = value
    lines[line - 1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    "file, line, column, value, words",
    [
        ("raw_sample.csv", 7, "clk", "2", "2 must be 0 or 1"),
        ("raw_sample.csv", 9, "user", "u17", "'u17' is not a number"),
        ("raw_sample.csv", 4, "time_stamp", "", "empty cell"),
        ("raw_sample.csv", 5, "adgroup_id", "3.5", "3.5 is not an integer"),
        ("ad_feature.csv", 3, "price", "cheap", "'cheap' is not a number"),
        ("ad_feature.csv", 6, "price", "-2", "-2 is negative"),
        ("ad_feature.csv", 2, "cate_id", "", "empty cell"),
        ("user_profile.csv", 8, "userid", "x", "'x' is not a number"),
    ],
)
def test_a_bad_cell_is_named_by_file_line_and_column(tmp_path, file, line, column, value, words):
    _write_taobao(tmp_path, n_rows=200)
    _spoil(tmp_path / file, line, column, value)
    with pytest.raises(ValueError) as err:
        taobao.load_taobao(tmp_path)
    msg = str(err.value)
    assert f"{tmp_path / file}, line {line}, column '{column}'" in msg and words in msg, msg


def test_bad_lines_are_found_past_the_first_chunk(tmp_path):
    _write_taobao(tmp_path, n_rows=200)
    _spoil(tmp_path / "raw_sample.csv", 150, "clk", "7")
    with pytest.raises(ValueError, match=re.escape("raw_sample.csv, line 150, column 'clk'")):
        taobao.read_taobao(*_files(tmp_path), chunk_rows=16)
    with open(tmp_path / "raw_sample.csv", "a") as fh:
        fh.write("1,1494000000,3,430548_1007,0,1,extra\n")
    _spoil(tmp_path / "raw_sample.csv", 150, "clk", "1")
    with pytest.raises(ValueError, match="fields"):
        taobao.load_taobao(tmp_path)


def test_chunked_reading_gives_the_same_auctions(tmp_path):
    _write_taobao(tmp_path, n_rows=600)
    files = _files(tmp_path)
    one, many = taobao.read_taobao(*files), taobao.read_taobao(*files, chunk_rows=7)
    for name in ("user", "time_stamp", "adgroup", "clk", "cate", "user_row", "profiles"):
        np.testing.assert_array_equal(getattr(one, name), getattr(many, name))
    np.testing.assert_array_equal(one.price, many.price)
    assert taobao.read_taobao(*files, max_rows=50).clk.size == 50


def test_summary_of_the_log(tmp_path):
    events, _ = _write_taobao(tmp_path, n_rows=400)
    a = taobao.load_taobao(tmp_path)
    text = a.loaded.text(a)
    assert f"{len(events):,} rows -> {a.n:,} auctions" in text
    n_clicks = int(np.nansum(a.click[a.eligible]))
    assert f"{n_clicks:,} clicks logged on {int(a.eligible.sum()):,} shown ads" in text
    assert re.search(r"from 2017-05-\d\d .* UTC to 2017-05-\d\d .* UTC", text), text
    assert "impressions before the split, which train the click models" in text


def test_missing_pandas_names_the_extra(tmp_path, monkeypatch):
    import builtins

    _write_taobao(tmp_path, n_rows=50)
    real = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="optional extra 'pandas'"):
        taobao.load_taobao(tmp_path)


@pytest.mark.parametrize("scale", [1, 10**9])  # ids spanning a few values, or 10^10 (sorted)
def test_join_and_rates_match_a_dictionary(scale):
    """The direct-index and the sorted paths give what a dictionary gives: the first row of
    a duplicated id, -1 for an absent one; rates only from training rows."""
    table = np.array([5, 3, 9, 3, -1]) * scale
    keys = np.array([3, 4, 9, -1, 5, 100, -7, 3]) * scale
    first = {}
    for i, k in enumerate(table.tolist()):
        first.setdefault(k, i)
    np.testing.assert_array_equal(
        taobao._join(keys, table), [first.get(k, -1) for k in keys.tolist()]
    )
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 6, 200) * scale
    clicks = rng.integers(0, 2, 200)
    train = rng.random(200) < 0.7
    train[keys == 5 * scale] = False  # a key with no training row
    got = taobao._rates(keys, train, clicks, 0.1, 10.0, -1.0)
    for k in np.unique(keys):
        rows = train & (keys == k)
        want = (clicks[rows].sum() + 10 * 0.1) / (rows.sum() + 10) if rows.any() else -1.0
        assert np.allclose(got[keys == k], want)
