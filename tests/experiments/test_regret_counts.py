"""The engine's pull counts and per-interval action frequencies (dpbandits.experiments.regret)
against the
plain count, pull by pull, for few arms (counted arm by arm) and many (one increment a pull)."""

from __future__ import annotations

import numpy as np
import pytest

from dpbandits.experiments.regret import COUNT_BY_ARM_MAX_K, action_frequencies


def counted_one_by_one(actions, k, rec):
    T, n = actions.shape
    counts, freq, i = np.zeros((n, k), dtype=np.int64), np.zeros((rec.size, k)), 0
    for t in range(T):
        while rec[i] < t + 1:
            i += 1
        for r in range(n):
            counts[r, actions[t, r]] += 1
            freq[i, actions[t, r]] += 1.0
    lengths = np.diff(np.concatenate([[0], rec]))
    return counts, freq / (lengths * n)[:, None]


@pytest.mark.parametrize("k", [1, 2, 5, COUNT_BY_ARM_MAX_K, COUNT_BY_ARM_MAX_K + 1, 300])
def test_counts_and_frequencies_are_the_pull_by_pull_ones(k):
    rng = np.random.default_rng(k)
    for _ in range(40):
        T, n = int(rng.integers(1, 80)), int(rng.integers(1, 11))
        dtype = np.int8 if k <= 127 else np.int16
        actions = rng.integers(0, k, size=(T, n)).astype(dtype)
        ends = rng.integers(1, T + 4, size=int(rng.integers(0, 7)))
        rec = np.unique(np.concatenate([ends, [T + int(rng.integers(0, 3))]]))
        counts, freq = action_frequencies(actions, k, rec)
        ref_counts, ref_freq = counted_one_by_one(actions, k, rec)
        np.testing.assert_array_equal(counts, ref_counts)
        np.testing.assert_array_equal(freq, ref_freq)
        assert counts.sum() == T * n
