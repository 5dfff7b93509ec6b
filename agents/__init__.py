"""Bandit agents: UCB, Thompson sampling, private agents and non-stationary baselines.

Every agent plays a batch of ``R`` independent replications in lockstep (the protocol of
:mod:`agents.base`)::

    import agents
    agent = agents.make("private", selector="mgem")      # or agents.PrivateAgent("mgem")
    agent.reset(n_runs=100, n_arms=2, horizon=50_000, rng=0)
    actions = agent.act()                                  # (100,) int64
    agent.update(actions, rewards)

Built-in names (:func:`available`): ``ucb``, ``thompson``, ``sw_ucb``, ``d_ucb``, ``exp3``,
``private``. :func:`register` adds a user's own agent class or factory under a new name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents.base import Agent, ArmStatistics
from agents.exp3 import Exp3
from agents.nonstationary import DiscountedUCB, SlidingWindowUCB
from agents.private import PrivateAgent
from agents.thompson import ThompsonSampling
from agents.ucb import UCB

__dpbandits_package__ = "agents"  # checked by dpbandits.sibling_packages

__all__ = [
    "UCB",
    "Agent",
    "ArmStatistics",
    "DiscountedUCB",
    "Exp3",
    "PrivateAgent",
    "SlidingWindowUCB",
    "ThompsonSampling",
    "available",
    "make",
    "register",
]

_REGISTRY: dict[str, Callable[..., Any]] = {
    "ucb": UCB,
    "thompson": ThompsonSampling,
    "sw_ucb": SlidingWindowUCB,
    "d_ucb": DiscountedUCB,
    "exp3": Exp3,
    "private": PrivateAgent,
}


def available() -> list[str]:
    """Names accepted by :func:`make`, sorted."""
    return sorted(_REGISTRY)


def register(name: str, factory: Callable[..., Any], *, overwrite: bool = False) -> None:
    """Make ``agents.make(name, **params)`` call ``factory(**params)``.

    ``factory`` is usually an :class:`Agent` subclass. Registering an existing name raises
    ``ValueError`` unless ``overwrite=True``.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    key = name.lower()
    if key in _REGISTRY and not overwrite:
        raise ValueError(f"agent name {name!r} is already registered (pass overwrite=True)")
    _REGISTRY[key] = factory


def make(name: str, **params: Any) -> Any:
    """A new agent by registered name (case-insensitive), e.g. ``make("ucb", log="t")``.

    ``make("private", selector="krr", epsilon_select=4)`` builds a :class:`PrivateAgent`.
    An unknown name raises ``ValueError`` listing the available names.
    """
    if not isinstance(name, str):
        raise TypeError(f"agent name must be a str, got {type(name).__name__}")
    factory = _REGISTRY.get(name.lower())
    if factory is None:
        raise ValueError(f"unknown agent {name!r}; available agents: {', '.join(available())}")
    return factory(**params)
