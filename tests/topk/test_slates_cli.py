"""k-slates on the selection scenarios and the ``dpbandits topk`` command."""

from __future__ import annotations

import csv
import math
import os

import numpy as np
import pytest

from dpbandits.cli import main
from dpbandits.topk.slates import evaluate_slates


def test_slates_exact_and_uniform_limits():
    k, n = 5, 400
    rec = evaluate_slates(4, ["exact", "canonical_lipschitz", "gumbel"], k, [1e-12], n, seed=0)
    by = {r["mechanism"]: r for r in rec}
    assert by["exact"]["accuracy"] == 1.0 and by["exact"]["regret"] == 0.0
    # eps -> 0: a uniformly random k-set (or ranking), hypergeometric mean k / K per slot
    kk = 100
    p = k / kk
    sd = math.sqrt(p * (1 - p) * (kk - k) / (kk - 1) / k)  # sd of |S ∩ T| / k
    for name in ("canonical_lipschitz", "gumbel"):
        z = (by[name]["accuracy"] - p) / (sd / math.sqrt(n))
        assert abs(z) < 5, (name, by[name]["accuracy"])


def test_slates_accuracy_increases_with_eps():
    rec = evaluate_slates(1, ["canonical_lipschitz"], 3, [0.01, 1e4], 300, seed=1)
    assert rec[1]["accuracy"] > rec[0]["accuracy"] + 0.3
    with pytest.raises(ValueError, match="k must satisfy"):
        evaluate_slates(1, ["gumbel"], 0, [1.0], 10)
    with pytest.raises(ValueError, match="epsilons"):
        evaluate_slates(1, ["gumbel"], 2, [-1.0], 10)


def test_cli_topk_runs_and_writes(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(
        [
            "topk", "--figure", "fig1,fig5", "--figure", "fig8,slate", "--reps", "2",
            "--trials", "3", "--k", "5", "--epsilon", "1,20", "--slate-trials", "50",
            "--no-progress", "--out", str(out), "--json", str(tmp_path / "r.json"),
        ]
    )  # fmt: skip
    assert code == 0
    names = set(os.listdir(out))
    assert {"fig1_counts.csv", "accuracy.csv", "slates.csv", "summary.md"} <= names
    assert {"fig1.png", "fig5.png", "fig8.png", "slates.png"} <= names
    assert not [n for n in names if n.startswith(".tmp-")]
    with open(out / "accuracy.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["method"] for r in rows} == {"SIS", "two-stage", "DP-SIS", "two-stage (private)"}
    assert (tmp_path / "r.json").exists()
    assert "Figure 1" in capsys.readouterr().out


def test_cli_topk_user_data(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 8))
    y = X[:, 2] - X[:, 5]
    path = tmp_path / "d.csv"
    path.write_text(
        "\n".join(
            ["f0,f1,f2,f3,f4,f5,f6,f7,y"]
            + [",".join(map(str, (*r, t))) for r, t in zip(X, y, strict=True)]
        )
    )
    code = main(
        ["topk", "--figure", "fig5", "--data", str(path), "--target", "y", "--k", "1",
         "--lasso-alpha", "0.01", "--epsilon", "5", "--trials", "2", "--no-plots",
         "--no-progress", "--out", str(tmp_path / "o")]
    )  # fmt: skip
    assert code == 0
    with open(tmp_path / "o" / "accuracy.csv") as fh:
        assert {r["dataset"] for r in csv.DictReader(fh)} == {"d"}


@pytest.mark.parametrize(
    "argv, text",
    [
        (["--figure", "fig9"], "--figure must be among"),
        (["--data", "x.csv"], "--data and --target go together"),
        (["--data", "missing.csv", "--target", "y"], "no such file"),
        (["--epsilon", "-1"], "--epsilon values must be finite and > 0"),
        (["--epsilon", "geom:a:b:3"], "--epsilon: expected"),
        (["--mechanism", "nope"], "unknown top-k mechanism"),
        (["--trials", "0"], "--trials must be >= 1"),
        (["--figure", "slate", "--scenario", "99"], "unknown scenario"),
    ],
)
def test_cli_topk_bad_input(argv, text, tmp_path, capsys):
    assert main(["topk", "--out", str(tmp_path / "o"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpbandits: error:") and text in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_cli_topk_standin_table1_and_heat_maps(tmp_path, capsys):
    """A Table 1 stand-in through the CLI: Table 1's row (R^2 within 0.01 of the paper's)
    and the heat maps of Figs. 6-7."""
    out = tmp_path / "o"
    argv = ["topk", "--standin", "sorlie", "--epsilon", "1,20", "--trials", "3", "--k", "5",
            "--format", "svg", "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    with open(out / "table1.csv") as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["n"] == "85" and row["p"] == "457"
    assert abs(float(row["r2"]) - float(row["r2_paper"])) <= 0.01
    assert (out / "fig6.svg").exists() and (out / "fig7.svg").exists()
    assert "Table 1" in capsys.readouterr().out
