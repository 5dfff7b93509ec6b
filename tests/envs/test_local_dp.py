"""dpbandits/LocalDP-v0: every reward privatized at the user, single and vector forms
(envs/local_dp.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import envs
from dpbandits.core.checks import ParameterError
from envs.base import BanditVectorEnv
from tests.stats import assert_mean_close

BERN = {"id": "dpbandits/KArmedBernoulli-v0", "means": [0.3, 0.7], "horizon": 4000}


def test_vector_form_is_native_and_unbiased() -> None:
    v = gym.make_vec("dpbandits/LocalDP-v0", num_envs=50, vectorization_mode="vector_entry_point",
                     env=BERN, epsilon=1.0)  # fmt: skip
    assert isinstance(v, BanditVectorEnv) and isinstance(v, envs.LocalDPBanditVectorEnv)
    v.reset(seed=0)
    got = np.concatenate([v.pull(np.ones(50, dtype=np.int64)) for _ in range(3999)])
    assert len(np.unique(got)) == 2  # randomized response, debiased: two values
    assert_mean_close(got, 0.7)
    assert v.privacy_report()["notion"] == "local"


def test_pull_and_reward_rows_read_the_same_privatized_tape() -> None:
    kw = {"num_envs": 4, "vectorization_mode": "vector_entry_point", "env": BERN, "epsilon": 0.5}
    a = gym.make_vec("dpbandits/LocalDP-v0", **kw)
    b = gym.make_vec("dpbandits/LocalDP-v0", **kw)
    a.reset(seed=3)
    b.reset(seed=3)
    acts = np.array([0, 1, 1, 0], dtype=np.int64)
    pulled = np.array([a.pull(acts) for _ in range(300)])
    rows = np.concatenate([np.array(b.reward_rows(300 - t)) for t in (0,)])
    m = rows.shape[0]
    idx = acts * 4 + np.arange(4)
    assert np.array_equal(pulled[:m], rows[:, idx])


def test_raw_bits_keep_the_order_of_the_means() -> None:
    e = gym.make("dpbandits/LocalDP-v0", env=BERN, epsilon=1.0, debias=False)
    e.reset(seed=1)
    r1 = [e.step(1)[1] for _ in range(3000)]
    assert set(r1) <= {0.0, 1.0}
    p, q = 1 / (1 + np.exp(-1.0)), 1 / (1 + np.exp(1.0))
    assert_mean_close(r1, q + (p - q) * 0.7)


def test_wrapper_around_any_env_needs_its_range() -> None:
    with pytest.raises(ParameterError, match="bounds") as info:
        gym.make("dpbandits/LocalDP-v0", env="CartPole-v1", epsilon=1.0)
    assert info.value.param == "bounds"
    w = envs.LocalDPReward(gym.make("CartPole-v1"), 1.0, bounds=(0.0, 1.0))
    w.reset(seed=0)
    assert np.isfinite(w.step(0)[1])
    vw = envs.LocalDPVectorReward(gym.make_vec("CartPole-v1", num_envs=3), 2.0, bounds=(0, 1))
    vw.reset(seed=0)
    assert vw.step(np.zeros(3, dtype=np.int64))[1].shape == (3,)
    with pytest.raises(ParameterError, match="bounds"):
        envs.LocalDPVectorReward(gym.make_vec("CartPole-v1", num_envs=2), 1.0)


BAD = [({"epsilon": 0.0}, "epsilon"), ({"epsilon": 1.0, "mechanism": "x"}, "mechanism"),
       ({"epsilon": 1.0, "bounds": (1, 2, 3)}, "bounds")]  # fmt: skip


@pytest.mark.parametrize("kwargs, name", BAD)
def test_bad_arguments_fail_before_any_work(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        gym.make("dpbandits/LocalDP-v0", env=BERN, **kwargs)


def test_reward_outside_the_given_range_is_refused() -> None:
    e = envs.LocalDPReward(gym.make("dpbandits/KArmedGaussian-v0", means=[0.2, 0.5]), 1.0,
                           bounds=(0.0, 0.1))  # fmt: skip
    e.reset(seed=0)
    with pytest.raises(ValueError, match="outside the reward range"):
        for _ in range(50):
            e.step(1)


def test_a_hand_wrapped_env_is_run_as_local_dp_not_dropped() -> None:
    import dpbandits
    from dpbandits.experiments.envspec import env_spec

    w = envs.LocalDPReward(gym.make("dpbandits/KArmedBernoulli-v0", means=[0.3, 0.7]), 0.5)
    spec = env_spec(w)
    assert spec["id"] == "dpbandits/LocalDP-v0" and spec["kwargs"]["epsilon"] == 0.5
    res = dpbandits.run(w, ["ucb"], n_runs=2, horizon=200, n_jobs=1, progress=False)
    assert res.privacy["ucb"]["notion"] == "local"
    assert res.privacy["ucb"]["epsilon_local"] == 0.5


def test_an_agent_for_unit_rewards_is_refused_before_work_on_real_reports() -> None:
    import dpbandits

    env = {"id": "dpbandits/LocalDP-v0", "env": BERN, "epsilon": 1.0}
    with pytest.raises(ParameterError, match="debias=False"):
        dpbandits.run(env, ["adap_ucb"], n_runs=2, horizon=100, n_jobs=1, progress=False)
