"""What the eps-global-DP agents of the literature built on Laplace releases share.

AdaP-UCB and AdaP-KLUCB (Azize & Basu 2022), DP-KLUCB and DP-IMED (Azize et al. 2025) and
Lazy-DP-TS (Hu & Hegde 2022) cut each arm's rewards into consecutive batches -- episodes,
phases, epochs: the papers' words -- whose lengths depend on the arm's pull count only, add one
``Laplace(1 / eps)`` variable to the sum of each completed batch, and choose every action from
these noisy sums and the pull counts only (the counts are shown by the actions themselves).
Rewards in ``[0, 1]`` give each sum sensitivity 1, every reward is in exactly one sum, and
which sum a reward joins is fixed by the actions before it, so the released sums together are
eps-DP (parallel composition over disjoint batches; Azize & Basu 2022, Lemma 1 and Theorem 6;
Azize et al. 2025, Proposition 2; Hu & Hegde 2022, Theorem 3); the actions are post-processing
of them. The whole run is therefore
eps-global-DP for any horizon: its ledger is a single eps, which :meth:`LaplaceBatchAgent.
privacy_report` states (:func:`dpbandits.accounting.global_dp_report`), with the number of
releases per arm.

:class:`LaplaceBatchAgent` is the part of the protocol they share: the ``epsilon`` check, the
reward check (``[0, 1]``, or ``{0, 1}`` for the Bernoulli-only algorithms) at every step, the
block path around the agent's compiled loop, the private-means hook and the privacy report.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base import (
    Agent,
    bernoulli_error,
    in_bernoulli,
    in_unit_interval,
    unit_interval_error,
)
from dpbandits.accounting import global_dp_report
from dpbandits.core import checks
from dpbandits.core.params import Param

__all__ = ["LaplaceBatchAgent"]


class LaplaceBatchAgent(Agent):
    """Base of the agents that release one Laplace-noised sum per batch of an arm's rewards
    (module docstring). A subclass sets :attr:`algorithm`, :attr:`batches`, :attr:`citation`
    and :attr:`bernoulli_only`, calls :meth:`_setup_common` from ``setup``, keeps its per-arm
    state in ``self._arms`` ``(R, K, fields)`` with the fields :attr:`private_field` (the
    private mean released last) and :attr:`releases_field` (the number of releases), and
    implements ``_play_block(rows,
    actions, rewards) -> steps played`` (fewer than ``len(rows)`` when a reward was refused,
    before anything was learnt from that step; the refused rewards are left in
    ``self._x``), beside ``choose`` and ``observe``, and sets ``play = LaplaceBatchAgent.play``
    in the same class body (see :meth:`play`)."""

    #: Name of the algorithm in messages and reports, e.g. ``"AdaP-UCB"``.
    algorithm: str = ""
    #: What the papers call the batches (``"episode"``, ``"phase"``, ``"epoch"``).
    batches: str = "batch"
    #: The paper's privacy statement, for the report.
    citation: str = ""
    #: Rewards must be 0 or 1 (the algorithm is defined for Bernoulli bandits only).
    bernoulli_only: bool = False
    #: Relative cost of a step (UCB ~ 1), for the engine's scheduling (docs/performance.md);
    #: measured by benchmarks/bench_scaling.py at R = 100: AdaP ~35 ns per agent-step, DP-IMED
    #: ~55, DP-KLUCB ~90, Lazy-DP-TS ~80 (K = 2), against UCB's ~12.
    cost_hint = 3.0

    parameter_constraints = {
        "epsilon": Param(
            low=0, low_open=True, doc="privacy budget of the whole run (eps-global DP)"
        ),
    }

    epsilon: float

    def _setup_common(self) -> None:
        """The noise scale ``1 / epsilon`` (``epsilon`` is checked by the constraints table; a
        scale too large for floats is refused here) and the per-step work space."""
        eps = float(self.epsilon)
        self._scale = checks.noise_scale(1.0, eps, f"{self.algorithm}'s Laplace noise")
        self._eps = eps
        self._chosen = np.empty(self.n_runs, dtype=np.int64)  # work space of play
        self._x = np.empty(self.n_runs)

    # -- rewards ---------------------------------------------------------------------------
    def _rewards(self, rewards: NDArray[np.float64]) -> NDArray[np.float64]:
        """The step's rewards as float64, or the ``ValueError`` of a reward the algorithm is
        not defined for (raised before anything is learnt from the step)."""
        x = np.asarray(rewards, dtype=np.float64)
        if self.bernoulli_only:
            if not in_bernoulli(x):
                raise bernoulli_error(self.algorithm, x)
        elif not in_unit_interval(x):
            raise unit_interval_error(self.algorithm, x)
        return x

    def _reward_error(self, x: NDArray[np.float64]) -> ValueError:
        if self.bernoulli_only:
            return bernoulli_error(self.algorithm, x)
        return unit_interval_error(self.algorithm, x)

    # -- the per-arm state every subclass keeps ---------------------------------------------
    #: ``(R, K, fields)``: each arm's statistics, set by the subclass's ``setup``.
    _arms: NDArray[np.float64]
    #: The fields of :attr:`_arms` holding the private mean released last and the number of
    #: releases (each subclass names its own layout).
    private_field: int
    releases_field: int

    def _private_view(self) -> NDArray[np.float64]:
        """The ``(R, K)`` private means released so far (a view of the state)."""
        return self._arms[:, :, self.private_field]

    def _release_counts(self) -> NDArray[np.int64]:
        """The ``(R, K)`` numbers of releases."""
        return self._arms[:, :, self.releases_field].astype(np.int64)

    # -- what a subclass implements --------------------------------------------------------

    def _play_block(self, rows: Any, actions: Any, rewards: Any) -> int:
        raise NotImplementedError

    # -- the block path: a class that implements choose/observe/_play_block also names this
    # method in its own body (``play = LaplaceBatchAgent.play``), so that Agent.block_player
    # finds choose, observe and play in one class and lets the engine use play ---------------
    def play(self, rows: Any, actions: Any, rewards: Any) -> None:
        """Play ``len(rows)`` steps against reward rows (see ``agents.base``)."""
        done = self._play_block(rows, actions, rewards)
        self.played(done)
        if done < rows.shape[0]:
            raise self._reward_error(self._x)

    # -- hooks for plots and reports -------------------------------------------------------
    def private_means(self) -> NDArray[np.float64]:
        """The ``(R, K)`` private means released so far (the last of each arm)."""
        return np.array(self._private_view(), dtype=np.float64)

    def privacy_report(self) -> dict[str, Any]:
        """The privacy spent by the whole run, as a JSON-able dict
        (:func:`dpbandits.accounting.global_dp_report`): ``epsilon_total`` is the run's
        eps-global-DP guarantee (module docstring), whatever the horizon; ``releases_per_arm``
        the largest number of Laplace releases of each arm over the replications."""
        per_arm = [int(c) for c in self._release_counts().max(axis=0, initial=0)]
        report = global_dp_report(
            self.algorithm,
            self._eps,
            f"per arm, the reward sum of each completed {self.batches} plus Lap(1/eps) "
            f"(releases per arm, largest over the replications: {per_arm})",
            f"every reward is in exactly one released sum, of sensitivity 1 (rewards in "
            f"[0, 1]): parallel composition, eps ({self.citation})",
        )
        report["releases_per_arm"] = per_arm
        report["total_releases"] = int(sum(per_arm))
        return report
