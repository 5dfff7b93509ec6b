"""Options shared by ``dpbandits run`` and ``dpbandits sweep``: a config file and quick flags."""

from __future__ import annotations

import argparse
from typing import Any

from dpbandits.cli.options import add_plugin_argument, check_runs_fit_in_memory, load_plugins


def add_experiment_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    parser.add_argument("config", nargs="?", metavar="CONFIG.toml",
                        help="experiment config (docs/experiments.md), or a results file (.npz) "
                        "to re-run or print its config; optional with --env")  # fmt: skip
    parser.add_argument("--env", default=None, metavar="ID",
                        help="environment: a registered id or module:Class (replaces the "
                        "config's)")  # fmt: skip
    parser.add_argument("--env-arg", dest="env_args", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="an environment argument (value in TOML syntax: 2, 0.5, "
                        "[0.2, 0.8], true; other text is a string); repeatable, or "
                        "comma-separated")  # fmt: skip
    parser.add_argument("--agent", dest="agents", action="append", default=[],
                        metavar="LABEL=KIND:key=value,...",
                        help="an agent, e.g. 'mGEM=private:selector=mgem,epsilon_select=1' or "
                        "'UCB=ucb'; repeatable (replaces the config's agents)")  # fmt: skip
    parser.add_argument("--runs", type=int, default=None, help="replications per agent")
    parser.add_argument("--seed", type=int, default=None, help="root seed")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="set any key path, e.g. agents.mGEM.epsilon_select=2 or "
                        "experiment.env_kwargs.horizon=5000; repeatable")  # fmt: skip
    parser.add_argument("--out", default=f"dpbandits-{command}", metavar="DIR",
                        help="output directory")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes (default: all cores)")  # fmt: skip
    parser.add_argument("--format", default="png", choices=("png", "svg", "pdf"), help="figures")
    parser.add_argument("--no-plots", "--no-figures", dest="no_plots", action="store_true",
                        help="do not write figures")  # fmt: skip
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--print-config", action="store_true",
                        help="print the resolved config as TOML and exit (no run)")  # fmt: skip
    add_plugin_argument(parser)


def parse_grid(items: list[str] | None) -> dict[str, list[Any]]:
    """``--grid KEY=V1,V2`` (or ``KEY=[V1, V2]``) -> ``{KEY: [V1, V2]}``."""
    from dpbandits.experiments.config import parse_value, split_values

    grid: dict[str, list[Any]] = {}
    for item in items or []:
        key, sep, rest = item.partition("=")
        if not sep or not key.strip() or not rest.strip():
            raise ValueError(f"--grid: expected KEY=V1,V2,..., got {item!r}")
        value = parse_value(rest)
        values = value if isinstance(value, list) else [parse_value(v) for v in split_values(rest)]
        grid[key.strip()] = values
    return grid


def experiment_from_args(args: argparse.Namespace, grid: dict[str, list[Any]] | None = None) -> Any:
    """Load plug-ins, then the config with the quick flags applied (validated, no work)."""
    from dpbandits.core import checks
    from dpbandits.experiments.config import load_experiment, parse_agent_option, parse_assignments
    from dpbandits.experiments.sweep import mark_plugins_loaded

    load_plugins(args.plugins)
    mark_plugins_loaded(args.plugins)
    for name in ("runs", "jobs"):
        if getattr(args, name) is not None:
            checks.positive_int(getattr(args, name), f"--{name}")
    exp = load_experiment(
        args.config,
        env=args.env,
        env_args=parse_assignments(args.env_args, "--env-arg"),
        agents=parse_agent_option(args.agents),
        n_runs=args.runs,
        seed=args.seed,
        sets=parse_assignments(args.sets, "--set"),
        grid=grid,
    )
    option = "--runs" if args.runs is not None else "experiment.n_runs"
    for cell in exp.cells(check=False):
        check_runs_fit_in_memory(cell.experiment.n_runs, len(cell.experiment.agents), option)
    return exp
