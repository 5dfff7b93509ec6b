"""The one input policy (dpbandits.core.checks) as every public entry point applies it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
from dpbandits import selectors
from dpbandits.continual import BinaryMechanism, HybridMechanism, PrivateMeans, hybrid_noise
from dpbandits.core import checks
from dpbandits.experiments.engine import run


@pytest.mark.parametrize("bad", [True, "0.5", 1 + 0j, None, [1.0]])
def test_numbers_refuse_bool_str_complex(bad):
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        checks.positive_number(bad, "epsilon")


@pytest.mark.parametrize("value", [0.0, -1.0, math.nan, math.inf])
def test_positive_number_names_the_rule(value):
    with pytest.raises(ValueError, match="epsilon must be finite and > 0"):
        checks.positive_number(value, "epsilon")


def test_numpy_real_scalars_are_numbers():
    assert checks.positive_number(np.float32(0.5), "x") == 0.5
    assert checks.positive_int(np.int16(3), "n") == 3
    with pytest.raises(TypeError):
        checks.positive_int(3.0, "n")
    with pytest.raises(TypeError):
        checks.positive_int(np.bool_(True), "n")



def test_one_of_returns_a_choice_and_names_the_rest():
    assert checks.one_of("sat", ("sat", "avg"), "algorithm") == "sat"
    with pytest.raises(ValueError, match=r"^algorithm must be one of \('sat', 'avg'\), got 'max'$"):
        checks.one_of("max", ("sat", "avg"), "algorithm")
    with pytest.raises(ValueError, match="got 1"):
        checks.one_of(1, ("1",), "k")  # no conversion: 1 is not "1"
    # the config layer reads the parameter's name from the error (ParameterError.param)
    with pytest.raises(checks.ParameterError) as info:
        checks.one_of("max", ("sat", "avg"), "algorithm")
    assert info.value.param == "algorithm"
    # a mapping lists its keys in order, a set sorted; an unhashable value is just not a choice
    with pytest.raises(ValueError, match=r"^mode must be one of \('b', 'a'\), got \['a'\]$"):
        checks.one_of(["a"], {"b": 1, "a": 2}, "mode")
    with pytest.raises(ValueError, match=r"^mode must be one of \('a', 'b'\), got 'c'$"):
        checks.one_of("c", {"b", "a"}, "mode")

@pytest.mark.parametrize("name", ["rnm", "krr", "gem", "mgem", "rs", "exponential_mechanism"])
@pytest.mark.parametrize(
    "q, kind",
    [
        (np.array([[1 + 1j, 0.0]]), "complex"),
        (np.array([[True, False]]), "boolean"),
        (np.array([["1", "0"]]), "string"),
    ],
)
def test_selectors_refuse_non_real_scores(name, q, kind):
    with pytest.raises(TypeError, match=f"q must be an array of real numbers, got a {kind} array"):
        selectors.make(name).select(q, rng=0)


def test_selectors_refuse_complex_sensitivities():
    with pytest.raises(TypeError, match="d must be an array of real numbers"):
        selectors.make("gem").select([[0.0, 1.0]], np.array([1 + 0j, 1.0]), rng=0)


@pytest.mark.parametrize("name", ["rnm", "gem", "mgem", "rs", "rs_tnb", "krr"])
@pytest.mark.parametrize("eps", [True, "1", 1j])
def test_selector_epsilon_types(name, eps):
    with pytest.raises(TypeError, match="epsilon"):
        selectors.make(name, epsilon=eps)


@pytest.mark.parametrize(
    "make",
    [
        lambda e: PrivateMeans(2, 2, e, 0.0, 1.0),
        lambda e: HybridMechanism(e),
        lambda e: BinaryMechanism(1000, e),
        lambda e: hybrid_noise(10, e),
    ],
)
@pytest.mark.parametrize("eps", [5e-324, 1e-308, 1e-302])
def test_continual_release_refuses_an_epsilon_whose_noise_overflows(make, eps):
    with pytest.raises(ValueError, match=r"too small .* use epsilon >= "):
        make(eps)


def test_smallest_accepted_epsilon_gives_finite_releases():
    pm = PrivateMeans(50, 2, 1e-290, 0.0, 1.0, rng=0)
    rng = np.random.default_rng(1)
    for _ in range(300):
        a = rng.integers(0, 2, 50)
        pm.update(a, rng.uniform(size=50))
        assert np.isfinite(pm.means()).all()


@pytest.mark.parametrize("bad", [True, "1"])
def test_continual_release_refuses_bool_and_numeric_strings(bad):
    with pytest.raises(TypeError, match="epsilon must be a real number"):
        HybridMechanism(bad)


@pytest.mark.parametrize(
    "agent, message",
    [
        (agents.UCB(alpha=-1), "alpha must be > 0"),
        (agents.SlidingWindowUCB(window=0), "window must be >= 1"),
        (agents.DiscountedUCB(xi=0.0), "xi must be > 0"),
    ],
)
def test_engine_refuses_a_bad_agent_before_any_work(agent, message):
    env = {"id": "dpbandits/TwoArmedShift-v0", "t_shift": 50, "horizon": 100}
    with pytest.raises((ValueError, TypeError), match=message):
        run(env, {"A": agent}, n_runs=2, progress=False, n_jobs=2)


@pytest.mark.parametrize("eps", [1e-250, 1e300])
@pytest.mark.parametrize("selector", ["rnm", "krr", "gem", "mgem", "rs"])
def test_extreme_but_accepted_epsilon_never_gives_nan(selector, eps):
    """A private agent at an extreme eps runs to the end with finite traces and valid actions."""
    env = {"id": "dpbandits/TwoArmedShift-v0", "t_shift": 150, "horizon": 300}
    agent = agents.PrivateAgent(selector, epsilon_select=1.0, epsilon_means=eps)
    try:
        res = run(env, {"A": agent}, n_runs=4, progress=False, n_jobs=1, keep_actions=True)
    except ValueError as exc:  # a refusal must say what to change
        assert "epsilon" in str(exc)
        return
    d = res.data["A"]
    assert np.isfinite(d["private_means"]).all()
    assert np.isfinite(d["total_regret"]).all()
    assert d["actions"].min() >= 0 and d["actions"].max() <= 1


def test_private_agent_validates_at_reset():
    """The one place an agent checks its parameters is reset (its parameter table)."""
    agent = agents.PrivateAgent("rnm", epsilon_means=True)
    with pytest.raises(TypeError, match="epsilon_means must be a real number"):
        agent.reset(2, 2, horizon=10, rng=0)


@pytest.mark.parametrize(
    "bad", [np.array([0.1 + 1j, 0.5]), np.array(["0.1", "0.5"]), [True, False]]
)
def test_dp_quantile_refuses_non_real_data(bad):
    from dpbandits.quantiles import dp_quantile

    with pytest.raises(TypeError, match="x must be an array of real numbers"):
        dp_quantile(bad, 0.5, 1.0, 0.0, 1.0, rng=0)


@pytest.mark.parametrize("bad", [True, "0.5", 0.5 + 0j])
def test_dp_quantile_refuses_non_real_levels_and_epsilon(bad):
    from dpbandits.quantiles import dp_quantile

    with pytest.raises(TypeError):
        dp_quantile([0.1, 0.2], bad, 1.0, 0.0, 1.0, rng=0)
    with pytest.raises(TypeError):
        dp_quantile([0.1, 0.2], 0.5, bad, 0.0, 1.0, rng=0)


@pytest.mark.parametrize("eps", [1.0, 1e15, 1e300])
def test_smith_quantile_on_tied_data_keeps_its_law_at_a_huge_epsilon(eps):
    """On n equal values v, Smith's mechanism is uniform on [lo, v] with probability
    (v - lo) / (hi - lo) when the two end intervals have equal utility (q n = n - q n): the law
    does not depend on eps, also where eps * n overflows every weight."""
    from dpbandits.quantiles import dp_quantile

    n_draws, v = 40_000, 0.3
    x = np.broadcast_to(np.full(200, v), (n_draws, 200))
    out = dp_quantile(x, 0.5, eps, 0.0, 1.0, rng=5, method="smith")
    left = float((out < v).mean())
    z = (left - v) / math.sqrt(v * (1 - v) / n_draws)
    assert abs(z) < 5


@pytest.mark.parametrize("name", ["gem", "mgem", "combined_gem"])
@pytest.mark.parametrize("eps", [5e-324, 1e-320, 1e-300])
def test_gem_threshold_overflow_is_refused_when_built_not_mid_run(name, eps):
    # t = 2 ln(K/beta)/eps overflows: the selector refuses it when built, and a private agent
    # using it at reset (before any worker starts), naming the smallest usable epsilon
    with pytest.raises(ValueError, match=r"too small for the GEM threshold.*use epsilon"):
        selectors.make(name, epsilon=eps)
    agent = agents.PrivateAgent(name, epsilon_select=eps)
    with pytest.raises(ValueError, match="GEM threshold") as info:
        agent.reset(2, 2, horizon=10, rng=0)
    assert info.value.param == "epsilon_select"


def _closed_choice_calls():
    """One bad choice per function that checks a closed set of names with ``checks.one_of``:
    (call, parameter name, a choice the message must list)."""
    import envs
    from dpbandits.core.traits import AgentTraits
    from dpbandits.quantiles import mechanism_options
    from dpbandits.recommendation.auctions import second_prices
    from dpbandits.selectors.noisy_max import noise_code
    from dpbandits.theory.lower_bounds import _check_arms
    from dpbandits.topk.feature_selection import lasso_alpha
    from dpbandits.trust.notions import approx_dp
    from dpbandits.trust.randomizers import LocalRandomizer

    one = np.ones((1, 1))
    return [
        (lambda: noise_code("normal"), "noise", "'gumbel'"),
        (lambda: AgentTraits(rewards="binary"), "rewards", "'unit'"),
        (lambda: mechanism_options({"method": "exact"}, 8), "method", "'smith'"),
        (lambda: mechanism_options({"sampler": 1}, 8, "q_"), "q_sampler", "'exact'"),
        (lambda: second_prices(one, one, one > 0, 0.1, "view"), "payment", "'click'"),
        (lambda: _check_arms([0.5], "poisson", None), "arm", "'gaussian'"),
        (lambda: lasso_alpha(0.1, 10, "median"), "convention", "'half_sum'"),
        (lambda: approx_dp("renyi", 1.0, 1e-6), "notion", "'zcdp'"),
        (lambda: LocalRandomizer(1.0, mechanism="gauss"), "mechanism", "'response'"),
        (lambda: envs.TwoArmedShift(render_mode="human"), "render_mode", "None, 'ansi'"),
    ]


def test_closed_choices_are_refused_naming_the_parameter_and_every_choice():
    """The hand-written 'must be one of' checks now all go through ``checks.one_of``: a
    ``ParameterError`` (a ``ValueError``) whose ``param`` is the argument, listing the choices."""
    for call, name, choice in _closed_choice_calls():
        with pytest.raises(checks.ParameterError, match=rf"^{name} must be one of \(") as info:
            call()
        assert info.value.param == name
        assert choice in str(info.value), str(info.value)
