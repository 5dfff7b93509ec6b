"""An ``[agents.LABEL]`` table: checked against its kind's parameters and built."""

from __future__ import annotations

import copy
import inspect
import numbers
from collections.abc import Mapping
from typing import Any

from dpbandits.experiments.config.schema import (
    ConfigError,
    ConfigTypeError,
    check_number,
    check_positive,
    reword,
    show,
)

__all__ = ["build_agent", "check_kind", "probe_agent"]


def check_kind(label: str, spec: Mapping[str, Any]) -> str:
    """The agent's ``kind``, a name of ``agents.available()`` (else a ConfigError)."""
    import agents as agents_pkg

    kinds = agents_pkg.available()
    kind = spec.get("kind")
    if not isinstance(kind, str) or kind.lower() not in kinds:
        raise ConfigError(
            f"agents.{label}.kind", f"unknown agent kind {kind!r}; available: {', '.join(kinds)}"
        )
    return kind


def _aliases(spec: Mapping[str, Any]) -> dict[str, str]:
    # a private agent's selector reports its own argument name, "epsilon"
    kind = str(spec.get("kind", "")).lower()
    return {"epsilon": "epsilon_select"} if kind == "private" else {}


def _check_value(where: str, key: str, value: Any, param: inspect.Parameter | None) -> None:
    """A parameter's value against the type of its default (and every ``epsilon*`` > 0)."""
    if key.startswith("epsilon"):
        check_positive(where, value)
    default = param.default if param is not None else inspect.Parameter.empty
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigTypeError(where, f"must be true or false, got {show(value)}")
    elif isinstance(default, numbers.Real):
        check_number(where, value)
    elif isinstance(default, str) and key != "selector":
        if not isinstance(value, str):
            raise ConfigTypeError(where, f"must be a string, got {show(value)}")


def build_agent(label: str, spec: Mapping[str, Any]) -> Any:
    """A new agent from its table (``kind`` and parameters), every value checked first.

    Keys the kind's constructor does not take are refused (unless it passes keywords on, as a
    private agent does to its selector); the constructor's own errors come back as
    :class:`ConfigError` at the key path of the parameter they name.
    """
    import agents as agents_pkg

    kind = check_kind(label, spec)
    params = {k: v for k, v in spec.items() if k != "kind"}
    path = f"agents.{label}"
    info = agents_pkg.describe(kind)
    accepted = info.parameters
    for key, value in params.items():
        where = f"{path}.{key}"
        if accepted and not info.var_keyword and key not in accepted:
            raise ConfigError(where, f"unknown parameter of agent kind {kind!r} (accepted: "
                              f"{', '.join(accepted)})")  # fmt: skip
        _check_value(where, key, value, accepted.get(key))
    try:
        return agents_pkg.make(kind, **copy.deepcopy(params))
    except (ValueError, TypeError) as exc:
        raise reword(exc, path, params, _aliases(spec)) from None


def probe_agent(label: str, spec: Mapping[str, Any], n_arms: int, horizon: int) -> None:
    """Build the agent and reset it for one run, so that a bad value fails here, not in a
    worker."""
    agent = build_agent(label, spec)
    try:
        agent.reset(1, n_arms, horizon=horizon, rng=0)
    except (ValueError, TypeError) as exc:
        raise reword(exc, f"agents.{label}", spec, _aliases(spec)) from None
