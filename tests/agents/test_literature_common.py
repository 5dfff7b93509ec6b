"""What every agent of agents.klucb, agents.adap, agents.dp_kl and agents.dp_ts must do: (b) its
block path gives the step path's results; it is registered, played by blocks in the engine,
and reports its eps there; (d) on stationary Bernoulli bandits at eps = 1 its regret over
``[T/2, T)`` is far below uniform play's; (e) each Laplace release has the scale the papers
give; (f) bad parameters and rewards the algorithm is not defined for raise ``ValueError``.
The papers' algorithms themselves are checked in test_literature_kl/adap/dp_ts.py.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import agents
from dpbandits.cli import main as cli_main
from dpbandits.experiments import run
from tests.agents.test_compiled import ENVS, play_by_steps
from tests.agents.test_literature_dp_ucb import bernoulli_rows, play_rows
from tests.stats import P_MIN, assert_mean_close

PRIVATE = ("adap_ucb", "adap_klucb", "dp_klucb", "dp_imed", "dp_ts")
ALL = ("klucb",) + PRIVATE
BERNOULLI_ONLY = ("dp_klucb", "dp_imed")
CLASSES = {"klucb": "KLUCB", "adap_ucb": "AdaPUCB", "adap_klucb": "AdaPKLUCB",
           "dp_klucb": "DPKLUCB", "dp_imed": "DPIMED", "dp_ts": "LazyDPTS"}  # fmt: skip


def make(name: str, eps: float = 1.0, **params):
    return agents.make(name, **params) if name == "klucb" else agents.make(name, epsilon=eps,
                                                                            **params)  # fmt: skip


# -- (b) the block path, the engine, the registry -------------------------------------------------
@pytest.mark.parametrize(
    ("name", "env"),
    # the Gaussian arms of the shift environment only for the agents defined for them
    [(name, "bernoulli") for name in ALL]
    + [(name, "shift") for name in ALL if name not in BERNOULLI_ONLY],
)
@pytest.mark.parametrize("R", [1, 4])
def test_play_is_identical_to_the_step_protocol(name, env, R):
    env_id, kw = ENVS[env]
    by_step = play_by_steps(make(name, 0.8), env_id, kw, R, 11, None)
    for blocks, between in ((1, 0), (7, 0), (1000, 0), (1, 1), (7, 3), (50, 20)):
        by_block = play_by_steps(make(name, 0.8), env_id, kw, R, 11, blocks, between)
        np.testing.assert_array_equal(by_block[0], by_step[0])
        np.testing.assert_array_equal(by_block[1], by_step[1])


def test_registered_played_by_blocks_and_reporting_the_whole_runs_eps(capsys):
    env = gym.make("dpbandits/KArmedBernoulli-v0", means=[0.2, 0.8, 0.5], horizon=700)
    ags = {name: make(name, 0.7) for name in ALL}
    for name, agent in ags.items():
        assert type(agent).__name__ == CLASSES[name]
        assert agents.describe(name).cls is getattr(agents, CLASSES[name])
        agent.reset(2, 3, rng=0)  # anytime: no horizon needed
        assert agent.block_player() is not None
    res = run(env, ags, n_runs=6, seed=1, n_jobs=1, progress=False)
    assert res.privacy["klucb"] is None  # not private
    for name in PRIVATE:
        report = res.privacy[name]
        assert report["epsilon_total"] == 0.7 and report["means"]["epsilon"] == 0.7
        assert report["model"] == "global" and not report["counts_public"]
        assert report["total_releases"] >= 3 and len(report["releases_per_arm"]) == 3
        assert "eps = 0.7 for the whole run" in report["text"]
    assert cli_main(["list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in ALL)


# -- (d) regret ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize(
    ("means", "T"),
    [([0.35, 0.65], 2**16), ([0.75, 0.625, 0.5, 0.375, 0.25], 2**17)],
    ids=["K2-gap0.3", "K5"],
)
def test_regret_over_the_second_half_is_far_below_uniform_play(name, means, T):
    """Uniform play's regret over ``[T/2, T)`` is ``U = T/2 mean(Delta_a)`` per run (4915 and
    16384 here). An agent with logarithmic regret spends ``R(T) - R(T/2) = C ln 2`` there
    (``C`` the constant in front of ``ln T``), a vanishing fraction of ``U``; "far below" is
    asserted as: the mean over 20 runs plus 5 standard errors is below ``U / 10``. T is chosen
    so that the slowest of these agents (AdaP's doubling episodes, ``alpha = 3.1``) is past
    its first episodes; eps = 1. The closest agent is AdaP-UCB: mean + 5 SE = 115 (K = 2) and
    391 (K = 5) against ``U / 10`` = 492 and 1638 (with 40 runs: 52 and 321); an agent whose
    regret grows linearly spends about ``U`` there, ten times the bound, whatever the runs."""
    means = np.asarray(means)
    R = 20
    agent = make(name, 1.0)
    agent.reset(R, means.size, rng=0)
    rows = bernoulli_rows(np.random.default_rng(1), means, T, R)
    second = (means.max() - means)[play_rows(agent, rows, R)[T // 2 :]].sum(axis=0)
    uniform = T / 2 * (means.max() - means).mean()
    se = max(second.std(ddof=1), 1.0) / math.sqrt(R)  # (a floor: no regret at all has sd 0)
    assert second.mean() + 5 * se < uniform / 10, (second.mean(), se, uniform)


# -- (e) the noise of the releases ---------------------------------------------------------------
def laplace_draws_of_first_releases(name, eps, R):
    """Two arms pulled once each with reward 0: every first release is its noise alone, ``Z /
    eps`` for a standard Laplace ``Z`` (a sum of one reward). Returns the ``2 R`` values of
    ``eps x`` (``x`` the released private mean)."""
    agent = make(name, eps)
    agent.reset(R, 2, rng=3)
    for _ in range(2):
        agent.update(agent.act(), np.zeros(R))
    return agent.private_means().ravel() * eps


def assert_standard_laplace(z):
    """Mean 0 and ``E Z^2 = 2`` (|z| < 5; ``Var Z^2 = 24 - 4``) and a KS test against the
    standard Laplace law."""
    assert_mean_close(z, 0.0, scale=math.sqrt(2.0))
    assert_mean_close(z**2, 2.0, scale=math.sqrt(20.0))
    assert stats.kstest(z, stats.laplace.cdf).pvalue > P_MIN


@pytest.mark.parametrize("name", PRIVATE)
def test_first_release_is_the_reward_plus_laplace_of_scale_one_over_eps(name):
    assert_standard_laplace(laplace_draws_of_first_releases(name, 0.5, 20_000))


@pytest.mark.parametrize("name", ["adap_ucb", "adap_klucb"])
def test_an_episodes_release_has_scale_one_over_eps_n(name):
    """One arm (so that no choice depends on the noise: with several, an arm whose release
    came out high is chosen again and its release replaced, and the releases standing at a
    given step are a biased sample) and rewards 0: episodes of 1, 1, 2, 4, 8 and 16 pulls; the
    last one's release is ``Lap(1 / eps)`` on its sum, i.e. ``Lap(1 / (16 eps))`` on its
    mean."""
    eps, R = 0.8, 20_000
    agent = make(name, eps)
    agent.reset(R, 1, rng=4)
    for _ in range(32):
        agent.update(agent.act(), np.zeros(R))
    assert (agent.arm_field("last_n")[:, 0] == 16).all()
    assert (agent.arm_field("releases") == 6).all()
    assert_standard_laplace(agent.private_means()[:, 0] * 16 * eps)


@pytest.mark.parametrize("name", ["dp_klucb", "dp_imed"])
def test_a_phases_release_adds_one_laplace_to_the_private_sum(name):
    """One arm (no choice depends on the noise) and rewards 0, ``alpha = 1.5``: phases end at
    1, 2, 3, 5, 8, 12, 18, 27 and 41 pulls; after 60 steps the private sum is the sum of 9
    independent ``Lap(1 / eps)``, variance ``18 / eps^2``."""
    eps, R = 0.8, 20_000
    agent = make(name, eps, alpha=1.5)
    agent.reset(R, 1, rng=5)
    for _ in range(60):
        agent.update(agent.act(), np.zeros(R))
    assert (agent.arm_field("releases") == 9).all()
    z = agent.arm_field("private_sum")[:, 0] * eps / 3.0  # variance 2
    assert_mean_close(z, 0.0, scale=math.sqrt(2.0))
    assert_mean_close(z**2, 2.0)


# -- (f) bad parameters and rewards ---------------------------------------------------------------
@pytest.mark.parametrize("name", PRIVATE)
@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf"), 1e-305])
def test_bad_epsilon_is_refused_before_any_work(name, eps):
    with pytest.raises(ValueError, match="epsilon"):
        agents.make(name, epsilon=eps).reset(2, 2, rng=0)


@pytest.mark.parametrize(
    ("name", "params", "error"),
    [("adap_ucb", {"alpha": 0.0}, ValueError), ("adap_klucb", {"alpha": -3.0}, ValueError),
     ("dp_klucb", {"alpha": 1.0}, ValueError), ("dp_imed", {"alpha": 0.5}, ValueError),
     ("klucb", {"c": -1.0}, ValueError), ("dp_ts", {"epsilon": "1"}, TypeError),
     ("adap_ucb", {"alpha": None}, TypeError)],
)  # fmt: skip
def test_bad_parameters_are_refused(name, params, error):
    param = next(iter(params))
    with pytest.raises(error, match=param):
        agents.make(name, **params).reset(2, 2, rng=0)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("steps", [True, False])
def test_rewards_the_algorithm_is_not_defined_for_are_refused_at_once(name, steps):
    """A reward outside [0, 1] -- or, for the Bernoulli-only DP-KLUCB and DP-IMED, any reward
    other than 0 and 1 -- raises a one-line ``ValueError`` at the step that brings it, before
    anything is learnt from it: the steps before are played."""
    means = np.array([0.3, 0.7])
    agent = make(name)
    agent.reset(2, 2, rng=0)
    rows = bernoulli_rows(np.random.default_rng(0), means, 50, 2)
    bad = 0.5 if name in BERNOULLI_ONLY else 1.5
    rows[30, :] = bad
    match = r"Bernoulli bandits and needs rewards in \{0, 1\}, got 0\.5" if bad == 0.5 else (
        r"rewards in \[0, 1\]")  # fmt: skip
    with pytest.raises(ValueError, match=match) as info:
        play_rows(agent, rows, 2, steps=steps, block=20)
    assert "\n" not in str(info.value)
    assert agent.t == 30
    rows[30, :] = rows[31, :]  # the same agent goes on with valid rewards
    play_rows(agent, rows[30:], 2, steps=steps)
    assert agent.t == 50


@pytest.mark.parametrize("name", BERNOULLI_ONLY)
def test_a_non_bernoulli_reward_in_the_initial_round_is_refused(name):
    agent = make(name)
    agent.reset(3, 2, rng=0)
    with pytest.raises(ValueError, match="Bernoulli"):
        agent.update(agent.act(), np.array([1.0, 0.25, 0.0]))
    assert agent.t == 0
