"""``dpbandits recommend``: RR vs scaled vs clipped SNM, engagement and ad auctions (paper 001).

Experiments (``--experiment``, repeatable; default all; with ``--auctions`` or ``--taobao``
the three auction ones):

- ``epsilon`` -- engagement against eps for RR, scaled SNM and clipped SNM (one line per
  clipping bound) with the non-personalised baseline and the greedy limit (Fig. 3);
- ``gamma`` -- engagement against the cut-off gamma (Fig. 4; RR at ``--gamma-epsilon 5``);
- ``appg`` -- App. G: the three knobs (``--grid-candidates``, ``--grid-extremeness``,
  ``--grid-informativeness``) crossed with the eps grid; ``appg_winners.csv`` names the best
  mechanism per cell;
- ``rq1`` -- pricing with pClick_server vs pClick_device vs an uninformed model, greedy
  selection: revenue and surplus lifts (Figs. 2 and 6);
- ``auction-epsilon`` -- CTR, advertiser surplus and platform revenue against eps (Figs. 3 and
  7; clipped SNM once per ``--auction-bound``, panels d-f);
- ``auction-gamma`` -- the same against the cut-off gamma (Figs. 4 and 8).

The auction experiments run on synthetic auctions (``--ctr``, ``--ctr-extremeness``,
``--bid-sigma``, ``--informativeness``, ``--n-candidates``), on your per-auction file
(``--auctions FILE.csv|.parquet``; docs/recommendation.md, "Your auction data") or on the
Taobao log (``--taobao DIR`` with raw_sample.csv, ad_feature.csv, user_profile.csv); both are
read through pandas (the optional extra ``pandas``; ``parquet`` for Parquet). A bad cell stops
the command with its file, line and column; what was loaded (auctions, candidates, clicks,
dates, what was dropped) and the outcome chosen are printed on stderr, also with
``--no-progress``. Ads the log never showed (empty ``click``, or ``shown`` = 0) have no
observed click: CTR by logged clicks leaves their auctions out and says how many.

Writes ``<experiment>.csv`` (and ``.png``/``.svg``/``.pdf`` unless ``--no-plots``) to ``--out``.
Defaults are small (a few seconds); ``--full`` uses 100,000 requests per cell.

Examples::

    dpbandits recommend
    dpbandits recommend --experiment epsilon --epsilon geom:0.1:20:9 --bound 0.05,0.25
    dpbandits recommend --experiment appg --noise gumbel --full
    dpbandits recommend --auctions my_auctions.csv --payment click
    dpbandits recommend --taobao ~/data/taobao --experiment rq1,auction-gamma
"""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpbandits.cli import options
from dpbandits.core.plugins import load_plugins

HELP = "RR vs scaled/clipped SNM for private recommendation (paper 001 Figs. 3-4, App. G)"
EXPERIMENTS = ("epsilon", "gamma", "appg", "rq1", "auction-epsilon", "auction-gamma")
AUCTION_EXPERIMENTS = ("rq1", "auction-epsilon", "auction-gamma")
DEFAULT_EPS = "0.1,0.3,1,2,3,5,10,20"
DEFAULT_GAMMA = "lin:0:1:11"
#: The real-valued knobs of the requests: (flag, default, help).
KNOBS: tuple[tuple[str, float, str], ...] = (
    ("--extremeness", 1.0 / 3.0, "private-score extremeness in (0, 1] (1/3 uniform, 1 Bernoulli)"),
    ("--informativeness", 0.7, "informativeness rho of the public scores in [0, 1]"),
    ("--mean", 0.5, "mean private score mu in (0, 1)"),
)
#: The App. G grids: (flag, default, help).
GRIDS: tuple[tuple[str, str, str], ...] = (
    ("--grid-candidates", "3,15", "App. G: numbers of candidates"),
    ("--grid-extremeness", "0.333333,1", "App. G: extremeness values"),
    ("--grid-informativeness", "0.2,0.8", "App. G: informativeness values"),
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = options.add_command(subparsers, "recommend", HELP, __doc__)
    options.add_list_option(
        p, "--experiment", metavar="NAME", help=f"one of {', '.join(EXPERIMENTS)} (default all)"
    )
    options.add_epsilon_option(p, DEFAULT_EPS, paper="the main paper's 12 values 0.01..16")
    p.add_argument("--gamma", default=DEFAULT_GAMMA, help="cut-off grid for the gamma experiment")
    p.add_argument(
        "--gamma-epsilon", type=float, default=5.0,
        help="eps of the gamma experiment (paper: RR at 5)",
    )  # fmt: skip
    options.add_list_option(
        p, "--mechanism", metavar="NAME",
        help="rr, snm_scaled, snm_clipped (default all; gamma: rr)",
    )  # fmt: skip
    options.add_list_option(
        p, "--bound", metavar="B", help="clipping bound Δ/2 of clipped SNM (default 0.05,0.25)"
    )
    p.add_argument(
        "--noise", choices=["exponential", "gumbel", "laplace"], default="exponential",
        help="SNM noise (paper: exponential in §4, Gumbel in App. G)",
    )  # fmt: skip
    p.add_argument(
        "--cutoff", type=float, default=1.0,
        help="gamma used by the epsilon and appg experiments (default 1: all)",
    )  # fmt: skip
    p.add_argument(
        "--requests", type=int, default=None,
        help="requests per cell (default 10000; 100000 with --full)",
    )  # fmt: skip
    p.add_argument("--n-candidates", default="10", help="K, or LOW:HIGH drawn per request")
    for flag, value, text in KNOBS:
        p.add_argument(flag, type=float, default=value, help=text)
    for flag, grid, text in GRIDS:
        p.add_argument(flag, default=grid, help=text)
    p.add_argument("--full", action="store_true", help="paper-size runs (100,000 requests)")
    p.add_argument(
        "--auctions", default=None, metavar="FILE",
        help="your per-auction data (CSV or Parquet; one row per candidate ad)",
    )  # fmt: skip
    p.add_argument(
        "--taobao", default=None, metavar="DIR",
        help="directory with the Taobao log (raw_sample.csv, ad_feature.csv, user_profile.csv)",
    )  # fmt: skip
    p.add_argument(
        "--max-rows", type=int, default=None, help="--taobao: impressions read (default all)"
    )
    p.add_argument(
        "--max-candidates", type=int, default=None,
        help="keep each auction's top ads by s_server (the paper's internal data: 15)",
    )  # fmt: skip
    p.add_argument(
        "--payment", choices=["click", "impression"], default="click",
        help="what the advertiser pays for (default click, the paper's bid-per-click auctions)",
    )  # fmt: skip
    p.add_argument(
        "--outcome", choices=["auto", "pclick_device", "click"], default="auto",
        help="CTR measured by pClick_device (direct method) or logged clicks (auto: clicks "
        "when every candidate has a logged click; click: auctions with candidates never shown "
        "are left out and counted)",
    )  # fmt: skip
    options.add_list_option(
        p, "--auction-bound", metavar="B",
        help="clipping bounds Δ/2 in score units (bid x pClick) for the auction experiments "
        "(default 0.25 and 1 times the median public score)",
    )  # fmt: skip
    p.add_argument("--ctr", type=float, default=0.05, help="synthetic auctions: mean pClick")
    p.add_argument(
        "--ctr-extremeness", type=float, default=0.1,
        help="synthetic auctions: pClick extremeness (Var / (ctr (1 - ctr)))",
    )  # fmt: skip
    p.add_argument(
        "--bid-sigma", type=float, default=0.5, help="synthetic auctions: log-normal bid spread"
    )
    options.add_common_options(p, "recommend", json=True)
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
    vals = options.parse_float_grid(text, name)
    if any(v != int(v) or v < 1 for v in vals):
        raise ValueError(f"{name}: expected integers >= 1, got {text!r}")
    return [int(v) for v in vals]


@dataclass(frozen=True)
class Settings:
    """The checked options of one ``recommend`` run (:func:`parse`)."""

    experiments: list[str]
    mechanisms: list[str] | None
    epsilons: list[float]
    gammas: list[float]
    bounds: list[float]
    n_requests: int
    knobs: dict[str, Any]
    grid: tuple[list[int], list[float], list[float]]  # App. G: candidates, extremeness, rho
    auction_bounds: list[float] | None


def run(args: argparse.Namespace) -> int:
    """Check every option, then run the experiments in the order of ``EXPERIMENTS`` and write
    their CSVs, figures and JSON (module docstring)."""
    load_plugins(args.plugins)
    settings = parse(args)
    check_data_options(args)
    from dpbandits.recommendation import plots  # matplotlib: only once the arguments are checked

    say = options.progress_printer(not args.no_progress)
    steps = plan(args, settings, AuctionData(args, settings, say), plots)
    # the output directory keeps its INCOMPLETE.txt marker unless everything below is written
    with options.output_directory(args.out, "recommend"):
        files = options.Outputs(args)
        all_rows: dict[str, Any] = {}
        for name in (e for e in EXPERIMENTS if e in settings.experiments):
            message, compute, plot = steps[name]
            say(message)
            rows = all_rows[name] = compute()
            files.csv(f"{name.replace('-', '_')}.csv", rows)
            files.figure(name.replace("-", "_"), functools.partial(plot, rows))
        if "appg" in all_rows:
            from dpbandits.recommendation.local_experiments import winners

            keys = ["n_candidates", "extremeness", "informativeness", "epsilon"]
            files.csv("appg_winners.csv", winners(all_rows["appg"], keys))
        files.json(all_rows)
    print("\n".join(files.written))
    return 0


def parse(args: argparse.Namespace) -> Settings:
    """The experiments, grids and knobs, each checked before any work."""
    from dpbandits.recommendation import local_experiments as lx
    from dpbandits.recommendation.synthetic import generate_requests

    has_data = args.auctions is not None or args.taobao is not None
    default = list(AUCTION_EXPERIMENTS) if has_data else list(EXPERIMENTS)
    experiments = options.split_list(args.experiments, "--experiment") or default
    for e in experiments:
        if e not in EXPERIMENTS:
            raise ValueError(f"--experiment must be among {EXPERIMENTS}, got {e!r}")
    mechanisms = options.split_list(args.mechanisms, "--mechanism")
    for m in mechanisms or []:
        if m not in lx.MECHANISMS:
            raise ValueError(f"--mechanism must be among {lx.MECHANISMS}, got {m!r}")
    options.parse_epsilons(repr(args.gamma_epsilon), "--gamma-epsilon")
    if not 0 <= args.cutoff <= 1:
        raise ValueError(f"--cutoff must lie in [0, 1], got {args.cutoff!r}")
    gammas = [float(v) for v in options.parse_float_grid(args.gamma, "--gamma")]
    if any(not (0 <= g <= 1) for g in gammas):
        raise ValueError(f"--gamma values must lie in [0, 1], got {args.gamma!r}")
    n_req = args.requests if args.requests is not None else (100_000 if args.full else 10_000)
    if n_req < 2:
        raise ValueError(f"--requests must be >= 2, got {n_req}")
    knobs: dict[str, Any] = dict(
        n_candidates=_candidates(args.n_candidates), extremeness=args.extremeness,
        informativeness=args.informativeness, mean=args.mean,
    )  # fmt: skip
    generate_requests(0, **knobs)  # validate the knobs before any work
    grid_e = _floats(args.grid_extremeness, "--grid-extremeness")
    grid_r = _floats(args.grid_informativeness, "--grid-informativeness")
    for x in grid_e:
        generate_requests(0, extremeness=x)
    for rho in grid_r:
        generate_requests(0, informativeness=rho)
    return Settings(
        experiments, mechanisms, options.parse_epsilons(args.epsilon), gammas,
        _bounds(options.split_list(args.bounds, "--bound") or ["0.05", "0.25"], "--bound"),
        n_req, knobs, (_ints(args.grid_candidates, "--grid-candidates"), grid_e, grid_r),
        _bounds(options.split_list(args.auction_bounds, "--auction-bound"), "--auction-bound"),
    )  # fmt: skip


def check_data_options(args: argparse.Namespace) -> None:
    """The data files and their options exist and fit, before any work."""
    if args.auctions is not None and args.taobao is not None:
        raise ValueError("--auctions and --taobao exclude each other")
    if args.auctions is not None and not os.path.isfile(args.auctions):
        raise ValueError(f"--auctions: no such file {args.auctions!r}")
    if args.taobao is not None and not os.path.isdir(args.taobao):
        raise ValueError(f"--taobao: no such directory {args.taobao!r}")
    for flag, value in (("--max-rows", args.max_rows), ("--max-candidates", args.max_candidates)):
        if value is not None and value < 1:
            raise ValueError(f"{flag} must be >= 1, got {value}")
    options.check_writable_file(args.json_path, "--json")


def _floats(text: str, name: str) -> list[float]:
    return [float(v) for v in options.parse_float_grid(text, name)]


def _bounds(items: list[str] | None, name: str) -> Any:
    """Clipping bounds from a list option (None when not given), each finite and > 0."""
    if not items:
        return None
    values = _floats(",".join(items), name)
    if any(not (0 < b < float("inf")) for b in values):
        raise ValueError(f"{name} values must be finite and > 0, got {values!r}")
    return values


class AuctionData:
    """The auctions of the auction experiments, loaded on first use: the user's file, the
    Taobao log or synthetic auctions; what was loaded is always printed (stderr)."""

    def __init__(self, args: argparse.Namespace, settings: Settings, say: Any) -> None:
        self.args, self.settings, self.say = args, settings, say
        self._data: tuple[Any, str, list[float]] | None = None

    def __call__(self) -> tuple[Any, str, list[float]]:
        """``(auctions, outcome, clipping bounds)``."""
        if self._data is None:
            import numpy as np

            data = self._load()
            data, outcome = choose_outcome(data, self.args.outcome)
            median = float(np.median(data.s_server[data.eligible]))
            bounds = self.settings.auction_bounds or [0.25 * median, median]
            options.notice(  # the choices made for the user: shown also with --no-progress
                f"auctions: {data.n}, {data.n_candidates.mean():.2f} candidates on average; "
                f"outcome {outcome}, pay per {self.args.payment}, clipping bounds "
                f"{', '.join(f'{b:.3g}' for b in bounds)}"
            )
            self._data = (data, outcome, bounds)
        return self._data

    def _load(self) -> Any:
        args = self.args
        if args.auctions is not None:
            from dpbandits.recommendation.auction_files import load_auctions

            self.say(f"reading {args.auctions}")
            data = load_auctions(args.auctions, max_candidates=args.max_candidates)
        elif args.taobao is not None:
            from dpbandits.recommendation.taobao import load_taobao

            self.say(f"reading the Taobao log in {args.taobao}")
            data = load_taobao(
                args.taobao, max_rows=args.max_rows, max_candidates=args.max_candidates
            )
        else:
            from dpbandits.recommendation.auctions import synthetic_auctions

            return synthetic_auctions(
                self.settings.n_requests, n_candidates=self.settings.knobs["n_candidates"],
                extremeness=args.ctr_extremeness, informativeness=args.informativeness,
                mean_ctr=args.ctr, bid_sigma=args.bid_sigma, rng=args.seed + 4,
            )  # fmt: skip
        if data.loaded is not None:
            options.notice(data.loaded.text(data))
        return data


def choose_outcome(data: Any, outcome: str) -> tuple[Any, str]:
    """How CTR is measured (docs/recommendation.md, "Your auction data"): ``auto`` is the
    logged clicks when every candidate of every auction has one, else ``pclick_device``;
    ``click`` leaves out, and counts, the auctions with candidates never shown."""
    logged = data.click_logged
    if outcome == "auto":
        if data.click is None or logged.all():
            return data, "click" if data.click is not None else "pclick_device"
        options.notice(
            f"outcome pclick_device: {data.n - int(logged.sum())} of {data.n} auctions have "
            "candidates the log never showed; --outcome click measures CTR by logged clicks "
            f"on the other {int(logged.sum())}"
        )
        return data, "pclick_device"
    if outcome == "click":
        if data.click is None:
            raise ValueError("--outcome click: the data has no logged clicks (column 'click')")
        if not logged.any():
            raise ValueError("--outcome click: every auction has candidates never shown")
        if not logged.all():
            options.notice(
                f"outcome click: left out {data.n - int(logged.sum())} of {data.n} auctions "
                "with candidates the log never showed (their clicks are unknown)"
            )
            data = data.subset(logged)
    return data, outcome


def plan(
    args: argparse.Namespace, s: Settings, auctions: AuctionData, plots: Any
) -> dict[str, tuple[str, Callable[[], list[dict[str, Any]]], Callable[..., Any]]]:
    """experiment -> (progress line, its rows, plot function)."""
    from dpbandits.recommendation import auctions as au
    from dpbandits.recommendation import local_experiments as lx
    from dpbandits.recommendation.synthetic import generate_requests

    req: list[Any] = []  # the engagement requests, drawn on first use

    def requests() -> Any:
        if not req:
            req.append(generate_requests(s.n_requests, rng=args.seed, **s.knobs))
        return req[0]

    mechs = s.mechanisms or lx.MECHANISMS
    common = dict(noise=args.noise)
    auction_common = dict(noise=args.noise, payment=args.payment)
    grid_k, grid_e, grid_r = s.grid
    n_cells = len(grid_k) * len(grid_e) * len(grid_r)

    def auction_rows(kind: str) -> list[dict[str, Any]]:
        data, outcome, bds = auctions()
        if kind == "rq1":
            return au.pricing_comparison(data, outcome, args.payment, rng=args.seed + 5)
        if kind == "auction-epsilon":
            return au.auction_epsilon_sweep(
                data, s.epsilons, mechanisms=mechs, bounds=bds, gamma=args.cutoff,
                outcome=outcome, rng=args.seed + 6, **auction_common,
            )  # fmt: skip
        return au.auction_gamma_sweep(
            data, s.gammas, mechanisms=s.mechanisms or ("rr",), epsilon=args.gamma_epsilon,
            bound=bds[0], outcome=outcome, rng=args.seed + 7, **auction_common,
        )  # fmt: skip

    return {
        "epsilon": (
            f"epsilon sweep: {s.n_requests} requests x {len(s.epsilons)} eps",
            lambda: lx.epsilon_sweep(requests(), s.epsilons, mechanisms=mechs, bounds=s.bounds,
                                     gamma=args.cutoff, rng=args.seed + 1, **common),
            plots.plot_epsilon_sweep,
        ),
        "gamma": (
            f"gamma sweep: {s.n_requests} requests x {len(s.gammas)} gammas",
            lambda: lx.gamma_sweep(requests(), s.gammas, mechanisms=s.mechanisms or ("rr",),
                                   epsilon=args.gamma_epsilon, bound=s.bounds[0],
                                   rng=args.seed + 2, **common),
            plots.plot_gamma_sweep,
        ),
        "appg": (
            f"App. G grid: {n_cells} cells x {len(s.epsilons)} eps",
            lambda: lx.appg_grid(n_requests=s.n_requests, n_candidates=grid_k,
                                 extremeness=grid_e, informativeness=grid_r,
                                 epsilons=s.epsilons, mechanisms=mechs, bound=s.bounds[0],
                                 mean=args.mean, rng=args.seed + 3, **common),
            plots.plot_appg,
        ),
        "rq1": ("RQ1: pricing models", lambda: auction_rows("rq1"), plots.plot_pricing),
        "auction-epsilon": (
            f"auction epsilon sweep: {len(s.epsilons)} eps",
            lambda: auction_rows("auction-epsilon"),
            functools.partial(plots.plot_auction_sweep, x="epsilon"),
        ),
        "auction-gamma": (
            f"auction gamma sweep: {len(s.gammas)} gammas",
            lambda: auction_rows("auction-gamma"),
            functools.partial(plots.plot_auction_sweep, x="gamma"),
        ),
    }  # fmt: skip
