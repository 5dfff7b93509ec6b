"""``dpbandits report DIR``: the tables and figures of a sweep over eps, from its output folder.

Examples::

    dpbandits sweep --example private_bernoulli2 > b2.toml && dpbandits sweep b2.toml --out b2
    dpbandits report b2                      # the markdown table: final regret per agent and eps
    dpbandits report b2 --curves 0.1         # and the regret curves of the cell at eps = 0.1
    dpbandits report b2 --label DP-TS=Lazy-DP-TS > table.md
    dpbandits report threshold --threshold   # a sweep over eps_S and two arms' gap and sd

DIR is the ``--out`` folder of ``dpbandits sweep``; nothing is recomputed, every number is read
from the cells' stored results. The table (stdout, markdown) has one row per agent (non-private
references, eps-DP agents of the literature, App. H agents) and one column per eps: final
regret, mean ± standard error over the runs; bold where the agent has learnt (its regret over
the second half of the run is under 0.1 of uniform play's), † where it plays at random (over
0.8); then uniform play's regret and the strongest eps-global-DP lower bound at T. ``--curves
EPS`` writes ``DIR/plots/curves_eps=EPS.png``: the regret over time at that eps of the agents
whose whole run is eps-DP, with the lower bounds. ``--threshold`` reports a sweep over eps_S and
two arms (App. H): the worse arm's share of the pulls against gap x eps_S / d, a table and
``DIR/plots/threshold.png``. The sweep draws the comparison figure itself
(``DIR/plots/regret_vs_*.png``). See docs/private-bandits.md.
"""

from __future__ import annotations

import argparse
import sys

from dpbandits.cli import options

HELP = "tables and figures of a sweep over eps, from its output folder"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = options.add_command(subparsers, "report", HELP, __doc__)
    parser.add_argument("dir", metavar="DIR", help="the --out folder of a dpbandits sweep")
    parser.add_argument("--key", default=None, metavar="KEY",
                        help="the swept privacy parameter (default: the one swept key that "
                        "sets an eps)")  # fmt: skip
    parser.add_argument("--curves", type=options.positive_float, default=None, metavar="EPS",
                        help="also draw the regret curves of the cell at this eps "
                        "(1e6 for inf)")  # fmt: skip
    parser.add_argument("--label", action="append", default=[], metavar="AGENT=NAME",
                        help="the name the table shows for an agent (repeatable)")  # fmt: skip
    parser.add_argument("--threshold", action="store_true",
                        help="the threshold of a sweep over eps_S and two arms, instead of the "
                        "comparison table")  # fmt: skip
    parser.add_argument("--title", default="", help="the curves' title (default: the config's "
                        "name)")  # fmt: skip
    parser.add_argument("--format", default="png", choices=("png", "svg", "pdf"),
                        help="figure file format")  # fmt: skip
    parser.set_defaults(func=run)


def _labels(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        agent, sep, name = item.partition("=")
        if not sep or not agent.strip() or not name.strip():
            raise ValueError(f"--label must be AGENT=NAME, got {item!r}")
        out[agent.strip()] = name.strip()
    return out


def run(args: argparse.Namespace) -> int:
    labels = _labels(args.label)
    if args.threshold and (args.curves is not None or labels):
        raise ValueError("--threshold takes neither --curves nor --label")
    from dpbandits.core.files import atomic_open
    from dpbandits.experiments import sweep_report as sr

    cells = sr.load_sweep(args.dir)
    plots = cells.folder / "plots"
    written = []
    if args.threshold:
        data = sr.threshold(cells, args.key)
        print(sr.threshold_table(data))
        fig, name = sr.plot_threshold(data), f"threshold.{args.format}"
    else:
        key = sr.eps_key(cells, args.key)
        table = sr.comparison(cells, key)
        unknown = sorted(set(labels) - set(table.agents))
        if unknown:
            raise ValueError(f"--label: no agent {', '.join(map(repr, unknown))} in this sweep "
                             f"(agents: {', '.join(table.agents)})")  # fmt: skip
        print(sr.comparison_table(table, labels))
        if args.curves is None:
            fig = None
        else:
            fig = sr.plot_curves(table, args.curves, key, args.title, labels)
            name = f"curves_eps={args.curves:g}.{args.format}"
    if fig is not None:
        plots.mkdir(parents=True, exist_ok=True)
        with atomic_open(plots / name, "wb") as f:
            fig.savefig(f, dpi=100, format=args.format)
        written.append(plots / name)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    return 0
