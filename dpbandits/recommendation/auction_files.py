"""User-given auctions: one file of per-candidate arrays (CSV, or Parquet with pyarrow) as
:class:`~dpbandits.recommendation.auctions.Auctions`, for paper 001's auction metrics on real
data (docs/recommendation.md). The published Tianchi log has its own loader,
:mod:`dpbandits.recommendation.taobao`.
"""

from __future__ import annotations

import csv
import os
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.core.extras import install_hint
from dpbandits.recommendation.auctions import Auctions, candidate_ranks, make_auctions

__all__ = ["AUCTION_COLUMNS", "load_auctions"]

#: Columns of the per-auction file of :func:`load_auctions` (one row per candidate ad):
#: required, then optional.
AUCTION_COLUMNS = (
    ("auction_id", "bid", "pclick_server", "pclick_device"),
    ("click", "reserve"),
)


def load_auctions(path: str | os.PathLike[str], *, max_candidates: int | None = None) -> Auctions:
    """Per-auction arrays from a CSV or Parquet file: one row per candidate ad.

    Columns (docs/recommendation.md, "Your auction data"): ``auction_id`` (any text or number;
    rows with the same id form one auction, in file order), ``bid`` (click bid >= 0),
    ``pclick_server`` and ``pclick_device`` (in [0, 1]); optional ``click`` (logged 0/1 click
    of that ad, for ``outcome="click"``) and ``reserve`` (per-click reserve, constant within an
    auction; default 0). ``.parquet`` files need pandas with pyarrow (the extra ``parquet``:
    ``pip install ".[parquet]"`` in a clone of the repository). ``max_candidates`` keeps each
    auction's top ads by ``s_server`` (the paper limits its internal auctions to 15).
    """
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise ValueError(f"no such file {p!r} (auction data are never downloaded)")
    if p.lower().endswith((".parquet", ".pq")):
        columns = _read_parquet(p)
    else:
        columns = _read_csv_columns(p)
    required, optional = AUCTION_COLUMNS
    missing = [c for c in required if c not in columns]
    if missing:
        raise ValueError(f"{p}: missing column(s) {', '.join(missing)}; has {', '.join(columns)}")
    ids = np.asarray(columns["auction_id"]).astype(str)
    values = {}
    for c in (*required[1:], *(o for o in optional if o in columns)):
        try:
            values[c] = np.asarray(columns[c], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{p}: column {c!r} must be numeric") from None
        if not np.all(np.isfinite(values[c])):
            i = int(np.argmax(~np.isfinite(values[c])))
            raise ValueError(f"{p}: row {i + 1}, column {c!r} is not finite")
    uniq, first, inverse, counts = np.unique(
        ids, return_index=True, return_inverse=True, return_counts=True
    )
    order_of_auction = np.argsort(first, kind="stable")  # auctions in file order
    pos_of = np.empty_like(order_of_auction)
    pos_of[order_of_auction] = np.arange(uniq.size)
    row_auction = pos_of[inverse]
    k = int(counts.max())
    r = uniq.size
    slot = np.zeros(ids.size, dtype=np.int64)
    seen = np.zeros(r, dtype=np.int64)
    for i, a in enumerate(row_auction):  # slot = order within the auction
        slot[i] = seen[a]
        seen[a] += 1

    def grid(v: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.zeros((r, k))
        out[row_auction, slot] = v
        return out

    present = np.zeros((r, k), dtype=bool)
    present[row_auction, slot] = True
    reserve = np.zeros(r)
    if "reserve" in values:
        rv = values["reserve"]
        reserve[row_auction] = rv
        if np.any(reserve[row_auction] != rv):
            raise ValueError(f"{p}: the reserve must be constant within an auction")
    bid, ps, pd = grid(values["bid"]), grid(values["pclick_server"]), grid(values["pclick_device"])
    click = grid(values["click"]) if "click" in values else None
    if max_candidates is not None:
        m = int(max_candidates)
        if m < 1:
            raise ValueError(f"max_candidates must be >= 1, got {max_candidates!r}")
        _, rank = candidate_ranks(np.where(present, bid * ps, 0.0), present)
        present &= rank < m
    return make_auctions(
        bid, ps, pd, reserve=reserve, present=present, click=click,
        auction_id=uniq[order_of_auction],
    )  # fmt: skip


def _read_csv_columns(path: str) -> dict[str, list[str]]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        header = [h.strip() for h in next(reader, [])]
        if not header:
            raise ValueError(f"{path}: empty file")
        cols: dict[str, list[str]] = {h: [] for h in header}
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != len(header):
                raise ValueError(f"{path}:{line}: {len(row)} fields, header has {len(header)}")
            for h, v in zip(header, row, strict=True):
                cols[h].append(v.strip())
    if not next(iter(cols.values())):
        raise ValueError(f"{path}: no data rows")
    return cols


def _read_parquet(path: str) -> dict[str, Any]:
    try:
        import pandas as pd

        frame = pd.read_parquet(path)
    except ImportError as exc:
        raise ImportError(
            f"reading Parquet needs pandas and pyarrow: {install_hint('parquet')}"
        ) from exc
    return {str(c): frame[c].to_numpy() for c in frame.columns}
