"""``dpbandits scenarios``: the selection scenarios of §V-§VII (Figs. 1, 4, 5, 6, 7, 13, 18).

Examples::

    dpbandits scenarios                          # Fig. 1: scenarios 1-3, paper size
    dpbandits scenarios --scenario 4 5 6         # Fig. 5
    dpbandits scenarios --scenario fig6 --trials 2000
    dpbandits scenarios --scenario fig13         # App. E proportion sweep at eps = 2
    dpbandits scenarios --scenario fig4 fig18    # §V-B exceptional scenarios, App. I
    dpbandits scenarios -s 1 --selectors rnm mgem my_selector --plugin my_selector.py

Writes one PNG per requested scenario group, ``scenarios.md`` and ``scenarios.csv`` in
``--out``, and prints the markdown table.
"""

from __future__ import annotations

import argparse
import functools
import time
from typing import Any

from dpbandits.cli import options
from dpbandits.core.plugins import load_plugins

HELP = "selection scenarios of the paper (Figs. 1, 4, 5, 6, 7, 13, 18): MSE against eps"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = options.add_command(subparsers, "scenarios", HELP, __doc__)
    options.add_list_option(
        p, "--scenario", "-s", metavar="S",
        help="paper scenario 1-8, 'corr:t=<t>', '<1|2|3>:p=<proportion>', or a figure group "
        "fig1 (1-3), fig5 (4-6), fig6 (correlation family), fig7 (7-8), fig13 (proportion "
        "sweep), fig4 and fig18 (exc1, exc2 of §V-B), all; each value gives one figure, '1+4' "
        "puts two in one (default: fig1)",
    )  # fmt: skip
    options.add_list_option(
        p, "--selector", "--selectors", metavar="SEL",
        help="selector names or 'name:key=value,...' specs "
        "(default: uniform krr rnm rnmh rs rs_tnb gem mgem, plus combined_gem on 7-8)",
    )  # fmt: skip
    options.add_epsilon_option(p, "paper", "--epsilons", paper="12 values 0.01..16")
    p.add_argument(
        "--sweep-epsilon", type=float, default=2.0,
        help="eps of the fig13 proportion sweep (default 2, as in App. E)",
    )  # fmt: skip
    p.add_argument(
        "--trials",
        type=int,
        default=None,
        help="trials per scenario (default: the paper's, 10000; 5000 for scenarios 7-8)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="call selectors on chunks of this many trials (bounds memory; default: all)",
    )
    options.add_common_options(p, "scenarios")
    p.set_defaults(func=run)


def _default_selectors(names: list[str] | None, scenario: Any) -> Any:
    from dpbandits.scenarios import TwoGroups
    from dpbandits.scenarios.evaluation import DEFAULT_SELECTORS

    if names is not None:
        return names
    if isinstance(scenario, TwoGroups):
        return (*DEFAULT_SELECTORS, "combined_gem")
    return DEFAULT_SELECTORS


def _group_selectors(key: str, names: list[str] | None, scenario: Any) -> Any:
    """Fig. 18 shows "a subset of the algorithms": RNM, GEM and mGEM by default."""
    if names is None and key == "fig18":
        from dpbandits.scenarios.exceptional_figures import FIG18_SELECTORS

        return FIG18_SELECTORS
    return _default_selectors(names, scenario)


def run(args: argparse.Namespace) -> int:
    """The steps: the options checked and every scenario and selector resolved before any
    long computation (:func:`_scenario_groups`), one figure per group (:func:`_run_sweeps`
    for fig13, :func:`_run_evaluations` for the others), then the tables."""
    import numpy as np

    from dpbandits.scenarios import evaluation

    load_plugins(args.plugins)
    eps = evaluation.check_epsilons(options.parse_float_grid(args.epsilon, "--epsilon"))
    options.parse_epsilons(str(args.sweep_epsilon), "--sweep-epsilon")
    if args.trials is not None and args.trials <= 0:
        raise ValueError(f"--trials must be > 0, got {args.trials}")
    names = options.split_list(args.selectors, "--selector")
    # Resolve everything before any long computation, so that typos fail at once.
    groups = _scenario_groups(options.split_list(args.scenarios, "--scenario"))
    if names is not None:
        evaluation.resolve_selectors(names)

    with options.output_directory(args.out, "scenarios"):
        files = options.Outputs(args, relative=True)
        md: list[str] = []
        records: list[dict[str, Any]] = []
        t_start = time.perf_counter()
        for key, items in groups:
            if key == "fig13":
                _run_sweeps(args, items, names, files, md, records)
            else:
                _run_evaluations(args, key, items, names, eps, files, md, records)
        elapsed = time.perf_counter() - t_start

        text = "\n\n".join(md) + "\n"
        files.text("scenarios.md", text)
        files.csv("scenarios.csv", records)
        print(text)
        print(f"eps grid: {np.array2string(eps, precision=3)}; seed {args.seed}; {elapsed:.1f} s")
        print(f"wrote {', '.join(files.written)} in {args.out}")
    return 0


def _scenario_groups(specs: list[str] | None) -> list[tuple[str, list[Any]]]:
    """``(key, scenarios)`` of each ``--scenario`` value: a figure group, one scenario, or
    scenarios joined by ``+`` (one figure); fig13 is the proportion sweep of scenarios 1-3."""
    from dpbandits import scenarios

    groups: list[tuple[str, list[Any]]] = []
    for spec in specs or ["fig1"]:
        key = spec.strip().lower()
        if key == "fig13":
            groups.append(("fig13", [1, 2, 3]))
        elif "+" in key:
            parts = [x for x in key.split("+") if x]
            groups.append(("_".join(parts), [scenarios.get(x) for x in parts]))
        else:
            groups.append((key, scenarios.figure_scenarios(spec)))
    return groups


def _run_sweeps(
    args: argparse.Namespace,
    kinds: list[Any],
    names: list[str] | None,
    files: options.Outputs,
    md: list[str],
    records: list[dict[str, Any]],
) -> None:
    """Fig. 13: the proportion sweep of each bimodal scenario at ``--sweep-epsilon``."""
    from dpbandits.scenarios import evaluation
    from dpbandits.scenarios import plots as scenario_plots

    sweeps = [
        evaluation.proportion_sweep(
            kind,
            selectors=names,
            epsilon=args.sweep_epsilon,
            n_trials=args.trials or 10_000,
            seed=args.seed,
        )
        for kind in kinds
    ]
    for sw in sweeps:
        md.append(sw.to_markdown())
        records.extend(sw.records())
    title = "Fig. 13: proportion of high scores"
    files.figure("fig13", functools.partial(scenario_plots.plot_sweeps, sweeps, suptitle=title))


def _run_evaluations(
    args: argparse.Namespace,
    key: str,
    items: list[Any],
    names: list[str] | None,
    eps: Any,
    files: options.Outputs,
    md: list[str],
    records: list[dict[str, Any]],
) -> None:
    """One figure: every scenario of the group evaluated over the eps grid."""
    from dpbandits.scenarios import evaluation, exceptional_figures
    from dpbandits.scenarios import plots as scenario_plots

    say = options.progress_printer(not args.no_progress)
    evs = []
    for sc in items:
        t_sc = time.perf_counter()
        ev = evaluation.evaluate(
            sc,
            _group_selectors(key, names, sc),
            eps,
            args.trials,
            args.seed,
            keep_errors=False,
            batch_size=args.batch_size,
            progress=not args.no_progress,
        )
        evs.append(ev)
        # Progress on stderr, so that stdout is exactly the markdown table.
        say(
            f"scenario {ev.scenario}: {ev.n_trials} trials, {len(ev.mse)} selectors, "
            f"{eps.size} eps in {time.perf_counter() - t_sc:.1f} s"
        )
        md.append(ev.to_markdown())
        records.extend(ev.records())
    name = key if key.startswith("fig") or key == "all" else "scenario_" + options.slug(key)
    if key in ("fig4", "fig18"):
        plot = functools.partial(exceptional_figures.exceptional_figure, evs, key, seed=args.seed)
    else:
        plot = functools.partial(scenario_plots.plot_evaluations, evs)
    files.figure(name, plot)
