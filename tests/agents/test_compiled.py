"""Compiled agents (``Agent.play``): the engine's block path gives exactly the step path's
results, and anything that changes an agent's step falls back to the step path."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agents
from dpbandits.core.arms import action_dtype, read_only
from dpbandits.experiments import run

COMPILED = {
    "ucb": lambda: agents.UCB(),
    "ucb1": lambda: agents.UCB(log="t", alpha=0.8),
    "ts": lambda: agents.ThompsonSampling(),
    "ts-beta": lambda: agents.ThompsonSampling(model="bernoulli"),
    "sw-ucb": lambda: agents.SlidingWindowUCB(window=37),
    "d-ucb": lambda: agents.DiscountedUCB(gamma=0.97),
    "exp3": lambda: agents.Exp3(gamma=0.05),
}
ENVS = {
    "shift": ("dpbandits/TwoArmedShift-v0", {"horizon": 700, "t_shift": 300}),
    "bernoulli": ("dpbandits/KArmedBernoulli-v0", {"means": [0.2, 0.5, 0.45, 0.6], "horizon": 600}),
}


def play_by_steps(agent, env_id, kw, R, seed, blocks, steps_between=0):
    """Actions and rewards of ``R`` runs, played by ``act``/``pull``/``update`` (``blocks`` is
    None) or by ``play`` on reward rows of at most ``blocks`` steps, with ``steps_between``
    steps of ``act``/``pull``/``update`` after each block."""
    venv = gym.make_vec(env_id, num_envs=R, vectorization_mode="vector_entry_point", **kw)
    venv.reset(seed=seed)
    T, K = kw["horizon"], venv.unwrapped.n_arms
    agent.reset(R, K, horizon=T, rng=np.random.default_rng(seed))
    # the engine's action dtype: the block path runs the loop the engine runs (one compilation)
    actions, total = np.empty((T, R), dtype=action_dtype(K)), np.zeros(R)
    t = 0
    stepped = 0  # steps of act/update since the last block
    while t < T:
        if blocks is None or stepped < steps_between:
            stepped += 1
            a = agent.act()
            r = venv.unwrapped.pull(a)
            actions[t] = a
            total += r
            agent.update(a, r)
            t += 1
        else:
            rows = venv.unwrapped.reward_rows(min(blocks, T - t))
            rewards = np.empty((rows.shape[0], R))
            agent.play(rows, actions[t : t + rows.shape[0]], rewards)
            stepped = 0
            for step_rewards in rewards:  # in order, as the step loop adds them
                total += step_rewards
            t += rows.shape[0]
    assert agent.t == T
    return actions, total


@pytest.mark.parametrize("name", sorted(COMPILED))
@pytest.mark.parametrize("env", sorted(ENVS))
@pytest.mark.parametrize("R", [1, 5])
def test_play_is_bit_identical_to_the_step_protocol(name, env, R):
    env_id, kw = ENVS[env]
    by_step = play_by_steps(COMPILED[name](), env_id, kw, R, 11, None)
    for blocks in (1, 7, 1000):
        by_block = play_by_steps(COMPILED[name](), env_id, kw, R, 11, blocks)
        np.testing.assert_array_equal(by_block[0], by_step[0])
        np.testing.assert_array_equal(by_block[1], by_step[1])


@pytest.mark.parametrize("name", sorted(COMPILED))
@pytest.mark.parametrize("env", sorted(ENVS))
def test_blocks_and_steps_mixed_give_the_step_protocol(name, env):
    """Tables an agent keeps from one ``play`` call to the next (UCB's indices, Thompson
    sampling's posterior tables) must follow the pulls that ``update`` makes in between."""
    env_id, kw = ENVS[env]
    by_step = play_by_steps(COMPILED[name](), env_id, kw, 5, 11, None)
    for blocks, between in ((1, 1), (7, 3), (50, 20)):
        mixed = play_by_steps(COMPILED[name](), env_id, kw, 5, 11, blocks, between)
        np.testing.assert_array_equal(mixed[0], by_step[0])
        np.testing.assert_array_equal(mixed[1], by_step[1])


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_every_compiled_agent_is_played_by_blocks_and_learns(name):
    agent = COMPILED[name]()
    assert agent.block_player() is not None
    means = [0.2, 0.8]
    env = gym.make("dpbandits/KArmedBernoulli-v0", means=means, horizon=2000)
    res = run(env, {"a": agent}, n_runs=20, seed=5, n_jobs=1, progress=False, keep_actions=True)
    # a learner plays the better arm most of the time: its regret is far below the uniform
    # policy's 0.3 * 2000 = 600, and the late steps play arm 1 (always arm 0 would give 1200)
    assert res.data["a"]["total_regret"].mean() < 300
    assert (res.data["a"]["actions"][-500:] == 1).mean() > 0.7


def test_a_subclass_that_changes_a_step_is_played_step_by_step():
    class AlwaysFirst(agents.UCB):
        def choose(self):
            return np.zeros(self.n_runs, dtype=np.int64)

    class Tuned(agents.UCB):  # changes nothing a step does: still compiled
        def setup(self):
            super().setup()

    assert AlwaysFirst().block_player() is None
    assert Tuned().block_player() is not None
    env = gym.make("dpbandits/KArmedBernoulli-v0", means=[0.2, 0.8], horizon=300)
    res = run(env, {"first": AlwaysFirst()}, n_runs=3, seed=1, n_jobs=1, progress=False,
              keep_actions=True)  # fmt: skip
    # every step after the initial round plays arm 0: the subclass's choose was used
    assert (res.data["first"]["actions"][2:] == 0).all()


def test_bernoulli_thompson_refuses_rewards_outside_the_unit_interval_in_blocks_too():
    env_id, kw = "dpbandits/KArmedGaussian-v0", {"means": [0.5, 0.6], "sds": 2.0, "lo": -5.0,
                                                  "hi": 5.0, "horizon": 200}  # fmt: skip
    for blocks in (None, 50):
        with pytest.raises(ValueError, match=r"needs rewards in \[0, 1\]"):
            play_by_steps(agents.ThompsonSampling(model="bernoulli"), env_id, kw, 4, 2, blocks)


def test_the_engine_and_a_caller_of_play_share_one_compiled_loop():
    """Writable reward rows and the engine's action dtype run the loop the engine compiled
    (numba compiles a function once per argument types: each new type is another compilation,
    seconds on an empty kernel cache)."""
    assert action_dtype(2) == np.int8 and action_dtype(127) == np.int8
    assert action_dtype(128) == np.int16 and action_dtype(32_768) == np.int64
    rows = np.random.default_rng(0).random((20, 2 * 3))
    view = read_only(rows)
    assert not view.flags.writeable and np.shares_memory(view, rows) and rows.flags.writeable
    assert read_only(view) is view
    env = gym.make("dpbandits/KArmedBernoulli-v0", means=[0.2, 0.8], horizon=40)
    run(env, {"ucb": agents.UCB()}, n_runs=3, seed=0, n_jobs=1, progress=False)
    loop = agents.UCB.compiled_loop()
    engine_signatures = set(loop.play.signatures)
    agent = agents.UCB()
    agent.reset(3, 2, horizon=40, rng=0)
    agent.play(rows, np.empty((20, 3), dtype=action_dtype(2)), np.empty((20, 3)))
    assert set(loop.play.signatures) == engine_signatures
