"""Regret lower bounds (dpbandits.theory.lower_bounds) and their curves on the regret plots.

Closed forms at points computed by hand, the orderings the theory proves between the bounds,
monotonicity in eps and T, the eps = inf limit, input checks, the record of the arms' laws in
Results, the lines plot_cumulative(bounds=True) draws, and the CLI's --bounds. All
deterministic (no sampling): exact comparisons up to rounding.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq, minimize_scalar
from scipy.stats import norm

from dpbandits.cli import main
from dpbandits.experiments import plotting
from dpbandits.experiments.bounds import bound_curves
from dpbandits.experiments.engine import run
from dpbandits.theory import (
    azize_2025,
    azize_basu,
    d_epsilon_bernoulli,
    kl_bernoulli,
    lai_robbins,
    regret_lower_bounds,
    shariff_sheffet,
)
from envs.core import expected_clipped_normal

matplotlib.use("Agg")

PRIVATE = ("shariff_sheffet", "azize_basu_2022", "azize_2025")


def kl_by_hand(p: float, q: float) -> float:
    return p * math.log(p / q) + (1 - p) * math.log((1 - p) / (1 - q))


def random_instances(n: int, seed: int = 0) -> list[tuple[np.ndarray, float]]:
    """Bernoulli means (2 to 6 arms, some ties, some at 0) and eps on a log scale."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(2, 7))
        mu = np.round(rng.uniform(0.0, 0.99, size=k), int(rng.integers(1, 4)))
        out.append((mu, float(10 ** rng.uniform(-3, 2))))
    return out


# -- closed forms -----------------------------------------------------------------------------
def test_two_bernoulli_arms_by_hand():
    c = 0.25 / kl_by_hand(0.25, 0.5)  # arm 1 has gap 0.25
    t = math.exp(2.0)
    assert lai_robbins([0.5, 0.25], t) == pytest.approx(2 * c, rel=1e-14)
    # one suboptimal arm: Shariff & Sheffet and Azize & Basu are max(c, 1 / (6 eps))
    for eps in (0.05, 0.1, 1.0):
        want = 2 * max(c, 1 / (6 * eps))
        assert shariff_sheffet([0.5, 0.25], eps, t) == pytest.approx(want, rel=1e-14)
        assert azize_basu([0.5, 0.25], eps, t) == pytest.approx(want, rel=1e-14)
    # d_eps(1/4, 1/2) at eps = 1: logit(1/2) = 0, so the minimiser is z = expit(-1) = 1/(1+e)
    z = 1 / (1 + math.e)
    d = (z - 0.25) + kl_by_hand(z, 0.5)
    assert float(d_epsilon_bernoulli(0.25, 0.5, 1.0)) == pytest.approx(d, rel=1e-14)
    assert azize_2025([0.5, 0.25], 1.0, t) == pytest.approx(2 * 0.25 / d, rel=1e-14)
    # eps >= logit(1/2) - logit(1/4) = log 3: z = x, d_eps = kl, the 2025 bound is Lai-Robbins
    assert azize_2025([0.5, 0.25], math.log(3) + 1e-9, t) == pytest.approx(2 * c, rel=1e-14)


def test_three_bernoulli_arms_separate_max_of_sums_from_sum_of_maxes():
    mu, t = [0.5, 0.25, 0.4], 100.0
    c1, c2 = 0.25 / kl_by_hand(0.25, 0.5), 0.1 / kl_by_hand(0.4, 0.5)  # 1.91 and 4.97
    lr = (c1 + c2) * math.log(t)
    assert lai_robbins(mu, t) == pytest.approx(lr, rel=1e-14)
    for eps, p in ((1.0, 1 / 6), (0.05, 1 / 0.3), (0.02, 1 / 0.12)):
        assert shariff_sheffet(mu, eps, t) == pytest.approx(max(c1 + c2, 2 * p) * math.log(t))
        assert azize_basu(mu, eps, t) == pytest.approx((max(c1, p) + max(c2, p)) * math.log(t))
    # at eps = 0.05 the private term beats arm 1's only: the two bounds differ
    assert c1 < 1 / 0.3 < c2
    assert shariff_sheffet(mu, 0.05, t) == pytest.approx(lr)
    assert azize_basu(mu, 0.05, t) == pytest.approx((1 / 0.3 + c2) * math.log(t))


def test_gaussian_arms_by_hand():
    mu, sds, t = [1.0, 0.0], [1.0, 2.0], math.e
    assert lai_robbins(mu, t, arm="gaussian", sds=sds) == pytest.approx(2 * 2.0**2 / 1.0)
    kl, tv = 1.0 / (2 * 4.0), 2 * norm.cdf(1.0 / (2 * 2.0)) - 1
    for eps in (0.1, 1.0):
        want = 1.0 / min(kl, 6 * eps * tv)
        got = azize_basu(mu, eps, t, arm="gaussian", sds=sds)
        assert got == pytest.approx(want, rel=1e-12)
    assert 6 * 0.1 * tv < kl  # eps = 0.1 is in the high-privacy regime here: the TV term counts
    assert set(regret_lower_bounds(mu, 1.0, t, arm="gaussian", sds=sds)) == {
        "lai_robbins",
        "azize_basu_2022",
    }


def test_d_epsilon_matches_a_bounded_numerical_minimisation():
    rng = np.random.default_rng(1)
    for _ in range(300):
        x, y = rng.uniform(0.001, 0.999, size=2)
        eps = float(10 ** rng.uniform(-3, 2))
        closed = float(d_epsilon_bernoulli(x, y, eps))
        lo, hi = min(x, y), max(x, y)

        def objective(z, x=x, y=y, eps=eps):
            return eps * np.abs(z - x) + kl_bernoulli(z, y)

        res = minimize_scalar(objective, bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-12})  # fmt: skip
        # the closed form is the exact minimum: never above the search's, nor above the
        # objective on a fine grid of [lo, hi]
        assert closed <= float(res.fun) + 1e-12
        assert closed <= objective(np.linspace(lo, hi, 10_001)).min() + 1e-12
        # and the search finds it: scipy's bounded Brent stops within sqrt(machine eps) |z| +
        # xatol of the minimiser, where the objective's slope is at most eps + |logit| terms
        slope = eps + abs(math.log(lo / (1 - lo))) + abs(math.log(hi / (1 - hi)))
        assert float(res.fun) - closed <= 3 * (math.sqrt(np.finfo(float).eps) + 1e-12) * slope


# -- what the theory says about the bounds ---------------------------------------------------
def test_bounds_are_ordered_as_the_theory_proves():
    t = 1e6
    for mu, eps in random_instances(200):
        b = regret_lower_bounds(mu, eps, t)
        assert b["lai_robbins"] <= b["shariff_sheffet"] * (1 + 1e-12)
        assert b["shariff_sheffet"] <= b["azize_basu_2022"] * (1 + 1e-12)
        assert b["azize_basu_2022"] <= b["azize_2025"] * (1 + 1e-12)
        best = mu.max()
        sub = mu < best
        if best < 1.0:
            # d_eps <= eps Delta: at least log T / eps per suboptimal arm
            assert b["azize_2025"] >= sub.sum() * math.log(t) / eps * (1 - 1e-12)
            # d_eps >= min(eps Delta / 2, kl(midpoint, mu*)) (split [mu_a, mu*] at its middle)
            gaps = best - mu[sub]
            floor = np.minimum(eps * gaps / 2, kl_bernoulli((mu[sub] + best) / 2, best))
            assert b["azize_2025"] <= np.sum(gaps / floor) * math.log(t) * (1 + 1e-12)


def test_azize_2025_removes_the_factor_6_in_the_high_privacy_limit():
    mu, t = [0.7, 0.5, 0.2], 1e4
    ratio = azize_2025(mu, 1e-5, t) / azize_basu(mu, 1e-5, t)
    assert 6.0 <= ratio < 6.01  # d_eps < eps Delta, so slightly above 6


def test_monotone_in_eps_and_in_horizon():
    horizons = np.array([1.0, 2.0, 10.0, 1e3, 1e6])
    grid = np.geomspace(1e-3, 1e2, 25)
    for mu, _ in random_instances(40, seed=2):
        for key in PRIVATE:
            along_eps = [regret_lower_bounds(mu, e, 1e5)[key] for e in grid]
            assert np.all(np.diff(along_eps) <= 1e-12 * np.abs(along_eps[:-1]))
        for key, values in regret_lower_bounds(mu, 0.5, horizons).items():
            assert values.shape == horizons.shape
            assert values[0] == 0.0 and np.all(np.diff(values) >= 0), key


def test_eps_inf_is_lai_robbins():
    t = np.array([[10.0, 100.0], [1e4, 1e8]])
    for mu, _ in random_instances(50, seed=3):
        lr = lai_robbins(mu, t)
        for key, values in regret_lower_bounds(mu, math.inf, t).items():
            np.testing.assert_allclose(values, lr, rtol=1e-13, err_msg=key)
    mu, sds = [0.2, 0.9, 0.5], [0.3, 0.1, 1.0]
    np.testing.assert_allclose(
        azize_basu(mu, math.inf, t, arm="gaussian", sds=sds),
        lai_robbins(mu, t, arm="gaussian", sds=sds),
        rtol=1e-13,
    )
    np.testing.assert_allclose(
        d_epsilon_bernoulli([0.1, 0.7], [0.6, 0.2], math.inf), kl_bernoulli([0.1, 0.7], [0.6, 0.2])
    )


def test_edge_instances():
    assert lai_robbins([0.3, 0.3], 1e3) == 0.0  # no suboptimal arm
    for values in regret_lower_bounds([1.0, 0.4, 0.0], 0.5, 1e3).values():
        assert values == 0.0  # no Bernoulli law beats a mean of 1: no alternative, no regret
    b = regret_lower_bounds([0.6, 0.0], 0.5, 1e3)  # an arm at 0 is fine
    assert all(math.isfinite(v) and v > 0 for v in b.values())
    assert np.ndim(lai_robbins([0.5, 0.25], 10)) == 0
    assert lai_robbins([0.5, 0.25], 1) == 0.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: azize_basu([0.5, 0.2], 0.0, 10), "epsilon"),
        (lambda: azize_2025([0.5, 0.2], -1.0, 10), "epsilon"),
        (lambda: shariff_sheffet([0.5, 0.2], math.nan, 10), "epsilon"),
        (lambda: lai_robbins([0.5, 1.2], 10), "means"),
        (lambda: azize_2025([-0.1, 0.2], 1.0, 10), "means"),
        (lambda: lai_robbins([0.5], 10), "means"),
        (lambda: lai_robbins([[0.5, 0.2]], 10), "means"),
        (lambda: lai_robbins([0.5, 0.2], 0.5), "horizon"),
        (lambda: lai_robbins([0.5, 0.2], [10, 0]), "horizon"),
        (lambda: lai_robbins([0.5, 0.2], 10, arm="poisson"), "arm"),
        (lambda: lai_robbins([0.5, 0.2], 10, sds=[1, 1]), "sds"),
        (lambda: lai_robbins([0.5, 0.2], 10, arm="gaussian"), "sds"),
        (lambda: azize_basu([0.5, 0.2], 1.0, 10, arm="gaussian", sds=[1, 0]), "sds"),
        (lambda: d_epsilon_bernoulli(0.2, 1.5, 1.0), "y"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_bad_types():
    with pytest.raises(TypeError, match="epsilon"):
        azize_basu([0.5, 0.2], "1", 10)
    with pytest.raises(TypeError, match="arm"):
        lai_robbins([0.5, 0.2], 10, arm=None)


# -- on a run's results and plots -------------------------------------------------------------
PIECEWISE_BERNOULLI = {
    "id": "dpbandits/PiecewiseBandit-v0",
    "horizon": 300,
    "arm": "bernoulli",
    "segments": [(0, [0.3, 0.6, 0.5]), (100, [0.7, 0.2, 0.5])],
}


@pytest.fixture(scope="module")
def bernoulli_results():
    return run(PIECEWISE_BERNOULLI, {"UCB": "ucb"}, n_runs=2, seed=0, n_jobs=1, progress=False)


def test_results_record_the_arms_laws(bernoulli_results, tmp_path):
    assert bernoulli_results.config["arms"] == {
        "arm": "bernoulli", "lo": 0.0, "hi": 1.0, "sds": None,
        "means": [[0.3, 0.6, 0.5], [0.7, 0.2, 0.5]],
    }  # fmt: skip
    from dpbandits.experiments.results import Results

    assert Results.load(bernoulli_results.save(tmp_path / "r.npz")).equals(bernoulli_results)
    shift = run({"id": "dpbandits/TwoArmedShift-v0", "t_shift": 60, "horizon": 100},
                {"UCB": "ucb"}, n_runs=1, n_jobs=1, progress=False)  # fmt: skip
    assert shift.config["arms"]["arm"] == "gaussian"
    assert shift.config["arms"]["sds"] == [[0.1, 0.3], [0.3, 0.1]]
    drift = run({"id": "dpbandits/DriftingBandit-v0", "horizon": 100}, {"UCB": "ucb"},
                n_runs=1, n_jobs=1, progress=False)  # fmt: skip
    assert drift.config["arms"] is None
    with pytest.raises(ValueError, match="not constant between change points"):
        plotting.plot_cumulative(drift, bounds=True)


def test_plot_draws_the_bounds_per_segment(bernoulli_results):
    res = bernoulli_results
    fig = plotting.plot_cumulative(res, bounds=True, bounds_epsilon=[0.5, 2.0])
    reward_ax, regret_ax = fig.axes
    labels = [line.get_label() for line in regret_ax.get_lines()]
    bounds = [lab for lab in labels if lab.startswith("lower bound")]
    assert len(bounds) == 1 + 2 * 3  # Lai-Robbins, then three private bounds at each eps
    assert sum("Lai & Robbins" in lab for lab in bounds) == 1
    for name in ("Shariff & Sheffet", "Azize & Basu 2022", "Azize et al. 2025"):
        assert sum(name in lab for lab in bounds) == 2
    # every bound drawn is the sum of the two segments' bounds, and its label says so
    assert all(lab.endswith(", summed over 2 segments") for lab in bounds), bounds
    assert not any(x.get_label().startswith("lower bound") for x in reward_ax.get_lines())
    legend = {t.get_text() for t in regret_ax.get_legend().get_texts()}
    assert set(bounds) <= legend
    # the Lai-Robbins curve is the sum of the segments' bounds at their lengths
    line = next(x for x in regret_ax.get_lines() if "Lai & Robbins" in x.get_label())
    c0 = lai_robbins([0.3, 0.6, 0.5], math.e)
    c1 = lai_robbins([0.7, 0.2, 0.5], math.e)
    t = res.steps.astype(float)
    want = np.where(t <= 100, c0 * np.log(np.maximum(t, 1)), c0 * math.log(100)
                    + c1 * np.log(np.maximum(t - 100, 1)))  # fmt: skip
    np.testing.assert_allclose(line.get_ydata(), want, rtol=1e-12)
    plain = plotting.plot_cumulative(res)
    assert not any("lower bound" in x.get_label() for x in plain.axes[1].get_lines())


def test_plot_gaussian_bounds_are_conservative_for_clipping():
    # a Gaussian arm far from the clipping bounds: the curve is the Gaussian bound itself
    res = run({"id": "dpbandits/KArmedGaussian-v0", "horizon": 50, "means": [0.45, 0.55],
               "sds": 0.02}, {"UCB": "ucb"}, n_runs=1, n_jobs=1, progress=False)  # fmt: skip
    curves = {c.key: c for c in bound_curves(res, [0.3])}
    assert set(curves) == {"lai_robbins", "azize_basu_2022"}
    t = res.steps.astype(float)
    np.testing.assert_allclose(curves["lai_robbins"].values,
                               lai_robbins([0.45, 0.55], t, arm="gaussian", sds=0.02),
                               rtol=1e-9)  # fmt: skip
    # Fig. 9's arms are clipped to [0, 1]: the curve's coefficient is at most the exact one of
    # the clipped-Gaussian class, whose KL (atoms at 0 and 1, density between) is computed here
    fig9 = run({"id": "dpbandits/TwoArmedShift-v0", "t_shift": 60, "horizon": 100},
               {"UCB": "ucb"}, n_runs=1, n_jobs=1, progress=False)  # fmt: skip
    lr = next(c for c in bound_curves(fig9, []) if c.key == "lai_robbins")
    c_curve = lr.values[fig9.steps == 60][0] / math.log(60)  # first segment: c log t
    m, s, best = 0.2, 0.1, float(expected_clipped_normal(0.8, 0.3))
    gap = best - float(expected_clipped_normal(m, s))
    m_alt = brentq(lambda x: float(expected_clipped_normal(x, s)) - best, m, 2.0, xtol=1e-13)
    assert gap / c_curve == pytest.approx((m_alt - m) ** 2 / (2 * s**2), rel=1e-9)
    assert c_curve <= gap / clipped_gaussian_kl(m, m_alt, s)


def clipped_gaussian_kl(m1: float, m2: float, s: float) -> float:
    """KL between clip(N(m1, s^2), 0, 1) and clip(N(m2, s^2), 0, 1), by quadrature."""
    atoms = sum(
        p * math.log(p / q)
        for p, q in (
            (norm.cdf(-m1 / s), norm.cdf(-m2 / s)),
            (norm.sf((1 - m1) / s), norm.sf((1 - m2) / s)),
        )  # fmt: skip
        if p > 0
    )
    inner = quad(lambda x: norm.pdf(x, m1, s) * (norm.logpdf(x, m1, s) - norm.logpdf(x, m2, s)),
                 0.0, 1.0, epsabs=1e-13)[0]  # fmt: skip
    return atoms + inner


def test_plot_bounds_refuses_what_it_cannot_draw(bernoulli_results):
    with pytest.raises(ValueError, match="regret"):
        plotting.plot_cumulative(bernoulli_results, what="reward", bounds=True)
    with pytest.raises(ValueError, match="bounds_epsilon"):
        plotting.plot_cumulative(bernoulli_results, bounds=True, bounds_epsilon=0)
    with pytest.raises(TypeError, match="bounds"):
        plotting.plot_cumulative(bernoulli_results, bounds="yes")
    with pytest.raises(TypeError, match="bounds_epsilon"):
        plotting.plot_cumulative(bernoulli_results, bounds=True, bounds_epsilon="1")
    fig = plotting.plot_cumulative(bernoulli_results, bounds=True, bounds_epsilon=np.array([1.0]))
    assert sum("lower bound" in x.get_label() for x in fig.axes[1].get_lines()) == 4
    old = type(bernoulli_results)(
        config={k: v for k, v in bernoulli_results.config.items() if k != "arms"},
        labels=bernoulli_results.labels, arrays=bernoulli_results.arrays,
        data=bernoulli_results.data, privacy=bernoulli_results.privacy,
    )  # fmt: skip
    plotting.plot_cumulative(old)  # files written before the record still plot
    with pytest.raises(ValueError, match="earlier version"):
        plotting.plot_cumulative(old, bounds=True)


def test_cli_bounds_flag(tmp_path, monkeypatch, capsys):
    drawn = []
    original = plotting.plot_cumulative

    def spy(results, *args, **kwargs):
        fig = original(results, *args, **kwargs)
        drawn.append((kwargs, fig))
        return fig

    monkeypatch.setattr(plotting, "plot_cumulative", spy)
    common = ["--runs", "1", "--jobs", "1", "--no-progress", "--bounds"]
    assert main(["run", "--env", "dpbandits/KArmedBernoulli-v0", "--env-arg", "horizon=100",
                 "--env-arg", "means=[0.3, 0.6]", "--agent", "UCB=ucb", "--bounds-eps", "0.5",
                 "--out", str(tmp_path / "r"), *common]) == 0  # fmt: skip
    assert main(["shift", "--horizon", "100", "--t-shift", "50", "--agent", "UCB",
                 "--out", str(tmp_path / "s"), *common]) == 0  # fmt: skip
    assert (tmp_path / "r" / "cumulative.png").is_file()
    assert (tmp_path / "s" / "fig9a_cumulative.png").is_file()
    (run_kw, run_fig), (shift_kw, shift_fig) = drawn
    assert run_kw == {"bounds": True, "bounds_epsilon": [0.5]}
    assert shift_kw == {"bounds": True, "bounds_epsilon": [1.0]}
    run_labels = [x.get_label() for x in run_fig.axes[1].get_lines()]
    assert "lower bound: Azize et al. 2025, ε=0.5" in run_labels
    shift_labels = [x.get_label() for x in shift_fig.axes[1].get_lines()]
    assert "lower bound: Azize & Basu 2022, ε=1, summed over 2 segments" in shift_labels
    assert "lower bound: Lai & Robbins 1985, summed over 2 segments" in shift_labels
    capsys.readouterr()
    # refused before any work: a drifting environment, --no-plots, a bad eps
    assert main(["run", "--env", "dpbandits/DriftingBandit-v0", "--env-arg", "horizon=100",
                 "--agent", "UCB=ucb", "--out", str(tmp_path / "d"), *common]) != 0  # fmt: skip
    assert "no regret lower bound applies" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
    assert main(["shift", "--no-plots", "--out", str(tmp_path / "n"), *common]) != 0
    assert "--no-plots" in capsys.readouterr().err
    assert main(["shift", "--bounds-eps", "-1", "--out", str(tmp_path / "e"), *common]) != 0
    assert "--bounds-eps" in capsys.readouterr().err


def test_bounds_far_below_the_regret_get_a_log_axis(bernoulli_results):
    """``--bounds`` drew the c log T bounds flat at 0 under regrets of thousands: when they end
    below 5% of the largest regret the regret axis is logarithmic, else it stays linear."""
    res = bernoulli_results
    fig = plotting.plot_cumulative(res, bounds=True)
    regret_ax = fig.axes[1]
    top = max(float(res.data[a]["regret"].mean(axis=1)[-1]) for a in res.labels)
    ends = [x.get_ydata()[-1] for x in regret_ax.get_lines()
            if x.get_label().startswith("lower bound")]  # fmt: skip
    expected = "log" if max(ends) < 0.05 * top else "linear"
    assert regret_ax.get_yscale() == expected
    assert regret_ax.get_ylim()[0] > 0 or expected == "linear"
