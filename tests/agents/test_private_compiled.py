"""The private agent's compiled block loop (``PrivateAgent.play``): the same actions and rewards
as its step path for every built-in selector and mechanism option, and the step path for what
has no kernel (plug-in selectors, custom estimators, the exact quantile sampler)."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from dpbandits.selectors import Selector
from dpbandits.selectors.compiled import compiled_selection
from tests.agents.test_compiled import play_by_steps

ENVS = {
    "shift": ("dpbandits/TwoArmedShift-v0", {"horizon": 700, "t_shift": 300}),
    "bernoulli": ("dpbandits/KArmedBernoulli-v0", {"means": [0.2, 0.5, 0.45, 0.6], "horizon": 600}),
    # ten arms: noise blocks of 128 counts, refilled several times during the run
    "gaussian10": ("dpbandits/KArmedGaussian-v0", {
        "means": np.linspace(0.1, 0.9, 10).tolist(), "sds": 0.3, "horizon": 600}),
}
SELECTORS = {
    "rnm": {"selector": "rnm"},
    "rnm-gumbel": {"selector": "rnm", "noise": "gumbel"},
    "rnm-laplace": {"selector": "rnm", "noise": "laplace"},
    "em": {"selector": "exponential_mechanism"},
    "pf": {"selector": "permute_and_flip"},
    "rnmh": {"selector": "rnmh"},
    "gem": {"selector": "gem", "beta": 0.05},
    "mgem": {"selector": "mgem", "beta": 0.1, "noise": "gumbel"},
    "cgem": {"selector": "combined_gem"},
    "rs": {"selector": "rs", "gamma": 0.05},
    "rs_tnb": {"selector": "rs_tnb", "gamma": 0.1},
    "rs_tnb-eta2": {"selector": "rs_tnb", "gamma": 0.1, "eta": 2.0},
    "rs_tnb-table": {"selector": "rs_tnb", "gamma": 0.2, "eta": 0.5},
    "krr": {"selector": "krr", "epsilon_select": 2.0},
    "greedy": {"selector": "greedy"},
    "uniform": {"selector": "uniform"},
}


def private(**params):
    return agents.PrivateAgent(window=23, **params)


@pytest.mark.parametrize("name", sorted(SELECTORS))
@pytest.mark.parametrize("env", sorted(ENVS))
def test_play_is_bit_identical_to_the_step_protocol(name, env):
    env_id, kw = ENVS[env]
    params = SELECTORS[name]
    agent = private(**params)
    agent.reset(2, 3, horizon=10, rng=0)
    assert agent.block_player() is not None  # the block path below is the compiled loop
    by_step = play_by_steps(private(**params), env_id, kw, 5, 13, None)
    for blocks in (1, 61, 1000):
        agent = private(**params)
        by_block = play_by_steps(agent, env_id, kw, 5, 13, blocks)
        np.testing.assert_array_equal(by_block[0], by_step[0])
        np.testing.assert_array_equal(by_block[1], by_step[1])


@pytest.mark.parametrize(
    "options",
    [
        {"quantile_method": "smith"},
        {"quantile_method": "grid"},
        {"clip_means": True},
        {"means_noise": "discrete"},
        {"lo": -0.5, "hi": 1.5, "quantile_method": "smith"},
    ],
)
@pytest.mark.parametrize("R", [1, 4])
def test_mechanism_options_keep_the_bits(options, R):
    env_id, kw = ENVS["gaussian10"]
    by_step = play_by_steps(private(selector="mgem", **options), env_id, kw, R, 3, None)
    by_block = play_by_steps(private(selector="mgem", **options), env_id, kw, R, 3, 97)
    np.testing.assert_array_equal(by_block[0], by_step[0])
    np.testing.assert_array_equal(by_block[1], by_step[1])


def test_the_private_state_after_play_is_the_step_paths():
    """Means, sensitivities, estimate counts and the privacy report agree after a run."""
    env_id, kw = ENVS["bernoulli"]
    a, b = private(selector="gem"), private(selector="gem")
    play_by_steps(a, env_id, kw, 3, 4, None)
    play_by_steps(b, env_id, kw, 3, 4, 50)
    np.testing.assert_array_equal(a.private_means(), b.private_means())
    np.testing.assert_array_equal(a.sensitivities(), b.sensitivities())
    assert a.privacy_report() == b.privacy_report()


def test_what_has_no_kernel_is_played_step_by_step():
    class Plugin(Selector):
        name = "first_plugin"

        def select_batch(self, q, d, rng):
            return np.zeros(q.shape[0], dtype=np.int64)

    class SubRNM(type(agents.PrivateAgent(selector="rnm").selector_)):  # may change the step
        pass

    env_id, kw = ENVS["bernoulli"]
    cases = [
        private(selector=Plugin()),
        private(selector=SubRNM()),
        private(selector="rnm", quantile_sampler="exact"),
        private(selector="rnm", means=lambda r, k, rng: _ExactMeans(r, k)),
    ]
    for agent in cases:
        agent.reset(2, 4, horizon=100, rng=0)
        assert agent.block_player() is None, agent
    assert compiled_selection(Plugin(), 4) is None
    assert compiled_selection(SubRNM(), 4) is None
    assert compiled_selection(agents.PrivateAgent(selector="rnm").selector_, 4) is not None
    # and a subclass of the agent that changes its step is played through its own methods
    class Stubborn(agents.PrivateAgent):
        def choose(self):
            return np.zeros(self.n_runs, dtype=np.int64)

    stubborn = Stubborn(selector="rnm")
    stubborn.reset(2, 4, horizon=100, rng=0)
    assert stubborn.block_player() is None


class _ExactMeans:
    def __init__(self, r, k):
        self.s, self.n = np.zeros((r, k)), np.zeros((r, k))

    def update(self, actions, rewards):
        rows = np.arange(actions.shape[0])
        self.s[rows, actions] += rewards
        self.n[rows, actions] += 1

    def means(self):
        return self.s / np.maximum(self.n, 1)


def test_a_selection_that_refuses_its_input_raises_its_own_error_in_blocks_too():
    """GEM with an epsilon so small that t d overflows: the same ValueError either way."""
    env_id, kw = ENVS["bernoulli"]
    errors = []
    for blocks in (None, 40):
        with pytest.raises(ValueError) as info:
            play_by_steps(private(selector="gem", epsilon_select=1e-306), env_id, kw, 2, 1,
                          blocks)  # fmt: skip
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_one_compiled_loop_for_every_selector() -> None:
    # every built-in selection hands the loop a read-only table (random stopping's cached
    # tables are read-only): one compiled version of the 650 KB loop, not one per table flag
    from agents.private import _play
    from dpbandits.selectors import make
    from dpbandits.selectors.compiled import compiled_selection

    for name, params in [("rnm", {}), ("rs", {}), ("rs_tnb", {"eta": -0.5}), ("gem", {}),
                         ("krr", {}), ("greedy", {})]:  # fmt: skip
        spec = compiled_selection(make(name, **params), 2)
        assert spec is not None and not spec.table.flags.writeable, name
    from dpbandits.experiments import run, shift_agents, shift_env

    run(shift_env(t_shift=30, horizon=60), shift_agents(["RS", "GEM", "kRR"]), n_runs=2,
        seed=0, progress=False, n_jobs=1)  # fmt: skip
    assert _play.signatures
    for signature in _play.signatures:  # the table is the next-to-last argument
        assert str(signature[-2]).startswith("readonly array"), signature
