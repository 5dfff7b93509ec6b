"""``dpbandits recommend``: RR vs scaled vs clipped SNM on synthetic requests (paper 001).

Experiments (``--experiment``, repeatable; default all three):

- ``epsilon`` -- engagement against eps for RR, scaled SNM and clipped SNM (one line per
  clipping bound) with the non-personalised baseline and the greedy limit (Fig. 3);
- ``gamma`` -- engagement against the cut-off gamma (Fig. 4; RR at ``--gamma-epsilon 5``);
- ``appg`` -- App. G: the three knobs (``--grid-candidates``, ``--grid-extremeness``,
  ``--grid-informativeness``) crossed with the eps grid; ``appg_winners.csv`` names the best
  mechanism per cell.

Writes ``<experiment>.csv`` (and ``.png``/``.svg``/``.pdf`` unless ``--no-plots``) to ``--out``.
Defaults are small (a few seconds); ``--full`` uses 100,000 requests per cell.

Examples::

    dpbandits recommend
    dpbandits recommend --experiment epsilon --epsilon geom:0.1:20:9 --bound 0.05,0.25
    dpbandits recommend --experiment appg --noise gumbel --full
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

EXPERIMENTS = ("epsilon", "gamma", "appg")
DEFAULT_EPS = "0.1,0.3,1,2,3,5,10,20"
DEFAULT_GAMMA = "lin:0:1:11"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "recommend",
        help="RR vs scaled/clipped SNM for private recommendation (paper 001 Figs. 3-4, App. G)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--experiment",
        action="append",
        default=None,
        metavar="NAME",
        help=f"one of {', '.join(EXPERIMENTS)} (repeatable or comma list; default all)",
    )
    p.add_argument(
        "--epsilon",
        default=DEFAULT_EPS,
        help=f"eps grid: 'a,b,c', 'geom:LO:HI:N' or 'lin:LO:HI:N' (default {DEFAULT_EPS})",
    )
    p.add_argument("--gamma", default=DEFAULT_GAMMA, help="cut-off grid for the gamma experiment")
    p.add_argument(
        "--gamma-epsilon",
        type=float,
        default=5.0,
        help="eps of the gamma experiment (paper: RR at 5)",
    )
    p.add_argument(
        "--mechanism",
        action="append",
        default=None,
        metavar="NAME",
        help="rr, snm_scaled, snm_clipped (repeatable; default all; gamma: rr)",
    )
    p.add_argument(
        "--bound",
        action="append",
        default=None,
        metavar="B",
        help="clipping bound Δ/2 of clipped SNM (repeatable; default 0.05,0.25)",
    )
    p.add_argument(
        "--noise",
        choices=["exponential", "gumbel", "laplace"],
        default="exponential",
        help="SNM noise (paper: exponential in §4, Gumbel in App. G)",
    )
    p.add_argument(
        "--cutoff",
        type=float,
        default=1.0,
        help="gamma used by the epsilon and appg experiments (default 1: all)",
    )
    p.add_argument(
        "--requests",
        type=int,
        default=None,
        help="requests per cell (default 10000; 100000 with --full)",
    )
    p.add_argument("--n-candidates", default="10", help="K, or LOW:HIGH drawn per request")
    p.add_argument(
        "--extremeness",
        type=float,
        default=1.0 / 3.0,
        help="private-score extremeness in (0, 1] (1/3 uniform, 1 Bernoulli)",
    )
    p.add_argument(
        "--informativeness",
        type=float,
        default=0.7,
        help="informativeness rho of the public scores in [0, 1]",
    )
    p.add_argument("--mean", type=float, default=0.5, help="mean private score mu in (0, 1)")
    p.add_argument("--grid-candidates", default="3,15", help="App. G: numbers of candidates")
    p.add_argument("--grid-extremeness", default="0.333333,1", help="App. G: extremeness values")
    p.add_argument(
        "--grid-informativeness", default="0.2,0.8", help="App. G: informativeness values"
    )
    p.add_argument("--full", action="store_true", help="paper-size runs (100,000 requests)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--out", default="dpbandits-recommend", help="output directory (default ./%(default)s)"
    )
    p.add_argument("--format", choices=["png", "svg", "pdf"], default="png")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--json", default=None, metavar="PATH", help="also write all rows as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")
    add_plugin_argument(p)
    p.set_defaults(func=run)


def _candidates(text: str) -> int | tuple[int, int]:
    try:
        if ":" in text:
            lo, hi = (int(v) for v in text.split(":"))
            return lo, hi
        return int(text)
    except ValueError:
        raise ValueError(f"--n-candidates: expected K or LOW:HIGH, got {text!r}") from None


def _ints(text: str, name: str) -> list[int]:
    vals = parse_float_grid(text, name)
    if any(v != int(v) or v < 1 for v in vals):
        raise ValueError(f"{name}: expected integers >= 1, got {text!r}")
    return [int(v) for v in vals]


def _check_json(path: str | None) -> None:
    if path is not None:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent) or os.path.isdir(path):
            raise ValueError(f"--json: cannot write {path!r} (no such directory or a directory)")


def run(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        # the output directory is entered once everything is checked (see _run); it keeps its
        # INCOMPLETE.txt marker unless _run finishes
        args.enter_output = lambda path: stack.enter_context(output_directory(path, "recommend"))
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from dpbandits.files import write_csv, write_json
    from dpbandits.recommendation import local_experiments as lx
    from dpbandits.recommendation.synthetic import generate_requests

    load_plugins(args.plugins)
    experiments = split_list(args.experiment) or list(EXPERIMENTS)
    for e in experiments:
        if e not in EXPERIMENTS:
            raise ValueError(f"--experiment must be among {EXPERIMENTS}, got {e!r}")
    mechanisms = split_list(args.mechanism)
    for m in mechanisms or []:
        if m not in lx.MECHANISMS:
            raise ValueError(f"--mechanism must be among {lx.MECHANISMS}, got {m!r}")
    epsilons = [float(v) for v in parse_float_grid(args.epsilon, "--epsilon")]
    if any(not (v > 0) for v in epsilons):
        raise ValueError(f"--epsilon values must be > 0, got {args.epsilon!r}")
    gammas = [float(v) for v in parse_float_grid(args.gamma, "--gamma")]
    if any(not (0 <= g <= 1) for g in gammas):
        raise ValueError(f"--gamma values must lie in [0, 1], got {args.gamma!r}")
    bounds = [float(b) for b in split_list(args.bound) or ["0.05", "0.25"]]
    if any(not (b > 0) for b in bounds):
        raise ValueError(f"--bound values must be > 0, got {bounds!r}")
    n_req = args.requests if args.requests is not None else (100_000 if args.full else 10_000)
    if n_req < 2:
        raise ValueError(f"--requests must be >= 2, got {n_req}")
    knobs: dict[str, Any] = dict(
        n_candidates=_candidates(args.n_candidates),
        extremeness=args.extremeness,
        informativeness=args.informativeness,
        mean=args.mean,
    )
    generate_requests(0, **knobs)  # validate the knobs before any work
    grid_k = _ints(args.grid_candidates, "--grid-candidates")
    grid_e = [float(v) for v in parse_float_grid(args.grid_extremeness, "--grid-extremeness")]
    grid_r = [
        float(v) for v in parse_float_grid(args.grid_informativeness, "--grid-informativeness")
    ]
    for x in grid_e:
        generate_requests(0, extremeness=x)
    for rho in grid_r:
        generate_requests(0, informativeness=rho)
    _check_json(args.json)
    out = str(args.enter_output(args.out))

    def say(msg: str) -> None:
        if not args.no_progress:
            print(msg, file=sys.stderr, flush=True)

    all_rows: dict[str, Any] = {}
    written: list[str] = []
    req = generate_requests(n_req, rng=args.seed, **knobs)
    if "epsilon" in experiments:
        say(f"epsilon sweep: {n_req} requests x {len(epsilons)} eps")
        rows = lx.epsilon_sweep(
            req,
            epsilons,
            mechanisms=mechanisms or lx.MECHANISMS,
            bounds=bounds,
            gamma=args.cutoff,
            noise=args.noise,
            rng=args.seed + 1,
        )
        all_rows["epsilon"] = rows
        written += _save(out, "epsilon", rows, args, "plot_epsilon_sweep")
    if "gamma" in experiments:
        say(f"gamma sweep: {n_req} requests x {len(gammas)} gammas")
        rows = lx.gamma_sweep(
            req,
            gammas,
            mechanisms=mechanisms or ("rr",),
            epsilon=args.gamma_epsilon,
            bound=bounds[0],
            noise=args.noise,
            rng=args.seed + 2,
        )
        all_rows["gamma"] = rows
        written += _save(out, "gamma", rows, args, "plot_gamma_sweep")
    if "appg" in experiments:
        say(f"App. G grid: {len(grid_k) * len(grid_e) * len(grid_r)} cells x {len(epsilons)} eps")
        rows = lx.appg_grid(
            n_requests=n_req,
            n_candidates=grid_k,
            extremeness=grid_e,
            informativeness=grid_r,
            epsilons=epsilons,
            mechanisms=mechanisms or lx.MECHANISMS,
            bound=bounds[0],
            mean=args.mean,
            noise=args.noise,
            rng=args.seed + 3,
        )
        all_rows["appg"] = rows
        written += _save(out, "appg", rows, args, "plot_appg")
        win = lx.winners(rows, ["n_candidates", "extremeness", "informativeness", "epsilon"])
        path = os.path.join(out, "appg_winners.csv")
        write_csv(path, win)
        written.append(path)
    if args.json:
        write_json(args.json, all_rows)
        written.append(args.json)
    for path in written:
        print(path)
    return 0


def _save(
    out: str, name: str, rows: list[dict[str, Any]], args: argparse.Namespace, plot: str
) -> list[str]:
    from dpbandits.files import save_figure, write_csv
    from dpbandits.recommendation import plots

    path = os.path.join(out, f"{name}.csv")
    write_csv(path, rows)
    paths = [path]
    if not args.no_plots:
        fig = getattr(plots, plot)(rows)
        fpath = os.path.join(out, f"{name}.{args.format}")
        save_figure(fig, fpath)
        paths.append(fpath)
    return paths
