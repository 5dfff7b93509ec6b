"""Private running sums by continual release: binary and hybrid mechanisms (App. H).

The private agents of App. H release, after every pull of arm ``a``, a private prefix sum of that
arm's rewards; the final number of pulls is unknown, so the paper uses the *hybrid mechanism* of
Chan, Shi and Song (2010/2011).  This module offers

- :class:`BinaryMechanism` (known horizon ``T``) and :class:`HybridMechanism` (unknown horizon):
  streaming objects that follow the definitions step by step on a batch of independent streams;
  ``add(x, mask)`` advances only the streams selected by ``mask`` (a bandit rewards one arm);
- :func:`binary_noise` and :func:`hybrid_noise`: the data-independent noise ``Z_1..Z_N`` (release
  ``= S_n + Z_n``) drawn at once, vectorised, with exactly the joint distribution of the streaming
  objects;
- :class:`PrivateMeans`: per-(replication, arm) private means for agents, O(R) numpy per step.

Conventions (App. H).  Items ``x_1, x_2, ...`` with ``|x_i - x_i'| <= b`` (``b`` =
``sensitivity``).  Node ``(l, i)`` of a binary tree covers items ``(i 2^l, (i+1) 2^l]``; the
release at ``n`` sums the nodes of the dyadic decomposition of ``[1, n]``: node
``(l, (n >> l) - 1)`` for every set bit ``l`` of ``n``.

- Binary mechanism, horizon ``T``: ``L = floor(log2 T) + 1`` levels (not ``ceil``: a tree with
  ``ceil(log2 T)`` levels cannot release at ``t = T`` when ``T`` is a power of two), node noise
  ``Lap(L b / eps)``; each item lies in at most one node per level, so it is eps-DP.
- Hybrid mechanism, ``eps/2 + eps/2``: the logarithmic part draws ``eta_k ~ Lap(2b/eps)`` at
  ``n = 2^k`` and releases ``L_k = S_{2^k} + sum_{j<=k} eta_j``; epoch ``k`` (items
  ``2^k+1 .. 2^{k+1}-1``, ``m = n - 2^k``) runs a binary mechanism with ``k`` levels and node noise
  ``Lap(2kb/eps)``; the release at ``n`` is ``L_k`` if ``n = 2^k``, else ``L_k + B_k(m)``.
  ``Var Z_n = (k+1) 2 (2b/eps)^2 + popcount(m) 2 (2kb/eps)^2`` with ``k = floor(log2 n)``.

Useful fact for the vectorised tables: in the dyadic decomposition, node ``(l, q-1)`` is used
exactly for the ``m`` with ``m >> l == q`` odd, i.e. for the ``2^l`` consecutive values
``m in [q 2^l, (q+1) 2^l)``.  So each level contributes a piecewise-constant sequence that is
built by one broadcast add per level, without a Python loop over ``n`` (loops run over tree
levels, epochs and cache-sized blocks of ``n`` only).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import checks
from dpbandits.arms import RunArms
from dpbandits.checks import positive_int, positive_number

#: Largest epoch index k of the hybrid mechanism for int64 counts (n < 2^63); its binary part
#: draws node noise of scale 2 k b / eps, which :func:`dpbandits.checks.noise_scale` bounds.
_MAX_EPOCH = 63

__all__ = [
    "BinaryMechanism",
    "HybridMechanism",
    "PrivateMeans",
    "binary_noise",
    "hybrid_noise",
]

# Largest number of tree levels we ever need: counts are int64, so m < 2^63.
_MAX_LEVELS = 63
# PrivateMeans' noise blocks: the default, and the smallest size chosen from n_max / K.
_DEFAULT_BLOCK = 2048
_MIN_AUTO_BLOCK = 64


def _floor_log2(n: NDArray[np.int64]) -> NDArray[np.int64]:
    """floor(log2 n) for integers 1 <= n < 2^53, exactly (frexp is exact)."""
    return (np.frexp(n.astype(np.float64))[1] - 1).astype(np.int64)


def _trailing_zeros(m: NDArray[np.int64]) -> NDArray[np.int64]:
    """Index of the lowest set bit of m >= 1."""
    return _floor_log2(m & -m)


# --------------------------------------------------------------------------------------------
# vectorised noise tables
# --------------------------------------------------------------------------------------------


def _laplace(rng: np.random.Generator, size: int | tuple[int, ...]) -> NDArray[np.float64]:
    """Standard Laplace draws (scale 1): ``E * S``, ``E ~ Exp(1)``, ``S`` a fair random sign.

    Exactly Laplace-distributed and about twice as fast as ``Generator.laplace`` (ziggurat
    exponentials plus one random byte per draw), which matters for the 10^7 node noises of a
    full table.
    """
    e = rng.standard_exponential(size)
    sign = rng.integers(0, 2, size=e.shape, dtype=np.int8)
    sign *= 2
    sign -= 1
    e *= sign
    return e


def _add_dyadic_unit(out: NDArray[np.float64], n_levels: int, m_max: int, rng: Any) -> None:
    """Add unit-scale dyadic node noise to ``out`` (time-major, shape ``(2**n_levels, S)``).

    After the call ``out[m]`` (for ``0 <= m <= m_max``) has gained, for each of the ``S``
    streams, the sum of independent ``Lap(1)`` node noises over the set bits ``l`` of ``m``,
    node ``(l, (m >> l) - 1)``.  Only the nodes used by some ``m <= m_max`` are drawn; rows
    ``m > m_max`` are unspecified.  Time-major so that the broadcast add of each level runs
    over contiguous rows of ``S`` values (the low levels have runs of length 1, 2, 4, ...).
    """
    s = out.shape[1]
    # odd q in [1, m_max >> l]: node (l, q - 1) serves m in [q 2^l, (q+1) 2^l)
    n_odd = [((m_max >> level) + 1) // 2 for level in range(n_levels)]
    nodes = _laplace(rng, (sum(n_odd), 1, s))  # one draw for all levels (fewer small calls)
    start = 0
    for level in range(n_levels):
        if n_odd[level] == 0:
            continue
        view = out.reshape(1 << (n_levels - level - 1), 2, 1 << level, s)
        view[: n_odd[level], 1] += nodes[start : start + n_odd[level]]
        start += n_odd[level]


def _dyadic_blocks(
    n_streams: int, n_levels: int, m_max: int, rng: Any
) -> Iterator[tuple[int, NDArray[np.float64]]]:
    """Unit-scale dyadic node sums for ``m = 0..m_max``, time-major, in cache-sized blocks.

    Yields ``(m0, block)`` with ``block[r]`` (shape ``(S,)``) the node-noise sum at
    ``m = m0 + r``.  Blocks have ``2^c`` rows: nodes at levels ``l < c`` live inside one block
    and are drawn per block; nodes at levels ``l >= c`` are constant over whole blocks and come
    from a coarse tree on the block index ``j = m >> c`` (bit ``l`` of ``m`` is bit ``l - c``
    of ``j``).  Same joint distribution as one :func:`_add_dyadic_unit` over all ``m``, with
    about two passes over memory instead of one per level.
    """
    c = min(n_levels, _block_levels(n_streams))
    coarse = np.zeros((1 << (n_levels - c), n_streams))
    _add_dyadic_unit(coarse, n_levels - c, m_max >> c, rng)
    size = 1 << c
    for j in range((m_max >> c) + 1):
        rows = min(size, m_max + 1 - (j << c))
        block = np.zeros((size, n_streams))
        _add_dyadic_unit(block, c, rows - 1, rng)
        block += coarse[j]
        yield j << c, block[:rows]


def _block_levels(n_streams: int) -> int:
    """Rows per block ``2^c`` so that a block holds about 2^17 floats (1 MB, cache sized)."""
    return max(4, min(16, ((1 << 17) // max(n_streams, 1)).bit_length() - 1))


def _hybrid_table(
    n_streams: int, n_max: int, epsilon: float, sensitivity: float, rng: Any
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Hybrid noise ``Z_1..Z_n_max`` for ``n_streams`` streams, and the last log-part sum.

    Returns ``(table (S, n_max), C (S,))`` with ``C = sum_{j <= K} eta_j``, ``K =
    floor(log2 n_max)`` (the logarithmic part's accumulated noise, needed to continue the
    sequence block by block in :class:`_HybridNoiseBlocks`).
    """
    s = n_streams
    out = np.empty((s, n_max))
    k_max = int(n_max).bit_length() - 1
    log_scale = 2.0 * sensitivity / epsilon
    # logarithmic part: eta_k drawn at n = 2^k, accumulated
    cum = np.cumsum(_laplace(rng, (k_max + 1, s)) * log_scale, axis=0)
    out[:, 0] = cum[0]  # n = 1 = 2^0: epoch 0 has no binary part
    for k in range(1, k_max + 1):
        first = (1 << k) - 1  # 0-based column of n = 2^k
        length = min(1 << k, n_max - (1 << k) + 1)  # values of n of epoch k within range
        bin_scale = 2.0 * k * sensitivity / epsilon
        # binary part of epoch k: k levels on m = n - 2^k in [0, length - 1]
        for m0, block in _dyadic_blocks(s, k, length - 1, rng):
            block *= bin_scale
            block += cum[k]
            out[:, first + m0 : first + m0 + block.shape[0]] = block.T
    return out, cum[k_max].copy()


def hybrid_noise(
    n_max: int,
    epsilon: float,
    sensitivity: float = 1.0,
    size: int | tuple[int, ...] = (),
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.float64]:
    """Noise ``Z_1..Z_n_max`` of the hybrid mechanism (Chan, Shi, Song; App. H; App. H).

    The hybrid release at count ``n`` is ``S_n + Z_n`` and ``Z`` does not depend on the data, so
    the whole sequence is drawn at once for a batch of independent streams.  Joint distribution
    identical to :class:`HybridMechanism`: ``Z_n = sum_{j<=k} eta_j + sum_{l in bits(m)}
    nu_{k,l,(m>>l)-1}`` with ``k = floor(log2 n)``, ``m = n - 2^k``, ``eta ~ Lap(2b/eps)``,
    ``nu_k ~ Lap(2kb/eps)``.  Vectorised: one broadcast add per tree level, epoch and
    cache-sized block of counts (see :func:`_dyadic_blocks`); ``size=(100, 2)``,
    ``n_max=50_000`` takes a fraction of a second (``benchmarks/bench_continual.py``).

    Returns an array of shape ``(*size, n_max)``; entry ``[..., n - 1]`` is ``Z_n``.
    """
    n_max = positive_int(n_max, "n_max")
    eps = positive_number(epsilon, "epsilon")
    b = positive_number(sensitivity, "sensitivity")
    checks.noise_scale(2 * _MAX_EPOCH * b, eps, "the hybrid mechanism")
    shape = checks.size(size)
    gen = np.random.default_rng(rng)
    table, _ = _hybrid_table(math.prod(shape), n_max, eps, b, gen)
    return table.reshape(shape + (n_max,))


def binary_noise(
    horizon: int,
    epsilon: float,
    sensitivity: float = 1.0,
    size: int | tuple[int, ...] = (),
    rng: np.random.Generator | int | None = None,
) -> NDArray[np.float64]:
    """Noise ``Z_1..Z_T`` of the binary mechanism with known horizon ``T`` (App. H).

    ``L = floor(log2 T) + 1`` levels, node noise ``Lap(L b / eps)``; ``Z_n`` is the sum of the
    node noises over the set bits of ``n``.  Same joint distribution as
    :class:`BinaryMechanism`.  Returns shape ``(*size, T)``; entry ``[..., n - 1]`` is ``Z_n``.
    """
    horizon = positive_int(horizon, "horizon")
    eps = positive_number(epsilon, "epsilon")
    b = positive_number(sensitivity, "sensitivity")
    shape = checks.size(size)
    gen = np.random.default_rng(rng)
    n_levels = horizon.bit_length()  # floor(log2 T) + 1
    checks.noise_scale(n_levels * b, eps, "the binary mechanism")
    s = math.prod(shape)
    out = np.empty((s, horizon))
    scale = n_levels * b / eps
    for m0, block in _dyadic_blocks(s, n_levels, horizon, gen):
        skip = 1 if m0 == 0 else 0  # m = 0 is not a release
        out[:, m0 + skip - 1 : m0 + block.shape[0] - 1] = block[skip:].T * scale
    return out.reshape(shape + (horizon,))


# --------------------------------------------------------------------------------------------
# streaming objects
# --------------------------------------------------------------------------------------------


class _Streams:
    """Shared plumbing: a batch of independent streams of shape ``size`` with masked advance."""

    def __init__(self, epsilon: float, sensitivity: float, size: Any, rng: Any) -> None:
        self.epsilon = positive_number(epsilon, "epsilon")
        self.sensitivity = positive_number(sensitivity, "sensitivity")
        self.size = checks.size(size)
        self._rng = np.random.default_rng(rng)
        s = math.prod(self.size)
        self._n = np.zeros(s, dtype=np.int64)
        self._sum = np.zeros(s)  # exact prefix sums (for introspection and tests only)
        self._release = np.zeros(s)

    @property
    def counts(self) -> NDArray[np.int64]:
        """Number of items each stream has received, shape ``size``."""
        return self._n.reshape(self.size).copy()

    @property
    def sums(self) -> NDArray[np.float64]:
        """Exact (non-private) prefix sums, shape ``size`` -- for tests, never release these."""
        return self._sum.reshape(self.size).copy()

    def _select(self, x: ArrayLike, mask: ArrayLike | None) -> tuple[NDArray[np.intp], Any]:
        xa = np.broadcast_to(np.asarray(x, dtype=np.float64), self.size).reshape(-1)
        if mask is None:
            idx = np.arange(xa.size)
        else:
            m = np.asarray(mask)
            if m.dtype != np.bool_:
                raise TypeError(f"mask must be a boolean array, got dtype {m.dtype}")
            idx = np.flatnonzero(np.broadcast_to(m, self.size))
        xs = xa[idx]
        if not np.all(np.isfinite(xs)):
            raise ValueError("x must be finite (no NaN or inf) for the advancing streams")
        return idx, xs


class BinaryMechanism(_Streams):
    """Binary (tree) mechanism with known horizon ``T`` (Dwork et al. 2010; Chan et al.; App. H).

    ``L = floor(log2 T) + 1`` levels; node ``(l, i)`` holds the exact sum ``alpha`` of items
    ``(i 2^l, (i+1) 2^l]`` plus ``Lap(L b / eps)``; the release at ``n`` sums the noisy nodes
    ``alpha_hat_l`` over the set bits ``l`` of ``n``.  eps-DP for items with ``|x - x'| <= b``.

    ``add(x, mask=None)`` gives one new item to every stream selected by ``mask`` (boolean,
    broadcastable to ``size``; ``None`` = all) and returns the current releases of all streams
    (a stream that has received nothing releases 0).  A release beyond ``T`` raises ValueError.
    """

    def __init__(
        self,
        horizon: int,
        epsilon: float,
        sensitivity: float = 1.0,
        size: int | tuple[int, ...] = (),
        rng: np.random.Generator | int | None = None,
    ) -> None:
        self.horizon = positive_int(horizon, "horizon")
        super().__init__(epsilon, sensitivity, size, rng)
        self.n_levels = self.horizon.bit_length()  # floor(log2 T) + 1
        checks.noise_scale(self.n_levels * self.sensitivity, self.epsilon, "the binary mechanism")
        s = self._n.size
        self._alpha = np.zeros((s, self.n_levels))
        self._alpha_hat = np.zeros((s, self.n_levels))

    def __repr__(self) -> str:
        return (
            f"BinaryMechanism(horizon={self.horizon}, epsilon={self.epsilon}, "
            f"sensitivity={self.sensitivity}, size={self.size})"
        )

    def add(self, x: ArrayLike, mask: ArrayLike | None = None) -> NDArray[np.float64]:
        """Feed one item to the selected streams; return all releases (shape ``size``)."""
        idx, xs = self._select(x, mask)
        n = self._n[idx] + 1
        if idx.size and n.max() > self.horizon:
            raise ValueError(
                f"release beyond the horizon: a stream would reach count {int(n.max())} "
                f"> horizon={self.horizon}"
            )
        t = _trailing_zeros(n)
        levels = np.arange(self.n_levels)
        alpha = self._alpha[idx]
        alpha_hat = self._alpha_hat[idx]
        below = levels < t[:, None]
        rows = np.arange(idx.size)
        # the new node at level t absorbs the completed lower nodes and the new item
        alpha_t = np.where(below, alpha, 0.0).sum(axis=1) + xs
        alpha[below] = 0.0
        alpha_hat[below] = 0.0
        alpha[rows, t] = alpha_t
        scale = self.n_levels * self.sensitivity / self.epsilon
        alpha_hat[rows, t] = alpha_t + self._rng.laplace(scale=scale, size=idx.size)
        bits = (n[:, None] >> levels) & 1
        self._alpha[idx] = alpha
        self._alpha_hat[idx] = alpha_hat
        self._n[idx] = n
        self._sum[idx] += xs
        self._release[idx] = np.where(bits == 1, alpha_hat, 0.0).sum(axis=1)
        return self._release.reshape(self.size).copy()


class HybridMechanism(_Streams):
    """Hybrid mechanism for an unknown horizon (Chan, Shi, Song 2010/2011; App. H; App. H).

    Budget ``eps/2 + eps/2``.  Logarithmic part: at ``n = 2^k``, ``beta <- beta + (items since
    the last power of two) + Lap(2b/eps)`` and ``beta`` is released.  Binary part: epoch ``k``
    (items ``2^k+1 .. 2^{k+1}-1``) runs a binary mechanism with ``k`` levels and node noise
    ``Lap(2kb/eps)`` on ``m = n - 2^k``; release ``beta + sum_{l in bits(m)} alpha_hat_l``.

    ``add(x, mask=None)`` as in :class:`BinaryMechanism`; there is no horizon.
    """

    def __init__(
        self,
        epsilon: float,
        sensitivity: float = 1.0,
        size: int | tuple[int, ...] = (),
        rng: np.random.Generator | int | None = None,
    ) -> None:
        super().__init__(epsilon, sensitivity, size, rng)
        checks.noise_scale(2 * _MAX_EPOCH * self.sensitivity, self.epsilon, "the hybrid mechanism")
        s = self._n.size
        self._beta = np.zeros(s)  # logarithmic release L_k (data + accumulated noise)
        self._pending = np.zeros(s)  # exact sum of the items since the last power of two
        # epoch binary mechanism, level-major (levels, streams), grown as epochs get longer
        self._alpha = np.zeros((1, s))
        self._alpha_hat = np.zeros((1, s))
        self._lockstep = True  # all streams have advanced together so far

    def _add_lockstep(self, x: ArrayLike) -> NDArray[np.float64]:
        """``add`` when every stream advances and all counts are equal (scalar tree position).

        Same arithmetic and the same random draws, in the same order, as the general path
        (the tests check they agree exactly), with the tree position computed once.
        """
        xs = np.broadcast_to(np.asarray(x, dtype=np.float64), self.size).reshape(-1)
        if not np.all(np.isfinite(xs)):
            raise ValueError("x must be finite (no NaN or inf) for the advancing streams")
        s = self._n.size
        n = int(self._n[0]) + 1
        k = n.bit_length() - 1
        m = n - (1 << k)
        if k > self._alpha.shape[0]:
            pad = ((0, k - self._alpha.shape[0]), (0, 0))
            self._alpha = np.pad(self._alpha, pad)
            self._alpha_hat = np.pad(self._alpha_hat, pad)
        if m == 0:
            eta = self._rng.laplace(scale=2.0 * self.sensitivity / self.epsilon, size=s)
            self._beta += self._pending + xs + eta
            self._pending[:] = 0.0
            self._alpha[:] = 0.0
            self._alpha_hat[:] = 0.0
            self._release[:] = self._beta
        else:
            self._pending += xs
            t = (m & -m).bit_length() - 1
            alpha_t = self._alpha[:t].sum(axis=0) + xs
            self._alpha[:t] = 0.0
            self._alpha_hat[:t] = 0.0
            self._alpha[t] = alpha_t
            scale = 2.0 * k * self.sensitivity / self.epsilon
            self._alpha_hat[t] = alpha_t + self._rng.laplace(size=s) * scale
            bits = [lev for lev in range(k) if (m >> lev) & 1]
            self._release[:] = self._beta + self._alpha_hat[bits].sum(axis=0)
        self._n[:] = n
        self._sum += xs
        return self._release.reshape(self.size).copy()

    def __repr__(self) -> str:
        return (
            f"HybridMechanism(epsilon={self.epsilon}, sensitivity={self.sensitivity}, "
            f"size={self.size})"
        )

    def add(self, x: ArrayLike, mask: ArrayLike | None = None) -> NDArray[np.float64]:
        """Feed one item to the selected streams; return all releases (shape ``size``)."""
        if mask is None and self._n.size and self._n[0] == self._n[-1] and self._lockstep:
            return self._add_lockstep(x)
        idx, xs = self._select(x, mask)
        if idx.size == 0:
            return self._release.reshape(self.size).copy()
        if idx.size < self._n.size:
            self._lockstep = False
        n = self._n[idx] + 1
        k = _floor_log2(n)
        m = n - (np.int64(1) << k)
        need = int(k.max())
        if need > self._alpha.shape[0]:  # epoch k needs k levels
            pad = ((0, need - self._alpha.shape[0]), (0, 0))
            self._alpha = np.pad(self._alpha, pad)
            self._alpha_hat = np.pad(self._alpha_hat, pad)
        n_lev = self._alpha.shape[0]
        levels = np.arange(n_lev)[:, None]

        # logarithmic part at powers of two; a new epoch starts with an empty binary mechanism
        new = m == 0
        i_new = idx[new]
        if i_new.size:
            eta = self._rng.laplace(scale=2.0 * self.sensitivity / self.epsilon, size=i_new.size)
            self._beta[i_new] += self._pending[i_new] + xs[new] + eta
            self._pending[i_new] = 0.0
            self._alpha[:, i_new] = 0.0
            self._alpha_hat[:, i_new] = 0.0

        # binary part of epoch k on m = n - 2^k
        old = ~new
        i_old = idx[old]
        if i_old.size:
            x_old, m_old, k_old = xs[old], m[old], k[old]
            self._pending[i_old] += x_old
            t = _trailing_zeros(m_old)
            alpha = self._alpha[:, i_old]
            alpha_hat = self._alpha_hat[:, i_old]
            below = levels < t
            cols = np.arange(i_old.size)
            alpha_t = np.where(below, alpha, 0.0).sum(axis=0) + x_old
            alpha[below] = 0.0
            alpha_hat[below] = 0.0
            alpha[t, cols] = alpha_t
            scale = 2.0 * k_old * self.sensitivity / self.epsilon
            alpha_hat[t, cols] = alpha_t + self._rng.laplace(size=i_old.size) * scale
            self._alpha[:, i_old] = alpha
            self._alpha_hat[:, i_old] = alpha_hat

        bits = (m >> levels) & 1
        self._release[idx] = self._beta[idx] + np.where(
            bits == 1, self._alpha_hat[:, idx], 0.0
        ).sum(axis=0)
        self._n[idx] = n
        self._sum[idx] += xs
        return self._release.reshape(self.size).copy()


# --------------------------------------------------------------------------------------------
# lazily drawn noise for PrivateMeans
# --------------------------------------------------------------------------------------------


class _HybridNoiseBlocks:
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
    :func:`hybrid_noise`.

    Two slots per stream (block ``j`` lives in slot ``j % 2``, so ``Z_n`` sits at column
    ``n % 2B``): the next block is generated while the current one is in use, and generation is
    batched over all streams that have a free slot.  Memory ``2 S B`` floats whatever the
    horizon; a batch happens about once every ``B`` steps.
    """

    def __init__(
        self,
        n_streams: int,
        epsilon: float,
        sensitivity: float,
        block: int,
        rng: Any,
        n_max: int | None = None,
    ) -> None:
        # counts never exceed n_max: no block starting beyond it is ever generated
        self.limit = np.iinfo(np.int64).max // 4 if n_max is None else n_max
        self.eps = epsilon
        self.b = sensitivity
        self.block = block
        self.log_block = block.bit_length() - 1
        self.mask = 2 * block - 1
        self.rng = rng
        table, cum = _hybrid_table(n_streams, block - 1, epsilon, sensitivity, rng)
        self.buf = np.empty((n_streams, 2 * block))
        self.buf[:, 0] = 0.0  # n = 0 is never released
        self.buf[:, 1:block] = table
        self.gen = np.zeros(n_streams, dtype=np.int64)  # latest generated block per stream
        self.cum = cum  # sum of eta_j up to the epoch of the latest generated block
        self.nodes = np.zeros((n_streams, _MAX_LEVELS))  # high-level nodes, latest block
        self.safe = 0  # calls of ``at`` that surely need no new block (see ``at``)
        self.buf_flat = self.buf.reshape(-1)  # view; Z_n of stream s at s 2B + n % 2B
        self.shift = self.log_block + 1

    def generate(self, idx: NDArray[np.intp]) -> None:
        """Generate the next block of streams ``idx`` (distinct) into their free slot."""
        bsz, lb = self.block, self.log_block
        j = self.gen[idx] + 1
        n0 = j << lb
        k = _floor_log2(n0)
        m0 = n0 - (np.int64(1) << k)
        new = m0 == 0
        if new.any():  # a new epoch: log part gets eta_k, binary part starts empty
            i_new = idx[new]
            self.cum[i_new] += _laplace(self.rng, i_new.size) * (2.0 * self.b / self.eps)
            self.nodes[i_new] = 0.0
        scale = 2.0 * k * self.b / self.eps
        if not new.all():
            old = ~new
            i_old = idx[old]
            t = _trailing_zeros(m0[old])
            nodes = self.nodes[i_old]
            nodes[np.arange(_MAX_LEVELS) < t[:, None]] = 0.0
            nodes[np.arange(i_old.size), t] = _laplace(self.rng, i_old.size) * scale[old]
            self.nodes[i_old] = nodes
        low = np.zeros((bsz, idx.size))
        _add_dyadic_unit(low, lb, bsz - 1, self.rng)
        low *= scale
        low += self.cum[idx] + self.nodes[idx].sum(axis=1)
        # slot j % 2 of each stream; streams differ in j, so write the two parities apart
        for parity in (0, 1):
            sel = (j & 1) == parity
            if sel.any():
                self.buf[idx[sel], parity * bsz : (parity + 1) * bsz] = low[:, sel].T
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
        if self.safe > 1:
            self.safe -= 1
        else:
            new = counts.copy()
            new[flat] = n
            self._refill(new)
        return self.buf_flat[(flat << self.shift) | (n & self.mask)]

    def _refill(self, counts: NDArray[np.int64]) -> None:
        lb = self.log_block
        if counts.max() > self.limit:
            self.safe = 0  # nothing changed; check again next time
            raise ValueError(f"an arm was pulled more than n_max={self.limit} times")
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


# --------------------------------------------------------------------------------------------
# private means for agents
# --------------------------------------------------------------------------------------------


class PrivateMeans:
    """Private running mean of every arm of every replication (App. H).

    Each (replication, arm) pair is an independent hybrid mechanism with budget ``epsilon``
    (``eps_M``) on the arm's rewards, clipped to ``[lo, hi]`` so the item sensitivity is
    ``b = hi - lo``.  After ``n_a`` pulls the released mean is ``(S_{n_a} + Z_{n_a}) / n_a``; the
    counts are treated as public (App. H: the actions are themselves released under eps_S).

    - ``update(actions (R,), rewards (R,))``: replication ``r`` pulled ``actions[r]`` and got
      ``rewards[r]``.  Rewards are clipped to ``[lo, hi]`` (documented, App. H; +-inf clip
      to the bounds); NaN rewards raise ValueError.  O(R) numpy work, no Python loop over
      replications.
    - ``means() -> (R, K)``: released means.  An arm never pulled has no release; ``means()``
      reports the midpoint ``(lo + hi) / 2`` for it (data independent, never NaN).  Not clipped
      unless ``clip_means=True`` (clipping to ``[lo, hi]`` is post-processing, still DP).
    - ``counts`` (R, K) int; ``n_max`` (optional) caps the count per arm (exceeding it raises).

    Noise is drawn lazily in blocks of ``block`` counts per stream (a power of two, at most the
    smallest power of two above ``n_max``), two blocks held per stream, so memory is
    ``2 R K block`` float64 (6.5 MB for R=100, K=2) whatever the horizon, instead of the
    ``R K n_max`` of a full table (80 MB for n_max=50_000): several agents run side by side in
    the engine.  ``block=None`` (default) takes 2048, or, when ``n_max`` is given, the power of
    two above ``2 n_max / K`` if that is smaller (but at least 64): with many arms each arm is
    pulled about ``n_max / K`` times, and a fixed 2048 would cost 3.3 GB at R=100, K=1000.
    (For K <= 2 this is exactly the former default 2048 capped by ``n_max``; the block size
    changes which numbers are drawn, never their law.)  float64 throughout (noise scale times
    1e-16 is far below any effect we measure).  Distribution identical to :func:`hybrid_noise` (see
    :class:`_HybridNoiseBlocks`).
    """

    def __init__(
        self,
        n_runs: int,
        n_arms: int,
        epsilon: float,
        lo: float = 0.0,
        hi: float = 1.0,
        n_max: int | None = None,
        rng: np.random.Generator | int | None = None,
        clip_means: bool = False,
        block: int | None = None,
    ) -> None:
        self.layout = RunArms(n_runs, n_arms)
        self.n_runs, self.n_arms = self.layout.n_runs, self.layout.n_arms
        self.epsilon = positive_number(epsilon, "epsilon")
        self.lo, self.hi = checks.bounds(lo, hi)
        self.n_max = None if n_max is None else positive_int(n_max, "n_max")
        self.clip_means = bool(clip_means)
        if block is None:
            block = _DEFAULT_BLOCK
            if n_max is not None:
                per_arm = 1 << (2 * positive_int(n_max, "n_max") // self.n_arms).bit_length()
                block = min(block, max(_MIN_AUTO_BLOCK, per_arm))
        block = positive_int(block, "block")
        if block < 2 or block & (block - 1):
            raise ValueError(f"block must be a power of two >= 2, got {block!r}")
        if self.n_max is not None:
            block = min(block, max(2, 1 << self.n_max.bit_length()))  # covers n <= n_max
        self.block = block
        self.sensitivity = self.hi - self.lo
        checks.noise_scale(2 * _MAX_EPOCH * self.sensitivity, self.epsilon, "the hybrid mechanism")
        s = self.layout.size
        self._noise = _HybridNoiseBlocks(
            s, self.epsilon, self.sensitivity, block, np.random.default_rng(rng), self.n_max
        )
        self._counts = np.zeros(s, dtype=np.int64)
        self._sums = np.zeros(s)
        self._means = np.full(s, 0.5 * (self.lo + self.hi))

    def __repr__(self) -> str:
        return (
            f"PrivateMeans(n_runs={self.n_runs}, n_arms={self.n_arms}, epsilon={self.epsilon}, "
            f"lo={self.lo}, hi={self.hi}, n_max={self.n_max}, clip_means={self.clip_means})"
        )

    @property
    def counts(self) -> NDArray[np.int64]:
        """Number of pulls of each arm, shape (R, K)."""
        return self.layout.matrix(self._counts).copy()

    @property
    def sums(self) -> NDArray[np.float64]:
        """Exact clipped reward sums (R, K) -- non-private, for tests and diagnostics only."""
        return self.layout.matrix(self._sums).copy()

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        """Record one pull per replication: arm ``actions[r]`` gave ``rewards[r]``."""
        self.update_flat(*self.layout.pulls(actions, rewards, self.lo, self.hi))

    def update_flat(self, flat: NDArray[np.intp], x: NDArray[np.float64]) -> None:
        """:meth:`update` on validated input, the agents' per-step hot path.

        ``flat[r] = r * K + actions[r]`` (distinct streams, one per replication) and ``x`` the
        rewards already clipped to ``[lo, hi]`` (not modified). No checks beyond ``n_max``.
        """
        n = self._counts.take(flat)
        n += 1
        z = self._noise.at(flat, n, self._counts)  # raises (n_max) before any state change
        s = self._sums.take(flat)
        s += x
        self._counts.put(flat, n)
        self._sums.put(flat, s)
        s += z
        s /= n
        self._means.put(flat, s)

    def means(self, copy: bool = True) -> NDArray[np.float64]:
        """Released private means (R, K); midpoint for arms never pulled.

        ``copy=False`` returns the internal array itself when no clipping is asked for (a
        read-only use on the hot path: it changes at the next :meth:`update`).
        """
        out = self.layout.matrix(self._means)
        if self.clip_means:
            return np.clip(out, self.lo, self.hi)
        return out.copy() if copy else out
