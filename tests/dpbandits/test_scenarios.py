"""Scenario generators (§VI, App. E, App. F) and the evaluation harness (§VI, App. H)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpbandits import scenarios
from dpbandits.scenarios.evaluation import Evaluation, check_epsilons, evaluate, proportion_sweep
from tests.stats import assert_mean_close

ALL_NAMES = [*scenarios.available(), "2:p=0.1", "3:p=0.01", "groups:sigma=1"]


# ------------------------------------------------------------------------------------------
# Generators
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_NAMES)
def test_generator_is_deterministic_and_well_formed(name):
    sc = scenarios.get(name)
    a = sc.sample(500, seed=7)
    b = sc.sample(500, seed=7)
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(a.sensitivities, b.sensitivities)
    k = sc.n_candidates
    assert a.scores.shape == (500, k) and a.sensitivities.shape == (k,)
    assert np.all(np.isfinite(a.scores)) and np.all(a.sensitivities > 0)
    # Clipped to the range whose length is the sensitivity.
    assert np.all(a.scores >= a.lower) and np.all(a.scores <= a.upper)
    np.testing.assert_allclose(a.upper - a.lower, a.sensitivities, rtol=1e-12)
    # Accepts a Generator as well as an int seed, with the same result.
    c = sc.sample(500, seed=np.random.default_rng(7))
    np.testing.assert_array_equal(a.scores, c.scores)


@pytest.mark.parametrize("name", ["4", "6", "7", "corr:t=0.3"])
def test_random_scenarios_change_with_seed_and_parameters_do_not_depend_on_n(name):
    sc = scenarios.get(name)
    a, b = sc.sample(400, seed=1), sc.sample(400, seed=2)
    assert not np.array_equal(a.scores, b.scores)
    # The scenario's own parameters are drawn first: same seed, other n -> same centres.
    np.testing.assert_array_equal(a.centers, sc.sample(800, seed=1).centers)


def test_bimodal_scores_and_sensitivities_are_the_papers():
    for kind, d_high, d_low in (("positive", 1.8, 1.0), ("negative", 1.0, 1.8)):
        data = scenarios.Bimodal(kind=kind).sample(3)
        high = data.scores[0] == 1.0
        assert high.sum() == 50 and np.all(data.scores[0][~high] == -1.0)
        assert np.all(data.sensitivities[high] == d_high)
        assert np.all(data.sensitivities[~high] == d_low)
        assert np.all(data.scores == data.scores[0])  # no variability (§VI-b)
    d3 = scenarios.get(3).sample(2)
    high = d3.scores[0] == 1.0
    for group in (high, ~high):  # equal share of large and small sensitivities in each group
        assert (d3.sensitivities[group] == 1.8).sum() == (d3.sensitivities[group] == 1.0).sum()
    sweep = scenarios.get("1:p=0.2").sample(2)
    assert (sweep.scores[0] == 1.0).sum() == 20


def test_quantile_sensitivity_and_clipping_follow_section_vi_a():
    sc = scenarios.get(5)
    rng = np.random.default_rng(3)
    # Recompute the raw scores the way the docstring says and compare.
    mu, s = sc.parameters(rng)
    raw = mu + s * rng.standard_normal((1000, 100))
    data = sc.sample(1000, seed=3)
    lo, hi = np.quantile(raw, [0.1, 0.9], axis=0)
    np.testing.assert_allclose(data.sensitivities, hi - lo)
    np.testing.assert_allclose(data.scores, np.clip(raw, lo, hi))
    # Delta_a estimates the 10-90 spread of N(mu, s^2): 2 * 1.2816 * s (loose check of scale).
    np.testing.assert_allclose(data.sensitivities, 2 * stats.norm.ppf(0.9) * s, rtol=0.15)


@pytest.mark.parametrize(
    ("name", "sign"),
    [("1", 1), ("2", -1), ("4", 1), ("5", -1), ("corr:t=5", 1), ("corr:t=-5", -1)],
)
def test_correlation_sign_matches_the_paper(name, sign):
    data = scenarios.get(name).sample(2000, seed=0)
    rho = stats.spearmanr(data.scores.mean(axis=0), data.sensitivities).statistic
    assert np.sign(rho) == sign and abs(rho) > 0.8


def test_two_groups_have_opposite_correlations():
    data = scenarios.get(7).sample(2000, seed=0)
    assert data.groups is not None and np.bincount(data.groups).tolist() == [1000, 1000]
    rho = [
        stats.spearmanr(data.scores[data.groups == g].mean(axis=0), data.sensitivities).statistic
        for g in (0, 1)
    ]
    assert rho[0] < -0.8 and rho[1] > 0.8


@pytest.mark.parametrize(
    ("bad", "match"),
    [(0, "scenario"), (9, "scenario"), ("nope", "unknown scenario"), ("4:p=0.2", "scenario")],
)
def test_unknown_scenario_is_a_value_error(bad, match):
    with pytest.raises(ValueError, match=match):
        scenarios.get(bad)


def test_bad_scenario_parameters():
    with pytest.raises(ValueError, match="proportion"):
        scenarios.get("1:p=0.001")
    with pytest.raises(ValueError, match="n_trials"):
        scenarios.get(4).sample(0)
    with pytest.raises(ValueError, match="n_trials"):
        scenarios.get(4).sample(1)
    with pytest.raises(TypeError, match="n_trials"):
        scenarios.get(4).sample(2.5)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------
# evaluate(): bad input, bookkeeping, plug-ins
# ------------------------------------------------------------------------------------------


class AlwaysFirst:
    """A minimal plug-in selector following the protocol: always candidate 0."""

    name = "always_first"
    private = True
    uses_sensitivities = False

    def __init__(self, epsilon: float = 1.0) -> None:
        self.epsilon = epsilon

    def with_epsilon(self, epsilon: float) -> AlwaysFirst:
        return AlwaysFirst(epsilon)

    def select(self, q, d=None, rng=None):
        return np.zeros(np.shape(q)[:-1], dtype=np.int64)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"scenario": 42}, "unknown scenario"),
        ({"epsilons": []}, "epsilons must not be empty"),
        ({"epsilons": [1.0, -1.0]}, "epsilons must be finite and > 0"),
        ({"n_trials": 0}, "n_trials must be >= 1"),
        ({"n_trials": -5}, "n_trials must be >= 1"),
        ({"selectors": ["no_such_selector"]}, "no_such_selector"),
        ({"selectors": []}, "selectors must not be empty"),
    ],
)
def test_evaluate_rejects_bad_input(kwargs, match):
    args = {"scenario": 1, "selectors": ["uniform"], "epsilons": [1.0], "n_trials": 10}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        evaluate(**args)


def test_check_epsilons_default_is_the_paper_grid():
    eps = check_epsilons(None)
    assert eps.size == 12 and eps[0] == pytest.approx(0.01) and eps[-1] == pytest.approx(16)


def test_evaluate_error_definition_with_a_plugin_and_a_function():
    """Picking candidate 0 (a low score in scenario 1) costs (1 - (-1))^2 = 4 every trial."""

    def first(q, d, epsilon, rng):
        return np.zeros(q.shape[0], dtype=np.int64)

    ev = evaluate(1, {"obj": AlwaysFirst(), "fn": first}, [0.5, 2.0], n_trials=50)
    np.testing.assert_array_equal(ev.mse["obj"], [4.0, 4.0])
    np.testing.assert_array_equal(ev.se["obj"], [0.0, 0.0])
    np.testing.assert_array_equal(ev.mse["fn"], [4.0, 4.0])


def test_evaluate_matches_a_per_trial_loop_and_is_deterministic():
    ev = evaluate(6, ["rnm", "mgem"], [0.3, 3.0], n_trials=300, seed=11)
    again = evaluate(6, ["mgem"], [0.3, 3.0], n_trials=300, seed=11)
    # Streams are keyed by label: mgem's numbers do not depend on who else was evaluated.
    np.testing.assert_array_equal(ev.mse["mgem"], again.mse["mgem"])
    np.testing.assert_array_equal(ev.sq_errors["mgem"], again.sq_errors["mgem"])
    # The error is (best clipped score - selected clipped score)^2 on exactly sample(n, seed).
    data = scenarios.get(6).sample(300, seed=11)
    first = evaluate(6, {"first": AlwaysFirst()}, [1.0], n_trials=300, seed=11)
    expected = np.mean((data.scores.max(axis=1) - data.scores[:, 0]) ** 2)
    assert first.mse["first"][0] == pytest.approx(expected, rel=1e-12)
    sq = ev.sq_errors["rnm"]
    assert sq.shape == (2, 300)
    np.testing.assert_allclose(ev.mse["rnm"], sq.mean(axis=1))
    np.testing.assert_allclose(ev.se["rnm"], sq.std(axis=1, ddof=1) / np.sqrt(300))
    assert isinstance(ev, Evaluation) and ev.private["rnm"] is True


def test_uniform_mse_matches_its_closed_form():
    """Uniform on scenario 1: error 2 with probability 1/2, so E[sq error] = 2."""
    ev = evaluate(1, ["uniform"], [1.0], n_trials=20_000, seed=5)
    assert_mean_close(ev.sq_errors["uniform"][0], 2.0)


def test_to_frame_and_tables():
    ev = evaluate(2, ["uniform", "rnmh"], [1.0, 4.0], n_trials=40)
    frame = ev.to_frame()
    assert list(frame.columns) == [
        "scenario",
        "selector",
        "private",
        "epsilon",
        "mse",
        "se",
        "n_trials",
    ]
    assert len(frame) == 4 and set(frame.selector) == {"uniform", "rnmh"}
    assert not frame[frame.selector == "rnmh"].private.any()
    md = ev.to_markdown()
    assert "rnmh (not DP)" in md and md.count("\n| ") >= 3
    assert ev.spearman == pytest.approx(-1.0)


def test_registered_plugin_is_evaluated_by_name():
    from dpbandits import selectors

    name = "test_scenarios_always_first"
    selectors.register(name, AlwaysFirst, overwrite=True)
    try:
        ev = evaluate(1, [name, "rnm"], [1.0], n_trials=20)
        assert ev.mse[name][0] == 4.0
    finally:
        selectors.unregister(name)


def test_proportion_sweep_shapes():
    sw = proportion_sweep(1, [0.1, 0.5], ["uniform", "greedy"], epsilon=2.0, n_trials=50)
    assert sw.x.tolist() == [0.1, 0.5]
    # greedy always finds a best candidate; uniform on 10% high scores errs 90% of the time.
    np.testing.assert_array_equal(sw.mse["greedy"], [0.0, 0.0])
    assert sw.mse["uniform"][0] > sw.mse["uniform"][1]
