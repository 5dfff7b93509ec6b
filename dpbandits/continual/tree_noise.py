"""Noise of the binary and hybrid mechanisms drawn ahead of the data (App. H): tables and blocks.

The noise a tree mechanism adds at count ``n`` does not depend on the data, so the release is
``S_n + Z_n`` with ``Z_1..Z_N`` drawn at once.  This module draws it vectorised:
:func:`noise_table` (whole tables, also as ``hybrid_noise`` and ``binary_noise``) and
:class:`HybridNoiseBlocks` (the hybrid sequence drawn lazily in aligned blocks, for
:class:`dpbandits.continual.PrivateMeans`).

Node noise comes from a *node sampler*: :class:`LaplaceNodes` (continuous Laplace, the default)
or :class:`GridLaplaceNodes` (discrete Laplace on a power-of-two grid, floating-point safe, see
:mod:`dpbandits.continual.grid_noise`).  A sampler draws node noises of scale ``s`` as numbers of
*units*
(``units(rng, size, s)``) and says what one unit is worth (``unit(s)``); the tree code sums
units and multiplies once, so both samplers share one code path.  For the grid sampler the units
are integers and one unit is ``gamma``: every sum is an exact multiple of ``gamma``.

Useful fact for the vectorised tables: in the dyadic decomposition, node ``(l, q-1)`` is used
exactly for the ``m`` with ``m >> l == q`` odd, i.e. for the ``2^l`` consecutive values
``m in [q 2^l, (q+1) 2^l)``.  So each level contributes a piecewise-constant sequence that is
built by adding each node to its run of ``2^l`` rows (the compiled :func:`dyadic_add`; the
Python loops run over epochs and cache-sized blocks of ``n`` only).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.continual.node_samplers import (
    LAPLACE_NODES,
    GridLaplaceNodes,
    LaplaceNodes,
    NodeSampler,
    laplace_unit,
)
from dpbandits.core import checks
from dpbandits.core.arms import HoldsViews
from dpbandits.core.checks import positive_int, positive_number
from dpbandits.core.jit import kernel, pairwise_sum

__all__ = [
    "LAPLACE_NODES",
    "MAX_EPOCH",
    "GridLaplaceNodes",
    "HybridNoiseBlocks",
    "LaplaceNodes",
    "NodeSampler",
    "binary_noise",
    "block_store",
    "dyadic_add",
    "floor_log2",
    "hybrid_noise",
    "laplace_unit",
    "level_sum",
    "lowest_bit",
    "node_release",
    "noise_at",
    "noise_current",
    "noise_lookup",
    "noise_table",
    "top_bit",
    "trailing_zeros",
    "tree_absorb",
]

#: Largest epoch index k of the hybrid mechanism for int64 counts (n < 2^63); its binary part
#: draws node noise of scale 2 k b / eps, which :func:`dpbandits.core.checks.noise_scale` bounds.
MAX_EPOCH = 63


def floor_log2(n: NDArray[np.int64]) -> NDArray[np.int64]:
    """floor(log2 n) for integers 1 <= n < 2^53, exactly (frexp is exact)."""
    return (np.frexp(n.astype(np.float64))[1] - 1).astype(np.int64)


def trailing_zeros(m: NDArray[np.int64]) -> NDArray[np.int64]:
    """Index of the lowest set bit of m >= 1."""
    return floor_log2(m & -m)


# --------------------------------------------------------------------------------------------
# compiled tree arithmetic (dpbandits.core.jit), shared by the streaming mechanisms and PrivateMeans
# --------------------------------------------------------------------------------------------


@kernel
def lowest_bit(m: int) -> int:
    """Index of the lowest set bit of ``m >= 1`` (the tree level a new item completes)."""
    t = 0
    while not (m >> t) & 1:
        t += 1
    return t


@kernel
def top_bit(n: int) -> int:
    """``floor(log2 n)`` of an integer ``n >= 1`` (the epoch of the hybrid mechanism)."""
    k = 0
    while n >> (k + 1):
        k += 1
    return k


@kernel
def level_sum(a: Any, n: int, pairwise: bool) -> float:
    """``a[:n].sum()`` in numpy's order of operations (a 1-D float64 array, ``n <= 128``).

    numpy's ``add.reduce`` starts from 0.0 and, along a contiguous axis of the reduced array
    (``(S, L).sum(axis=1)``, or any axis with a single other element), adds numpy's pairwise
    sum (``pairwise=True``); along a non-contiguous axis (``(L, S).sum(axis=0)``, ``S > 1``)
    it adds the terms one by one (``pairwise=False``).  The mechanisms sum tree levels both
    ways; the tests check each against numpy.
    """
    if pairwise:
        return 0.0 + pairwise_sum(a, 0, n)
    res = 0.0
    for i in range(n):
        res += a[i]
    return res


@kernel
def tree_absorb(alpha: Any, n_levels: int, t: int, x: float, scratch: Any,
                pairwise: bool) -> float:  # fmt: skip
    """The exact sum of the node a new item ``x`` completes at level ``t`` of a binary tree
    (the binary mechanism's step, App. H): the nodes below level ``t`` plus ``x``, those nodes
    then cleared.  ``alpha`` holds one stream's node sums by level (a 1-D view);
    ``np.where(levels < t, alpha, 0.0).sum() + x`` over the first ``n_levels`` levels, summed
    as :func:`level_sum` with ``pairwise`` (``scratch``: at least ``n_levels`` floats)."""
    for lev in range(n_levels):
        scratch[lev] = alpha[lev] if lev < t else 0.0
    total = level_sum(scratch, n_levels, pairwise) + x
    for lev in range(t):
        alpha[lev] = 0.0
    return total


@kernel
def node_release(alpha_hat: Any, n_levels: int, m: int, scratch: Any, pairwise: bool,
                 compact: bool) -> float:  # fmt: skip
    """The binary mechanism's release at ``m``: the noisy nodes ``alpha_hat`` (one stream, by
    level) over the set bits of ``m``, summed as :func:`level_sum` with ``pairwise``, either
    ``np.where(bits, alpha_hat, 0.0).sum()`` over ``n_levels`` levels or, ``compact``, the sum
    of ``alpha_hat[bits]`` (the set bits only; the order matters for a pairwise sum)."""
    count = 0
    for lev in range(n_levels):
        if (m >> lev) & 1:
            scratch[count] = alpha_hat[lev]
            count += 1
        elif not compact:
            scratch[count] = 0.0
            count += 1
    return level_sum(scratch, count, pairwise)


@kernel
def noise_at(buf: Any, shift: int, mask: int, stream: int, n: int) -> float:
    """``Z_n`` of ``stream`` held by :class:`HybridNoiseBlocks` (``buf`` its ``buf_flat``,
    ``shift``/``mask`` its attributes): column ``n % 2B`` of the stream's two slots."""
    return buf[(stream << shift) | (n & mask)]


@kernel
def noise_lookup(buf: Any, shift: int, mask: int, flat: Any, n: Any, out: Any) -> None:
    """``out[i] = Z_{n[i]}`` of stream ``flat[i]`` (:func:`noise_at` for each)."""
    for i in range(flat.shape[0]):
        out[i] = noise_at(buf, shift, mask, flat[i], n[i])


@kernel
def noise_current(buf: Any, shift: int, mask: int, counts: Any, out: Any) -> None:
    """``out[s] = Z_{counts[s]}`` of every stream, 0 where the count is 0."""
    for s in range(counts.shape[0]):
        out[s] = noise_at(buf, shift, mask, s, counts[s]) if counts[s] > 0 else 0.0


# --------------------------------------------------------------------------------------------
# vectorised noise tables
# --------------------------------------------------------------------------------------------


def add_dyadic_units(
    out: NDArray[np.float64], n_levels: int, m_max: int, rng: Any, nodes: NodeSampler, scale: Any
) -> None:
    """Add dyadic node noise, in units, to ``out`` (time-major, shape ``(2**n_levels, S)``).

    After the call ``out[m]`` (for ``0 <= m <= m_max``) has gained, for each of the ``S``
    streams, the sum of independent node noises of scale ``scale`` (a float or one per stream,
    shape ``(S,)``) over the set bits ``l`` of ``m``, node ``(l, (m >> l) - 1)``, counted in
    units of ``nodes.unit(scale)``.  Only the nodes used by some ``m <= m_max`` are drawn; rows
    ``m > m_max`` are unspecified.  Time-major so that each node is added to contiguous rows
    of ``S`` values (the low levels have runs of length 1, 2, 4, ...).
    """
    s = out.shape[1]
    # odd q in [1, m_max >> l]: node (l, q - 1) serves m in [q 2^l, (q+1) 2^l)
    n_odd = np.array([((m_max >> level) + 1) // 2 for level in range(n_levels)], dtype=np.int64)
    # one draw for all levels (fewer small calls)
    drawn = nodes.units(rng, (int(n_odd.sum()), s), scale)
    dyadic_add(out, drawn, n_odd)


@kernel
def dyadic_add(out: Any, drawn: Any, n_odd: Any) -> None:
    """``out[m] += drawn[start_l + q]`` for every level ``l`` (in increasing order) and the
    ``2^l`` rows ``m in [(2q+1) 2^l, (2q+2) 2^l)`` of node ``q < n_odd[l]``, ``start_l`` the
    nodes of the levels below: each row adds its nodes level by level, as the broadcast adds
    of one level after another did."""
    start = 0
    for level in range(n_odd.shape[0]):
        width = 1 << level
        for q in range(n_odd[level]):
            node = drawn[start + q]
            first = (2 * q + 1) * width
            for m in range(first, first + width):
                row = out[m]
                for j in range(row.shape[0]):
                    row[j] += node[j]
        start += n_odd[level]


def dyadic_blocks(
    n_streams: int, n_levels: int, m_max: int, rng: Any, nodes: NodeSampler, scale: float
) -> Iterator[tuple[int, NDArray[np.float64]]]:
    """Dyadic node sums (in units) for ``m = 0..m_max``, time-major, in cache-sized blocks.

    Yields ``(m0, block)`` with ``block[r]`` (shape ``(S,)``) the node-noise sum at
    ``m = m0 + r``.  Blocks have ``2^c`` rows: nodes at levels ``l < c`` live inside one block
    and are drawn per block; nodes at levels ``l >= c`` are constant over whole blocks and come
    from a coarse tree on the block index ``j = m >> c`` (bit ``l`` of ``m`` is bit ``l - c``
    of ``j``).  Same joint distribution as one :func:`add_dyadic_units` over all ``m``, with
    about two passes over memory instead of one per level.
    """
    c = min(n_levels, _block_levels(n_streams))
    coarse = np.zeros((1 << (n_levels - c), n_streams))
    add_dyadic_units(coarse, n_levels - c, m_max >> c, rng, nodes, scale)
    size = 1 << c
    for j in range((m_max >> c) + 1):
        rows = min(size, m_max + 1 - (j << c))
        block = np.zeros((size, n_streams))
        add_dyadic_units(block, c, rows - 1, rng, nodes, scale)
        block += coarse[j]
        yield j << c, block[:rows]


def _block_levels(n_streams: int) -> int:
    """Rows per block ``2^c`` so that a block holds about 2^17 floats (1 MB, cache sized)."""
    return max(4, min(16, ((1 << 17) // max(n_streams, 1)).bit_length() - 1))


def hybrid_table(
    n_streams: int,
    n_max: int,
    epsilon: float,
    sensitivity: float,
    rng: Any,
    nodes: NodeSampler = LAPLACE_NODES,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Hybrid noise ``Z_1..Z_n_max`` for ``n_streams`` streams, and the last log-part sum.

    Returns ``(table (S, n_max), C (S,))`` with ``C = sum_{j <= K} eta_j``, ``K =
    floor(log2 n_max)`` (the logarithmic part's accumulated noise, needed to continue the
    sequence block by block in :class:`HybridNoiseBlocks`).
    """
    s = n_streams
    out = np.empty((s, n_max))
    k_max = int(n_max).bit_length() - 1
    log_scale = 2.0 * sensitivity / epsilon
    # logarithmic part: eta_k drawn at n = 2^k, accumulated
    eta = nodes.units(rng, (k_max + 1, s), log_scale) * nodes.unit(log_scale)
    cum = np.cumsum(eta, axis=0)
    out[:, 0] = cum[0]  # n = 1 = 2^0: epoch 0 has no binary part
    for k in range(1, k_max + 1):
        first = (1 << k) - 1  # 0-based column of n = 2^k
        length = min(1 << k, n_max - (1 << k) + 1)  # values of n of epoch k within range
        bin_scale = 2.0 * k * sensitivity / epsilon
        # binary part of epoch k: k levels on m = n - 2^k in [0, length - 1]
        for m0, block in dyadic_blocks(s, k, length - 1, rng, nodes, bin_scale):
            block *= nodes.unit(bin_scale)
            block += cum[k]
            out[:, first + m0 : first + m0 + block.shape[0]] = block.T
    return out, cum[k_max].copy()


def noise_table(
    mechanism: str,
    count: int,
    epsilon: float,
    sensitivity: float = 1.0,
    size: int | tuple[int, ...] = (),
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.float64]:
    """Noise ``Z_1..Z_count`` of the ``"hybrid"`` or ``"binary"`` mechanism (App. H).

    The release at count ``n`` is ``S_n + Z_n`` and ``Z`` does not depend on the data, so the
    whole sequence is drawn at once for a batch of independent streams.  ``count`` is the
    hybrid mechanism's ``n_max`` or the binary mechanism's horizon ``T``; the two are also
    offered as :data:`hybrid_noise` and :data:`binary_noise` (this function with the mechanism
    bound).  Returns an array of shape ``(*size, count)``; entry ``[..., n - 1]`` is ``Z_n``.

    - ``"hybrid"``: joint distribution identical to
      :class:`dpbandits.continual.HybridMechanism`: ``Z_n = sum_{j<=k} eta_j + sum_{l in
      bits(m)} nu_{k,l,(m>>l)-1}`` with ``k = floor(log2 n)``, ``m = n - 2^k``,
      ``eta ~ Lap(2b/eps)``, ``nu_k ~ Lap(2kb/eps)`` (Chan, Shi, Song).  Vectorised: one
      draw and one compiled pass of node adds per epoch and cache-sized block of counts (see
      :func:`dyadic_blocks`); ``size=(100, 2)``, ``count=50_000`` takes a fraction of a second
      (``benchmarks/bench_continual.py``).
    - ``"binary"``: ``L = floor(log2 T) + 1`` levels, node noise ``Lap(L b / eps)``; ``Z_n`` is
      the sum of the node noises over the set bits of ``n``.  Same joint distribution as
      :class:`dpbandits.continual.BinaryMechanism`.
    """
    if mechanism not in ("hybrid", "binary"):
        raise ValueError(f"mechanism must be 'hybrid' or 'binary', got {mechanism!r}")
    count = positive_int(count, "n_max" if mechanism == "hybrid" else "horizon")
    eps = positive_number(epsilon, "epsilon")
    b = positive_number(sensitivity, "sensitivity")
    shape = checks.size(size)
    gen = checks.generator(rng)
    s = math.prod(shape)
    checks.memory(2 * s * count, f"size * count = {shape} * {count}")
    if mechanism == "hybrid":
        checks.noise_scale(2 * MAX_EPOCH * b, eps, "the hybrid mechanism")
        out, _ = hybrid_table(s, count, eps, b, gen)
    else:
        n_levels = count.bit_length()  # floor(log2 T) + 1
        scale = checks.noise_scale(n_levels * b, eps, "the binary mechanism")
        out = np.empty((s, count))
        for m0, block in dyadic_blocks(s, n_levels, count, gen, LAPLACE_NODES, scale):
            skip = 1 if m0 == 0 else 0  # m = 0 is not a release
            out[:, m0 + skip - 1 : m0 + block.shape[0] - 1] = block[skip:].T * scale
    return out.reshape(shape + (count,))


#: ``hybrid_noise(n_max, epsilon, sensitivity=1.0, size=(), rng=None)``: :func:`noise_table`
#: of the hybrid mechanism (unknown horizon; draws ``Z_1..Z_n_max``).
hybrid_noise = functools.partial(noise_table, "hybrid")
hybrid_noise.__doc__ = "Noise ``Z_1..Z_n_max`` of the hybrid mechanism: see :func:`noise_table`."
#: ``binary_noise(horizon, epsilon, sensitivity=1.0, size=(), rng=None)``: :func:`noise_table`
#: of the binary mechanism with known horizon ``T`` (draws ``Z_1..Z_T``).
binary_noise = functools.partial(noise_table, "binary")
binary_noise.__doc__ = "Noise ``Z_1..Z_T`` of the binary mechanism: see :func:`noise_table`."


# --------------------------------------------------------------------------------------------
# lazily drawn hybrid noise (PrivateMeans)
# --------------------------------------------------------------------------------------------


@kernel
def block_store(buf: Any, idx: Any, j: Any, low: Any, unit: Any, base: Any) -> None:
    """``buf[idx[c], (j[c] % 2) B + r] = low[r, c] * unit[c] + base[c]``: the new block ``j[c]``
    of stream ``idx[c]`` (node units ``low``, time-major) written into its slot."""
    bsz = low.shape[0]
    for c in range(idx.shape[0]):
        row = buf[idx[c]]
        off = (j[c] & 1) * bsz
        for r in range(bsz):
            row[off + r] = low[r, c] * unit[c] + base[c]


# Largest number of tree levels we ever need: counts are int64, so m < 2^63.
_MAX_LEVELS = 63


class HybridNoiseBlocks(HoldsViews):
    """Hybrid noise ``Z_n`` for many streams, drawn lazily in aligned blocks of ``B = 2^b`` counts.

    Block ``j`` holds ``Z_n`` for ``n in [jB, (j+1)B)`` of one stream.  Block 0 is
    :func:`hybrid_noise` for ``n < B``.  For ``j >= 1`` the block lies inside one epoch
    ``k >= b`` (powers of two ``>= B`` are multiples of ``B``) and ``m = n - 2^k`` runs over
    ``[m0, m0 + B)``, ``m0`` a multiple of ``B``.  Then ``Z_n = C_k + H + nu_low(m - m0)``:
    ``C_k`` the accumulated logarithmic noise, ``H`` the sum of the epoch's nodes at levels
    ``>= b`` over the set bits of ``m0`` (constant in the block), and ``nu_low`` fresh nodes at
    levels ``< b`` (they never straddle two blocks), drawn with the table code.  Moving from
    block ``j`` to ``j + 1`` inside an epoch, the set bits of ``m0`` at levels ``b <= l < t``
    (``t`` = trailing zeros of the new ``m0``) clear and level ``t`` gets a fresh node -- the
    streaming binary mechanism's state change.  The joint distribution is therefore that of
    :func:`hybrid_noise` (with the node sampler ``nodes``).

    Two slots per stream (block ``j`` lives in slot ``j % 2``, so ``Z_n`` sits at column
    ``n % 2B``): the next block is generated while the current one is in use, and generation is
    batched over all streams that have a free slot.  Memory ``2 S B`` floats whatever the
    horizon; a batch happens about once every ``B`` steps.  Counts never exceed ``n_max``
    (``limit_name`` names it in the error).
    """

    def __init__(
        self,
        n_streams: int,
        epsilon: float,
        sensitivity: float,
        block: int,
        rng: Any,
        n_max: int | None = None,
        nodes: NodeSampler = LAPLACE_NODES,
        limit_name: str = "n_max",
    ) -> None:
        # counts never exceed n_max: no block starting beyond it is ever generated
        self.limit = np.iinfo(np.int64).max // 4 if n_max is None else n_max
        self.limit_name = limit_name
        self.eps = epsilon
        self.b = sensitivity
        self.block = block
        self.log_block = block.bit_length() - 1
        self.mask = 2 * block - 1
        self.rng = rng
        self.nodes = nodes
        table, cum = hybrid_table(n_streams, block - 1, epsilon, sensitivity, rng, nodes)
        self.buf = np.empty((n_streams, 2 * block))
        self.buf[:, 0] = 0.0  # n = 0 is never released
        self.buf[:, 1:block] = table
        self.gen = np.zeros(n_streams, dtype=np.int64)  # latest generated block per stream
        self.cum = cum  # sum of eta_j up to the epoch of the latest generated block
        self.high = np.zeros((n_streams, _MAX_LEVELS))  # high-level nodes, latest block
        self.safe = 0  # calls of ``at`` that surely need no new block (see ``at``)
        self._make_views()
        self.shift = self.log_block + 1

    @staticmethod
    def peak_nbytes(n_streams: int, block: int, nodes: NodeSampler = LAPLACE_NODES) -> int:
        """Bytes held at the peak of the life of ``n_streams`` streams of blocks of ``block``
        counts with node sampler ``nodes`` -- the peak ``tracemalloc`` measures over the
        constructor and the first refill (:meth:`generate`), what a caller checks against the
        machine's memory before building one (:class:`dpbandits.continual.PrivateMeans`).

        Per stream: always the two slots (``buf``, ``2 block`` float64), the high-level nodes
        (63 float64) and two counters; in the constructor, the first block's table (``block -
        1`` float64, alive while it is copied in); at a refill, which the first step makes,
        the new block's node units (``block`` float64), a copy of the high-level nodes, and the
        ``block - 1`` node draws at ``nodes.draw_itemsize`` bytes each (3x a float64 for the
        discrete sampler's two exponentials and their difference)."""
        held = 2 * block + _MAX_LEVELS + 2
        construction = 8 * (held + block)
        refill = 8 * (held + block + _MAX_LEVELS) + nodes.draw_itemsize * block
        return n_streams * max(construction, refill)

    _views = ("buf_flat",)

    def _make_views(self) -> None:
        self.buf_flat = self.buf.reshape(-1)  # Z_n of stream s at s 2B + n % 2B

    def generate(self, idx: NDArray[np.intp]) -> None:
        """Generate the next block of streams ``idx`` (distinct) into their free slot."""
        bsz, lb, nodes = self.block, self.log_block, self.nodes
        j = self.gen[idx] + 1
        n0 = j << lb
        k = floor_log2(n0)
        m0 = n0 - (np.int64(1) << k)
        new = m0 == 0
        if new.any():  # a new epoch: log part gets eta_k, binary part starts empty
            i_new = idx[new]
            log_scale = 2.0 * self.b / self.eps
            self.cum[i_new] += nodes.units(self.rng, i_new.size, log_scale) * nodes.unit(log_scale)
            self.high[i_new] = 0.0
        scale = 2.0 * k * self.b / self.eps
        if not new.all():
            old = ~new
            i_old = idx[old]
            t = trailing_zeros(m0[old])
            high = self.high[i_old]
            high[np.arange(_MAX_LEVELS) < t[:, None]] = 0.0
            s_old = scale[old]
            high[np.arange(i_old.size), t] = nodes.units(self.rng, i_old.size, s_old) * nodes.unit(
                s_old
            )
            self.high[i_old] = high
        low = np.zeros((bsz, idx.size))
        add_dyadic_units(low, lb, bsz - 1, self.rng, nodes, scale)
        unit = np.broadcast_to(np.asarray(nodes.unit(scale), dtype=np.float64), idx.shape)
        # slot j % 2 of each stream: Z = low units * unit + (C_k + H), as numpy computed it
        block_store(self.buf, idx, j, low, unit, self.cum[idx] + self.high[idx].sum(axis=1))
        self.gen[idx] = j

    def at(
        self, flat: NDArray[np.intp], n: NDArray[np.int64], counts: NDArray[np.int64]
    ) -> NDArray[np.float64]:
        """``Z_n`` of streams ``flat`` (distinct) at their new counts ``n``.

        ``counts`` holds the counts of *all* streams before this call (``n`` replaces them for
        ``flat``).  Every count grows by at most one per call, so ``min(end of generated data -
        count)`` drops by at most one per call: while it is > 1 nothing needs generating and
        the check is skipped.  Raises ValueError, changing nothing, if a count passes n_max.
        """
        self.reserve(flat, n, counts)
        out = np.empty(flat.shape[0])
        noise_lookup(self.buf_flat, self.shift, self.mask, flat, n, out)
        return out

    def reserve(
        self, flat: NDArray[np.intp], n: NDArray[np.int64] | None, counts: NDArray[np.int64]
    ) -> None:
        """Make ``Z_n`` of streams ``flat`` at their new counts ``n`` (``None``: ``counts[flat]
        + 1``) readable by :func:`noise_at`: the bookkeeping of :meth:`at` without the lookup,
        for compiled callers that read ``buf_flat`` themselves.  While :attr:`safe` > 1 this is
        one decrement; a caller may take :attr:`safe` - 1 steps at once by decrementing it."""
        if self.safe > 1:
            self.safe -= 1
            return
        new = counts.copy()
        if n is None:
            new[flat] += 1
        else:
            new[flat] = n
        self._refill(new)

    def current(self, counts: NDArray[np.int64]) -> NDArray[np.float64]:
        """``Z_n`` of every stream at its count ``n = counts[s]`` as last passed to :meth:`at`
        (still held: the slot of a stream's current block is never the one being refilled);
        0 where the count is 0."""
        out = np.empty(counts.size)
        noise_current(self.buf_flat, self.shift, self.mask, counts, out)
        return out

    def _refill(self, counts: NDArray[np.int64]) -> None:
        lb = self.log_block
        if counts.max() > self.limit:
            self.safe = 0  # nothing changed; check again next time
            raise ValueError(f"an arm was pulled more than {self.limit_name}={self.limit} times")
        while True:  # a stream past its generated data (only if counts jump): catch up
            behind = np.flatnonzero(counts >= (self.gen + 1) << lb)
            if behind.size == 0:
                break
            self.generate(behind)
        # every stream whose latest block is its current one has a free slot: fill it now
        free = np.flatnonzero((self.gen == counts >> lb) & ((self.gen + 1) << lb <= self.limit))
        if free.size:
            self.generate(free)
        end = (self.gen + 1) << lb
        end[end > self.limit] = self.limit + 1  # no count goes past the limit
        self.safe = int((end - counts).min())
