"""``dpbandits multiselect``: multi-selection under geographic DP (paper 004, Tables 1-2).

Each evaluation user sends its feature vector plus ``Laplace(eta)`` noise; the server returns
``k`` items (``sat_realuser``, the baselines ``nopost``, ``nopost_realuser``, ``ig_sig`` and the
App. A variants ``sat``, ``avg``, ``avg_realuser``); the user picks one with the true model
(dis-utility ``d_i``, Table 1) or with the frugal PCA model (``d_f``, Table 2).

The world is synthetic (``dpbandits.recommendation.world``) unless ``--movielens DIR`` points at
a local MovieLens release (``ratings.csv`` and ``movies.csv``; nothing is downloaded), in which
case a bilinear rating model fitted to it is the ground truth.

Writes ``multiselect.csv`` (every algorithm, eta, k), ``table1_d_i.md``, ``table2_d_f.md``
(the paper's layout, with the utility ratio) and ``disutility.<format>`` to ``--out``.
Defaults take well under a minute; ``--full`` uses the paper's sizes (1500 users, q1 = 25,
r = 100, 3400 training users).

Examples::

    dpbandits multiselect
    dpbandits multiselect --eta 0.03,0.05,0.1,0.15,0.2 --k 1,2,3,5 --full
    dpbandits multiselect --movielens ~/data/ml-25m --max-ratings 500000
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

from dpbandits.cli.options import (
    add_plugin_argument,
    load_plugins,
    output_directory,
    parse_float_grid,
    split_list,
)

PAPER_ETAS = "0.03,0.05,0.1,0.15,0.2"
DEFAULT_ALGOS = "nopost,nopost_realuser,sat_realuser,ig_sig,sat"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "multiselect",
        help="multi-selection with geographic DP: dis-utility vs k and eta (paper 004 Tables 1-2)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--eta", default=PAPER_ETAS, help=f"Laplace scales (default {PAPER_ETAS})")
    p.add_argument("--k", action="append", default=None, help="set sizes (default 1,2,3,5)")
    p.add_argument(
        "--algorithm",
        action="append",
        default=None,
        help=f"server algorithms (default {DEFAULT_ALGOS}; also avg, avg_realuser)",
    )
    p.add_argument("--users", type=int, default=None, help="evaluation users (default 100)")
    p.add_argument("--train-users", type=int, default=None, help="public training users")
    p.add_argument("--items", type=int, default=500, help="items of the synthetic world")
    p.add_argument("--q1", type=int, default=25, help="posterior samples for the greedy set")
    p.add_argument("--q2", type=int, default=100, help="posterior samples for the frugal model")
    p.add_argument("--r", type=int, default=100, help="top items per sample (Eq. 4)")
    p.add_argument("--p", type=int, default=20, help="PCA components of the frugal model")
    p.add_argument("--no-frugal", action="store_true", help="skip d_f (the frugal model)")
    p.add_argument(
        "--movielens",
        default=None,
        metavar="DIR",
        help="local MovieLens directory with ratings.csv and movies.csv",
    )
    p.add_argument(
        "--max-ratings",
        type=int,
        default=500_000,
        help="read only the first ratings of --movielens (paper: 500,000)",
    )
    p.add_argument(
        "--min-ratings",
        type=int,
        default=20,
        help="--movielens: drop users with fewer ratings (default 20)",
    )
    p.add_argument("--full", action="store_true", help="paper sizes (slow)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--out", default="dpbandits-multiselect", help="output directory (default ./%(default)s)"
    )
    p.add_argument("--format", choices=["png", "svg", "pdf"], default="png")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--json", default=None, metavar="PATH", help="also write the rows as JSON")
    p.add_argument("--no-progress", action="store_true")
    add_plugin_argument(p)
    p.set_defaults(func=run)


def _positive(name: str, value: int | None) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")


def run(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        # the output directory is entered once everything is checked (see _run); it keeps its
        # INCOMPLETE.txt marker unless _run finishes
        args.enter_output = lambda path: stack.enter_context(output_directory(path, "multiselect"))
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    import numpy as np

    from dpbandits.files import atomic_write as write_text
    from dpbandits.files import save_figure, write_csv, write_json
    from dpbandits.recommendation import multiselection as ms

    load_plugins(args.plugins)
    etas = [float(v) for v in parse_float_grid(args.eta, "--eta")]
    if any(not (0 < e < float("inf")) for e in etas):
        raise ValueError(f"--eta values must be finite and > 0, got {args.eta!r}")
    ks = [int(v) for v in split_list(args.k) or ["1", "2", "3", "5"]]
    if any(k < 1 for k in ks):
        raise ValueError(f"--k values must be >= 1, got {ks}")
    algos = split_list(args.algorithm) or DEFAULT_ALGOS.split(",")
    for a in algos:
        if a not in ms.ALGORITHMS:
            raise ValueError(f"--algorithm must be among {ms.ALGORITHMS}, got {a!r}")
    for name in (
        "users",
        "train_users",
        "items",
        "q1",
        "q2",
        "r",
        "p",
        "max_ratings",
        "min_ratings",
    ):
        _positive("--" + name.replace("_", "-"), getattr(args, name))
    settings = ms.ServerSettings(q1=args.q1, q2=args.q2, r=args.r, p=args.p)
    n_users = args.users or (1500 if args.full else 100)
    n_train = args.train_users or (3400 if args.full else 1000)
    if args.movielens is not None and not os.path.isdir(args.movielens):
        raise ValueError(f"--movielens: no such directory {args.movielens!r}")
    if args.json is not None and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        raise ValueError(f"--json: the directory of {args.json!r} does not exist")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ValueError(f"--out: {args.out!r} exists and is not a directory")
    if max(ks) > args.items and args.movielens is None:
        raise ValueError(f"--k {max(ks)} exceeds --items {args.items}")

    def say(msg: str) -> None:
        if not args.no_progress:
            print(msg, file=sys.stderr, flush=True)

    rng = np.random.default_rng(args.seed)
    world: Any
    if args.movielens is None:
        from dpbandits.recommendation.world import make_world, sample_users

        world = make_world(n_train=n_train, n_items=args.items, rng=rng)
        users = sample_users(world, n_users, rng)
        source = f"synthetic latent-factor world ({n_train} training users, {args.items} items)"
    else:
        from dpbandits.recommendation.movielens import fit_world, load_movielens

        data = load_movielens(
            os.path.join(args.movielens, "ratings.csv"),
            os.path.join(args.movielens, "movies.csv"),
            max_rows=args.max_ratings,
            min_ratings=args.min_ratings,
        )
        n = data.features.shape[0]
        if n < 2:
            raise ValueError(f"--movielens: fewer than 2 users with >= {args.min_ratings} ratings")
        perm = rng.permutation(n)
        n_eval = min(n_users, n // 2)
        if max(ks) > data.items.shape[0]:
            raise ValueError(f"--k {max(ks)} exceeds the {data.items.shape[0]} MovieLens movies")
        world = fit_world(data)
        world = type(world)(**{**world.__dict__, "train": data.features[perm[n_eval:]][:n_train]})
        users = data.features[perm[:n_eval]]
        source = f"MovieLens at {args.movielens} ({data.ratings.size} ratings, fitted model)"
    args.enter_output(args.out)
    say(f"{source}; {users.shape[0]} users x {len(etas)} eta x {len(algos)} algorithms")
    rows = ms.disutility_table(
        world,
        users,
        etas=etas,
        ks=ks,
        algorithms=algos,
        settings=settings,
        frugal=not args.no_frugal,
        rng=rng,
    )
    written = []
    path = os.path.join(args.out, "multiselect.csv")
    write_csv(path, rows)
    written.append(path)
    for metric, name in (("d_i", "table1_d_i.md"), ("d_f", "table2_d_f.md")):
        if metric == "d_f" and args.no_frugal:
            continue
        path = os.path.join(args.out, name)
        write_text(path, markdown_table(rows, metric, source))
        written.append(path)
    if not args.no_plots:
        from dpbandits.recommendation.plots import plot_disutility

        path = os.path.join(args.out, f"disutility.{args.format}")
        save_figure(plot_disutility(rows), path)
        written.append(path)
    if args.json:
        write_json(args.json, rows)
        written.append(args.json)
    for p in written:
        print(p)
    return 0


def markdown_table(rows: list[dict[str, Any]], metric: str, source: str) -> str:
    """Paper 004's table layout: one row per eta, one column per (algorithm, k)."""
    cols: list[tuple[str, int]] = []
    for r in rows:
        if (r["algorithm"], r["k"]) not in cols:
            cols.append((r["algorithm"], r["k"]))
    etas = sorted({r["eta"] for r in rows})
    cell = {(r["algorithm"], r["k"], r["eta"]): r for r in rows}
    ratio = "ratio_i" if metric == "d_i" else "ratio_f"
    head = "| η | " + " | ".join(f"{a} k={k}" for a, k in cols) + " |"
    lines = [
        f"Mean dis-utility {metric} (± s.e.; utility ratio in brackets) — {source}",
        "",
        head,
        "|" + "---|" * (len(cols) + 1),
    ]
    for e in etas:
        vals = []
        for a, k in cols:
            c = cell.get((a, k, e))
            vals.append(
                ""
                if c is None
                else f"{c[metric]:.3f} ± {c[metric + '_se']:.3f} ({100 * c[ratio]:.1f}%)"
            )
        lines.append(f"| {e:g} | " + " | ".join(vals) + " |")
    opt = rows[0]["optimum"] if rows else float("nan")
    lines += ["", f"Mean optimal utility max_b u_M(f_a, b): {opt:.3f}", ""]
    return "\n".join(lines)
