"""The sweep figure a researcher keeps (dpbandits.experiments.sweep_plots): privacy parameters
on a log axis with eps = inf as "∞", a log regret axis over wide ranges, at most 8 agents per
panel grouped by family in distinct colours, axis labels in words, the lower bounds drawn."""

from __future__ import annotations

import math

import numpy as np

from dpbandits.experiments.sweep_plots import (
    MAX_AGENTS,
    REFERENCE,
    agent_families,
    axis_label,
    plot_final_regret,
)

KEY = "agents.*.epsilon|epsilon_select"
EPS = [0.1, 0.3, 1.0, 3.0, 1e6]
REFS = ["UCB", "KL-UCB", "TS"]
APP_H = ["kRR", "RNM", "RS", "GEM", "mGEM"]
LIT = [f"DP-{i}" for i in range(10)]


def _rows(scale: float = 1.0) -> list[dict]:
    rows = []
    for i, agent in enumerate(REFS + APP_H + LIT):
        for e in EPS:
            regret = 10.0 if agent in REFS else scale * (10 + 5000 / (1 + e * (i + 1)))
            rows.append({KEY: e, "agent": agent, "regret_mean": regret, "regret_se": 1.0})
    return rows


FAMILIES = {**{a: REFERENCE for a in REFS}, **{a: "App. H" for a in APP_H},
            **{a: "literature" for a in LIT}}  # fmt: skip


def test_eps_inf_is_its_own_position_on_a_log_axis_labelled_in_words() -> None:
    fig = plot_final_regret(_rows(), KEY, [KEY], FAMILIES)
    for ax in fig.axes:
        assert ax.get_xscale() == "log"
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert labels == ["0.1", "0.3", "1", "3", "∞"], labels
        ticks = ax.get_xticks()
        assert ticks[-1] > ticks[-2] * 2.9 and ticks[-1] < 1e3  # beyond 3, not at 1e6
        assert ax.get_xlabel() == "ε / ε_S (per action)"
    assert axis_label("experiment.env_kwargs.horizon") == "horizon T"


def test_at_most_eight_agents_per_panel_by_family_in_distinct_colours() -> None:
    fig = plot_final_regret(_rows(), KEY, [KEY], FAMILIES)
    seen = set()
    for ax in fig.axes:
        lines = [x for x in ax.get_lines() if not x.get_label().startswith("_")]
        assert 0 < len(lines) <= MAX_AGENTS
        colours = [tuple(np.round(x.get_color(), 6)) if not isinstance(x.get_color(), str)
                   else x.get_color() for x in lines]  # fmt: skip
        assert len(set(colours)) == len(colours)  # distinct within the panel
        names = {x.get_label() for x in lines}
        assert set(REFS) <= names  # the references in every panel
        assert len({FAMILIES[n] for n in names} - {REFERENCE}) == 1  # one family per panel
        seen |= names
        assert ax.get_legend() is not None
    assert seen == set(FAMILIES)


def test_regret_axis_is_logarithmic_only_over_a_wide_range() -> None:
    wide = plot_final_regret(_rows(), KEY, [KEY], FAMILIES)
    assert all(ax.get_yscale() == "log" for ax in wide.axes)  # 10 to ~5000
    narrow = [{**r, "regret_mean": 10 + r["regret_mean"] / 1000} for r in _rows()]
    assert all(ax.get_yscale() == "linear" for ax in plot_final_regret(narrow, KEY).axes)
    # the span at which it turns: 123 to 11 317 (92x, docs/private-bandits.md's ten arms) is log
    for top, scale in ((19.0, "linear"), (21.0, "log"), (92.0, "log")):
        rows = [{**r, "regret_mean": 1.0 + (top - 1.0) * (i % 2)} for i, r in enumerate(_rows())]
        assert {ax.get_yscale() for ax in plot_final_regret(rows, KEY).axes} == {scale}, top


def test_lower_bounds_are_drawn_against_eps_and_as_a_level() -> None:
    bounds = {"Lai-Robbins": {math.inf: 12.0},
              "lower bound: Azize et al. 2025": {e: 100 / e for e in EPS[:-1]}}  # fmt: skip
    fig = plot_final_regret(_rows(), KEY, [KEY], FAMILIES, bounds)
    labels = [x.get_label() for x in fig.axes[0].get_lines()]
    assert "Lai-Robbins" in labels and "lower bound: Azize et al. 2025" in labels
    curve = next(x for x in fig.axes[0].get_lines() if x.get_label().startswith("lower bound"))
    assert list(curve.get_ydata()) == [100 / e for e in EPS[:-1]]


def test_families_from_the_agent_specs() -> None:
    specs = {"UCB": {"kind": "ucb"}, "RNM": {"kind": "private", "selector": "rnm"},
             "DP-UCB": {"kind": "dp_ucb", "epsilon": 1.0}}  # fmt: skip
    fam = agent_families(specs)
    assert fam["UCB"] == REFERENCE and fam["RNM"] != fam["DP-UCB"] != REFERENCE
