"""The per-step hot paths compute exactly what the general paths compute.

``VectorEnv.pull`` (rewards only) against ``step``; ``update_flat`` of the private estimators
against their validating ``update``; Thompson sampling's block-drawn normals against one draw
per step; the private agent still validates what it did not choose itself.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.error import ResetNeeded

import agents
import dpbandits  # noqa: F401  (registers the environments)
from dpbandits.continual import PrivateMeans
from dpbandits.quantiles import WindowedSensitivity
from dpbandits.selectors import Selector

ENV = "dpbandits/TwoArmedShift-v0"


def _vec(n: int, horizon: int = 700):  # type: ignore[no-untyped-def]
    return gymnasium.make_vec(ENV, num_envs=n, t_shift=300, horizon=horizon,
                              vectorization_mode="vector_entry_point")  # fmt: skip


def test_pull_gives_the_rewards_of_step_and_mixes_with_it():
    rng = np.random.default_rng(0)
    a, b = _vec(5), _vec(5)
    a.reset(seed=11)
    b.reset(seed=11)
    for t in range(700):  # several reward-tape blocks
        act = rng.integers(0, 2, size=5)
        ra = a.step(act)[1]
        rb = b.pull(act) if t % 3 else b.step(act)[1]
        assert np.array_equal(ra, rb)
    with pytest.raises(ResetNeeded):
        b.pull(np.zeros(5, dtype=np.int64))
    b.reset(seed=11)
    a.step(np.zeros(5, dtype=np.int64))  # NEXT_STEP autoreset of a
    a.reset(seed=11)
    assert np.array_equal(a.step(np.ones(5, dtype=np.int64))[1], b.pull(np.ones(5, dtype=np.int64)))


def test_pull_needs_a_reset():
    env = _vec(2)
    with pytest.raises(ResetNeeded):
        env.pull(np.zeros(2, dtype=np.int64))


def test_update_flat_equals_update():
    r, k, steps = 7, 3, 400
    rng = np.random.default_rng(1)
    pm_a = PrivateMeans(r, k, 1.0, n_max=steps, rng=5, block=64)
    pm_b = PrivateMeans(r, k, 1.0, n_max=steps, rng=5, block=64)
    ws_a = WindowedSensitivity(r, k, 1.0, window=20, rng=6)
    ws_b = WindowedSensitivity(r, k, 1.0, window=20, rng=6)
    base = np.arange(r) * k
    for _ in range(steps):
        act = rng.integers(0, k, size=r)
        rew = rng.normal(0.5, 0.6, size=r)  # some outside [0, 1]: clipped by both paths
        pm_a.update(act, rew)
        ws_a.update(act, rew)
        x = np.clip(rew, 0.0, 1.0)
        pm_b.update_flat(base + act, x)
        ws_b.update_flat(base + act, x)
    assert np.array_equal(pm_a.means(), pm_b.means(copy=False))
    assert np.array_equal(pm_a.counts, pm_b.counts)
    assert np.array_equal(ws_a.values, ws_b.current)
    assert np.array_equal(ws_a.n_estimates, ws_b.n_estimates)
    assert ws_a.n_estimates.sum() > 0


def test_thompson_block_noise_is_one_draw_per_step():
    """Gaussian TS draws its normals in blocks; the actions equal one draw per step."""
    r, k, steps = 300, 2, 400  # 65536 // 600 = 109 steps per block: several refills
    agent = agents.ThompsonSampling()
    agent.reset(r, k, rng=3)
    ref = np.random.default_rng(3)
    counts, sums = np.zeros((r, k)), np.zeros((r, k))
    env_rng = np.random.default_rng(4)
    rows = np.arange(r)
    for t in range(steps):
        a = agent.act()
        if t >= k:
            c1 = counts + 1.0
            theta = sums / c1 + ref.standard_normal((r, k)) / np.sqrt(c1)
            assert np.array_equal(a, np.argmax(theta, axis=1))
        rew = env_rng.random(r)
        counts[rows, a] += 1.0
        sums[rows, a] += rew
        agent.update(a, rew)


def test_private_agent_validates_foreign_actions_and_nan_rewards():
    agent = agents.PrivateAgent("rnm")
    agent.reset(4, 2, horizon=100, rng=0)
    ok = np.zeros(4)
    with pytest.raises(ValueError, match="actions"):
        agent.update(np.array([0, 1, 2, 0]), ok)
    with pytest.raises(ValueError, match="NaN"):
        agent.update(np.array([0, 1, 1, 0]), np.array([0.1, np.nan, 0.2, 0.3]))
    with pytest.raises(ValueError, match="shape"):
        agent.update(np.array([0, 1, 1, 0]), np.zeros(3))
    for _ in range(5):  # its own actions take the fast path
        agent.update(agent.act(), np.full(4, 0.5))
    assert agent.private_means().shape == (4, 2)


class _Recorder(Selector):
    """Plays arm 0 and records the scores it was given."""

    name = "recorder"

    def __init__(self, epsilon: float = 1.0) -> None:
        super().__init__(epsilon)
        self.seen: list[np.ndarray] = []

    def select_batch(self, q, d, rng):  # type: ignore[no-untyped-def]
        self.seen.append(q.copy())
        return np.zeros(q.shape[0], dtype=np.int64)


@pytest.mark.parametrize("clip", [False, True])
def test_private_agent_selects_on_the_current_means(clip: bool):
    """The selector sees the released means of this step (clipped when asked), not stale ones."""
    rec = _Recorder()
    agent = agents.PrivateAgent(rec, epsilon_means=0.05, clip_means=clip)
    agent.reset(3, 2, horizon=50, rng=1)
    for _ in range(20):
        a = agent.act()
        if agent.t >= 2:
            assert np.array_equal(rec.seen[-1], agent.private_means())
        agent.update(a, np.full(3, 0.5))
    spread = np.concatenate(rec.seen)
    assert (spread.min() >= 0.0 and spread.max() <= 1.0) == clip  # eps 0.05: noise leaves [0, 1]


class _NegativeAgent(agents.Agent):
    """Plays arm -1 (invalid) from step ``when`` on."""

    def __init__(self, when: int = 1500) -> None:
        self.when = when

    def choose(self):  # type: ignore[no-untyped-def]
        bad = self.t >= self.when
        return np.full(self.n_runs, -1 if bad else 0, dtype=np.int64)


@pytest.mark.parametrize(("when", "value"), [(1500, -1), (2, -1), (1995, -1)])
def test_engine_reports_negative_actions_with_their_step(when: int, value: int):
    from dpbandits.experiments import run

    with pytest.raises(ValueError, match=rf"invalid actions at step {when}: \[{value}"):
        run({"id": ENV, "t_shift": 1000, "horizon": 2000}, {"neg": _NegativeAgent(when)},
            n_runs=3, progress=False, n_jobs=1)  # fmt: skip


def test_pull_raises_index_error_outside_the_tape():
    env = _vec(3)
    env.reset(seed=0)
    for bad in (2, 7, -3):
        with pytest.raises(IndexError):
            env.pull(np.full(3, bad, dtype=np.int64))


def test_thompson_bernoulli_gamma_pairs_are_generator_beta():
    """Beta TS draws Beta(a, b) as interleaved gamma pairs: the same draws as Generator.beta."""
    r, k, steps = 50, 3, 300
    agent = agents.ThompsonSampling(model="bernoulli")
    agent.reset(r, k, rng=8)
    ref = np.random.default_rng(8)
    succ, counts = np.zeros((r, k)), np.zeros((r, k))
    env_rng = np.random.default_rng(9)
    rows = np.arange(r)
    for t in range(steps):
        a = agent.act()
        if t >= k:
            theta = ref.beta(1.0 + succ, counts + 1.0 - succ)
            assert np.array_equal(a, np.argmax(theta, axis=1))
        rew = env_rng.random(r)
        b = ref.random(r) < rew  # the agent's binarisation draw, same generator
        counts[rows, a] += 1.0
        succ[rows, a] += b
        agent.update(a, rew)


def test_private_means_default_block():
    """2048 capped by n_max for K <= 2 (the former default); smaller with many arms."""
    assert PrivateMeans(3, 2, 1.0, n_max=50_000).block == 2048
    assert PrivateMeans(3, 2, 1.0, n_max=1000).block == 1024
    assert PrivateMeans(3, 2, 1.0, n_max=1024).block == 2048
    assert PrivateMeans(3, 1, 1.0, n_max=20).block == 32
    assert PrivateMeans(3, 2, 1.0).block == 2048
    assert PrivateMeans(3, 1000, 1.0, n_max=10_000).block == 64
    assert PrivateMeans(3, 100, 1.0, n_max=50_000).block == 1024
    assert PrivateMeans(3, 1000, 1.0, n_max=10_000, block=512).block == 512


def test_many_arms_block_change_keeps_the_regret_distribution():
    """The one stream change (the noise block of PrivateMeans for K > ~n_max / 1024): the
    regret of a private agent with the old block (2048 capped by n_max) and with the new one,
    on independent seeds, are two samples of one law (two-sample KS test, p > 1e-6)."""
    from scipy.stats import ks_2samp

    from dpbandits.experiments import run

    k, horizon, runs = 64, 400, 300
    assert PrivateMeans(1, k, 1.0, n_max=horizon).block == 64  # the new block here
    env = {"id": "dpbandits/PiecewiseBandit-v0", "horizon": horizon,
           "segments": [(0, np.linspace(0.2, 0.8, k).tolist(), [0.2] * k)]}  # fmt: skip

    def old_means(r: int, kk: int, rng: np.random.Generator) -> PrivateMeans:
        return PrivateMeans(r, kk, 1.0, n_max=horizon, rng=rng, block=2048)  # capped: 512

    def regret(agent: agents.PrivateAgent, seed: int) -> np.ndarray:
        res = run(env, {"a": agent}, n_runs=runs, seed=seed, progress=False, trace=False,
                  n_jobs=1, chunk_size=runs)  # fmt: skip
        return res.data["a"]["total_regret"]

    new = regret(agents.PrivateAgent("rnm"), 1)
    old = regret(agents.PrivateAgent("rnm", means=old_means), 2)
    assert ks_2samp(new, old).pvalue > 1e-6
    # and the test sees a real difference: a much smaller eps_M (0.02 instead of 1)
    worse = regret(agents.PrivateAgent("rnm", epsilon_means=0.02), 3)
    assert ks_2samp(new, worse).pvalue < 1e-6
