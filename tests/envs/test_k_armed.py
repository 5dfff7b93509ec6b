"""The stationary K-armed environments: API, means, rewards, info and vector form."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs
from envs import (
    KArmedBernoulli,
    KArmedBernoulliVectorEnv,
    KArmedGaussian,
    KArmedGaussianVectorEnv,
    expected_clipped_normal,
)
from tests.stats import assert_counts_match_pmf, assert_mean_close

IDS = ("dpbandits/KArmedBernoulli-v0", "dpbandits/KArmedGaussian-v0")


@pytest.mark.parametrize("env_id", IDS)
def test_registered_with_native_vector_form(env_id: str) -> None:
    assert env_id in envs.ENV_IDS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(env_id).unwrapped)
        check_env(gym.make(env_id, n_arms=3, horizon=50).unwrapped)
    vec = gym.make_vec(env_id, num_envs=5, vectorization_mode="vector_entry_point", n_arms=3)
    assert isinstance(vec, envs.BanditVectorEnv) and vec.num_envs == 5
    obs, _ = vec.reset(seed=0)
    _, rew, term, trunc, info = vec.step(np.array([0, 1, 2, 0, 1]))
    assert rew.shape == (5,) and not term.any() and not trunc.any()
    assert info["expected_rewards"].shape == (5, 3)


def test_means_given_drawn_and_reproducible() -> None:
    env = KArmedBernoulli(means=[0.2, 0.5, 0.7])
    np.testing.assert_array_equal(env.means(0), [0.2, 0.5, 0.7])
    assert env.n_arms == 3 and env.horizon == 1000 and env.change_points == ()
    drawn = KArmedBernoulli()
    assert drawn.n_arms == 10
    np.testing.assert_array_equal(drawn.means(0), np.random.default_rng(0).uniform(0, 1, 10))
    np.testing.assert_array_equal(
        KArmedBernoulli(means_seed=3).means(0), KArmedBernoulli(means_seed=3).means(0)
    )
    assert not np.array_equal(KArmedBernoulli(means_seed=3).means(0), drawn.means(0))
    g = KArmedGaussian(n_arms=4, means_seed=1, lo=-1.0, hi=2.0)
    np.testing.assert_array_equal(g.means(0), np.random.default_rng(1).uniform(-1, 2, 4))
    # stationary: the same parameters at every step
    np.testing.assert_array_equal(g.means_table(), np.tile(g.means(0), (1000, 1)))


def test_gaussian_expected_rewards_are_clipped_means() -> None:
    env = KArmedGaussian(means=[0.05, 0.5, 0.97], sds=[0.3, 0.2, 0.1], horizon=10)
    np.testing.assert_allclose(
        env.expected_rewards(3),
        expected_clipped_normal([0.05, 0.5, 0.97], [0.3, 0.2, 0.1]),
        rtol=0,
        atol=0,
    )
    assert env.optimal_arms()[0] == int(np.argmax(env.expected_rewards(0)))


def test_bernoulli_rewards_and_regret_info() -> None:
    means = [0.1, 0.45, 0.8]
    env = gym.make("dpbandits/KArmedBernoulli-v0", means=means, horizon=300)
    env.reset(seed=1)
    for t in range(300):
        a = t % 3
        _, r, _, trunc, info = env.step(a)
        assert r in (0.0, 1.0)
        assert info["regret"] == pytest.approx(0.8 - means[a], abs=1e-15)
        assert info["optimal_arm"] == 2 and info["t"] == t
        assert trunc == (t == 299)
    # The law of the rewards: 30_000 copies in one vector step per arm.
    vec = KArmedBernoulliVectorEnv(num_envs=30_000, means=means, horizon=5)
    vec.reset(seed=2)
    for a in range(3):
        rewards = vec.step(np.full(30_000, a))[1]
        assert set(np.unique(rewards)) <= {0.0, 1.0}
        ones = int(rewards.sum())
        assert_counts_match_pmf([ones, 30_000 - ones], [means[a], 1 - means[a]])


def test_gaussian_reward_mean() -> None:
    vec = KArmedGaussianVectorEnv(num_envs=50_000, means=[0.3, 0.6], sds=0.25, horizon=5)
    vec.reset(seed=2)
    r = vec.step(np.ones(50_000, dtype=np.int64))[1]
    assert r.min() >= 0.0 and r.max() <= 1.0
    assert_mean_close(r, float(vec.expected_rewards(0)[1]))


@pytest.mark.parametrize(
    ("cls", "vcls", "kw"),
    [
        (KArmedBernoulli, KArmedBernoulliVectorEnv, {"n_arms": 4, "horizon": 200}),
        (KArmedGaussian, KArmedGaussianVectorEnv, {"n_arms": 4, "horizon": 200}),
    ],
)
def test_single_and_vector_forms_agree(cls, vcls, kw) -> None:
    actions = np.random.default_rng(0).integers(0, 4, 200)
    env = cls(**kw)
    env.reset(seed=7)
    single = np.array([env.step(int(a))[1] for a in actions])
    vec = vcls(num_envs=1, **kw)
    vec.reset(seed=7)
    batched = np.array([vec.step(np.array([a]))[1][0] for a in actions])
    np.testing.assert_array_equal(single, batched)


@pytest.mark.parametrize(
    ("kwargs", "exc", "text"),
    [
        ({"n_arms": 3, "means": [0.1, 0.2]}, ValueError, "n_arms=3"),
        ({"means": [0.1, 1.2]}, ValueError, "[0, 1]"),
        ({"n_arms": 0}, ValueError, "n_arms"),
        ({"n_arms": True}, TypeError, "n_arms"),
        ({"means_seed": True}, TypeError, "means_seed"),
        ({"horizon": 0}, ValueError, "horizon"),
    ],
)
def test_bernoulli_bad_input(kwargs, exc, text) -> None:
    with pytest.raises(exc, match=None) as info:
        KArmedBernoulli(**kwargs)
    assert text in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "exc", "text"),
    [
        ({"n_arms": 2, "sds": 0.0}, ValueError, "sds"),
        ({"n_arms": 2, "sds": [0.1, 0.2, 0.3]}, ValueError, "sds"),
        ({"n_arms": 2, "sds": True}, TypeError, "sds"),
        ({"n_arms": 2, "lo": 1.0, "hi": 0.0}, ValueError, "lo"),
        ({"means": [0.1, float("nan")]}, ValueError, "finite"),
    ],
)
def test_gaussian_bad_input(kwargs, exc, text) -> None:
    with pytest.raises(exc) as info:
        KArmedGaussian(**kwargs)
    assert text in str(info.value)
