"""Agent specs: turn a user's ``agents`` argument into labelled agent objects and check them.

One dialect everywhere: an agent is an object, a registered name, or a spec ``{"kind": NAME,
**params}`` -- the Python API's mappings, an experiment config's ``[agents.LABEL]`` table and
the command line's ``--agent LABEL=KIND:key=value`` all become the same spec, built by the one
:func:`build_from_spec` (kind and keys checked with close matches, values against the kind's
``parameter_constraints``). Errors name the parameter (``ParameterError.param``); the config
layer places them at their key path.
"""

from __future__ import annotations

import contextlib
import copy
import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import agents as agents_pkg
from dpbandits.core.checks import ParameterError, ParameterTypeError
from dpbandits.core.files import jsonable
from dpbandits.core.traits import traits_of
from dpbandits.experiments.memory import state_bytes

__all__ = [
    "accepted_parameters",
    "agent_config",
    "build_from_spec",
    "check_kind",
    "check_reward_family",
    "default_label",
    "is_private",
    "probe_agent",
    "resolve_agents",
    "reward_family_mismatch",
    "reward_mismatch",
]


def check_kind(kind: Any) -> str:
    """``kind``, a name of ``agents.available()``, else a ``ParameterError`` (param ``kind``)
    with the close match."""
    kinds = agents_pkg.available()
    if not isinstance(kind, str) or kind.lower() not in kinds:
        close = difflib.get_close_matches(str(kind).lower(), kinds, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ParameterError(
            f"kind: unknown agent kind {kind!r}{hint}; available: {', '.join(kinds)}", "kind"
        )
    return kind


def accepted_parameters(kind: str, params: Mapping[str, Any]) -> list[str] | None:
    """The parameter names an agent of ``kind`` built with ``params`` takes (``None``: any,
    the factory's signature is unknown or takes any keyword). A class that passes keywords on
    (a private agent to its selector) says which with a classmethod
    ``accepted_parameters(params)``."""
    info = agents_pkg.describe(kind)
    if not info.var_keyword:
        return list(info.parameters)
    own = getattr(info.cls, "accepted_parameters", None)
    if callable(own):
        try:
            return list(own(params))
        except (ValueError, TypeError):  # an unknown selector: the agent says so at reset
            return None
    return None


def build_from_spec(spec: Mapping[str, Any]) -> Any:
    """A new agent from ``{"kind": NAME, **params}``: the kind and every key checked first
    (an unknown one refused with the close match, or the name the agent spells it with), each
    value of the kind's ``parameter_constraints`` checked against its rule, then built once.
    Errors are ``ParameterError``/``ParameterTypeError`` naming the key (``param``)."""
    if "kind" not in spec:
        hint = " (the key is 'kind', as in experiment configs)" if "name" in spec else ""
        raise ParameterError(f"kind: an agent spec needs a 'kind' key{hint}, got "
                             f"{sorted(spec)}", "kind")  # fmt: skip
    kind = check_kind(spec["kind"])
    params = {k: v for k, v in spec.items() if k != "kind"}
    info = agents_pkg.describe(kind)
    cls = info.cls
    accepted = accepted_parameters(kind, params)
    constraints = info.constraints
    for key, value in params.items():
        if accepted is not None and key not in accepted:
            renamed = getattr(cls, "renamed_parameters", {}) or {}
            close = ([renamed[key]] if key in renamed
                     else difflib.get_close_matches(key, accepted, n=1))  # fmt: skip
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ParameterError(f"{key}: unknown parameter of agent kind {kind!r} ({hint}"
                                 f"accepted: {', '.join(accepted)})", key)  # fmt: skip
        if key in constraints:
            constraints[key].check(key, value)
    return agents_pkg.make(kind, **copy.deepcopy(params))


def resolve_agents(agents_arg: Any) -> dict[str, Any]:
    """``label -> agent object`` from a mapping of labels to agents, agent names or specs
    ``{"kind": ..., **params}`` (:func:`build_from_spec`), or from a sequence of those
    (labelled by :func:`default_label`, repeated labels numbered ``-2``, ``-3``, ...). Every
    agent must have ``reset``, ``act`` and ``update`` (the protocol of :class:`agents.Agent`)."""
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
        if isinstance(a, (str, Mapping)):
            try:
                a = build_from_spec({"kind": a} if isinstance(a, str) else a)
            except (ParameterError, ParameterTypeError) as exc:
                new: Any = type(exc)(f"agent {label!r}: {exc}")
                new.param = exc.param
                raise new from None
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
    """The label of an agent given in a list: its registered name (a string, or the ``kind`` of
    a spec) or, for an object, its ``name`` attribute or class name."""
    if isinstance(agent, str):
        return agent
    if isinstance(agent, Mapping):
        kind = agent.get("kind")
        if not isinstance(kind, str) or not kind:
            raise ParameterError(
                f"kind: an agent spec needs a 'kind' key (a registered agent), got {dict(agent)}",
                "kind",
            )
        return kind
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else type(agent).__name__


def agent_config(agent: Any) -> dict[str, Any]:
    """What a results file records of an agent: its class, repr and parameters (JSON-able)."""
    get_params = getattr(agent, "get_params", None)
    params = get_params() if callable(get_params) else {}
    return {"class": type(agent).__name__, "repr": repr(agent), "params": jsonable(params)}


def is_private(agent: Any) -> bool:
    """Whether the agent releases private means (its traits say so, ``private_means()`` is
    traced; :func:`dpbandits.core.traits.traits_of`)."""
    return traits_of(agent).private


#: The attribute under which a probed agent carries its probe: ``(n_arms, horizon, repr,
#: bytes of its state per run)``. It travels with the agent (into copies and worker processes),
#: so that an agent built and checked by an experiment config is not reset a second time by the
#: engine; its ``repr`` (the parameters) is part of the key, so that a changed parameter is
#: probed again.
PROBE_ATTRIBUTE = "_dpbandits_probe"


def probe_agent(label: str, agent: Any, n_arms: int, horizon: int, *, prefix: bool = True) -> int:
    """Reset a copy of ``agent`` for one replication in this process, so that a bad parameter
    (agents check their parameters in ``reset``) fails here, before any work is sent to a
    worker, with the agent's label in the message (``prefix``; the error keeps its ``param``).
    Returns the bytes of the copy's state per run (the memory estimate's, measured on the same
    reset). Once per agent object, parameters and problem size (:data:`PROBE_ATTRIBUTE`)."""
    key = (n_arms, horizon, repr(agent))
    carried = getattr(agent, "__dict__", {}).get(PROBE_ATTRIBUTE)
    if isinstance(carried, tuple) and carried[:3] == key:
        return int(carried[3])
    probe = copy.deepcopy(agent)
    try:
        probe.reset(1, n_arms, horizon=horizon, rng=0)
    except (ValueError, TypeError) as exc:
        if not prefix:
            raise
        new: Any = type(exc)(f"agent {label!r}: {exc}")
        new.param = getattr(exc, "param", None)  # the parameter it names, kept for the configs
        raise new from None
    size = state_bytes(probe)
    with contextlib.suppress(AttributeError, TypeError):  # an object without a __dict__
        vars(agent)[PROBE_ATTRIBUTE] = (*key, size)
    return size


def reward_family_mismatch(agent: Any, arm: str | None, env_id: str,
                           bounds: tuple[float, float] | None = None) -> str | None:  # fmt: skip
    """Why ``agent`` cannot run on an environment whose arms are ``arm``
    (:func:`~dpbandits.experiments.envspec.reward_family`), or ``None`` when it can: an agent
    whose traits say ``rewards="bernoulli"`` (DP-KLUCB, DP-IMED: algorithms defined for
    Bernoulli bandits, docs/private-bandits.md) needs Bernoulli arms. An environment that does
    not say (``arm is None``) passes: the agent then refuses the first reward that is not 0 or
    1, at that step. Behind a local randomizer whose reports are real numbers (``arm ==
    "privatized"``: Laplace or debiased reports, docs/trust-models.md) an agent for rewards in
    ``[0, 1]`` is refused too, and so is one on Gaussian arms clipped to ``bounds``
    (:func:`~dpbandits.experiments.envspec.reward_bounds`) wider than ``[0, 1]``: it would
    otherwise stop at the first reward outside, which may come late in the run."""
    found = reward_mismatch(agent, arm, env_id, bounds)
    return None if found is None else found[1]


def reward_mismatch(
    agent: Any, arm: str | None, env_id: str, bounds: tuple[float, float] | None = None
) -> tuple[str, str] | None:
    """:func:`reward_family_mismatch` with its cause: ``(cause, why)`` or ``None``, where
    ``cause`` is ``"privatized"`` (real-valued local reports), ``"bounds"`` (only the clipping
    range is wider than ``[0, 1]``: the fix is ``lo``/``hi``, not the arms) or ``"family"``
    (non-Bernoulli arms for a Bernoulli-only agent)."""
    rewards = traits_of(agent).rewards
    name = getattr(agent, "algorithm", "") or type(agent).__name__
    if arm == "privatized" and rewards in ("unit", "bernoulli"):
        needed = "{0, 1}" if rewards == "bernoulli" else "[0, 1]"
        return "privatized", (
            f"{env_id} reports privatized rewards that leave [0, 1] (Laplace or debiased "
            f"reports), but {name} needs rewards in {needed}: "
            "use randomized response's raw bits (mechanism='response', debias=False) or an "
            "agent for real rewards"
        )
    if (
        arm == "gaussian"
        and rewards == "unit"
        and bounds is not None
        and (bounds[0] < 0.0 or bounds[1] > 1.0)
    ):
        return "bounds", (
            f"{env_id} has Gaussian arms clipped to [{bounds[0]:g}, {bounds[1]:g}], but {name} "
            "needs rewards in [0, 1]: give the environment lo=0, hi=1 (its default), or use an "
            "agent for real rewards"
        )
    if arm is None or arm == "bernoulli" or rewards != "bernoulli":
        return None
    return "family", (
        f"{env_id} has {arm} arms, but {name} is defined for Bernoulli rewards only: run it on "
        "Bernoulli arms (dpbandits/KArmedBernoulli-v0, or arm = 'bernoulli' in "
        "dpbandits/PiecewiseBandit-v0 and dpbandits/DriftingBandit-v0)"
    )


def check_reward_family(label: str, agent: Any, arm: str | None, env_id: str,
                        bounds: tuple[float, float] | None = None) -> None:  # fmt: skip
    """Refuse, before any work, an agent defined for Bernoulli rewards only on an environment
    with other arms, or one for rewards in ``[0, 1]`` on arms clipped to wider ``bounds``
    (:func:`reward_family_mismatch`): a ``ParameterError`` naming ``env``."""
    why = reward_family_mismatch(agent, arm, env_id, bounds)
    if why is not None:
        raise ParameterError(f"agent {label!r}: env {why}", "env")
