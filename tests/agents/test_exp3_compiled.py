"""Exp3's compiled step gives the numbers of the numpy code it replaced, to the last bit.

The numpy reference below is Exp3's step as it was written before it was compiled (kept only
here): ``exp``, the row ``max``, numpy's pairwise ``sum``, ``cumsum`` and one ``rng.random(R)``
per step. The compiled agent must reproduce its draws and weights exactly, step by step and
by blocks (``Exp3.play``), for arm counts on both sides of numpy's summation thresholds
(8 and 128 terms).

The one exception is the exponential itself: the reference takes the C library's ``exp``
(``math.exp``, element by element), which is what the compiled code calls. ``numpy.exp`` is
that same function on most processors, but on processors with AVX-512 numpy runs its own
vectorised ``exp``, which differs from the C library's in the last bit for a few inputs in a
thousand -- a property of numpy on that hardware, not of the agent.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
from dpbandits.core.arms import action_dtype
from dpbandits.core.jit import pairwise_sum

# the C library's exp (see the module docstring), with numpy's output shape and dtype
c_exp = np.vectorize(math.exp, otypes=[np.float64])


class NumpyExp3(agents.Exp3):
    """Exp3's step in numpy (the library's code before compilation): the reference."""

    @property
    def _gamma(self):
        return self.par[agents.exp3.PAR.gamma]

    def probabilities(self):
        w = c_exp(self.log_weights - self.log_weights.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        return (1.0 - self._gamma) * w + self._gamma / self.n_arms

    def choose(self):
        p = self.probabilities()
        self._probs = p
        cdf = np.cumsum(p, axis=1)
        u = self.rng.random(self.n_runs) * cdf[:, -1]
        return np.minimum((cdf <= u[:, None]).sum(axis=1), self.n_arms - 1)

    def observe(self, actions, rewards):
        if self.t < self.n_arms:
            return
        r = np.asarray(rewards, dtype=float)
        if not (r.min() >= 0.0 and r.max() <= 1.0):
            raise ValueError(f"Exp3 needs rewards in [0, 1], got min {r.min()}, max {r.max()}")
        rows = np.arange(self.n_runs)
        p_taken = self._probs[rows, actions]
        self.log_weights[rows, actions] += self._gamma * (r / p_taken) / self.n_arms


def bits(x):
    return np.asarray(x, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("n", list(range(1, 301)) + [1000, 4099, 100_003])
def test_pairwise_sum_is_numpys_sum_bit_for_bit(n):
    rng = np.random.default_rng(n)
    # magnitudes over ~30 orders and both signs: any change of the order of additions shows
    x = np.exp(5.0 * rng.standard_normal(n)) * rng.choice([-1.0, 1.0], n)
    assert bits(0.0 + pairwise_sum(x, 0, n)) == bits(np.add.reduce(x))
    m = np.exp(rng.standard_normal((3, n)))  # rows of a matrix, as Exp3 sums them
    for r in range(3):
        assert bits(0.0 + pairwise_sum(m[r], 0, n)) == bits(m.sum(axis=1)[r])
    # an inner stretch of the array: the same sum as numpy's of the slice
    if n > 2:
        assert bits(0.0 + pairwise_sum(x, 1, n - 2)) == bits(np.add.reduce(x[1:-1]))


def test_pairwise_sum_keeps_negative_zero():
    for n in (1, 5, 9, 200):
        assert bits(pairwise_sum(np.full(n, -0.0), 0, n)) == bits(-0.0)


def tape(T, R, K, seed):
    """A reward tape in the layout of ``BanditVectorEnv.reward_rows``: ``(T, K * R)``."""
    rng = np.random.default_rng(seed)
    means = np.linspace(0.1, 0.9, K)
    return np.clip(means.repeat(R) + 0.3 * rng.standard_normal((T, K * R)), 0.0, 1.0)


def by_steps(agent, rows, R, K, seed):
    agent.reset(R, K, horizon=rows.shape[0], rng=np.random.default_rng(seed))
    actions = np.empty((rows.shape[0], R), dtype=np.int64)
    for t, row in enumerate(rows):
        a = agent.act()
        actions[t] = a
        agent.update(a, row[a * R + np.arange(R)])
    return actions


@pytest.mark.parametrize("K", [1, 2, 5, 10, 40, 130])
@pytest.mark.parametrize("R", [1, 7])
@pytest.mark.parametrize("gamma", [0.07, None, 1.0])
def test_compiled_exp3_is_the_numpy_step_bit_for_bit(K, R, gamma):
    T = 400
    rows = tape(T, R, K, seed=K * 10 + R)
    ref = NumpyExp3(gamma=gamma)
    expected = by_steps(ref, rows, R, K, seed=3)
    # step by step through choose/observe
    new = agents.Exp3(gamma=gamma)
    np.testing.assert_array_equal(by_steps(new, rows, R, K, seed=3), expected)
    assert np.array_equal(bits(new.log_weights), bits(ref.log_weights))
    assert np.array_equal(bits(new.probabilities()), bits(ref.probabilities()))
    assert np.array_equal(bits(new.arm_field("prob")), bits(ref._probs))
    # by blocks through play
    blk = agents.Exp3(gamma=gamma)
    blk.reset(R, K, horizon=T, rng=np.random.default_rng(3))
    actions, rewards = np.empty((T, R), dtype=action_dtype(K)), np.empty((T, R))
    for t0 in range(0, T, 97):
        m = min(97, T - t0)
        blk.play(rows[t0 : t0 + m], actions[t0 : t0 + m], rewards[t0 : t0 + m])
    assert blk.t == T
    np.testing.assert_array_equal(actions, expected)
    columns = actions.astype(np.int64) * R + np.arange(R)  # int8/int16 actions: no overflow
    np.testing.assert_array_equal(rewards, np.take_along_axis(rows, columns, 1))
    assert np.array_equal(bits(blk.log_weights), bits(ref.log_weights))
    # and the next draws agree too (same generator state)
    assert np.array_equal(blk.choose(), ref.choose())


def test_rewards_outside_the_unit_interval_raise_at_the_first_such_step():
    K, R, T = 3, 4, 50
    rows = tape(T, R, K, seed=1)
    rows[20] = -0.25  # step 20: every arm out of range
    ref = NumpyExp3(gamma=0.2)
    with pytest.raises(ValueError, match=r"Exp3 needs rewards in \[0, 1\], got min -0.25"):
        by_steps(ref, rows, R, K, seed=4)
    assert ref.t == 20
    blk = agents.Exp3(gamma=0.2)
    blk.reset(R, K, horizon=T, rng=np.random.default_rng(4))
    actions, rewards = np.empty((T, R), dtype=action_dtype(K)), np.empty((T, R))
    with pytest.raises(ValueError, match=r"Exp3 needs rewards in \[0, 1\], got min -0.25"):
        blk.play(rows, actions, rewards)
    assert blk.t == 20  # the steps before the bad one were played and learnt from
    assert np.array_equal(bits(blk.log_weights), bits(ref.log_weights))
    step = agents.Exp3(gamma=0.2)
    with pytest.raises(ValueError, match=r"needs rewards in \[0, 1\]"):
        by_steps(step, rows, R, K, seed=4)
    assert step.t == 20
    # the initial round teaches Exp3 nothing, but its rewards are checked as every step's
    # (the skeleton's rule, agents.skeleton): a reward outside [0, 1] there is refused too
    rows = tape(T, R, K, seed=1)
    rows[1, 1 * R + 2] = 1.5
    for by_blocks in (True, False):
        agent = agents.Exp3(gamma=0.2)
        with pytest.raises(ValueError, match=r"Exp3 needs rewards in \[0, 1\], got min"):
            if by_blocks:
                agent.reset(R, K, horizon=T, rng=np.random.default_rng(4))
                agent.play(rows, actions, rewards)
            else:
                by_steps(agent, rows, R, K, seed=4)
        assert agent.t == 1
        assert np.all(agent.log_weights == 0.0)


def test_exp3_in_blocks_refuses_an_unbounded_environment():
    env = gym.make("dpbandits/KArmedGaussian-v0", means=[0.5, 0.6], sds=2.0, lo=-5.0, hi=5.0,
                   horizon=200)  # fmt: skip
    from dpbandits.experiments import run

    assert agents.Exp3(gamma=0.1).block_player() is not None
    with pytest.raises(ValueError, match=r"Exp3 needs rewards in \[0, 1\]"):
        run(env, {"e": agents.Exp3(gamma=0.1)}, n_runs=3, seed=0, n_jobs=1, progress=False)
