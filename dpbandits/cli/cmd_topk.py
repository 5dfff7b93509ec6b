"""``dpbandits topk``: private top-k and DP feature selection (paper 002: Figs. 1, 5, 8).

Examples::

    dpbandits topk                                # fast: Figs. 1, 5, 8 on the synthetic data
    dpbandits topk --paper                        # paper sizes: 1000 reps, 100 trials, 12 eps
    dpbandits topk --figure fig5 --k 5,8 --mechanism canonical_lipschitz,joint,gumbel
    dpbandits topk --data chin.csv --target y     # Figs. 5/8 on your own data set
    dpbandits topk --figure slate --scenario 4 --k 5   # k-slates on a selection scenario

Writes figures (``fig1``, ``fig5``, ``fig8``, ``slates``) and CSVs (``fig1_counts.csv``,
``accuracy.csv`` -- Fig. 5 accuracy with the TOP/GREAT/GOOD columns of Fig. 8 --,
``slates.csv``) to ``--out`` and prints a summary.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from typing import Any

from dpbandits.cli import options

HELP = "private top-k and DP feature selection (paper 002, Figs. 1, 5, 8; k-slates)"
FIGURES = ("fig1", "fig5", "fig8", "slate")
DEFAULT_EPS = "geom:0.1:20:8"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = options.add_command(subparsers, "topk", HELP, __doc__)
    options.add_list_option(
        p, "--figure", metavar="FIG", help="fig1, fig5, fig8, slate (default fig1,fig5,fig8)"
    )
    options.add_list_option(
        p, "--k", metavar="K",
        help="numbers of features, integers or 'log' (floor(log d)); default 5,log",
    )  # fmt: skip
    options.add_epsilon_option(p, None, paper="paper 002's 12 values 0.1..20", shown=DEFAULT_EPS)
    options.add_list_option(
        p, "--mechanism", metavar="NAME",
        help="top-k mechanisms (dpbandits.topk.available()); default canonical_lipschitz",
    )  # fmt: skip
    p.add_argument("--reps", type=int, default=None, help="Fig. 1 repetitions (default 100)")
    p.add_argument(
        "--trials",
        "--runs",
        dest="trials",
        type=int,
        default=None,
        help="trials per (k, eps) for Figs. 5/8 (default 30; paper 100)",
    )
    p.add_argument(
        "--paper", action="store_true", help="paper sizes: 1000 reps, 100 trials, 12 eps, k 5,log,8"
    )
    p.add_argument("--data", default=None, metavar="CSV", help="your data set for Figs. 5/8")
    p.add_argument("--target", default=None, metavar="COLUMN", help="target column of --data")
    p.add_argument(
        "--lasso-alpha", type=float, default=0.1, help="LASSO alpha (two-stage, truth; 0.1)"
    )
    p.add_argument("--scenario", default="4", help="selection scenario of --figure slate (4)")
    p.add_argument(
        "--slate-trials", type=int, default=1000, help="trials of --figure slate (default 1000)"
    )
    options.add_common_options(p, "topk", json=True)
    p.set_defaults(func=run)


def _fig1_summary(records: list[dict[str, Any]]) -> str:
    lines = ["Figure 1 (non-private, k = 5): times selected", ""]
    lines.append(
        "| design | method | features 1-5 (each) | features 6-95 (total) | 96-100 (each) |"
    )
    lines.append("|---|---|---|---|---|")
    for design in ("W1", "W1/W2"):
        for method in ("SIS", "two-stage"):
            c = [r["count"] for r in records if r["design"] == design and r["method"] == method]
            lines.append(
                f"| {design} | {method} | {' '.join(map(str, c[:5]))} | {sum(c[5:95])} | "
                f"{' '.join(map(str, c[95:]))} |"
            )
    return "\n".join(lines)


def _acc_summary(records: list[dict[str, Any]]) -> str:
    out = []
    for ds, k in dict.fromkeys((r["dataset"], r["k"]) for r in records):
        rows = [r for r in records if r["dataset"] == ds and r["k"] == k]
        cols = list(dict.fromkeys((r["method"], r["mechanism"]) for r in rows))
        eps = sorted({r["epsilon"] for r in rows})
        out.append(f"{ds}, k = {k}: top-k accuracy (TOP / GREAT / GOOD for DP-SIS)")
        out.append("")
        head = ["eps"] + [
            m if mech in ("none", "canonical_lipschitz") else f"{m} [{mech}]" for m, mech in cols
        ]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for e in eps:
            cells = [("non-private" if math.isinf(e) else f"{e:.3g}")]
            for m, mech in cols:
                hit = [
                    r
                    for r in rows
                    if r["method"] == m and r["mechanism"] == mech and r["epsilon"] == e
                ]
                if not hit:
                    cells.append("")
                    continue
                r = hit[0]
                cell = f"{r['accuracy']:.3f}"
                if m == "DP-SIS":
                    cell += f" ({r['top']:.2f}/{r['great']:.2f}/{r['good']:.2f})"
                cells.append(cell)
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    options.load_plugins(args.plugins)
    figures = options.split_list(args.figures, "--figure") or ["fig1", "fig5", "fig8"]
    for f in figures:
        if f not in FIGURES:
            raise ValueError(f"--figure must be among {', '.join(FIGURES)}, got {f!r}")
    ks = options.split_list(args.ks, "--k") or (["5", "log", "8"] if args.paper else ["5", "log"])
    from dpbandits.topk.experiments import PAPER_EPSILONS

    eps_text = (
        args.epsilon if args.epsilon is not None else ("paper" if args.paper else DEFAULT_EPS)
    )
    eps = options.parse_epsilons(eps_text, paper=PAPER_EPSILONS)  # 'paper': paper 002's grid
    mechanisms = options.split_list(args.mechanisms, "--mechanism") or ["canonical_lipschitz"]
    options.check_at_least_one(args, "reps", "trials", "slate_trials")
    if not (math.isfinite(args.lasso_alpha) and args.lasso_alpha > 0):
        raise ValueError(f"--lasso-alpha must be finite and > 0, got {args.lasso_alpha}")
    if (args.data is None) != (args.target is None):
        raise ValueError("--data and --target go together")
    if args.data is not None and not os.path.isfile(args.data):
        raise ValueError(f"--data: no such file {args.data!r}")
    reps = args.reps or (1000 if args.paper else 100)
    trials = args.trials or (100 if args.paper else 30)

    from dpbandits import topk

    for m in mechanisms:
        topk.make(m)  # unknown names fail before any work
    if {"fig1", "fig5", "fig8"} & set(figures):
        from dpbandits.topk.feature_selection import SKLEARN_HINT

        try:
            import sklearn  # noqa: F401
        except ImportError:
            raise ValueError(SKLEARN_HINT) from None
    if "slate" in figures:
        from dpbandits import scenarios

        scenarios.get(args.scenario)
    options.check_writable_file(args.json_path, "--json")

    say = options.progress_printer(not args.no_progress)
    files = options.Outputs(args, relative=True)
    summary: list[str] = []
    all_records: dict[str, list[dict[str, Any]]] = {}

    def table(key: str, stem: str, records: list[dict[str, Any]], text: str) -> None:
        """A finished part: ``<stem>.csv``, its summary, and ``key`` of the JSON file."""
        all_records[key] = records
        files.csv(f"{stem}.csv", records)
        summary.append(text)

    with options.output_directory(args.out, "topk"):
        import numpy as np

        from dpbandits.topk import experiments as te
        from dpbandits.topk import plots as tp

        t0 = time.perf_counter()
        if "fig1" in figures:
            t = time.perf_counter()
            rec1 = te.figure1_counts(reps, args.seed, alpha=args.lasso_alpha)
            say(f"fig1: {reps} repetitions in {time.perf_counter() - t:.1f} s")
            table("fig1", "fig1_counts", rec1, _fig1_summary(rec1))
            files.figure("fig1", lambda: tp.plot_figure1(rec1))
        if "fig5" in figures or "fig8" in figures:
            t = time.perf_counter()
            if args.data is not None:
                data = te.load_csv(args.data, args.target, alpha=args.lasso_alpha)
            else:
                data = te.fan_lv_design(np.random.default_rng(args.seed))
            rec5 = te.accuracy_curves(
                data, ks, eps, trials, args.seed, mechanisms=mechanisms, alpha=args.lasso_alpha
            )
            say(
                f"fig5/fig8: {data.name} {data.X.shape}, {trials} trials "
                f"in {time.perf_counter() - t:.1f} s"
            )
            table("accuracy", "accuracy", rec5, _acc_summary(rec5))
            if "fig5" in figures:
                files.figure("fig5", lambda: tp.plot_accuracy(rec5))
            if "fig8" in figures:
                files.figure("fig8", lambda: tp.plot_order_metrics(rec5))
        if "slate" in figures:
            from dpbandits.topk.slates import evaluate_slates

            t = time.perf_counter()
            k_slate = int(ks[0]) if ks[0].isdigit() else 5
            slate_mechs = (
                mechanisms if args.mechanisms else ["canonical_lipschitz", "joint", "gumbel"]
            )
            recs = evaluate_slates(
                args.scenario, slate_mechs, k_slate, eps, args.slate_trials, args.seed
            )
            say(
                f"slate: scenario {args.scenario}, {args.slate_trials} trials "
                f"in {time.perf_counter() - t:.1f} s"
            )
            table("slates", "slates", recs, _slate_summary(recs, args.scenario, k_slate, eps))
            files.figure("slates", lambda: tp.plot_slates(recs))
        text = "\n\n".join(summary) + "\n"
        files.text("summary.md", text)
        files.json(all_records)
        print(text)
        print(
            f"seed {args.seed}; {time.perf_counter() - t0:.1f} s; "
            f"wrote {', '.join(files.written)} in {args.out}"
        )
    return 0


def _slate_summary(recs: list[dict[str, Any]], scenario: str, k: int, eps: list[float]) -> str:
    lines = [f"k-slates on scenario {scenario} (k = {k}): top-k accuracy", ""]
    lines.append("| mechanism | " + " | ".join(f"{e:.3g}" for e in eps) + " |")
    lines.append("|---|" + "---|" * len(eps))
    for m in dict.fromkeys(r["mechanism"] for r in recs):
        accs = [r["accuracy"] for r in recs if r["mechanism"] == m]
        lines.append(f"| {m} | " + " | ".join(f"{a:.3f}" for a in accs) + " |")
    return "\n".join(lines)
