"""The per-auction loader as a user meets it (docs/recommendation.md, "Your auction data"):
every kind of bad cell is refused with the file's line (CSV) or row (Parquet) and the column;
rows without an auction id are refused; the rule for clicks of ads never shown; the summary."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpbandits.recommendation import auctions as au
from dpbandits.recommendation.auction_files import load_auctions

HEAD = "auction_id,bid,pclick_server,pclick_device,click,reserve"
GOOD = ["a,2.0,0.10,0.20,0,0.5", "a,1.0,0.20,0.10,1,0.5", "b,3.0,0.05,0.08,0,0.5"]

# (bad line written as line 3 of the CSV, i.e. the second data row; column; words of the error)
BAD_CELLS = [
    ("a,1.0,0.2,1.7,1,0.5", "pclick_device", "1.7 is out of range"),
    ("a,1.0,-0.1,0.1,1,0.5", "pclick_server", "-0.1 is out of range"),
    ("a,-1,0.2,0.1,1,0.5", "bid", "-1 is negative"),
    ("a,,0.2,0.1,1,0.5", "bid", "empty cell"),
    ("a,1.0,0.2,,1,0.5", "pclick_device", "empty cell"),
    ("a,1.0,abc,0.1,1,0.5", "pclick_server", "'abc' is not a number"),
    ("a,1.0,0.2,0.1,1,", "reserve", "empty cell"),
    ("a,1.0,0.2,0.1,2,0.5", "click", "2 must be 0 or 1"),
    ("a,1.0,0.2,0.1,yes,0.5", "click", "'yes' is not a number"),
    ("a,inf,0.2,0.1,1,0.5", "bid", "not finite"),
    ("a,1.0,0.2,nan,1,0.5", "pclick_device", "'nan' is not a number"),
    (",1.0,0.2,0.1,1,0.5", "auction_id", "empty cell"),
    ("  ,1.0,0.2,0.1,1,0.5", "auction_id", "empty cell"),
    ("a,1.0,0.2,0.1,1,0.7", "reserve", "constant within an auction"),
    ("a,0.1,0.2,0.1,1,0.5", "click", "bidding below the reserve"),
]


def _csv(tmp_path, lines, head=HEAD, name="a.csv"):
    path = tmp_path / name
    path.write_text("\n".join([head, *lines]) + "\n")
    return path


def _parquet(tmp_path, csv_path):
    import pandas as pd

    frame = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    path = tmp_path / "a.parquet"
    frame.replace("", None).to_parquet(path)
    return path


@pytest.mark.parametrize("line, column, words", BAD_CELLS)
def test_a_bad_cell_is_named_by_line_and_column(tmp_path, line, column, words):
    path = _csv(tmp_path, [GOOD[0], line, GOOD[2]])
    with pytest.raises(ValueError) as err:
        load_auctions(path)
    msg = str(err.value)
    assert f"{path}, line 3, column '{column}'" in msg and words in msg, msg


@pytest.mark.parametrize("line, column, words", BAD_CELLS[:8] + BAD_CELLS[11:12] + BAD_CELLS[13:])
def test_a_bad_cell_in_parquet_is_named_by_row(tmp_path, line, column, words):
    path = _parquet(tmp_path, _csv(tmp_path, [GOOD[0], line, GOOD[2]]))
    with pytest.raises(ValueError) as err:
        load_auctions(path)
    msg = str(err.value)
    assert f"{path}, row 2, column '{column}'" in msg and words in msg, msg


def test_line_numbers_survive_blank_lines_and_chunks(tmp_path):
    lines = [GOOD[0], "", GOOD[1], GOOD[2], "", GOOD[0], "a,1.0,0.2,1.5,1,0.5"]
    path = _csv(tmp_path, lines)
    for chunk_rows in (1, 2, 3, 1000):
        with pytest.raises(ValueError, match=re.escape(f"{path}, line 8, column 'pclick_device'")):
            load_auctions(path, chunk_rows=chunk_rows)


def test_file_level_problems(tmp_path):
    with pytest.raises(ValueError, match="missing column.*pclick_device"):
        load_auctions(_csv(tmp_path, ["a,1,0.1"], head="auction_id,bid,pclick_server"))
    with pytest.raises(ValueError, match="missing column.*auction_id"):
        load_auctions(_csv(tmp_path, ["1,0.1,0.2"], head="bid,pclick_server,pclick_device"))
    with pytest.raises(ValueError, match="no data rows"):
        load_auctions(_csv(tmp_path, []))
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty file"):
        load_auctions(empty)
    with pytest.raises(ValueError, match=r"line 3.*fields|fields.*line 3"):
        load_auctions(_csv(tmp_path, [GOOD[0], GOOD[1] + ",9,9"]))
    with pytest.raises(ValueError, match="no such file"):
        load_auctions(tmp_path / "none.csv")
    bogus = tmp_path / "x.parquet"
    bogus.write_text("not parquet")
    with pytest.raises(ValueError, match="not a Parquet file"):
        load_auctions(bogus)
    with pytest.raises(ValueError, match="max_candidates"):
        load_auctions(_csv(tmp_path, GOOD), max_candidates=0)
    for bad in (2.5, True, "3"):
        with pytest.raises(TypeError, match="max_candidates must be an integer"):
            load_auctions(_csv(tmp_path, GOOD), max_candidates=bad)
    with pytest.raises(ValueError, match="column.s. bid appear more than once"):
        load_auctions(
            _csv(tmp_path, ["a,1,2,0.1,0.2"], head="auction_id,bid,bid,pclick_server,pclick_device")
        )
    with pytest.raises(ValueError, match="must be comma-separated"):
        load_auctions(
            _csv(tmp_path, ["a;1;0.1;0.2"], head="auction_id;bid;pclick_server;pclick_device")
        )
    with pytest.raises(ValueError, match="none of the 2 auctions has an ad bidding at least"):
        load_auctions(_csv(tmp_path, ["a,1,0.1,0.2,0,5", "b,2,0.1,0.2,0,5"]))


def test_parquet_null_id_is_refused_not_a_new_auction(tmp_path):
    import pandas as pd

    frame = pd.DataFrame(
        {"auction_id": ["a", None, "b"], "bid": [1.0, 2.0, 3.0],
         "pclick_server": [0.1, 0.2, 0.3], "pclick_device": [0.1, 0.2, 0.3]}
    )  # fmt: skip
    path = tmp_path / "ids.parquet"
    frame.to_parquet(path)
    with pytest.raises(ValueError, match=re.escape(f"{path}, row 2, column 'auction_id': empty")):
        load_auctions(path)
    frame["auction_id"] = [7, 7, 8]  # numeric ids are fine
    frame.to_parquet(path)
    assert load_auctions(path).n == 2


CLICKS = "auction_id,bid,pclick_server,pclick_device,click,shown"


def test_clicks_of_ads_never_shown(tmp_path):
    """The documented rule: a click on an ad never shown is refused; an ad never shown has no
    logged click (empty cell, or shown = 0); auctions with such ads are kept, counted, and left
    out of CTR by logged clicks."""
    bad = _csv(tmp_path, ["a,2,0.1,0.2,0,1", "a,1,0.2,0.1,1,0"], head=CLICKS)
    with pytest.raises(
        ValueError,
        match=re.escape(f"{bad}, line 3, column 'click': 1 is a click on an ad never shown"),
    ):
        load_auctions(bad)
    bad = _csv(tmp_path, ["a,2,0.1,0.2,,1"], head=CLICKS)
    with pytest.raises(ValueError, match="line 2, column 'click': empty cell; a shown ad"):
        load_auctions(bad)
    rows = ["a,2,0.1,0.2,1,1", "a,1,0.2,0.1,0,0", "b,3,0.1,0.1,0,1", "b,1,0.1,0.3,0,1"]
    a = load_auctions(_csv(tmp_path, rows, head=CLICKS))
    assert a.n == 2 and np.isnan(a.click[0, 1]) and a.click[0, 0] == 1
    np.testing.assert_array_equal(a.click_logged, [False, True])
    with pytest.raises(ValueError, match="1 of 2 auctions have candidates the log never showed"):
        au.pricing_comparison(a, outcome="click", rng=0)
    rows_ = au.pricing_comparison(a.subset(a.click_logged), outcome="click", rng=0)
    assert len(rows_) == 3
    # without a 'shown' column an empty click cell means "never shown"
    a2 = load_auctions(
        _csv(tmp_path, ["a,2,0.1,0.2,1", "a,1,0.2,0.1,"], head=HEAD[: HEAD.rindex(",")])
    )
    assert np.isnan(a2.click[0, 1]) and not a2.click_logged[0]
    text = a.loaded.text(a)
    assert (
        "1 clicks logged on 3 shown ads" in text
        and "1 auctions have candidates never shown" in text
    )


def test_summary_counts_auctions_candidates_clicks_and_dates(tmp_path):
    head = HEAD + ",time"
    rows = [
        "x,2,0.1,0.2,0,0.5,2017-05-06T10:00:00", "x,1,0.2,0.1,1,0.5,2017-05-06T10:00:00",
        "y,0.2,0.1,0.1,0,0.5,2017-05-07", "z,3,0.3,0.3,1,0.5,2017-05-13T23:59:00",
    ]  # fmt: skip
    a = load_auctions(_csv(tmp_path, rows, head=head))
    text = a.loaded.text(a)
    assert a.n == 2 and list(a.auction_id) == ["x", "z"]
    for words in (
        "4 rows -> 2 auctions", "1.50 candidates on average (1-2)",
        "2 clicks logged on 3 shown ads",
        "from 2017-05-06 10:00:00 UTC to 2017-05-13 23:59:00 UTC",
        "dropped 1 auctions without an ad bidding at least the reserve",
    ):  # fmt: skip
        assert words in text, text
    unix = load_auctions(_csv(tmp_path, ["x,2,0.1,0.2,0,0.5,1494000000"], head=head))
    assert "2017-05-05 16:00:00 UTC" in unix.loaded.text(unix)
    with pytest.raises(ValueError, match="line 2, column 'time': 'yesterday' is neither"):
        load_auctions(_csv(tmp_path, ["x,2,0.1,0.2,0,0.5,yesterday"], head=head))


def test_missing_pandas_names_the_extra(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas.") or name.startswith("pyarrow"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="optional extra 'pandas'"):
        load_auctions(_csv(tmp_path, GOOD))
    (tmp_path / "a.parquet").write_bytes(b"")
    with pytest.raises(ImportError, match="optional extra 'parquet'"):
        load_auctions(tmp_path / "a.parquet")
