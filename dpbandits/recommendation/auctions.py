"""Second-price ad auctions with private selection: paper 001's revenue, surplus and CTR (§4).

Each auction has ``K`` candidate ads (padded; ``eligible`` marks the real ones) with a click bid
``bid``, a server click model ``pclick_server`` (no user data) and a device click model
``pclick_device`` (with the private user data). Scores are effective bids per impression,
``s_server = bid x pclick_server`` and ``s_device = bid x pclick_device`` (§4.1).

Pricing (§4.1, App. A): rank the eligible candidates by a score, ties broken by column order.
The default is per click, as the paper's auctions are (bid per click, App. E.2); §4.1 writes the
per-impression price, and RQ1's result holds only per click (docs/recommendation.md).
Paid per impression (``payment="impression"``, §4.1), the candidate at rank ``r`` pays the score
at rank ``r + 1``, ``bid_{r+1} x pclick_{r+1}``; paid per click (``payment="click"``, App. A,
the format of the paper's internal auctions), it pays ``bid_{r+1} x pclick_{r+1} / pclick_r`` on
each click. The last-ranked candidate pays the per-click reserve (times its own pClick per
impression). Ads bidding below the reserve are not eligible (App. A). Paper 001 prices with the
server's ranking (``pricing="server"``: no private data in the price, App. A.3); RQ1 compares
it with the full-information price (``"device"``: the device's ranking and pClick) and with an
uninformed model that predicts the global average CTR for every ad (``"naive"``: the ranking is
by bid and the price ``bid_{r+1} x CTR_avg``).

Metrics (§4.1, per auction; reported as means over auctions): with ``j`` the ad shown and
``p_j`` its price,

- CTR: ``c_j``, where ``c`` is ``pclick_device`` (the "direct method") or the logged click
  (``outcome="click"``, as the paper does on Taobao);
- advertiser surplus: ``bid_j x c_j - p_j`` (bids are truthful click values);
- platform revenue: ``p_j``;

where ``p_j`` is the impression price, or ``c_j`` times the click price.

The system of Algorithm 2: the server prices every eligible candidate from public data, keeps
those with ``s_server >= (1 - gamma) max s_server`` (:func:`~dpbandits.recommendation.local.
cutoff_mask`), the device shows one of them chosen by a local-DP selector on ``s_device``
(RR, scaled or clipped SNM: :func:`~dpbandits.recommendation.local_experiments.local_selector`;
the clipping bound is in score units, ``bid x pClick``) and the shown ad pays its server price.
Figures: RQ1 (:func:`pricing_comparison`, Figs. 2 and 6), the eps sweeps with their clipping
bounds (:func:`auction_epsilon_sweep`, Figs. 3 and 7) and the cut-off (:func:`auction_gamma_sweep`,
Figs. 4 and 8). Data: :func:`synthetic_auctions`,
:func:`~dpbandits.recommendation.auction_files.load_auctions` (your per-auction arrays, CSV or
Parquet) and :func:`dpbandits.recommendation.taobao.load_taobao` (docs/
recommendation.md, "Auctions").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import selectors as _selectors
from dpbandits.core import checks
from dpbandits.core.arrays import BoolArray, FloatArray, IntArray
from dpbandits.recommendation.local import cutoff_mask, select_among
from dpbandits.recommendation.local_experiments import (
    MECHANISMS,
    SweepCell,
    epsilon_sweep_cells,
    gamma_sweep_cells,
)
from dpbandits.recommendation.synthetic import generate_requests
from dpbandits.selectors.base import RNGLike, Selector

__all__ = [
    "candidate_ranks",
    "PAYMENTS",
    "PRICINGS",
    "Auctions",
    "LoadSummary",
    "auction_epsilon_sweep",
    "auction_gamma_sweep",
    "auction_metrics",
    "auction_prices",
    "make_auctions",
    "pricing_comparison",
    "second_prices",
    "synthetic_auctions",
]


#: Pricing rules of RQ1 (module docstring).
PRICINGS = ("server", "device", "naive")
#: What the advertiser pays for (module docstring).
PAYMENTS = ("impression", "click")

@dataclass(frozen=True)
class LoadSummary:
    """What a loader read (:func:`~dpbandits.recommendation.auction_files.load_auctions`,
    :func:`~dpbandits.recommendation.taobao.load_taobao`): the file, its data rows, the period
    the rows cover (first and last time, text) and what was left out, ``(reason, count)``."""

    source: str
    rows: int
    time_range: tuple[str, str] | None = None
    dropped: tuple[tuple[str, int], ...] = ()

    def text(self, auctions: Auctions) -> str:
        """One paragraph: auctions, candidates, logged clicks, dates, what was dropped."""
        k = auctions.n_candidates
        parts = [
            f"loaded {self.source}: {self.rows:,} rows -> {auctions.n:,} auctions, "
            f"{k.mean():.2f} candidates on average ({k.min()}-{k.max()})"
        ]
        if auctions.click is None:
            parts.append("no logged clicks")
        else:
            c = auctions.click[auctions.eligible]
            logged = ~np.isnan(c)
            parts.append(f"{int(np.nansum(c)):,} clicks logged on {int(logged.sum()):,} shown ads")
            unlogged = auctions.n - int(auctions.click_logged.sum())
            if unlogged:
                parts.append(f"{unlogged:,} auctions have candidates never shown (no logged click)")
        if self.time_range is not None:
            parts.append(f"from {self.time_range[0]} to {self.time_range[1]}")
        parts += [f"dropped {n:,} {why}" for why, n in self.dropped if n]
        return "; ".join(parts)


@dataclass(frozen=True)
class Auctions:
    """A batch of single-slot auctions, candidates padded to ``K`` columns (module docstring).

    ``bid``, ``pclick_server``, ``pclick_device`` have shape ``(R, K)`` (0 in padding);
    ``eligible`` marks the real candidates that bid at least the reserve; ``reserve`` is the
    per-click reserve of each auction, shape ``(R,)``; ``click`` the logged 0/1 clicks (NaN for
    a candidate the log never showed, whose click is unknown; or None); ``auction_id`` one id
    per auction; ``loaded`` what the loader read (:class:`LoadSummary`; None when built here).
    """

    bid: FloatArray
    pclick_server: FloatArray
    pclick_device: FloatArray
    eligible: BoolArray
    reserve: FloatArray
    click: FloatArray | None = None
    auction_id: NDArray[Any] | None = None
    loaded: LoadSummary | None = field(default=None, compare=False)

    @property
    def n(self) -> int:
        return int(self.bid.shape[0])

    @property
    def s_server(self) -> FloatArray:
        """Public scores ``bid x pclick_server`` (0 where not eligible)."""
        return np.where(self.eligible, self.bid * self.pclick_server, 0.0)

    @property
    def s_device(self) -> FloatArray:
        """Private scores ``bid x pclick_device`` (0 where not eligible)."""
        return np.where(self.eligible, self.bid * self.pclick_device, 0.0)

    @property
    def n_candidates(self) -> IntArray:
        return self.eligible.sum(axis=1).astype(np.int64)

    @property
    def click_logged(self) -> BoolArray:
        """Per auction: every candidate has a logged click (all False without clicks)."""
        if self.click is None:
            return np.zeros(self.n, dtype=bool)
        return ~np.any(self.eligible & np.isnan(self.click), axis=1)

    def subset(self, rows: NDArray[np.int64] | NDArray[np.bool_] | slice) -> Auctions:
        return Auctions(
            self.bid[rows],
            self.pclick_server[rows],
            self.pclick_device[rows],
            self.eligible[rows],
            self.reserve[rows],
            None if self.click is None else self.click[rows],
            None if self.auction_id is None else self.auction_id[rows],
            self.loaded,
        )


def make_auctions(
    bid: ArrayLike,
    pclick_server: ArrayLike,
    pclick_device: ArrayLike,
    *,
    reserve: ArrayLike | float = 0.0,
    present: ArrayLike | None = None,
    click: ArrayLike | None = None,
    auction_id: ArrayLike | None = None,
) -> Auctions:
    """Validated :class:`Auctions` from ``(R, K)`` arrays (``present`` marks the real
    candidates; default all). Ads bidding below their auction's reserve are made ineligible.
    Auctions left without an eligible ad are dropped (they show nothing and pay nothing).
    ``click`` holds 0/1, or NaN for a candidate the log never showed (its click is unknown)."""
    b = checks.real_array(bid, "bid")
    if b.ndim != 2 or b.shape[1] < 1:
        raise ValueError(f"bid must have shape (R, K) with K >= 1, got {b.shape}")
    shape = b.shape
    arrays = {}
    for name, arr in (("pclick_server", pclick_server), ("pclick_device", pclick_device)):
        a = checks.real_array(arr, name)
        if a.shape != shape:
            raise ValueError(f"{name} has shape {a.shape}, bid has {shape}")
        arrays[name] = a
    mask = np.ones(shape, dtype=bool) if present is None else np.asarray(present)
    if mask.dtype != np.bool_ or mask.shape != shape:
        raise ValueError(f"present must be a boolean array of shape {shape}")
    for name, a in (("bid", b), *arrays.items()):
        bad = mask & (a < 0)
        if name != "bid":
            bad |= mask & (a > 1)
        if bad.any():
            i, j = (int(v) for v in np.argwhere(bad)[0])
            rng = "[0, 1]" if name != "bid" else ">= 0"
            raise ValueError(f"{name}[{i}, {j}] = {a[i, j]!r} must be {rng}")
    res = np.broadcast_to(checks.real_array(reserve, "reserve"), (shape[0],)).astype(np.float64)
    if np.any(res < 0):
        raise ValueError("reserve must be >= 0")
    clk = None
    if click is not None:
        clk = np.asarray(click, dtype=np.float64)
        if clk.shape != shape or np.any(mask & (clk != 0) & (clk != 1) & ~np.isnan(clk)):
            raise ValueError(f"click must be 0/1 (NaN: not logged) with shape {shape}")
    eligible = mask & (b >= res[:, None])
    keep = eligible.any(axis=1)
    ids = None if auction_id is None else np.asarray(auction_id)
    if ids is not None and ids.shape != (shape[0],):
        raise ValueError(f"auction_id must have shape ({shape[0]},), got {ids.shape}")
    zero = np.where(eligible, 1.0, 0.0)
    out = Auctions(
        b * zero,
        arrays["pclick_server"] * zero,
        arrays["pclick_device"] * zero,
        eligible,
        res,
        None if clk is None else np.where(eligible, clk, 0.0),
        ids,
    )
    return out if keep.all() else out.subset(np.flatnonzero(keep))


def candidate_ranks(scores: FloatArray, eligible: BoolArray) -> tuple[IntArray, IntArray]:
    """Per row: candidate columns by decreasing score (ineligible last; ties by column) and
    each column's rank (0-based)."""
    key = np.where(eligible, -scores, np.inf)
    order = np.argsort(key, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(scores.shape[1])[None, :], axis=1)
    return order, rank


def second_prices(
    scores: ArrayLike,
    pclick: ArrayLike,
    eligible: ArrayLike,
    reserve: ArrayLike,
    payment: str = "impression",
) -> FloatArray:
    """The price of every candidate if it were shown, shape ``(R, K)``: per impression or per
    click (``payment``).

    Candidates are ranked by ``scores`` (``bid x pclick``) among the ``eligible`` ones, ties by
    column. Per impression the one at rank ``r`` pays the score at rank ``r + 1`` and the
    last-ranked ``reserve x pclick`` of itself; per click they pay these divided by their own
    ``pclick`` (App. A), i.e. the last one pays ``reserve``. Padding gets 0.
    """
    checks.one_of(payment, PAYMENTS, "payment")
    s = checks.real_array(scores, "scores")
    pc = checks.real_array(pclick, "pclick")
    el = np.asarray(eligible, dtype=bool)
    res = np.broadcast_to(np.asarray(reserve, dtype=np.float64).reshape(-1, 1), s.shape)
    order, rank = candidate_ranks(s, el)
    sorted_s = np.take_along_axis(s, order, axis=1)
    n_el = el.sum(axis=1, keepdims=True)
    nxt = np.concatenate([sorted_s[:, 1:], np.zeros((s.shape[0], 1))], axis=1)
    price_by_rank = np.where(np.arange(s.shape[1])[None, :] + 1 < n_el, nxt, np.nan)
    per_imp = np.take_along_axis(price_by_rank, rank, axis=1)
    last = np.isnan(per_imp)
    if payment == "impression":
        price = np.where(last, res * pc, per_imp)
    else:
        # a zero pClick never wins a click: its per-click price is moot (0 here)
        ratio = np.divide(per_imp, pc, out=np.zeros_like(pc), where=~last & (pc > 0))
        price = np.where(last, res, ratio)
    return np.where(el, price, 0.0)


def auction_prices(
    auctions: Auctions, pricing: str = "server", payment: str = "impression"
) -> FloatArray:
    """Each candidate's price under a pricing rule of :data:`PRICINGS` (module docstring)."""
    a = auctions
    checks.one_of(pricing, PRICINGS, "pricing")
    if pricing == "server":
        return second_prices(a.s_server, a.pclick_server, a.eligible, a.reserve, payment)
    if pricing == "device":
        return second_prices(a.s_device, a.pclick_device, a.eligible, a.reserve, payment)
    # "naive"
    ctr = float(a.pclick_device[a.eligible].mean())
    naive = np.where(a.eligible, ctr, 0.0)
    return second_prices(a.bid * naive, naive, a.eligible, a.reserve, payment)


def _outcome(auctions: Auctions, outcome: str) -> FloatArray:
    if outcome == "pclick_device":
        return auctions.pclick_device
    if outcome == "click":
        if auctions.click is None:
            raise ValueError("outcome='click' needs logged clicks (Auctions.click)")
        unlogged = auctions.n - int(auctions.click_logged.sum())
        if unlogged:  # a selection could land on an ad whose click nobody observed
            raise ValueError(
                f"outcome='click': {unlogged} of {auctions.n} auctions have candidates the log "
                "never showed (no logged click); keep the others with "
                "auctions.subset(auctions.click_logged), or use outcome='pclick_device'"
            )
        return auctions.click
    raise ValueError(f"outcome must be 'pclick_device' or 'click', got {outcome!r}")


def auction_metrics(
    auctions: Auctions,
    chosen: ArrayLike,
    prices: ArrayLike,
    outcome: str = "pclick_device",
    payment: str = "impression",
) -> dict[str, float]:
    """Mean CTR, advertiser surplus and platform revenue per auction (§4.1), with standard
    errors, for the ads ``chosen`` (one column per auction) at ``prices`` (``(R, K)``, per
    impression or per click as ``payment`` says)."""
    checks.one_of(payment, PAYMENTS, "payment")
    idx = np.asarray(chosen, dtype=np.int64).reshape(-1)
    if idx.shape != (auctions.n,):
        raise ValueError(f"chosen must have one entry per auction ({auctions.n}), got {idx.shape}")
    rows = np.arange(auctions.n)
    if not np.all(auctions.eligible[rows, idx]):
        raise ValueError("chosen includes an ad that is not eligible in its auction")
    c = _outcome(auctions, outcome)[rows, idx]
    p = np.asarray(prices, dtype=np.float64)[rows, idx]
    if payment == "click":
        p = c * p
    per = {"ctr": c, "surplus": auctions.bid[rows, idx] * c - p, "revenue": p}
    out: dict[str, float] = {}
    for key, v in per.items():
        out[key] = float(v.mean())
        out[f"{key}_se"] = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
    return out


def _greedy(scores: FloatArray, eligible: BoolArray, rng: np.random.Generator) -> IntArray:
    return select_among(_selectors.make("greedy"), scores, eligible, rng)


def pricing_comparison(
    auctions: Auctions,
    outcome: str = "pclick_device",
    payment: str = "click",
    rng: RNGLike = None,
) -> list[dict[str, Any]]:
    """RQ1 (Figs. 2 and 6): greedy selection on ``s_device`` with every candidate (gamma = 1,
    so CTR does not move), priced with each rule of :data:`PRICINGS`; ``*_lift`` is relative
    to the full-information price (``"device"``, the eps = inf setting of Fig. 2). The default
    ``payment="click"`` is the format of the paper's auctions (bid per click, App. E.2); paid
    per impression the effect changes sign (docs/recommendation.md, "RQ1")."""
    gen = np.random.default_rng(rng)
    chosen = _greedy(auctions.s_device, auctions.eligible, gen)
    rows: list[dict[str, Any]] = [
        {
            "pricing": pr,
            "payment": payment,
            **auction_metrics(
                auctions, chosen, auction_prices(auctions, pr, payment), outcome, payment
            ),
        }
        for pr in ("device", "server", "naive")
    ]
    ref = rows[0]
    for r in rows:
        for key in ("ctr", "surplus", "revenue"):
            r[f"{key}_lift"] = _lift(r[key], ref[key])
    return rows


def _lift(value: float, ref: float) -> float:
    return value / ref - 1.0 if ref != 0 else math.nan


def _baselines(
    auctions: Auctions,
    prices: FloatArray,
    outcome: str,
    payment: str,
    gen: np.random.Generator,
) -> dict[str, dict[str, float]]:
    """Non-personalised (greedy on public scores) and non-private greedy on private scores,
    both at the server price."""
    npz = _greedy(auctions.s_server, auctions.eligible, gen)
    gr = _greedy(auctions.s_device, auctions.eligible, gen)
    return {
        "nonpersonalised": auction_metrics(auctions, npz, prices, outcome, payment),
        "greedy": auction_metrics(auctions, gr, prices, outcome, payment),
    }


def _server_priced(
    auctions: Auctions, outcome: str, payment: str, rng: RNGLike
) -> tuple[np.random.Generator, FloatArray, dict[str, dict[str, float]]]:
    """What every system row of a sweep shares: the outcome checked, the generator, the server
    prices and the two baselines at them (drawn first from the generator)."""
    _outcome(auctions, outcome)
    gen = np.random.default_rng(rng)
    prices = auction_prices(auctions, "server", payment)
    return gen, prices, _baselines(auctions, prices, outcome, payment, gen)


def _system_row(
    auctions: Auctions,
    selector: Selector,
    gamma: float,
    prices: FloatArray,
    outcome: str,
    payment: str,
    base: dict[str, dict[str, float]],
    gen: np.random.Generator,
    **cell: Any,
) -> dict[str, Any]:
    keep = cutoff_mask(auctions.s_server, gamma, auctions.eligible)
    idx = select_among(selector, auctions.s_device, keep, gen, public=auctions.s_server)
    m = auction_metrics(auctions, idx, prices, outcome, payment)
    row: dict[str, Any] = {**cell, "gamma": float(gamma), "payment": payment, **m}
    row["mean_candidates"] = float(keep.sum(axis=1).mean())
    for key in ("ctr", "surplus", "revenue"):
        row[f"{key}_lift"] = _lift(m[key], base["nonpersonalised"][key])
        row[f"{key}_nonpersonalised"] = base["nonpersonalised"][key]
        row[f"{key}_greedy"] = base["greedy"][key]
    return row


def _system_rows(
    auctions: Auctions, cells: Sequence[SweepCell], outcome: str, payment: str, rng: RNGLike
) -> list[dict[str, Any]]:
    """One system row per cell of a sweep, at the server's prices (:func:`_server_priced`)."""
    gen, prices, base = _server_priced(auctions, outcome, payment, rng)
    return [
        _system_row(auctions, c.selector, c.gamma, prices, outcome, payment, base, gen,
                    mechanism=c.mechanism, epsilon=c.epsilon, bound=c.bound)
        for c in cells
    ]  # fmt: skip


def auction_epsilon_sweep(
    auctions: Auctions,
    epsilons: Iterable[float],
    *,
    mechanisms: Sequence[str] = MECHANISMS,
    bounds: Sequence[float] = (0.01,),
    gamma: float = 1.0,
    noise: str = "exponential",
    outcome: str = "pclick_device",
    payment: str = "click",
    rng: RNGLike = None,
) -> list[dict[str, Any]]:
    """Figs. 3 and 7: CTR, surplus and revenue of each mechanism against eps (clipped SNM once
    per clipping bound ``Δ/2``, in score units -- panels d-f), server pricing; ``*_lift`` is
    relative to the non-personalised baseline (the y-axes of Fig. 3)."""
    cells = epsilon_sweep_cells(epsilons, mechanisms, bounds, gamma, noise)
    return _system_rows(auctions, cells, outcome, payment, rng)


def auction_gamma_sweep(
    auctions: Auctions,
    gammas: Iterable[float],
    *,
    mechanisms: Sequence[str] = ("rr",),
    epsilon: float = 5.0,
    bound: float = 0.01,
    noise: str = "exponential",
    outcome: str = "pclick_device",
    payment: str = "click",
    rng: RNGLike = None,
) -> list[dict[str, Any]]:
    """Figs. 4 and 8: CTR, surplus and revenue against the cut-off gamma (the paper: RR at
    eps = 5), server pricing, lifts relative to the non-personalised baseline."""
    cells = gamma_sweep_cells(gammas, mechanisms, epsilon, bound, noise)
    return _system_rows(auctions, cells, outcome, payment, rng)


def synthetic_auctions(
    n: int,
    *,
    n_candidates: int | tuple[int, int] = 10,
    extremeness: float = 0.1,
    informativeness: float = 0.7,
    mean_ctr: float = 0.05,
    bid_sigma: float = 0.5,
    reserve: float = 0.0,
    rng: RNGLike = None,
) -> Auctions:
    """``n`` synthetic auctions: pClicks from :func:`~dpbandits.recommendation.synthetic.
    generate_requests` (the App. G knobs; ``pclick_device`` has mean ``mean_ctr`` and variance
    ``extremeness x mean_ctr (1 - mean_ctr)``, ``pclick_server`` is its calibrated conditional
    mean given the public effects) and log-normal click bids ``exp(N(0, bid_sigma^2))``,
    independent of the pClicks. Ads bidding below ``reserve`` are not eligible."""
    gen = np.random.default_rng(rng)
    req = generate_requests(
        n,
        n_candidates=n_candidates,
        extremeness=extremeness,
        informativeness=informativeness,
        mean=mean_ctr,
        rng=gen,
    )
    sigma = checks.number(bid_sigma, "bid_sigma")
    if sigma < 0:
        raise ValueError(f"bid_sigma must be >= 0, got {bid_sigma!r}")
    bid = np.exp(sigma * gen.standard_normal(req.private.shape))
    return make_auctions(
        np.where(req.eligible, bid, 0.0),
        req.public,
        req.private,
        reserve=reserve,
        present=req.eligible,
        auction_id=np.arange(n),
    )
