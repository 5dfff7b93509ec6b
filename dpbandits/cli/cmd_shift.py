"""``dpbandits shift``: the paper's bandit under distribution shift (App. H, Fig. 9).

By default exactly the Fig. 9 configuration: two clipped-Gaussian arms whose means (0.2, 0.8)
and standard deviations (0.1, 0.3) swap at t = 30_000, horizon 50_000, 100 runs; agents UCB,
TS and private agents kRR (eps_S = 4), RNM, RS (gamma 0.05), GEM and mGEM (beta 0.05) with
eps_M = eps_S = eps_p = 1, window 200 and quantiles 0.1/0.9. Prints the summary table and the
privacy report; writes the results file and the figures to ``--out``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from dpbandits.cli.options import (
    DefaultsHelpFormatter,
    add_bounds_options,
    add_command,
    add_list_option,
    add_output_options,
    add_plugin_argument,
    check_writable_file,
    count,
    output_directory,
    parse_bounds_epsilons,
    positive_count,
    positive_float,
    split_list,
)
from dpbandits.core.docs import docs_reference
from dpbandits.core.plugins import load_plugins

HELP = "the paper's bandit-under-shift experiment (App. H, Fig. 9)"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "shift", HELP, __doc__, formatter_class=DefaultsHelpFormatter)
    parser.add_argument("--runs", type=positive_count, default=100,
                        help="replications per agent")
    parser.add_argument("--horizon", type=count, default=50_000, help="steps T")
    parser.add_argument(
        "--t-shift", type=count, default=None,
        help="first (0-based) step after the shift (default: 3/5 of the horizon, 30000 for "
        "the default horizon, as in Fig. 9)",
    )  # fmt: skip
    parser.add_argument("--eps-means", type=positive_float, default=1.0,
                        help="eps_M of the private means")
    parser.add_argument(
        "--eps-select", type=positive_float, default=1.0, help="eps_S of each action (all but kRR)"
    )
    parser.add_argument("--eps-krr", type=positive_float, default=4.0, help="eps_S of kRR")
    parser.add_argument(
        "--eps-quantiles", type=positive_float, default=1.0, help="eps_p of each pair of quantiles"
    )
    parser.add_argument("--window", type=positive_count, default=200,
                        help="rewards per sensitivity estimate")
    parser.add_argument(
        "--eps-global", type=positive_float, default=1.0,
        help="eps of the whole run of the eps-global-DP agents built for change (CD-AdaP-UCB, "
        f"CD-AdaP-KLUCB, SW-AdaP-UCB, SW-AdaP-KLUCB; {docs_reference('private-shift')})",
    )  # fmt: skip
    add_list_option(
        parser, "--agent", "--agents", metavar="LABEL",
        help="agent labels: UCB, TS, kRR, RNM, RS, GEM, mGEM (default: all seven); also UCB1, "
        "TS-Beta, SW-UCB, D-UCB, Exp3, cGEM, PF, RNM-Gumbel, M-UCB, CUSUM-UCB, "
        "private:<selector>, and the eps-global-DP agents built for "
        "change CD-AdaP-UCB, CD-AdaP-KLUCB, SW-AdaP-UCB, SW-AdaP-KLUCB",
    )  # fmt: skip
    add_plugin_argument(parser)
    parser.add_argument("--seed", type=int, default=0, help="root seed")
    parser.add_argument(
        "--jobs", type=positive_count, default=None, help="worker processes (default: all cores)"
    )
    add_output_options(parser, "shift", json=True)
    add_bounds_options(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


#: The sizes of :mod:`dpbandits.experiments.memory` as this command's options (``None``: none).
SHIFT_OPTIONS = {"n_runs": "--runs", "horizon": "--horizon", "workers": "--jobs",
                 "record_stride": None, "trace": None, "chunk_size": None}  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from dpbandits.core.files import write_json
    from dpbandits.experiments.agentspec import is_private
    from dpbandits.experiments.engine import run as run_experiment
    from dpbandits.experiments.memory import RunSizes, check_memory, option_names
    from dpbandits.experiments.presets import shift_agents, shift_env

    load_plugins(args.plugins)
    check_writable_file(args.json_path, "--json")
    bounds_eps = parse_bounds_epsilons(args)  # checked even without --bounds
    agent_map = shift_agents(
        split_list(args.agents, "--agent"),
        epsilon_means=args.eps_means,
        epsilon_select=args.eps_select,
        epsilon_quantiles=args.eps_quantiles,
        epsilon_krr=args.eps_krr,
        window=args.window,
        epsilon=args.eps_global,
    )
    if args.horizon <= 0:
        raise ValueError(f"--horizon must be > 0, got {args.horizon}")
    if args.t_shift is None:  # the paper's proportion: 30 000 of 50 000
        args.t_shift = max(1, args.horizon * 3 // 5)
    if not 0 < args.t_shift < args.horizon:
        raise ValueError(
            f"--t-shift must lie in (0, horizon) = (0, {args.horizon}), got {args.t_shift}"
        )
    # before any work, with this command's options in the message; the engine checks again
    # and warns about a large run (dpbandits.experiments.memory)
    sizes = RunSizes(args.runs, args.horizon, 2, len(agent_map),
                     sum(is_private(a) for a in agent_map.values()),
                     workers=args.jobs or os.cpu_count() or 1, n_segments=2)  # fmt: skip
    if args.runs >= 1:  # (other values: the engine's message)
        with option_names(SHIFT_OPTIONS):
            check_memory(sizes, warn=False)
    with output_directory(args.out, "shift") as out, option_names(SHIFT_OPTIONS):
        results = run_experiment(
            shift_env(t_shift=args.t_shift, horizon=args.horizon),
            agent_map,
            n_runs=args.runs,
            seed=args.seed,
            progress=not args.no_progress,
            n_jobs=args.jobs,
        )
        path = results.save(out / "results.npz")

        print(
            f"Bandit under shift (App. H, Fig. 9): {args.runs} runs x {args.horizon} steps, "
            f"shift at t = {args.t_shift}, seed {args.seed}; "
            f"{results.timing['wall_seconds']:.1f} s on {results.timing['n_jobs']} worker(s)"
        )
        print(
            "Regret: dynamic pseudo-regret against the expected clipped reward "
            f"(App. H-1; {docs_reference('shift')}).\n"
        )
        print(results.summary())
        print("\nPrivacy report")
        print(results.privacy_text())

        written = [str(path)]
        if not args.no_plots:
            written += _write_figures(
                results, out, args.format, bounds_eps if args.bounds else None
            )
        if args.json_path:
            written.append(str(write_json(args.json_path, results.to_json())))
    print("\nWrote: " + ", ".join(written))
    sys.stdout.flush()
    return 0


def _write_figures(
    results: object, out: Path, fmt: str, bounds_eps: list[float] | None = None
) -> list[str]:
    from dpbandits.core.files import save_figure
    from dpbandits.experiments import plotting

    # --bounds: the regret panel with the lower bounds (docs/private-bandits.md)
    bounds: dict[str, Any] = (
        {} if bounds_eps is None else {"bounds": True, "bounds_epsilon": bounds_eps}
    )
    figures = {"fig9a_cumulative": plotting.plot_cumulative(results, **bounds)}
    if any("private_means" in results.data[lab] for lab in results.labels):  # type: ignore[attr-defined]
        figures["fig9b_private_means"] = plotting.plot_private_means(results)
    if any("sensitivities" in results.data[lab] for lab in results.labels):  # type: ignore[attr-defined]
        figures["fig9c_sensitivity_arm0"] = plotting.plot_sensitivities(results, arm=0)
        figures["fig9d_sensitivity_arm1"] = plotting.plot_sensitivities(results, arm=1)
    figures["fig9"] = plotting.plot_shift(results)
    paths = []
    for name, fig in figures.items():
        paths.append(str(save_figure(fig, out / f"{name}.{fmt}")))
    return paths
