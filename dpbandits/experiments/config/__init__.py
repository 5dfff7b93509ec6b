"""An experiment as data: a TOML file or a dict, validated into an :class:`Experiment`.

A config describes one regret experiment (the environment, the agents, the runs) and optionally a
grid of values to sweep; :data:`EXAMPLE_TOML` shows its shape and docs/experiments.md is the
reference of every key.

Everything is checked when the config is read, before any simulation: unknown keys, unknown
environments or agent kinds, wrong types and bad values raise :class:`ConfigError` (a
``ValueError``; :class:`ConfigTypeError` is also a ``TypeError``) whose message starts with the
key path, e.g. ``agents.mGEM.epsilon_select: must be > 0, got -1``. Every cell of a sweep is
checked the same way (its environment is built and its agents are reset once, for one run).

The modules, one idea each: :mod:`~dpbandits.experiments.config.schema` (keys, :class:`ConfigError`
and the
value checks), :mod:`~dpbandits.experiments.config.toml_io` (TOML in and out),
:mod:`~dpbandits.experiments.config.environment` (the environment resolved and probed),
:mod:`~dpbandits.experiments.config.agent_spec` (an agent table checked and built through the
``agents``
registry), :mod:`~dpbandits.experiments.config.grid` (key paths, sweep cells and their seeds),
:mod:`~dpbandits.experiments.config.experiment` (:class:`Experiment`) and
:mod:`~dpbandits.experiments.config.quick_flags` (the command line's values applied over a file).
"""

from __future__ import annotations

from dpbandits.experiments.config.agent_spec import build_agent
from dpbandits.experiments.config.environment import env_parameters, resolve_env
from dpbandits.experiments.config.experiment import EXAMPLE_TOML, Cell, Experiment
from dpbandits.experiments.config.grid import (
    assign,
    canonical_json,
    cell_seed,
    check_key_path,
)
from dpbandits.experiments.config.quick_flags import (
    load_config,
    parse_agent_option,
    parse_assignments,
    split_values,
)
from dpbandits.experiments.config.schema import (
    EXPERIMENT_DEFAULTS,
    SECTIONS,
    ConfigError,
    ConfigTypeError,
)
from dpbandits.experiments.config.toml_io import parse_value, read_toml, to_toml

__all__ = [
    "EXAMPLE_TOML",
    "EXPERIMENT_DEFAULTS",
    "SECTIONS",
    "Cell",
    "ConfigError",
    "ConfigTypeError",
    "Experiment",
    "assign",
    "build_agent",
    "canonical_json",
    "cell_seed",
    "check_key_path",
    "env_parameters",
    "load_config",
    "parse_agent_option",
    "parse_assignments",
    "parse_value",
    "read_toml",
    "resolve_env",
    "split_values",
    "to_toml",
]
