"""Baseline agents behave as documented on small stationary (and one shifting) problems.

Agents are driven directly with numpy rewards (no environment) except where the engine is the
point of the test. Thresholds come from the algorithms' theory (Auer et al.'s bound for UCB1)
or from the statistics of the sample (z < 5).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
from agents import (
    UCB,
    Agent,
    ArmStatistics,
    DiscountedUCB,
    Exp3,
    SlidingWindowUCB,
    ThompsonSampling,
)
from tests.stats import Z_MAX


def play(agent, means, sds, horizon, n_runs, seed, record=None):
    """Run ``agent`` on clipped-Gaussian arms; return the (T, R) actions."""
    rng = np.random.default_rng(seed)
    means = np.asarray(means, dtype=float)
    sds = np.asarray(sds, dtype=float)
    agent.reset(n_runs, means.size, horizon=horizon, rng=rng.integers(2**32))
    actions = np.empty((horizon, n_runs), dtype=np.int64)
    for t in range(horizon):
        a = agent.act()
        r = np.clip(means[a] + sds[a] * rng.standard_normal(n_runs), 0.0, 1.0)
        agent.update(a, r)
        actions[t] = a
        if record is not None:
            record(t, agent, a)
    return actions


BASELINES = [
    UCB(),
    UCB(log="t"),
    ThompsonSampling(),
    ThompsonSampling(model="bernoulli"),
    SlidingWindowUCB(window=50),
    DiscountedUCB(gamma=0.99),
    Exp3(gamma=0.1),
]


@pytest.mark.parametrize("agent", BASELINES, ids=repr)
def test_protocol_round_robin_shapes_and_range(agent):
    k, r, horizon = 3, 7, 60
    acts = play(agent, [0.2, 0.5, 0.8], [0.1, 0.1, 0.1], horizon, r, seed=1)
    # App. H: every agent first pulls each arm once, in order.
    assert np.array_equal(acts[:k], np.repeat(np.arange(k)[:, None], r, axis=1))
    assert acts.dtype == np.int64 and acts.min() >= 0 and acts.max() < k
    assert agent.t == horizon
    assert isinstance(repr(agent), str) and type(agent).__name__ in repr(agent)


def test_ucb1_bad_arm_pulls_grow_logarithmically():
    """UCB1: pulls of a bad arm grow like ln t (Auer et al. 2002, Thm. 1).

    Increments over [T, 4T] and [4T, 16T] are equal under logarithmic growth (c ln 4 each);
    growth like t^a would make their ratio 4^a (2 for sqrt t, 4 for linear). We accept
    [0.7, 1.4], which excludes every power a >= 0.25. The mean count must also respect Auer et
    al.'s bound 8 ln T / Delta^2 + 1 + pi^2/3 (up to 5 standard errors).
    """
    t1, r = 1000, 200
    counts = {}

    def record(t, agent, a):
        if t + 1 in (t1, 4 * t1, 16 * t1):
            counts[t + 1] = agent.stats.counts[:, 1].copy()

    play(UCB(log="t"), [0.8, 0.3], [0.1, 0.1], 16 * t1, r, seed=2, record=record)
    n1, n4, n16 = (counts[s] for s in (t1, 4 * t1, 16 * t1))
    inc1, inc2 = (n4 - n1).mean(), (n16 - n4).mean()
    assert inc1 > 0 and 0.7 < inc2 / inc1 < 1.4, (inc1, inc2)
    delta = 0.5
    bound = 8 * math.log(16 * t1) / delta**2 + 1 + math.pi**2 / 3
    assert n16.mean() - Z_MAX * n16.std(ddof=1) / math.sqrt(r) < bound
    # and the bad arm is not starved: at least the ln t order of 2 ln T / (Delta + 1)^2
    assert n16.mean() > 2 * math.log(16 * t1) / (delta + 1) ** 2


def test_ucb_index_matches_formula():
    agent = UCB(alpha=1.5)
    agent.reset(2, 2, horizon=100, rng=0)
    agent.update(np.array([0, 0]), np.array([0.2, 0.4]))
    agent.update(np.array([1, 1]), np.array([0.9, 0.1]))
    agent.update(np.array([1, 0]), np.array([0.5, 0.6]))
    expected = np.array(
        [[0.2 + 1.5 * math.sqrt(math.log(100) / 1), 0.7 + 1.5 * math.sqrt(math.log(100) / 2)],
         [0.5 + 1.5 * math.sqrt(math.log(100) / 2), 0.1 + 1.5 * math.sqrt(math.log(100) / 1)]]
    )  # fmt: skip
    np.testing.assert_allclose(agent.index(), expected, rtol=1e-13)
    assert np.array_equal(agent.act(), expected.argmax(axis=1))


@pytest.mark.parametrize("model", ["gaussian", "bernoulli"])
def test_thompson_concentrates_on_best_arm(model):
    """On a stationary problem TS plays the best arm almost always once it has learnt.

    A policy that has not learnt (uniform) plays it half the time; we require > 0.9 in the last
    third of 3000 steps, and more than in the first third.
    """
    acts = play(ThompsonSampling(model=model), [0.4, 0.7], [0.2, 0.2], 3000, 200, seed=3)
    early, late = (acts[:1000] == 1).mean(), (acts[2000:] == 1).mean()
    assert late > 0.9 and late > early, (early, late)


def test_thompson_gaussian_posterior_draw():
    """theta_a ~ N(S_a / (N_a + 1), 1 / (N_a + 1)) (Agrawal & Goyal): check the argmax rate."""
    r = 200_000
    agent = ThompsonSampling()
    agent.reset(r, 2, rng=4)
    agent.update(np.zeros(r, dtype=np.int64), np.full(r, 0.6))
    agent.update(np.ones(r, dtype=np.int64), np.full(r, 0.2))
    agent.update(np.zeros(r, dtype=np.int64), np.full(r, 0.6))
    # arm 0: N=2, S=1.2 -> N(0.4, 1/3); arm 1: N=1, S=0.2 -> N(0.1, 1/2)
    from scipy.stats import norm

    p1 = norm.cdf((0.1 - 0.4) / math.sqrt(1 / 3 + 1 / 2))
    a = agent.act()
    from tests.stats import assert_proportion_close

    assert_proportion_close(int((a == 1).sum()), r, p1)


def test_thompson_bernoulli_rejects_rewards_outside_unit_interval():
    agent = ThompsonSampling(model="bernoulli")
    agent.reset(2, 2, rng=0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        agent.update(np.array([0, 0]), np.array([0.5, 1.5]))


def _post_change_regret(agent_map, seed):
    from dpbandits.experiments import run

    env = {
        "id": "dpbandits/PiecewiseBandit-v0",
        "segments": [(0, (0.9, 0.5), (0.1, 0.1)), (2000, (0.4, 0.5), (0.1, 0.1))],
        "horizon": 4000,
    }
    res = run(env, agent_map, n_runs=40, seed=seed, progress=False, n_jobs=1, trace=False)
    return {lab: res.data[lab]["post_change_regret"] for lab in res.labels}


def test_sliding_window_and_discounted_ucb_recover_faster_than_ucb():
    """After the best arm degrades (0.9 -> 0.4 vs a constant 0.5), UCB keeps trusting its old
    mean for about 4x its pre-change pulls; SW-UCB and D-UCB forget. Window and discount are
    tuned to the 2000-step segments (Garivier & Moulines' tau ~ sqrt(T ln T))."""
    post = _post_change_regret(
        {"UCB": UCB(), "SW": SlidingWindowUCB(window=500), "D": DiscountedUCB(gamma=0.995)},
        seed=5,
    )
    for lab in ("SW", "D"):
        diff = post["UCB"] - post[lab]  # paired: common random numbers across agents
        z = diff.mean() / (diff.std(ddof=1) / math.sqrt(diff.size))
        assert diff.mean() > 0 and z > Z_MAX, (lab, diff.mean(), z)


def test_sliding_window_sums_equal_window_contents():
    agent = SlidingWindowUCB(window=7)
    seen = []
    play(agent, [0.3, 0.6], [0.2, 0.2], 40, 3, seed=6, record=lambda t, ag, a: seen.append(a))
    # recompute the window statistics from scratch from the buffer
    # (the buffers hold each step's arm; the flat index of (run r, arm a) is 2 r + a)
    arms_in, rew = agent.window_arms().T, agent.window_rewards().T  # (tau, R)
    idx = arms_in + 2 * np.arange(3)
    last = np.array(seen[-7:])  # the window is the last 7 steps' actions
    assert np.array_equal(np.sort(arms_in, axis=0), np.sort(last, axis=0))
    counts = np.bincount(idx.ravel(), minlength=6).reshape(3, 2)
    sums = np.bincount(idx.ravel(), weights=rew.ravel(), minlength=6).reshape(3, 2)
    assert np.array_equal(agent.stats.counts, counts)
    np.testing.assert_allclose(agent.stats.sums, sums, rtol=1e-12, atol=1e-12)
    assert counts.sum() == 3 * 7


def test_discounted_ucb_counts_are_discounted_sums():
    g = 0.9
    agent = DiscountedUCB(gamma=g)
    actions = []
    play(agent, [0.3, 0.6], [0.2, 0.2], 30, 2, seed=7, record=lambda t, ag, a: actions.append(a))
    acts = np.array(actions)  # (T, R)
    w = g ** np.arange(29, -1, -1)[:, None]
    expected = np.stack([(w * (acts == k)).sum(axis=0) for k in range(2)], axis=1)
    np.testing.assert_allclose(agent.stats.counts, expected, rtol=1e-12)


def test_exp3_probabilities_and_sampling():
    """p sums to 1 and stays >= gamma/K; the drawn actions follow p (z-test over runs)."""
    gamma, k, r = 0.2, 3, 4000
    agent = Exp3(gamma=gamma)
    z_stats = []

    def record(t, ag, a):
        if t >= k:
            p = ag.arm_field("prob")  # the distribution the action of this step was drawn from
            assert np.allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
            assert p.min() >= gamma / k - 1e-15
            if t % 25 == 0:
                for arm in range(k):
                    ind = (a == arm).astype(float)
                    var = (p[:, arm] * (1 - p[:, arm])).sum()
                    z_stats.append((ind - p[:, arm]).sum() / math.sqrt(var))

    play(agent, [0.2, 0.5, 0.8], [0.2, 0.2, 0.2], 300, r, seed=8, record=record)
    assert max(abs(z) for z in z_stats) < Z_MAX
    p = agent.probabilities()
    assert p[:, 2].mean() > p[:, 0].mean()  # it learns which arm pays


def test_exp3_weight_update():
    agent = Exp3(gamma=0.3)
    agent.reset(1, 2, rng=0)
    agent.update(np.array([0]), np.array([0.5]))  # initial round: ignored
    agent.update(np.array([1]), np.array([0.5]))
    assert np.all(agent.log_weights == 0)
    a = agent.act()
    p = agent.arm_field("prob")[0, a[0]]
    agent.update(a, np.array([0.8]))
    assert agent.log_weights[0, a[0]] == pytest.approx(0.3 * (0.8 / p) / 2, rel=1e-14)


def test_exp3_default_gamma_needs_horizon():
    agent = Exp3()
    with pytest.raises(ValueError, match="horizon"):
        agent.reset(2, 2, rng=0)
    agent.reset(2, 2, horizon=1000, rng=0)
    tuned = math.sqrt(2 * math.log(2) / ((math.e - 1) * 1000))
    assert agent.par[agent.PAR.gamma] == pytest.approx(tuned)


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: UCB(log="x"), "log"),
        (lambda: UCB(alpha=-1), "alpha"),
        (lambda: ThompsonSampling(model="poisson"), "model"),
        (lambda: SlidingWindowUCB(window=0), "window"),
        (lambda: DiscountedUCB(gamma=1.0), "gamma"),
        (lambda: Exp3(gamma=0.0), "gamma"),
    ],
)
def test_bad_parameters_raise_on_reset(factory, match):
    with pytest.raises(ValueError, match=match):
        factory().reset(2, 2, horizon=10, rng=0)


def test_ucb_paper_version_needs_horizon():
    with pytest.raises(ValueError, match="horizon"):
        UCB().reset(2, 2, rng=0)


def test_reset_validates_sizes():
    with pytest.raises(ValueError, match="n_runs"):
        UCB().reset(0, 2, horizon=10)
    with pytest.raises(TypeError, match="n_arms"):
        UCB().reset(2, 2.5, horizon=10)


def test_registry_make_available_register():
    assert {"ucb", "thompson", "sw_ucb", "d_ucb", "exp3", "private"} <= set(agents.available())
    assert isinstance(agents.make("UCB", log="t"), UCB)
    with pytest.raises(ValueError, match="available agents: .*ucb"):
        agents.make("no-such-agent")

    class Greedy(Agent):
        name = "greedy-test"

        def setup(self):
            self.stats = ArmStatistics(self.n_runs, self.n_arms)

        def choose(self):
            return self.stats.means().argmax(axis=1)

        def observe(self, actions, rewards):
            self.stats.update(actions, rewards)

    agents.register("greedy-test", Greedy)
    try:
        assert "greedy-test" in agents.available()
        acts = play(agents.make("greedy-test"), [0.1, 0.9], [0.01, 0.01], 20, 4, seed=9)
        assert np.all(acts[2:] == 1)
        with pytest.raises(ValueError, match="already registered"):
            agents.register("greedy-test", Greedy)
    finally:
        agents.unregister("greedy-test")
