"""The eps-global-DP agents of the literature: DP-UCB (Mishra & Thakurta 2015), DP-UCB-BOUND,
DP-UCB and DP-UCB-INT (Tossou & Dimitrakakis 2016), DP-SE (Sajed & Sheffet 2019).

(a) the step protocol against plain per-step numpy implementations written here from the papers
(same seeds, identical actions); (b) the block path against the step path; (c) regret on a
stationary Bernoulli problem and the non-private limit; (d) the noise of the releases against
its closed form; (e) bad parameters.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
from dpbandits.continual import hybrid_noise
from dpbandits.continual.kernels import binary_add, binary_noise_push
from dpbandits.continual.tree_noise import laplace_unit
from dpbandits.core.arms import action_dtype
from dpbandits.experiments import run
from tests.agents.test_compiled import play_by_steps
from tests.stats import assert_mean_close

UCB_NAMES = ("dp_ucb", "dp_ucb_bound", "dp_ucb_hybrid", "dp_ucb_int")
ALL_NAMES = UCB_NAMES + ("dp_se",)
MEANS = np.array([0.5, 0.8])  # the stationary Bernoulli problem of (c): gap 0.3


def bernoulli_rows(rng: np.random.Generator, means: np.ndarray, m: int, n_runs: int):
    """``m`` reward rows of ``n_runs`` replications: column ``a R + r`` is arm ``a`` of run
    ``r`` (the engine's reward tape)."""
    return (rng.random((m, means.size * n_runs)) < np.repeat(means, n_runs)).astype(float)


def play_rows(agent, rows, n_runs, *, block=4096, steps=False):
    """Actions ``(T, R)`` of ``agent`` (already reset) on the reward rows, by ``play`` in
    blocks or (``steps``) by ``act``/``update``."""
    T = rows.shape[0]
    actions = np.empty((T, n_runs), dtype=action_dtype(rows.shape[1] // n_runs))
    rewards = np.empty((T, n_runs))
    cols = np.arange(n_runs)
    for t in range(0, T, 1 if steps else block):
        if steps:
            a = agent.act()
            agent.update(a, rows[t, a * n_runs + cols])
            actions[t] = a
        else:
            m = min(block, T - t)
            agent.play(rows[t : t + m], actions[t : t + m], rewards[t : t + m])
    return actions


# -- (a) references written from the papers, one replication and one step at a time -----------
def chan_bound(j: int, eps_items: float) -> tuple[float, float]:
    """Chan et al. (2011), Cor. 2.9, for the hybrid noise at count ``j``: the Laplace scales of
    its terms and ``(sqrt(sum b^2), max b)``; the bound at step ``t`` is
    ``sqrt(8 ln(2/delta)) max(sqrt(sum b^2), max b sqrt(ln(2/delta)))``, ``delta = 1/(2 t^4)``."""
    k = j.bit_length() - 1
    scales = [2.0 / eps_items] * (k + 1) + [2.0 * k / eps_items] * bin(j - 2**k).count("1")
    return math.sqrt(sum(b * b for b in scales)), max(scales)


def reference_dp_ucb(rows, R, K, eps, mechanism, bound, f, seed, block=None):
    """Mishra & Thakurta's private UCB (Alg. 1) / Tossou & Dimitrakakis's DP-UCB-BOUND, DP-UCB,
    DP-UCB-INT, written from the papers with the choices of ``agents.DPUCB``'s docstring:
    per-arm mechanisms on items (sums of ``f`` pulls), the whole eps per arm, index
    ``mean + sqrt(2 ln t / n) + B / n``. Node noise is drawn as the agent draws it (one
    standard Laplace per item, replications in order); the hybrid noise is the agent's noise
    table, ``hybrid_noise`` of its generator (``T`` below the noise block)."""
    T = rows.shape[0]
    rng = np.random.default_rng(seed)
    if mechanism == "hybrid":
        Z = hybrid_noise(block - 1, eps * f, size=R * K, rng=rng)  # Z[s, j - 1] = Z_j
    N = T // f
    L = N.bit_length()
    scale = L / eps
    gamma = L * scale * math.log(K * N * L * T)  # the tree's bound, delta = 1/T
    pulls = np.zeros((R, K), dtype=int)
    pending = np.zeros((R, K))
    items = np.zeros((R, K), dtype=int)
    item_sum = np.zeros((R, K))
    mean = np.zeros((R, K))
    covered = np.zeros((R, K))
    scales = np.zeros((R, K, 2))
    node: dict = {}
    actions = np.empty((T, R), dtype=np.int64)
    for t in range(T):
        for r in range(R):
            if t < K:
                actions[t, r] = t
                continue
            index = np.empty(K)
            for a in range(K):
                n = covered[r, a]
                if n == 0:
                    index[a] = np.inf
                    continue
                b = 0.0
                if bound and mechanism == "tree":
                    b = gamma
                elif bound:
                    lt = math.log(4.0 * t**4)
                    sig, big = scales[r, a]
                    b = f * math.sqrt(8 * lt) * max(sig, big * math.sqrt(lt))
                index[a] = mean[r, a] + math.sqrt(2 * math.log(t) / n) + b / n
            actions[t, r] = int(np.argmax(index))
        for r in range(R):
            a = actions[t, r]
            x = rows[t, a * R + r]
            pulls[r, a] += 1
            pending[r, a] += x
            if pulls[r, a] % f:
                continue
            items[r, a] += 1
            j = int(items[r, a])
            if mechanism == "tree":
                low = (j & -j).bit_length() - 1  # the node item j completes
                node[r, a, low, (j >> low) - 1] = laplace_unit(rng, 1)[0] * scale
                item_sum[r, a] += pending[r, a]
                noise = 0.0
                for level in range(L):  # the nodes of the dyadic decomposition of [1, j]
                    if (j >> level) & 1:
                        noise += node[r, a, level, (j >> level) - 1]
                mean[r, a] = (item_sum[r, a] + noise) / pulls[r, a]
            else:
                item_sum[r, a] += pending[r, a] / f
                mean[r, a] = (item_sum[r, a] + Z[r * K + a, j - 1]) / j
                scales[r, a] = chan_bound(j, eps * f)
            pending[r, a] = 0.0
            covered[r, a] = pulls[r, a]
    return actions


def se_epoch_length(e, n_active, eps, beta, cap):
    gap = 2.0**-e
    hoeffding = 32 * math.log(8 * n_active * e * e / beta) / gap**2
    laplace = 8 * math.log(4 * n_active * e * e / beta) / (eps * gap)
    return math.ceil(min(max(hoeffding, laplace), cap))


def reference_dp_se(rows, R, K, eps, beta, seed, private=True):
    """Sajed & Sheffet's DP-SE written from the paper with ``agents.DPSE``'s choices (round
    robin in an epoch, ``R_e`` rounded up, threshold ``2 (h_e + c_e)``); the Laplace draws are
    the agent's (standard Laplace, replications in order, arms in index order).
    ``private=False``: non-private successive elimination (no noise, ``c_e = 0``, ``R_e`` from
    the Hoeffding term)."""
    T = rows.shape[0]
    rng = np.random.default_rng(seed)
    cap = T + 1
    arms = [list(range(K)) for _ in range(R)]
    epoch = [1] * R
    pos = [0] * R
    sums = np.zeros((R, K))

    def length(e, n):
        if private:
            return se_epoch_length(e, n, eps, beta, cap)
        return math.ceil(min(32 * math.log(8 * n * e * e / beta) / 4.0**-e, cap))

    re = [length(1, K)] * R
    actions = np.empty((T, R), dtype=np.int64)
    for t in range(T):
        for r in range(R):
            actions[t, r] = arms[r][pos[r] % len(arms[r])]
        for r in range(R):
            a = actions[t, r]
            sums[r, a] += rows[t, a * R + r]
            pos[r] += 1
            n = len(arms[r])
            if n == 1 or pos[r] != re[r] * n:
                continue
            e, m = epoch[r], re[r]
            if private:
                z = laplace_unit(rng, n) * (1.0 / (m * eps))
                mu = {a: sums[r, a] / m + z[i] for i, a in enumerate(arms[r])}
                c = math.log(4 * n * e * e / beta) / (m * eps)
            else:
                mu = {a: sums[r, a] / m for a in arms[r]}
                c = 0.0
            h = math.sqrt(math.log(8 * n * e * e / beta) / (2 * m))
            best = max(mu.values())
            arms[r] = [a for a in arms[r] if not best - mu[a] > 2 * (h + c)]
            sums[r] = 0.0
            epoch[r] = e + 1
            pos[r] = 0
            re[r] = length(e + 1, len(arms[r]))
    return actions


@pytest.mark.parametrize(
    ("name", "params"),
    [("dp_ucb", {}), ("dp_ucb", {"interval": 3, "epsilon": 2.0}), ("dp_ucb", {"bound": False}),
     ("dp_ucb_bound", {}), ("dp_ucb_hybrid", {"epsilon": 0.5}),
     ("dp_ucb_int", {"epsilon": 0.3}), ("dp_ucb_bound", {"interval": 4})],
)  # fmt: skip
def test_dp_ucb_step_protocol_is_the_papers_algorithm(name, params):
    R, K, T, seed = 3, 3, 900, 5
    rows = bernoulli_rows(np.random.default_rng(1), np.array([0.3, 0.6, 0.5]), T, R)
    agent = agents.make(name, **params)
    agent.reset(R, K, horizon=T, rng=seed)
    got = play_rows(agent, rows, R, steps=True)
    eps = params.get("epsilon", 1.0)
    f = agent.get_params()["interval"] or math.ceil(1 / eps)
    block = None if agent.mechanism == "tree" else agent._means.block
    assert block is None or block > T // f  # the whole noise table is drawn at reset
    want = reference_dp_ucb(rows, R, K, eps, agent.mechanism, agent.bound, f, seed, block)
    np.testing.assert_array_equal(got, want)
    assert (np.diff(got, axis=0) != 0).any()  # not a constant policy: the test can fail


@pytest.mark.parametrize(("eps", "beta"), [(1.0, None), (0.3, 0.05), (5.0, 0.01)])
def test_dp_se_step_protocol_is_the_papers_algorithm(eps, beta):
    R, K, T, seed = 4, 3, 6000, 2
    rows = bernoulli_rows(np.random.default_rng(3), np.array([0.2, 0.9, 0.7]), T, R)
    agent = agents.DPSE(epsilon=eps, beta=beta)
    agent.reset(R, K, horizon=T, rng=seed)
    got = play_rows(agent, rows, R, steps=True)
    want = reference_dp_se(rows, R, K, eps, 1 / T if beta is None else beta, seed)
    np.testing.assert_array_equal(got, want)
    assert agent.epochs().max() > 1  # epochs ended, so noise was drawn and used


def test_binary_noise_push_is_the_binary_mechanisms_noise():
    """Given the same node draws, ``S_n + Z_n`` from :func:`binary_noise_push` is the binary
    mechanism's release (``binary_add``, the streaming tree on the data) at every count."""
    rng = np.random.default_rng(0)
    S, L, n = 3, 6, 63
    x, noise = rng.random((n, S)), rng.laplace(size=(n, S))
    alpha, alpha_hat = np.zeros((S, L)), np.zeros((S, L))
    counts, sums, release = np.zeros(S, dtype=np.int64), np.zeros(S), np.zeros(S)
    nodes, n_counts = np.zeros((S, L)), np.zeros(S, dtype=np.int64)
    idx = np.arange(S)
    for i in range(n):
        binary_add(alpha, alpha_hat, counts, sums, release, idx, x[i], noise[i])
        z = [binary_noise_push(nodes, n_counts, s, noise[i, s]) for s in range(S)]
        np.testing.assert_allclose(sums + z, release, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(n_counts, counts)


# -- (b) the engine's block path gives the step path ------------------------------------------
BLOCK_CASES = [("dp_ucb", {}), ("dp_ucb", {"interval": 3}), ("dp_ucb_bound", {}),
               ("dp_ucb_hybrid", {}), ("dp_ucb_int", {"epsilon": 0.3}), ("dp_se", {}),
               ("dp_se", {"epsilon": 5.0, "beta": 0.1})]  # fmt: skip


@pytest.mark.parametrize(("name", "params"), BLOCK_CASES)
@pytest.mark.parametrize("R", [1, 5])
def test_play_is_identical_to_the_step_protocol(name, params, R):
    # 2 arms and T = 3000: the better arm passes 2048 pulls, where the hybrid mechanism's noise
    # block (2048 counts) is refilled in the middle of a block of rows
    env = ("dpbandits/KArmedBernoulli-v0", {"means": [0.45, 0.6], "horizon": 3000})
    by_step = play_by_steps(agents.make(name, **params), *env, R, 11, None)
    for blocks, between in ((1, 0), (7, 0), (1000, 0), (50, 20)):
        by_block = play_by_steps(agents.make(name, **params), *env, R, 11, blocks, between)
        np.testing.assert_array_equal(by_block[0], by_step[0])
        np.testing.assert_array_equal(by_block[1], by_step[1])


def test_every_literature_agent_is_played_by_blocks_and_reports_its_eps():
    env = gym.make("dpbandits/KArmedBernoulli-v0", means=[0.2, 0.8], horizon=600)
    ags = {name: agents.make(name, epsilon=0.7) for name in ALL_NAMES}
    assert all(a.block_player() is not None for a in ags.values())
    res = run(env, ags, n_runs=3, seed=1, n_jobs=1, progress=False)
    for name in ALL_NAMES:
        report = res.privacy[name]
        assert report["epsilon_total"] == 0.7 and report["means"]["epsilon"] == 0.7
        assert report["model"] == "global" and not report["counts_public"]
        assert "0.7" in report["text"]
    assert {"dp_ucb", "dp_ucb_bound", "dp_ucb_hybrid", "dp_ucb_int", "dp_se"} <= set(
        agents.available()
    )
    assert agents.describe("dp_se").cls is agents.DPSE


# -- (c) regret ---------------------------------------------------------------------------------
def second_half_regret(name, params, T, R, seed=0):
    """Per-run regret over ``[0, T/2)`` and ``[T/2, T)`` on Bernoulli(0.5, 0.8)."""
    agent = agents.make(name, **params)
    agent.reset(R, 2, horizon=T, rng=seed)
    rows = bernoulli_rows(np.random.default_rng(seed + 1), MEANS, T, R)
    gaps = (MEANS.max() - MEANS)[play_rows(agent, rows, R)]
    return gaps[: T // 2].sum(axis=0), gaps[T // 2 :].sum(axis=0)


def predicted_ucb_pulls(t: int, gamma: float) -> float:
    """Pulls of the worse arm at step ``t`` of an index ``mu + sqrt(2 ln t / n) + gamma / n``
    with exact means: the ``n`` where both arms' indices are equal (bisection)."""
    lo, hi = 1.0, t / 2.0
    for _ in range(100):
        n = (lo + hi) / 2
        excess = (math.sqrt(2 * math.log(t) / n) + gamma / n
                  - math.sqrt(2 * math.log(t) / (t - n)) - gamma / (t - n))  # fmt: skip
        lo, hi = (n, hi) if excess > MEANS[1] - MEANS[0] else (lo, n)
    return lo


@pytest.mark.parametrize(
    ("name", "params", "T"),
    [("dp_ucb", {}, 2**17), ("dp_ucb_bound", {}, 2**16), ("dp_se", {}, 2**16),
     # no noise term: at eps = 1 a run whose better arm draws a low first release can be
     # locked out for ~e^(noise^2 n / 2) steps (measured: 28% of runs still at T = 2^17), so
     # the learning claim is checked at eps = 4; the lazy releases with f = 4 blocks
     ("dp_ucb_hybrid", {"epsilon": 4.0}, 2**16),
     ("dp_ucb_int", {"epsilon": 4.0, "interval": 4}, 2**16)],
)  # fmt: skip
def test_regret_is_sublinear(name, params, T):
    """Uniform play's regret over ``[T/2, T)`` is ``0.3 / 2 * T / 2`` per run. A learner's is
    much smaller and smaller than over ``[0, T/2)`` (logarithmic regret: ``R(T) - R(T/2)`` is
    ``c ln 2`` against ``R(T/2) = c ln(T/2)``). Asserted with 5 standard errors of margin: the
    mean second-half regret is below half the uniform policy's, and below the first half's
    (paired by run).
    For DP-UCB the expectation is known: with exact means the worse arm is pulled until its
    index ``mu + sqrt(2 ln t / n) + B / n`` meets the better one's, which predicts
    ``0.3 (n(T) - n(T/2))``, about 0.17 of uniform play at T = 2^17. Checked within 10%: the
    standard error of the mean is about 0.5% of it, the rest is left to the approximation,
    which ignores both arms' noise (it was within 1% when written)."""
    R = 50
    first, second = second_half_regret(name, params, T, R)
    uniform = 0.3 / 2 * T / 2
    se = max(second.std(ddof=1), 1.0) / math.sqrt(R)  # (a floor: no regret at all has sd 0)
    assert second.mean() + 5 * se < uniform / 2, (second.mean(), se, uniform)
    drop = first - second  # paired, run by run
    assert drop.mean() - 5 * drop.std(ddof=1) / math.sqrt(R) > 0, (first.mean(), second.mean())
    if name == "dp_ucb":
        levels = T.bit_length()
        gamma = levels * levels * math.log(2 * T * levels * T)
        predicted = 0.3 * (predicted_ucb_pulls(T, gamma) - predicted_ucb_pulls(T // 2, gamma))
        assert abs(second.mean() / predicted - 1) < 0.1, (second.mean(), predicted)


@pytest.mark.parametrize("name", UCB_NAMES)
def test_dp_ucb_with_a_huge_eps_is_ucb1(name):
    """eps -> inf: no noise, no noise term, ``f = 1``: the actions of UCB1 (``agents.UCB(log="t")``)
    on continuous rewards, where index ties have probability 0."""
    R, T = 6, 3000
    rng = np.random.default_rng(4)
    rows = np.clip(rng.normal(np.repeat([0.4, 0.5, 0.55], R), 0.3, (T, 3 * R)), 0.0, 1.0)
    ours = agents.make(name, epsilon=1e12)
    ours.reset(R, 3, horizon=T, rng=0)
    ucb1 = agents.UCB(log="t")
    ucb1.reset(R, 3, horizon=T, rng=0)
    np.testing.assert_array_equal(play_rows(ours, rows, R), play_rows(ucb1, rows, R))


def test_dp_se_with_a_huge_eps_is_successive_elimination():
    R, K, T = 6, 3, 6000
    rows = bernoulli_rows(np.random.default_rng(5), np.array([0.3, 0.8, 0.7]), T, R)
    agent = agents.DPSE(epsilon=1e12)
    agent.reset(R, K, horizon=T, rng=0)
    got = play_rows(agent, rows, R)
    np.testing.assert_array_equal(got, reference_dp_se(rows, R, K, 1e12, 1 / T, 0, private=False))
    assert agent.epochs().max() > 1


# -- (d) the noise of the releases --------------------------------------------------------------
def one_arm_noise(agent, T, R, seed=0):
    """One arm pulled at every step of ``R`` runs: the noise ``S + Z - S`` of its releases."""
    agent.reset(R, 1, horizon=T, rng=seed)
    rows = bernoulli_rows(np.random.default_rng(seed + 1), np.array([0.4]), T, R)
    play_rows(agent, rows, R)
    n = agent.released_counts()[:, 0]
    exact = np.array([rows[: n[r], r].sum() for r in range(R)])
    return agent.private_sums()[:, 0] - exact, n


@pytest.mark.parametrize(
    ("name", "params", "variance"),
    [
        # binary tree, T = 1000: L = 10 levels, node noise Lap(10), popcount(1000) = 6 nodes
        ("dp_ucb", {}, 6 * 2 * 10.0**2),
        # f = 3: N = 333 items, L = 9, popcount(333) = 5, eps = 2: node noise Lap(4.5)
        ("dp_ucb", {"interval": 3, "epsilon": 2.0}, 5 * 2 * 4.5**2),
        # hybrid, n = 1000 = 2^9 + 488: 10 terms Lap(2) and popcount(488) = 5 terms Lap(18)
        ("dp_ucb_hybrid", {}, 2 * (10 * 2.0**2 + 5 * 18.0**2)),
        # lazy, f = 4 at eps = 0.25 (items: block means at eps f = 1): j = 250 = 2^7 + 122, 8
        # terms Lap(2), popcount(122) = 5 terms Lap(14), times f^2 for the sum of the pulls
        ("dp_ucb_int", {"epsilon": 0.25}, 16 * 2 * (8 * 2.0**2 + 5 * 14.0**2)),
    ],
)
def test_released_sums_have_the_closed_form_noise(name, params, variance):
    z, n = one_arm_noise(agents.make(name, **params), 1000, 2000)
    assert (n == n[0]).all()
    assert_mean_close(z, 0.0)
    assert_mean_close(z**2, variance)  # E Z^2 = Var Z: |z| < 5 with the sample sd of Z^2


def test_dp_se_released_means_have_the_closed_form_noise():
    """Epoch 1 of two arms, ``R_1`` pulls each in turn: the released means are the exact means
    plus ``Lap(1 / (R_1 eps))``, variance ``2 / (R_1 eps)^2``."""
    eps, beta, R = 0.05, 0.1, 2000
    r1 = se_epoch_length(1, 2, eps, beta, math.inf)
    T = 2 * r1  # the epoch's last pull is the last step
    agent = agents.DPSE(epsilon=eps, beta=beta)
    agent.reset(R, 2, horizon=T, rng=3)
    rows = bernoulli_rows(np.random.default_rng(4), MEANS, T, R)
    play_rows(agent, rows, R)
    assert (agent.epochs() == 2).all()
    exact = np.stack([rows[a::2, a * R : (a + 1) * R].mean(axis=0) for a in (0, 1)], axis=1)
    z = (agent.private_means() - exact).ravel()
    assert_mean_close(z, 0.0)
    assert_mean_close(z**2, 2.0 / (r1 * eps) ** 2)


def test_noise_bounds_hold_over_whole_runs():
    """The noise terms are high-probability bounds: the tree's ``B`` (delta = 1/T for all
    releases) and Chan et al.'s hybrid bound (delta = 1/(2 t^4) per release) exceed the noise
    of every final release of 500 runs."""
    T, R = 1000, 500
    z, n = one_arm_noise(agents.make("dp_ucb"), T, R)
    levels = T.bit_length()
    gamma = levels * (levels / 1.0) * math.log(1 * T * levels * T)
    assert (np.abs(z) <= gamma).all()
    z, n = one_arm_noise(agents.make("dp_ucb_bound"), T, R)
    sig, big = chan_bound(int(n[0]), 1.0)
    lt = math.log(4.0 * T**4)
    assert (np.abs(z) <= math.sqrt(8 * lt) * max(sig, big * math.sqrt(lt))).all()


# -- (e) bad parameters -------------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL_NAMES)
@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon_is_refused_before_any_work(name, eps):
    with pytest.raises(ValueError, match="epsilon"):
        agents.make(name, epsilon=eps).reset(2, 2, horizon=100, rng=0)


@pytest.mark.parametrize(
    ("name", "params", "match"),
    [("dp_ucb", {"mechanism": "binary"}, "mechanism"), ("dp_ucb", {"interval": 0}, "interval"),
     ("dp_ucb_int", {"interval": 2.5}, "interval"), ("dp_ucb", {"bound": "yes"}, "bound"),
     ("dp_se", {"beta": 1.0}, "beta"), ("dp_se", {"beta": 0.0}, "beta")],
)  # fmt: skip
def test_bad_parameters_are_refused(name, params, match):
    with pytest.raises((ValueError, TypeError), match=match):
        agents.make(name, **params).reset(2, 2, horizon=100, rng=0)


def test_a_needed_horizon_is_asked_for():
    for name in ("dp_ucb", "dp_se"):  # the tree's leaves; DP-SE's beta = 1/T
        with pytest.raises(ValueError, match="horizon"):
            agents.make(name).reset(2, 2, rng=0)
    agents.make("dp_ucb_bound").reset(2, 2, rng=0)  # the hybrid mechanism needs none
    agents.make("dp_se", beta=0.01).reset(2, 2, rng=0)


def test_the_tree_refuses_to_play_past_its_horizon():
    agent = agents.make("dp_ucb")
    agent.reset(2, 2, horizon=5, rng=0)
    rows = bernoulli_rows(np.random.default_rng(0), MEANS, 6, 2)
    with pytest.raises(ValueError, match="horizon=5"):
        agent.play(rows, np.empty((6, 2), dtype=action_dtype(2)), np.empty((6, 2)))
    assert agent.t == 0
    play_rows(agent, rows[:5], 2, steps=True)
    with pytest.raises(ValueError, match="horizon=5"):
        agent.update(agent.act(), np.zeros(2))


@pytest.mark.parametrize("name", ALL_NAMES)
@pytest.mark.parametrize("steps", [True, False])
def test_rewards_outside_the_unit_interval_are_refused(name, steps):
    agent = agents.make(name)
    agent.reset(2, 2, horizon=50, rng=0)
    rows = bernoulli_rows(np.random.default_rng(0), MEANS, 50, 2)
    rows[30, :] = 1.5
    with pytest.raises(ValueError, match=r"rewards in \[0, 1\]"):
        play_rows(agent, rows, 2, steps=steps, block=20)
    assert agent.t == 30  # the steps before are played, nothing is learnt from step 30
