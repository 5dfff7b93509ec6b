"""User-given auctions: one file of per-candidate arrays (CSV or Parquet) as
:class:`~dpbandits.recommendation.auctions.Auctions`, for paper 001's auction metrics on real
data (docs/recommendation.md, "Your auction data"). The published Tianchi log has its own
loader, :mod:`dpbandits.recommendation.taobao`.

The file is read a chunk at a time through pandas (CSV) or pyarrow (Parquet)
(:mod:`~dpbandits.recommendation.columnar`), and every bad cell is refused with the file's
line (CSV) or row (Parquet) and its column: an empty cell, text that is not a number, a value
out of range, a row without its ``auction_id``, a reserve that changes within an auction.

Logged clicks and ads never shown: in a log, only an ad that was shown has an observed click.
A row's ``click`` is that logged click (0/1); an empty ``click`` cell -- or ``shown`` = 0 when
the file has a ``shown`` column -- marks an ad the log never showed, whose click is unknown
(NaN in ``Auctions.click``). A click of 1 on an ad never shown (``shown`` = 0, or a bid below
the auction's reserve, which no auction can show) is refused with its row; a shown ad
(``shown`` = 1) without its click is refused too. Auctions with candidates never shown stay
in the data (CTR by ``pclick_device`` needs no click) and are left out, and counted, of CTR by
logged clicks (``Auctions.click_logged``; ``dpbandits recommend --outcome click``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from datetime import datetime, timezone

import numpy as np
from numpy.typing import NDArray

from dpbandits.core.arrays import FloatArray
from dpbandits.recommendation.auctions import (
    Auctions,
    LoadSummary,
    candidate_ranks,
    make_auctions,
)
from dpbandits.recommendation.columnar import CHUNK_ROWS, Chunk, Codes, open_table

__all__ = ["AUCTION_COLUMNS", "load_auctions"]

#: Columns of the per-auction file of :func:`load_auctions` (one row per candidate ad):
#: required, then optional.
AUCTION_COLUMNS = (
    ("auction_id", "bid", "pclick_server", "pclick_device"),
    ("click", "reserve", "shown", "time"),
)


def load_auctions(
    path: str | os.PathLike[str],
    *,
    max_candidates: int | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> Auctions:
    """Per-auction arrays from a CSV or Parquet file: one row per candidate ad.

    Columns (docs/recommendation.md, "Your auction data"): ``auction_id`` (any text or number;
    rows with the same id form one auction, in file order), ``bid`` (click bid >= 0),
    ``pclick_server`` and ``pclick_device`` (in [0, 1]); optional ``click`` (the logged 0/1
    click of a shown ad; empty: never shown), ``shown`` (0/1: did the log show the ad),
    ``reserve`` (per-click reserve >= 0, constant within an auction; default 0) and ``time``
    (Unix seconds or ISO dates, for the summary's date range). The module docstring states the
    rule for clicks of ads never shown. Needs pandas (extra ``pandas``), and pyarrow for
    ``.parquet`` files (extra ``parquet``). ``max_candidates`` keeps each auction's top ads
    by ``s_server`` (the paper limits its internal auctions to 15). ``Auctions.loaded``
    summarises what was read (:class:`~dpbandits.recommendation.auctions.LoadSummary`).
    """
    if max_candidates is not None:
        if isinstance(max_candidates, bool) or not isinstance(max_candidates, (int, np.integer)):
            raise TypeError(f"max_candidates must be an integer, got {max_candidates!r}")
        if max_candidates < 1:
            raise ValueError(f"max_candidates must be >= 1, got {max_candidates!r}")
    table = open_table(path, "auction data")
    required, optional = AUCTION_COLUMNS
    table.require(required)
    present = [c for c in optional if c in table.columns]
    ids = Codes()  # auction ids in order of first appearance
    parts: dict[str, list[FloatArray]] = {c: [] for c in (*required, *present) if c != "time"}
    times: list[FloatArray] = []
    rows: list[NDArray[np.int64]] = []
    for chunk in table.chunks([*required, *present], text=["auction_id"], chunk_rows=chunk_rows):
        parts["auction_id"].append(ids.encode(chunk.text("auction_id")).astype(np.float64))
        rows.append(chunk.rows)
        for name, values in _values(chunk, present).items():
            parts[name].append(values)
        if "time" in present:
            times.append(_seconds(chunk))
    n_rows = sum(len(p) for p in parts["auction_id"])
    if n_rows == 0:
        raise ValueError(f"{table.path}: no data rows")
    cols = {c: np.concatenate(v) for c, v in parts.items()}
    auction = cols.pop("auction_id").astype(np.int64)
    where = functools.partial(_place_of, table.place, np.concatenate(rows))
    return _build(table.path, auction, np.asarray(ids.values, dtype=object), cols, times, where,
                  max_candidates)  # fmt: skip


def _values(chunk: Chunk, present: list[str]) -> dict[str, FloatArray]:
    """The numeric columns of one chunk, checked cell by cell (module docstring)."""
    out = {}
    for name in ("bid", "pclick_server", "pclick_device"):
        v = chunk.numbers(name)
        if name == "bid":
            chunk.check(name, v, v >= 0, "is negative; a bid must be >= 0")
        else:
            chunk.check(name, v, (v >= 0) & (v <= 1), "is out of range; must be in [0, 1]")
        out[name] = v
    if "reserve" in present:
        v = out["reserve"] = chunk.numbers("reserve")
        chunk.check("reserve", v, v >= 0, "is negative; the reserve must be >= 0")
    for name in ("click", "shown"):
        if name in present:
            v = out[name] = chunk.numbers(name, empty=name == "click", bools=True)
            chunk.check(name, v, (v == 0) | (v == 1), "must be 0 or 1")
    if "shown" in present and "click" in present:
        unshown, click = out["shown"] == 0, out["click"]
        chunk.fail(unshown & (click == 1), "click", "1 is a click on an ad never shown (shown = 0)")
        chunk.fail(~unshown & np.isnan(click), "click",
                   "empty cell; a shown ad (shown = 1) needs its logged click")  # fmt: skip
        out["click"] = np.where(unshown, np.nan, click)
    if "reserve" in present and "click" in present:
        chunk.fail((out["bid"] < out["reserve"]) & (out["click"] == 1), "click",
                   "1 is a click on an ad bidding below the reserve (never eligible, never "
                   "shown)")  # fmt: skip
    return out


def _seconds(chunk: Chunk) -> FloatArray:
    """The ``time`` column as Unix seconds: numbers as they are, else ISO dates/times."""
    import pandas as pd

    col = chunk.frame["time"]
    if col.dtype.kind in "iuf":
        return chunk.numbers("time")
    if col.dtype.kind == "M":
        stamps = pd.to_datetime(col, utc=True)
    else:
        text = col.astype(object)
        numeric = pd.to_numeric(text, errors="coerce")
        if not numeric.isna().any():
            return chunk.numbers("time")
        stamps = pd.to_datetime(text, errors="coerce", utc=True, format="ISO8601")
        bad = (stamps.isna() & text.notna()).to_numpy()
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(
                f"{chunk.where(i)}, column 'time': {text.iloc[i]!r} is neither Unix seconds "
                "nor an ISO date"
            )
    missing = stamps.isna().to_numpy()
    if missing.any():
        raise ValueError(f"{chunk.where(int(np.argmax(missing)))}, column 'time': empty cell")
    epoch = pd.Timestamp(0, tz="UTC")  # whatever unit pandas chose for the stamps
    return ((stamps - epoch) / pd.Timedelta(seconds=1)).to_numpy(dtype=np.float64)


def time_range(seconds: FloatArray) -> tuple[str, str]:
    """First and last time of ``seconds`` (Unix, UTC) as ISO text."""

    def iso(t: float) -> str:
        return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")

    return iso(float(seconds.min())), iso(float(seconds.max()))


def _build(
    path: str,
    auction: NDArray[np.int64],
    ids: NDArray[np.object_],
    cols: dict[str, FloatArray],
    times: list[FloatArray],
    where: Callable[[int], str],
    max_candidates: int | None,
) -> Auctions:
    """The padded ``(R, K)`` arrays: auctions in order of first appearance, candidates in
    file order within their auction."""
    order = np.argsort(auction, kind="stable")
    counts = np.bincount(auction, minlength=ids.size)
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.empty_like(auction)
    slot[order] = np.arange(auction.size) - np.repeat(start, counts)
    r, k = ids.size, int(counts.max())

    def grid(v: FloatArray) -> FloatArray:
        out = np.zeros((r, k))
        out[auction, slot] = v
        return out

    present = np.zeros((r, k), dtype=bool)
    present[auction, slot] = True
    reserve = np.zeros(r)
    if "reserve" in cols:
        rv = cols["reserve"]
        reserve[auction[::-1]] = rv[::-1]  # each auction's first row
        changed = reserve[auction] != rv
        if changed.any():
            raise ValueError(
                f"{where(int(np.argmax(changed)))}, column 'reserve': the reserve "
                "must be constant within an auction"
            )
    bid, ps, pd = grid(cols["bid"]), grid(cols["pclick_server"]), grid(cols["pclick_device"])
    click = grid(cols["click"]) if "click" in cols else None
    if max_candidates is not None:
        _, rank = candidate_ranks(np.where(present, bid * ps, 0.0), present)
        present &= rank < int(max_candidates)
    out = make_auctions(bid, ps, pd, reserve=reserve, present=present, click=click, auction_id=ids)
    if out.n == 0:
        raise ValueError(
            f"{path}: none of the {r} auctions has an ad bidding at least its reserve"
        )
    summary = LoadSummary(
        path, int(auction.size), time_range(np.concatenate(times)) if times else None,
        (("auctions without an ad bidding at least the reserve", r - out.n),),
    )  # fmt: skip
    return Auctions(**{**out.__dict__, "loaded": summary})


def _place_of(place: Callable[[int], str], rows: NDArray[np.int64], i: int) -> str:
    return place(int(rows[i]))
