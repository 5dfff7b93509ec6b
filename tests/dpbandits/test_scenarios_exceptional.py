"""The exceptional scenarios of §V-B (Figs. 4 and 18): data, claims, figures, CLI."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from matplotlib.figure import Figure

from dpbandits import scenarios
from dpbandits.cli import main
from dpbandits.scenarios.evaluation import evaluate
from dpbandits.scenarios.exceptional import Exceptional, correlations
from dpbandits.scenarios.exceptional_figures import (
    FIG18_SELECTORS,
    exceptional_figure,
    plot_exceptional,
    selection_probabilities,
)
from tests.stats import assert_counts_match_pmf


def test_registered_names_and_figure_groups() -> None:
    assert [s.name for s in scenarios.figure_scenarios("fig4")] == ["exc1", "exc2"]
    assert [s.name for s in scenarios.figure_scenarios("fig18")] == ["exc1", "exc2"]
    assert isinstance(scenarios.get("exc2"), Exceptional)
    assert {"exc1", "exc2"} <= set(scenarios.available())
    assert {"exc1", "exc2"} <= {s.name for s in scenarios.figure_scenarios("all")}
    with pytest.raises(ValueError, match="already defined"):
        scenarios.register("exc1", lambda: Exceptional(kind=1))
    with pytest.raises(ValueError, match="kind"):
        Exceptional(kind=3)  # type: ignore[arg-type]


def test_data_as_the_paper_describes() -> None:
    """Scenario 1: 18 of 100 candidates at score 1, sensitivity 0.1, and they are the optimal
    ones; both scenarios positively correlated by Pearson and Spearman (§V-B)."""
    q1, d1 = scenarios.get("exc1").parameters()  # type: ignore[attr-defined]
    top = q1 == q1.max()
    assert top.sum() == 18 and np.all(q1[top] == 1.0) and np.all(d1[top] == 0.1)
    assert d1[~top][np.argmax(q1[~top])] == d1.max()  # the runner-up has the largest Delta
    q2, d2 = scenarios.get("exc2").parameters()  # type: ignore[attr-defined]
    low = (q2 < -0.5) & (d2 == d2.max())
    assert low.sum() >= 10  # low scorers with the top's sensitivity
    for q, d in ((q1, d1), (q2, d2)):
        c = correlations(q, d)
        assert c["pearson"] > 0 and c["spearman"] > 0
    data = scenarios.get("exc1").sample(7, seed=0)
    assert data.scores.shape == (7, 100) and np.all(data.scores == q1)
    np.testing.assert_allclose(data.upper - data.lower, data.sensitivities)


def test_selection_probabilities_match_the_exponential_mechanism() -> None:
    """RNM with Gumbel noise is the exponential mechanism P(a) ∝ exp(eps q_a / (2 max d))."""
    q, d = scenarios.get("exc2").parameters()  # type: ignore[attr-defined]
    eps = 3.0
    w = np.exp(eps * (q - q.max()) / (2 * d.max()))
    p = selection_probabilities("exc2", "rnm:noise=gumbel", eps, n_draws=60_000, seed=1)
    assert p.shape == (100,) and p.sum() == pytest.approx(1.0)
    assert_counts_match_pmf(np.rint(p * 60_000), w / w.sum())


def test_the_texts_claims_hold() -> None:
    """§V-B on Fig. 4 (paired z of MSE differences over 3000 trials):
    scenario 1 -- mGEM beats RNM; GEM also does well; mGEM rarely selects an optimal candidate;
    scenario 2 -- GEM does poorly (worse than RNM); RNM beats mGEM at higher eps."""
    ev1 = evaluate("exc1", ["rnm", "gem", "mgem"], [0.05, 1.0], 3000, seed=0)
    for i in range(2):
        diff, se = ev1.difference("mgem", "rnm")
        assert diff[i] < -5 * se[i]
        diff, se = ev1.difference("gem", "rnm")
        assert diff[i] < -5 * se[i]
    p_mgem = selection_probabilities("exc1", "mgem", 0.05, n_draws=5000, seed=2)
    q, _ = scenarios.get("exc1").parameters()  # type: ignore[attr-defined]
    assert p_mgem[q == q.max()].sum() < 0.05
    ev2 = evaluate("exc2", ["rnm", "gem", "mgem"], [0.05, 4.0], 3000, seed=0)
    diff, se = ev2.difference("gem", "rnm")
    assert np.all(diff > 5 * se)
    diff, se = ev2.difference("rnm", "mgem")
    assert diff[1] < -5 * se[1]


def test_figures(tmp_path) -> None:
    evs = [evaluate(n, ["rnm", "gem", "mgem"], [0.1, 1.0], 100, seed=0) for n in ("exc1", "exc2")]
    fig = exceptional_figure(evs, "fig4", n_draws=500)
    assert isinstance(fig, Figure) and len(fig.axes) == 8  # 4 rows x 2 scenarios
    fig18 = plot_exceptional(evs, figure="fig18")
    assert len(fig18.axes) == 4
    fig.savefig(tmp_path / "fig4.png")
    with pytest.raises(ValueError, match="figure"):
        exceptional_figure(evs, "fig5")


def test_cli_fig4_and_fig18(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    args = ["scenarios", "-s", "fig18", "--epsilons", "0.1,1", "--trials", "100", "--out"]
    assert main([*args, str(out)]) == 0
    assert (out / "fig18.png").stat().st_size > 0
    rows = list(csv.DictReader(open(out / "scenarios.csv")))
    assert {r["selector"] for r in rows} == set(FIG18_SELECTORS)
    assert {r["scenario"] for r in rows} == {"exc1", "exc2"}
    code = main(["scenarios", "-s", "fig4", "--epsilons", "1", "--trials", "50", "--no-plots",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    assert "Fig. 4 scenario 2" in capsys.readouterr().out
