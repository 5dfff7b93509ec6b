"""The kernels' own sorts (dpbandits.core.sorting) against numpy's."""

from __future__ import annotations

import numpy as np
import pytest

from dpbandits.core.sorting import shell_sort, stable_argsort


def test_shell_sort_sorts_a_slice_like_numpy() -> None:
    """shell_sort (the crowded buckets' sort) sorts x[start:end] and nothing else, at every
    gap (lengths up to past the largest gap, 701), with ties."""
    rng = np.random.default_rng(22)
    for n in (0, 1, 2, 5, 17, 58, 300, 1500):
        for x in (rng.normal(size=n + 6), rng.integers(0, 5, n + 6).astype(float)):
            want = x.copy()
            want[3 : 3 + n] = np.sort(x[3 : 3 + n])
            shell_sort(x, 3, 3 + n)
            np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 64, 100, 257, 1000, 4099])
def test_stable_argsort_is_numpys_stable_argsort(n: int) -> None:
    """stable_argsort gives numpy.argsort(kind="stable") index for index: on distinct values,
    on heavy ties (the tie order is the index order), on signed zeros (equal under <, so in
    index order), on infinities, on int64, on sorted and reversed input, and on a strided view
    (every run length and merge width from the insertion runs of 16 up to past 4096)."""
    rng = np.random.default_rng(n)
    cases = [
        rng.normal(size=n),
        rng.integers(0, 3, n).astype(float),
        rng.choice([0.0, -0.0, 1.0, -np.inf, np.inf], size=n),
        rng.integers(-5, 5, n),
        np.arange(n, dtype=float),
        np.arange(n, dtype=float)[::-1].copy(),
        rng.integers(0, 4, 2 * n).astype(float)[::2],
    ]
    for x in cases:
        order = np.full(n, -1, dtype=np.int64)
        stable_argsort(x, order)
        np.testing.assert_array_equal(order, np.argsort(x, kind="stable"))
