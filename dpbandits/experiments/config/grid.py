"""Sweep grids: key paths into a config, the ``[sweep]`` table, its cells and their seeds."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from collections.abc import Mapping
from typing import Any

from dpbandits.core.files import jsonable
from dpbandits.experiments.config.schema import (
    EXPERIMENT_DEFAULTS,
    ConfigError,
    ConfigTypeError,
    check_table,
    show,
)

__all__ = [
    "assign",
    "canonical_json",
    "cell_seed",
    "check_key_path",
    "grid_points",
    "parse_sweep",
    "wildcard_names",
]


def canonical_json(x: Any) -> str:
    """Sorted-key, compact JSON: the text hashed for cell seeds and store keys."""
    return json.dumps(jsonable(x), sort_keys=True, separators=(",", ":"), allow_nan=True)


def cell_seed(seed: int, params: Mapping[str, Any]) -> int:
    """The seed of a sweep cell: derived from the root seed and the cell's swept values (not
    its position in the grid), so adding a value to a list leaves every other cell unchanged.

    ``seed`` is the experiment's root seed. Without swept values (or sweeping the seed alone)
    it is that seed.
    """
    others = {k: v for k, v in params.items() if k != "experiment.seed"}
    if not others:
        return seed
    blob = canonical_json({"seed": seed, "params": others}).encode("utf-8")
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big") >> 1


def wildcard_names(last: str) -> list[str]:
    """The parameter names of a key path ``agents.*.LAST``: ``LAST``, or its ``|``-separated
    alternatives. ``agents.*.epsilon|epsilon_select`` sets ``epsilon`` in every agent whose
    table sets it and ``epsilon_select`` in every one that sets that, to the same value: one
    swept key for agent families that name their privacy budget differently (the literature's
    eps-global-DP agents and the App. H private agents, docs/private-bandits.md), where two
    keys would make a product grid."""
    return last.split("|")


def check_key_path(key: str, exp: Mapping[str, Any], agents: Mapping[str, Any], where: str) -> None:
    """Refuse a key path (``experiment.KEY``, ``experiment.env_kwargs.NAME``,
    ``agents.LABEL.PARAMETER``, ``agents.*.PARAMETER``) that names nothing in the config.

    ``where`` is the option or table that gave it (``"sweep"``, ``"--set"``).
    """
    parts = key.split(".")
    if parts[0] == "experiment":
        if len(parts) < 2 or parts[1] not in EXPERIMENT_DEFAULTS:
            raise ConfigError(f"{where}.{key}" if where == "sweep" else key,
                              "not a key of [experiment] (known: "
                              f"{', '.join(sorted(EXPERIMENT_DEFAULTS))})")  # fmt: skip
        if parts[1] != "env_kwargs" and len(parts) > 2:
            raise ConfigError(key, f"experiment.{parts[1]} has no sub-keys")
        if parts[1] == "env_kwargs" and len(parts) < 3:
            raise ConfigError(key, "name an argument: experiment.env_kwargs.NAME")
    elif parts[0] == "agents":
        if len(parts) != 3:
            raise ConfigError(key, "agent keys are agents.LABEL.PARAMETER (or agents.*.PARAMETER)")
        if parts[1] != "*" and parts[1] not in agents:
            raise ConfigError(key, f"no agent {parts[1]!r} (agents: {', '.join(agents)})")
        if parts[1] != "*" and "|" in parts[2]:
            raise ConfigError(key, "alternatives A|B are for agents.*.A|B (every agent that "
                              "sets A or B)")  # fmt: skip
        names = wildcard_names(parts[2]) if parts[1] == "*" else [parts[2]]
        if not all(names):
            raise ConfigError(key, "an empty parameter name among the alternatives")
        if parts[1] == "*" and not any(n in spec for spec in agents.values() for n in names):
            wanted = " or ".join(repr(n) for n in names)
            raise ConfigError(key, f"no agent sets {wanted} (agents.* sets the key of every "
                              "agent that has it)")  # fmt: skip
    else:
        raise ConfigError(key, "keys start with 'experiment.' or 'agents.'")


def assign(cfg: dict[str, Any], key: str, value: Any) -> None:
    """Set a key path in a config dict in place (``agents.*.KEY`` in every agent that has it;
    ``agents.*.A|B`` each of ``A``, ``B`` in every agent that has it: :func:`wildcard_names`)."""
    parts = key.split(".")
    if parts[0] == "agents" and parts[1] == "*":
        for spec in cfg["agents"].values():
            for name in wildcard_names(parts[2]):
                if name in spec:
                    spec[name] = copy.deepcopy(value)
        return
    node = cfg
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = value


def parse_sweep(
    sweep: Any, exp: Mapping[str, Any], agents: Mapping[str, Any]
) -> dict[str, list[Any]]:
    """The ``[sweep]`` table checked: known key paths, each with a list of distinct values."""
    table = check_table("sweep", sweep)
    out: dict[str, list[Any]] = {}
    for key, values in table.items():
        path = f"sweep.{key}" if "." not in key else f'sweep."{key}"'
        try:
            check_key_path(key, exp, agents, "sweep")
        except ConfigError as exc:
            raise type(exc)(path, exc.rule) from None
        if not isinstance(values, list):
            raise ConfigTypeError(path, f"must be a list of values, got {show(values)}")
        if not values:
            raise ConfigError(path, "must list at least one value")
        seen = [canonical_json(v) for v in values]
        if len(set(seen)) != len(seen):
            raise ConfigError(path, f"values must be distinct, got {show(values)}")
        out[key] = copy.deepcopy(values)
    return out


def grid_points(
    base: Mapping[str, Any], sweep: Mapping[str, list[Any]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(swept values, config)`` of every combination of ``sweep``'s values (in the order given,
    the last key varying fastest), each config a copy of ``base`` with its values assigned."""
    keys = list(sweep)
    out = []
    for values in itertools.product(*(sweep[k] for k in keys)):
        params = dict(zip(keys, values, strict=True))
        cfg = copy.deepcopy(dict(base))
        for key, value in params.items():
            assign(cfg, key, copy.deepcopy(value))
        out.append((params, cfg))
    return out
