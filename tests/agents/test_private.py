"""PrivateAgent (App. H): wiring of means, sensitivities, selector and ledger.

The first selection after the initial round is checked against the selectors' closed forms
(closed form) on a large batch of replications: with known means (a huge eps_M, so the released
means equal the observed rewards to ~1e-5) through the built-in estimators, and with injected
means and sensitivities through the ``means=`` / ``sensitivity=`` factories.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
from agents import PrivateAgent
from dpbandits import selectors
from tests.stats import assert_proportion_close

R = 200_000
R_KNOWN = 50_000  # the test with the built-in estimators (its docstring)
Q = (0.3, 0.6)  # arm 1 is better


def first_selection(agent, rewards=Q, n_runs=R, seed=0):
    """Initial round with the given rewards for arms 0, 1; return the first selected actions."""
    agent.reset(n_runs, 2, horizon=4, rng=seed)  # small horizon: small noise tables
    for arm, reward in enumerate(rewards):
        agent.update(np.full(n_runs, arm, dtype=np.int64), np.full(n_runs, reward))
    return agent.act()


def rnm_p_lower(gap, eps, big_d):
    """closed form: P[pick the lower candidate] = 1/2 exp(-eps gap / (2 D))."""
    return 0.5 * math.exp(-eps * gap / (2 * big_d))


def gem_p_lower(q, d, eps, beta, modified):
    """GEM/mGEM with K = 2: rnm (D = 1) on q'; the gap of q' is |s_1 - s_0| / (d_0 + d_1)."""
    t = 2 * math.log(2 / beta) / eps * (-1 if modified else 1)
    s = [q[a] - t * d[a] for a in range(2)]
    p_lower = rnm_p_lower(abs(s[1] - s[0]) / (d[0] + d[1]), eps, 1.0)
    lower = 0 if s[0] < s[1] else 1
    return p_lower if lower == 0 else 1 - p_lower


@pytest.mark.parametrize(
    ("selector", "params", "eps_s", "p0"),
    [
        ("rnm", {}, 1.0, rnm_p_lower(0.3, 1.0, 1.0)),  # d = initial = hi - lo = 1
        ("krr", {}, 4.0, 1 / (math.exp(4.0) + 1)),
        ("gem", {"beta": 0.05}, 1.0, gem_p_lower(Q, (1.0, 1.0), 1.0, 0.05, False)),
        ("mgem", {"beta": 0.05}, 1.0, gem_p_lower(Q, (1.0, 1.0), 1.0, 0.05, True)),
    ],
)
def test_first_selection_with_known_means_matches_closed_form(selector, params, eps_s, p0):
    """``R_KNOWN`` replications (the built-in estimators cost most per replication): |z| < 5
    keeps the share of the lower arm within 5 sd <= 0.011 of ``p0`` (0.003 for kRR); the
    nearest wrong laws are 0.034 away (GEM's gap over max d instead of d_0 + d_1, or RNM at
    eps instead of eps/2: 0.430 against 0.464; RNM with D = 2: 0.464 against 0.430) and kRR at
    eps/2 is 0.10 away."""
    agent = PrivateAgent(selector, epsilon_select=eps_s, epsilon_means=1e7, **params)
    a = first_selection(agent, n_runs=R_KNOWN)
    np.testing.assert_allclose(agent.private_means()[:5], [Q] * 5, atol=1e-4)
    assert_proportion_close(int((a == 0).sum()), R_KNOWN, p0)


class FixedMeans:
    def __init__(self, n_runs, n_arms, q):
        self.q = np.broadcast_to(np.asarray(q, dtype=float), (n_runs, n_arms)).copy()

    def update(self, actions, rewards):
        pass

    def means(self):
        return self.q


class FixedSensitivity:
    def __init__(self, n_runs, n_arms, d):
        self.values = np.broadcast_to(np.asarray(d, dtype=float), (n_runs, n_arms)).copy()
        self.n_estimates = np.zeros((n_runs, n_arms), dtype=np.int64)

    def update(self, actions, rewards):
        pass


@pytest.mark.parametrize(
    ("selector", "d", "p0"),
    [
        ("rnm", (0.5, 2.0), rnm_p_lower(0.3, 1.0, 2.0)),  # rnm uses D = max_a d[a]
        ("gem", (0.1, 0.3), gem_p_lower(Q, (0.1, 0.3), 1.0, 0.05, False)),
        ("mgem", (0.1, 0.3), gem_p_lower(Q, (0.1, 0.3), 1.0, 0.05, True)),
    ],
)
def test_first_selection_with_injected_means_and_sensitivities(selector, d, p0):
    agent = PrivateAgent(
        selector,
        means=lambda r, k, rng: FixedMeans(r, k, Q),
        sensitivity=lambda r, k, rng: FixedSensitivity(r, k, d),
        **({"beta": 0.05} if "gem" in selector else {}),
    )
    a = first_selection(agent, rewards=(0.9, 0.1))  # rewards are ignored by the fixed means
    assert_proportion_close(int((a == 0).sum()), R, p0)


def test_private_means_and_sensitivities_hooks_and_ledger():
    agent = PrivateAgent("mgem", epsilon_means=1.0, window=20)
    rng = np.random.default_rng(1)
    agent.reset(8, 2, horizon=500, rng=2)
    for _ in range(300):
        a = agent.act()
        agent.update(a, np.clip(np.where(a == 1, 0.8, 0.2) + 0.1 * rng.standard_normal(8), 0, 1))
    assert agent.private_means().shape == (8, 2)
    sens = agent.sensitivities()
    assert sens.shape == (8, 2) and np.all(sens > 0)
    rep = agent.privacy_report()
    assert rep["selection"]["n_actions"] == 298  # one eps_S action per step after the round
    assert rep["selection"]["epsilon_per_action"] == 1.0
    assert rep["means"]["epsilon"] == 1.0
    pairs = agent._sens.n_estimates.max(axis=0)
    assert rep["quantiles"]["pairs_per_arm"] == pairs.tolist() and pairs.sum() > 0
    assert "Privacy ledger" in rep["text"]


def test_krr_spends_no_quantile_budget():
    agent = agents.make("private", selector="krr", epsilon_select=4)
    assert agent.selector_.name == "krr" and agent.selector_.epsilon == 4.0
    first_selection(agent, n_runs=4)
    assert agent.sensitivities() is None
    rep = agent.privacy_report()
    assert rep["quantiles"]["epsilon_per_pair"] is None
    assert rep["selection"]["epsilon_per_action"] == 4.0


def test_selector_instance_and_epsilon():
    sel = selectors.make("rnm", epsilon=2.0)
    assert PrivateAgent(sel).selector_.epsilon == 2.0  # the instance's own epsilon
    assert PrivateAgent(sel, epsilon_select=0.5).selector_.epsilon == 0.5
    with pytest.raises(ValueError, match="by name"):
        PrivateAgent(sel, beta=0.1).reset(1, 2, horizon=10)


def test_unknown_selector_name_is_a_clear_error():
    """At reset, the one place the agent checks its parameters, naming ``selector``."""
    with pytest.raises(ValueError, match="unknown selector 'nope'.*available") as info:
        PrivateAgent("nope").reset(1, 2, horizon=10)
    assert info.value.param == "selector"
    with pytest.raises(ValueError, match="unknown selector"):
        agents.make("private", selector="nope").reset(1, 2, horizon=10)


def test_plugin_selector_registered_by_name_runs_in_private_agent():
    class AlwaysLast(selectors.Selector):
        name = "always_last_test"
        uses_sensitivities = False

        def select_batch(self, q, d, rng):
            return np.full(q.shape[0], q.shape[1] - 1, dtype=np.int64)

    selectors.register("always_last_test", AlwaysLast)
    try:
        agent = PrivateAgent("always_last_test", epsilon_select=3.0)
        a = first_selection(agent, rewards=(0.9, 0.1), n_runs=5)
        assert np.all(a == 1) and agent.selector_.epsilon == 3.0
    finally:
        selectors.unregister("always_last_test")


def test_plain_function_selector():
    def pick_first(q, d, epsilon, rng):
        return np.zeros(q.shape[0], dtype=np.int64)

    agent = PrivateAgent(pick_first)
    assert np.all(first_selection(agent, n_runs=3) == 0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon_means": 0.0}, "epsilon_means"),
        ({"epsilon_quantiles": -1.0}, "epsilon_quantiles"),
        ({"window": 0}, "window"),
    ],
)
def test_bad_budgets_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PrivateAgent("rnm", **kwargs).reset(2, 2, horizon=10, rng=0)


def test_bad_epsilon_select_raises_at_reset():
    with pytest.raises(ValueError, match="epsilon_select") as info:
        PrivateAgent("rnm", epsilon_select=-1.0).reset(1, 2, horizon=10)
    assert info.value.param == "epsilon_select"


@pytest.mark.parametrize("selector", ["krr", "rnm", "rs", "gem", "mgem", "combined_gem"])
def test_fast_path_takes_the_same_actions_as_the_validating_select(selector):
    """PrivateAgent calls select_batch on its (always valid) inputs; same draws as select()."""
    agent = PrivateAgent(selector)
    agent.reset(500, 3, horizon=100, rng=3)
    assert agent._fast
    rng = np.random.default_rng(4)
    for _ in range(20):
        a = agent.act()
        agent.update(a, rng.random(500))
    q, d = agent.private_means(), agent.sensitivities()
    state = agent._rng_select.bit_generator.state
    fast = agent.act()
    agent._rng_select.bit_generator.state = state
    slow = agent.selector_.select(q, d, rng=agent._rng_select)
    assert np.array_equal(fast, slow)


def play_uniform(agent, n_runs, n_arms, horizon, seed):
    """Play ``agent`` on uniform [0, 1] rewards (off any grid) for ``horizon`` steps."""
    rng = np.random.default_rng(seed)
    agent.reset(n_runs, n_arms, horizon=horizon, rng=seed + 1)
    for _ in range(horizon):
        agent.update(agent.act(), rng.random(n_runs))
    return agent


def test_discrete_means_noise_releases_exact_grid_multiples():
    agent = play_uniform(PrivateAgent("rnm", means_noise="discrete", window=20), 6, 3, 400, 3)
    est = agent._means  # rewards were rounded to the grid inside the mechanism
    assert est.gamma is not None and est.gamma == 2.0**-12
    pulled = est.counts > 0
    units = est.releases[pulled] / est.gamma
    assert np.array_equal(units, np.round(units))  # S_n + Z_n is an exact multiple of gamma
    assert np.all(np.isfinite(agent.private_means()))


@pytest.mark.parametrize(
    "value, error", [("gaussian", ValueError), ("Laplace", ValueError), (1, TypeError),
                     (None, TypeError)],
)  # fmt: skip
def test_bad_means_noise_is_refused_at_reset(value, error):
    """As PrivateMeans(noise=...) refuses it: an unknown name is a ValueError, a non-string a
    TypeError (the input policy), here under the agent's parameter name, at reset (the one
    place an agent checks its parameters)."""
    agent = PrivateAgent("rnm", means_noise=value)
    with pytest.raises(error, match="means_noise") as info:
        agent.reset(2, 2, horizon=10, rng=0)
    assert info.value.param == "means_noise"


def test_exact_quantile_sampler_reaches_the_windowed_sensitivities():
    agent = play_uniform(PrivateAgent("rnm", quantile_sampler="exact", window=16), 4, 2, 200, 5)
    sens = agent._sens
    assert sens.sampler == "exact" and sens.n_estimates.sum() > 0
    # every estimate is a distance between two grid points of [0, 1] (or the floor)
    d = agent.sensitivities()
    on_grid = np.isclose(d * sens.grid_size, np.round(d * sens.grid_size), rtol=0, atol=1e-9)
    assert np.all(on_grid | (d == sens.floor) | (sens.n_estimates == 0))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"quantile_sampler": "exactly"}, "quantile_sampler"),
        ({"quantile_sampler": "exact", "quantile_method": "smith"}, "needs quantile_method"),
    ],
)
def test_bad_quantile_sampler_is_refused_at_reset(kwargs, match):
    agent = PrivateAgent("rnm", **kwargs)
    with pytest.raises(ValueError, match=match):
        agent.reset(2, 2, horizon=10, rng=0)


def test_selector_epsilon_is_named_epsilon_select():
    """``epsilon`` would reach the selector twice: refused with the agent's name for it."""
    with pytest.raises(TypeError, match="epsilon_select") as info:
        PrivateAgent("mgem", epsilon=1.0).reset(1, 2, horizon=10)
    assert info.value.param == "epsilon"
