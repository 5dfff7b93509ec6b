"""Empirical privacy audit of a top-k mechanism on neighbouring score vectors.

Top-k outputs are sets or rankings, so the audit counts *events* of the output:

- ``events="outcome"``: each possible output (a k-set in index order for set mechanisms, a
  k-sequence for ranking mechanisms) -- the singletons, the worst events for a finite output
  space; the number of possible outcomes must be at most :data:`MAX_OUTCOMES`;
- ``events="membership"``: the d events "item a is selected" (any d, any mechanism).

For each event the probabilities under ``q`` and ``q'`` get exact one-sided Clopper-Pearson
bounds (:func:`dpbandits.audit.selector.clopper_pearson`), Bonferroni-corrected over the ``4 m``
bounds
of the ``m`` possible events (fixed before drawing), exactly as :mod:`dpbandits.audit.selector` does
for
single-item selectors. ``loss_lower`` is a ``1 - alpha`` lower confidence bound on
``max_event |log P[event | q] - log P[event | q']|``; the audit passes when it is at most eps.
A correct eps-DP mechanism fails with probability at most ``alpha``.

:data:`HARD_TOPK_PAIRS` holds neighbouring pairs (every score moves by at most the sensitivity
1) used by the tests, among them one on which Algorithm 2 of paper 002 as printed loses
``1.60 > eps = 1`` (see :mod:`dpbandits.topk.lipschitz`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpbandits.audit.selector import clopper_pearson
from dpbandits.selectors.base import RNGLike
from dpbandits.topk import TopKSelector, check_k, make

__all__ = ["HARD_TOPK_PAIRS", "MAX_OUTCOMES", "TopKAuditResult", "TopKPair", "audit_topk"]

#: Largest outcome space audited outcome by outcome.
MAX_OUTCOMES = 5000


@dataclass(frozen=True)
class TopKPair:
    """Neighbouring score vectors (``|q - q'| <= sensitivity`` entrywise) and a k."""

    name: str
    q: tuple[float, ...]
    q_prime: tuple[float, ...]
    k: int
    source: str = ""


HARD_TOPK_PAIRS: dict[str, TopKPair] = {
    p.name: p
    for p in (
        TopKPair(
            "ties4",
            (2.0, 2.0, 1.0, 2.0, 2.0),
            (2.0, 2.0, 1.0, 1.0, 3.0),
            4,
            "Algorithm 2 of paper 002 as printed loses 1.60 at eps = 1 on this pair",
        ),
        TopKPair(
            "spread",
            (0.0, 0.0, 0.0, 0.0),
            (1.0, 1.0, -1.0, -1.0),
            2,
            "flat scores vs. two up and two down by a full sensitivity",
        ),
        TopKPair(
            "swap",
            (1.0, 1.0, 0.0, 0.0, 0.0),
            (0.0, 0.0, 1.0, 1.0, 0.0),
            2,
            "the true top-2 swaps with the next two",
        ),
    )
}


@dataclass
class TopKAuditResult:
    """Outcome of :func:`audit_topk`."""

    mechanism: str
    pair: str
    epsilon: float
    events: str
    draws: int
    alpha: float
    labels: list[tuple[int, ...]]
    counts: NDArray[np.int64]
    counts_prime: NDArray[np.int64]
    loss: float
    loss_lower: float
    loss_upper: float

    @property
    def passed(self) -> bool:
        """True when the data are consistent with eps-DP (``loss_lower <= epsilon``)."""
        return self.loss_lower <= self.epsilon

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (
            f"{self.mechanism} on {self.pair} ({self.events}): loss {self.loss:.4g} "
            f"(lower bound {self.loss_lower:.4g}) vs eps {self.epsilon:g}: {verdict}"
        )


def _n_outcomes(d: int, k: int, ordered: bool) -> int:
    return math.perm(d, k) if ordered else math.comb(d, k)


def _draw(
    sel: TopKSelector, q: NDArray[np.float64], k: int, sens: float, n: int, chunk: int, rng
) -> NDArray[np.int64]:
    parts = []
    done = 0
    while done < n:
        m = min(chunk, n - done)
        parts.append(np.asarray(sel.select(np.broadcast_to(q, (m, q.size)), k, sens, rng)))
        done += m
    return np.concatenate(parts)


def audit_topk(
    mechanism: str | TopKSelector,
    pair: TopKPair | str,
    *,
    epsilon: float | None = None,
    sensitivity: float = 1.0,
    events: str = "outcome",
    draws: int = 100_000,
    alpha: float = 1e-6,
    rng: RNGLike = None,
    chunk: int = 2**15,
) -> TopKAuditResult:
    """Estimate the privacy loss of ``mechanism`` on ``pair`` with a confidence bound.

    ``epsilon`` (optional) rebuilds a named mechanism at that eps. ``draws`` selections are
    made on each input; ``alpha`` is the family-wise error of all bounds together.
    """
    sel = make(mechanism) if epsilon is None else make(mechanism).with_epsilon(epsilon)
    if isinstance(pair, str):
        if pair not in HARD_TOPK_PAIRS:
            raise ValueError(f"unknown pair {pair!r}; available: {', '.join(HARD_TOPK_PAIRS)}")
        pair = HARD_TOPK_PAIRS[pair]
    if events not in ("outcome", "membership"):
        raise ValueError(f"events must be 'outcome' or 'membership', got {events!r}")
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ValueError(f"draws must be a positive integer, got {draws!r}")
    if not (0.0 < alpha < 1.0):
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    q = np.asarray(pair.q, dtype=np.float64)
    qp = np.asarray(pair.q_prime, dtype=np.float64)
    if q.shape != qp.shape or q.ndim != 1:
        raise ValueError("q and q_prime must be 1-D of equal length")
    if np.any(np.abs(q - qp) > sensitivity * (1 + 1e-12)):
        raise ValueError(f"pair {pair.name!r} is not neighbouring: |q - q'| > sensitivity")
    d = q.size
    k = check_k(pair.k, d)
    ordered = bool(getattr(sel, "ordered", True))
    gen = np.random.default_rng(rng)
    out = _draw(sel, q, k, sensitivity, int(draws), chunk, gen)
    out_p = _draw(sel, qp, k, sensitivity, int(draws), chunk, gen)
    if events == "membership":
        m = d
        labels: list[tuple[int, ...]] = [(a,) for a in range(d)]
        c = np.bincount(out.ravel(), minlength=d)
        cp = np.bincount(out_p.ravel(), minlength=d)
    else:
        m = _n_outcomes(d, k, ordered)
        if m > MAX_OUTCOMES:
            raise ValueError(
                f"{m} possible outcomes exceed MAX_OUTCOMES = {MAX_OUTCOMES}; "
                "use events='membership'"
            )
        if not ordered:
            out, out_p = np.sort(out, axis=1), np.sort(out_p, axis=1)
        both = np.concatenate([out, out_p])
        uniq, inv = np.unique(both, axis=0, return_inverse=True)
        inv = inv.ravel()
        labels = [tuple(int(v) for v in row) for row in uniq]
        c = np.bincount(inv[: len(out)], minlength=len(uniq))
        cp = np.bincount(inv[len(out) :], minlength=len(uniq))
    n = int(draws)
    lo, hi = clopper_pearson(c, n, alpha / (4 * m))
    lo_p, hi_p = clopper_pearson(cp, n, alpha / (4 * m))
    with np.errstate(divide="ignore"):
        lower = np.maximum(np.log(lo) - np.log(hi_p), np.log(lo_p) - np.log(hi))
        upper = np.maximum(np.log(hi) - np.log(lo_p), np.log(hi_p) - np.log(lo))
        point = np.where(
            (c > 0) & (cp > 0),
            np.abs(np.log(np.maximum(c, 1)) - np.log(np.maximum(cp, 1))),
            np.inf,
        )
    seen = (c + cp) > 0
    point = np.where(seen, point, 0.0)
    # In membership mode the unseen items are events of probability ~0 under both inputs;
    # an outcome never seen on either input contributes no evidence.
    upper = np.where(seen, upper, 0.0)
    return TopKAuditResult(
        mechanism=getattr(sel, "name", type(sel).__name__),
        pair=pair.name,
        epsilon=float(sel.epsilon),
        events=events,
        draws=n,
        alpha=float(alpha),
        labels=labels,
        counts=np.asarray(c, dtype=np.int64),
        counts_prime=np.asarray(cp, dtype=np.int64),
        loss=float(point.max()),
        loss_lower=max(0.0, float(lower.max())),
        loss_upper=float(upper.max()),
    )
