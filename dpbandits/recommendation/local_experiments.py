"""Paper 001's offline comparison of RR, scaled SNM and clipped SNM (Figs. 3-4, App. G).

Each request runs Algorithm 2: the server keeps the candidates within the cut-off ``gamma`` of
the best public score (:func:`~dpbandits.recommendation.local.cutoff_mask`), the device picks one
with a local-DP selector, and the engagement is measured by the "direct method" of §4.1: the
mean private score (pClick_device) of the chosen candidates, i.e. the expected click-through
rate. Two references bracket it: the *non-personalised* baseline (greedy on the public scores)
and the *non-private greedy limit* (greedy on the private scores of all candidates).

Reported per cell: ``ctr`` and its standard error over requests, ``lift`` against the
non-personalised baseline (``ctr / ctr_np - 1``, the y-axis of Figs. 3-4), ``lift_vs_greedy``
against the non-private limit (``ctr / ctr_greedy - 1``, as Fig. 2 measures lifts against the
eps = inf setting) and ``gap_closed``, the fraction ``(ctr - ctr_np) / (ctr_greedy - ctr_np)``
of the way to the greedy limit.
All mechanisms of one table see the same requests (common random numbers). A sweep's cells
-- the device's selector and the labels of its row -- are built, and checked before any work,
by :func:`epsilon_sweep_cells` and :func:`gamma_sweep_cells`; the auction sweeps of
:mod:`dpbandits.recommendation.auctions` run the same cells.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from dpbandits import selectors as _selectors
from dpbandits.core import checks
from dpbandits.recommendation.local import Clipped, Scaled, cutoff_mask, select_among
from dpbandits.recommendation.synthetic import Requests, generate_requests
from dpbandits.selectors.base import RNGLike, Selector

__all__ = [
    "MECHANISMS",
    "appg_grid",
    "baselines",
    "SweepCell",
    "epsilon_sweep",
    "epsilon_sweep_cells",
    "gamma_sweep",
    "gamma_sweep_cells",
    "local_selector",
    "mechanism_ctr",
    "winners",
]

#: Mechanism names of the experiments: randomised response (Eq. 2), select-noisy-max on scaled
#: (Eq. 3) and on clipped (Eq. 4) private scores.
MECHANISMS = ("rr", "snm_scaled", "snm_clipped")


def local_selector(
    mechanism: str, epsilon: float, *, noise: str = "exponential", bound: float = 0.25
) -> Selector:
    """The device's selector for ``mechanism`` at ``epsilon`` (``bound`` = Δ/2 for clipping)."""
    checks.one_of(mechanism, MECHANISMS, "mechanism")
    if mechanism == "rr":
        return _selectors.make("krr", epsilon=epsilon)
    if mechanism == "snm_scaled":
        return Scaled(_selectors.make("rnm", epsilon=epsilon, noise=noise))
    return Clipped(_selectors.make("rnm", epsilon=epsilon, noise=noise), bound=bound)


def check_epsilon_sweep(
    epsilons: Iterable[float],
    mechanisms: Sequence[str],
    bounds: Sequence[float],
    gamma: float,
    noise: str,
) -> list[float]:
    """The eps grid of an eps sweep, every mechanism, clipping bound and the cut-off checked
    before any work (a bad cell raises here, not after the first rows are computed)."""
    eps_list = [checks.positive_number(e, "epsilon") for e in epsilons]
    for mech in mechanisms:
        for bd in bounds:
            local_selector(mech, 1.0, noise=noise, bound=bd)
    cutoff_mask(np.zeros(1), gamma)
    return eps_list


def check_gamma_sweep(
    gammas: Iterable[float], mechanisms: Sequence[str], epsilon: float, bound: float, noise: str
) -> list[float]:
    """The cut-off grid of a gamma sweep, each cut-off and mechanism checked before any work."""
    g_list = list(gammas)
    for g in g_list:
        cutoff_mask(np.zeros(1), g)
    for mech in mechanisms:
        local_selector(mech, epsilon, noise=noise, bound=bound)
    return g_list


def epsilon_cells(
    eps_list: Sequence[float], mechanisms: Sequence[str], bounds: Sequence[float]
) -> Iterator[tuple[float, str, float | None]]:
    """The cells ``(eps, mechanism, bound)`` of an eps sweep, in row order: clipped SNM once per
    clipping bound, the other mechanisms once (bound ``None``: they clip nothing)."""
    for eps in eps_list:
        for mech in mechanisms:
            cells: Sequence[float | None] = bounds if mech == "snm_clipped" else (None,)
            for cell in cells:
                yield eps, mech, cell


class SweepCell(NamedTuple):
    """One cell of a sweep: the device's selector and the labels of its row."""

    selector: Selector
    mechanism: str
    epsilon: float
    gamma: float
    bound: float  # NaN for the mechanisms that clip nothing


def epsilon_sweep_cells(
    epsilons: Iterable[float],
    mechanisms: Sequence[str],
    bounds: Sequence[float],
    gamma: float,
    noise: str,
) -> list[SweepCell]:
    """The cells of an eps sweep (Fig. 3) in row order, all checked before any work."""
    eps_list = check_epsilon_sweep(epsilons, mechanisms, bounds, gamma, noise)
    return [
        # the bound of a mechanism that clips nothing is unused
        SweepCell(local_selector(mech, eps, noise=noise, bound=0.25 if b is None else b),
                  mech, float(eps), gamma, math.nan if b is None else float(b))
        for eps, mech, b in epsilon_cells(eps_list, mechanisms, bounds)
    ]  # fmt: skip


def gamma_sweep_cells(
    gammas: Iterable[float], mechanisms: Sequence[str], epsilon: float, bound: float, noise: str
) -> list[SweepCell]:
    """The cells of a cut-off sweep (Fig. 4) in row order, all checked before any work."""
    g_list = check_gamma_sweep(gammas, mechanisms, epsilon, bound, noise)
    return [
        SweepCell(local_selector(mech, epsilon, noise=noise, bound=bound), mech, float(epsilon),
                  float(g), bound if mech == "snm_clipped" else math.nan)
        for g in g_list
        for mech in mechanisms
    ]  # fmt: skip


def _greedy(scores: np.ndarray, eligible: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return select_among(_selectors.make("greedy"), scores, eligible, rng)


def _chosen(req: Requests, idx: np.ndarray) -> np.ndarray:
    return req.private[np.arange(req.n), idx]


def baselines(req: Requests, rng: RNGLike = None) -> dict[str, float]:
    """CTR of the non-personalised baseline (greedy on public) and the greedy limit."""
    gen = np.random.default_rng(rng)
    ctr_np = float(_chosen(req, _greedy(req.public, req.eligible, gen)).mean())
    ctr_greedy = float(_chosen(req, _greedy(req.private, req.eligible, gen)).mean())
    return {"ctr_nonpersonalised": ctr_np, "ctr_greedy": ctr_greedy}


def mechanism_ctr(
    req: Requests, selector: Selector, gamma: float = 1.0, rng: RNGLike = None
) -> tuple[float, float]:
    """Mean private score of the candidates ``selector`` picks after the cut-off, and its s.e."""
    keep = cutoff_mask(req.public, gamma, req.eligible)
    idx = select_among(selector, req.private, keep, rng, public=req.public)
    v = _chosen(req, idx)
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else float("nan")
    return float(v.mean()), se


def _row(base: dict[str, float], ctr: float, se: float, **cell: Any) -> dict[str, Any]:
    np_, gr = base["ctr_nonpersonalised"], base["ctr_greedy"]
    gap = gr - np_
    return {
        **cell,
        "ctr": ctr,
        "se": se,
        "lift": ctr / np_ - 1.0 if np_ > 0 else float("nan"),
        "gap_closed": (ctr - np_) / gap if gap > 0 else float("nan"),
        "lift_vs_greedy": ctr / gr - 1.0 if gr > 0 else float("nan"),
        **base,
    }


def _ctr_rows(
    req: Requests, cells: Sequence[SweepCell], rng: RNGLike, mean_candidates: bool = False
) -> list[dict[str, Any]]:
    """One row per cell on the same requests, after the baselines (drawn first from ``rng``);
    ``mean_candidates``: also the mean number of candidates within the cell's cut-off."""
    gen = np.random.default_rng(rng)
    base = baselines(req, gen)
    rows = []
    for c in cells:
        ctr, se = mechanism_ctr(req, c.selector, c.gamma, gen)
        cell: dict[str, Any] = dict(
            mechanism=c.mechanism, epsilon=c.epsilon, gamma=c.gamma, bound=c.bound
        )
        if mean_candidates:
            keep = cutoff_mask(req.public, c.gamma, req.eligible)
            cell["mean_candidates"] = float(keep.sum(axis=1).mean())
        rows.append(_row(base, ctr, se, **cell))
    return rows


def epsilon_sweep(
    req: Requests,
    epsilons: Iterable[float],
    *,
    mechanisms: Sequence[str] = MECHANISMS,
    bounds: Sequence[float] = (0.25,),
    gamma: float = 1.0,
    noise: str = "exponential",
    rng: RNGLike = None,
) -> list[dict[str, Any]]:
    """Fig. 3: CTR of each mechanism against eps (clipped SNM once per clipping bound)."""
    return _ctr_rows(req, epsilon_sweep_cells(epsilons, mechanisms, bounds, gamma, noise), rng)


def gamma_sweep(
    req: Requests,
    gammas: Iterable[float],
    *,
    mechanisms: Sequence[str] = ("rr",),
    epsilon: float = 5.0,
    bound: float = 0.25,
    noise: str = "exponential",
    rng: RNGLike = None,
) -> list[dict[str, Any]]:
    """Fig. 4: CTR against the cut-off gamma (the paper uses RR at eps = 5)."""
    cells = gamma_sweep_cells(gammas, mechanisms, epsilon, bound, noise)
    return _ctr_rows(req, cells, rng, mean_candidates=True)


def appg_grid(
    *,
    n_requests: int,
    n_candidates: Sequence[int],
    extremeness: Sequence[float],
    informativeness: Sequence[float],
    epsilons: Sequence[float],
    mechanisms: Sequence[str] = MECHANISMS,
    bound: float = 0.25,
    mean: float = 0.5,
    noise: str = "exponential",
    rng: RNGLike = None,
) -> list[dict[str, Any]]:
    """App. G: which mechanism wins as the three knobs and eps vary (one row per cell)."""
    gen = np.random.default_rng(rng)
    rows = []
    for k in n_candidates:
        for e in extremeness:
            for rho in informativeness:
                req = generate_requests(
                    n_requests,
                    n_candidates=k,
                    extremeness=e,
                    informativeness=rho,
                    mean=mean,
                    rng=gen,
                )
                for row in epsilon_sweep(
                    req, epsilons, mechanisms=mechanisms, bounds=(bound,), noise=noise, rng=gen
                ):
                    row.update(n_candidates=k, extremeness=e, informativeness=rho)
                    rows.append(row)
    return rows


def winners(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """The best mechanism (highest CTR) per cell of ``keys``, its margin over the runner-up and
    whether that margin exceeds two standard errors (``decisive``)."""
    cells: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        cells.setdefault(tuple(r[k] for k in keys), []).append(r)
    out = []
    for key, rs in cells.items():
        rs = sorted(rs, key=lambda r: -r["ctr"])
        margin = rs[0]["ctr"] - rs[1]["ctr"] if len(rs) > 1 else float("nan")
        se = math.hypot(rs[0]["se"], rs[1]["se"]) if len(rs) > 1 else float("nan")
        out.append(
            {
                **dict(zip(keys, key, strict=True)),
                "winner": rs[0]["mechanism"],
                "runner_up": rs[1]["mechanism"] if len(rs) > 1 else "",
                "margin": margin,
                "margin_se": se,
                # a margin within 2 standard errors is not a win
                "decisive": bool(margin > 2 * se) if len(rs) > 1 else True,
            }
        )
    return out
