"""DP-UCB: UCB on private per-arm reward sums released by continual-release mechanisms.

The private UCB agents of the literature, eps-global DP (two reward sequences are neighbours
when they differ in one step's reward), for rewards in ``[0, 1]``:

- :class:`DPUCB` (``"dp_ucb"``): Mishra & Thakurta, "(Nearly) Optimal Differentially Private
  Stochastic Multi-Arm Bandits", UAI 2015, Alg. 1 (private UCB): each arm's reward sum is
  released by the binary tree mechanism, and the UCB index gets a third term for the tree noise.
- :class:`DPUCBBound` (``"dp_ucb_bound"``), :class:`DPUCBHybrid` (``"dp_ucb_hybrid"``) and
  :class:`DPUCBInt` (``"dp_ucb_int"``): Tossou & Dimitrakakis, "Algorithms for Differentially
  Private Multi-Armed Bandits", AAAI 2016, Alg. 1 (DP-UCB-BOUND), DP-UCB and Alg. 3
  (DP-UCB-INT): the hybrid mechanism of Chan, Shi & Song (2011), which needs no horizon; with
  and without the noise term in the index; and the lazy variant, whose private means change
  only every ``f`` pulls of an arm.

One class, :class:`DPUCB`, implements all four (the others only change its defaults). Every
arm of every replication is a stream of *items*, the sums of consecutive blocks of ``f``
pulls (``interval``; ``f = 1`` except in DP-UCB-INT). When an arm completes a block, its item
enters the arm's mechanism and the arm's private mean is released again:
``mu~_a = (S_a + Z_a) / n_a`` over the ``n_a = j f`` pulls of its ``j`` items. The index is

    ``mu~_a + sqrt(2 ln t / n_a) + B_a / n_a``      (``+inf`` for an arm with no release yet)

with ``t`` the number of steps played (UCB1, Auer et al. 2002) and ``B_a`` a high-probability
bound on ``|Z_a|`` (``bound=True``) or 0. The mechanisms are the project's
(:mod:`dpbandits.continual`): the binary mechanism's noise node by node
(:func:`~dpbandits.continual.kernels.binary_noise_push`; the release is ``S + Z``) and the
hybrid mechanism's noise blocks of :class:`~dpbandits.continual.PrivateMeans`; see
``docs/private-bandits.md``.

Privacy (the whole run, reported by ``privacy_report()``): a reward enters exactly one item of
one arm's mechanism, and that mechanism is eps-DP for its whole stream of items; the actions
are functions of the releases only (and of the counts, themselves functions of past actions),
so the run is eps-DP with nothing treated as public.

Both ways of playing (``act``/``update`` and the engine's ``play``) run the same compiled
functions with the same Generator in the same order, so they give identical results.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import variant
from agents.skeleton import IndexAgent, fields
from dpbandits.accounting import global_dp_report
from dpbandits.continual import PrivateMeans
from dpbandits.continual.kernels import binary_noise_row, means_push
from dpbandits.continual.tree_noise import top_bit
from dpbandits.core import checks
from dpbandits.core.jit import inline_kernel, kernel, popcount
from dpbandits.core.params import Param
from dpbandits.core.samplers import standard_laplace
from dpbandits.core.traits import AgentTraits

__all__ = ["DPUCB", "DPUCBBound", "DPUCBHybrid", "DPUCBInt"]

MECHANISMS = ("tree", "hybrid")
# UCB1's exploration term sqrt(2 ln t / n), written as UCB's sqrt(ln t / n) * sqrt(2)
_UCB_ALPHA = math.sqrt(2.0)

# -- the compiled step on the skeleton (agents.skeleton). Per stream (replication, arm):
# ``pulls``, ``pending`` the sum of the block not complete yet, ``mean`` the released private
# mean and ``count`` the pulls it covers, ``bsig``/``bmax`` the two parts of the noise bound
# (bound_factors); the binary mechanism's item count, exact item sum and release, and after
# these fields its L open nodes' noise (binary_noise_row); per replication, the arm it pulled
# last. The hybrid mechanism's state is PrivateMeans' (its kernel_args(), as PAR values: arrays
# it owns and updates in place); an agent uses one mechanism (the other's state is never read:
# one compiled loop for every variant). Integers are stored exactly as floats. A pull only adds
# to its block (learn_kernel, inlined); the releases of the blocks completed at a step are the
# skeleton's settle step (_releases, once per step): inlined, the release's calls kept numba's
# reference counts of the state and par's arrays at every pull (1.3-2.4x the time of a step;
# before the skeleton lent its state to the per-pull kernels, agents.skeleton).
ARM = fields("pulls", "block", "pending", "mean", "count", "bsig", "bmax", "items", "exact",
             "release")  # fmt: skip
RUN = fields("arm")
PAR = fields("f", "tree", "bound", "eps_items", "node_scale", "h_counts", "h_sums", "h_means",
             "noise", "shift", "mask", "gamma")  # fmt: skip
# the PAR fields as plain module constants: ``par`` holds arrays too (a tuple of mixed types),
# which numba indexes by literal constants only
(_F, _TREE, _BOUND, _EPS_ITEMS, _NODE_SCALE, _H_COUNTS, _H_SUMS, _H_MEANS, _NOISE, _SHIFT, _MASK,
 _GAMMA) = PAR  # fmt: skip
_HYBRID = _H_COUNTS  # the first PAR field of the hybrid mechanism's state
_NO_HYBRID = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0), 0.0, 0.0, 0.0)


@kernel
def hybrid_noise_scales(j: int, eps: float) -> tuple[float, float]:
    """``sqrt(sum_i b_i^2)`` and ``max_i b_i`` of the independent Laplace terms ``Lap(b_i)`` whose
    sum is the hybrid mechanism's noise at count ``j`` for items of sensitivity 1 (``eps``):
    ``k + 1`` terms ``Lap(2 / eps)`` and ``popcount(j - 2^k)`` terms ``Lap(2 k / eps)``,
    ``k = floor(log2 j)`` (:mod:`dpbandits.continual`)."""
    k = top_bit(j)
    nodes = popcount(np.uint64(j - (1 << k)))  # the tree nodes the release sums
    b_log = 2.0 / eps
    b_bin = 2.0 * k / eps
    total = (k + 1) * (b_log * b_log) + nodes * (b_bin * b_bin)
    return math.sqrt(total), (b_bin if nodes > 0 else b_log)


@kernel
def bound_factors(t: int, hybrid_bound: bool) -> tuple[float, float]:
    """``(c1, c2)`` of the noise bound ``B = c1 max(bsig, bmax c2)`` at step ``t``: Chan et al.
    (2011), Cor. 2.9, for a sum of Laplace terms with ``sqrt(sum b^2) = bsig`` and ``max b =
    bmax``, ``|Z| <= sqrt(8 ln(2/delta)) max(bsig, bmax sqrt(ln(2/delta)))`` with probability
    ``1 - delta``, ``delta = 1 / (2 t^4)`` (DP-UCB-BOUND); ``(1, 0)`` otherwise, so that
    ``B = bsig`` (the tree's constant bound, or 0)."""
    if not hybrid_bound:
        return 1.0, 0.0
    lt = math.log(4.0 * float(t) ** 4)
    return math.sqrt(8.0 * lt), math.sqrt(lt)


@kernel
def _round(par: Any, t: int) -> tuple[float, float, float]:
    """``(ln t, c1, c2)`` of step ``t``, shared by every replication."""
    c1, c2 = bound_factors(t, par[_BOUND] != 0.0)
    return math.log(t), c1, c2


@inline_kernel
def _index(arms: Any, runs: Any, par: Any, r: int, a: int, f: Any, bits: Any) -> float:
    """``mean + sqrt(ln t / n) alpha + B / n``; ``+inf`` for an arm with no release."""
    n = arms[r, a, ARM.count]
    if n == 0.0:
        return math.inf
    bound = f[1] * max(arms[r, a, ARM.bsig], arms[r, a, ARM.bmax] * f[2])
    return arms[r, a, ARM.mean] + math.sqrt(f[0] / n) * _UCB_ALPHA + bound / n


@inline_kernel
def _pull(arms: Any, runs: Any, par: Any, r: int, t: int, a: int, x: float, bits: Any) -> None:
    """Replication ``r`` pulled ``a`` and got ``x`` in ``[0, 1]``: into the arm's block."""
    arms[r, a, ARM.pulls] += 1.0
    arms[r, a, ARM.block] += 1.0
    arms[r, a, ARM.pending] += x
    runs[r, RUN.arm] = a


@kernel
def _releases(arms: Any, runs: Any, par: Any, t: int, actions: Any, x: Any,
              bits: Any) -> None:  # fmt: skip
    """After step ``t``: every replication whose pull completed a block of ``f`` pulls of its
    arm puts the block's sum into the stream's mechanism, which releases the arm's mean again
    (in replication order)."""
    n_runs, n_arms = arms.shape[0], arms.shape[1]
    f = par[_F]
    nodes = arms.reshape(n_runs * n_arms, arms.shape[2])  # one row per stream
    for r in range(n_runs):
        a = np.int64(runs[r, RUN.arm])
        if arms[r, a, ARM.block] != f:
            continue
        n = arms[r, a, ARM.pulls]
        item = arms[r, a, ARM.pending]
        arms[r, a, ARM.pending] = 0.0
        arms[r, a, ARM.block] = 0.0
        s = r * n_arms + a
        if par[_TREE] != 0.0:  # binary mechanism on block sums (sensitivity 1): Lap(L / eps)
            z = standard_laplace(bits) * par[_NODE_SCALE]
            j = arms[r, a, ARM.items] + 1.0
            arms[r, a, ARM.items] = j
            z = binary_noise_row(nodes, s, len(ARM), np.int64(j), z)
            arms[r, a, ARM.exact] += item
            arms[r, a, ARM.release] = arms[r, a, ARM.exact] + z
            arms[r, a, ARM.mean] = arms[r, a, ARM.release] / n
        else:  # hybrid mechanism on block means (sensitivity 1/f) at eps f
            means = par[_H_MEANS]
            means_push(par[_H_COUNTS], par[_H_SUMS], means, par[_NOISE], np.int64(par[_SHIFT]),
                       np.int64(par[_MASK]), par[_GAMMA], s, item / f)  # fmt: skip
            arms[r, a, ARM.mean] = means[s]
            if par[_BOUND] != 0.0:  # the bound on the sum of the n pulls: f times the means'
                sig, big = hybrid_noise_scales(np.int64(n) // np.int64(f), par[_EPS_ITEMS])
                arms[r, a, ARM.bsig] = f * sig
                arms[r, a, ARM.bmax] = f * big
        arms[r, a, ARM.count] = n


class DPUCB(IndexAgent):
    """DP-UCB (Mishra & Thakurta 2015, Alg. 1), eps per arm tree (theirs: eps/K): tree sums.

    Each arm's tree gets the whole eps (parallel composition: each reward enters one arm's
    tree), where the paper runs each of the K trees at eps/K.
    By default Mishra & Thakurta's private UCB: each arm's sum by the binary tree mechanism,
    the noise's bound in the index; the other defaults give Tossou & Dimitrakakis's variants
    (:class:`DPUCBBound`, :class:`DPUCBHybrid`, :class:`DPUCBInt`).

    Rewards must lie in ``[0, 1]`` (``ValueError`` otherwise). Every arm is pulled once first
    (App. H); those rewards enter the mechanisms too. The index is given in the module
    docstring; ties go to the lowest arm.

    Parameters
    ----------
    epsilon:
        The eps of the whole run (eps-global DP), ``> 0``.
    mechanism:
        ``"tree"``: each arm's items go to a binary mechanism for ``N = floor(T / f)`` items
        (``L = floor(log2 N) + 1`` levels, node noise ``Lap(L / eps)``; a reward is in at
        most ``L`` nodes, so the tree is eps-DP); it needs the horizon (``reset(...,
        horizon=T)``), and the agent refuses to play past it. ``"hybrid"``: the hybrid
        mechanism (Chan et al. 2011; :class:`~dpbandits.continual.PrivateMeans`), no horizon
        needed.
    bound:
        Add ``B_a / n_a`` to the index, ``B_a`` a bound on the noise of the release that holds
        with high probability. Tree (Mishra & Thakurta's noise term, of the form
        ``L^2 ln(K T L / delta) / eps`` for their ``L = log T``): each of the at most ``2 K N``
        nodes exceeds ``(L / eps) ln(K N L T)`` with probability at most ``1 / (K N L T)``, and
        a release sums at most ``L`` nodes, so ``B = L (L / eps) ln(K N L / delta)`` with
        ``delta = 1 / T`` (our choice). Hybrid (Tossou & Dimitrakakis, Alg. 1, DP-UCB-BOUND):
        Chan et al. (2011), Cor. 2.9, applied to the Laplace terms of the release's noise at
        its count (:func:`hybrid_noise_scales`), with ``delta = 1 / (2 t^4)`` at step ``t``
        (:func:`bound_factors`; our choice of the constants).
    interval:
        ``f``, the pulls per item (``None``: ``ceil(1 / eps)``, Tossou & Dimitrakakis's
        choice in DP-UCB-INT). ``f > 1`` releases an arm's mean only when it completes a
        block of ``f`` pulls; the pulls of a block not yet complete are not used.

    Choices where the papers leave room, each tested (``tests/agents/test_literature_dp_ucb.py``):

    - Mishra & Thakurta give each of the ``K`` trees ``eps / K``. A reward enters only the tree
      of the arm pulled at its step, so the ``K`` trees compose in parallel: we give each tree
      the whole eps, and the run is still eps-DP. Their algorithm at ``eps`` is this one at
      ``epsilon = eps / K`` (the noise term then has their factor ``K``).
    - Each arm's tree is indexed by the arm's own items (pull count), not by the global time,
      so a step changes one tree; the tree has enough leaves for ``N = floor(T / f)`` items.
    - The index's exploration term is UCB1's ``sqrt(2 ln t / n_a)``, ``t`` the number of steps
      played; ``n_a`` is the number of pulls the release covers.
    - DP-UCB-INT (Tossou & Dimitrakakis, Alg. 3) adds fresh Laplace noise to the whole mean at
      every ``f``-th pull; a reward then enters every later release of its arm, so its total is
      not a finite pure eps (the paper states an (eps, delta) guarantee). We keep its lazy
      schedule (a new mean every ``f`` pulls, ``f = ceil(1 / eps)``, no noise term) but release
      through the hybrid mechanism on the blocks' means: a reward is in one item of one
      stream, and the run is eps-DP.
    """

    name = "dp_ucb"
    traits = AgentTraits(rewards="unit", private=True, compiled=True, needs_horizon=True)
    #: the algorithm's name in reports
    algorithm = "DP-UCB (Mishra & Thakurta 2015, Alg. 1; eps per arm tree, not eps/K)"
    #: Relative cost of a step (UCB ~ 1), for the engine's scheduling (docs/performance.md):
    #: 25-45 ns per agent-step at R = 100 against UCB's 10 (benchmarks/bench_scaling.py).
    cost_hint = 4.0
    ARM, RUN, PAR = ARM, RUN, PAR
    round_kernel, index_kernel, learn_kernel = _round, _index, _pull
    settle_kernel = _releases

    parameter_constraints = {
        "epsilon": Param(low=0, low_open=True, doc="eps of the whole run (eps-global DP)"),
        "mechanism": Param("str", options=MECHANISMS, doc="binary tree (needs T) or hybrid"),
        "bound": Param("bool", doc="add the noise's high-probability bound to the index"),
        "interval": Param("int", low=1, none=True,
                          doc="pulls per release; None: ceil(1/eps) (DP-UCB-INT)"),
    }  # fmt: skip

    def __init__(
        self,
        epsilon: float = 1.0,
        mechanism: str = "tree",
        bound: bool = True,
        interval: int | None = 1,
    ) -> None:
        self.epsilon = epsilon
        self.mechanism = mechanism
        self.bound = bound
        self.interval = interval

    def setup(self) -> None:
        eps, bound = float(self.epsilon), bool(self.bound)  # (checked: parameter_constraints)
        f = max(1, math.ceil(1.0 / eps)) if self.interval is None else int(self.interval)
        use_tree = self.mechanism == "tree"
        if use_tree:
            self.needed_horizon(f"{type(self).__name__}(mechanism='tree') sizes its tree by it")
        r, k = self.n_runs, self.n_arms
        s = r * k
        n_items = None if self.horizon is None else max(self.horizon // f, 1)
        self._f = f
        self._means: PrivateMeans | None = None
        node_scale = eps_items = 0.0
        levels, bsig = 0, 0.0
        if use_tree:
            assert n_items is not None and self.horizon is not None
            levels = n_items.bit_length()  # floor(log2 N) + 1
            node_scale = checks.noise_scale(float(levels), eps, "the binary mechanism")
            checks.memory(s * levels, f"n_runs * n_arms * tree levels = {s} * {levels}")
            self._levels = levels
            if bound:
                log_term = math.log(k * n_items * levels * float(self.horizon))
                bsig = levels * node_scale * log_term
        else:
            eps_items = eps * f  # block means move by at most 1 / f when one reward changes
            self._means = PrivateMeans(r, k, eps_items, lo=0.0, hi=1.0, n_max=n_items,
                                       rng=self.rng)  # fmt: skip
        self._values = {"f": f, "tree": use_tree, "bound": bound and not use_tree,
                        "eps_items": eps_items, "node_scale": node_scale}  # fmt: skip
        super().setup()
        self.arms = np.zeros((r, k, len(ARM) + levels))  # the ARM fields, then the tree's nodes
        self.arm_field("bsig")[:] = bsig

    def parameters(self) -> dict[str, Any]:
        hybrid = zip(PAR._fields[_HYBRID:], self._hybrid_state(), strict=True)
        return {**self._values, **dict(hybrid)}

    def _hybrid_state(self) -> tuple[Any, ...]:
        """The hybrid mechanism's state as the ``PAR`` values from ``h_counts`` on (read again
        after every reserve, which may replace the noise block)."""
        if self._means is None:
            return _NO_HYBRID
        counts, sums, means, noise, shift, mask, gamma = self._means.kernel_args()
        return counts, sums, means, noise, float(shift), float(mask), float(gamma)

    # -- the protocol -------------------------------------------------------------------------
    def _check_horizon(self, steps: int) -> None:
        """The tree has leaves for ``T`` steps: refuse more, before any state changes."""
        if self._means is None and self.horizon is not None and self.t + steps > self.horizon:
            raise ValueError(
                f"{type(self).__name__}(mechanism='tree') was reset for horizon={self.horizon} "
                f"and cannot play step {self.t + steps}"
            )

    def check_step(self, actions: NDArray[np.int64]) -> None:
        """Refuse a step past the tree's horizon; with the hybrid mechanism, make the noise of
        the streams that complete a block at this step readable (run by ``update`` after the
        reward check, before the compiled step)."""
        self._check_horizon(1)
        if self._means is not None:
            flat = np.arange(self.n_runs, dtype=np.int64) * self.n_arms + actions
            due = self.arm_field("block").reshape(-1)[flat] + 1 == self._f
            self._means.reserve_step(flat[due])
            self.par = self.par[:_HYBRID] + self._hybrid_state()

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``): with the hybrid
        mechanism, the steps whose noise is drawn already in one compiled call, the others (a
        new noise block) through :meth:`act` and :meth:`update`, as ``PrivateAgent.play``."""
        m, i = rows.shape[0], 0
        self._check_horizon(m)
        while i < m:
            n = m - i if self._means is None else min(m - i, self._means.ready_steps)
            if n > 0:
                t0 = self.t
                try:
                    super().play(rows[i : i + n], actions[i : i + n], rewards[i : i + n])
                finally:  # the steps played, also when a reward was refused
                    if self._means is not None:
                        self._means.took_steps(self.t - t0)
                i += n
                continue
            a = self.act()  # draws the next noise block
            x = rows[i, a * self.n_runs + np.arange(self.n_runs)]
            self.update(a, x)
            actions[i], rewards[i] = a, x
            i += 1

    # -- hooks for plots, reports and tests ---------------------------------------------------
    def private_means(self) -> NDArray[np.float64]:
        """The ``(R, K)`` private means released so far (NaN for an arm with no release)."""
        return np.where(self.arm_field("count") > 0, self.arm_field("mean"), np.nan)

    def private_sums(self) -> NDArray[np.float64]:
        """The ``(R, K)`` private sums ``S + Z`` of the pulls each arm's last release covers
        (0 before the first release)."""
        if self._means is None:
            return self.arm_field("release").copy()
        return np.asarray(self._means.releases) * self._f

    def released_counts(self) -> NDArray[np.int64]:
        """The ``(R, K)`` numbers of pulls the last releases cover (``j f`` for ``j`` items)."""
        return self.arm_field("count").astype(np.int64)

    def privacy_report(self) -> dict[str, Any]:
        """The eps of the whole run (module docstring), as a JSON-able dict."""
        eps, f = float(self.epsilon), getattr(self, "_f", 1)
        block = "" if f == 1 else f" of blocks of {f} pulls"
        if self.mechanism == "tree":
            levels = getattr(self, "_levels", None)
            mechanism = (f"each arm's sums{block} by the binary tree mechanism "
                         f"(L = {levels} levels, node noise Lap(L/eps))")  # fmt: skip
            composition = ("a reward enters one item of one arm's tree, so at most L nodes, "
                           "each with Laplace noise of scale L/eps: eps")  # fmt: skip
        else:
            item = "rewards" if f == 1 else f"means of blocks of {f} pulls (run at eps*{f})"
            mechanism = f"each arm's {item} by the hybrid mechanism (Chan, Shi & Song 2011)"
            composition = ("a reward enters one item of one arm's hybrid mechanism, eps-DP "
                           "for its whole stream (eps/2 + eps/2): eps")  # fmt: skip
        return global_dp_report(self.algorithm, eps, mechanism, composition)


@variant(mechanism="hybrid")
class DPUCBBound(DPUCB):
    """DP-UCB-BOUND (Tossou & Dimitrakakis, AAAI 2016, Alg. 1): hybrid sums, noise term.

    :class:`DPUCB` with the hybrid mechanism and the noise term of Chan et al.'s bound (see
    ``bound``); no horizon needed."""

    name = "dp_ucb_bound"
    algorithm = "DP-UCB-BOUND (Tossou & Dimitrakakis 2016, Alg. 1)"


@variant(mechanism="hybrid", bound=False)
class DPUCBHybrid(DPUCB):
    """DP-UCB (Tossou & Dimitrakakis, AAAI 2016): UCB1 on hybrid-mechanism private means.

    :class:`DPUCB` with the hybrid mechanism and no noise term in the index; no horizon needed.
    Without the noise term a low first release can lock the better arm out for a long time:
    on Bernoulli(0.5, 0.8) at eps = 1, 28% of 50 runs still played the worse arm in the second
    half of T = 2^17 steps (``tests/agents/test_literature_dp_ucb.py`` checks learning at
    eps = 4)."""

    name = "dp_ucb_hybrid"
    algorithm = "DP-UCB (Tossou & Dimitrakakis 2016)"


@variant(mechanism="hybrid", bound=False, interval=None)
class DPUCBInt(DPUCB):
    """DP-UCB-Int, this library's hybrid-release variant of DP-UCB-INT (Tossou & Dimitrakakis).

    The paper's DP-UCB-INT (AAAI 2016, Alg. 3) is only (eps, delta)-DP; this variant is eps-DP:
    an arm's private mean changes only when it completes a block of ``f = ceil(1 / eps)`` pulls,
    released by the hybrid mechanism on the blocks' means (see :class:`DPUCB`, ``interval``).
    For ``eps >= 1``, ``f = 1`` and it is :class:`DPUCBHybrid`; like it, it has no noise term
    and can lock an arm out at small eps."""

    name = "dp_ucb_int"
    algorithm = (
        "DP-UCB-Int (this library's hybrid-release variant of Tossou & Dimitrakakis 2016, Alg. 3)"
    )
