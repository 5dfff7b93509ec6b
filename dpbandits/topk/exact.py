"""Exact output laws of the top-k mechanisms on small inputs, by enumeration (for tests/audits).

Each ``*_pmf`` enumerates every output (k-sets or k-sequences of ``range(d)``) and returns
``(outcomes, probabilities)``. They are written from the mechanisms' *definitions*, not from
the samplers' shortcuts, so they check the samplers independently:

- :func:`lipschitz_pmf` -- Definition A.1 of paper 002 with the canonical loss of §A.3 written
  as ``(1 - gamma) max(A, B) - gamma B`` (``A`` the best excluded, ``B`` the worst included
  normalised score) over all ``C(d, k)`` sets, i.e. report-noisy-max with standard exponential
  noise on the utilities ``-(eps/2) LOSS``; its law is integrated numerically
  (:func:`exponential_noise_argmax_pmf`, absolute error below 1e-12);
- :func:`plackett_luce_pmf` -- the peeling / one-shot Gumbel ranking law;
- :func:`joint_pmf` -- ``P(s) ∝ exp(-eps max_i (x_(i) - x_{s_i}) / (4D))``.

:func:`exact_privacy_loss` then gives ``max_o |log P[o | q] - log P[o | q']|`` exactly.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate

__all__ = [
    "canonical_loss",
    "exact_privacy_loss",
    "exponential_noise_argmax_pmf",
    "joint_pmf",
    "lipschitz_pmf",
    "plackett_luce_pmf",
]

Outcome = tuple[int, ...]
Pmf = tuple[list[Outcome], NDArray[np.float64]]


def canonical_loss(y: Outcome, x: NDArray[np.float64], gamma: float) -> float:
    """``LOSS(y | x) = (1 - gamma) max(A, B) - gamma B`` (paper 002, §A.3; see the module)."""
    inside = np.zeros(x.size, dtype=bool)
    inside[list(y)] = True
    b = float(x[inside].min())
    a = float(x[~inside].max()) if (~inside).any() else b
    return (1.0 - gamma) * max(a, b) - gamma * b


def exponential_noise_argmax_pmf(u: ArrayLike) -> NDArray[np.float64]:
    """``P(argmax_i (u_i + E_i) = i)`` for i.i.d. standard exponential ``E_i``.

    ``P(i) = int_{u_i}^inf e^{-(z - u_i)} prod_{j != i} (1 - e^{-(z - u_j)})_+ dz``, integrated
    piecewise between the sorted ``u`` (the integrand is smooth on each piece).
    """
    v = np.asarray(u, dtype=np.float64)
    v = v - v.max()
    n = v.size
    probs = np.empty(n)

    def integrand(z: float, i: int) -> float:
        g = 1.0 - np.exp(-(z - v))
        g[i] = 1.0
        return float(math.exp(-(z - v[i])) * np.prod(np.clip(g, 0.0, None)))

    for i in range(n):
        cuts = np.unique(np.concatenate([[v[i]], v[v > v[i]], [0.0]]))
        total = 0.0
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=False):
            total += integrate.quad(integrand, lo, hi, args=(i,), epsabs=1e-14, epsrel=1e-12)[0]
        total += integrate.quad(integrand, 0.0, 60.0, args=(i,), epsabs=1e-14, epsrel=1e-12)[0]
        probs[i] = total
    if abs(probs.sum() - 1.0) > 1e-8:
        raise ArithmeticError(f"integration error: probabilities sum to {probs.sum()!r}")
    return probs / probs.sum()


def lipschitz_pmf(
    q: ArrayLike,
    k: int,
    epsilon: float,
    gamma: float = 0.5,
    sensitivity: float = 1.0,
    classes: str = "partition",
) -> Pmf:
    """Law of the canonical Lipschitz mechanism over the ``C(d, k)`` sets (increasing tuples).

    ``classes="partition"``: Definition A.1 with the canonical loss, one noise per set.
    ``classes="paper"``: Algorithm 2 as printed -- every (class, member) pair of the
    overlapping classes (body from ranks ``h+1..t-1``) is a candidate with the class's loss
    ``(1 - gamma) x_[h+1] - gamma x_[t]`` and its own noise; the output is the member.
    """
    x = np.asarray(q, dtype=np.float64) / sensitivity
    d = x.size
    sets = list(itertools.combinations(range(d), k))
    if classes == "partition":
        util = np.array([-0.5 * epsilon * canonical_loss(y, x, gamma) for y in sets])
        return sets, exponential_noise_argmax_pmf(util)
    if classes != "paper":
        raise ValueError(f"classes must be 'partition' or 'paper', got {classes!r}")
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    owners: list[int] = []
    utils: list[float] = []
    index = {y: n for n, y in enumerate(sets)}
    classes_ht = [(k - 1, k)] + [(h, t) for t in range(k + 1, d + 1) for h in range(k - 1, -1, -1)]
    for h, t in classes_ht:
        loss = (1.0 - gamma) * xs[h] - gamma * xs[t - 1]  # 1-based x_[h+1], x_[t]
        for body in itertools.combinations(range(h, t - 1), k - h - 1):
            member = tuple(sorted(int(order[i]) for i in (*range(h), *body, t - 1)))
            owners.append(index[member])
            utils.append(-0.5 * epsilon * loss)
    p_copy = exponential_noise_argmax_pmf(np.array(utils))
    probs = np.bincount(np.array(owners), weights=p_copy, minlength=len(sets))
    return sets, np.asarray(probs, dtype=np.float64)


def plackett_luce_pmf(q: ArrayLike, k: int, epsilon: float, sensitivity: float = 1.0) -> Pmf:
    """Law of the peeling / one-shot Gumbel ranking: ``w = exp(eps q / (2 k D))``."""
    x = np.asarray(q, dtype=np.float64)
    logw = epsilon * (x - x.max()) / (2.0 * k * sensitivity)
    w = np.exp(logw)
    seqs = list(itertools.permutations(range(x.size), k))
    probs = np.empty(len(seqs))
    for n, s in enumerate(seqs):
        p, rest = 1.0, w.sum()
        for a in s:
            p *= w[a] / rest
            rest -= w[a]
        probs[n] = p
    return seqs, probs / probs.sum()


def joint_pmf(q: ArrayLike, k: int, epsilon: float, sensitivity: float = 1.0) -> Pmf:
    """Law of the joint exponential mechanism: ``P(s) ∝ exp(-eps loss(s) / (4 D))``."""
    x = np.asarray(q, dtype=np.float64)
    xs = np.sort(x)[::-1]
    seqs = list(itertools.permutations(range(x.size), k))
    loss = np.array([np.max(xs[:k] - x[list(s)]) for s in seqs])
    logp = -epsilon * loss / (4.0 * sensitivity)
    p = np.exp(logp - logp.max())
    return seqs, p / p.sum()


def exact_privacy_loss(
    pmf: Callable[[NDArray[np.float64]], Pmf], q: ArrayLike, q_prime: ArrayLike
) -> float:
    """``max_o |log P[o | q] - log P[o | q']|`` for a pmf function of the scores."""
    o1, p1 = pmf(np.asarray(q, dtype=np.float64))
    o2, p2 = pmf(np.asarray(q_prime, dtype=np.float64))
    if o1 != o2:
        raise ValueError("the two pmfs enumerate different outcomes")
    with np.errstate(divide="ignore"):
        return float(np.max(np.abs(np.log(p1) - np.log(p2))))
