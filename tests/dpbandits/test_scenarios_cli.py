"""``dpbandits scenarios`` / ``dpbandits hg`` and the figures they write."""

from __future__ import annotations

import csv
import textwrap

import pytest
from matplotlib.figure import Figure

from dpbandits.cli import main
from dpbandits.scenarios.evaluation import evaluate, proportion_sweep
from dpbandits.scenarios.plots import plot_evaluations, plot_hg, plot_sweeps
from dpbandits.scenarios.two_candidate import hg_closed_map


def test_scenarios_command_writes_figure_and_tables(tmp_path, capsys):
    out = tmp_path / "out"
    argv = "scenarios --scenario 1 2 --selector uniform,rnm gem --epsilon 0.1,1 --trials 200"
    code = main([*argv.split(), "--out", str(out)])
    assert code == 0
    assert (out / "scenario_1.png").stat().st_size > 0
    assert (out / "scenario_2.png").stat().st_size > 0
    rows = list(csv.DictReader(open(out / "scenarios.csv")))
    assert len(rows) == 2 * 3 * 2
    assert {r["selector"] for r in rows} == {"uniform", "rnm", "gem"}
    printed = capsys.readouterr().out
    assert "| eps | uniform | rnm | gem |" in printed
    assert (out / "scenarios.md").read_text().count("Scenario") >= 2


def test_scenarios_command_evaluates_a_selector_from_a_users_file(tmp_path, capsys):
    plugin = tmp_path / "my_selector.py"
    plugin.write_text(
        textwrap.dedent(
            """
            import numpy as np
            from dpbandits import selectors

            class Last:
                name = "cli_test_last"
                private = True

                def __init__(self, epsilon=1.0):
                    self.epsilon = epsilon

                def with_epsilon(self, epsilon):
                    return Last(epsilon)

                def select(self, q, d=None, rng=None):
                    q = np.asarray(q)
                    return np.full(q.shape[:-1], q.shape[-1] - 1, dtype=np.int64)

            selectors.register("cli_test_last", Last, overwrite=True)
            """
        )
    )
    from dpbandits import selectors

    argv = ["scenarios", "-s", "1", "--plugin", str(plugin), "--selector", "cli_test_last"]
    argv += ["--epsilon", "1", "--trials", "10", "--no-plots", "--out", str(tmp_path / "o")]
    try:
        code = main(argv)
    finally:
        if "cli_test_last" in selectors.available():
            selectors.unregister("cli_test_last")
    assert code == 0
    # The last candidate of scenario 1 has the high score: zero error.
    assert "| 1 | **0 ± 0** |" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["scenarios", "-s", "99"], "unknown scenario"),
        (["scenarios", "--epsilon", ""], "--epsilon"),
        (["scenarios", "--epsilon", "0,1"], "epsilons must be finite and > 0"),
        (["scenarios", "--trials", "0"], "--trials must be > 0"),
        (["scenarios", "--selector", "nope"], "nope"),
        (["two-candidate", "--grid", "x"], "--grid"),
    ],
)
def test_bad_arguments_are_one_line_errors(argv, message, capsys, tmp_path):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_hg_command_writes_maps(tmp_path, capsys):
    argv = "hg --m2 rnmh rs:gamma=0.5 --grid lin:0.2:2:4 --draws 200"
    code = main([*argv.split(), "--out", str(tmp_path)])
    assert code == 0
    assert (tmp_path / "hg_custom.png").stat().st_size > 0
    rows = list(csv.DictReader(open(tmp_path / "hg_custom.csv")))
    assert len(rows) == 2 * 16
    assert {r["method"] for r in rows} == {"closed form", "monte carlo"}
    assert "| rnm | rnmh |" in capsys.readouterr().out


def test_plot_functions_return_figures():
    ev = evaluate(7, ["uniform", "rnmh"], [0.5, 5.0], n_trials=50)
    assert isinstance(plot_evaluations([ev, ev]), Figure)
    sw = proportion_sweep(3, [0.2, 0.5], ["uniform"], n_trials=20)
    assert isinstance(plot_sweeps([sw]), Figure)
    m = hg_closed_map("rnm", "rnmh", [0.5, 1.0], [0.5, 1.0], 0.1)
    assert isinstance(plot_hg([m, m, m], ncols=2), Figure)
    with pytest.raises(ValueError, match="empty"):
        plot_evaluations([])


def test_repeated_scenario_flags_accumulate(tmp_path):
    from dpbandits.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["scenarios", "--scenario", "1", "--scenario", "2", "3"])
    assert args.scenarios == ["1", "2", "3"]
    args = parser.parse_args(["scenarios", "--selector", "rnm", "--selector", "gem"])
    assert args.selectors == ["rnm", "gem"]
    assert parser.parse_args(["scenarios"]).scenarios is None  # run() falls back to fig1
