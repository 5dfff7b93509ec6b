"""Thompson sampling, the paper's second non-private baseline (Fig. 9)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, ArmStatistics, in_unit_interval, unit_interval_error
from dpbandits.core.arms import add_pull
from dpbandits.core.jit import beats, generator_address, generator_at, inline_kernel, kernel
from dpbandits.core.numba_compat import next_double
from dpbandits.core.params import Param
from dpbandits.core.samplers import (
    gamma_constants,
    gamma_with,
    standard_exponential,
    standard_normal,
)
from dpbandits.core.traits import AgentTraits

__all__ = ["ThompsonSampling"]


# -- the compiled step (dpbandits.core.jit): one implementation for choose/observe and play -------
# The step protocol draws with one numpy call per step and hands the draws to the kernels
# (handing a Generator to a compiled function costs ~20-60 us per call); ``play`` draws inside
# the kernel from the same Generator, in the same order (dpbandits.core.samplers: numpy's samplers,
# same numbers), with the same arithmetic after. Only the pulled arm's posterior changes in a
# step, so ``play`` keeps every arm's posterior constants (``_posterior``, the Gamma constants
# of ``_beta_shape``) and recomputes the pulled arm's after each pull: the same operations on
# the same numbers, done once per pull instead of once per draw.
@kernel
def _posterior(s: float, n: float) -> tuple[float, float]:
    """The Gaussian posterior ``N(S_a / (N_a + 1), 1 / (N_a + 1))`` of an arm with ``N_a = n``
    pulls and reward sum ``S_a = s``, as its mean and ``sqrt(N_a + 1)``."""
    w = n + 1.0
    return s / w, math.sqrt(w)


@kernel
def _gaussian_draw(mean: float, root: float, z: float) -> float:
    """``theta_a = S_a / (N_a + 1) + z / sqrt(N_a + 1)`` for a standard normal ``z``, from
    :func:`_posterior`'s ``(mean, root)``."""
    return mean + z / root


@kernel
def _gamma_constants(shape: float) -> tuple[float, float]:
    """What a ``Gamma(shape)`` draw needs, ``shape >= 1``: numpy's Marsaglia--Tsang constants
    ``(b, c)`` (``dpbandits.core.samplers.gamma_constants``), or ``c = 0`` when ``shape == 1``
    (numpy then draws an exponential)."""
    if shape == 1.0:
        return shape, 0.0
    return gamma_constants(shape)


@inline_kernel
def _gamma(bits: Any, b: float, c: float) -> float:
    """numpy's ``standard_gamma(shape)`` from :func:`_gamma_constants`'s ``(b, c)``."""
    if c == 0.0:
        return standard_exponential(bits)
    return gamma_with(bits, b, c)


@kernel
def _beta_draw(ga: float, gb: float) -> float:
    """``Beta(a, b)`` as numpy draws it when ``a + b >= 3`` (every arm pulled once):
    ``Ga / (Ga + Gb)`` with ``Ga ~ Gamma(successes + 1)`` drawn before ``Gb ~ Gamma(failures
    + 1)``."""
    return ga / (ga + gb)


@kernel
def _beta_params(sums: Any, counts: Any, ab: Any) -> None:
    """The ``(R, K, 2)`` Beta parameters ``(successes + 1, failures + 1)``, interleaved in the
    order their Gamma variables are drawn."""
    for r in range(sums.shape[0]):
        for a in range(sums.shape[1]):
            ab[r, a, 0] = sums[r, a] + 1.0
            ab[r, a, 1] = (counts[r, a] - sums[r, a]) + 1.0


@kernel
def _choose(sums: Any, counts: Any, gaussian: bool, draws: Any, out: Any) -> None:
    """The arm of the highest posterior draw of every replication (``numpy.argmax``'s rule),
    from its draws: ``(R, K)`` normals or ``(R, K, 2)`` Gamma variables."""
    for r in range(out.shape[0]):
        best_a = 0
        best = 0.0
        for a in range(sums.shape[1]):
            if gaussian:
                mean, root = _posterior(sums[r, a], counts[r, a])
                v = _gaussian_draw(mean, root, draws.flat[r * sums.shape[1] + a])
            else:
                i = 2 * (r * sums.shape[1] + a)
                v = _beta_draw(draws.flat[i], draws.flat[i + 1])
            if a == 0 or beats(v, best):
                best_a, best = a, v
        out[r] = best_a


@kernel
def _binarised(u: float, x: float) -> float:
    """The Bernoulli model's reward: ``1.0`` with probability ``x`` (the uniform ``u < x``)."""
    return 1.0 if u < x else 0.0


@kernel
def _observe(sums: Any, counts: Any, gaussian: bool, u: Any, actions: Any, x: Any) -> None:
    """Record one step; the Bernoulli model first replaces each reward ``x[r]`` in ``[0, 1]`` by
    a ``Bernoulli(x[r])`` draw made with the uniform ``u[r]``."""
    for r in range(actions.shape[0]):
        add_pull(counts, sums, r, actions[r], x[r] if gaussian else _binarised(u[r], x[r]))


@kernel
def _play_gaussian(sums: Any, counts: Any, address: int, t0: int, rows: Any, actions: Any,
                   rewards: Any, means: Any, roots: Any, valid: bool) -> None:  # fmt: skip
    """``_play`` for the Gaussian model: every replication chooses (``K`` normals, arm by arm)
    and observes in turn -- no other draw comes between, so the order is the step
    protocol's. The ``(R, K)`` posterior means and standard deviations are kept in ``means``
    and ``roots`` (``valid``: they are ``sums``/``counts``' already,
    ``Agent.kept_tables_valid``)."""
    bits = generator_at(address).bit_generator
    n_runs, n_arms = sums.shape
    if not valid:
        for r in range(n_runs):
            for a in range(n_arms):
                means[r, a], roots[r, a] = _posterior(sums[r, a], counts[r, a])
    for i in range(rows.shape[0]):
        t = t0 + i
        for r in range(n_runs):
            best_a = t
            if t >= n_arms:
                best_a = 0
                best = _gaussian_draw(means[r, 0], roots[r, 0], standard_normal(bits))
                for a in range(1, n_arms):
                    v = _gaussian_draw(means[r, a], roots[r, a], standard_normal(bits))
                    if beats(v, best):
                        best_a, best = a, v
            x = rows[i, best_a * n_runs + r]
            actions[i, r] = best_a
            rewards[i, r] = x
            add_pull(counts, sums, r, best_a, x)
            means[r, best_a], roots[r, best_a] = _posterior(sums[r, best_a], counts[r, best_a])


@kernel
def _beta_shape(s: float, n: float, success: bool) -> float:
    """The shape of the Gamma variable of the successes (``successes + 1``) or of the failures
    (``failures + 1``) of an arm with ``n`` pulls and ``s`` successes."""
    return s + 1.0 if success else (n - s) + 1.0


@kernel
def _play_beta(sums: Any, counts: Any, address: int, t0: int, rows: Any, actions: Any,
               rewards: Any, chosen: Any, x: Any, consts: Any, valid: bool) -> int:  # fmt: skip
    """``_play`` for the Bernoulli model: every replication's posterior draws (arm by arm),
    then every replication's binarising uniform, as the step protocol draws them. The
    ``(R, K, 4)`` Gamma constants -- the (b, c) of the successes', then the failures' -- are
    kept in ``consts`` (``valid``: they are ``sums``/``counts``' already,
    ``Agent.kept_tables_valid``)."""
    bits = generator_at(address).bit_generator
    n_runs, n_arms = sums.shape
    if not valid:
        for r in range(n_runs):
            for a in range(n_arms):
                s, n = sums[r, a], counts[r, a]
                consts[r, a, 0], consts[r, a, 1] = _gamma_constants(_beta_shape(s, n, True))
                consts[r, a, 2], consts[r, a, 3] = _gamma_constants(_beta_shape(s, n, False))
    for i in range(rows.shape[0]):
        t = t0 + i
        for r in range(n_runs):  # every replication chooses, then every one observes
            best_a = t
            if t >= n_arms:
                best_a = 0
                best = 0.0
                for a in range(n_arms):
                    ga = _gamma(bits, consts[r, a, 0], consts[r, a, 1])
                    gb = _gamma(bits, consts[r, a, 2], consts[r, a, 3])
                    v = _beta_draw(ga, gb)
                    if a == 0 or beats(v, best):
                        best_a, best = a, v
            chosen[r] = best_a
            x[r] = rows[i, best_a * n_runs + r]
        if not in_unit_interval(x):
            return i
        for r in range(n_runs):
            a = chosen[r]
            actions[i, r] = a
            rewards[i, r] = x[r]
            success = _binarised(next_double(bits), x[r])
            add_pull(counts, sums, r, a, success)
            # a success changes the first shape, a failure the second; the other is the same
            # number (successes and failures are whole numbers), so are its constants: only
            # the changed shape's are computed, picked without a branch (the outcome is
            # unpredictable)
            k = 2 - 2 * int(success)
            shape = _beta_shape(sums[r, a], counts[r, a], success == 1.0)
            consts[r, a, k], consts[r, a, k + 1] = _gamma_constants(shape)
    return rows.shape[0]


def _play(agent: ThompsonSampling, rows: Any, actions: Any, rewards: Any) -> int:
    """Steps ``t ..`` of every replication (see ``agents.base``); returns the number of steps
    played, fewer than ``len(rows)`` if the Bernoulli model met a reward outside ``[0, 1]``.
    The draws are those of the step protocol, in its order."""
    stats, address, tables = agent.stats, generator_address(agent.rng), agent._tables
    valid = agent.kept_tables_valid
    if agent._gaussian:
        _play_gaussian(stats.sums, stats.counts, address, agent.t, rows, actions, rewards,
                       tables[0], tables[1], valid)  # fmt: skip
        return int(rows.shape[0])
    return int(_play_beta(stats.sums, stats.counts, address, agent.t, rows, actions, rewards,
                          agent._chosen, agent._x, tables, valid))  # fmt: skip


class ThompsonSampling(Agent):
    """Thompson sampling with a Gaussian or a Beta--Bernoulli model.

    ``model="gaussian"`` (default): Agrawal & Goyal (2013), prior ``N(0, 1)`` and unit-variance
    likelihood, so the posterior of arm ``a`` after ``N_a`` pulls with reward sum ``S_a`` is
    ``N(S_a / (N_a + 1), 1 / (N_a + 1))``; each step draws ``theta_a`` from it and plays the
    argmax. App. H writes the posterior mean as ``mean_a``; we use Agrawal & Goyal's
    ``S_a / (N_a + 1)``, which is the exact posterior mean of that model (the two differ by a
    factor ``N_a / (N_a + 1)``).

    ``model="bernoulli"``: Beta(1, 1) priors and the binarisation trick (Agrawal & Goyal 2012) for
    rewards in ``[0, 1]``: a reward ``r`` is replaced by a ``Bernoulli(r)`` draw ``b``, which
    updates ``Beta(1 + successes, 1 + failures)``. Rewards outside ``[0, 1]`` raise
    ``ValueError``.

    Every arm is pulled once first (App. H); those pulls update the posterior too.
    """

    name = "thompson"
    traits = AgentTraits(compiled=True)
    #: Relative cost of a step (UCB ~ 1), for the engine's scheduling (docs/performance.md).
    cost_hint = 1.5

    parameter_constraints = {
        "model": Param("str", options=("gaussian", "bernoulli"), doc="the posterior's family"),
    }

    def __init__(self, model: str = "gaussian") -> None:
        self.model = model

    def setup(self) -> None:
        self._gaussian = self.model == "gaussian"
        self.stats = ArmStatistics(self.n_runs, self.n_arms)
        self._chosen = np.empty(self.n_runs, dtype=np.int64)  # work space of play
        self._x = np.empty(self.n_runs)
        self._ab = np.empty((self.n_runs, self.n_arms, 2))  # Beta parameters, interleaved
        # play's per-arm posterior tables (Gaussian: mean and standard deviation; Bernoulli:
        # four Gamma constants), kept from one call to the next (Agent.kept_tables_valid)
        self._tables = (
            np.empty((2, self.n_runs, self.n_arms))
            if self._gaussian
            else np.empty((self.n_runs, self.n_arms, 4))
        )

    def choose(self) -> NDArray[np.int64]:
        stats, out = self.stats, np.empty(self.n_runs, dtype=np.int64)
        if self._gaussian:
            draws = self.rng.standard_normal((self.n_runs, self.n_arms))
        else:
            _beta_params(stats.sums, stats.counts, self._ab)
            draws = self.rng.standard_gamma(self._ab)
        _choose(stats.sums, stats.counts, self._gaussian, draws, out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = np.asarray(rewards, dtype=np.float64)
        if not self._gaussian and not in_unit_interval(x):
            raise unit_interval_error("ThompsonSampling(model='bernoulli')", x)
        u = self._x if self._gaussian else self.rng.random(self.n_runs)  # (unused if Gaussian)
        _observe(self.stats.sums, self.stats.counts, self._gaussian, u,
                 np.asarray(actions, dtype=np.int64), x)  # fmt: skip

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        done = _play(self, rows, actions, rewards)
        self.played(done)
        if done < rows.shape[0]:
            raise unit_interval_error("ThompsonSampling(model='bernoulli')", self._x)
