"""``dpbandits report``: the tables of a sweep over eps against the stored cells and closed forms,
the curves and threshold figures, and bad input named before any work."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from dpbandits.cli import main
from dpbandits.experiments import sweep_report as sr
from dpbandits.experiments.config import Experiment
from dpbandits.experiments.sweep import sweep

EPS_KEY = "agents.*.epsilon|epsilon_select"
#: Two Bernoulli arms (0.6, 0.4): uniform play loses 0.1 per step.
COMPARISON = {
    "experiment": {"env": "dpbandits/KArmedBernoulli-v0", "n_runs": 4, "seed": 3,
                   "record_stride": 10, "env_kwargs": {"means": [0.6, 0.4], "horizon": 600}},
    "agents": {
        "UCB": {"kind": "ucb"},
        "kRR": {"kind": "private", "selector": "krr", "epsilon_select": 1.0},
        "DP-SE": {"kind": "dp_se", "epsilon": 1.0},
    },
    "sweep": {EPS_KEY: [0.5, 1e6]},
}  # fmt: skip
THRESHOLD = {
    "experiment": {"env": "dpbandits/KArmedGaussian-v0", "n_runs": 3, "seed": 1,
                   "record_stride": 10,
                   "env_kwargs": {"means": [0.6, 0.4], "sds": 0.1, "horizon": 400}},
    "agents": {"kRR": {"kind": "private", "selector": "krr", "epsilon_select": 1.0},
               "RNM": {"kind": "private", "selector": "rnm", "epsilon_select": 1.0}},
    "sweep": {"experiment.env_kwargs.means": [[0.6, 0.4], [0.7, 0.3]],
              "agents.*.epsilon_select": [0.1, 1.0, 10.0, 100.0]},
}  # fmt: skip


def _sweep(cfg: dict, out: Path) -> Path:
    res = sweep(Experiment.from_dict(cfg), out, scheduler="serial", progress=False, plots=False)
    assert res.ok
    return out


@pytest.fixture(scope="module")
def comparison_dir(tmp_path_factory) -> Path:
    return _sweep(COMPARISON, tmp_path_factory.mktemp("comparison"))


@pytest.fixture(scope="module")
def threshold_dir(tmp_path_factory) -> Path:
    return _sweep(THRESHOLD, tmp_path_factory.mktemp("threshold"))


def _table(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|")]  # fmt: skip


def test_comparison_table_is_the_stored_cells_with_closed_form_levels(comparison_dir):
    data = sr.comparison(sr.load_sweep(comparison_dir))
    text = sr.comparison_table(data, {"DP-SE": "DP-SE ¹"})
    rows = _table(text)
    assert rows[0] == ["agent", "0.5", "inf"]
    # references, the literature, the App. H agents; renamed by labels
    assert [r[0] for r in rows[2:]] == ["UCB", "DP-SE ¹", "kRR", "*uniform play*",
                                        "*lower bound: Azize et al. 2025 (ε = inf: Lai & "
                                        "Robbins 1985)*"]  # fmt: skip
    with open(comparison_dir / "summary.csv", newline="") as f:
        summary = list(csv.DictReader(f))
    for r in summary:
        row = next(x for x in rows if x[0].split(" ")[0] == r["agent"])
        col = 1 if float(r[EPS_KEY]) == 0.5 else 2
        cell = row[col].replace("**", "").replace(" †", "")
        assert cell == f"{float(r['regret_mean']):,.0f} ± {float(r['regret_se']):,.0f}"
        ratio = data.ratio[r["agent"], float(r[EPS_KEY])]
        assert row[col].startswith("**") == (ratio < sr.LEARNS)
        assert row[col].endswith("†") == (ratio > sr.RANDOM)
    # uniform play on (0.6, 0.4): 0.1 per step; at T = 600, 60
    assert data.uniform == pytest.approx(60.0, rel=1e-9)
    assert rows[-2][1] == "60"
    # at eps = inf the bound is Lai--Robbins: gap / kl(0.4, 0.6) log T
    kl = 0.4 * math.log(0.4 / 0.6) + 0.6 * math.log(0.6 / 0.4)
    assert data.bound[1e6] == pytest.approx(0.2 / kl * math.log(600), rel=1e-9)
    assert data.bound[0.5] > data.bound[1e6]
    # the ratio: second-half regret over uniform play's (30 over the second half)
    res = data.results[0.5]
    half = int(np.searchsorted(res.steps, 300))
    late = res.mean("UCB")[-1] - res.mean("UCB")[half]
    assert data.ratio["UCB", 0.5] == pytest.approx(late / (0.1 * (600 - res.steps[half])))


def test_report_command_prints_the_table_and_draws_the_curves(comparison_dir, capsys):
    assert main(["report", str(comparison_dir), "--curves", "0.5",
                 "--label", "DP-SE=DP-SE ¹"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    data = sr.comparison(sr.load_sweep(comparison_dir))
    assert out.strip() == sr.comparison_table(data, {"DP-SE": "DP-SE ¹"})
    assert (comparison_dir / "plots" / "curves_eps=0.5.png").is_file()
    fig = sr.plot_curves(data, 0.5, EPS_KEY)
    (ax,) = fig.axes
    assert ax.get_yscale() == "log"
    agents = [t for t in ax.get_legend_handles_labels()[1] if not t.startswith("lower bound")]
    assert agents == ["UCB", "DP-SE"]  # not the App. H agent: its x is eps_S
    assert any(t.startswith("lower bound: Azize et al. 2025, ε=0.5")
               for t in ax.get_legend_handles_labels()[1])  # fmt: skip


def test_threshold_points_and_table(threshold_dir, capsys):
    data = sr.threshold(sr.load_sweep(threshold_dir))
    d = float(norm.ppf(0.9) - norm.ppf(0.1)) * 0.1  # no clipping of the quantiles
    assert data.n_series == 2
    for label in ("kRR", "RNM"):
        xs = sorted(round(p[0], 9) for p in data.points[label])
        want = sorted(round(g * e / d, 9) for g in (0.2, 0.4) for e in (0.1, 1.0, 10.0, 100.0))
        assert xs == pytest.approx(want)
        assert all(0 <= p[1] <= 1 for p in data.points[label])  # a share of the pulls
        assert data.min_f[label] == min(p[1] for p in data.points[label])
        for level in sr.LEVELS:
            hit = data.found[label][level]
            if hit is not None:
                assert hit["min"] <= hit["median"] <= hit["max"]
                assert 1 <= hit["n"] <= 2
    assert main(["report", str(threshold_dir), "--threshold"]) == 0
    rows = _table(capsys.readouterr().out)
    assert rows[0][:3] == ["agent", "level", "median x"]
    assert [(r[0], r[1]) for r in rows[2:]] == [(a, f"{lv:g}") for a in ("kRR", "RNM")
                                                for lv in sr.LEVELS]  # fmt: skip
    assert (threshold_dir / "plots" / "threshold.png").is_file()
    fig = sr.plot_threshold(data)
    assert [ax.get_xscale() for ax in fig.axes if ax.get_visible()] == ["log", "log"]


@pytest.mark.parametrize(("argv", "message"), [
    (["--curves", "0.3"], r"--curves 0.3 is not a swept value"),
    (["--curves", "0"], r"argument --curves: must be finite and > 0"),
    (["--label", "DP-SE"], r"--label must be AGENT=NAME"),
    (["--label", "Nope=x"], r"--label: no agent 'Nope'"),
    (["--key", "experiment.seed"], r"--key 'experiment.seed' is not a swept key"),
    (["--threshold", "--curves", "0.5"], r"--threshold takes neither"),
])  # fmt: skip
def test_bad_arguments_are_named(comparison_dir, capsys, argv, message):
    try:
        status = main(["report", str(comparison_dir), *argv])
    except SystemExit as exc:  # argparse's own checks
        status = exc.code
    assert status == 2
    assert re.search(message, capsys.readouterr().err)


def test_bad_folders_are_named(tmp_path, threshold_dir, capsys):
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert "is not the output folder of a dpbandits sweep" in capsys.readouterr().err
    assert main(["report", str(threshold_dir)]) == 2  # two swept keys: no one-row-per-agent table
    assert "also sweeps experiment.env_kwargs.means" in capsys.readouterr().err
