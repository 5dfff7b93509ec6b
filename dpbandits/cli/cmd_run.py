"""``dpbandits run``: one regret experiment from a config file or quick flags.

Examples::

    dpbandits run                                   # the shipped example 'piecewise'
    dpbandits run --example                         # list the shipped example configs
    dpbandits run --example fig9 > fig9.toml        # write one, to edit
    dpbandits run fig9.toml --out fig9
    dpbandits run --env dpbandits/PiecewiseBandit-v0 --env-arg horizon=20000 \\
        --agent UCB=ucb --agent 'mGEM=private:selector=mgem,epsilon_select=1' --runs 40

Prints the summary (regret per segment between change points) and the privacy report; writes
``results.npz`` (``Results.load``), ``config.toml`` (the resolved config), ``summary.csv`` and the
regret/reward figure to ``--out``. The config keys are documented in docs/experiments.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dpbandits.cli.experiment_options import (
    add_experiment_command,
    experiment_to_run,
    memory_options,
)
from dpbandits.cli.options import check_writable_file, output_directory, parse_bounds_epsilons

HELP = "run one regret experiment from a TOML config or quick flags"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_experiment_command(subparsers, "run", HELP, __doc__, bounds=True, json=True)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    exp = experiment_to_run(args, "run")
    if exp is None:  # an option asked only for a print (--example, --print-config)
        return 0
    check_writable_file(args.json_path, "--json")
    args.bounds_epsilons = parse_bounds_epsilons(args)
    if args.bounds:  # refused before the run when no bound applies (docs/private-bandits.md)
        from dpbandits.experiments.bounds import check_bounds_drawable

        check_bounds_drawable(exp.env_config())
    # the directory keeps its INCOMPLETE.txt marker unless every file below is written
    with output_directory(args.out, "run") as out:
        written = _run_and_write(args, exp, out)
    print("\nWrote: " + ", ".join(str(p) for p in written))
    sys.stdout.flush()
    return 0


def _run_and_write(args: argparse.Namespace, exp: Any, out: Path) -> list[Path]:
    from dpbandits.core.files import atomic_open, atomic_write, write_csv, write_json
    from dpbandits.experiments.memory import option_names
    from dpbandits.experiments.sweep import summary_rows

    with option_names(memory_options(args, exp)):  # the memory check's messages name options
        results = exp.run(n_jobs=args.jobs, progress=not args.no_progress)
    written = [results.save(out / "results.npz")]
    written.append(atomic_write(out / "config.toml", exp.to_toml()))
    rows = summary_rows(results, {})
    written.append(write_csv(out / "summary.csv", rows))

    title = exp.name or exp.env
    print(
        f"{title}: {exp.n_runs} runs x {results.config['horizon']} steps, seed {exp.seed}; "
        f"{results.timing['wall_seconds']:.1f} s on {results.timing['n_jobs']} worker(s)"
    )
    print("Regret: dynamic pseudo-regret against the expected (clipped) reward; one column per "
          "segment between change points.\n")  # fmt: skip
    print(results.summary())
    if any(results.privacy.get(lab) for lab in results.labels):
        print("\nPrivacy report")
        print(results.privacy_text())
    if not args.no_plots:
        from dpbandits.experiments import plotting

        bounds = {"bounds": True, "bounds_epsilon": args.bounds_epsilons} if args.bounds else {}
        fig = plotting.plot_cumulative(results, **bounds)
        p = out / f"cumulative.{args.format}"
        with atomic_open(p, "wb") as f:
            fig.savefig(f, dpi=120, format=args.format)
        written.append(p)
    if args.json_path:
        written.append(write_json(args.json_path, results.to_json()))
    return written
