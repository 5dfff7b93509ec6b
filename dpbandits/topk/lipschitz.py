"""The canonical Lipschitz mechanism for top-k (Shekelyan & Loukides 2022; paper 002, App. A).

Algorithm 2 of paper 002's Appendix A, batched over rows. The mechanism is the Lipschitz
mechanism (Definition A.1) over all ``C(d, k)`` index sets ``y``,

    Y = argmax_y  -(eps / 2) LOSS(y | x) + F^{-1}(U_y),    F^{-1}(u) = -log(1 - u),

on the normalised scores ``x = q / Delta_f`` with the canonical loss of §A.3,

    LOSS(y | x) = (1 - gamma) x_[h+1] - gamma x_[t]        for y in the utility class C_{h,t},

where ``x_[1] >= ... >= x_[d]`` are the order statistics, ``h`` is the length of the true top
prefix ``j_1..j_h`` contained in ``y`` (``h < k``) and ``t`` the rank of the worst member of
``y``. The ``k (d - k) + 1`` classes share their loss, so only the largest of the
``|C_{h,t}| = C(t-h-1, k-h-1)`` i.i.d. noises of a class matters; it is drawn directly as
``F^{-1}(U^{1/m})`` (the maximum of ``m`` standard exponentials), and the output is a uniformly
random member of the winning class (Algorithm 2, line 26). Time ``O(d log d + d k)``, memory
``O(d)`` per row.

Privacy: eps-DP (pure) for the whole k-set -- eps is **not** split over the k items. For a
fixed ``y``, ``LOSS(y | x) = (1 - gamma) max(A, B) - gamma B`` with ``A = max_{i not in y} x_i``
and ``B = min_{i in y} x_i``, a 1-Lipschitz function of ``x`` in the sup norm, so the utility
``-(eps/2) LOSS`` has sensitivity ``eps/2`` and the mechanism is report-noisy-max with
exponential noise of scale ``2 / eps`` over ``C(d, k)`` candidates, which is eps-DP
(Ding et al. 2021; the same law as permute-and-flip). ``gamma`` splits eps into
``eps_1 = (1 - gamma) eps`` on the best excluded score and ``eps_2 = gamma eps`` on the worst
included one (Algorithm 2, line 5); paper 002 uses ``gamma = 1/2``.

With ``k = 1`` every class is ``C_{0,t} = {j_t}`` with utility ``(gamma eps / 2) x_[t]`` plus a
constant: the mechanism is exponential-noise report-noisy-max (permute-and-flip) at
``gamma * eps``.

Correction of Algorithm 2 (``classes="partition"``, the default). Paper 002 defines the class
body as a subset of ``{j_{h+1}, ..., j_{t-1}}`` and gives ``|C_{h,t}| = C(t-h-1, k-h-1)``
(Definition A.2, §A.4, Algorithm 2 lines 12-15). That contradicts its own statement that
``j_{h+1}`` is the best index *not* in ``y``: the classes then overlap and their sizes sum to
more than ``C(d, k)`` (13 instead of 10 for ``d = 5, k = 2``), so a set containing the top
``h`` items is drawn once in each of ``h + 1`` classes, with the larger losses of the shorter
heads. The classes that partition the k-sets -- and make Algorithm 2 the Lipschitz mechanism
of Definition A.1 with the canonical loss -- take the body from ``{j_{h+2}, ..., j_{t-1}}``,
``|C_{h,t}| = C(t-h-2, k-h-1)``; the sizes then sum to ``C(d, k)``. ``classes="paper"`` runs
Algorithm 2 as printed (for reproducing the paper); its law differs (``tests/topk``
check both against enumeration) and the eps-DP argument above does not cover it.

Choices where the paper is open:

- Noise: the exponential ``F`` "with the best results" (§A.5). Instead of the Taylor expansion
  of §A.5 we evaluate ``-log(1 - U^{1/m})`` as ``-log(-expm1(-s))`` with
  ``s = E / m = exp(log E - log m)``, ``E = -log U ~ Exp(1)``, and ``-log s + s/2`` once
  ``s < e^{-20}``; this is accurate for any ``m`` including ``log m`` beyond the float range
  of ``m`` itself (``C(10^5, 100)``), so no class is given an artificially large noise.
- Ties among the scores are broken by index (a stable sort); any fixed tie-break gives the
  same law because tied scores give equal losses.
- The utilities are computed on ``x - max x`` (a constant shift of every class's utility, so
  the law is unchanged) and clipped at ``-1e300`` so that extreme ``eps * x`` never gives NaN.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from dpbandits.core import checks
from dpbandits.topk.base import FloatArray, IntArray, TopKSelector

__all__ = ["CLASSES", "CanonicalLipschitz", "expected_class_noise", "max_exponential_noise"]

#: ``"partition"``: classes partition the k-sets; ``"paper"``: Algorithm 2 as printed.
CLASSES: tuple[str, ...] = ("partition", "paper")

#: Elements per row block: bounds the temporaries of a batch (a few arrays of this size).
BLOCK = 2**18

_SMALL_LOG_S = -20.0


def max_exponential_noise(e: FloatArray, log_m: FloatArray | float) -> FloatArray:
    """``F^{-1}(U^{1/m}) = -log(1 - U^{1/m})`` for ``U = exp(-e)``, i.e. the maximum of ``m``
    i.i.d. standard exponentials, computed stably from ``e ~ Exp(1)`` and ``log m``."""
    with np.errstate(divide="ignore", under="ignore", over="ignore", invalid="ignore"):
        log_s = np.log(e) - log_m
        s = np.exp(log_s)
        out = -np.log(-np.expm1(-s))
        small = log_s < _SMALL_LOG_S
        if np.any(small):
            # 1 - exp(-s) = s (1 - s/2 + ...): -log(1 - e^{-s}) = -log s + s/2 + O(s^2)
            out = np.where(small, -log_s + 0.5 * s, out)
    return out


class CanonicalLipschitz(TopKSelector):
    """Canonical Lipschitz top-k (paper 002, App. A, Algorithm 2); see the module docstring.

    Parameters
    ----------
    epsilon:
        Total privacy budget of the k-set (eps-DP).
    gamma:
        Loss parameter in ``[0, 1)`` (Algorithm 2, line 1); ``1/2`` as in paper 002 §4.2.
    classes:
        ``"partition"`` (default): the utility classes partition the k-sets (the mechanism of
        Definition A.1); ``"paper"``: Algorithm 2 exactly as printed (overlapping classes).
    """

    name = "canonical_lipschitz"
    guarantee = "eps-DP (pure) for the whole k-set; eps is not split over the k items"
    ordered = False
    summary = "Lipschitz mechanism over k-sets with the canonical loss, O(dk) (Alg. 2)"

    def __init__(
        self, epsilon: float = 1.0, gamma: float = 0.5, classes: str = "partition"
    ) -> None:
        super().__init__(epsilon)
        if isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.integer, np.floating)):
            raise TypeError(f"gamma must be a real number, got {type(gamma).__name__}")
        g = float(gamma)
        if not (0.0 <= g < 1.0):
            raise ValueError(f"gamma must lie in [0, 1) (Algorithm 2), got {g!r}")
        self.gamma = g
        self.classes = checks.one_of(classes, CLASSES, "classes")

    def select_batch(
        self, q: FloatArray, big_d: FloatArray, k: int, rng: np.random.Generator
    ) -> IntArray:
        r, d = q.shape
        out = np.empty((r, k), dtype=np.int64)
        rows = max(1, BLOCK // d)
        for r0 in range(0, r, rows):
            out[r0 : r0 + rows] = self._select_block(
                q[r0 : r0 + rows], big_d[r0 : r0 + rows], k, rng
            )
        return out

    def _select_block(
        self, q: FloatArray, big_d: FloatArray, k: int, rng: np.random.Generator
    ) -> IntArray:
        n, d = q.shape
        eps1 = (1.0 - self.gamma) * self.epsilon
        eps2 = self.gamma * self.epsilon
        order = np.argsort(-q, axis=1, kind="stable")  # j_1, ..., j_d
        xs = np.take_along_axis(q, order, axis=1)
        with np.errstate(over="ignore", invalid="ignore"):
            xs = (xs - xs[:, :1]) / big_d  # x_[i] - x_[1] <= 0: a common shift of all utilities
            a = np.maximum(0.5 * eps2 * xs, -1e300)  # (eps_2 / 2) x_[t]
            b = np.maximum(0.5 * eps1 * xs, -1e300)  # (eps_1 / 2) x_[h+1]
        rows = np.arange(n)
        # Class C_{k-1,k} (the true top-k): L = (eps_2 - eps_1)/2 x_[k], noise F^{-1}(U), m = 1.
        best_v = a[:, k - 1] - b[:, k - 1] + rng.standard_exponential(n)
        best_h = np.full(n, k - 1, dtype=np.int64)
        best_t = np.full(n, k, dtype=np.int64)  # 1-based rank of the tail
        # body ranks h+1+shift .. t-1: shift 1 excludes j_{h+1} (a partition), 0 as printed
        shift = 1 if self.classes == "partition" else 0
        if k < d:
            t = np.arange(k + 1, d + 1, dtype=np.float64)  # tails t = k+1..d (1-based)
            tail_a = a[:, k:]
            for h in range(k - 1, -1, -1):  # Algorithm 2, lines 10-24 (h loop vectorised in t)
                # |C_{h,t}| = C(t-h-1-shift, k-h-1), in logs (C(10^5, 100) overflows a float)
                log_m = gammaln(t - h - shift) - gammaln(k - h) - gammaln(t - k + 1 - shift)
                v = tail_a - b[:, h : h + 1]
                v += max_exponential_noise(rng.standard_exponential((n, d - k)), log_m)
                j = np.argmax(v, axis=1)
                vj = v[rows, j]
                better = vj > best_v
                best_v = np.where(better, vj, best_v)
                best_h = np.where(better, h, best_h)
                best_t = np.where(better, j + k + 1, best_t)
        return _member_of_class(order, best_h, best_t, k, shift, rng)


def _member_of_class(
    order: IntArray, h: IntArray, t: IntArray, k: int, shift: int, rng: np.random.Generator
) -> IntArray:
    """A uniformly random member of ``C_{h,t}`` per row, as indices in increasing order.

    Head: ranks ``1..h``; tail: rank ``t``; body: a uniformly random ``(k-h-1)``-subset of the
    ranks ``h+1+shift..t-1``, chosen as the smallest uniform keys in that window.
    """
    n, d = order.shape
    pos = np.arange(d)
    # 0-based positions: head [0, h), body window [h+shift, t-2], tail t-1
    in_window = (pos >= h[:, None] + shift) & (pos <= t[:, None] - 2)
    chosen = (pos < h[:, None]) | (pos == t[:, None] - 1)
    if k >= 2:
        keys = rng.random((n, d))
        keys[~in_window] = 2.0
        cand = np.argpartition(keys, k - 2, axis=1)[:, : k - 1]
        ck = np.take_along_axis(keys, cand, axis=1)
        cand = np.take_along_axis(cand, np.argsort(ck, axis=1), axis=1)
        take = np.arange(k - 1) < (k - 1 - h)[:, None]  # the first k-h-1 smallest keys
        rr = np.broadcast_to(np.arange(n)[:, None], cand.shape)
        chosen[rr[take], cand[take]] = True
    items = order[chosen].reshape(n, k)
    items.sort(axis=1)
    return items


def expected_class_noise(m: int) -> float:
    """``E[F^{-1}(U^{1/m})] = H_m``, the m-th harmonic number (paper 002, Theorem A.3)."""
    if m < 1:
        raise ValueError(f"m must be >= 1, got {m}")
    if m < 10**6:
        return float(np.sum(1.0 / np.arange(1, m + 1)))
    return math.log(m) + 0.5772156649015329 + 1.0 / (2 * m) - 1.0 / (12 * m * m)
