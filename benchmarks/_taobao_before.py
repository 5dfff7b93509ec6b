"""THE PREVIOUS TAOBAO LOADER, kept only as the reference of benchmarks/bench_taobao.py (the csv-module reader
with per-row Python lookups that the library used before it read through pandas). Not part of the library.

The Alibaba/Taobao display-ads log (Tianchi 2018) as auctions, as paper 001 uses it (App. E.1).

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
"""

from __future__ import annotations

import csv
import math
import os
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.recommendation.auctions import Auctions, make_auctions

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

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class TaobaoLog:
    """The three tables as arrays: impressions, and per-impression ad and user attributes."""

    user: IntArray
    time_stamp: IntArray
    adgroup: IntArray
    clk: IntArray
    cate: IntArray  # the impression's ad's category (-1 if the ad is not in ad_feature)
    price: FloatArray  # its item price (nan if unknown)
    profile: IntArray  # (n, F): a code per profile feature of the user (-1: no profile)


def _header(path: str, row: list[str], expected: Sequence[str]) -> dict[str, int]:
    names = [h.strip() for h in row]
    missing = [c for c in expected if c not in names]
    if missing:
        raise ValueError(
            f"{path}: not the published format, missing column(s) {', '.join(missing)} "
            f"(header {','.join(names)!r}; expected {','.join(expected)})"
        )
    return {c: names.index(c) for c in expected}


def _int(path: str, line: int, name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        try:
            v = float(text)
        except ValueError:
            raise ValueError(f"{path}:{line}: {name} is not a number: {text!r}") from None
        if not v.is_integer():
            raise ValueError(f"{path}:{line}: {name} is not an integer: {text!r}") from None
        return int(v)


def _check(path: str | os.PathLike[str]) -> str:
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise ValueError(f"no such file {p!r} (the Taobao log is never downloaded)")
    return p


def read_taobao(
    raw_sample: str | os.PathLike[str],
    ad_feature: str | os.PathLike[str],
    user_profile: str | os.PathLike[str],
    *,
    max_rows: int | None = None,
) -> TaobaoLog:
    """Read the three files (module docstring); ``max_rows`` limits the impressions read."""
    rs, af, up = _check(raw_sample), _check(ad_feature), _check(user_profile)
    if max_rows is not None and (isinstance(max_rows, bool) or int(max_rows) < 1):
        raise ValueError(f"max_rows must be an integer >= 1, got {max_rows!r}")
    ads: dict[int, tuple[int, float]] = {}
    with open(af, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        col = _header(af, next(reader, []), AD_FEATURE)
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            price = float(row[col["price"]]) if row[col["price"]].strip() else math.nan
            if not (price >= 0):  # NaN or negative: unknown bid
                price = math.nan
            ads[_int(af, line, "adgroup_id", row[col["adgroup_id"]])] = (
                _int(af, line, "cate_id", row[col["cate_id"]]),
                price,
            )
    profiles: dict[int, tuple[int, ...]] = {}
    codes: list[dict[str, int]] = [{} for _ in _PROFILE_KEYS]
    with open(up, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        col = _header(up, next(reader, []), USER_PROFILE)
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            profiles[_int(up, line, "userid", row[col["userid"]])] = tuple(
                code.setdefault(row[col[c]].strip(), len(code))
                for code, c in zip(codes, _PROFILE_KEYS, strict=True)
            )
    cols = {name: array("q") for name in ("user", "time_stamp", "adgroup", "clk")}
    with open(rs, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        col = _header(rs, next(reader, []), RAW_SAMPLE)
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            if max_rows is not None and len(cols["user"]) >= int(max_rows):
                break
            clk = _int(rs, line, "clk", row[col["clk"]])
            if clk not in (0, 1):
                raise ValueError(f"{rs}:{line}: clk must be 0 or 1, got {clk}")
            cols["user"].append(_int(rs, line, "user", row[col["user"]]))
            cols["time_stamp"].append(_int(rs, line, "time_stamp", row[col["time_stamp"]]))
            cols["adgroup"].append(_int(rs, line, "adgroup_id", row[col["adgroup_id"]]))
            cols["clk"].append(clk)
    if not cols["user"]:
        raise ValueError(f"{rs}: no impressions")
    arr = {k: np.frombuffer(v, dtype=np.int64).copy() for k, v in cols.items()}
    cate = np.array([ads.get(int(a), (-1, math.nan))[0] for a in arr["adgroup"]], dtype=np.int64)
    prices = np.array([ads.get(int(a), (-1, math.nan))[1] for a in arr["adgroup"]])
    none = (-1,) * len(_PROFILE_KEYS)
    profile = np.array([profiles.get(int(u), none) for u in arr["user"]], dtype=np.int64).reshape(
        -1, len(_PROFILE_KEYS)
    )
    return TaobaoLog(
        arr["user"], arr["time_stamp"], arr["adgroup"], arr["clk"], cate, prices, profile
    )


def _smoothed(
    keys: IntArray, clicks: NDArray[Any], prior: FloatArray, strength: float
) -> dict[int, float]:
    """``(clicks + strength x prior) / (n + strength)`` per key (prior: per row, averaged)."""
    uniq, inv = np.unique(keys, return_inverse=True)
    n = np.bincount(inv).astype(np.float64)
    c = np.bincount(inv, weights=clicks.astype(np.float64))
    p = np.bincount(inv, weights=prior) / n
    rate = (c + strength * p) / (n + strength)
    return dict(zip(uniq.tolist(), rate.tolist(), strict=True))


def _lookup(table: dict[int, float], keys: IntArray, default: FloatArray) -> FloatArray:
    return np.array(
        [table.get(int(k), float(d)) for k, d in zip(keys, default, strict=True)], dtype=np.float64
    )


def _pair(a: IntArray, b: IntArray) -> IntArray:
    """One integer key for the pairs (a, b) (a dense code of the pair)."""
    _, inv = np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True)
    return inv.reshape(-1).astype(np.int64)


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
    clk = log.clk
    overall = float(clk[train].mean())
    ones = np.ones(clk.size)
    # server: ad -> category -> overall
    cate_rate = _smoothed(log.cate[train], clk[train], overall * ones[train], prior)
    cate_p = _lookup(cate_rate, log.cate, overall * ones)
    ad_rate = _smoothed(log.adgroup[train], clk[train], cate_p[train], prior)
    server = _lookup(ad_rate, log.adgroup, cate_p)
    # device: the server rate times one lift per profile feature (its click rate in the ad's
    # category over the category's, each shrunk), times the user's own click ratio
    device = server.copy()
    for f in range(log.profile.shape[1]):
        fc = _pair(log.profile[:, f], log.cate)
        feat_rate = _smoothed(fc[train], clk[train], cate_p[train], prior)
        device *= _lookup(feat_rate, fc, cate_p) / cate_p
    uniq, inv = np.unique(log.user[train], return_inverse=True)
    u_clicks = np.bincount(inv, weights=clk[train].astype(np.float64))
    u_expected = np.bincount(inv, weights=device[train])
    m = overall * prior  # pseudo-clicks: the ratio shrinks towards 1
    ratio = dict(zip(uniq.tolist(), ((u_clicks + m) / (u_expected + m)).tolist(), strict=True))
    device = np.minimum(1.0, device * _lookup(ratio, log.user, ones))
    return _auctions(log, test, server, device, bid_scale, max_candidates)


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
    key = np.stack([log.user[idx], log.time_stamp[idx]], axis=1)
    order = np.lexsort((idx, key[:, 1], key[:, 0]))
    idx, key = idx[order], key[order]
    _, start, counts = np.unique(key, axis=0, return_index=True, return_counts=True)
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
    ids = np.array([f"{t}_{u}" for u, t in key[start]])  # timestamp_user, as in Fig. 9
    return make_auctions(bid, ps, pd, reserve=reserve, present=present, click=click, auction_id=ids)
