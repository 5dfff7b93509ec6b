"""The Alibaba/Taobao display-ads log (Tianchi 2018) as auctions, as paper 001 uses it (App. E.1).

Nothing is downloaded: point :func:`load_taobao` at the files of "Ad Display/Click Data on
Taobao.com" (Tianchi data set 56) in their published format --

- ``raw_sample.csv``: ``user,time_stamp,adgroup_id,pid,nonclk,clk`` (one impression per row);
- ``ad_feature.csv``: ``adgroup_id,cate_id,campaign_id,customer,brand,price`` (``brand`` may be
  ``NULL``);
- ``user_profile.csv``: ``userid,cms_segid,cms_group_id,final_gender_code,age_level,
  pvalue_level,shopping_level,occupation,new_user_class_level`` (the published header ends with
  a space; empty cells are allowed).

As in App. E.1: the impressions of one user at one time stamp are the candidates of one
single-slot auction; click bids are proportional to the advertised item's price
(``bid_scale x price``); the reserve is the smallest bid; every candidate's logged click is kept
(``Auctions.click``, for ``outcome="click"``).

The paper's click models (DIN for ``pClick_device`` with all user features, an FNN without them
for ``pClick_server``, trained with DeepCTR) are not reproduced. The loader fits two counting
models on the impressions before ``split_time`` (default: the last calendar day, UTC+8, is the
test set, as the data's own train/test split) and builds the auctions from the rest:

- ``pclick_server``: the ad's click rate, shrunk towards its category's, shrunk towards the
  overall rate (``prior`` pseudo-impressions at each level) -- ad and context data only;
- ``pclick_device``: that rate refined with the user's data -- times one lift per profile
  feature (gender, age level, consumption grade, shopping depth, student flag, city level):
  the click rate of the user's value of the feature in the ad's category over the category's
  rate (shrunk like the others; a naive-Bayes-style product), times the user's own click ratio
  (clicks over the model's expected clicks, shrunk towards 1) -- capped at 1.

To use your own models, export per-candidate predictions in the schema of
:func:`dpbandits.recommendation.auction_files.load_auctions` instead.

The files are read a chunk at a time through pandas (:mod:`~dpbandits.recommendation.columnar`;
the optional extra ``pandas``), keeping about 17 bytes per impression (its user, time, ad and
click) plus the ad's category and price; the click models are counts (``numpy.bincount``) and
sorted look-ups, so the full log (26 million impressions) loads in minutes
(``benchmarks/bench_taobao.py``). A bad cell is refused with its file, line and column.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.core.arrays import FloatArray, IntArray
from dpbandits.recommendation.auction_files import time_range
from dpbandits.recommendation.auctions import Auctions, LoadSummary, make_auctions
from dpbandits.recommendation.columnar import CHUNK_ROWS, Codes, TableFile, open_table

__all__ = ["RAW_SAMPLE", "AD_FEATURE", "USER_PROFILE", "TaobaoLog", "load_taobao", "read_taobao"]

#: The published headers (column names; whitespace around names is ignored).
RAW_SAMPLE = ("user", "time_stamp", "adgroup_id", "pid", "nonclk", "clk")
AD_FEATURE = ("adgroup_id", "cate_id", "campaign_id", "customer", "brand", "price")
USER_PROFILE = (
    "userid", "cms_segid", "cms_group_id", "final_gender_code", "age_level", "pvalue_level",
    "shopping_level", "occupation", "new_user_class_level",
)  # fmt: skip
#: The profile columns the device model uses (everything about the user but the ids).
_PROFILE_KEYS = (
    "final_gender_code", "age_level", "pvalue_level", "shopping_level", "occupation",
    "new_user_class_level",
)  # fmt: skip
#: Seconds of the UTC+8 offset (the log's days are Beijing days).
_UTC8 = 8 * 3600


@dataclass(frozen=True)
class TaobaoLog:
    """The three tables as arrays: impressions with their ad's attributes, and the users'
    profiles (one row per profiled user; ``user_row`` points into it, -1: no profile)."""

    user: IntArray
    time_stamp: IntArray
    adgroup: IntArray
    clk: IntArray
    cate: IntArray  # the impression's ad's category (-1 if the ad is not in ad_feature)
    price: FloatArray  # its item price (nan if unknown)
    user_row: IntArray  # (n,): the impression's user's row of ``profiles`` (-1: no profile)
    profiles: IntArray  # (U, F): a code per profile feature of each profiled user

    def profile_codes(self, f: int) -> IntArray:
        """Feature ``f``'s code of each impression's user (-1 without a profile)."""
        return np.where(self.user_row >= 0, self.profiles[self.user_row, f], -1)

    @property
    def profile(self) -> IntArray:
        """``(n, F)``: every profile feature's code per impression (-1: no profile)."""
        return np.stack([self.profile_codes(f) for f in range(self.profiles.shape[1])], axis=1)


def _table(path: str | os.PathLike[str], expected: tuple[str, ...]) -> TableFile:
    table = open_table(path, "the Taobao log files")
    table.require(expected, f" (not the published format; expected {','.join(expected)})")
    return table


#: Keys (ids, codes) spanning at most this range are indexed directly (an array of that
#: length) instead of sorted: the published ids span about a million.
_DENSE = 1 << 26


def _dense(keys: NDArray[Any]) -> tuple[IntArray, int]:
    """Codes 0..m-1 for ``keys`` (equal keys, equal codes) and m: the keys shifted when they
    span at most ``_DENSE`` values (no sort), else their ranks."""
    lo, hi = int(keys.min()), int(keys.max())
    if hi - lo < _DENSE:
        return keys.astype(np.int64) - lo, hi - lo + 1
    uniq, inv = np.unique(keys, return_inverse=True)
    return inv.reshape(-1).astype(np.int64), int(uniq.size)


def _join(keys: IntArray, table_keys: IntArray) -> IntArray:
    """For each of ``keys`` its row in ``table_keys`` (the first of equal keys), -1 if absent."""
    lo, hi = int(table_keys.min()), int(table_keys.max())
    if hi - lo < _DENSE:
        row_of = np.full(hi - lo + 2, -1, dtype=np.int64)  # the last slot: out of range
        uniq, first = np.unique(table_keys, return_index=True)  # the table is small
        row_of[uniq - lo] = first
        at = keys.astype(np.int64) - lo
        at[(at < 0) | (at > hi - lo)] = hi - lo + 1
        return row_of[at]
    order = np.argsort(table_keys, kind="stable")
    sorted_keys = table_keys[order]
    pos = np.searchsorted(sorted_keys, keys)
    found = pos < sorted_keys.size
    found[found] = sorted_keys[pos[found]] == keys[found]
    return np.where(found, order[np.minimum(pos, sorted_keys.size - 1)], -1)


def _ads(path: str | os.PathLike[str], chunk_rows: int) -> tuple[IntArray, IntArray, FloatArray]:
    ids, cates, prices = [], [], []
    for chunk in _table(path, AD_FEATURE).chunks(("adgroup_id", "cate_id", "price"),
                                                 chunk_rows=chunk_rows):  # fmt: skip
        ids.append(chunk.integers("adgroup_id"))
        cates.append(chunk.integers("cate_id"))
        price = chunk.numbers("price", empty=True)  # empty: unknown price, the ad is dropped
        chunk.check("price", price, price >= 0, "is negative; an item price must be >= 0")
        prices.append(price)
    return np.concatenate(ids), np.concatenate(cates), np.concatenate(prices)


def _profiles(path: str | os.PathLike[str], chunk_rows: int) -> tuple[IntArray, IntArray]:
    codes = [Codes() for _ in _PROFILE_KEYS]
    ids, rows = [], []
    table = _table(path, USER_PROFILE)
    for chunk in table.chunks(("userid", *_PROFILE_KEYS), text=_PROFILE_KEYS,
                              chunk_rows=chunk_rows):  # fmt: skip
        ids.append(chunk.integers("userid"))
        cells = [
            chunk.frame[c].fillna("").astype(str).str.strip().to_numpy() for c in _PROFILE_KEYS
        ]
        rows.append(np.stack([code.encode(v) for code, v in zip(codes, cells, strict=True)], 1))
    return np.concatenate(ids), np.concatenate(rows).reshape(-1, len(_PROFILE_KEYS))


def read_taobao(
    raw_sample: str | os.PathLike[str],
    ad_feature: str | os.PathLike[str],
    user_profile: str | os.PathLike[str],
    *,
    max_rows: int | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> TaobaoLog:
    """Read the three files (module docstring); ``max_rows`` limits the impressions read."""
    if max_rows is not None and (isinstance(max_rows, bool) or int(max_rows) < 1):
        raise ValueError(f"max_rows must be an integer >= 1, got {max_rows!r}")
    raw = _table(raw_sample, RAW_SAMPLE)
    ad_id, ad_cate, ad_price = _ads(ad_feature, chunk_rows)
    user_id, profiles = _profiles(user_profile, chunk_rows)
    parts: dict[str, list[Any]] = {"user": [], "time_stamp": [], "adgroup": [], "clk": []}
    columns = ("user", "time_stamp", "adgroup_id", "clk")
    for chunk in raw.chunks(columns, chunk_rows=chunk_rows, max_rows=max_rows):
        clk = chunk.integers("clk")
        chunk.check("clk", clk.astype(np.float64), (clk == 0) | (clk == 1), "must be 0 or 1")
        parts["clk"].append(clk.astype(np.int8))
        parts["user"].append(_compact(chunk.integers("user")))
        parts["adgroup"].append(_compact(chunk.integers("adgroup_id")))
        parts["time_stamp"].append(chunk.integers("time_stamp"))
    if not sum(len(p) for p in parts["clk"]):
        raise ValueError(f"{raw.path}: no impressions")
    arr = {k: np.concatenate(v) for k, v in parts.items()}
    ad_row = _join(arr["adgroup"], ad_id)
    known = ad_row >= 0
    cate = _compact(np.where(known, ad_cate[ad_row], -1))
    price = np.where(known, ad_price[ad_row], math.nan)
    del ad_row, known
    return TaobaoLog(
        arr["user"], arr["time_stamp"], arr["adgroup"], arr["clk"], cate, price,
        _compact(_join(arr["user"], user_id)), profiles,
    )  # fmt: skip


def _compact(ids: IntArray) -> NDArray[Any]:
    """int32 when the ids fit (the published ids do): half the memory of the log."""
    if ids.size and -(2**31) <= ids.min() and ids.max() < 2**31:
        return ids.astype(np.int32)
    return ids


def _rates(
    keys: NDArray[Any],
    train: NDArray[np.bool_],
    clicks: NDArray[Any],
    prior: FloatArray | float,
    strength: float,
    default: FloatArray | float,
) -> FloatArray:
    """Per row: its key's ``(clicks + strength x prior) / (n + strength)`` over the ``train``
    rows (prior: per row, or one number; averaged over them), or ``default`` for a key no
    training row has."""
    code, m = _dense(keys)
    t = code[train]
    n = np.bincount(t, minlength=m).astype(np.float64)
    c = np.bincount(t, weights=clicks[train].astype(np.float64), minlength=m)
    seen = n > 0
    if isinstance(prior, float):
        p = np.full(m, prior)
    else:
        p = np.bincount(t, weights=prior[train], minlength=m) / np.where(seen, n, 1.0)
    rate = (c + strength * p) / (n + strength)
    return np.where(seen[code], rate[code], default)


def _pair(a: IntArray, b: IntArray) -> IntArray:
    """One integer key for the pairs (a, b) of codes >= -1."""
    return (a.astype(np.int64) + 1) * (int(b.max()) + 2) + (b.astype(np.int64) + 1)


def load_taobao(
    directory: str | os.PathLike[str] | None = None,
    *,
    raw_sample: str | os.PathLike[str] | None = None,
    ad_feature: str | os.PathLike[str] | None = None,
    user_profile: str | os.PathLike[str] | None = None,
    bid_scale: float = 1.0,
    split_time: int | None = None,
    prior: float = 100.0,
    max_rows: int | None = None,
    max_candidates: int | None = None,
) -> Auctions:
    """Auctions of the Taobao test impressions with counting click models (module docstring).

    ``directory`` holds ``raw_sample.csv``, ``ad_feature.csv`` and ``user_profile.csv`` (or
    name the files). Impressions before ``split_time`` (Unix seconds; default the start of the
    last UTC+8 day in the log) train the click models, the others form the auctions.
    Impressions of ads without a known price are dropped. ``max_candidates`` keeps each
    auction's top ads by ``s_server``.
    """
    names = {"raw_sample": raw_sample, "ad_feature": ad_feature, "user_profile": user_profile}
    paths: dict[str, str] = {}
    for key, given in names.items():
        if given is None:
            if directory is None:
                raise ValueError(f"give a directory or the {key} file")
            given = os.path.join(os.fspath(directory), f"{key}.csv")
        paths[key] = os.fspath(given)
    if not (isinstance(bid_scale, (int, float)) and 0 < bid_scale < math.inf):
        raise ValueError(f"bid_scale must be finite and > 0, got {bid_scale!r}")
    if not (isinstance(prior, (int, float)) and 0 < prior < math.inf):
        raise ValueError(f"prior must be finite and > 0, got {prior!r}")
    log = read_taobao(
        paths["raw_sample"], paths["ad_feature"], paths["user_profile"], max_rows=max_rows
    )
    known = np.isfinite(log.price)
    if not known.any():
        raise ValueError("no impression has an ad with a known price (ad_feature.csv)")
    if split_time is None:
        last_day = (int(log.time_stamp.max()) + _UTC8) // 86400
        split_time = last_day * 86400 - _UTC8
    train = log.time_stamp < int(split_time)
    test = ~train & known
    if not train.any() or not test.any():
        raise ValueError(
            f"split_time {split_time} leaves {int(train.sum())} training and {int(test.sum())} "
            "test impressions; both must be > 0"
        )
    server, device = _click_models(log, train, prior)
    auctions = _auctions(log, test, server, device, bid_scale, max_candidates)
    source = os.path.dirname(paths["raw_sample"]) or "."
    summary = LoadSummary(
        source, int(log.clk.size), time_range(log.time_stamp[test].astype(np.float64)),
        (("impressions before the split, which train the click models", int(train.sum())),
         ("test impressions of ads without a known price", int((~train & ~known).sum()))),
    )  # fmt: skip
    return Auctions(**{**auctions.__dict__, "loaded": summary})


def _click_models(
    log: TaobaoLog, train: NDArray[np.bool_], prior: float
) -> tuple[FloatArray, FloatArray]:
    """``pclick_server`` and ``pclick_device`` of every impression (module docstring), fitted
    on the ``train`` impressions."""
    clk = log.clk
    overall = float(clk[train].mean())
    # server: ad -> category -> overall
    cate_p = _rates(log.cate, train, clk, overall, prior, overall)
    server = _rates(log.adgroup, train, clk, cate_p, prior, cate_p)
    # device: the server rate times one lift per profile feature (its click rate in the ad's
    # category over the category's, each shrunk), times the user's own click ratio
    device = server.copy()
    for f in range(log.profiles.shape[1]):
        fc = _pair(log.profile_codes(f), log.cate)
        device *= _rates(fc, train, clk, cate_p, prior, cate_p) / cate_p
    code, m = _dense(log.user)
    u_clicks = np.bincount(code[train], weights=clk[train].astype(np.float64), minlength=m)
    u_expected = np.bincount(code[train], weights=device[train], minlength=m)
    pseudo = overall * prior  # pseudo-clicks: the ratio shrinks towards 1
    seen = np.bincount(code[train], minlength=m) > 0
    ratio = np.where(seen, (u_clicks + pseudo) / (u_expected + pseudo), 1.0)
    return server, np.minimum(1.0, device * ratio[code])


def _auctions(
    log: TaobaoLog,
    rows: NDArray[np.bool_],
    server: FloatArray,
    device: FloatArray,
    bid_scale: float,
    max_candidates: int | None,
) -> Auctions:
    """Group the selected impressions by (user, time stamp) into padded auctions."""
    idx = np.flatnonzero(rows)
    user, stamp = log.user[idx], log.time_stamp[idx]
    order = np.lexsort((idx, stamp, user))
    idx, user, stamp = idx[order], user[order], stamp[order]
    new = np.ones(idx.size, dtype=bool)
    new[1:] = (user[1:] != user[:-1]) | (stamp[1:] != stamp[:-1])
    start = np.flatnonzero(new)
    counts = np.diff(np.append(start, idx.size))
    auction = np.repeat(np.arange(start.size), counts)
    slot = np.arange(idx.size) - np.repeat(start, counts)
    r, k = start.size, int(counts.max())

    def grid(v: NDArray[Any]) -> FloatArray:
        out = np.zeros((r, k))
        out[auction, slot] = v[idx]
        return out

    present = np.zeros((r, k), dtype=bool)
    present[auction, slot] = True
    bid = grid(bid_scale * np.nan_to_num(log.price))
    reserve = float(bid_scale * np.nanmin(log.price[rows]))
    ps, pd, click = grid(server), grid(device), grid(log.clk)
    if max_candidates is not None:
        m = int(max_candidates)
        if m < 1:
            raise ValueError(f"max_candidates must be >= 1, got {max_candidates!r}")
        s = np.where(present, bid * ps, -np.inf)
        rank = np.argsort(np.argsort(-s, axis=1, kind="stable"), axis=1, kind="stable")
        present &= rank < m
    # timestamp_user, as in Fig. 9
    ids = np.char.add(np.char.add(stamp[start].astype(str), "_"), user[start].astype(str))
    return make_auctions(bid, ps, pd, reserve=reserve, present=present, click=click, auction_id=ids)
