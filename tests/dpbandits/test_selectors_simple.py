"""uniform, greedy, kRR (§III-B; closed form kRR closed form)."""

import math

import numpy as np
import pytest

from dpbandits import selectors
from dpbandits.core.arms import read_only
from tests.stats import assert_counts_match_pmf

N = 200_000


def test_uniform_is_uniform():
    idx = selectors.make("uniform").select(np.zeros((N, 7)) + np.arange(7), rng=0)
    assert_counts_match_pmf(np.bincount(idx, minlength=7), np.full(7, 1 / 7))


def test_greedy_argmax_and_uniform_ties():
    q = np.array([0.0, 3.0, 1.0, 3.0, 3.0])
    idx = selectors.make("greedy").select(np.broadcast_to(q, (N, 5)), rng=1)
    assert_counts_match_pmf(np.bincount(idx, minlength=5), [0, 1 / 3, 0, 1 / 3, 1 / 3])
    rng = np.random.default_rng(2)
    qr = rng.normal(size=(1000, 9))
    np.testing.assert_array_equal(selectors.make("greedy").select(qr, rng=3), qr.argmax(axis=1))


@pytest.mark.parametrize("eps,k", [(1.0, 5), (3.0, 2), (0.1, 10)])
def test_krr_closed_form(eps, k):
    # closed form: P[best] = e^eps/(e^eps + K - 1), every other candidate 1/(e^eps + K - 1)
    q = np.linspace(0, 1, k)[::-1].copy()  # best is index 0
    idx = selectors.make("krr", epsilon=eps).select(np.broadcast_to(q, (N, k)), rng=4)
    z = math.exp(eps) + k - 1
    pmf = np.full(k, 1 / z)
    pmf[0] = math.exp(eps) / z
    assert_counts_match_pmf(np.bincount(idx, minlength=k), pmf)


def test_krr_ties_for_the_best_are_random():
    eps, k = 1.0, 4
    q = np.array([1.0, 1.0, 0.0, 0.0])
    idx = selectors.make("krr", epsilon=eps).select(np.broadcast_to(q, (N, k)), rng=5)
    z = math.exp(eps) + k - 1
    p_top = 0.5 * math.exp(eps) / z + 0.5 / z
    assert_counts_match_pmf(np.bincount(idx, minlength=k), [p_top, p_top, 1 / z, 1 / z])


# -- the compiled selections draw what the batched numpy formulation drew -------------------
def _numpy_argmax_ties(q, gen):
    is_max = q == q.max(axis=1, keepdims=True)
    out = is_max.argmax(1)
    n_max = is_max.sum(axis=1)
    tied = np.flatnonzero(n_max > 1)
    if tied.size:
        rank = gen.integers(0, n_max[tied])
        position = np.cumsum(is_max[tied], axis=1) - 1
        out[tied] = np.argmax(is_max[tied] & (position == rank[:, None]), axis=1)
    return out


def _numpy_krr(q, eps, gen):
    """kRR as numpy array calls: every row's tie-breaking, then every row's keep/flip uniform,
    then (K > 2) every row's other candidate."""
    r, k = q.shape
    best = _numpy_argmax_ties(q, gen)
    keep = gen.random(r) < 1.0 / (1.0 + (k - 1) * np.exp(-eps))
    other = gen.integers(0, k - 1, size=r) if k > 2 else np.zeros(r, dtype=np.int64)
    other += other >= best
    return np.where(keep, best, other)


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("r", [1, 9, 300])
def test_compiled_selections_draw_as_numpy(k, r):
    # bit for bit, generator state included; many ties (rounded scores, constant rows)
    data = np.random.default_rng([k, r])
    q = np.round(data.normal(size=(r, k)), 0)
    q[::4] = 1.0
    q = read_only(q)  # as select hands its rows to select_batch (the row kernels' one type)
    for eps in (0.1, 2.0):
        a, b = np.random.default_rng(r), np.random.default_rng(r)
        for _ in range(3):
            np.testing.assert_array_equal(
                selectors.make("krr", epsilon=eps).select_batch(q, q, a), _numpy_krr(q, eps, b)
            )
            np.testing.assert_array_equal(
                selectors.make("greedy").select_batch(q, q, a), _numpy_argmax_ties(q, b)
            )
            np.testing.assert_array_equal(
                selectors.make("uniform").select_batch(q, q, a), b.integers(0, k, size=r)
            )
        assert a.random() == b.random()
