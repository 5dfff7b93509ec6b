"""An ``[agents.LABEL]`` table: checked against its kind's parameter table and built once.

The checks read the one table each agent class declares (``parameter_constraints``,
:mod:`dpbandits.core.params`); an error raised by the agent names its parameter in its
``param`` attribute (:class:`dpbandits.core.checks.ParameterError`), which places it at the
key path. Probing (one reset for one run, before any work) is the engine's
:func:`dpbandits.experiments.agentspec.probe_agent`: the agent built here is the one that runs.
"""

from __future__ import annotations

import copy
import difflib
import inspect
import math
from collections.abc import Mapping
from typing import Any

import agents as agents_pkg
from dpbandits.experiments.agentspec import probe_agent as engine_probe
from dpbandits.experiments.agentspec import reward_family_mismatch
from dpbandits.experiments.config.environment import env_parameters, resolve_env
from dpbandits.experiments.config.schema import ConfigError, at_key, check_number, show

__all__ = ["accepted_parameters", "build_agent", "check_kind", "check_rewards", "probe_agent"]


def check_kind(label: str, spec: Mapping[str, Any]) -> str:
    """The agent's ``kind``, a name of ``agents.available()`` (else a ConfigError)."""
    kinds = agents_pkg.available()
    kind = spec.get("kind")
    if not isinstance(kind, str) or kind.lower() not in kinds:
        close = difflib.get_close_matches(str(kind).lower(), kinds, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(
            f"agents.{label}.kind",
            f"unknown agent kind {kind!r}{hint}; available: {', '.join(kinds)}",
        )
    return kind


def accepted_parameters(kind: str, params: Mapping[str, Any]) -> list[str] | None:
    """The parameter names an agent of ``kind`` built with ``params`` takes (``None``: any,
    the factory's signature is unknown). A class that passes keywords on (a private agent to
    its selector) says which with a classmethod ``accepted_parameters(params)``."""
    info = agents_pkg.describe(kind)
    if info.signature is None:  # a factory that needs arguments: its own signature
        try:
            sig = inspect.signature(info.factory)
        except (TypeError, ValueError):
            return None
        if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
            return None
        return [p.name for p in sig.parameters.values() if p.kind != p.VAR_POSITIONAL]
    if not info.var_keyword:
        return list(info.parameters)
    own = getattr(info.cls, "accepted_parameters", None)
    if callable(own):
        try:
            return list(own(params))
        except (ValueError, TypeError):  # an unknown selector: make() says so at its key
            return None
    return None


def build_agent(label: str, spec: Mapping[str, Any]) -> Any:
    """A new agent from its table (``kind`` and parameters), every value checked first
    against the kind's parameter table; unknown keys are refused with the close matches."""
    kind = check_kind(label, spec)
    params = {k: v for k, v in spec.items() if k != "kind"}
    path = f"agents.{label}"
    accepted = accepted_parameters(kind, params)
    constraints = getattr(agents_pkg.describe(kind).cls, "parameter_constraints", {}) or {}
    for key, value in params.items():
        if accepted is not None and key not in accepted:
            renamed = getattr(agents_pkg.describe(kind).cls, "renamed_parameters", {}) or {}
            close = [renamed[key]] if key in renamed else difflib.get_close_matches(
                key, accepted, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"{path}.{key}",
                f"unknown parameter of agent kind {kind!r} ({hint}accepted: "
                f"{', '.join(accepted)})",
            )
        if key in constraints:
            # the config's wording of a wrong type ("must be a number, got true"), then the
            # agent's own rule from its table
            rule = constraints[key]
            if rule.kind == "number" and not (value is None and rule.none):
                x = check_number(f"{path}.{key}", value)
                if math.isnan(x):
                    raise ConfigError(f"{path}.{key}", "must not be NaN")
                if math.isinf(x) and rule.high != math.inf:
                    raise ConfigError(f"{path}.{key}", f"must be finite, got {show(value)}")
            try:
                constraints[key].check(key, value)
            except (ValueError, TypeError) as exc:
                raise at_key(exc, path) from None
    try:
        return agents_pkg.make(kind, **copy.deepcopy(params))
    except (ValueError, TypeError) as exc:
        raise at_key(exc, path) from None


def probe_agent(label: str, agent: Any, n_arms: int, horizon: int) -> None:
    """The engine's probe of a built agent (one reset for one run), its error at the key."""
    try:
        engine_probe(label, agent, n_arms, horizon, prefix=False)
    except (ValueError, TypeError) as exc:
        raise at_key(exc, f"agents.{label}") from None


def check_rewards(label: str, agent: Any, env: str, arm: str | None) -> None:
    """The engine's check of an agent against the environment's rewards (one for Bernoulli
    bandits only on other arms: :func:`~dpbandits.experiments.agentspec.reward_family_mismatch`),
    its error at ``experiment.env_kwargs.arm`` when the environment takes that argument, else at
    ``experiment.env``."""
    env_id = resolve_env(env)
    why = reward_family_mismatch(agent, arm, env_id)
    if why is None:
        return
    sig = env_parameters(env_id)
    path = "experiment.env_kwargs.arm" if sig is not None and "arm" in sig[0] else "experiment.env"
    raise ConfigError(path, f"agent {label!r}: {why}")
