"""LDP-UCB-L, LDP-UCB-B, LDP-KLUCB-B (Ren et al. 2020) and AdaC-UCB (Azize & Basu 2023):
regret against slow independent implementations written from the papers (and the authors'
code for LDP-UCB), privacy reports, audits, bad input (docs/trust-models.md)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

import agents
import dpbandits
from dpbandits.audit import audit_agent
from dpbandits.core.checks import ParameterError
from dpbandits.testing import check_agent

MEANS = np.array([0.3, 0.7])
T, R = 1500, 300


@pytest.mark.parametrize("name", ["ldp_ucb_l", "ldp_ucb_b", "ldp_klucb_b", "adac_ucb"])
def test_conformance_kit(name: str) -> None:
    assert check_agent(agents.make(name), horizon=300).ok


# -- slow reference implementations, one replication at a time, numpy's own draws -------------
def reference_ldp_ucb(
    kind: str, eps: float, rng: np.random.Generator, means: np.ndarray, horizon: int,
    draw: Callable[[int, np.random.Generator], float],
) -> float:
    """LDP-UCB-L / -B as the paper's curators and the authors' index (DPclass.py), one run:
    the pseudo-regret. ``draw(a, rng)`` is the value in ``[0, 1]`` the curator is given when
    arm ``a`` is pulled (a Bernoulli(``means[a]``) reward here; the sigmoid of a Gaussian
    reward for LDP-UCB-LS / -BS, test_ldp_sigmoid.py)."""
    K = means.size
    s, n = np.zeros(K), np.zeros(K)
    p = math.exp(eps) / (1 + math.exp(eps))
    regret = 0.0
    for t in range(horizon):
        if t < K:
            a = t
        else:
            rnd = t + 1
            if kind == "L":
                low = np.flatnonzero(n <= 4 * math.log(rnd + 1))
                if low.size:
                    a = int(low[0])
                else:
                    idx = (
                        s / n
                        + np.sqrt(2 * math.log(rnd) / n)
                        + np.sqrt(32 * math.log(rnd) / (eps**2 * n))
                    )
                    a = int(np.argmax(idx))
            else:
                a = int(np.argmax(s / n + np.sqrt(2 * math.log(rnd) / n)))
        x = draw(a, rng)
        if kind == "L":
            y = x + rng.laplace(0.0, 1.0 / eps)
        else:
            y = float(rng.random() < (x * p + (1 - x) * (1 - p)))
        s[a] += y
        n[a] += 1
        regret += means.max() - means[a]
    return regret


def _bernoulli(a: int, rng: np.random.Generator) -> float:
    return float(rng.random() < MEANS[a])


def _reference_adac(rho: float, alpha: float, rng: np.random.Generator) -> float:
    """AdaC-UCB as its docstring states it (AdaP-UCB's episodes, Gaussian releases), one run."""
    K = MEANS.size
    count, priv, last_n = np.zeros(K), np.zeros(K), np.ones(K)
    regret, t = 0.0, 0
    sigma = 1 / math.sqrt(2 * rho)
    while t < T:
        if t < K:
            a, length = t, 1
        else:
            tl = t + 1
            idx = (
                priv
                + np.sqrt(alpha * math.log(2 * tl) / (2 * last_n))
                + np.sqrt(alpha * math.log(tl) / rho) / last_n
            )
            a = int(np.argmax(idx))
            length = int(count[a])
        total, done = 0.0, 0
        while done < length and t < T:
            total += float(rng.random() < MEANS[a])
            regret += MEANS.max() - MEANS[a]
            done += 1
            t += 1
        count[a] += done
        if done == length:
            priv[a] = (total + sigma * rng.standard_normal()) / length
            last_n[a] = length
    return regret


def _library_regret(agent) -> np.ndarray:
    res = dpbandits.run({"id": "dpbandits/KArmedBernoulli-v0", "means": list(MEANS),
                         "horizon": T}, {"a": agent}, n_runs=R, seed=11, n_jobs=1,
                        progress=False)  # fmt: skip
    return res.data["a"]["total_regret"]


def _two_sample_z(a: np.ndarray, b: np.ndarray) -> float:
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    return (a.mean() - b.mean()) / se


@pytest.mark.slow
@pytest.mark.parametrize(
    "agent, reference",
    [(agents.LDPUCBL(1.0), lambda g: reference_ldp_ucb("L", 1.0, g, MEANS, T, _bernoulli)),
     (agents.LDPUCBB(1.0), lambda g: reference_ldp_ucb("B", 1.0, g, MEANS, T, _bernoulli)),
     (agents.AdaCUCB(0.5), lambda g: _reference_adac(0.5, 3.1, g))],
)  # fmt: skip
def test_regret_matches_an_independent_implementation(agent, reference) -> None:
    ours = np.asarray(_library_regret(agent), dtype=float)
    g = np.random.default_rng(2024)
    ref = np.array([reference(g) for _ in range(R)])
    z = _two_sample_z(ours, ref)
    assert abs(z) < 5, f"mean regret {ours.mean():.1f} vs reference {ref.mean():.1f}: z = {z:.2f}"


def test_reports_state_the_native_notion() -> None:
    for agent in (agents.LDPUCBL(0.7), agents.LDPUCBB(0.7), agents.LDPKLUCBB(0.7)):
        agent.reset(2, 2, rng=0)
        rep = agent.privacy_report()
        assert rep["notion"] == "local" and rep["epsilon_local"] == 0.7
        assert rep["epsilon_total"] == 0.7 and rep["rho_implied"] == pytest.approx(0.245)
    adac = agents.AdaCUCB(rho=0.3)
    adac.reset(2, 2, rng=0)
    rep = adac.privacy_report()
    assert rep["notion"] == "zcdp" and rep["rho"] == 0.3 and math.isinf(rep["epsilon_total"])


@pytest.mark.parametrize("bad", [0.0, -0.5, float("nan"), float("inf")])
def test_rho_must_be_positive_and_finite(bad: float) -> None:
    with pytest.raises(ParameterError, match="rho"):
        agents.AdaCUCB(rho=bad).reset(2, 2, rng=0)
    with pytest.raises(TypeError, match="rho"):
        agents.AdaCUCB(rho=True).reset(2, 2, rng=0)


def test_bad_input_of_a_run_fails_before_any_work() -> None:
    env = {"id": "dpbandits/KArmedBernoulli-v0", "means": [0.3, 0.7], "horizon": 100}
    with pytest.raises(ValueError, match="delta"):
        dpbandits.run(env, ["adac_ucb"], n_runs=2, n_jobs=1, progress=False, delta=1.0)
    with pytest.raises(ValueError, match="rho"):
        dpbandits.run(env, {"a": {"kind": "adac_ucb", "rho": -1}}, n_runs=2, n_jobs=1,
                      progress=False)  # fmt: skip


@pytest.mark.slow
def test_audits() -> None:
    # eps-LDP agents pass at their eps; the audit catches a false claim of the same agent
    for agent in (agents.LDPUCBL(1.0), agents.LDPUCBB(1.0)):
        r = audit_agent(agent, quick=True, runs=4000, horizon=100, rng=0)
        assert r.passed, str(r)
    liar = audit_agent(agents.LDPUCBB(6.0), quick=True, runs=4000, horizon=100, rng=0, epsilon=0.5)
    assert liar.passed is False
    # the Laplace curator's false claim shows on the quick audit's tie table (3.99 on zeros; 0 on
    # the environment's table alone, where its actions follow its forced exploration and the gap)
    liar = audit_agent(agents.LDPUCBL(20.0), quick=True, runs=4000, horizon=100, rng=0,
                       epsilon=0.5)  # fmt: skip
    assert liar.passed is False
    # rho-zCDP, audited against its (eps, delta) at delta
    pytest.importorskip("dp_accounting")
    r = audit_agent(agents.AdaCUCB(0.5), quick=True, runs=4000, horizon=100, rng=0, delta=1e-3)
    assert r.passed and r.delta == 1e-3 and math.isfinite(r.epsilon)
    loud = audit_agent(agents.AdaCUCB(200.0), quick=True, runs=4000, horizon=100, rng=0, delta=1e-3,
                       epsilon=0.3)  # fmt: skip
    assert loud.passed is False
    # any agent on the wrapped environment passes at the randomizer's eps
    env = {"id": "dpbandits/LocalDP-v0", "env": {"id": "dpbandits/KArmedBernoulli-v0",
                                                 "means": [0.0, 1.0]}, "epsilon": 1.0}  # fmt: skip
    r = audit_agent(agents.UCB(log="t"), env=env, quick=True, runs=4000, horizon=100, rng=0)
    assert r.passed and r.epsilon == 1.0, str(r)
