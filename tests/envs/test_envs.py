"""Gymnasium API, seeding, change points, autoreset and validation of the bandit environments."""

from __future__ import annotations

import importlib
import inspect
import pydoc
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector import AutoresetMode

import envs
from envs import (
    DriftingBandit,
    DriftingBanditVectorEnv,
    PiecewiseStationaryBandit,
    PiecewiseStationaryBanditVectorEnv,
    TwoArmedShift,
    TwoArmedShiftVectorEnv,
    expected_clipped_normal,
    linear_drift,
    sinusoidal_drift,
)
from tests.stats import assert_mean_close

IDS = list(envs.ENV_IDS)
SMALL: dict[str, dict[str, Any]] = {
    "dpbandits/TwoArmedShift-v0": {"t_shift": 40, "horizon": 100},
    "dpbandits/PiecewiseBandit-v0": {
        "segments": [(0, [0.1, 0.5, 0.9], [0.2] * 3), (30, [0.9, 0.5, 0.1], [0.2] * 3)],
        "horizon": 100,
    },
    "dpbandits/DriftingBandit-v0": {
        "means": linear_drift([0.2, 0.8], [0.8, 0.2], 99),
        "horizon": 100,
    },
    "dpbandits/KArmedBernoulli-v0": {"means": [0.2, 0.5, 0.7], "horizon": 100},
    "dpbandits/KArmedGaussian-v0": {"n_arms": 4, "sds": 0.3, "horizon": 100},
}
# One Env / VectorEnv pair per class, small horizons, for the pair-wise tests.
PAIRS = [
    (TwoArmedShift, TwoArmedShiftVectorEnv, {"t_shift": 3000, "horizon": 9000}),
    (
        PiecewiseStationaryBandit,
        PiecewiseStationaryBanditVectorEnv,
        {
            "segments": [(0, [0.3, 0.6, 0.5]), (4000, [0.7, 0.2, 0.5])],
            "arm": "bernoulli",
            "horizon": 9000,
        },
    ),
    (DriftingBandit, DriftingBanditVectorEnv, {"horizon": 9000, "sds": [0.1, 0.5]}),
]


def _run_env(env: gym.Env, actions: np.ndarray, seed: int | None) -> np.ndarray:
    env.reset(seed=seed)
    return np.array([env.step(int(a))[1] for a in actions])


# -------------------------------------------------------------------------------------------
# Gymnasium API
# -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes(env_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning fails the test
        check_env(gym.make(env_id).unwrapped)
        check_env(gym.make(env_id, **SMALL[env_id]).unwrapped)


@pytest.mark.parametrize("env_id", IDS)
def test_make_and_make_vec(env_id: str) -> None:
    env = gym.make(env_id, **SMALL[env_id])
    vec = gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point", **SMALL[env_id])
    base = env.unwrapped
    assert isinstance(base, envs.BanditEnv)
    assert isinstance(vec, envs.BanditVectorEnv) and vec.num_envs == 4
    assert vec.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert base.horizon == vec.horizon == 100
    assert base.change_points == vec.change_points
    np.testing.assert_array_equal(base.expected_reward_table(), vec.expected_reward_table())
    assert env.action_space == gym.spaces.Discrete(base.n_arms)
    assert env.observation_space == gym.spaces.Discrete(1)
    assert vec.single_action_space == env.action_space
    assert vec.action_space == gym.spaces.MultiDiscrete([base.n_arms] * 4)
    assert vec.observation_space == gym.spaces.MultiDiscrete([1] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Gymnasium's passive checker and wrappers stay silent
        env.reset(seed=0)
        env.step(env.action_space.sample())
        vec.reset(seed=0)
        vec.step(vec.action_space.sample())


def test_two_armed_shift_kwargs_and_defaults() -> None:
    env = gym.make("dpbandits/TwoArmedShift-v0").unwrapped
    assert (env.horizon, env.change_points, env.n_arms) == (50_000, (30_000,), 2)
    assert (env.lo, env.hi, env.arm) == (0.0, 1.0, "gaussian")
    np.testing.assert_array_equal(env.means(0), [0.2, 0.8])
    np.testing.assert_array_equal(env.means(30_000), [0.8, 0.2])
    np.testing.assert_allclose(
        env.expected_rewards(0), expected_clipped_normal([0.2, 0.8], [0.1, 0.3])
    )
    kw = {
        "means": (0.3, 0.6),
        "sds": (0.2, 0.4),
        "t_shift": 5,
        "horizon": 10,
        "lo": -1.0,
        "hi": 2.0,
    }
    env = gym.make("dpbandits/TwoArmedShift-v0", **kw).unwrapped
    vec = gym.make_vec(
        "dpbandits/TwoArmedShift-v0", num_envs=2, vectorization_mode="vector_entry_point", **kw
    )
    for e in (env, vec):
        assert (e.horizon, e.change_points, e.lo, e.hi) == (10, (5,), -1.0, 2.0)
        np.testing.assert_allclose(
            e.expected_rewards(4), expected_clipped_normal([0.3, 0.6], [0.2, 0.4], -1, 2)
        )
        np.testing.assert_allclose(
            e.expected_rewards(5), expected_clipped_normal([0.6, 0.3], [0.4, 0.2], -1, 2)
        )


def test_registration_is_idempotent() -> None:
    specs = {i: gym.spec(i) for i in IDS}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Overriding environment ..." would be a warning
        importlib.reload(envs)
        envs.register_envs()
    for i in IDS:
        assert gym.spec(i) == specs[i]
        assert gym.spec(i).vector_entry_point == envs.ENV_IDS[i][1]


@pytest.mark.parametrize("env_cls, vec_cls, kwargs", PAIRS)
def test_vector_env_api(env_cls: type, vec_cls: type, kwargs: dict) -> None:
    """The checks ``check_env`` makes, for the batched step (Gymnasium has no vector checker)."""
    R = 5
    vec = vec_cls(num_envs=R, **kwargs)
    obs, info = vec.reset(seed=1)
    assert obs in vec.observation_space and info == {}
    vec.action_space.seed(2)
    prev: list[Any] = []
    for _ in range(3):
        actions = vec.action_space.sample()
        out = vec.step(actions)
        obs, rew, term, trunc, info = out
        assert obs in vec.observation_space and obs.dtype == np.int64
        assert rew.shape == (R,) and rew.dtype == np.float64 and np.all(np.isfinite(rew))
        assert term.dtype == trunc.dtype == np.bool_ and not term.any() and not trunc.any()
        assert set(info) == {"t", "expected_rewards", "optimal_arm", "regret"}
        assert info["expected_rewards"].shape == (R, vec.n_arms)
        for key in ("t", "optimal_arm", "regret"):
            assert info[key].shape == (R,)
        # Fresh data on every call (as check_env's check_returned_data_not_reused asks).
        for old in prev:
            for a, b in zip(old, (obs, rew, term, trunc, *info.values()), strict=True):
                assert not np.shares_memory(a, b)
        prev.append((obs, rew, term, trunc, *info.values()))
    # Same seed, same step.
    a = np.zeros(R, dtype=np.int64)
    vec.reset(seed=9)
    first = vec.step(a)
    vec.reset(seed=9)
    assert data_equivalence(first, vec.step(a), exact=True)
    vec.reset(seed=10)
    assert not np.array_equal(first[1], vec.step(a)[1])


# -------------------------------------------------------------------------------------------
# Seeding
# -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env_cls, vec_cls, kwargs", PAIRS)
def test_env_and_vector_env_with_one_copy_coincide(
    env_cls: type, vec_cls: type, kwargs: dict
) -> None:
    """Same seed and actions: identical rewards and info over two episodes (several blocks).

    The second episode starts with ``reset()`` (no seed) on the Env and with the NEXT_STEP
    autoreset on the VectorEnv; both continue the generator's stream.
    """
    env, vec = env_cls(**kwargs), vec_cls(num_envs=1, **kwargs)
    T = env.horizon
    actions = np.random.default_rng(3).integers(0, env.n_arms, size=2 * T)
    env.reset(seed=123)
    vec.reset(seed=123)
    r_env, r_vec = [], []
    for episode in range(2):
        if episode == 1:
            env.reset()
            _, rew, term, trunc, info = vec.step(actions[:1])  # the autoreset step
            assert rew[0] == 0.0 and not term[0] and not trunc[0] and info == {}
        for t in range(T):
            a = actions[episode * T + t]
            _, r1, te1, tr1, i1 = env.step(a)
            _, r2, te2, tr2, i2 = vec.step(np.array([a]))
            r_env.append(r1)
            r_vec.append(r2[0])
            assert (te1, tr1) == (bool(te2[0]), bool(tr2[0])) == (False, t == T - 1)
            assert i1["t"] == i2["t"][0] == t
            assert i1["optimal_arm"] == i2["optimal_arm"][0]
            assert i1["regret"] == i2["regret"][0]
            np.testing.assert_array_equal(i1["expected_rewards"], i2["expected_rewards"][0])
    np.testing.assert_array_equal(r_env, r_vec)
    assert not np.array_equal(r_env[:T], r_env[T:])  # the second episode has new draws


@pytest.mark.parametrize("env_cls, vec_cls, kwargs", PAIRS)
def test_seeding(env_cls: type, vec_cls: type, kwargs: dict) -> None:
    env = env_cls(**kwargs)
    actions = np.random.default_rng(4).integers(0, env.n_arms, size=500)
    a = _run_env(env, actions, seed=7)
    b = _run_env(env_cls(**kwargs), actions, seed=7)
    c = _run_env(env, actions, seed=8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # make_vec "sync" (Gymnasium's own vectoriser over Env) agrees with the native VectorEnv.
    env_id = {
        TwoArmedShift: "dpbandits/TwoArmedShift-v0",
        PiecewiseStationaryBandit: "dpbandits/PiecewiseBandit-v0",
        DriftingBandit: "dpbandits/DriftingBandit-v0",
    }[env_cls]
    sync = gym.make_vec(env_id, num_envs=1, vectorization_mode="sync", **kwargs)
    native = gym.make_vec(env_id, num_envs=1, vectorization_mode="vector_entry_point", **kwargs)
    sync.reset(seed=7)
    native.reset(seed=7)
    for act in actions[:50]:
        np.testing.assert_array_equal(sync.step([act])[1], native.step(np.array([act]))[1])


# -------------------------------------------------------------------------------------------
# Change point and info
# -------------------------------------------------------------------------------------------
def test_change_point_at_documented_step() -> None:
    """Steps t_shift - 1 and t_shift (0-based): expected rewards and reward distributions."""
    t_shift, R = 100, 40_000
    vec = TwoArmedShiftVectorEnv(num_envs=R, t_shift=t_shift, horizon=150)
    assert vec.change_points == (t_shift,)
    before = expected_clipped_normal([0.2, 0.8], [0.1, 0.3])
    after = before[::-1]
    np.testing.assert_array_equal(vec.expected_rewards(t_shift - 1), before)
    np.testing.assert_array_equal(vec.expected_rewards(t_shift), after)
    np.testing.assert_array_equal(vec.optimal_arms()[t_shift - 1 : t_shift + 1], [1, 0])
    vec.reset(seed=0)
    actions = (np.arange(R) % 2).astype(np.int64)
    for t in range(t_shift + 1):
        _, rew, _, _, info = vec.step(actions)
        if t >= t_shift - 1:
            exp = before if t < t_shift else after
            assert np.all(info["t"] == t)
            np.testing.assert_array_equal(info["expected_rewards"], np.tile(exp, (R, 1)))
            np.testing.assert_array_equal(info["optimal_arm"], np.full(R, np.argmax(exp)))
            np.testing.assert_allclose(info["regret"], exp.max() - exp[actions])
            for a in (0, 1):
                # SE ~ 0.3 / sqrt(20_000) = 0.002 against a jump of 0.55: an off-by-one fails.
                assert_mean_close(rew[actions == a], exp[a])
    # The single Env says the same.
    env = gym.make("dpbandits/TwoArmedShift-v0", t_shift=t_shift, horizon=150)
    env.reset(seed=0)
    for t in range(t_shift + 1):
        _, _, _, _, info = env.step(0)
        assert info["t"] == t
        np.testing.assert_array_equal(info["expected_rewards"], before if t < t_shift else after)


def test_piecewise_segments_and_tables() -> None:
    segs = [(0, [0.1, 0.9], [0.1, 0.1]), (5, [0.9, 0.1], [0.1, 0.2]), (8, [0.5, 0.6], [0.3, 0.3])]
    env = PiecewiseStationaryBandit(segments=segs, horizon=12, lo=-1.0, hi=2.0)
    assert env.change_points == (5, 8)
    m = env.means_table()
    assert m.shape == (12, 2) and not m.flags.writeable
    for t, row in [
        (0, [0.1, 0.9]),
        (4, [0.1, 0.9]),
        (5, [0.9, 0.1]),
        (7, [0.9, 0.1]),
        (8, [0.5, 0.6]),
        (11, [0.5, 0.6]),
    ]:
        np.testing.assert_array_equal(env.means(t), row)
    table = env.expected_reward_table()
    np.testing.assert_allclose(table, expected_clipped_normal(m, env.sds_table(), -1.0, 2.0))
    np.testing.assert_array_equal(env.optimal_arms(), np.argmax(table, axis=1))
    np.testing.assert_allclose(env.regret_table(), table.max(1, keepdims=True) - table)


def test_drifting_means() -> None:
    lin = linear_drift([0.2, 0.8], [0.8, 0.2], t_end=10, t_start=2)
    np.testing.assert_allclose(
        lin(np.array([0, 2, 6, 10, 20])),
        [[0.2, 0.8], [0.2, 0.8], [0.5, 0.5], [0.8, 0.2], [0.8, 0.2]],
    )
    sin = sinusoidal_drift(0.5, [0.1, 0.2], period=8, phase=[0.0, np.pi / 2])
    np.testing.assert_allclose(sin(np.array([0, 2])), [[0.5, 0.7], [0.6, 0.5]], atol=1e-15)
    env = DriftingBandit(means=lin, sds=lambda t: 0.1 + 0.01 * t, horizon=12)
    np.testing.assert_allclose(env.means_table(), lin(np.arange(12)))
    np.testing.assert_allclose(env.sds_table()[:, 1], 0.1 + 0.01 * np.arange(12))
    assert env.change_points == ()
    scalar = DriftingBandit(means=lambda t: [0.2 + 0.05 * t, 0.5], horizon=12, vectorized=False)
    np.testing.assert_allclose(scalar.means_table()[:, 0], 0.2 + 0.05 * np.arange(12))
    bern = DriftingBandit(means=lin, sds=None, arm="bernoulli", horizon=12)
    np.testing.assert_array_equal(bern.expected_reward_table(), lin(np.arange(12)))
    const = DriftingBandit(means=[0.3, 0.4], sds=0.2, horizon=5)
    np.testing.assert_array_equal(const.means(4), [0.3, 0.4])


def test_render_ansi() -> None:
    env = gym.make("dpbandits/TwoArmedShift-v0", t_shift=2, horizon=4, render_mode="ansi")
    env.reset(seed=0)
    assert "last action=-" in env.render()
    env.step(1)
    env.step(0)
    env.step(1)
    text = env.render()
    assert isinstance(text, str)
    assert "t=2" in text and "means=[0.800 0.200]" in text and "last action=1" in text
    vec = TwoArmedShiftVectorEnv(num_envs=2, t_shift=2, horizon=4, render_mode="ansi")
    vec.reset(seed=0)
    vec.step(np.array([0, 1]))
    lines = vec.render()
    assert len(lines) == 2 and "last action=0" in lines[0] and "last action=1" in lines[1]


# -------------------------------------------------------------------------------------------
# Episode end and autoreset
# -------------------------------------------------------------------------------------------
def test_env_episode_end() -> None:
    env = TwoArmedShift(t_shift=1, horizon=3)
    with pytest.raises(ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    assert [env.step(0)[3] for _ in range(3)] == [False, False, True]
    with pytest.raises(ResetNeeded, match="horizon"):
        env.step(0)
    env.reset()
    assert env.step(0)[4]["t"] == 0


def test_vector_env_next_step_autoreset() -> None:
    R, T = 4, 3
    vec = gym.make_vec(
        "dpbandits/TwoArmedShift-v0",
        num_envs=R,
        vectorization_mode="vector_entry_point",
        t_shift=1,
        horizon=T,
    )
    vec.reset(seed=5)
    a = np.ones(R, dtype=np.int64)
    ts, truncs, rewards = [], [], []
    for _ in range(2 * T + 1):
        obs, rew, term, trunc, info = vec.step(a)
        assert not term.any() and np.all(obs == 0)
        ts.append(info["t"][0] if info else None)
        truncs.append(bool(trunc.all()) if trunc.any() else False)
        rewards.append(rew)
        assert trunc.all() or not trunc.any()
    assert ts == [0, 1, 2, None, 0, 1, 2]
    assert truncs == [False, False, True, False, False, False, True]
    np.testing.assert_array_equal(rewards[3], np.zeros(R))  # the reset step
    assert not np.array_equal(rewards[0], rewards[4])  # a new episode draws new rewards
    # Explicit reset in the middle of an episode restarts at t = 0.
    vec.reset()
    assert vec.step(a)[4]["t"][0] == 0


# -------------------------------------------------------------------------------------------
# Bad input
# -------------------------------------------------------------------------------------------
GOOD = [(0, [0.2, 0.8], [0.1, 0.3]), (10, [0.8, 0.2], [0.3, 0.1])]


@pytest.mark.parametrize(
    "factory, match",
    [
        (lambda: TwoArmedShift(sds=(0.1, 0.0)), "sds must be > 0"),
        (lambda: TwoArmedShift(sds=(-0.1, 0.3)), "sds must be > 0"),
        (lambda: TwoArmedShift(lo=1.0, hi=0.0), "lo must be < hi"),
        (lambda: TwoArmedShift(lo=0.5, hi=0.5), "lo must be < hi"),
        (lambda: TwoArmedShift(horizon=0, t_shift=0), "horizon must be >= 1"),
        (lambda: TwoArmedShift(horizon=-5), "horizon must be >= 1"),
        (lambda: TwoArmedShift(t_shift=0), r"t_shift must lie in \(0, horizon\)"),
        (lambda: TwoArmedShift(t_shift=50_000), r"t_shift must lie in \(0, horizon\)"),
        (lambda: TwoArmedShift(t_shift=-3), r"t_shift must lie in \(0, horizon\)"),
        (lambda: TwoArmedShift(means=(0.1, 0.2, 0.3)), "means must have length 2"),
        (lambda: TwoArmedShift(sds=(0.1,)), "sds must have length 2"),
        (lambda: TwoArmedShift(means=(0.1, np.nan)), "means must be finite"),
        (lambda: TwoArmedShift(render_mode="human"), "render_mode must be"),
        (lambda: TwoArmedShiftVectorEnv(num_envs=0), "num_envs must be >= 1"),
        (
            lambda: PiecewiseStationaryBandit(segments=GOOD[::-1], horizon=20),
            "first segment must start at step 0",
        ),
        (
            lambda: PiecewiseStationaryBandit(segments=[GOOD[1]], horizon=20),
            "first segment must start at step 0",
        ),
        (
            lambda: PiecewiseStationaryBandit(
                segments=[GOOD[0], GOOD[1], (5, [0.5, 0.5], [0.1, 0.1])], horizon=20
            ),
            "strictly increasing",
        ),
        (
            lambda: PiecewiseStationaryBandit(segments=[GOOD[0], GOOD[1], GOOD[1]], horizon=20),
            "strictly increasing",
        ),
        (lambda: PiecewiseStationaryBandit(segments=GOOD, horizon=10), "before the horizon"),
        (lambda: PiecewiseStationaryBandit(segments=GOOD, horizon=0), "horizon must be >= 1"),
        (
            lambda: PiecewiseStationaryBandit(
                segments=[(0, [0.2, 0.8], [0.1, 0.3, 0.2])], horizon=5
            ),
            r"sds must have length 2",
        ),
        (
            lambda: PiecewiseStationaryBandit(
                segments=[GOOD[0], (10, [0.1, 0.2, 0.3], [0.1] * 3)], horizon=20
            ),
            r"segments\[1\] means must have length 2",
        ),
        (
            lambda: PiecewiseStationaryBandit(segments=[(0, [0.2, 0.8], [0.1, 0.0])], horizon=5),
            r"segments\[0\] sds must be > 0",
        ),
        (lambda: PiecewiseStationaryBandit(segments=[(0, [0.2, 0.8])], horizon=5), "needs sds"),
        (
            lambda: PiecewiseStationaryBandit(
                segments=[(0, [0.2, 1.2])], horizon=5, arm="bernoulli"
            ),
            r"bernoulli arms must lie in \[0, 1\]",
        ),
        (
            lambda: PiecewiseStationaryBandit(
                segments=[(0, [-0.1, 0.5])], horizon=5, arm="bernoulli"
            ),
            r"bernoulli arms must lie in \[0, 1\]",
        ),
        (
            lambda: PiecewiseStationaryBandit(
                segments=[(0, [0.2, 0.8], [0.1, 0.1])], horizon=5, arm="bernoulli"
            ),
            "sds must be None",
        ),
        (
            lambda: PiecewiseStationaryBandit(
                segments=[(0, [0.2, 0.8])], horizon=5, arm="bernoulli", hi=0.5
            ),
            r"must contain \[0, 1\]",
        ),
        (lambda: PiecewiseStationaryBandit(arm="poisson"), "arm must be one of"),
        (lambda: PiecewiseStationaryBandit(segments=[], horizon=5), "at least one segment"),
        (lambda: DriftingBandit(sds=0.0), "sds must be > 0"),
        (lambda: DriftingBandit(sds=lambda t: 0.1 - 0.001 * t, horizon=200), "sds must be > 0"),
        (lambda: DriftingBandit(sds=[0.1, 0.2, 0.3]), "sds must be a scalar or have length 2"),
        (
            lambda: DriftingBandit(
                means=linear_drift([0.5, 0.5], [1.5, 0.5], 10),
                sds=None,
                arm="bernoulli",
                horizon=20,
            ),
            r"bernoulli arms must lie in \[0, 1\]",
        ),
        (
            lambda: DriftingBandit(means=lambda t: np.zeros((3, 2)), horizon=5),
            r"must return shape \(horizon, n_arms\)",
        ),
        (lambda: DriftingBandit(horizon=0), "horizon must be >= 1"),
        (lambda: DriftingBandit(lo=2.0, hi=1.0), "lo must be < hi"),
        (lambda: linear_drift(0.1, 0.2, t_end=5, t_start=5), "t_end must be > t_start"),
        (lambda: sinusoidal_drift(0.5, 0.1, period=0), "period must be finite and > 0"),
    ],
)
def test_bad_construction(factory: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        factory()


def test_bad_construction_through_make() -> None:
    with pytest.raises(ValueError, match="sds must be > 0"):
        gym.make("dpbandits/TwoArmedShift-v0", sds=(0.0, 0.1))
    with pytest.raises(ValueError, match=r"t_shift must lie in \(0, horizon\)"):
        gym.make_vec(
            "dpbandits/TwoArmedShift-v0",
            num_envs=2,
            vectorization_mode="vector_entry_point",
            t_shift=10,
            horizon=10,
        )


@pytest.mark.parametrize("action", [2, -1, np.int64(7)])
def test_env_action_outside_space(action: Any) -> None:
    env = TwoArmedShift()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must lie in the action space Discrete\(2\)"):
        env.step(action)
    with pytest.raises(TypeError, match="action must be an integer"):
        env.step(0.5)
    assert env.step(np.array(1))[4]["t"] == 0  # a 0-d integer array is a valid action


@pytest.mark.parametrize("actions", [[0, 2, 1], [0, -1, 1], np.array([5, 0, 0], dtype=np.uint8)])
def test_vector_env_action_outside_space(actions: Any) -> None:
    vec = TwoArmedShiftVectorEnv(num_envs=3)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must lie in the action space Discrete\(2\)"):
        vec.step(actions)
    with pytest.raises(ValueError, match=r"actions must have shape \(3,\)"):
        vec.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(TypeError, match="actions must be integers"):
        vec.step(np.zeros(3))
    assert vec.step([0, 1, 1])[4]["t"][0] == 0  # valid lists and other integer dtypes are fine


def test_expected_rewards_bad_step() -> None:
    env = TwoArmedShift(t_shift=2, horizon=5)
    with pytest.raises(ValueError, match=r"t must lie in \[0, horizon\)"):
        env.expected_rewards(5)
    with pytest.raises(ValueError, match=r"t must lie in \[0, horizon\)"):
        env.expected_rewards(-1)
    with pytest.raises(ValueError, match="reset_mask"):
        TwoArmedShiftVectorEnv(num_envs=2).reset(options={"reset_mask": np.array([True, False])})


# -- one signature per environment: the schedule function's -----------------------------------
CLASSES = [
    (importlib.import_module(ep.split(":")[0]), ep.split(":")[1], vec.split(":")[1])
    for ep, vec in envs.ENV_IDS.values()
]


@pytest.mark.parametrize(("module", "env_name", "vec_name"), CLASSES, ids=lambda x: str(x))
def test_constructors_take_the_schedule_arguments(
    module: Any, env_name: str, vec_name: str
) -> None:
    """help() and inspect show the full argument lists; the classes take exactly them."""
    env_cls, vec_cls = getattr(module, env_name), getattr(module, vec_name)
    build = inspect.signature(env_cls.build_schedule).parameters
    env_params = list(inspect.signature(env_cls).parameters.values())
    vec_params = list(inspect.signature(vec_cls).parameters.values())
    assert [p.name for p in env_params] == [*build, "render_mode"]
    assert [p.name for p in vec_params] == ["num_envs", *build, "render_mode"]
    assert [p.default for p in env_params[:-1]] == [p.default for p in build.values()]
    assert vec_params[0].default == 1 and env_params[-1].default is None
    # help() shows the real argument list, not (*args, **kwargs)
    rendered = pydoc.plain(pydoc.render_doc(vec_cls))
    assert f"{vec_name}(num_envs: 'int' = 1, {env_params[0].name}" in rendered
    env = env_cls()
    vec = vec_cls(3)
    assert vec.num_envs == 3 and vec.n_arms == env.n_arms and vec.horizon == env.horizon
    np.testing.assert_array_equal(vec.expected_reward_table(), env.expected_reward_table())
    with pytest.raises(TypeError, match=f"{env_name}\\(\\) got an unexpected keyword argument 'x'"):
        env_cls(x=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        vec_cls(2, x=1)
    # worded as Python words a written function's refusal (not inspect's own wording)
    n = len(env_params)
    least = sum(p.default is p.empty for p in env_params)
    span = str(n) if least == n else f"from {least} to {n}"
    too_many = f"^{env_name}\\(\\) takes {span} positional arguments but {n + 1} were given$"
    with pytest.raises(TypeError, match=too_many):
        env_cls(*[p.default for p in env_params], 0)


def test_positional_arguments_and_render_mode() -> None:
    """Positional calls keep working, ``render_mode`` included (it comes last)."""
    env = TwoArmedShift((0.3, 0.6), (0.1, 0.2), 30, 50, 0.0, 1.0, "ansi")
    assert env.render_mode == "ansi" and env.horizon == 50 and env.change_points == (30,)
    vec = TwoArmedShiftVectorEnv(2, (0.3, 0.6), (0.1, 0.2), 30, 50, 0.0, 1.0, "ansi")
    assert vec.render_mode == "ansi" and vec.num_envs == 2 and vec.change_points == (30,)
    np.testing.assert_array_equal(vec.means_table(), env.means_table())
    drift = DriftingBandit(lambda t: (0.4, 0.6), None, 200, "bernoulli", 0.0, 1.0, False)
    assert drift.arm == "bernoulli" and drift.horizon == 200


def test_schedule_attributes_are_read_only() -> None:
    env = TwoArmedShift(t_shift=3, horizon=5)
    for name in ("n_arms", "horizon", "change_points", "arm", "lo", "hi"):
        assert getattr(env, name) == getattr(env.schedule, name)
        assert getattr(type(env), name).__doc__  # help() documents each one
        with pytest.raises(AttributeError, match=f"{name} is read-only"):
            setattr(env, name, 1)


def test_subclass_with_its_own_init() -> None:
    """A user's subclass shows and takes its own arguments; the schedule's still build it."""

    class Flavoured(TwoArmedShift):
        def __init__(self, flavour: str = "mint", **kwargs: Any) -> None:
            self.flavour = flavour
            super().__init__(**kwargs)

    class FlavouredVector(TwoArmedShiftVectorEnv):
        env_class = Flavoured

    class Plain(TwoArmedShift):
        pass

    assert list(inspect.signature(Flavoured).parameters) == ["flavour", "kwargs"]
    assert list(inspect.signature(FlavouredVector).parameters)[:2] == ["num_envs", "flavour"]
    assert inspect.signature(Plain) == inspect.signature(TwoArmedShift)
    env = Flavoured("lime", t_shift=3, horizon=5, render_mode="ansi")
    assert (env.flavour, env.horizon, env.render_mode) == ("lime", 5, "ansi")
    vec = FlavouredVector(2, "lime", t_shift=3, horizon=5)
    assert vec.num_envs == 2 and vec.change_points == (3,)
