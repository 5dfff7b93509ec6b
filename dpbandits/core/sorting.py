"""Sorts for kernels, written here instead of numba's ``np.sort`` and ``np.argsort``.

numba compiles its generic sorts (quicksort, and mergesort for a stable ``argsort``) anew in
every process, for every element type, and the code they generate is linked into, and
optimised again in, every kernel up the chain that calls them: compiling GEM's kernels spent
~3 of ~13 CPU-s in them (docs/performance.md, "Cold start: sorts of our own"). These two loops
give the same results: :func:`stable_argsort` is ``numpy.argsort(x, kind="stable")`` (ties in
index order) for ``x`` without NaN, and :func:`shell_sort` gives the sorted values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpbandits.core.jit import kernel

__all__ = ["shell_sort", "stable_argsort"]

#: Shell's sort's gaps (Ciura 2001), largest first: :func:`shell_sort`.
_GAPS = np.array([701, 301, 132, 57, 23, 10, 4, 1], dtype=np.int64)

#: :func:`stable_argsort` insertion-sorts runs of this many indices before merging them.
_RUN = 16


@kernel
def shell_sort(x: Any, start: int, end: int) -> None:
    """Sort ``x[start:end]`` (no NaN) in place: Shell's sort with Ciura's gaps, insertion
    sorts of the elements ``gap`` apart for each gap, the last one a plain insertion sort.
    For short slices (it is quadratic-ish past the largest gap, 701); gives the sorted values
    (floats equal under ``<`` are the same float, except ``0.0`` and ``-0.0``, whose order no
    sort fixes)."""
    n = end - start
    for g in range(_GAPS.shape[0]):
        gap = _GAPS[g]
        if gap >= n:
            continue
        for i in range(start + gap, end):
            v = x[i]
            j = i
            while j - gap >= start and x[j - gap] > v:
                x[j] = x[j - gap]
                j -= gap
            x[j] = v


@kernel
def stable_argsort(x: Any, order: Any) -> None:
    """``order[:] = numpy.argsort(x, kind="stable")`` for a 1-D ``x`` without NaN (``order``:
    int64, ``len(x)`` entries): indices of ``x`` ascending, equal values (under ``<``, so
    ``-0.0`` and ``0.0`` too) in index order. A bottom-up merge sort, O(n log n): runs of
    ``_RUN`` insertion-sorted, then merged pairwise, the left run first on ties; the values
    travel with their indices (two copies of ``x``), so that merging reads memory in order."""
    n = x.shape[0]
    work = np.empty(n, dtype=np.int64)
    keys, keys_work = np.empty_like(x), np.empty_like(x)
    for i in range(n):
        order[i] = i
        keys[i] = x[i]
    for lo in range(0, n, _RUN):
        for i in range(lo + 1, min(lo + _RUN, n)):
            v, at = keys[i], order[i]
            j = i
            while j > lo and v < keys[j - 1]:
                keys[j], order[j] = keys[j - 1], order[j - 1]
                j -= 1
            keys[j], order[j] = v, at
    in_work = False  # which pair of arrays holds the merged runs
    width = _RUN
    while width < n:
        if in_work:
            src, dst, src_k, dst_k = work, order, keys_work, keys
        else:
            src, dst, src_k, dst_k = order, work, keys, keys_work
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for k in range(lo, hi):
                if j < hi and (i >= mid or src_k[j] < src_k[i]):
                    dst[k], dst_k[k] = src[j], src_k[j]
                    j += 1
                else:
                    dst[k], dst_k[k] = src[i], src_k[i]
                    i += 1
        in_work = not in_work
        width *= 2
    if in_work:
        for i in range(n):  # a loop: a slice assignment compiles numba's shape-error message
            order[i] = work[i]
