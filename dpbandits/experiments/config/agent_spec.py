"""An ``[agents.LABEL]`` table: checked against its kind's parameter table and built once.

The checks read the one table each agent class declares (``parameter_constraints``,
:mod:`dpbandits.core.params`); an error raised by the agent names its parameter in its
``param`` attribute (:class:`dpbandits.core.checks.ParameterError`), which places it at the
key path. Probing (one reset for one run, before any work) is the engine's
:func:`dpbandits.experiments.agentspec.probe_agent`: the agent built here is the one that runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import agents as agents_pkg
from dpbandits.experiments.agentspec import build_from_spec, reward_mismatch
from dpbandits.experiments.agentspec import check_kind as spec_kind
from dpbandits.experiments.agentspec import probe_agent as engine_probe
from dpbandits.experiments.config.environment import env_parameters, resolve_env
from dpbandits.experiments.config.schema import ConfigError, at_key, check_number, show

__all__ = ["build_agent", "check_kind", "check_rewards", "probe_agent"]


def check_kind(label: str, spec: Mapping[str, Any]) -> str:
    """The agent's ``kind``, a name of ``agents.available()`` (else a ConfigError at
    ``agents.LABEL.kind``)."""
    try:
        return spec_kind(spec.get("kind"))
    except (ValueError, TypeError) as exc:
        raise at_key(exc, f"agents.{label}") from None


def build_agent(label: str, spec: Mapping[str, Any]) -> Any:
    """A new agent from its table (``kind`` and parameters): the one builder of agent specs
    (:func:`dpbandits.experiments.agentspec.build_from_spec`), each error at its key path.
    A number of the wrong type is worded as the config wrote it first ("must be a number,
    got true")."""
    kind = check_kind(label, spec)
    path = f"agents.{label}"
    constraints = agents_pkg.describe(kind).constraints
    for key, value in spec.items():
        rule = constraints.get(key)
        if rule is not None and rule.kind == "number" and not (value is None and rule.none):
            x = check_number(f"{path}.{key}", value)
            if math.isnan(x):
                raise ConfigError(f"{path}.{key}", "must not be NaN")
            if math.isinf(x) and rule.high != math.inf:
                raise ConfigError(f"{path}.{key}", f"must be finite, got {show(value)}")
    try:
        return build_from_spec(spec)
    except (ValueError, TypeError) as exc:
        raise at_key(exc, path) from None


def probe_agent(label: str, agent: Any, n_arms: int, horizon: int) -> None:
    """The engine's probe of a built agent (one reset for one run), its error at the key."""
    try:
        engine_probe(label, agent, n_arms, horizon, prefix=False)
    except (ValueError, TypeError) as exc:
        raise at_key(exc, f"agents.{label}") from None


def check_rewards(
    label: str,
    agent: Any,
    env: str,
    arm: str | None,
    bounds: tuple[float, float] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
) -> None:
    """The engine's check of an agent against the environment's rewards
    (:func:`~dpbandits.experiments.agentspec.reward_mismatch`: one for Bernoulli bandits
    only on other arms, one for rewards in [0, 1] on Gaussian arms clipped to a wider
    ``bounds``), its error at the key to change: ``experiment.env_kwargs.lo`` / ``.hi`` for a
    clipping range given there, ``experiment.env_kwargs.arm`` when the environment takes that
    argument, else ``experiment.env``."""
    env_id = resolve_env(env)
    found = reward_mismatch(agent, arm, env_id, bounds)
    if found is None:
        return
    cause, why = found
    given = env_kwargs or {}
    sig = env_parameters(env_id)
    if cause == "bounds" and bounds is not None:
        # only the clipping range is wrong: point at the bound given outside [0, 1]
        outside = {"lo": bounds[0] < 0.0, "hi": bounds[1] > 1.0}
        wide = [k for k, bad in outside.items() if bad and k in given]
        path = f"experiment.env_kwargs.{wide[0]}" if wide else "experiment.env_kwargs"
    elif sig is not None and "arm" in sig[0]:
        path = "experiment.env_kwargs.arm"
    else:
        path = "experiment.env"
    raise ConfigError(path, f"agent {label!r}: {why}")
