"""The compiled steps of the continual-release mechanisms (App. H; docs/performance.md): the
binary and hybrid mechanisms' streaming steps and the private means' per-step update, as
kernels (``dpbandits.core.jit``).

:mod:`dpbandits.continual` is the validated public interface (``BinaryMechanism``,
``HybridMechanism``, ``PrivateMeans``); these kernels are what it runs, public so that other
kernels (a fused private-agent step) can call them. The tree arithmetic they share with the
noise blocks lives in :mod:`dpbandits.continual.tree_noise`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpbandits.continual.tree_noise import (
    lowest_bit,
    node_release,
    noise_at,
    top_bit,
    tree_absorb,
)
from dpbandits.core.jit import inline_kernel, kernel

__all__ = [
    "binary_add",
    "binary_noise_push",
    "binary_noise_row",
    "hybrid_add",
    "hybrid_add_lockstep",
    "items_check",
    "means_clipped",
    "means_push",
    "means_update",
    "means_value",
]


# --------------------------------------------------------------------------------------------
# compiled steps of the streaming objects (dpbandits.core.jit); the tree arithmetic is shared with
# the noise blocks (dpbandits.continual.tree_noise).  Each repeats the numpy expressions it replaced
# operation for operation, the level sums in numpy's order (``level_sum``).  The Laplace node
# noise of a step is drawn by one numpy call before the kernel (the draws numpy always made)
# and passed as an array: handing a Generator to a kernel costs about 20 us per call (numba
# unboxes it through ctypes), more than the whole step.
# --------------------------------------------------------------------------------------------


@kernel
def items_check(sums: Any, idx: Any, xs: Any, limit: float) -> int:
    """0 if the items ``xs`` of streams ``idx`` may be added: 1 if one is not finite, else 2
    if one would take its stream's prefix sum beyond ``limit`` in magnitude (the checks of
    ``add``, in that order, before any update)."""
    for i in range(xs.shape[0]):
        if not math.isfinite(xs[i]):
            return 1
    for i in range(xs.shape[0]):
        if not abs(sums[idx[i]] + xs[i]) <= limit:
            return 2
    return 0


@kernel
def binary_add(alpha: Any, alpha_hat: Any, counts: Any, sums: Any, release: Any, idx: Any,
               xs: Any, noise: Any) -> None:  # fmt: skip
    """:meth:`BinaryMechanism.add` on streams ``idx`` (distinct, advancing in this order) with
    items ``xs``: node sums ``alpha``/``alpha_hat`` of shape ``(S, L)``, ``noise[i]`` the
    ``Lap(L b / eps)`` noise of the node stream ``idx[i]`` completes; updates ``counts``,
    ``sums`` and the ``release`` of those streams."""
    n_levels = alpha.shape[1]
    scratch = np.empty(n_levels)
    for i in range(idx.shape[0]):
        j = idx[i]
        n = counts[j] + 1
        t = lowest_bit(n)
        alpha_t = tree_absorb(alpha[j], n_levels, t, xs[i], scratch, True)
        alpha_hat[j, :t] = 0.0
        alpha[j, t] = alpha_t
        alpha_hat[j, t] = alpha_t + noise[i]
        counts[j] = n
        sums[j] += xs[i]
        release[j] = node_release(alpha_hat[j], n_levels, n, scratch, True, False)


@kernel
def binary_noise_push(nodes: Any, counts: Any, j: int, noise: float) -> float:
    """The binary mechanism's noise ``Z_n`` at stream ``j``'s next count ``n`` (its release is
    ``S_n + Z_n``, the noise being data independent: :func:`~dpbandits.continual.binary_noise`
    draws the same sequence as a table). ``nodes`` ``(S, L)`` holds the noise of every node
    over the set bits of the stream's count (0 elsewhere); the count's lowest set bit ``t``
    closes the nodes below it and opens node ``t`` with ``noise``, its ``Lap(L b / eps)``
    draw; ``Z_n`` sums the open nodes. The same law as :class:`BinaryMechanism`'s releases
    minus the prefix sums, at a few nanoseconds per item (no node sums of the data are kept).
    ``counts[j]`` is incremented; it must stay below ``2^L``."""
    n = counts[j] + 1
    counts[j] = n
    return binary_noise_row(nodes, j, 0, n, noise)


@inline_kernel
def binary_noise_row(nodes: Any, j: int, first: int, n: int, noise: float) -> float:
    """:func:`binary_noise_push` on stream ``j`` whose node noise is ``nodes[j, first:]`` (its
    levels, to the end of the row) at its count ``n`` (already advanced): for a caller that
    keeps the nodes in a record of its own (DP-UCB's state on the play skeleton)."""
    t = lowest_bit(n)
    for level in range(t):
        nodes[j, first + level] = 0.0
    nodes[j, first + t] = noise
    z = 0.0
    for level in range(first + t, nodes.shape[1]):
        z += nodes[j, level]
    return z


@kernel
def hybrid_add(alpha: Any, alpha_hat: Any, beta: Any, pending: Any, counts: Any,
               sums: Any, release: Any, idx: Any, xs: Any, eta: Any, nu: Any, b: float,
               eps: float) -> None:  # fmt: skip
    """:meth:`HybridMechanism.add` on streams ``idx`` (distinct, in this order) with items
    ``xs``; ``alpha``/``alpha_hat`` level-major ``(levels, S)``, at least ``k`` levels for
    every epoch ``k`` reached.  ``eta``: the ``Lap(2b/eps)`` of the streams that reach a power
    of two, ``nu``: ``Lap(1)`` (times ``2kb/eps``) of the others, each in the order of
    ``idx``."""
    n_lev = alpha.shape[0]
    scratch = np.empty(n_lev)
    n_new = 0
    for i in range(idx.shape[0]):  # logarithmic part at powers of two
        j = idx[i]
        n = counts[j] + 1
        if n == 1 << top_bit(n):
            beta[j] += pending[j] + xs[i] + eta[n_new]
            pending[j] = 0.0
            alpha[:, j] = 0.0
            alpha_hat[:, j] = 0.0
            n_new += 1
    n_old = 0
    for i in range(idx.shape[0]):  # binary part of epoch k on m = n - 2^k
        j = idx[i]
        n = counts[j] + 1
        k = top_bit(n)
        m = n - (1 << k)
        if m == 0:
            continue
        pending[j] += xs[i]
        t = lowest_bit(m)
        # numpy summed the (levels, streams) array over axis 0: pairwise for one stream only
        alpha_t = tree_absorb(alpha[:, j], n_lev, t, xs[i], scratch, nu.shape[0] == 1)
        alpha_hat[:t, j] = 0.0
        alpha[t, j] = alpha_t
        alpha_hat[t, j] = alpha_t + nu[n_old] * (2.0 * k * b / eps)
        n_old += 1
    for i in range(idx.shape[0]):
        j = idx[i]
        n = counts[j] + 1
        m = n - (1 << top_bit(n))
        release[j] = beta[j] + node_release(alpha_hat[:, j], n_lev, m, scratch,
                                            idx.shape[0] == 1, False)  # fmt: skip
        counts[j] = n
        sums[j] += xs[i]


@kernel
def hybrid_add_lockstep(alpha: Any, alpha_hat: Any, beta: Any, pending: Any, counts: Any,
                        sums: Any, release: Any, xs: Any, noise: Any, b: float,
                        eps: float) -> None:  # fmt: skip
    """:meth:`HybridMechanism.add` when every stream advances from the same count (the
    lockstep path: its node sums run over the first ``t`` levels and the set bits only);
    ``noise[j]`` is stream ``j``'s ``Lap(2b/eps)`` at a power of two, else its ``Lap(1)``."""
    s = xs.shape[0]
    n = counts[0] + 1
    k = top_bit(n)
    m = n - (1 << k)
    if m == 0:
        for j in range(s):
            beta[j] += pending[j] + xs[j] + noise[j]
            pending[j] = 0.0
            release[j] = beta[j]
        alpha[:, :] = 0.0
        alpha_hat[:, :] = 0.0
    else:
        n_lev = alpha.shape[0]
        scratch = np.empty(n_lev)
        t = lowest_bit(m)
        scale = 2.0 * k * b / eps
        for j in range(s):
            pending[j] += xs[j]
            alpha_t = tree_absorb(alpha[:, j], t, t, xs[j], scratch, s == 1)
            alpha_hat[:t, j] = 0.0
            alpha[t, j] = alpha_t
            alpha_hat[t, j] = alpha_t + noise[j] * scale
            release[j] = beta[j] + node_release(alpha_hat[:, j], n_lev, m, scratch, s == 1, True)
    for j in range(s):
        counts[j] = n
        sums[j] += xs[j]


# --------------------------------------------------------------------------------------------
# private means for agents
# --------------------------------------------------------------------------------------------


@kernel
def means_push(counts: Any, sums: Any, means: Any, noise: Any, shift: int, mask: int,
               gamma: float, i: int, x: float) -> None:  # fmt: skip
    """One pull of stream ``i`` (``r K + a``) with reward ``x`` (clipped to ``[lo, hi]``):
    ``n += 1``, ``S_n = S_{n-1} + x``, mean ``(S_n + Z_n) / n`` (App. H).

    ``counts``/``sums``/``means`` are :class:`PrivateMeans`' flat state, ``noise``/``shift``/
    ``mask`` its :class:`~dpbandits.continual.tree_noise.HybridNoiseBlocks` (``buf_flat``,
    ``shift``,
    ``mask``), which must hold ``Z_n`` (its ``reserve``); ``gamma > 0`` snaps ``x`` to the grid
    ``gamma Z`` first (``noise="discrete"``: ``rint(x / gamma) * gamma``), 0 leaves it.
    """
    if gamma > 0.0:
        x = np.rint(x / gamma) * gamma
    n = counts[i] + 1
    s = sums[i] + x
    counts[i] = n
    sums[i] = s
    means[i] = (s + noise_at(noise, shift, mask, i, n)) / n


@kernel
def means_update(counts: Any, sums: Any, means: Any, noise: Any, shift: int, mask: int,
                 gamma: float, flat: Any, x: Any) -> None:  # fmt: skip
    """:func:`means_push` of stream ``flat[r]`` with reward ``x[r]`` for every replication."""
    for r in range(flat.shape[0]):
        means_push(counts, sums, means, noise, shift, mask, gamma, flat[r], x[r])


@kernel
def means_value(means: Any, i: int, lo: float, hi: float, clip: bool) -> float:
    """The released mean of stream ``i``, clipped to ``[lo, hi]`` if ``clip`` (``np.clip``)."""
    m = means[i]
    return min(max(m, lo), hi) if clip else m


@kernel
def means_clipped(means: Any, lo: float, hi: float, out: Any) -> None:
    """``out[i] = clip(means[i], lo, hi)`` for every stream (``out`` flat, same size)."""
    for i in range(means.shape[0]):
        out[i] = means_value(means, i, lo, hi, True)
