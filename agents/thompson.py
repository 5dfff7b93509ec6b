"""Thompson sampling, the paper's second non-private baseline (Fig. 9)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent, ArmStatistics
from dpbandits.arms import add_pull
from dpbandits.jit import beats, kernel

__all__ = ["ThompsonSampling"]


# -- the compiled step (dpbandits.jit): one implementation for choose/observe and play -------
@kernel
def _sample(sums: Any, counts: Any, r: int, a: int, gaussian: bool, rng: Any) -> float:
    """One posterior draw ``theta_a`` of replication ``r``.

    Gaussian: ``S_a / (N_a + 1) + Z / sqrt(N_a + 1)``, ``Z ~ N(0, 1)``. Bernoulli: ``Beta(a, b)``
    as numpy draws it when ``a + b >= 3`` (every arm pulled once): ``Ga / (Ga + Gb)``, with
    ``Ga ~ Gamma(successes + 1)`` drawn before ``Gb ~ Gamma(failures + 1)``."""
    n, s = counts[r, a], sums[r, a]
    if gaussian:
        w = n + 1.0
        return s / w + rng.standard_normal() / math.sqrt(w)
    ga = rng.standard_gamma(s + 1.0)
    gb = rng.standard_gamma((n - s) + 1.0)
    return ga / (ga + gb)


@kernel
def _arm(sums: Any, counts: Any, r: int, gaussian: bool, rng: Any) -> int:
    """The arm of the highest posterior draw of replication ``r`` (``numpy.argmax``'s rule);
    the arms are drawn in order."""
    best_a = 0
    best = _sample(sums, counts, r, 0, gaussian, rng)
    for a in range(1, sums.shape[1]):
        v = _sample(sums, counts, r, a, gaussian, rng)
        if beats(v, best):
            best_a, best = a, v
    return best_a


@kernel
def _choose(sums: Any, counts: Any, gaussian: bool, rng: Any, out: Any) -> None:
    for r in range(out.shape[0]):
        out[r] = _arm(sums, counts, r, gaussian, rng)


@kernel
def _in_unit_interval(x: Any) -> bool:
    for v in x:
        if not (v >= 0.0 and v <= 1.0):
            return False
    return True


@kernel
def _observe(sums: Any, counts: Any, gaussian: bool, rng: Any, actions: Any, x: Any) -> None:
    """Record one step; the Bernoulli model first replaces each reward ``x`` in ``[0, 1]`` by a
    ``Bernoulli(x)`` draw (one uniform per replication, in order)."""
    for r in range(actions.shape[0]):
        if gaussian:
            add_pull(counts, sums, r, actions[r], x[r])
        else:
            add_pull(counts, sums, r, actions[r], 1.0 if rng.random() < x[r] else 0.0)


@kernel
def _play(sums: Any, counts: Any, gaussian: bool, rng: Any, t0: int, rows: Any, actions: Any,
          rewards: Any, chosen: Any, x: Any) -> int:  # fmt: skip
    """Steps ``t0 ..`` of every replication (see ``Agent.play``); returns the number of steps
    played, fewer than ``len(rows)`` if the Bernoulli model met a reward outside ``[0, 1]``."""
    n_runs, n_arms = sums.shape
    for i in range(rows.shape[0]):
        t = t0 + i
        for r in range(n_runs):  # every replication chooses, then every one observes
            chosen[r] = t if t < n_arms else _arm(sums, counts, r, gaussian, rng)
            x[r] = rows[i, chosen[r] * n_runs + r]
        if not gaussian and not _in_unit_interval(x):
            return i
        for r in range(n_runs):
            actions[i, r] = chosen[r]
            rewards[i, r] = x[r]
        _observe(sums, counts, gaussian, rng, chosen, x)
    return rows.shape[0]


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

    def __init__(self, model: str = "gaussian") -> None:
        self.model = model

    def setup(self) -> None:
        if self.model not in ("gaussian", "bernoulli"):
            raise ValueError(f"model must be 'gaussian' or 'bernoulli', got {self.model!r}")
        self._gaussian = self.model == "gaussian"
        self.stats = ArmStatistics(self.n_runs, self.n_arms)
        self._chosen = np.empty(self.n_runs, dtype=np.int64)  # work space of play
        self._x = np.empty(self.n_runs)

    def choose(self) -> NDArray[np.int64]:
        out = np.empty(self.n_runs, dtype=np.int64)
        _choose(self.stats.sums, self.stats.counts, self._gaussian, self.rng, out)
        return out

    def observe(self, actions: NDArray[np.int64], rewards: NDArray[np.float64]) -> None:
        x = np.asarray(rewards, dtype=np.float64)
        if not self._gaussian and not _in_unit_interval(x):
            self._refuse(x)
        _observe(self.stats.sums, self.stats.counts, self._gaussian, self.rng,
                 np.asarray(actions, dtype=np.int64), x)  # fmt: skip

    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        done = _play(self.stats.sums, self.stats.counts, self._gaussian, self.rng, self.t, rows,
                     actions, rewards, self._chosen, self._x)  # fmt: skip
        self.t += done
        self._acted = None
        if done < rows.shape[0]:
            self._refuse(self._x)

    def _refuse(self, x: NDArray[np.float64]) -> None:
        raise ValueError(
            "ThompsonSampling(model='bernoulli') needs rewards in [0, 1], got "
            f"min {x.min()}, max {x.max()}"
        )
