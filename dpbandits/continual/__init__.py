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
- :class:`PrivateMeans`: per-(replication, arm) private means for agents, one compiled kernel
  call per step (``means_update`` in :mod:`dpbandits.continual.kernels`, beside the per-pull
  kernels ``means_push`` and ``means_value`` for a compiled agent step; see
  ``docs/performance.md``).

The steps of all three are compiled kernels (:mod:`dpbandits.continual.kernels`) that do the
IEEE operations of the numpy code they replaced in the same order, so the same seeds give the
same bits.

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

The noise tables and the lazily drawn noise blocks live in :mod:`dpbandits.continual.tree_noise`;
:mod:`dpbandits.continual.grid_noise` has the discrete Laplace noise of the floating-point-safe
option of
:class:`PrivateMeans` (``noise="discrete"``, see ``docs/floating-point.md``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.continual.grid_noise import grid_step
from dpbandits.continual.kernels import (
    binary_add,
    hybrid_add,
    hybrid_add_lockstep,
    items_check,
    means_clipped,
    means_update,
)
from dpbandits.continual.tree_noise import (
    LAPLACE_NODES,
    MAX_EPOCH,
    GridLaplaceNodes,
    HybridNoiseBlocks,
    NodeSampler,
    binary_noise,
    hybrid_noise,
)
from dpbandits.core import checks
from dpbandits.core.arms import HoldsViews, RunArms, matrix_property
from dpbandits.core.checks import positive_int, positive_number

__all__ = [
    "NOISES",
    "BinaryMechanism",
    "HybridMechanism",
    "PrivateMeans",
    "binary_noise",
    "hybrid_noise",
]

#: The node noises :class:`PrivateMeans` offers: continuous Laplace (default) or discrete
#: Laplace on a power-of-two grid (floating-point safe).
NOISES = ("laplace", "discrete")
# PrivateMeans' noise blocks: the default, and the smallest size chosen from n_max / K.
_DEFAULT_BLOCK = 2048
_MIN_AUTO_BLOCK = 64
# noise="discrete": releases are exact while |S_n| <= 2^52 gamma and |Z_n| <= 2^52 gamma. Z_n
# sums at most 2 * 63 + 1 nodes; a node of scale s units exceeds 64 s with probability e^-64,
# so node scales up to 2^39 units keep |Z_n| <= 127 * 64 * 2^39 < 2^52 units.
_EXACT_UNITS = 2**52
# ... and a reward is at most 2^30 steps from 0 (so >= 2^22 pulls per arm stay exact), which
# must not widen the snapped range [lo_g, hi_g] by more than 2 gamma <= 3% of hi - lo.
_MAX_REWARD_LOG2 = 30
_MAX_WIDENING = 0.03
_MAX_NODE_UNITS = 2.0**39


# --------------------------------------------------------------------------------------------
# streaming objects
# --------------------------------------------------------------------------------------------


class _Streams:
    """Shared plumbing: a batch of independent streams of shape ``size`` with masked advance."""

    def __init__(self, epsilon: float, sensitivity: float, size: Any, rng: Any) -> None:
        self.epsilon = positive_number(epsilon, "epsilon")
        self.sensitivity = positive_number(sensitivity, "sensitivity")
        self.size = checks.size(size)
        self._rng = checks.generator(rng)
        s = math.prod(self.size)
        checks.memory(4 * s, f"size = {self.size} (streams)")
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

    def _broadcast(self, a: NDArray[Any], name: str) -> NDArray[Any]:
        try:
            return np.broadcast_to(a, self.size)
        except ValueError:
            raise ValueError(
                f"{name} must be broadcastable to the streams' size {self.size}, got shape "
                f"{a.shape}"
            ) from None

    def _select(self, x: ArrayLike, mask: ArrayLike | None) -> tuple[NDArray[np.intp], Any]:
        xa = self._broadcast(checks.real_array(x, "x", finite=False), "x").reshape(-1)
        if mask is None:
            idx = np.arange(xa.size)
        else:
            m = np.asarray(mask)
            if m.dtype != np.bool_:
                raise TypeError(f"mask must be a boolean array, got dtype {m.dtype}")
            idx = np.flatnonzero(self._broadcast(m, "mask"))
        xs = xa[idx]
        bad = items_check(self._sum, idx, xs, checks.MAX_NOISE_SCALE)
        if bad == 1:
            raise ValueError("x must be finite (no NaN or inf) for the advancing streams")
        # releases are prefix sums plus noise: a prefix sum near the float64 limit would turn
        # into inf (and NaN) inside the tree, so refuse it with the limit, before any update
        if bad == 2:
            raise ValueError(
                f"x would take a stream's prefix sum beyond {checks.MAX_NOISE_SCALE:g} in "
                "magnitude, where its noisy releases would overflow float64"
            )
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
        scale = self.n_levels * self.sensitivity / self.epsilon
        noise = self._rng.laplace(scale=scale, size=idx.size)
        binary_add(self._alpha, self._alpha_hat, self._n, self._sum, self._release, idx, xs,
                   noise)  # fmt: skip
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
        checks.noise_scale(2 * MAX_EPOCH * self.sensitivity, self.epsilon, "the hybrid mechanism")
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
        xs = self._select(x, None)[1]  # every stream advances: the same checks as add()
        n = int(self._n[0]) + 1
        k = n.bit_length() - 1
        if n == 1 << k:  # a power of two: eta ~ Lap(2b/eps) for every stream
            noise = self._rng.laplace(scale=2.0 * self.sensitivity / self.epsilon, size=xs.size)
        else:  # the node noise of epoch k, drawn as Lap(1) and scaled in the kernel
            noise = self._rng.laplace(size=xs.size)
        if k > self._alpha.shape[0]:
            pad = ((0, k - self._alpha.shape[0]), (0, 0))
            self._alpha = np.pad(self._alpha, pad)
            self._alpha_hat = np.pad(self._alpha_hat, pad)
        hybrid_add_lockstep(self._alpha, self._alpha_hat, self._beta, self._pending, self._n,
                            self._sum, self._release, xs, noise, self.sensitivity,
                            self.epsilon)  # fmt: skip
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
        need = int(n.max()).bit_length() - 1  # the largest epoch k reached
        if need > self._alpha.shape[0]:  # epoch k needs k levels
            pad = ((0, need - self._alpha.shape[0]), (0, 0))
            self._alpha = np.pad(self._alpha, pad)
            self._alpha_hat = np.pad(self._alpha_hat, pad)
        n_new = int(np.count_nonzero((n & (n - 1)) == 0))  # streams at a power of two
        eta = self._rng.laplace(scale=2.0 * self.sensitivity / self.epsilon, size=n_new)
        nu = self._rng.laplace(size=idx.size - n_new)
        hybrid_add(self._alpha, self._alpha_hat, self._beta, self._pending, self._n, self._sum,
                   self._release, idx, xs, eta, nu, self.sensitivity, self.epsilon)  # fmt: skip
        return self._release.reshape(self.size).copy()


class PrivateMeans(HoldsViews):
    """Private running mean of every arm of every replication (App. H).

    Each (replication, arm) pair is an independent hybrid mechanism with budget ``epsilon``
    (``eps_M``) on the arm's rewards, clipped to ``[lo, hi]`` so the item sensitivity is
    ``b = hi - lo``.  After ``n_a`` pulls the released mean is ``(S_{n_a} + Z_{n_a}) / n_a``; the
    counts are treated as public (App. H: the actions are themselves released under eps_S).

    - ``update(actions (R,), rewards (R,))``: replication ``r`` pulled ``actions[r]`` and got
      ``rewards[r]``.  Rewards are clipped to ``[lo, hi]`` (documented, App. H; +-inf clip
      to the bounds); NaN rewards raise ValueError.  One compiled kernel call over the
      replications (``means_update``) once the input is validated.
    - ``means() -> (R, K)``: released means.  An arm never pulled has no release; ``means()``
      reports the midpoint ``(lo + hi) / 2`` for it (data independent, never NaN).  Not clipped
      unless ``clip_means=True`` (clipping to ``[lo, hi]`` is post-processing, still DP).
      ``releases`` holds the private sums ``S_n + Z_n`` themselves.
    - ``counts`` (R, K) int; ``n_max`` (optional) caps the count per arm (exceeding it raises).

    ``noise`` selects the node noise of every hybrid mechanism (``NOISES``):

    - ``"laplace"`` (default): continuous Laplace noise as in App. H, drawn in float64.  Noise
      scale times 1e-16 is far below any effect we measure, but the low-order bits of
      ``S_n + Z_n`` depend on ``S_n`` (Mironov 2012, "On significance of the least significant
      bits for differential privacy"): the float release is not exactly eps-DP.
    - ``"discrete"``: floating-point safe (Canonne, Kamath, Steinke 2020, "The discrete
      Gaussian for differential privacy"; Mironov 2012).  The grid step ``gamma`` (attribute)
      is the power of two at most ``2^-12 min(hi - lo, 2 (hi - lo) / eps)``, raised if needed
      to about ``2^-30 max(|lo|, |hi|)``.  Each clipped reward is rounded to the nearest
      multiple of ``gamma`` (it moves by at most ``gamma / 2``) and every node noise is
      ``gamma K``, ``K`` discrete Laplace with ``P(K = k) ∝ exp(-|k| gamma / s)``, ``s`` the
      node's scale in App. H.  Privacy: a reward in ``[lo, hi]`` rounds into ``[lo_g, hi_g]``
      (``lo`` rounded down, ``hi`` rounded up to the grid), so neighbouring streams differ by
      at most ``b = hi_g - lo_g`` (attribute ``sensitivity``: a multiple of ``gamma``, at most
      ``hi - lo + 2 gamma``), and the node scales use this ``b``.  A node sum then moves ``K``
      by at most ``b / gamma`` steps and the pmf ratio is at most ``exp(b / s)``, the bound of
      continuous ``Lap(s)``: the eps-DP argument of the hybrid mechanism (App. H) holds for
      the exact output.  Every sum of rewards, node and release ``S_n + Z_n`` is an integer
      times ``gamma``, exact in float64 while ``|S_n|`` and ``|Z_n|`` stay below
      ``2^52 gamma``; the constructor refuses what could break that, with the limit in the
      message: more than ``n_exact`` pulls per arm (attribute, ``2^52 / (max(|lo|, |hi|) /
      gamma + 1)``; ``n_max`` above it raises, without ``n_max`` it caps the counts), node
      scales above ``2^39`` grid steps (eps below about 1e-6) and a range so far from 0 that
      the grid would widen it by more than 3%.  The released mean ``(S_n + Z_n) / n`` is
      post-processing.  Cost: for ``[0, 1]`` the same noise variance (up to ``gamma^2 / 6``
      per node), about 1.1x the time of an update (``benchmarks/bench_continual_noise.py``,
      ``docs/floating-point.md``).

    Noise is drawn lazily in blocks of ``block`` counts per stream (a power of two, at most the
    smallest power of two above ``n_max``), two blocks held per stream, so memory is
    ``2 R K block`` float64 (6.5 MB for R=100, K=2; ``4 R K block`` while the next block is
    drawn, ``6 R K block`` with ``noise="discrete"``, which is what the constructor checks
    against the machine's memory) whatever the horizon,
    instead of the ``R K n_max`` of a full table (80 MB for n_max=50_000): several agents run side
    by side in
    the engine.  ``block=None`` (default) takes 2048, or, when ``n_max`` is given, the power of
    two above ``2 n_max / K`` if that is smaller (but at least 64): with many arms each arm is
    pulled about ``n_max / K`` times, and a fixed 2048 would cost 3.3 GB at R=100, K=1000.
    (For K <= 2 this is exactly the former default 2048 capped by ``n_max``; the block size
    changes which numbers are drawn, never their law.)  Distribution identical to
    :func:`hybrid_noise` (see :class:`dpbandits.continual.tree_noise.HybridNoiseBlocks`).
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
        noise: str = "laplace",
    ) -> None:
        if not isinstance(noise, str):
            raise TypeError(f"noise must be one of {NOISES}, got {noise!r}")
        checks.one_of(noise, NOISES, "noise")
        self.noise = noise
        self.layout = RunArms(n_runs, n_arms)
        self.n_runs, self.n_arms = self.layout.n_runs, self.layout.n_arms
        self.epsilon = positive_number(epsilon, "epsilon")
        self.lo, self.hi = checks.bounds(lo, hi)
        self.n_max = None if n_max is None else positive_int(n_max, "n_max")
        self.clip_means = checks.flag(clip_means, "clip_means")
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
        checks.noise_scale(2 * MAX_EPOCH * self.sensitivity, self.epsilon, "the hybrid mechanism")
        nodes: NodeSampler = LAPLACE_NODES
        limit, limit_name = self.n_max, "n_max"
        self.gamma: float | None = None
        self.n_exact: int | None = None
        if noise == "discrete":
            nodes, limit, limit_name = self._grid()
        s = self.layout.size
        # the noise blocks at their peak (two slots per stream, and the next block with its
        # node draws while the first step refills them: 4 block float64 per stream, 6 with
        # discrete noise), and the counts, sums and means
        peak = HybridNoiseBlocks.peak_nbytes(s, block, nodes)
        checks.memory(
            peak + 24 * s,
            f"the noise blocks of n_runs * n_arms = {self.n_runs} * {self.n_arms} streams "
            f"(block = {block} counts, {peak / (8 * s * block):.0f} * block float64 each at "
            "the first step's refill)",
            itemsize=1,
        )
        self._noise = HybridNoiseBlocks(
            s, self.epsilon, self.sensitivity, block, checks.generator(rng), limit,
            nodes, limit_name,
        )  # fmt: skip
        self._counts = np.zeros(s, dtype=np.int64)
        self._sums = np.zeros(s)
        self._means = np.full(s, 0.5 * (self.lo + self.hi))
        self._make_views()
        self._gamma = 0.0 if self.gamma is None else self.gamma  # means_push: 0 = no grid

    _views = ("_means_rk",)

    def _make_views(self) -> None:
        self._means_rk = self.layout.matrix(self._means)  # the (R, K) view means() returns

    def _grid(self) -> tuple[NodeSampler, int, str]:
        """Set up ``noise="discrete"``: grid, snapped sensitivity, exactness limits (see above)."""
        width, eps = self.hi - self.lo, self.epsilon
        biggest = max(abs(self.lo), abs(self.hi))
        # fine next to the range and the smallest node scale, coarse enough for exact sums
        gamma = max(
            grid_step(max(min(width, 2.0 * width / eps), 2.0**-1000)),
            2.0 ** math.ceil(math.log2(biggest) - _MAX_REWARD_LOG2),
        )
        if 2.0 * gamma > width * _MAX_WIDENING:
            raise ValueError(
                f"noise='discrete' cannot put rewards in [lo, hi] = [{self.lo!r}, {self.hi!r}] on "
                f"a fine enough grid: the step {gamma:g} (at least 2^-30 max(|lo|, |hi|), so that "
                f"sums stay exact in float64) would widen hi - lo by more than "
                f"{_MAX_WIDENING:.0%}; shift the rewards towards 0"
            )
        reach = biggest / gamma + 1.0  # a snapped reward is at most this many steps from 0
        n_exact = int(_EXACT_UNITS // reach)
        if self.n_max is not None and self.n_max > n_exact:
            raise ValueError(
                f"noise='discrete' releases are exact only while the sum of the rewards stays "
                f"below 2^52 grid steps: with lo={self.lo!r}, hi={self.hi!r} (grid step "
                f"{gamma:g}) at most n_max={n_exact} pulls per arm, got n_max={self.n_max}"
            )
        limit = n_exact if self.n_max is None else self.n_max
        b = math.ceil(self.hi / gamma) * gamma - math.floor(self.lo / gamma) * gamma
        top_scale = 2.0 * max(1, limit.bit_length() - 1) * b / eps  # the largest node scale
        if top_scale / gamma > _MAX_NODE_UNITS:
            smallest = top_scale * eps / (gamma * _MAX_NODE_UNITS)
            raise ValueError(
                f"epsilon={eps!r} is too small for noise='discrete': node noise of "
                f"{top_scale / gamma:.3g} grid steps would leave the range where float64 sums "
                f"are exact (at most 2^39 steps); use epsilon >= {smallest:.3g}"
            )
        self.gamma, self.n_exact, self.sensitivity = gamma, n_exact, b
        return GridLaplaceNodes(gamma), limit, ("n_max" if self.n_max else "n_exact")

    def __repr__(self) -> str:
        return (
            f"PrivateMeans(n_runs={self.n_runs}, n_arms={self.n_arms}, epsilon={self.epsilon}, "
            f"lo={self.lo}, hi={self.hi}, n_max={self.n_max}, clip_means={self.clip_means}, "
            f"noise={self.noise!r})"
        )

    counts = matrix_property("_counts", "Number of pulls of each arm (R, K) int.")
    sums = matrix_property(
        "_sums",
        'Exact clipped (and, for ``noise="discrete"``, snapped) reward sums (R, K) -- '
        "non-private, for tests and diagnostics only.",
    )

    @property
    def noise_nbytes(self) -> int:
        """Memory held for the noise blocks (``2 R K block`` float64), whatever the horizon."""
        return int(self._noise.buf.nbytes)

    @property
    def releases(self) -> NDArray[np.float64]:
        """The private sums ``S_n + Z_n`` (R, K) released at each arm's count; 0 if never
        pulled.  With ``noise="discrete"`` every entry is an exact multiple of ``gamma``.
        (Recomputed from the held noise, bit for bit as :meth:`update_flat` does, so that the
        hot path stores only the means.)"""
        return self.layout.matrix(self._sums + self._noise.current(self._counts))

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        """Record one pull per replication: arm ``actions[r]`` gave ``rewards[r]``."""
        self.update_flat(*self.layout.pulls(actions, rewards, self.lo, self.hi))

    def update_flat(self, flat: NDArray[np.intp], x: NDArray[np.float64]) -> None:
        """:meth:`update` on validated input, the agents' per-step hot path.

        ``flat[r] = r * K + actions[r]`` (distinct streams, one per replication) and ``x`` the
        rewards already clipped to ``[lo, hi]`` (not modified; snapped to the grid here for
        ``noise="discrete"``). No checks beyond ``n_max``.
        """
        self.reserve_step(flat)
        noise = self._noise
        means_update(self._counts, self._sums, self._means, noise.buf_flat, noise.shift,
                     noise.mask, self._gamma, flat, x)  # fmt: skip

    def reserve_step(self, flat: NDArray[np.intp]) -> None:
        """The bookkeeping of one step of :meth:`update_flat` without the update: make the
        noise of one more pull of the streams ``flat`` (distinct) readable, for a compiled
        caller that then pushes their items itself (``means_push``; an agent whose streams
        take an item only at some steps). Call it once per step, whether or not a stream
        takes an item (:attr:`ready_steps` counts steps); raises (``n_max``) before any
        state change."""
        noise = self._noise
        if noise.safe > 1:  # HybridNoiseBlocks.reserve, inlined: the common case
            noise.safe -= 1
        else:  # may draw the next blocks
            noise.reserve(flat, None, self._counts)

    def kernel_args(self) -> tuple[Any, ...]:
        """The arguments of :func:`~dpbandits.continual.kernels.means_update` before ``(flat,
        x)``: the state a compiled caller updates in place (read again after every
        :meth:`reserve_step`, which may replace the noise block)."""
        noise = self._noise
        return (self._counts, self._sums, self._means, noise.buf_flat, noise.shift, noise.mask,
                self._gamma)  # fmt: skip

    @property
    def ready_steps(self) -> int:
        """How many steps (one pull per replication each) :func:`means_update` may take with
        the noise already drawn; the next one goes through :meth:`update_flat`."""
        return max(self._noise.safe - 1, 0)

    def took_steps(self, n: int) -> None:
        """Record that a compiled caller took ``n <= ready_steps`` steps (``means_update``)."""
        self._noise.safe -= n

    def means(self, copy: bool = True) -> NDArray[np.float64]:
        """Released private means (R, K); midpoint for arms never pulled.

        ``copy=False`` returns the internal array itself when no clipping is asked for (a
        read-only use on the hot path: it changes at the next :meth:`update`).
        """
        if self.clip_means:
            out = np.empty((self.n_runs, self.n_arms))
            means_clipped(self._means, self.lo, self.hi, out.reshape(-1))
            return out
        return self._means_rk.copy() if copy else self._means_rk
