"""uniform, greedy, kRR (§III-B; closed form kRR closed form)."""

import math

import numpy as np
import pytest

from dpbandits import selectors
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
