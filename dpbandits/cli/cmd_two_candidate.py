"""``dpbandits two-candidate`` (alias ``hg``): HG(M, M') maps over (Δ1, Δ2) (§V-A, Figs. 2, 10-12).

``HG(M, M') = P[M != a*] - P[M' != a*]`` for scores ``q1 < q2``: positive (red) where ``M'``
errs less than ``M``, negative (blue) where ``M`` is better.

Examples::

    dpbandits two-candidate               # Fig. 2: HG(RNM, RNMH) closed form, HG(RNM, RS_0.01)
    dpbandits two-candidate --figure 11   # HG(RNM, RNMH), eps in {0.1, 1, 3} x gap {0.1, 1, 2, 5}
    dpbandits two-candidate --m rnm --m2 mgem --epsilon 0.5 --gap 1

Closed forms are used for pairs that have them (rnm, rnmh, krr, exponential_mechanism,
permute_and_flip, gem, mgem, uniform) unless ``--monte-carlo``; other selectors (rs, rs_tnb,
plug-ins) are simulated with ``--draws`` draws per grid cell.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from dpbandits.cli import options
from dpbandits.core.plugins import load_plugins

HELP = "two-candidate maps HG(M, M') over (Δ1, Δ2) (Figs. 2, 10-12)"
FIG10_GAMMAS = (0.5, 0.2, 0.05, 0.01)
FIG11_EPS = (0.1, 1.0, 3.0)
FIG11_GAPS = (0.1, 1.0, 2.0, 5.0)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = options.add_command(subparsers, "two-candidate", HELP, __doc__, aliases=["hg"])
    p.add_argument(
        "--figure",
        choices=["2", "10", "11", "12"],
        default=None,
        help="reproduce a paper figure (default 2 unless --m2 is given)",
    )
    p.add_argument("--m", default="rnm", help="reference mechanism M (default rnm)")
    options.add_list_option(
        p, "--m2", metavar="SEL",
        help="compared mechanism(s) M' (names or 'name:key=value' specs); one panel each",
    )  # fmt: skip
    options.add_epsilon_option(p, "0.1", paper="the main paper's 12 values 0.01..16")
    p.add_argument("--gap", default="1", help="score gap(s) q2 - q1, comma separated (default 1)")
    p.add_argument(
        "--grid",
        default="lin:0.1:2:20",
        help="Δ grid for both axes: 'a,b,c', 'lin:LO:HI:N' or 'geom:LO:HI:N' "
        "(default lin:0.1:2:20)",
    )
    p.add_argument("--draws", type=int, default=4000, help="Monte Carlo draws per cell")
    p.add_argument("--monte-carlo", action="store_true", help="simulate even with a closed form")
    options.add_common_options(p, "two-candidate", progress=False)
    p.set_defaults(func=run)


def _panels(args: argparse.Namespace) -> tuple[str, list[dict[str, Any]], int]:
    """Return (figure name, panel specs, ncols)."""
    # Every option is checked, even those a paper figure does not use, so that a typo is
    # reported rather than silently ignored.
    eps = options.parse_epsilons(args.epsilon)
    gaps = options.parse_float_grid(args.gap, "--gap")
    if not all(math.isfinite(g) for g in gaps):
        raise ValueError(f"--gap values must be finite, got {args.gap!r}")
    m2s = options.split_list(args.m2s, "--m2") or []
    if args.figure is None and args.m2s is None:
        args.figure = "2"
    if args.figure == "2":
        return (
            "hg_fig2",
            [
                dict(m="rnm", m2="rnmh", eps=0.1, gap=1.0),
                dict(m="rnm", m2="rs:gamma=0.01", eps=0.1, gap=1.0),
            ],
            2,
        )
    if args.figure == "10":
        return (
            "hg_fig10",
            [dict(m="rnm", m2=f"rs:gamma={g:g}", eps=0.1, gap=1.0) for g in FIG10_GAMMAS],
            4,
        )
    if args.figure in ("11", "12"):
        m2 = "rnmh" if args.figure == "11" else "rs:gamma=0.01"
        return (
            f"hg_fig{args.figure}",
            [dict(m="rnm", m2=m2, eps=e, gap=g) for e in FIG11_EPS for g in FIG11_GAPS],
            4,
        )
    panels = [
        dict(m=args.m, m2=m2, eps=float(e), gap=float(g)) for m2 in m2s for e in eps for g in gaps
    ]
    return "hg_custom", panels, min(len(panels), 4)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from dpbandits.scenarios import two_candidate as hg
    from dpbandits.selectors.spec import parse_selector_spec

    load_plugins(args.plugins)
    grid = options.parse_float_grid(args.grid, "--grid")
    if not all(math.isfinite(d) and d > 0 for d in grid):
        raise ValueError(f"--grid values (sensitivities) must be finite and > 0, got {args.grid!r}")
    name, panels, ncols = _panels(args)
    if args.draws < 2:
        raise ValueError(f"--draws must be >= 2, got {args.draws}")

    with options.output_directory(args.out, "two-candidate"):
        maps = []
        for k, p in enumerate(panels):
            closed = all(
                parse_selector_spec(s)[1] == {} and parse_selector_spec(s)[0] in hg.CLOSED_FORMS
                for s in (p["m"], p["m2"])
            )
            method = "closed form" if closed and not args.monte_carlo else "monte carlo"
            mp = hg.hg_map(
                p["m"], p["m2"], grid, grid, p["eps"], 0.0, p["gap"], args.draws,
                seed=np.random.SeedSequence(args.seed, spawn_key=(k,)), method=method,
            )  # fmt: skip
            maps.append(mp)

        lines = [
            "| M | M' | eps | q2-q1 | method | M' better (Δ1<Δ2) | M' better (Δ1>Δ2) "
            "| min HG | max HG |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        records = []
        for mp in maps:
            d1, d2 = np.meshgrid(mp.d1, mp.d2)
            # A cell counts as "M' better" when HG > 0 beyond 3 standard errors (closed form: > 0).
            better = mp.hg > 3 * mp.se
            below, above = d1 < d2, d1 > d2
            frac_b = better[below].mean() if below.any() else float("nan")
            frac_a = better[above].mean() if above.any() else float("nan")
            lines.append(
                f"| {mp.m} | {mp.m2} | {mp.epsilon:g} | {mp.q2 - mp.q1:g} | {mp.method} | "
                f"{_percent(frac_b)} | {_percent(frac_a)} | "
                f"{mp.hg.min():+.4f} | {mp.hg.max():+.4f} |"
            )
            records.extend(mp.records())
        table = "\n".join(lines) + "\n"
        files = options.Outputs(args, relative=True)
        files.text(f"{name}.md", table)
        files.csv(f"{name}.csv", records)
        files.figure(name, lambda: _plot_hg(maps, ncols=ncols))
        print(table)
        print(f"wrote {', '.join(files.written)} in {args.out}")
    return 0


def _percent(fraction: float) -> str:
    """``fraction`` as a percentage; ``-`` when no cell of the grid lies on that side."""
    return f"{fraction:.0%}" if math.isfinite(fraction) else "-"


def _plot_hg(maps: list[Any], ncols: int) -> Any:
    from dpbandits.scenarios.plots import plot_hg

    return plot_hg(maps, ncols=ncols)
