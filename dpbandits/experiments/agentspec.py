"""Agent specs: turn a user's ``agents`` argument into labelled agent objects and check them."""

from __future__ import annotations

import contextlib
import copy
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import agents as agents_pkg
from dpbandits.core.checks import ParameterError
from dpbandits.core.files import jsonable

__all__ = [
    "agent_config",
    "check_reward_family",
    "default_label",
    "is_private",
    "probe_agent",
    "resolve_agents",
    "reward_family_mismatch",
]


def resolve_agents(agents_arg: Any) -> dict[str, Any]:
    """``label -> agent object`` from a mapping of labels to agents, agent names or configs
    ``{"name": ..., **params}``, or from a sequence of those (labelled by :func:`default_label`,
    repeated labels numbered ``-2``, ``-3``, ...). Every agent must have ``reset``, ``act`` and
    ``update`` (the protocol of :class:`agents.Agent`)."""
    if isinstance(agents_arg, Mapping):
        items = list(agents_arg.items())
    elif isinstance(agents_arg, Sequence) and not isinstance(agents_arg, str):
        items = []
        for a in agents_arg:
            base = default_label(a)
            label, n = base, 1
            while label in {k for k, _ in items}:
                n += 1
                label = f"{base}-{n}"
            items.append((label, a))
    else:
        raise TypeError(
            "agents must map labels to agents (or agent names), e.g. {'UCB': 'ucb'}; "
            f"got {type(agents_arg).__name__}"
        )
    if not items:
        raise ValueError("agents must contain at least one agent")
    out: dict[str, Any] = {}
    for label, a in items:
        if not isinstance(label, str) or not label:
            raise TypeError(f"agent labels must be non-empty strings, got {label!r}")
        if isinstance(a, str):
            a = agents_pkg.make(a)
        elif isinstance(a, Mapping):
            params = dict(a)
            if "name" not in params:
                raise ValueError(f"agent config for {label!r} needs a 'name' key, got {params}")
            a = agents_pkg.make(params.pop("name"), **params)
        elif isinstance(a, type):  # UCB, not UCB(): reset() would fail later, confusingly
            raise TypeError(
                f"agent {label!r} is the class {a.__name__}; pass an instance, e.g. "
                f"{a.__name__}(), or a registered name"
            )
        for method in ("reset", "act", "update"):
            if not callable(getattr(a, method, None)):
                raise TypeError(
                    f"agent {label!r} ({type(a).__name__}) has no {method}() method; "
                    "agents follow the protocol of agents.base.Agent"
                )
        out[label] = a
    return out


def default_label(agent: Any) -> str:
    """The label of an agent given in a list: its registered name (a string, or the ``name`` of
    a config mapping) or, for an object, its ``name`` attribute or class name."""
    if isinstance(agent, str):
        return agent
    if isinstance(agent, Mapping):
        name = agent.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(
                f"agent config needs a 'name' key (a registered agent), got {dict(agent)}"
            )
        return name
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else type(agent).__name__


def agent_config(agent: Any) -> dict[str, Any]:
    """What a results file records of an agent: its class, repr and parameters (JSON-able)."""
    get_params = getattr(agent, "get_params", None)
    params = get_params() if callable(get_params) else {}
    return {"class": type(agent).__name__, "repr": repr(agent), "params": jsonable(params)}


def is_private(agent: Any) -> bool:
    """Whether the agent releases private means (has a ``private_means()`` hook to trace)."""
    return callable(getattr(agent, "private_means", None))


#: Agents already probed, with the (n_arms, horizon) they were probed for: an agent built and
#: checked by an experiment config is not reset a second time by the engine.
_PROBED: weakref.WeakKeyDictionary[Any, tuple[int, int]] = weakref.WeakKeyDictionary()


def probe_agent(label: str, agent: Any, n_arms: int, horizon: int, *, prefix: bool = True) -> None:
    """Reset a copy of ``agent`` for one replication in this process, so that a bad parameter
    (agents check their parameters in ``reset``) fails here, before any work is sent to a
    worker, with the agent's label in the message (``prefix``; the error keeps its ``param``).
    Once per agent object and problem size."""
    try:
        if _PROBED.get(agent) == (n_arms, horizon):
            return
    except TypeError:  # an object that takes no weak reference: probed every time
        pass
    try:
        copy.deepcopy(agent).reset(1, n_arms, horizon=horizon, rng=0)
    except (ValueError, TypeError) as exc:
        if not prefix:
            raise
        new: Any = type(exc)(f"agent {label!r}: {exc}")
        new.param = getattr(exc, "param", None)  # the parameter it names, kept for the configs
        raise new from None
    with contextlib.suppress(TypeError):
        _PROBED[agent] = (n_arms, horizon)


def reward_family_mismatch(agent: Any, arm: str | None, env_id: str) -> str | None:
    """Why ``agent`` cannot run on an environment whose arms are ``arm``
    (:func:`~dpbandits.experiments.envspec.reward_family`), or ``None`` when it can: an agent
    whose class says ``bernoulli_only = True`` (DP-KLUCB, DP-IMED: algorithms defined for
    Bernoulli bandits, docs/private-bandits.md) needs Bernoulli arms. An environment that does
    not say (``arm is None``) passes: the agent then refuses the first reward that is not 0 or
    1, at that step."""
    if arm is None or arm == "bernoulli" or not getattr(agent, "bernoulli_only", False):
        return None
    name = getattr(agent, "algorithm", "") or type(agent).__name__
    return (
        f"{env_id} has {arm} arms, but {name} is defined for Bernoulli rewards only: run it on "
        "Bernoulli arms (dpbandits/KArmedBernoulli-v0, or arm = 'bernoulli' in "
        "dpbandits/PiecewiseBandit-v0 and dpbandits/DriftingBandit-v0)"
    )


def check_reward_family(label: str, agent: Any, arm: str | None, env_id: str) -> None:
    """Refuse, before any work, an agent defined for Bernoulli rewards only on an environment
    with other arms (:func:`reward_family_mismatch`): a ``ParameterError`` naming ``env``."""
    why = reward_family_mismatch(agent, arm, env_id)
    if why is not None:
        raise ParameterError(f"agent {label!r}: env {why}", "env")
