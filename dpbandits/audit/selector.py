"""Empirical privacy audit of a selector on neighbouring inputs.

For neighbouring inputs ``(q, d)`` and ``(q', d')`` a selector is eps-DP only if, for every
output ``a``, ``|log P[a | q, d] - log P[a | q', d']| <= eps`` (for a finite output space the
singletons are the worst sets). :func:`estimate_privacy_loss` draws the selector many times on
both inputs and estimates these probabilities. It reports

- ``loss``: the plug-in estimate ``max_a |log p_a - log p'_a|`` (``inf`` when an outcome is
  seen under one input only);
- ``loss_lower``: a ``1 - alpha`` lower confidence bound on the true loss, from exact
  Clopper-Pearson intervals on each probability, simultaneous over all outcomes and both inputs
  (Bonferroni over the ``4K`` one-sided bounds);
- ``loss_upper``: the matching upper bound (``inf`` when an outcome is rare).

The audit *passes* when ``loss_lower <= epsilon``: the data are consistent with eps-DP. For a
correct eps-DP selector it fails with probability at most ``alpha``. A privacy bug that makes
the true loss exceed eps on a pair is caught once the draws resolve the gap.

:data:`HARD_PAIRS` holds the neighbouring pairs used by the tests and ``dpbandits audit``,
including the constructions of §IV-A and App. A/B of the main paper. Neighbouring means the
same sensitivities and ``|q[a] - q'[a]| <= d[a]`` for every candidate (eq. (1)). Candidates
the paper gives sensitivity 0 get ``DELTA0 = 1e-3`` because the selectors require ``d > 0``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from dpbandits import selectors as _selectors
from dpbandits.core import checks
from dpbandits.selectors.base import RNGLike, Selector

__all__ = [
    "DELTA0",
    "HARD_PAIRS",
    "AuditResult",
    "NeighbouringPair",
    "audit",
    "clopper_pearson",
    "estimate_privacy_loss",
]

#: Stand-in for the paper's zero sensitivity (selectors require d > 0).
DELTA0 = 1e-3


@dataclass(frozen=True)
class NeighbouringPair:
    """Neighbouring inputs ``(q, d)`` and ``(q_prime, d_prime)`` of one selection problem."""

    name: str
    q: NDArray[np.float64]
    q_prime: NDArray[np.float64]
    d: NDArray[np.float64]
    d_prime: NDArray[np.float64] | None = None
    source: str = ""

    def __post_init__(self) -> None:
        q = np.asarray(self.q, dtype=np.float64)
        qp = np.asarray(self.q_prime, dtype=np.float64)
        d = np.broadcast_to(np.asarray(self.d, dtype=np.float64), q.shape).copy()
        dp = (
            None
            if self.d_prime is None
            else np.broadcast_to(np.asarray(self.d_prime, dtype=np.float64), q.shape).copy()
        )
        if q.ndim != 1 or q.shape != qp.shape:
            raise ValueError(f"q and q_prime must be 1-D of equal shape, got {q.shape}, {qp.shape}")
        if np.any(d <= 0) or (dp is not None and np.any(dp <= 0)):
            raise ValueError("sensitivities must be > 0")
        if dp is None and np.any(np.abs(q - qp) > d * (1 + 1e-12)):
            raise ValueError(f"pair {self.name!r} is not neighbouring: |q - q'| > d")
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "q_prime", qp)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "d_prime", dp)

    @property
    def k(self) -> int:
        return int(self.q.size)


def _pair(name: str, q: Sequence[float], qp: Sequence[float], d: Sequence[float], source: str):
    return NeighbouringPair(name, np.array(q), np.array(qp), np.array(d), source=source)


HARD_PAIRS: dict[str, NeighbouringPair] = {
    p.name: p
    for p in (
        _pair(
            "sec4a",
            [0.0, 0.5],
            [0.0, -0.5],
            [DELTA0, 1.0],
            "§IV-A: d = (0, 1), q = (0, 1/2), q' = (0, -1/2); RNMH outputs 0 w.p. 0 vs "
            "1 - e^{-eps/4}",
        ),
        _pair(
            "appA",
            [0.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 1.0, 1.0],
            [DELTA0, 1.0, 1.0, 1.0],
            "App. A: d = (0, 1, ..., 1), q = 0, q' = (0, 1, ..., 1) (Laplace RNMH loses (K-1) eps)",
        ),
        _pair(
            "appB",
            [1.0] * 8,
            [1.0] + [0.0] * 7,
            [DELTA0] + [1.0] * 7,
            "App. B: d = (0, 1, ..., 1), q = 1, q' = (1, 0, ..., 0) (RS with exponential noise "
            "is not DP as K grows)",
        ),
        _pair(
            "swap",
            [0.0, 1.0],
            [1.0, 0.0],
            [1.0, 1.0],
            "argmax changes: kRR attains loss eps exactly",
        ),
        _pair(
            "shift2",
            [0.0, 2.0],
            [1.0, 1.0],
            [1.0, 1.0],
            "gap 2 -> 0: exponential-noise RNM attains loss eps exactly (closed form)",
        ),
        _pair(
            "one_up",
            [0.0] * 10,
            [1.0] + [-1.0] * 9,
            [1.0] * 10,
            "one score up, nine down by a full sensitivity: the exponential mechanism's loss "
            "approaches eps as K grows",
        ),
        _pair(
            "one_up_het",
            [0.0] * 10,
            [1.0] + [-0.1] * 9,
            [1.0] + [0.1] * 9,
            "heterogeneous d: every GEM score q' moves by a full unit (0 up, the others down)",
        ),
        _pair(
            "corr_flip",
            [0.0, 1.0, 2.0, 3.0],
            [1.0, 0.0, -1.0, -1.0],
            [1.0, 2.0, 3.0, 4.0],
            "Spearman(q, d) flips from +1 to negative: combined GEM's bit changes",
        ),
        _pair(
            "het_gap",
            [0.0, 3.0],
            [0.0, 2.0],
            [1e-3, 1.0],
            "the gap shrinks by d = 1 next to a near-zero d: noise scaled per candidate (any "
            "noise family, e.g. Gumbel) loses far more than eps",
        ),
    )
}


def clopper_pearson(
    successes: ArrayLike, n: int, alpha: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One-sided exact bounds ``(lower, upper)``, each holding with probability ``1 - alpha``."""
    n = checks.positive_int(n, "n")
    alpha = checks.probability(alpha, "alpha")
    x = checks.real_array(successes, "successes")
    if not np.all((x >= 0) & (x <= n) & (x == np.floor(x))):
        raise ValueError(f"successes must be integers in [0, n] = [0, {n}], got {successes!r}")
    lower = np.where(x > 0, stats.beta.ppf(alpha, np.maximum(x, 1), n - x + 1), 0.0)
    upper = np.where(x < n, stats.beta.ppf(1 - alpha, x + 1, np.maximum(n - x, 1)), 1.0)
    return lower, upper


@dataclass
class AuditResult:
    """Outcome of :func:`estimate_privacy_loss` for one selector on one pair."""

    selector: str
    pair: str
    epsilon: float
    claims_dp: bool
    draws: int
    alpha: float
    counts: NDArray[np.int64]
    counts_prime: NDArray[np.int64]
    loss: float
    loss_lower: float
    loss_upper: float
    worst_outcome: int = field(default=-1)

    @property
    def passed(self) -> bool:
        """True when the data are consistent with eps-DP (``loss_lower <= epsilon``)."""
        return self.loss_lower <= self.epsilon

    @property
    def p(self) -> NDArray[np.float64]:
        return self.counts / self.draws

    @property
    def p_prime(self) -> NDArray[np.float64]:
        return self.counts_prime / self.draws

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (
            f"{self.selector} on {self.pair}: loss {self.loss:.4g} "
            f"(lower bound {self.loss_lower:.4g}) vs eps {self.epsilon:g}: {verdict}"
        )


def _count(
    sel: Selector, q: NDArray[np.float64], d: NDArray[np.float64], draws: int, chunk: int, rng
) -> NDArray[np.int64]:
    counts = np.zeros(q.size, dtype=np.int64)
    done = 0
    while done < draws:
        n = min(chunk, draws - done)
        idx = sel.select(np.broadcast_to(q, (n, q.size)), d, rng)
        counts += np.bincount(idx, minlength=q.size)
        done += n
    return counts


def estimate_privacy_loss(
    selector: str | Selector,
    pair: NeighbouringPair | str,
    *,
    draws: int = 100_000,
    alpha: float = 1e-6,
    rng: RNGLike = None,
    chunk: int = 2**16,
) -> AuditResult:
    """Estimate ``max_a |log P[a|q,d] - log P[a|q',d']|`` with a confidence bound.

    ``draws`` selections are made on each input. ``alpha`` is the family-wise error of all
    Clopper-Pearson bounds together, so ``loss_lower`` exceeds the true loss with probability
    at most ``alpha``.
    """
    sel = _selectors.make(selector)
    if isinstance(pair, str):
        if pair not in HARD_PAIRS:
            raise ValueError(f"unknown pair {pair!r}; available: {', '.join(HARD_PAIRS)}")
        pair = HARD_PAIRS[pair]
    draws = checks.positive_int(draws, "draws")
    alpha = checks.probability(alpha, "alpha")
    chunk = checks.positive_int(chunk, "chunk")
    gen = checks.generator(rng)
    d_prime = pair.d if pair.d_prime is None else pair.d_prime
    c = _count(sel, pair.q, pair.d, int(draws), chunk, gen)
    cp = _count(sel, pair.q_prime, d_prime, int(draws), chunk, gen)
    k = pair.k
    lo, hi = clopper_pearson(c, int(draws), alpha / (4 * k))
    lo_p, hi_p = clopper_pearson(cp, int(draws), alpha / (4 * k))
    with np.errstate(divide="ignore"):
        lower_terms = np.maximum(np.log(lo) - np.log(hi_p), np.log(lo_p) - np.log(hi))
        upper_terms = np.maximum(np.log(hi) - np.log(lo_p), np.log(hi_p) - np.log(lo))
        seen = (c + cp) > 0
        point = np.where(
            (c > 0) & (cp > 0),
            np.abs(np.log(np.maximum(c, 1)) - np.log(np.maximum(cp, 1))),
            np.inf,
        )
    point = np.where(seen, point, 0.0)
    upper_terms = np.where(seen, upper_terms, 0.0)
    worst = int(np.argmax(lower_terms)) if k else -1
    return AuditResult(
        selector=getattr(sel, "name", type(sel).__name__),
        pair=pair.name,
        epsilon=float(sel.epsilon),
        claims_dp=bool(sel.private),
        draws=int(draws),
        alpha=float(alpha),
        counts=c,
        counts_prime=cp,
        loss=float(point.max()),
        loss_lower=max(0.0, float(lower_terms.max())),
        loss_upper=float(upper_terms.max()),
        worst_outcome=worst,
    )


def audit(
    selector: str | Selector,
    pairs: Iterable[NeighbouringPair | str] | None = None,
    *,
    draws: int = 100_000,
    alpha: float = 1e-6,
    rng: RNGLike = None,
) -> list[AuditResult]:
    """Run :func:`estimate_privacy_loss` on each pair (default: all of :data:`HARD_PAIRS`).

    Each pair gets its own child generator (``Generator.spawn``), so the result for a pair
    does not depend on the other pairs.
    """
    chosen = list(HARD_PAIRS.values()) if pairs is None else list(pairs)
    # checked before the first pair's (long) run, not after it
    checks.positive_int(draws, "draws")
    checks.probability(alpha, "alpha")
    children = checks.generator(rng).spawn(len(chosen))
    return [
        estimate_privacy_loss(selector, p, draws=draws, alpha=alpha, rng=child)
        for p, child in zip(chosen, children, strict=True)
    ]
