"""``dpbandits multiselect``: multi-selection under geographic DP (paper 004, Tables 1-2).

Each evaluation user sends its feature vector plus ``Laplace(eta)`` noise; the server returns
``k`` items (``sat_realuser``, the baselines ``nopost``, ``nopost_realuser``, ``ig_sig`` and the
App. A variants ``sat``, ``avg``, ``avg_realuser``); the user picks one with the true model
(dis-utility ``d_i``, Table 1) or with the frugal PCA model (``d_f``, Table 2).

The ground truth ``u_M(f, b)`` (a rating in [0, 5]):

- by default a synthetic world (``dpbandits.recommendation.world``): a latent-factor model with
  a rough user embedding, ``5 sigmoid(c_b + s z(f) . (b Q^T) / (h sqrt|b|))`` with
  ``z(f) = f P^T + roughness sin(frequency f R^T + phase)``, built to the statistics paper 004
  reports about its MovieLens network (§5; docs/recommendation.md);
- with ``--movielens DIR`` (a local release with ``ratings.csv`` and ``movies.csv``; nothing is
  downloaded): a neural network fitted to its ratings as the paper's §4.1 (``--truth mlp``,
  default: a scikit-learn ``MLPRegressor`` with ``--hidden`` layers; its test metrics -- share
  of ratings within 0.5, RMSE -- are printed on stderr, also with ``--no-progress``), or a
  ridge bilinear model (``--truth bilinear``).

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
import os
from dataclasses import dataclass
from typing import Any

from dpbandits.cli import options
from dpbandits.core.plugins import load_plugins

HELP = "multi-selection with geographic DP: dis-utility vs k and eta (paper 004 Tables 1-2)"
PAPER_ETAS = "0.03,0.05,0.1,0.15,0.2"
DEFAULT_ALGOS = "nopost,nopost_realuser,sat_realuser,ig_sig,sat"
#: The size options: (flag, default, help); each must be an int >= 1.
SIZES: tuple[tuple[str, int | None, str], ...] = (
    ("--users", None, "evaluation users (default 100; 1500 with --full)"),
    ("--train-users", None, "public training users (default 1000; 3400 with --full)"),
    ("--items", 2000, "items of the synthetic world (default 2000)"),
    ("--q1", 25, "posterior samples for the greedy set (default 25)"),
    ("--q2", 100, "posterior samples for the frugal model (default 100)"),
    ("--r", 100, "top items per sample, Eq. 4 (default 100)"),
    ("--p", 20, "PCA components of the frugal model (default 20)"),
    ("--max-ratings", 500_000, "read only the first ratings of --movielens (default 500000)"),
    ("--min-ratings", 20, "--movielens: drop users with fewer ratings (default 20)"),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = options.add_command(subparsers, "multiselect", HELP, __doc__)
    p.add_argument("--eta", default=PAPER_ETAS, help=f"Laplace scales (default {PAPER_ETAS})")
    options.add_list_option(p, "--k", metavar="K", help="set sizes (default 1,2,3,5)")
    options.add_list_option(
        p, "--algorithm", metavar="NAME",
        help=f"server algorithms (default {DEFAULT_ALGOS}; also avg, avg_realuser)",
    )  # fmt: skip
    for flag, default, text in SIZES:
        p.add_argument(flag, type=int, default=default, help=text)
    p.add_argument("--no-frugal", action="store_true", help="skip d_f (the frugal model)")
    p.add_argument(
        "--truth", choices=["mlp", "bilinear"], default="mlp",
        help="--movielens ground truth: a scikit-learn neural network as the paper's §4.1 "
        "(default) or a ridge bilinear model (the synthetic world is neither: a rough "
        "latent-factor model)",
    )  # fmt: skip
    p.add_argument("--hidden", default="64,32", help="--truth mlp: layer widths (default 64,32)")
    p.add_argument(
        "--movielens", default=None, metavar="DIR",
        help="local MovieLens directory with ratings.csv and movies.csv",
    )  # fmt: skip
    p.add_argument("--full", action="store_true", help="paper sizes (slow)")
    options.add_common_options(p, "multiselect", json=True)
    p.set_defaults(func=run)


@dataclass(frozen=True)
class Settings:
    """The checked options of one ``multiselect`` run (:func:`parse`)."""

    etas: list[float]
    ks: list[int]
    algorithms: list[str]
    server: Any  # multiselection.ServerSettings
    n_users: int
    n_train: int
    hidden: tuple[int, ...]


def run(args: argparse.Namespace) -> int:
    """Check the options, build the world and the users, run every (algorithm, eta, k) and
    write the tables (module docstring)."""
    import numpy as np

    from dpbandits.recommendation import multiselection as ms

    load_plugins(args.plugins)
    s = parse(args)
    say = options.progress_printer(not args.no_progress)
    rng = np.random.default_rng(args.seed)
    if args.movielens is None:
        world, users, source = synthetic_world(args, s, rng)
    else:
        world, users, source = movielens_world(args, s, rng)
    # the output directory keeps its INCOMPLETE.txt marker unless everything below is written
    with options.output_directory(args.out, "multiselect"):
        say(
            f"{source}; {users.shape[0]} users x {len(s.etas)} eta x {len(s.algorithms)} algorithms"
        )
        rows = ms.disutility_table(
            world, users, etas=s.etas, ks=s.ks, algorithms=s.algorithms, settings=s.server,
            frugal=not args.no_frugal, rng=rng,
        )  # fmt: skip
        from dpbandits.recommendation.plots import plot_disutility

        files = options.Outputs(args)
        files.csv("multiselect.csv", rows)
        for metric, name in (("d_i", "table1_d_i.md"), ("d_f", "table2_d_f.md")):
            if metric == "d_f" and args.no_frugal:
                continue
            files.text(name, markdown_table(rows, metric, source))
        files.figure("disutility", lambda: plot_disutility(rows))
        files.json(rows)
    print("\n".join(files.written))
    return 0


def parse(args: argparse.Namespace) -> Settings:
    """Grids, algorithms and sizes, each checked before any work."""
    from dpbandits.recommendation import multiselection as ms

    etas = [float(v) for v in options.parse_float_grid(args.eta, "--eta")]
    if any(not (0 < e < float("inf")) for e in etas):
        raise ValueError(f"--eta values must be finite and > 0, got {args.eta!r}")
    ks = options.parse_ints(args.ks, "--k", (1, 2, 3, 5))
    algos = options.split_list(args.algorithms, "--algorithm") or DEFAULT_ALGOS.split(",")
    for a in algos:
        if a not in ms.ALGORITHMS:
            raise ValueError(f"--algorithm must be among {ms.ALGORITHMS}, got {a!r}")
    options.check_at_least_one(args, *(flag[2:].replace("-", "_") for flag, _, _ in SIZES))
    hidden = tuple(options.parse_ints([args.hidden], "--hidden", (64, 32)))
    if args.movielens is not None and not os.path.isdir(args.movielens):
        raise ValueError(f"--movielens: no such directory {args.movielens!r}")
    options.check_writable_file(args.json_path, "--json")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ValueError(f"--out: {args.out!r} exists and is not a directory")
    if max(ks) > args.items and args.movielens is None:
        raise ValueError(f"--k {max(ks)} exceeds --items {args.items}")
    return Settings(
        etas, ks, algos, ms.ServerSettings(q1=args.q1, q2=args.q2, r=args.r, p=args.p),
        args.users or (1500 if args.full else 100),
        args.train_users or (3400 if args.full else 1000), hidden,
    )  # fmt: skip


def synthetic_world(args: argparse.Namespace, s: Settings, rng: Any) -> tuple[Any, Any, str]:
    """The synthetic latent-factor world, its evaluation users and a line naming it."""
    from dpbandits.recommendation.world import make_world, sample_users

    world = make_world(n_train=s.n_train, n_items=args.items, rng=rng)
    users = sample_users(world, s.n_users, rng)
    return (
        world,
        users,
        (f"synthetic latent-factor world ({s.n_train} training users, {args.items} items)"),
    )


def movielens_world(args: argparse.Namespace, s: Settings, rng: Any) -> tuple[Any, Any, str]:
    """The ground truth fitted to a local MovieLens release (``--truth``), half of its users
    (at most ``--users``) as evaluation users; the network's test metrics are printed."""
    from dpbandits.recommendation.movielens import fit_network_world, fit_world, load_movielens

    data = load_movielens(
        os.path.join(args.movielens, "ratings.csv"), os.path.join(args.movielens, "movies.csv"),
        max_rows=args.max_ratings, min_ratings=args.min_ratings,
    )  # fmt: skip
    options.notice(data.summary)
    n = data.features.shape[0]
    if n < 2:
        raise ValueError(f"--movielens: fewer than 2 users with >= {args.min_ratings} ratings")
    perm = rng.permutation(n)
    n_eval = min(s.n_users, n // 2)
    if max(s.ks) > data.items.shape[0]:
        raise ValueError(f"--k {max(s.ks)} exceeds the {data.items.shape[0]} MovieLens movies")
    world: Any
    if args.truth == "mlp":
        world = fit_network_world(
            data, hidden=s.hidden, min_user_ratings=args.min_ratings, train_users=s.n_train,
            rng=args.seed,
        )  # fmt: skip
        m = world.metrics
        options.notice(
            f"network {s.hidden}: {int(m['ratings'])} ratings of {int(m['users'])} users; "
            f"test within 0.5: {m.get('within_0.5', float('nan')):.1%} (paper 61 %), "
            f"RMSE {m.get('rmse', float('nan')):.3f} (paper 0.93)"
        )
    else:
        world = fit_world(data)
        world = type(world)(
            **{**world.__dict__, "train": data.features[perm[n_eval:]][: s.n_train]}
        )
    source = f"MovieLens at {args.movielens} ({data.ratings.size} ratings, {args.truth} truth)"
    return world, data.features[perm[:n_eval]], source


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
