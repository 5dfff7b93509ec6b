"""The agent protocol: batched bandit learners (docs/architecture.md).

An agent plays ``R`` independent replications of a ``K``-armed bandit in lockstep. The
experiment engine (:func:`dpbandits.experiments.run`) drives it::

    agent.reset(n_runs=R, n_arms=K, horizon=T, rng=rng)
    for t in range(T):
        actions = agent.act()              # (R,) int64, one arm per replication
        rewards = env.step(actions)        # (R,) float
        agent.update(actions, rewards)

Optional hooks, used for plots and reports when present: ``private_means() -> (R, K)``,
``sensitivities() -> (R, K)``, ``privacy_report() -> dict``.

:class:`Agent` implements the protocol and the part every agent shares: the first ``K`` steps
pull each arm once, in order (App. H: data independent, no privacy cost). A subclass writes
three small methods:

- :meth:`Agent.setup` -- allocate per-replication state (called by :meth:`Agent.reset`);
- :meth:`Agent.choose` -- return the ``(R,)`` actions after the initial round;
- :meth:`Agent.observe` -- learn from ``(actions, rewards)`` (called for every step, including
  the initial round).

Nothing inside a step loops over replications or arms in Python; :class:`ArmStatistics` is the
batched bookkeeping of pull counts and reward sums that most agents need.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.checks import positive_int

__all__ = ["Agent", "ArmStatistics"]


class ArmStatistics:
    """Pull counts and reward sums of every arm in every replication.

    ``counts`` and ``sums`` are ``(R, K)`` float arrays; :meth:`update` adds one pull per
    replication with two fancy-indexed additions on flat views (no loop, no allocation beyond
    the index).
    """

    def __init__(self, n_runs: int, n_arms: int) -> None:
        self.n_runs = n_runs
        self.n_arms = n_arms
        s = n_runs * n_arms
        # counts and sums are the two rows of one (2, R K) array, so that one fancy-indexed
        # addition of (1, reward) updates both (the per-step cost is the number of numpy calls)
        self._both = np.zeros(2 * s)
        self._counts_flat = self._both[:s]
        self._sums_flat = self._both[s:]
        self.counts = self._counts_flat.reshape(n_runs, n_arms)
        self.sums = self._sums_flat.reshape(n_runs, n_arms)
        self._offsets = np.arange(n_runs, dtype=np.int64) * n_arms
        self._offsets2 = np.stack([self._offsets, self._offsets + s])  # (2, R)
        self._idx2 = np.empty((2, n_runs), dtype=np.int64)
        self._idx2_flat = self._idx2.reshape(-1)
        inc = np.ones((2, n_runs))  # row 0: +1 pull, row 1: the rewards
        self._inc_flat, self._inc_rewards = inc.reshape(-1), inc[1]

    def flat_index(self, actions: NDArray[np.int64]) -> NDArray[np.int64]:
        """Index of ``(r, actions[r])`` in the flattened ``(R, K)`` arrays."""
        return self._offsets + actions

    def update(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        np.add(self._offsets2, actions, out=self._idx2)
        self._inc_rewards[...] = rewards
        self._both[self._idx2_flat] += self._inc_flat

    def means(self) -> NDArray[np.float64]:
        """Empirical means; an arm never pulled has mean 0 (agents pull every arm first)."""
        return self.sums / np.maximum(self.counts, 1.0)


class Agent:
    """Base class of batched bandit agents (the protocol in docs/architecture.md).

    Constructor arguments are stored unchanged and shown in ``repr`` (scikit-learn style);
    per-run state is created by :meth:`reset`. After ``reset``, ``n_runs``, ``n_arms``,
    ``horizon`` (may be ``None``), ``rng`` (a ``numpy.random.Generator``) and ``t`` (the number of
    completed steps) are available to subclasses.
    """

    #: Short name used in tables and by :func:`agents.make`.
    name: str = "agent"

    n_runs: int
    n_arms: int
    horizon: int | None
    rng: np.random.Generator
    t: int

    # -- the protocol ---------------------------------------------------------------------
    def reset(
        self,
        n_runs: int,
        n_arms: int,
        *,
        horizon: int | None = None,
        rng: np.random.Generator | int | None = None,
    ) -> None:
        """Start ``n_runs`` fresh replications of a ``n_arms``-armed bandit."""
        self.n_runs = positive_int(n_runs, "n_runs")
        self.n_arms = positive_int(n_arms, "n_arms")
        self.horizon = None if horizon is None else positive_int(horizon, "horizon")
        self.rng = np.random.default_rng(rng)
        self.t = 0
        self._initial = [np.full(self.n_runs, a, dtype=np.int64) for a in range(self.n_arms)]
        self.setup()

    def act(self) -> NDArray[np.int64]:
        """The ``(R,)`` actions of this step: arm ``t`` during the first ``K`` steps (App. H)."""
        if self.t < self.n_arms:
            return self._initial[self.t].copy()
        return self.choose()

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None:
        """Feed back the ``(R,)`` actions taken and the ``(R,)`` rewards observed."""
        self.observe(actions, rewards)  # type: ignore[arg-type]
        self.t += 1

    # -- what a subclass writes -----------------------------------------------------------
    def setup(self) -> None:
        """Allocate per-replication state (``self.n_runs``, ``self.n_arms`` are set)."""

    def choose(self) -> NDArray[np.int64]:
        """Return the ``(R,)`` int64 actions for step ``self.t`` (``t >= n_arms``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement choose()")

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        """Learn from one step; called before ``self.t`` is incremented."""

    # -- conveniences ---------------------------------------------------------------------
    def get_params(self) -> dict[str, Any]:
        """Constructor arguments (by name) as stored on the instance."""
        params: dict[str, Any] = {}
        for p in inspect.signature(type(self).__init__).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if hasattr(self, p.name):
                params[p.name] = getattr(self, p.name)
        extra = getattr(self, "extra_params", None)
        if isinstance(extra, dict):
            params.update(extra)
        return params

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
