"""What the change-detection anchors of the piecewise-stationary setting share (M-UCB, CUSUM-UCB,
GLR-klUCB; docs/shift-anchors.md): an index policy on the play skeleton whose statistics a
change test restarts (:mod:`agents.change_tests`), with forced or uniform exploration, and
defaults of the test's threshold and of the exploration tuned, by each paper, to the horizon
and to the number ``n_changes`` of change points assumed."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from agents.skeleton import IndexAgent
from dpbandits.core.params import Param
from dpbandits.core.traits import AgentTraits

__all__ = ["ShiftAnchor"]


class ShiftAnchor(IndexAgent):
    """Base of the change-detection anchors (module docstring). It owns ``n_changes`` (the
    number of change points ``Upsilon_T`` the defaults assume, the same entry of every anchor's
    parameter table), the tuned values and the hooks that read them: :attr:`exploration`,
    :attr:`restarts`. A subclass's constructor stores its parameters, ``n_changes`` among
    them (:meth:`~agents.base.Agent.keep_parameters`); its ``setup`` computes the ``PAR``
    values of its kernels and the share of exploration from its parameters and the horizon,
    and ends with :meth:`tuned`."""

    traits = AgentTraits(rewards="unit", compiled=True, needs_horizon=True)
    parameter_constraints: ClassVar = {
        "n_changes": Param("int", low=1, doc="number of change points assumed by the defaults"),
    }

    n_changes: int

    def tuned(self, exploration: float, values: dict[str, float]) -> None:
        """Start the replications with ``values``, the ``PAR`` values by name, and the share
        of exploration in use ``exploration`` (the skeleton's ``setup``)."""
        self._exploration = exploration
        self._values = values
        super().setup()

    def parameters(self) -> dict[str, float]:
        return self._values

    @property
    def exploration(self) -> float:
        """The share of exploration in use: M-UCB's and GLR-klUCB's forced exploration
        (``gamma``, ``alpha``), CUSUM-UCB's probability ``alpha`` of uniform exploration."""
        return self._exploration

    @property
    def restarts(self) -> NDArray[np.int64]:
        """The ``(R,)`` numbers of detections (restarts) so far."""
        return self.run_field("restarts").astype(np.int64)
