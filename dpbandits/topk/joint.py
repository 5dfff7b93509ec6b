"""The joint exponential mechanism for top-k (Gillenwater, Joseph, Munoz & Diaz, ICML 2022).

One exponential mechanism over all ``d! / (d-k)!`` sequences ``s = (s_1, ..., s_k)`` of
distinct items, with the utility

    u(s) = -max_i (x_(i) - x_{s_i}),       x_(1) >= ... >= x_(d) the sorted scores,

``P(s) ∝ exp(eps u(s) / (2 Delta_u))``. The exact sampler is the one of Gillenwater et al.
(§3): the ``k x d`` matrix of differences ``x_(i) - x_(j)``, made strictly monotone by a
data-independent tie-break (along a row by column, down a column by row), is sorted; for each
entry the number of sequences whose largest difference is exactly that entry is
``prod_{i' != i} (t_{i'} - i')`` where ``t_{i'}`` is the number of entries of row ``i'`` not
above it (the admissible items of row ``i'`` are a prefix of the sorted items, and the prefixes
are nested), so one pass of cumulative sums gives every count. An entry is drawn with the
Gumbel-max trick on ``log count + utility``, then a sequence uniformly among those with that
maximal entry, row by row. Time ``O(dk log(dk))``, memory ``O(dk)`` per row (about 60 bytes per
matrix entry at the peak: ~0.6 GB for ``d = 10^5, k = 100``).

Privacy: eps-DP (pure) for the whole ranking; eps is not split over the k items. With scores
that may move by ``D`` in any direction between neighbours (our convention, and the one of
paper 002's correlation scores), ``x_(i)`` and ``x_{s_i}`` each move by at most ``D``, so
``Delta_u = 2D`` (Gillenwater et al.'s sensitivity 1 assumes counts that all move the same way
under add/remove; their "swap" case uses 2, as we do).

Choice where the source is open: real-valued scores. Gillenwater et al. round integer-count
differences with a floor; we keep the real differences, which is exact for real scores.
"""

from __future__ import annotations

import numpy as np

from dpbandits.topk.base import FloatArray, IntArray, TopKSelector
from dpbandits.topk.gumbel import gumbel_noise

__all__ = ["JointEM", "joint_loss"]


def joint_loss(x_sorted_desc: FloatArray, values: FloatArray) -> float:
    """``max_i (x_(i) - v_i)`` for the scores ``v`` of a sequence (its negated utility)."""
    k = len(values)
    return float(np.max(x_sorted_desc[:k] - values))


#: Noise entries per sampling chunk (rows of a group x matrix entries).
BLOCK = 2**21


def _joint_prepare(
    x: FloatArray, k: int, lam: float
) -> tuple[FloatArray, IntArray, IntArray, IntArray]:
    """Deterministic part for one score row: ``(score, rows, pos_of, order)``.

    ``score[p]`` is ``log count + utility`` of the p-th entry in the tie-broken sorted order
    (``-inf`` where no sequence has its maximum there), ``rows[p]`` its matrix row,
    ``pos_of[i, j]`` the sorted position of entry ``(i, j)`` and ``order`` the items sorted by
    decreasing score.
    """
    d = x.size
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    # Rows reversed (i = k-1 first), columns ascending: the flat index (k-1-i) d + j is the
    # tie-break key, so a stable sort of the differences yields the strict order we need.
    diff = xs[k - 1 :: -1, None] - xs[None, :]
    flat = np.argsort(diff, axis=None, kind="stable")
    diff_sorted = diff.ravel()[flat]
    del diff
    rows = (k - 1 - flat // d).astype(np.int64)
    cols = flat % d
    pos_of = np.empty(k * d, dtype=np.int64)
    pos_of[rows * d + cols] = np.arange(k * d)
    del flat
    excess = cols - rows  # j - i
    # log n_i grows by log((j+1-i)/(j-i)) when entry (i, j), j > i, is passed; the entry j = i
    # makes row i admissible (n_i = 1): "filled".
    inc = np.where(excess > 0, np.log1p(1.0 / np.maximum(excess, 1)), 0.0)
    cum = np.cumsum(inc)
    cum -= inc  # exclusive: the state just before each entry
    del inc
    is_fill = excess == 0
    filled = np.cumsum(is_fill, dtype=np.int64)
    filled -= is_fill
    own_filled = excess > 0
    valid = (filled - own_filled) == k - 1
    cum -= np.where(own_filled, np.log(np.maximum(excess, 1)), 0.0)  # log count
    with np.errstate(over="ignore", invalid="ignore"):
        util = lam * diff_sorted
    score = np.where(valid & np.isfinite(util), cum - util, -np.inf)
    return score, rows, pos_of.reshape(k, d), order


def _joint_sample(
    prep: tuple[FloatArray, IntArray, IntArray, IntArray],
    k: int,
    n: int,
    rng: np.random.Generator,
) -> IntArray:
    """``n`` independent rankings for one prepared row, shape ``(n, k)``."""
    score, rows, pos_of, order = prep
    m = score.size
    p = np.empty(n, dtype=np.int64)
    step = max(1, BLOCK // m)
    for s0 in range(0, n, step):
        b = min(step, n - s0)
        p[s0 : s0 + b] = np.argmax(score + gumbel_noise(rng, (b, m)), axis=1)
    i_p = rows[p]
    # column of the chosen entry: its position among the sorted entries of row i_p
    j_p = np.empty(n, dtype=np.int64)
    for i in range(k):
        at = i_p == i
        j_p[at] = np.searchsorted(pos_of[i], p[at])
    seq = np.empty((n, k), dtype=np.int64)
    seq[np.arange(n), i_p] = j_p
    taken = np.full((n, k), np.iinfo(np.int64).max, dtype=np.int64)  # padding never counts
    taken[:, 0] = j_p
    n_taken = 1
    for i in range(k):
        # t_i: entries of row i before p = the admissible prefix of position i
        limit = np.searchsorted(pos_of[i], p)
        avail = limit - np.sum(taken[:, :n_taken] < limit[:, None], axis=1)
        r = np.floor(rng.random(n) * np.maximum(avail, 1)).astype(np.int64)
        ts = np.sort(taken[:, :n_taken], axis=1)
        for c in range(n_taken):  # the r-th admissible item not yet taken
            r += ts[:, c] <= r
        fixed = i_p == i
        seq[~fixed, i] = r[~fixed]
        if i < k - 1:
            taken[:, n_taken] = np.where(fixed, np.iinfo(np.int64).max, r)
            n_taken += 1
    return order[seq]


class JointEM(TopKSelector):
    """Joint exponential mechanism over length-k sequences (Gillenwater et al. 2022).

    eps-DP (pure) for the ranking with ``Delta_u = 2D``; see the module docstring.
    """

    name = "joint"
    guarantee = "eps-DP (pure) for the whole ranking; eps is not split over the k items"
    summary = "exponential mechanism over sequences, utility -max_i (x_(i) - x_s_i), O(dk) memory"

    def select_batch(
        self, q: FloatArray, big_d: FloatArray, k: int, rng: np.random.Generator
    ) -> IntArray:
        r, _ = q.shape
        out = np.empty((r, k), dtype=np.int64)
        with np.errstate(over="ignore", divide="ignore"):
            lam = np.minimum(self.epsilon / (4.0 * big_d), 1e300)  # eps / (2 Delta_u)
        # identical rows (audits, repeated trials) share the O(dk) preparation
        key = np.concatenate([q, lam], axis=1)
        if np.all(key == key[:1]):
            inverse = np.zeros(r, dtype=np.int64)
            uniq = key[:1]
        else:
            uniq, inverse = np.unique(key, axis=0, return_inverse=True)
            inverse = inverse.ravel()
        for u in range(uniq.shape[0]):
            members = np.flatnonzero(inverse == u)
            x = uniq[u, :-1]
            prep = _joint_prepare(x - x.max(), k, float(uniq[u, -1]))
            out[members] = _joint_sample(prep, k, members.size, rng)
        return out
