"""The eps-DP agents for piecewise-stationary bandits (agents.private_shift, agents.private_change):
(a) the releases -- each reward in at most one, exactly one unless a restart or the end of the
run cut its batch, counted against an instrumented replay; the Laplace scale of a release; (b)
the change test's deviation bound, its minimum cap and its power; (c) the block path, the
registry, the engine and the privacy report; (d) bad input; (e) the end-to-end privacy audit
(slow)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import agents
from agents import private_shift as ps
from agents.private_change import detection_level, laplace_deviation, minimum_cap, split_threshold
from dpbandits.cli import main as cli_main
from dpbandits.testing.agent_kit import check_agent
from tests.agents.test_compiled import ENVS, play_by_steps
from tests.agents.test_literature_common import assert_standard_laplace
from tests.agents.test_literature_dp_ucb import bernoulli_rows, play_rows
from tests.stats import P_MIN

CD = ("cd_adap_ucb", "cd_adap_klucb", "cd_dp_klucb", "cd_dp_imed")
SW = ("sw_adap_ucb", "sw_adap_klucb", "sw_dp_klucb", "sw_dp_imed")
ALL = CD + SW
BERNOULLI_ONLY = ("cd_dp_klucb", "cd_dp_imed", "sw_dp_klucb", "sw_dp_imed")


# -- (a) the releases ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_each_reward_is_in_at_most_one_release_and_batches_follow_the_actions(name):
    """An instrumented replay: the agent is stepped by ``act``/``update`` on Bernoulli rewards with
    a change (so that CD agents restart), and after every step its state is compared with a
    model that keeps each arm's unreleased rewards. Every release (``RELEASES`` grows by one)
    must cover exactly the arm's rewards since its previous release or restart, and with eps =
    1e9 (noise ~1e-9) release their sum; a restart must drop every open batch; at the end the
    released, dropped and open rewards add up to ``T`` and each batch's length is ``min(N_a,
    cap)`` of the arm's pulls since the restart."""
    R, K, T, cap = 3, 3, 3000, 8
    agent = agents.make(name, epsilon=1e9, cap=cap, forced=0.05)
    agent.reset(R, K, rng=0)
    rng = np.random.default_rng(1)
    means = np.array([0.9, 0.5, 0.1])
    pending = [[[] for _ in range(K)] for _ in range(R)]
    pulls = np.zeros((R, K))
    released = dropped = 0
    restarts = 0
    for t in range(T):
        if t == T // 2:
            means = means[::-1]
        a = agent.act()
        x = (rng.random(R) < means[a]).astype(float)
        before = agent.arms.copy()
        before_restarts = agent.runs[:, ps.RUN.restarts].copy()
        agent.update(a, x)
        for r in range(R):
            pending[r][a[r]].append(x[r])
            pulls[r, a[r]] += 1
            restarted = agent.runs[r, ps.RUN.restarts] > before_restarts[r]
            new = agent.arms[r, a[r], ps.ARM.releases] - before[r, a[r], ps.ARM.releases]
            assert new in (0, 1)
            if new:
                batch = pending[r][a[r]]
                end = before[r, a[r], ps.ARM.b_end]
                assert len(batch) == end  # the length set in advance
                assert end == min(max(pulls[r, a[r]] - len(batch), 1), cap)
                if not restarted:  # the release is the newest entry of the window
                    s, n = agent.releases(r, a[r])[-1]
                    assert n == len(batch) and abs(s - sum(batch)) < 1e-6
                released += len(batch)
                pending[r][a[r]] = []
            if restarted:
                restarts += 1
                for b in range(K):
                    dropped += len(pending[r][b])
                    pending[r][b] = []
                pulls[r] = 0
                assert (agent.arms[r, :, ps.ARM.b_len] == 0).all()
            for b in range(K):
                assert agent.arms[r, b, ps.ARM.b_len] == len(pending[r][b])
    still_open = sum(len(p) for run in pending for p in run)
    assert released + dropped + still_open == R * T
    assert released > 0.9 * R * T
    if name in CD:
        assert restarts >= R  # the change at T/2 is found in every run


@pytest.mark.parametrize("name", ["cd_adap_ucb", "cd_dp_imed", "sw_adap_klucb"])
def test_a_late_release_is_its_sum_plus_laplace_of_scale_one_over_eps(name):
    """One arm and rewards 0 (no choice, and no test, depends on the noise until a restart):
    batches of 1, 1, 2, 4, 8, 8, ... pulls with ``cap = 8`` (releases after 1, 2, 4, 8, 16,
    24 and 32 pulls); after 39 pulls the newest release is the 7th, of 8 rewards, and is
    ``Lap(1 / eps)`` alone. Runs that restarted (a false alarm on pure noise) are left out --
    they are rare, and which runs restart does not depend on the newest release of the
    others."""
    eps, R = 0.7, 20_000
    agent = agents.make(name, epsilon=eps, cap=8)
    agent.reset(R, 1, rng=4)
    for _ in range(39):
        agent.update(agent.act(), np.zeros(R))
    kept = agent.restarts == 0
    assert kept.mean() > 0.9
    newest = np.array([agent.releases(r, 0)[-1] for r in np.flatnonzero(kept)])
    assert (newest[:, 1] == 8).all() and (agent.arms[kept, 0, ps.ARM.releases] == 7).all()
    assert_standard_laplace(newest[:, 0] * eps)


@pytest.mark.parametrize("name", ["cd_adap_klucb", "sw_dp_imed"])
def test_the_first_release_is_the_reward_plus_laplace_of_scale_one_over_eps(name):
    eps, R = 0.5, 20_000
    agent = agents.make(name, epsilon=eps)
    agent.reset(R, 2, rng=3)
    for _ in range(2):
        agent.update(agent.act(), np.zeros(R))
    assert_standard_laplace(agent.private_means().ravel() * eps)


# -- (b) the change test ------------------------------------------------------------------------
@pytest.mark.parametrize(("weights", "level"), [([1.0], 2.0), ([0.2] * 25, 3.0),
                                                ([0.5, 0.5, -0.1, -0.1, -0.1], 2.5)])  # fmt: skip
def test_the_laplace_deviation_is_exceeded_with_probability_at_most_e_to_minus_level(
    weights, level
):
    """``P(sum w_i Z_i > x) <= e^-level`` for the ``x`` of :func:`laplace_deviation`: the
    exceedances of 200 000 draws against Binomial(n, e^-level), one-sided, p > 1e-6."""
    w = np.asarray(weights)
    n = 200_000
    z = np.random.default_rng(0).laplace(size=(n, w.size)) @ w
    x = laplace_deviation(4.0 * float((w**2).sum()), float(np.abs(w).max()), level)
    hits = int((z > x).sum())
    assert stats.binomtest(hits, n, math.exp(-level), alternative="greater").pvalue > P_MIN


def test_the_minimum_cap_is_where_a_full_jump_becomes_detectable():
    for eps, delta, window in ((1.0, 0.01, 64), (0.1, 0.01, 64), (0.5, 0.1, 8), (10.0, 0.01, 2)):
        cap = minimum_cap(eps, delta, window)
        level = detection_level(float(window), delta)
        h = window // 2

        def threshold(c, h=h, level=level, eps=eps, window=window):
            return split_threshold(h * c, h, (window - h) * c, window - h, 1 / eps, level)

        assert threshold(cap) < 1.0
        assert cap == 1 or threshold(cap - 1) >= 1.0
    assert minimum_cap(0.1, 0.01, 64) > minimum_cap(1.0, 0.01, 64)


@pytest.mark.parametrize("name", CD)
def test_a_drop_of_the_best_arm_is_found_and_nothing_is_found_without_a_change(name):
    """Bernoulli (0.2, 0.8), the best arm drops to 0.1 at step 5000 of 10 000, eps = 1, 40 runs:
    every run restarts after the change (the test's power); the same runs without the change
    restart in at most 2 of them in total (with delta = 0.01 the measured false-alarm rate is
    far below, docs/private-shift.md)."""
    R, T = 40, 10_000
    rng = np.random.default_rng(2)
    means = np.array([0.2, 0.8])
    rows = bernoulli_rows(rng, means, T, R)
    changed = rows.copy()
    changed[T // 2 :] = bernoulli_rows(rng, np.array([0.2, 0.1]), T - T // 2, R)
    agent = agents.make(name, epsilon=1.0)
    agent.reset(R, 2, rng=0)
    play_rows(agent, rows, R)
    assert agent.restarts.sum() <= 2
    agent = agents.make(name, epsilon=1.0)
    agent.reset(R, 2, rng=0)
    play_rows(agent, changed, R)
    assert (agent.restarts >= 1).all()
    assert (agent.runs[:, ps.RUN.tau] > T // 2).all()


# -- (c) the block path, the registry, the engine ----------------------------------------------
@pytest.mark.parametrize(
    ("name", "env"),
    [(name, "bernoulli") for name in ALL]
    + [(name, "shift") for name in ALL if name not in BERNOULLI_ONLY],
)
def test_play_is_identical_to_the_step_protocol(name, env):
    env_id, kw = ENVS[env]
    by_step = play_by_steps(agents.make(name, epsilon=0.8, cap=6), env_id, kw, 3, 11, None)
    for blocks, between in ((1, 0), (7, 3), (1000, 0)):
        by_block = play_by_steps(agents.make(name, epsilon=0.8, cap=6), env_id, kw, 3, 11,
                                 blocks, between)  # fmt: skip
        np.testing.assert_array_equal(by_block[0], by_step[0])
        np.testing.assert_array_equal(by_block[1], by_step[1])


@pytest.mark.parametrize("name", ALL)
def test_conformance(name):
    check_agent(agents.make(name))


def test_registered_listed_and_reporting_the_whole_runs_eps(capsys):
    from dpbandits.experiments import run

    assert set(ALL) <= set(agents.available())
    env = {"id": "dpbandits/PiecewiseBandit-v0", "arm": "bernoulli", "horizon": 2000,
           "segments": [[0, [0.2, 0.8]], [1000, [0.8, 0.2]]]}  # fmt: skip
    res = run(env, {n: {"kind": n, "epsilon": 0.7} for n in ALL}, n_runs=4, seed=0, n_jobs=1,
              progress=False)  # fmt: skip
    for name in ALL:
        report = res.privacy[name]
        assert report["epsilon_total"] == 0.7 and report["model"] == "global"
        assert "eps = 0.7 for the whole run" in report["text"]
        assert ("restarts_max" in report) == (name in CD)
        assert "every reward is in at most one released sum" in report["text"]
    assert cli_main(["list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in ALL)


def test_the_restart_count_survives_the_merge_of_chunks():
    """A run of several chunks merges the chunks' reports by taking each number's maximum
    (dpbandits.experiments.engine): the report's restart count must be a largest value, so
    that the merged one is the whole run's (a per-chunk mean came out as the largest chunk
    mean). Two agents played on different data stand for two chunks."""
    from dpbandits.experiments.engine import _merge_privacy

    reports, counts = [], []
    for seed, means in [(0, [0.9, 0.1]), (1, [0.5, 0.5])]:
        agent = agents.make("cd_adap_ucb", epsilon=5.0, cap=8, forced=0.05)
        agent.reset(5, 2, rng=seed)
        rng = np.random.default_rng(seed)
        m = np.array(means)
        for t in range(4000):
            if t == 2000:
                m = m[::-1]
            a = agent.act()
            agent.update(a, (rng.random(5) < m[a]).astype(float))
        report = agent.privacy_report()
        assert report["restarts_max"] == agent.restarts.max()
        assert "restarts_mean" not in report
        reports.append(report)
        counts.append(agent.restarts)
    every = np.concatenate(counts)
    assert every.max() > 0 and every.min() < every.max()  # the merge has something to do
    assert _merge_privacy(reports)["restarts_max"] == every.max()


def test_the_shift_command_knows_the_agents_built_for_change():
    from dpbandits.experiments.presets import EXTRA_LABELS, shift_agents

    labels = ["CD-AdaP-UCB", "CD-AdaP-KLUCB", "SW-AdaP-UCB", "SW-AdaP-KLUCB"]
    assert set(labels) <= set(EXTRA_LABELS)
    built = shift_agents(labels, epsilon=0.5)
    assert [type(a).__name__ for a in built.values()] == ["CDAdaPUCB", "CDAdaPKLUCB",
                                                         "SWAdaPUCB", "SWAdaPKLUCB"]  # fmt: skip
    assert all(a.epsilon == 0.5 for a in built.values())


def test_the_actions_act_returned_are_required():
    agent = agents.make("cd_adap_ucb")
    agent.reset(2, 2, rng=0)
    for _ in range(5):
        agent.update(agent.act(), np.ones(2))
    a = agent.act()
    with pytest.raises(ValueError, match="actions act"):
        agent.update(1 - a, np.ones(2))


# -- (d) bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["cd_adap_ucb", "sw_dp_imed"])
@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon_is_refused_before_any_work(name, eps):
    with pytest.raises(ValueError, match="epsilon"):
        agents.make(name, epsilon=eps).reset(2, 2, rng=0)


@pytest.mark.parametrize(
    ("name", "params", "error", "match"),
    [("cd_adap_ucb", {"cap": 3}, ValueError, "cap must be at least 4"),
     ("cd_dp_imed", {"epsilon": 0.1, "cap": 16}, ValueError, "cap must be at least"),
     ("cd_adap_ucb", {"cap": 0}, ValueError, "cap"),
     ("cd_adap_ucb", {"cap": True}, TypeError, "cap"),
     ("cd_adap_klucb", {"window": 1}, ValueError, "window"),
     ("cd_adap_klucb", {"delta": 1.0}, ValueError, "delta"),
     ("sw_adap_ucb", {"forced": 1.5}, ValueError, "forced"),
     ("sw_adap_ucb", {"alpha": 0.0}, ValueError, "alpha")],
)  # fmt: skip
def test_bad_parameters_are_refused_at_reset(name, params, error, match):
    agent = agents.make(name, **params)
    with pytest.raises(error, match=match):
        agent.reset(2, 2, rng=0)


def test_a_window_too_large_for_memory_is_refused_before_allocation():
    with pytest.raises(ValueError, match="window"):
        agents.make("sw_adap_ucb", window=2**50).reset(2, 2, rng=0)


def test_a_cap_of_one_is_fine_without_a_test():
    agents.make("sw_adap_ucb", cap=1).reset(2, 2, rng=0)


@pytest.mark.parametrize("name", ["cd_dp_imed", "sw_dp_klucb"])
def test_non_bernoulli_rewards_are_refused_by_the_bernoulli_only_agents(name):
    agent = agents.make(name)
    agent.reset(2, 2, rng=0)
    with pytest.raises(ValueError, match="Bernoulli"):
        agent.update(agent.act(), np.array([1.0, 0.25]))
    assert agent.t == 0


@pytest.mark.parametrize("steps", [True, False])
def test_rewards_outside_the_unit_interval_are_refused_at_their_step(steps):
    agent = agents.make("cd_adap_klucb")
    agent.reset(2, 2, rng=0)
    rows = bernoulli_rows(np.random.default_rng(0), np.array([0.3, 0.7]), 50, 2)
    rows[30] = 1.5
    with pytest.raises(ValueError, match=r"rewards in \[0, 1\]"):
        play_rows(agent, rows, 2, steps=steps, block=20)
    assert agent.t == 30


# -- (e) the end-to-end audit -------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", ["cd_adap_ucb", "cd_adap_klucb", "cd_dp_klucb", "cd_dp_imed",
                                  "sw_adap_ucb", "sw_dp_imed"])  # fmt: skip
def test_the_audit_passes_at_the_claimed_eps_after_a_change_and_in_a_late_episode(name):
    """The reward table: arms (0, 1) swapped at step 200 of 500, so the agent restarts; the
    changed steps: the first, two just after the change, and one inside a late episode."""
    from dpbandits.audit import audit_agent

    env = {"id": "dpbandits/PiecewiseBandit-v0", "arm": "bernoulli", "horizon": 500,
           "segments": [[0, [0.0, 1.0]], [200, [1.0, 0.0]]]}  # fmt: skip
    r = audit_agent(agents.make(name, epsilon=1.0), env, steps=[0, 210, 260, 420], quick=True,
                    runs=8000, rng=0)  # fmt: skip
    assert r.passed, r
