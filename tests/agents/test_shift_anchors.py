"""The non-private anchors of piecewise-stationary bandits (M-UCB, GLR-klUCB, CUSUM-UCB): the
conformance kit, bad input, and their actions against slow references written from the papers'
algorithms (Cao et al. 2019 Alg. 1-2, Besson et al. 2022 Alg. 1, Liu et al. 2018 Alg. 1-2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import agents
from agents.change_tests import glr_bernoulli
from dpbandits.audit.reward_tables import reward_tape
from dpbandits.core.arms import action_dtype
from dpbandits.testing import check_agent
from tests.agents.test_literature_kl import kl_ref as kl
from tests.marks import slow_except

# -- slow references, one replication, written from the papers ---------------------------------


def kl_ucb(p: float, level: float) -> float:
    """max{q in [p, 1] : kl(p, q) <= level} by bisection."""
    lo, hi = p, 1.0
    if kl(p, 1.0) <= level:
        return 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if kl(p, mid) <= level:
            lo = mid
        else:
            hi = mid
    return lo


def mucb_reference(table: np.ndarray, w: int, b: float, gamma: float
                   ) -> tuple[list[int], list[int]]:  # fmt: skip
    horizon, k = table.shape
    period = max(1, math.floor(k / gamma)) if gamma > 0 else 0
    tau, hist = 0, [[] for _ in range(k)]
    actions, restarts = [], []
    for t in range(horizon):
        since = t - tau
        if t < k:
            a = t
        elif period and since % period < k:
            a = since % period
        else:
            idx = [math.inf if not h else np.mean(h) + math.sqrt(2 * math.log(since + 1) / len(h))
                   for h in hist]  # fmt: skip
            a = int(np.argmax(idx))
        x = table[t, a]
        hist[a].append(x)
        actions.append(a)
        last = hist[a][-w:]
        if len(hist[a]) >= w and abs(sum(last[w // 2 :]) - sum(last[: w // 2])) > b:
            tau, hist = t + 1, [[] for _ in range(k)]
            restarts.append(t)
    return actions, restarts


def glr_reference(table: np.ndarray, delta: float, alpha: float, local: bool, dn: int, ds: int
                  ) -> tuple[list[int], list[int]]:  # fmt: skip
    horizon, k = table.shape
    period = max(1, math.floor(k / alpha)) if alpha > 0 else 0
    tau, hist = [0] * k, [[] for _ in range(k)]
    actions, restarts = [], []
    for t in range(horizon):
        if t < k:
            a = t
        elif period and t % period < k:
            a = t % period
        else:
            idx = [math.inf if not h
                   else kl_ucb(np.mean(h), math.log(max(t + 1 - tau[j], 1)) / len(h))
                   for j, h in enumerate(hist)]  # fmt: skip
            a = int(np.argmax(idx))
        hist[a].append(table[t, a])
        actions.append(a)
        n = len(hist[a])
        if n % dn:
            continue
        y = np.asarray(hist[a])
        beta = math.log(3 * n**1.5 / delta)
        if any(glr_bernoulli(s, y[:s].sum(), n, y.sum()) >= beta for s in range(ds, n, ds)):
            restarts.append(t)
            for j in range(k) if not local else [a]:
                tau[j], hist[j] = t + 1, []
    return actions, restarts


def cusum_reference(table: np.ndarray, m: int, drift: float, h: float, alpha: float,
                    u: np.ndarray) -> tuple[list[int], list[int]]:  # fmt: skip
    horizon, k = table.shape
    hist = [[] for _ in range(k)]
    walks = [[0.0, 0.0] for _ in range(k)]
    actions, restarts = [], []
    for t in range(horizon):
        if t < k:
            a = t
        elif u[t] < alpha:
            a = int(u[t] / alpha * k)
        else:
            n_t = sum(len(x) for x in hist)
            idx = [math.inf if not x else np.mean(x) + math.sqrt(2 * math.log(max(n_t, 1)) / len(x))
                   for x in hist]  # fmt: skip
            a = int(np.argmax(idx))
        y = table[t, a]
        hist[a].append(y)
        actions.append(a)
        if len(hist[a]) > m:
            u0 = np.mean(hist[a][:m])
            s_plus, s_minus = u0 - y - drift, y - u0 - drift  # Alg. 2: s_k, then g_k
            gp = max(0.0, walks[a][0] + s_plus)
            gm = max(0.0, walks[a][1] + s_minus)
            walks[a] = [gp, gm]
            if gp >= h or gm >= h:
                restarts.append(t)
                hist[a], walks[a] = [], [0.0, 0.0]
    return actions, restarts


def piecewise_tables(n_runs: int, horizon: int, means: list[list[float]], seed: int) -> np.ndarray:
    """(R, T, K) Bernoulli rewards whose means change at equal intervals."""
    rng = np.random.default_rng(seed)
    m = np.repeat(np.asarray(means), -(-horizon // len(means)), axis=0)[:horizon]
    return (rng.random((n_runs, horizon, m.shape[1])) < m).astype(float)


def play(agent, tables: np.ndarray, seed: int = 0) -> np.ndarray:
    """Step protocol; (R, T) actions."""
    n_runs, horizon, k = tables.shape
    agent.reset(n_runs, k, horizon=horizon, rng=seed)
    out = np.empty((n_runs, horizon), dtype=np.int64)
    for t in range(horizon):
        a = agent.act()
        out[:, t] = a
        agent.update(a, tables[np.arange(n_runs), t, a])
    return out


MEANS = [[0.2, 0.5, 0.8], [0.8, 0.5, 0.2], [0.5, 0.9, 0.1]]


def test_m_ucb_against_the_reference() -> None:
    tables = piecewise_tables(3, 1500, MEANS, 1)
    agent = agents.make("m_ucb", w=40, b=8.0, gamma=0.1)
    acts = play(agent, tables)
    total = 0
    for r in range(3):
        ref, restarts = mucb_reference(tables[r], 40, 8.0, 0.1)
        assert acts[r].tolist() == ref
        assert agent.restarts[r] == len(restarts)
        total += len(restarts)
    assert total >= 3  # the changes were detected


@pytest.mark.parametrize("restart", slow_except(["local", "global"], fast=["local"]))
def test_glr_klucb_against_the_reference(restart: str) -> None:
    tables = piecewise_tables(3, 900, MEANS, 2)
    params = {"restart": restart, "delta": 0.05, "alpha": 0.1, "delta_n": 3, "delta_s": 2}
    agent = agents.make("glr_klucb", **params)
    acts = play(agent, tables)
    total = 0
    for r in range(3):
        ref, restarts = glr_reference(tables[r], 0.05, 0.1, restart == "local", 3, 2)
        assert acts[r].tolist() == ref
        assert agent.restarts[r] == len(restarts)
        total += len(restarts)
    assert total >= 3


def test_cusum_ucb_against_the_reference() -> None:
    tables = piecewise_tables(3, 1500, MEANS, 3)
    agent = agents.make("cusum_ucb", m=20, drift=0.05, h=4.0, alpha=0.05)
    acts = play(agent, tables, seed=7)
    # the agent draws one uniform per replication per step after the initial round, in order
    u = np.full((1500, 3), 2.0)
    u[3:] = np.random.default_rng(7).random((1497, 3))
    total = 0
    for r in range(3):
        ref, restarts = cusum_reference(tables[r], 20, 0.05, 4.0, 0.05, u[:, r])
        assert acts[r].tolist() == ref
        assert agent.restarts[r] == len(restarts)
        total += len(restarts)
    assert total >= 3


def test_m_ucb_restart_time_by_hand() -> None:
    # one arm, 0 for ten steps then 1: the window (w = 4) reads (0 0 | 1 1) at step 11, where
    # |2 - 0| > b = 1.5 restarts it (tau = 12); afterwards all ones, no other restart
    agent = agents.make("m_ucb", w=4, b=1.5, gamma=0.0)
    agent.reset(1, 1, horizon=30, rng=0)
    for t in range(30):
        a = agent.act()
        agent.update(a, np.array([1.0 if t >= 10 else 0.0]))
        assert agent.restarts[0] == (1 if t >= 11 else 0)
    assert agent.run_field("tau")[0] == 12


def test_glr_and_cusum_restart_times_by_hand() -> None:
    # one arm, 20 zeros then ones, the exact test (dn = ds = 1): the first n at which some split
    # reaches ln(3 n^1.5 / delta), found by the definition
    delta = 0.1
    y = np.array([0.0] * 20 + [1.0] * 20)
    first = next(n for n in range(2, 41) if any(
        glr_bernoulli(s, y[:s].sum(), n, y[:n].sum()) >= math.log(3 * n**1.5 / delta)
        for s in range(1, n)))  # fmt: skip
    assert 21 < first < 30
    agent = agents.make("glr_klucb", delta=delta, alpha=0.0, delta_n=1, delta_s=1)
    # two identical replications: GLR-klUCB's shared table is a strided view for R > 1 (one
    # row at R = 1 is contiguous), so R = 2 runs the loop the engine runs, compiled once
    agent.reset(2, 1, horizon=40, rng=0)
    for t in range(40):
        agent.update(agent.act(), np.repeat(y[t], 2))
        assert (agent.restarts == (1 if t >= first - 1 else 0)).all(), t
    # CUSUM, m = 2 on (0, 1): u0 = 1/2, then ones: g- grows by 0.4 a step, h = 1 at the third
    cusum = agents.make("cusum_ucb", m=2, drift=0.1, h=1.0, alpha=0.0)
    cusum.reset(1, 1, horizon=10, rng=0)
    for t, x in enumerate([0.0, 1.0, 1.0, 1.0, 1.0]):
        cusum.update(cusum.act(), np.array([x]))
        assert cusum.restarts[0] == (1 if t >= 4 else 0)


@pytest.mark.parametrize("name", ["m_ucb", "glr_klucb"])
def test_forced_exploration_plays_every_arm_including_the_last(name: str) -> None:
    # arm 0 always pays, the others never (no change: no restart, M-UCB counts from step 0):
    # every step t with t mod floor(K / alpha) < K plays that arm, the last one included
    k, horizon, alpha = 4, 4000, 0.08
    params = {"gamma": alpha} if name == "m_ucb" else {"alpha": alpha}
    agent = agents.make(name, **params)
    table = np.zeros((2, horizon, k))  # R = 2: the engine's type of GLR-klUCB's shared table
    table[:, :, 0] = 1.0
    period = math.floor(k / alpha)
    forced = [t for t in range(horizon) if t % period < k]
    for acts in play(agent, table):
        assert [acts[t] for t in forced] == [t % period for t in forced]
        assert sum(acts[t] == k - 1 for t in forced) == len(forced) // k
    assert (agent.restarts == 0).all()


@pytest.mark.parametrize("restart", ["local", "global"])
def test_glr_forced_exploration_keeps_the_global_phase_after_a_restart(restart: str) -> None:
    # Besson et al. 2022, Alg. 1: step t (1-based) explores arm t mod floor(K / alpha) whatever
    # the restarts; the phase is not reset by a detection (SMPyBandits 0.9.7 counts it from
    # the latest restart instead). K = 2, alpha = 0.25: period 8, arm 1 at t = 1 (mod 8) in
    # 0-based steps. Arm 1 never pays; arm 0 pays 0 before step 100 and 1 from it on: the exact
    # test (dn = ds = 1) detects it a few steps later, one restart, and from then on arm 0 wins
    # every free step, so arm 1 is played only at its forced steps (and once right after a
    # global restart, when it has no pull since it).
    k, horizon, period = 2, 400, 8
    table = np.zeros((2, horizon, k))  # R = 2: the engine's type of GLR-klUCB's shared table
    table[:, 100:, 0] = 1.0
    agent = agents.make("glr_klucb", restart=restart, delta=0.1, alpha=0.25, delta_n=1,
                        delta_s=1)  # fmt: skip
    for r, acts in enumerate(play(agent, table)):
        assert agent.restarts[r] == 1
        tau = int(agent.tau[r, 0])  # the first step after the detection
        assert 100 < tau < 120
        assert tau % period != 0  # a phase counted from the restart would differ from here on
        settled = tau + 1 if restart == "global" else tau  # the re-initialising pull of arm 1
        plays_arm_1 = [t for t in range(settled + 1, horizon) if acts[t] == 1]
        assert plays_arm_1 == [t for t in range(settled + 1, horizon) if t % period == 1]
        forced = [t for t in range(horizon) if t % period < k]
        assert [acts[t] for t in forced] == [t % period for t in forced]


def test_cusum_uniform_exploration_covers_every_arm() -> None:
    # alpha = 1: every step after the first K is a uniform arm; chi-square against uniform
    agent = agents.make("cusum_ucb", alpha=1.0, h=5.0)
    k, horizon = 5, 2000
    table = (np.random.default_rng(0).random((8, horizon, k)) < 0.5).astype(float)
    acts = play(agent, table)[:, k:]
    counts = np.bincount(acts.ravel(), minlength=k)
    assert stats.chisquare(counts).pvalue > 1e-6
    assert counts[k - 1] > 0


RESTARTING = [
    agents.make("m_ucb", w=10, b=3.0, gamma=0.2),
    agents.make("glr_klucb", restart="global", delta=0.5, delta_n=1, delta_s=1, alpha=0.3),
    agents.make("glr_klucb", delta=0.5, delta_n=2, delta_s=3),
    agents.make("cusum_ucb", m=10, drift=0.0, h=2.0, alpha=0.2),
]


@pytest.mark.parametrize(
    "agent",
    [
        agents.make("m_ucb"),
        agents.make("glr_klucb"),
        agents.make("glr_klucb", restart="global"),
        agents.make("cusum_ucb"),
        *RESTARTING,
    ],
    ids=repr,
)
def test_conformance(agent) -> None:
    check_agent(agent)


@pytest.mark.parametrize("agent", RESTARTING, ids=repr)
def test_blocks_equal_steps_across_restarts(agent) -> None:
    """The block path (engine) and the step path give the same actions and restarts on a
    table with changes, where the agents restart many times."""
    table = piecewise_tables(1, 900, MEANS, 5)[0]
    n_runs = 3
    steps = play(agent, np.repeat(table[None], n_runs, axis=0), seed=4)
    restarts = agent.restarts.copy()
    assert restarts.min() >= 2
    tape = reward_tape(table, n_runs)
    agent.reset(n_runs, 3, horizon=900, rng=4)
    actions = np.empty((900, n_runs), dtype=action_dtype(3))
    rewards = np.empty((900, n_runs))
    start = 0
    for size in (1, 7, 100, 1, 300, 491):
        agent.play(tape[start : start + size], actions[start : start + size],
                   rewards[start : start + size])  # fmt: skip
        start += size
    assert start == 900
    np.testing.assert_array_equal(actions.T, steps)
    np.testing.assert_array_equal(agent.restarts, restarts)


def test_non_bernoulli_rewards_are_refused_by_glr_klucb_before_learning() -> None:
    agent = agents.make("glr_klucb")
    agent.reset(2, 2, horizon=100, rng=0)
    a = agent.act()
    with pytest.raises(ValueError, match="Bernoulli"):
        agent.update(a, np.array([1.0, 0.5]))
    assert agent.stats.counts.sum() == 0 and agent.t == 0
    for name in ("m_ucb", "cusum_ucb"):
        other = agents.make(name)
        other.reset(2, 2, horizon=100, rng=0)
        with pytest.raises(ValueError, match=r"\[0, 1\]"):
            other.update(other.act(), np.array([1.0, 1.5]))
        assert other.stats.counts.sum() == 0


@pytest.mark.parametrize(
    ("name", "params", "bad"),
    [
        ("m_ucb", {"w": 5}, "w"),
        ("m_ucb", {"w": 0}, "w"),
        ("m_ucb", {"gamma": 1.5}, "gamma"),
        ("m_ucb", {"b": -1.0}, "b"),
        ("m_ucb", {"n_changes": 0}, "n_changes"),
        ("glr_klucb", {"restart": "both"}, "restart"),
        ("glr_klucb", {"delta": 0.0}, "delta"),
        ("glr_klucb", {"delta": 1.0}, "delta"),
        ("glr_klucb", {"alpha": 2.0}, "alpha"),
        ("glr_klucb", {"delta_s": 0}, "delta_s"),
        ("glr_klucb", {"c": -1.0}, "c"),
        ("cusum_ucb", {"m": 0}, "m"),
        ("cusum_ucb", {"h": 0.0}, "h"),
        ("cusum_ucb", {"drift": -0.1}, "drift"),
        ("cusum_ucb", {"alpha": -0.1}, "alpha"),
        ("cusum_ucb", {"xi": float("nan")}, "xi"),
    ],
)
def test_bad_parameters_are_refused_at_reset_naming_them(name: str, params: dict, bad: str) -> None:
    agent = agents.make(name, **params)  # stored as given
    with pytest.raises(ValueError, match=bad):
        agent.reset(2, 3, horizon=1000, rng=0)


@pytest.mark.parametrize("name", ["m_ucb", "glr_klucb", "cusum_ucb"])
def test_the_tuned_defaults_need_the_horizon(name: str) -> None:
    with pytest.raises(ValueError, match="horizon"):
        agents.make(name).reset(2, 3, rng=0)


def test_defaults_follow_the_papers() -> None:
    t, k = 50_000, 2
    m = agents.make("m_ucb")
    m.reset(1, k, horizon=t, rng=0)
    b = math.sqrt(75 * math.log(2 * k * t**2))
    assert m.threshold == pytest.approx(b)
    assert m.exploration == pytest.approx(math.sqrt(k * (2 * b + 3 * math.sqrt(150)) / (2 * t)))
    g = agents.make("glr_klucb")
    g.reset(1, k, horizon=t, rng=0)
    assert g.confidence == pytest.approx(1 / math.sqrt(k * t))  # not SMPyBandits' 3.16
    assert g.exploration == pytest.approx(0.05 * math.sqrt(k * math.log(t) / t))
    g.reset(1, 5, horizon=t, rng=0)
    glob = agents.make("glr_klucb", restart="global", n_changes=4)
    glob.reset(1, 5, horizon=t, rng=0)
    assert glob.confidence == pytest.approx(1 / math.sqrt(4 * t))
    c = agents.make("cusum_ucb", n_changes=4)
    c.reset(1, k, horizon=t, rng=0)
    assert c.threshold == pytest.approx(math.log(t / 4))
    assert c.exploration == pytest.approx(math.sqrt(4 * math.log(t / 4) / t))


def test_glr_klucb_pickles_without_copying_its_table_per_replication() -> None:
    import pickle

    agent = agents.make("glr_klucb")
    agent.reset(50, 2, horizon=20_000, rng=0)
    blob = pickle.dumps(agent)
    assert len(blob) < 50 * 2 * (20_000 // 10 + 10) * 8 + 3 * 20_000 * 8  # arms + one table
    copy = pickle.loads(blob)
    assert copy.runs.shape == (50, 20_001) and copy.runs.strides[0] == 0
