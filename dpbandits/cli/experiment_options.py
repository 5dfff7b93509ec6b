"""Options shared by ``dpbandits run`` and ``dpbandits sweep``: a config file and quick flags."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from dpbandits.cli.options import (
    add_bounds_options,
    add_command,
    add_env_options,
    add_json_option,
    add_plugin_argument,
    positive_count,
)
from dpbandits.core.docs import docs_reference
from dpbandits.core.plugins import load_plugins


def add_experiment_command(
    subparsers: argparse._SubParsersAction,
    command: str,
    help: str,
    doc: str | None,
    *,
    bounds: bool = False,
    json: bool = False,
) -> argparse.ArgumentParser:
    """The parser of ``dpbandits <command>`` (:func:`~dpbandits.cli.options.add_command`) with
    the config and quick-flag options (:func:`add_experiment_arguments`), then, if asked, the
    lower bounds' options (``bounds``, :func:`~dpbandits.cli.options.add_bounds_options`) and
    ``--json`` (``json``)."""
    parser = add_command(subparsers, command, help, doc)
    add_experiment_arguments(parser, command)
    if bounds:
        add_bounds_options(parser)
    if json:
        add_json_option(parser)
    return parser


def add_experiment_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    parser.add_argument("config", nargs="?", metavar="CONFIG.toml",
                        help=f"experiment config ({docs_reference('experiments')}), or a "
                        "results file (.npz) to re-run or print its config; optional with "
                        "--env")  # fmt: skip
    add_env_options(parser, "environment: a registered id or module:Class (replaces the "
                    "config's)")
    parser.add_argument("--agent", dest="agents", action="append", default=[],
                        metavar="LABEL=KIND:key=value,...",
                        help="an agent, e.g. 'mGEM=private:selector=mgem,epsilon_select=1' or "
                        "'UCB=ucb'; repeatable (replaces the config's agents)")  # fmt: skip
    parser.add_argument("--runs", type=positive_count, default=None,
                        help="replications per agent")
    parser.add_argument("--seed", type=int, default=None, help="root seed")
    parser.add_argument("--delta", type=float, default=None, metavar="DELTA",
                        help="also state every privacy guarantee as (eps, delta) at DELTA in "
                        "(0, 1), converted by dp-accounting (the extra 'accounting'; "
                        f"{docs_reference('trust-models')})")  # fmt: skip
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="set any key path, e.g. agents.mGEM.epsilon_select=2 or "
                        "experiment.env_kwargs.horizon=5000; repeatable")  # fmt: skip
    parser.add_argument("--out", default=f"dpbandits-{command}", metavar="DIR",
                        help="output directory")  # fmt: skip
    parser.add_argument("--jobs", type=positive_count, default=None,
                        help="worker processes (default: all cores)")  # fmt: skip
    parser.add_argument("--format", default="png", choices=("png", "svg", "pdf"), help="figures")
    parser.add_argument("--no-plots", "--no-figures", dest="no_plots", action="store_true",
                        help="do not write figures")  # fmt: skip
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--print-config", action="store_true",
                        help="print the resolved config as TOML and exit (no run)")  # fmt: skip
    parser.add_argument("--example", nargs="?", const="list", default=None, metavar="NAME",
                        help=f"print the example config NAME as shipped with dpbandits and exit "
                        f"(dpbandits {command} --example NAME > my.toml writes it to edit); "
                        "without NAME, or with 'list', list the examples")  # fmt: skip
    add_plugin_argument(parser)


#: The options that change a config (``args`` name: option): ``--example NAME`` prints the
#: shipped file as it is.
_CONFIG_OPTIONS = {"config": "CONFIG.toml", "env": "--env", "env_args": "--env-arg",
                   "agents": "--agent", "runs": "--runs", "seed": "--seed", "sets": "--set",
                   "grid": "--grid"}  # fmt: skip


def print_example(args: argparse.Namespace, command: str) -> bool:
    """``--example``: print the list of shipped examples, or one of them; ``False`` without it.

    An example is printed exactly as shipped (comments included), so ``--example NAME`` with an
    option that would change it is refused rather than ignored."""
    from dpbandits.experiments.examples import example_text, examples_table

    if args.example is None:
        return False
    given = [option for name, option in _CONFIG_OPTIONS.items()
             if getattr(args, name, None) not in (None, [])]  # fmt: skip
    if given:
        raise ValueError(
            f"--example NAME prints the shipped config as it is, without {', '.join(given)}: write "
            f"it with `dpbandits {command} --example NAME > my.toml`, then run "
            f"`dpbandits {command} my.toml` with your options"
        )
    if args.example.strip().lower() == "list":
        sys.stdout.write(
            examples_table() + f"\n\nWrite one to edit: dpbandits {command} --example NAME > "
            "my.toml; run it with the command shown beside it\n"
        )
    else:
        sys.stdout.write(example_text(args.example))
    return True


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


def experiment_to_run(
    args: argparse.Namespace, command: str, grid: list[str] | None = None
) -> Any | None:
    """The experiment ``dpbandits <command>`` runs, or ``None`` when an option asked only for a
    print: ``--example`` (:func:`print_example`), then the config with the quick flags and the
    ``--grid`` items ``grid`` applied (:func:`experiment_from_args`), printed with
    ``--print-config``. ``run`` refuses a config with a ``[sweep]`` table, even to print it."""
    if print_example(args, command):
        return None
    exp = experiment_from_args(args, None if grid is None else parse_grid(grid), command=command)
    if command == "run" and exp.sweep:
        raise ValueError(
            f"{args.config or 'the config'} has a [sweep] table ({', '.join(exp.sweep)}): run it "
            "with `dpbandits sweep`, or pick values with --set KEY=VALUE and drop the table"
        )
    if args.print_config:
        sys.stdout.write(exp.to_toml())
        return None
    return exp


def experiment_from_args(
    args: argparse.Namespace, grid: dict[str, list[Any]] | None = None, *, command: str = "run"
) -> Any:
    """Load plug-ins, then the config with the quick flags applied (validated, no work).

    Without a config file, ``--env`` or ``--agent``, the shipped example of ``command``
    (:data:`~dpbandits.experiments.examples.DEFAULT_RUN` or ``DEFAULT_SWEEP``) is the config,
    with the other options applied, and a line on stderr says so."""
    from dpbandits.core import checks
    from dpbandits.experiments.config import (
        Experiment,
        load_config,
        parse_agent_option,
        parse_assignments,
    )
    from dpbandits.experiments.examples import DEFAULT_RUN, DEFAULT_SWEEP, example_text
    from dpbandits.experiments.memory import RunSizes, check_memory, option_names
    from dpbandits.experiments.sweep import mark_plugins_loaded

    load_plugins(args.plugins)
    mark_plugins_loaded(args.plugins)
    source = args.config
    if source is None and args.env is None and not args.agents:
        # a bare command runs the shipped example of its kind (docs/cli.md), and says so
        name = DEFAULT_SWEEP if command == "sweep" else DEFAULT_RUN
        source = example_text(name)
        print(f"dpbandits {command}: no CONFIG.toml given: running the example config "
              f"'{name}' shipped with dpbandits; `dpbandits {command} --example {name} > "
              f"my.toml` writes it to edit, `dpbandits {command} --example` lists the others",
              file=sys.stderr, flush=True)  # fmt: skip
    sets = parse_assignments(args.sets, "--set")
    if getattr(args, "delta", None) is not None:  # refused before any work when outside (0, 1)
        checks.probability(args.delta, "--delta")
        sets["experiment.delta"] = args.delta
    exp = load_config(
        source,
        env=args.env,
        env_args=parse_assignments(args.env_args, "--env-arg"),
        agents=parse_agent_option(args.agents),
        n_runs=args.runs,
        seed=args.seed,
        sets=sets,
        grid=grid,
        check=False,
    )
    # Sizes are checked against memory before the environments are built (the check below
    # builds each cell's, with its (T, K) tables): the number of arms is not known yet, so
    # this is a lower bound; the engine checks the whole run again (memory_options).
    jobs = args.jobs or os.cpu_count() or 1
    for cell in exp.cells(check=False):
        e = cell.experiment
        horizon = e.horizon if e.horizon is not None else e.env_kwargs.get("horizon")
        if isinstance(horizon, int) and not isinstance(horizon, bool) and horizon >= 1:
            sizes = RunSizes(e.n_runs, horizon, 1, len(e.agents), 0, e.record_stride,
                             e.trace, None, e.chunk_size, jobs)  # fmt: skip
            with option_names(memory_options(args, e)):
                check_memory(sizes, at_least=True)
    return Experiment.from_dict(exp.to_dict())  # every value checked, environments built


def memory_options(args: argparse.Namespace, exp: Any) -> dict[str, str | None]:
    """What the memory messages (:mod:`dpbandits.experiments.memory`) call the sizes of the
    experiment ``exp``: the option or config key that sets each."""
    return {
        "n_runs": "--runs" if args.runs is not None else "experiment.n_runs",
        "horizon": "experiment.horizon" if exp.horizon is not None
        else "experiment.env_kwargs.horizon",
        "workers": "--jobs",
        "record_stride": "experiment.record_stride",
        "trace": "experiment.trace = false",
        "chunk_size": None,  # part of the random stream: not a knob for memory
    }
