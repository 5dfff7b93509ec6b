"""``dpbandits topk``: private top-k and DP feature selection (paper 002: Table 1, Figs. 1-8).

Examples::

    dpbandits topk                                # fast: Figs. 1, 5, 8 on the synthetic data
    dpbandits topk --paper                        # paper sizes: 1000 reps, 100 trials, 12 eps
    dpbandits topk --figure fig5 --k 5,8 --mechanism canonical_lipschitz,joint,gumbel
    dpbandits topk --data chin.csv --target y     # Table 1, Figs. 5-8 on your own data set
    dpbandits topk --data alon.csv,sorlie.csv --target y --paper-dataset alon,sorlie
    dpbandits topk --standin christensen,sorlie,yeoh   # Figs. 2-4, 6-7 on synthetic stand-ins
    dpbandits topk --figure slate --scenario 4 --k 5   # k-slates on a selection scenario

Data sets (``--data`` CSV files, ``--standin`` Table 1 names) replace the synthetic data of
Figs. 5/8 and add Table 1 (``table1.csv``: n, p, R^2 of the LASSO) and Figs. 6-7
(``differences.csv``: DP-SIS minus two-stage accuracy per data set and eps). The LASSO penalty
is ``--lasso-lambda`` in paper 002's units (``--lasso-convention``; docs/topk.md). A stand-in
is keyed by its name: ``--standin alon`` is the same data alone or among others. What was
loaded, and where the truth had to continue down the LASSO path, is printed on stderr also
with ``--no-progress``.

Writes figures (``fig1``, ``fig5``, ``fig6``, ``fig7``, ``fig8``, ``slates``) and CSVs
(``fig1_counts.csv``, ``accuracy.csv`` -- accuracy with the TOP/GREAT/GOOD columns of Fig. 8
--, ``table1.csv``, ``differences.csv``, ``slates.csv``) to ``--out`` and prints a summary.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import time
from dataclasses import dataclass
from typing import Any

from dpbandits.cli import options
from dpbandits.core.docs import docs_reference
from dpbandits.core.plugins import load_plugins

HELP = "private top-k and DP feature selection (paper 002, Table 1, Figs. 1-8; k-slates)"
FIGURES = ("fig1", "fig5", "fig6", "fig7", "fig8", "table1", "slate")
#: Figures that need data sets (the user's or stand-ins; default the stand-ins of Figs. 2-4).
DATA_FIGURES = ("fig6", "fig7", "table1")
DEFAULT_STANDINS = ("christensen", "sorlie", "yeoh")
DEFAULT_EPS = "geom:0.1:20:8"
#: The list options of the figures and the k grid: (flag, metavar, help).
FIGURE_LISTS: tuple[tuple[str, str, str], ...] = (
    ("--figure", "FIG", "fig1, fig5, fig6, fig7, fig8, table1, slate (default fig1,fig5,fig8; "
     "with data sets table1,fig5,fig6,fig7,fig8)"),
    ("--k", "K", "numbers of features, integers or 'log' (floor(log d)); default 5,log"),
)  # fmt: skip
#: The list options of the data sets: (flag, metavar, help).
DATA_LISTS: tuple[tuple[str, str, str], ...] = (
    ("--paper-dataset", "NAME", "the Table 1 data set each --data file holds, in order (e.g. "
     "alon,golub), to set the paper's R^2 beside ours; the file names are never guessed from"),
    ("--standin", "NAME", "synthetic stand-ins with a Table 1 data set's (n, d, R^2): names, "
     "'figs' (christensen,sorlie,yeoh) or 'all'"),
)  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    p = options.add_command(subparsers, "topk", HELP, __doc__)
    options.add_list_options(p, FIGURE_LISTS)
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
    p.add_argument(
        "--data", default=None, metavar="CSV[,CSV...]",
        help=f"your data sets (CSV; {docs_reference('topk')}) for Table 1 and Figs. 5-8",
    )  # fmt: skip
    p.add_argument(
        "--target", default=None, metavar="NAME", help="target column (row with --layout genes)"
    )
    p.add_argument(
        "--layout", choices=["samples", "genes"], default="samples",
        help="--data layout: a row per sample (default) or a row per gene",
    )  # fmt: skip
    options.add_list_options(p, DATA_LISTS)
    add_lasso_options(p)
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


def add_lasso_options(p: argparse.ArgumentParser) -> None:
    """The LASSO penalty options: paper 002's lambda and its convention, or scikit-learn's
    alpha (read by :func:`_lasso`)."""
    p.add_argument(
        "--lasso-lambda", type=float, default=None,
        help="LASSO penalty lambda in paper 002's units (two-stage, truth, R^2; default 0.1)",
    )  # fmt: skip
    p.add_argument(
        "--lasso-convention", choices=["mean", "half_sum", "sum"], default="mean",
        help="how eq. (4) normalises the loss: mean (paper 002, scikit-learn alpha = lambda; "
        "default), half_sum (alpha = lambda/n), sum (alpha = lambda/(2n))",
    )  # fmt: skip
    p.add_argument(
        "--lasso-alpha", type=float, default=None,
        help="scikit-learn's alpha directly (= --lasso-lambda with --lasso-convention mean)",
    )  # fmt: skip


def _lasso(args: argparse.Namespace) -> tuple[float, str]:
    """The LASSO penalty (paper 002's lambda) and its convention from the options."""
    if args.lasso_alpha is not None:
        if args.lasso_lambda is not None:
            raise ValueError("--lasso-alpha and --lasso-lambda exclude each other")
        if args.lasso_convention != "mean":
            raise ValueError("--lasso-alpha is scikit-learn's alpha: --lasso-convention mean")
        lam, name = args.lasso_alpha, "--lasso-alpha"
    else:
        lam, name = (0.1 if args.lasso_lambda is None else args.lasso_lambda), "--lasso-lambda"
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"{name} must be finite and > 0, got {lam}")
    return float(lam), str(args.lasso_convention)


def _standin_names(items: list[str] | None) -> list[str]:
    from dpbandits.topk.real_data import TABLE1

    names: list[str] = []
    for item in items or []:
        key = item.strip().lower()
        if key == "all":
            names.extend(TABLE1)
        elif key == "figs":
            names.extend(DEFAULT_STANDINS)
        elif key in TABLE1:
            names.append(key)
        else:
            raise ValueError(
                f"--standin: unknown data set {item!r}; Table 1 has {', '.join(TABLE1)}"
            )
    return list(dict.fromkeys(names))


def _table1_summary(rows: list[dict[str, Any]]) -> str:
    lines = ["Table 1: in-sample R^2 of the non-private LASSO (centred, infinity-norm 1)", ""]
    lines.append(
        "| data set | n | p | R^2 | paper R^2 | nonzero | truth lambda | R^2 at truth lambda |"
    )
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        paper = "" if math.isnan(r["r2_paper"]) else f"{r['r2_paper']:.4f} ({r['paper_dataset']})"
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['p']} | {r['r2']:.4f} | {paper} | "
            f"{r['n_nonzero']} | {r['truth_lambda']:.3g} | {r['r2_truth']:.4f} |"
        )
    return "\n".join(lines)


def _diff_summary(rows: list[dict[str, Any]], k_label: str) -> str:
    lines = [f"{k_label}: DP-SIS minus two-stage top-k accuracy (* = |z| > 2)", ""]
    eps = sorted({r["epsilon"] for r in rows})
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    lines.append("| data set | " + " | ".join(f"{e:.3g}" for e in eps) + " |")
    lines.append("|---|" + "---|" * len(eps))
    for ds in names:
        cells = []
        for e in eps:
            hit = [r for r in rows if r["dataset"] == ds and r["epsilon"] == e]
            cells.append(
                ""
                if not hit
                else f"{hit[0]['difference']:+.2f}{'*' if hit[0]['significant'] else ''}"
            )
        lines.append(f"| {ds} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


@dataclass(frozen=True)
class Job:
    """The checked options of one ``topk`` run (:func:`parse`)."""

    figures: list[str]
    ks: list[str]
    eps: list[float]
    mechanisms: list[str]
    lam: float
    convention: str
    data_paths: list[str]
    paper_names: list[str | None]
    standins: list[str]
    reps: int
    trials: int

    @property
    def has_data(self) -> bool:
        return bool(self.data_paths or self.standins)


class Report:
    """The run's outputs: ``<stem>.csv`` per finished part, its summary text, the JSON."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.files = options.Outputs(args, relative=True)
        self.summary: list[str] = []
        self.records: dict[str, list[dict[str, Any]]] = {}

    def table(self, key: str, stem: str, records: list[dict[str, Any]], text: str) -> None:
        self.records[key] = records
        self.files.csv(f"{stem}.csv", records)
        self.summary.append(text)

    def finish(self, args: argparse.Namespace, t0: float) -> None:
        text = "\n\n".join(self.summary) + "\n"
        self.files.text("summary.md", text)
        self.files.json(self.records)
        print(text)
        print(
            f"seed {args.seed}; {time.perf_counter() - t0:.1f} s; "
            f"wrote {', '.join(self.files.written)} in {args.out}"
        )


def run(args: argparse.Namespace) -> int:
    """Check every option, then the parts asked for: Fig. 1, the data sets and Table 1, the
    accuracy curves (Figs. 5-8), the k-slates; then the summary (module docstring)."""
    load_plugins(args.plugins)
    job = parse(args)
    check_dependencies(args, job)
    say = options.progress_printer(not args.no_progress)
    report = Report(args)
    with options.output_directory(args.out, "topk"):
        t0 = time.perf_counter()
        if "fig1" in job.figures:
            figure1(args, job, report, say)
        datasets = load_datasets(args, job, say) if job.has_data else []
        if "table1" in job.figures:
            from dpbandits.topk.real_data import table1

            rows = table1(datasets)
            report.table("table1", "table1", rows, _table1_summary(rows))
        if {"fig5", "fig6", "fig7", "fig8"} & set(job.figures):
            accuracy(args, job, datasets, report, say)
        if "slate" in job.figures:
            slates(args, job, report, say)
        report.finish(args, t0)
    return 0


def parse(args: argparse.Namespace) -> Job:
    """The figures, grids, data sets and sizes, each checked before any work."""
    from dpbandits.topk.experiments import PAPER_EPSILONS
    from dpbandits.topk.real_data import paper_dataset

    data_paths = options.split_list([args.data] if args.data else None, "--data") or []
    standins = _standin_names(options.split_list(args.standins, "--standin"))
    has_data = bool(data_paths or standins)
    default_figures = (
        ["table1", "fig5", "fig6", "fig7", "fig8"] if has_data else ["fig1", "fig5", "fig8"]
    )
    figures = options.split_list(args.figures, "--figure") or default_figures
    for f in figures:
        if f not in FIGURES:
            raise ValueError(f"--figure must be among {', '.join(FIGURES)}, got {f!r}")
    if not has_data and set(DATA_FIGURES) & set(figures):
        standins = list(DEFAULT_STANDINS)  # the data sets of Figs. 2-4, as stand-ins
    ks = options.split_list(args.ks, "--k") or (["5", "log", "8"] if args.paper else ["5", "log"])
    eps_text = (
        args.epsilon if args.epsilon is not None else ("paper" if args.paper else DEFAULT_EPS)
    )
    options.check_at_least_one(args, "reps", "trials", "slate_trials")
    lam, convention = _lasso(args)
    if (args.data is None) != (args.target is None):
        raise ValueError("--data and --target go together")
    for path in data_paths:
        if not os.path.isfile(path):
            raise ValueError(f"--data: no such file {path!r}")
    papers = options.split_list(args.paper_datasets, "--paper-dataset") or []
    if papers and len(papers) != len(data_paths):
        raise ValueError(
            f"--paper-dataset names {len(papers)} data set(s) for {len(data_paths)} --data "
            "file(s): give one per file, in order ('-' for a file that is none of Table 1)"
        )
    paper_names = [None if p == "-" else paper_dataset(p) for p in papers] or [None] * len(
        data_paths
    )
    return Job(
        figures, ks, options.parse_epsilons(eps_text, paper=PAPER_EPSILONS),
        options.split_list(args.mechanisms, "--mechanism") or ["canonical_lipschitz"],
        lam, convention, data_paths, paper_names, standins,
        args.reps or (1000 if args.paper else 100), args.trials or (100 if args.paper else 30),
    )  # fmt: skip


def check_dependencies(args: argparse.Namespace, job: Job) -> None:
    """Mechanisms, scikit-learn, the slate scenario and the JSON path, before any work."""
    from dpbandits import topk

    for m in job.mechanisms:
        topk.make(m)  # unknown names fail before any work
    if {"fig1", "fig5", "fig8"} & set(job.figures) or job.has_data:
        from dpbandits.topk.feature_selection import SKLEARN_HINT

        try:
            import sklearn  # noqa: F401
        except ImportError:
            raise ValueError(SKLEARN_HINT) from None
    if "slate" in job.figures:
        from dpbandits import scenarios

        scenarios.get(args.scenario)
    options.check_writable_file(args.json_path, "--json")


def figure1(args: argparse.Namespace, job: Job, report: Report, say: Any) -> None:
    from dpbandits.topk import experiments as te
    from dpbandits.topk import plots as tp

    t = time.perf_counter()
    rec1 = te.figure1_counts(job.reps, args.seed, lam=job.lam, convention=job.convention)
    say(f"fig1: {job.reps} repetitions in {time.perf_counter() - t:.1f} s")
    report.table("fig1", "fig1_counts", rec1, _fig1_summary(rec1))
    report.files.figure("fig1", lambda: tp.plot_figure1(rec1))


def load_datasets(args: argparse.Namespace, job: Job, say: Any) -> list[Any]:
    """The user's files, then the stand-ins (keyed by name); what each holds is printed."""
    from dpbandits.topk import real_data as rd

    t = time.perf_counter()
    common: dict[str, Any] = dict(truth_k=job.ks, lam=job.lam, convention=job.convention)
    datasets = [
        rd.load_microarray(path, args.target, layout=args.layout, paper_dataset=paper, **common)
        for path, paper in zip(job.data_paths, job.paper_names, strict=True)
    ]
    datasets += [rd.standin(name, args.seed, **common) for name in job.standins]
    for ds in datasets:
        options.notice(
            f"{ds.name} {ds.X.shape}: LASSO at lambda = {ds.lam:g} ({ds.convention}) keeps "
            f"{ds.n_nonzero} features, R^2 {ds.r2:.4f}"
            + (
                f"; the truth continues down the LASSO path to lambda = {ds.truth_lambda:.3g}"
                if ds.truth_lambda < ds.lam
                else ""
            )
        )
    say(f"data sets loaded in {time.perf_counter() - t:.1f} s")
    return datasets


def accuracy(
    args: argparse.Namespace, job: Job, datasets: list[Any], report: Report, say: Any
) -> None:
    """Figs. 5 and 8 (accuracy curves), Figs. 6-7 (differences) on the data sets, or on the
    synthetic Fan & Lv design without them."""
    import numpy as np

    from dpbandits.topk import experiments as te
    from dpbandits.topk import plots as tp
    from dpbandits.topk.real_data import accuracy_differences

    t = time.perf_counter()
    datasets = datasets or [te.fan_lv_design(np.random.default_rng(args.seed))]
    rec5: list[dict[str, Any]] = []
    for ds in datasets:
        rec5 += te.accuracy_curves(
            ds, job.ks, job.eps, job.trials, args.seed, mechanisms=job.mechanisms,
            lam=job.lam, convention=job.convention,
        )  # fmt: skip
    say(
        f"accuracy: {', '.join(d.name for d in datasets)}, {job.trials} trials "
        f"in {time.perf_counter() - t:.1f} s"
    )
    report.table("accuracy", "accuracy", rec5, _acc_summary(rec5))
    if "fig5" in job.figures:
        report.files.figure("fig5", lambda: tp.plot_accuracy(rec5))
    if "fig8" in job.figures:
        report.files.figure("fig8", lambda: tp.plot_order_metrics(rec5))
    if not {"fig6", "fig7"} & set(job.figures):
        return
    diffs = accuracy_differences(rec5)
    k_of: dict[str, list[int]] = {}
    for r in diffs:
        k_of.setdefault(r["dataset"], []).append(r["k"])
    parts = []
    # Fig. 6 is k = 5, Fig. 7 the data set's floor(log d): the first and the last k
    for fig, pick in (("fig6", min), ("fig7", max)):
        if fig not in job.figures:
            continue
        sel = [r for r in diffs if r["k"] == pick(k_of[r["dataset"]])]
        label = "Fig. 6 (k = smallest)" if fig == "fig6" else "Fig. 7 (k = largest)"
        parts.append(_diff_summary(sel, label))
        report.files.figure(fig, functools.partial(tp.plot_differences, sel, label))
    report.table("differences", "differences", diffs, "\n\n".join(parts))


def slates(args: argparse.Namespace, job: Job, report: Report, say: Any) -> None:
    from dpbandits.topk import plots as tp
    from dpbandits.topk.slates import evaluate_slates

    t = time.perf_counter()
    k_slate = int(job.ks[0]) if job.ks[0].isdigit() else 5
    mechs = job.mechanisms if args.mechanisms else ["canonical_lipschitz", "joint", "gumbel"]
    recs = evaluate_slates(args.scenario, mechs, k_slate, job.eps, args.slate_trials, args.seed)
    say(
        f"slate: scenario {args.scenario}, {args.slate_trials} trials "
        f"in {time.perf_counter() - t:.1f} s"
    )
    report.table("slates", "slates", recs, _slate_summary(recs, args.scenario, k_slate, job.eps))
    report.files.figure("slates", lambda: tp.plot_slates(recs))


def _slate_summary(recs: list[dict[str, Any]], scenario: str, k: int, eps: list[float]) -> str:
    lines = [f"k-slates on scenario {scenario} (k = {k}): top-k accuracy", ""]
    lines.append("| mechanism | " + " | ".join(f"{e:.3g}" for e in eps) + " |")
    lines.append("|---|" + "---|" * len(eps))
    for m in dict.fromkeys(r["mechanism"] for r in recs):
        accs = [r["accuracy"] for r in recs if r["mechanism"] == m]
        lines.append(f"| {m} | " + " | ".join(f"{a:.3f}" for a in accs) + " |")
    return "\n".join(lines)
