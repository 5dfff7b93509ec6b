"""``dpbandits sweep``: every cell of a config's ``[sweep]`` grid, stored and resumable.

Examples::

    dpbandits sweep                                 # the shipped example 'drifting'
    dpbandits sweep --example eps_sweep > eps.toml  # write a shipped example, to edit
    dpbandits sweep eps.toml --out eps
    dpbandits sweep my.toml --out my --scheduler tcp://10.0.0.5:8786
    dpbandits sweep --env dpbandits/TwoArmedShift-v0 --env-arg t_shift=3000,horizon=5000 \\
        --agent 'mGEM=private:selector=mgem' --grid agents.mGEM.epsilon_select=0.5,1,2

Each cell (one point of the grid, all agents and runs) is stored in ``DIR/store`` as soon as it
finishes, under a hash of its resolved config, seed and the dpbandits version. Re-running the
same command skips every stored cell -- after a crash or ``kill -9`` too -- and gives files
identical to an uninterrupted sweep. Writes ``summary.csv`` (one row per cell and agent, one
column per swept key, regret per segment), ``cells.csv``, ``sweep.toml`` and the plots. Exits
with status 1 when a cell failed (the others still run). See docs/experiments.md.
"""

from __future__ import annotations

import argparse
import sys

from dpbandits.cli.experiment_options import add_experiment_command, experiment_to_run

HELP = "run a parameter sweep (resumable, on processes or a Dask cluster)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_experiment_command(subparsers, "sweep", HELP, __doc__)
    parser.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                        help="sweep KEY over the values (adds to the config's [sweep]); "
                        "repeatable")  # fmt: skip
    parser.add_argument("--scheduler", default=None,
                        metavar="processes|local|tcp://HOST:PORT|serial",
                        help="where cells run: a local process pool, a Dask LocalCluster, an "
                        "existing Dask scheduler, or this process (default: local with Dask "
                        "installed, else processes)")  # fmt: skip
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dpbandits.experiments.sweep import check_scheduler, sweep

    try:
        scheduler = check_scheduler(args.scheduler)
    except ImportError as exc:
        raise ValueError(f"--scheduler: {exc}") from None
    exp = experiment_to_run(args, "sweep", args.grid)
    if exp is None:  # an option asked only for a print (--example, --print-config)
        return 0
    res = sweep(
        exp,
        args.out,
        scheduler=scheduler,
        n_jobs=args.jobs,
        progress=not args.no_progress,
        plots=not args.no_plots,
        fmt=args.format,
        plugins=args.plugins,
    )
    n = len(res.cells)
    print(
        f"{n} cell{'s' if n != 1 else ''}: {len(res.computed)} computed, {len(res.reused)} reused "
        f"from the store, {len(res.failed)} failed; {res.wall_seconds:.1f} s ({res.scheduler})"
    )
    if res.rows and len(res.rows) <= 60:
        print()
        print(_table(res.rows, list(exp.sweep)))
    n_fig = sum(1 for p in res.files if "plots" in p.parts)
    print(f"\nWrote: {res.out / 'summary.csv'}, {res.out / 'cells.csv'}, "
          f"{res.out / 'sweep.toml'}" + (f", {n_fig} figures in {res.out / 'plots'}" if n_fig
                                         else "")
          + f"; results of each cell in {res.out / 'store'}/")  # fmt: skip
    if res.failed:
        print(f"{len(res.failed)} cell(s) failed; details in {res.out / 'failed_cells.txt'}; "
              "re-run the command to retry them", file=sys.stderr)  # fmt: skip
        return 1
    return 0


def _table(rows: list[dict], keys: list[str]) -> str:
    seg = sorted({k for r in rows for k in r if k.startswith("regret_segment_")},
                 key=lambda k: int(k.rsplit("_", 1)[1]))  # fmt: skip
    head = [*keys, "agent", "regret (mean ± SE)"] + ([f"seg {k.rsplit('_', 1)[1]}" for k in seg]
                                                     if len(seg) > 1 else [])  # fmt: skip

    def num(x: object) -> str:
        return f"{x:,.1f}" if isinstance(x, float) and x == x else "-"

    body = [
        [str(r.get(k, "")) for k in keys]
        + [str(r["agent"]), f"{num(r['regret_mean'])} ± {num(r['regret_se'])}"]
        + ([num(r.get(k)) for k in seg] if len(seg) > 1 else [])
        for r in rows
    ]
    widths = [max(len(c) for c in col) for col in zip(head, *body, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
             for line in [head, ["-" * w for w in widths], *body]]  # fmt: skip
    return "\n".join(lines)
