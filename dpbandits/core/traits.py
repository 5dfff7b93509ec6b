"""What an agent is, declared once: the agent protocol and its traits record.

The engine, experiment configs, the command line and the audits ask an agent what it can do
through one record, :class:`AgentTraits`, that its class declares (``traits = AgentTraits(...)``,
see docs/agents.md), instead of probing it for attributes. :func:`traits_of` reads it; an agent
that declares none (a duck-typed object of the :class:`AgentProtocol`) gets its traits from the
hooks it has, in that one function.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits.core import checks

__all__ = [
    "REWARD_DOMAINS",
    "AgentProtocol",
    "AgentTraits",
    "SchedulingHints",
    "compile_key",
    "cost_hint",
    "traits_of",
]

#: The rewards an agent accepts: any real number, ``[0, 1]``, or ``{0, 1}`` (Bernoulli only).
REWARD_DOMAINS = ("real", "unit", "bernoulli")


@runtime_checkable
class AgentProtocol(Protocol):
    """A batched bandit agent (docs/architecture.md): ``reset`` for ``(n_runs, n_arms)``, then
    ``act() -> (R,)`` actions and ``update(actions, rewards)`` in turn."""

    def reset(self, n_runs: int, n_arms: int, *, horizon: int | None = None,
              rng: np.random.Generator | int | None = None) -> None: ...  # fmt: skip

    def act(self) -> NDArray[np.int64]: ...

    def update(self, actions: ArrayLike, rewards: ArrayLike) -> None: ...


@dataclass(frozen=True)
class AgentTraits:
    """What an agent class is (declared as its ``traits`` class attribute).

    rewards:
        The rewards it is defined for: ``"real"`` (any), ``"unit"`` (``[0, 1]``) or
        ``"bernoulli"`` (``{0, 1}``: run only on Bernoulli arms; configs and the engine refuse
        other environments before any work). It refuses others at the first such step.
    private:
        It releases private means: it has ``private_means() -> (R, K)`` (traced by the engine)
        and ``privacy_report() -> dict`` (checked by ``audit_agent``).
    reports:
        It has ``privacy_report() -> dict``, which the engine keeps with the run's results
        (default: ``private``; an agent that claims a guarantee without releasing private
        means, e.g. one whose privacy is at the user, declares ``reports=True`` alone).
    sensitivities:
        It has ``sensitivities() -> (R, K)``, traced with the private means.
    compiled:
        Its step is compiled: it has ``play(rows, actions, rewards)``, the engine's block path,
        and ``block_player()``, which says when ``play`` may stand for the step protocol
        (:meth:`agents.base.Agent.block_player`).
    needs_horizon:
        With its default parameters, ``reset`` needs the horizon (e.g. UCB's ``ln T``).
    """

    rewards: Literal["real", "unit", "bernoulli"] = "real"
    private: bool = False
    sensitivities: bool = False
    compiled: bool = False
    needs_horizon: bool = False
    reports: bool | None = None

    def __post_init__(self) -> None:
        checks.one_of(self.rewards, REWARD_DOMAINS, "rewards")
        if self.reports is None:  # (frozen: set once, here)
            object.__setattr__(self, "reports", self.private)
        for name in ("private", "sensitivities", "compiled", "needs_horizon", "reports"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")


def traits_of(agent: Any) -> AgentTraits:
    """The traits an agent (or agent class) declares; for one that declares none (an object of
    the bare :class:`AgentProtocol`, e.g. a plug-in written against it only), those its hooks
    show (``private_means``, ``privacy_report``, ``sensitivities``, ``play`` with
    ``block_player``): the one place where an agent is probed."""
    declared = getattr(agent, "traits", None)
    if isinstance(declared, AgentTraits):
        return declared

    def has(hook: str) -> bool:
        return callable(getattr(agent, hook, None))

    return AgentTraits(
        private=has("private_means"),
        sensitivities=has("sensitivities"),
        compiled=has("play") and has("block_player"),
        reports=has("privacy_report"),
    )


@runtime_checkable
class SchedulingHints(Protocol):
    """What the engine schedules an agent by; every :class:`agents.base.Agent` has both, with
    defaults (docs/performance.md)."""

    @property
    def cost_hint(self) -> float:
        """Relative CPU cost of a step (UCB ~ 1): the engine runs the slowest tasks first."""
        ...

    def compile_key(self, n_arms: int) -> Hashable:
        """What the agent's compiled code depends on: agents with equal keys share it (the
        engine's warm-up compiles it once)."""
        ...


def cost_hint(agent: Any) -> float:
    """The relative cost of ``agent``'s step (:class:`SchedulingHints`; 1 for an agent of the
    bare protocol)."""
    if isinstance(agent, SchedulingHints):
        return float(agent.cost_hint)
    return 1.0


def compile_key(agent: Any, n_arms: int) -> Hashable:
    """What ``agent``'s compiled code depends on for ``n_arms`` arms (:class:`SchedulingHints`;
    its class and parameters for an agent of the bare protocol)."""
    if isinstance(agent, SchedulingHints):
        return agent.compile_key(n_arms)
    return (type(agent), repr(agent))
