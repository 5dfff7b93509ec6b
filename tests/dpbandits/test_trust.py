"""The user's eps-LDP randomizers, the native notions and their (eps, delta) conversions, and
the lower bounds under local DP and zCDP (docs/trust-models.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpbandits import theory
from dpbandits.trust import LocalRandomizer, approx_dp, check_delta, implied_rho, with_conversion
from dpbandits.trust.randomizers import response_bias
from tests.stats import assert_mean_close, assert_proportion_close

N = 200_000


@pytest.mark.parametrize("eps", [0.3, 1.0, 3.0])
def test_randomized_response_keeps_the_bit_with_probability_p(eps: float) -> None:
    r = LocalRandomizer(eps, "response", debias=False)
    x = np.repeat([0.0, 1.0], N)
    y = r.privatize(x, 1)
    p = math.exp(eps) / (1 + math.exp(eps))
    assert set(np.unique(y)) <= {0.0, 1.0}
    assert_proportion_close(int(y[N:].sum()), N, p)  # P[y = 1 | x = 1] = p
    assert_proportion_close(int(y[:N].sum()), N, 1 - p)  # P[y = 1 | x = 0] = q
    # the likelihood ratio of the two laws of a report is exactly e^eps: eps-LDP
    p_, q_ = response_bias(eps)
    assert math.isclose(math.log(p_ / q_), eps, rel_tol=1e-12)


@pytest.mark.parametrize("mechanism", ["laplace", "response"])
def test_debiased_reports_are_unbiased_inside_the_range(mechanism: str) -> None:
    r = LocalRandomizer(1.0, mechanism, lo=-1.0, hi=3.0)
    for x in (-1.0, 0.3, 3.0):
        y = r.privatize(np.full(N, x), 7)
        assert_mean_close(y, x)


def test_laplace_reports_have_the_laplace_law() -> None:
    r = LocalRandomizer(0.5, "laplace", lo=0.0, hi=2.0)
    y = r.privatize(np.full(N, 0.25), 3) - 0.25
    p = stats.kstest(y, stats.laplace(scale=2.0 / 0.5).cdf).pvalue
    assert p > 1e-6


def test_a_reward_outside_the_range_is_refused_not_clipped() -> None:
    r = LocalRandomizer(1.0, "laplace")
    with pytest.raises(ValueError, match="outside the reward range"):
        r.privatize(np.array([0.5, 1.5]), 0)
    with pytest.raises(ValueError, match="outside the reward range"):
        r.privatize(np.array([np.nan]), 0)


@pytest.mark.parametrize(
    "kwargs, name",
    [({"epsilon": 0.0}, "epsilon"), ({"epsilon": -1.0}, "epsilon"),
     ({"epsilon": 1.0, "mechanism": "gauss"}, "mechanism"),
     ({"epsilon": 1.0, "lo": 1.0, "hi": 1.0}, "lo < hi")],
)  # fmt: skip
def test_bad_randomizer_arguments_name_the_parameter(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        LocalRandomizer(**kwargs)
    with pytest.raises(TypeError):
        LocalRandomizer(True)


def test_same_seed_same_reports() -> None:
    r = LocalRandomizer(1.0, "response")
    x = np.linspace(0, 1, 100)
    assert np.array_equal(r.privatize(x, 5), r.privatize(x, 5))


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_delta_outside_the_open_unit_interval_is_refused(delta: float) -> None:
    with pytest.raises(ValueError, match="delta"):
        check_delta(delta)
    with pytest.raises(ValueError, match="delta"):
        approx_dp("zcdp", 0.5, delta)


def test_rho_must_be_positive() -> None:
    with pytest.raises(ValueError, match="rho"):
        approx_dp("zcdp", 0.0, 1e-6)
    with pytest.raises(ValueError, match="rho"):
        approx_dp("zcdp", -1.0, 1e-6)


def test_implied_rho_is_half_eps_squared() -> None:
    assert implied_rho(1.0) == 0.5
    assert implied_rho(0.2) == pytest.approx(0.02)


def test_conversions_match_the_closed_forms() -> None:
    pytest.importorskip("dp_accounting")
    # eps-DP: randomized response's privacy profile, delta(e') = (e^eps - e^e') / (1 + e^eps)
    for eps, delta in [(1.0, 0.1), (2.0, 0.05), (0.5, 1e-3)]:
        e = approx_dp("pure", eps, delta)["epsilon"]
        closed = math.log(math.exp(eps) - delta * (1 + math.exp(eps)))
        assert e == pytest.approx(closed, abs=2e-3)
        assert e <= eps
    assert approx_dp("local", 1.0, 1e-9)["epsilon"] == pytest.approx(1.0, abs=1e-6)
    # rho-zCDP: never worse than Bun & Steinke's rho + 2 sqrt(rho ln(1/delta)) (Prop. 1.3)
    for rho, delta in [(0.5, 1e-6), (0.05, 1e-5), (2.0, 1e-3)]:
        e = approx_dp("zcdp", rho, delta)["epsilon"]
        assert 0 < e <= rho + 2 * math.sqrt(rho * math.log(1 / delta))
    # smaller rho, smaller eps
    assert approx_dp("zcdp", 0.1, 1e-6)["epsilon"] < approx_dp("zcdp", 0.5, 1e-6)["epsilon"]


def test_without_the_extra_the_conversion_says_what_to_install(monkeypatch) -> None:
    import dpbandits.trust.notions as notions

    monkeypatch.setattr(notions, "accountant_available", lambda: False)
    conv = notions.approx_dp("zcdp", 0.5, 1e-6)
    assert conv["epsilon"] is None and "accounting" in conv["missing"]
    rep = notions.with_conversion({"notion": "zcdp", "rho": 0.5, "epsilon_total": math.inf}, 1e-6)
    assert "dp-accounting" in notions.conversion_text(rep)


def test_with_conversion_adds_approx_dp_and_implied_rho() -> None:
    pytest.importorskip("dp_accounting")
    rep = with_conversion({"model": "global", "epsilon_total": 1.0}, 1e-6)
    assert rep["rho_implied"] == 0.5 and rep["approx_dp"]["delta"] == 1e-6
    assert with_conversion(None, 1e-6) is None


# -- lower bounds ------------------------------------------------------------------------------
def test_local_dp_bound_closed_form_and_order() -> None:
    means, T = [0.3, 0.7], 20_000
    for eps in (0.05, 0.2, 1.0, 5.0):
        L = min(4.0, math.exp(2 * eps)) * math.expm1(eps) ** 2
        kl = float(theory.kl_bernoulli(0.3, 0.7))
        c = 0.4 / min(kl, L * 0.4**2)
        assert float(theory.local_dp(means, eps, T)) == pytest.approx(c * math.log(T))
        assert theory.local_dp(means, eps, T) >= theory.lai_robbins(means, T) - 1e-9
    # small eps: the order 1 / ((e^eps - 1)^2 Delta) of Ren et al. (2020), Theorem 1
    eps = 0.01
    assert float(theory.local_dp(means, eps, T)) == pytest.approx(
        math.log(T) / (math.exp(2 * eps) * math.expm1(eps) ** 2 * 0.4), rel=1e-12
    )


def test_zcdp_bound_is_at_least_lai_robbins_and_grows_as_rho_shrinks() -> None:
    means, T = [0.3, 0.5, 0.7], 10_000
    lr = theory.lai_robbins(means, T)
    assert theory.zcdp(means, math.inf, T) == pytest.approx(lr)
    values = [float(theory.zcdp(means, rho, T)) for rho in (10.0, 0.1, 1e-3, 1e-5)]
    assert values[0] >= lr - 1e-9 and values == sorted(values)
    assert theory.zcdp(means, 0.5, [1, 10]).shape == (2,)
    with pytest.raises(ValueError, match="rho"):
        theory.zcdp(means, 0.0, T)


def test_cli_delta(capsys, tmp_path) -> None:
    from dpbandits.cli import main

    base = ["run", "--env", "dpbandits/KArmedBernoulli-v0", "--env-arg", "means=[0.3,0.7]",
            "--env-arg", "horizon=300", "--agent", "adac_ucb", "--runs", "2", "--jobs", "1",
            "--no-plots", "--no-progress", "--out", str(tmp_path / "out")]  # fmt: skip
    assert main([*base, "--delta", "1.5"]) == 2
    assert "--delta must lie in (0, 1)" in capsys.readouterr().err
    pytest.importorskip("dp_accounting")
    assert main([*base, "--delta", "1e-6"]) == 0
    out = capsys.readouterr().out
    assert "rho=0.5 zCDP" in out and "(eps, delta)=(5.22, 1e-06)" in out
