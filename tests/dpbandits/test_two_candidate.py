"""Two-candidate maps HG(M, M') (§V-A, Figs. 2, 10-12; closed form closed forms)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpbandits.scenarios import two_candidate as hg
from tests.stats import P_MIN

D1 = np.array([0.3, 0.8, 1.5])
D2 = np.array([0.4, 1.0, 2.0])


def bonferroni_z(n_cells: int) -> float:
    """Two-sided |z| threshold so that all n_cells pass together with probability 1 - P_MIN."""
    return float(stats.norm.isf(P_MIN / (2 * n_cells)))


def test_closed_forms_match_the_paper_formulas():
    eps, g = 0.7, 1.3
    d1, d2 = 0.5, 2.0
    assert hg.rnm_error_probability(0, g, d1, d2, eps) == pytest.approx(
        0.5 * np.exp(-eps * g / (2 * max(d1, d2)))
    )
    assert hg.rnmh_error_probability(0, g, d1, d2, eps) == pytest.approx(
        np.exp(-eps * g / (2 * d1)) / (1 + d2 / d1)
    )
    # RNMH = RNM when the sensitivities are equal.
    assert hg.rnmh_error_probability(0, g, 1.0, 1.0, eps) == pytest.approx(
        hg.rnm_error_probability(0, g, 1.0, 1.0, eps)
    )
    assert hg.error_probability("krr", 0, g, d1, d2, eps) == pytest.approx(1 / (np.exp(eps) + 1))


def test_hg_rnm_rnmh_sign_follows_section_v_a():
    """HG(RNM, RNMH) > 0 for d1 < d2 and < 0 for d1 > d2 (§V-A)."""
    grid = np.linspace(0.1, 3.0, 30)
    m = hg.hg_closed_map("rnm", "rnmh", grid, grid, epsilon=0.5)
    d1, d2 = np.meshgrid(grid, grid)
    assert np.all(m.hg[d1 < d2] > 0)
    assert np.all(m.hg[d1 > d2] < 0)
    assert np.allclose(m.hg[d1 == d2], 0)


@pytest.mark.parametrize(
    ("name", "eps", "gap"),
    [("rnm", 0.5, 1.0), ("rnmh", 0.5, 1.0), ("rnm", 3.0, 0.2), ("rnmh", 3.0, 0.2)],
)
def test_monte_carlo_error_rate_equals_closed_form(name, eps, gap):
    n = 20_000
    rate, se = hg.error_rate(name, D1, D2, eps, 0.0, gap, n_draws=n, seed=3)
    d1, d2 = np.meshgrid(D1, D2)
    p = hg.error_probability(name, 0.0, gap, d1, d2, eps)
    z = (rate - p) / np.sqrt(p * (1 - p) / n)
    assert np.max(np.abs(z)) < bonferroni_z(z.size), f"z = {np.round(z, 2)}"


def test_monte_carlo_hg_map_equals_closed_form_map():
    n = 20_000
    mc = hg.hg_map("rnm", "rnmh", D1, D2, 0.4, 0.0, 1.0, n_draws=n, seed=5)
    cf = hg.hg_closed_map("rnm", "rnmh", D1, D2, 0.4, 0.0, 1.0)
    var = (cf.error_m * (1 - cf.error_m) + cf.error_m2 * (1 - cf.error_m2)) / n
    z = (mc.hg - cf.hg) / np.sqrt(var)
    assert np.max(np.abs(z)) < bonferroni_z(z.size), f"z = {np.round(z, 2)}"
    # The Monte Carlo map is reproducible from its seed.
    again = hg.hg_map("rnm", "rnmh", D1, D2, 0.4, 0.0, 1.0, n_draws=n, seed=5)
    np.testing.assert_array_equal(mc.hg, again.hg)


def test_gem_two_candidate_closed_form_against_monte_carlo():
    """Our derived GEM/mGEM closed forms (hg module docstring) against the selectors."""
    n = 20_000
    for name in ("gem", "mgem"):
        rate, _ = hg.error_rate(name, D1, D2, 2.0, 0.0, 1.0, n_draws=n, seed=7)
        d1, d2 = np.meshgrid(D1, D2)
        p = hg.error_probability(name, 0.0, 1.0, d1, d2, 2.0)
        z = (rate - p) / np.sqrt(p * (1 - p) / n)
        assert np.max(np.abs(z)) < bonferroni_z(2 * z.size), f"{name}: z = {np.round(z, 2)}"


def test_rs_follows_the_rnmh_pattern_of_figure_2():
    """Fig. 2: HG(RNM, RS_0.01) has the sign of HG(RNM, RNMH) far from the diagonal."""
    grid = np.array([0.2, 2.0])
    m = hg.hg_map("rnm", "rs:gamma=0.01", grid, grid, 0.1, 0.0, 1.0, n_draws=20_000, seed=9)
    # d1 = 0.2 < d2 = 2: RS better (HG > 0); d1 = 2 > d2 = 0.2: RNM better (HG < 0).
    assert m.hg[1, 0] > 5 * m.se[1, 0]
    assert m.hg[0, 1] < -5 * m.se[0, 1]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"q1": 1.0, "q2": 1.0}, "q1 < q2"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"d1": [0.0, 1.0]}, "d1"),
        ({"d2": []}, "d2"),
    ],
)
def test_hg_bad_input(kwargs, match):
    args = {"d1": D1, "d2": D2, "epsilon": 1.0, "q1": 0.0, "q2": 1.0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        hg.hg_closed_map("rnm", "rnmh", **args)
    with pytest.raises(ValueError, match="no closed form"):
        hg.error_probability("rs", 0, 1, 1, 1, 1.0)


def test_gem_and_mgem_two_candidate_behaviour_of_section_v_a():
    """§V-A: GEM favours the wrong candidate (worse than random) when d1 < d2 and beats RNM
    when d1 > d2; mGEM the reverse. Checked on the closed forms at eps = 0.1, which the test
    above matches against the selectors."""
    grid = np.linspace(0.1, 2.0, 20)
    d1, d2 = np.meshgrid(grid, grid)
    rnm = hg.rnm_error_probability(0.0, 1.0, d1, d2, 0.1)
    gem = hg.error_probability("gem", 0.0, 1.0, d1, d2, 0.1)
    mgem = hg.error_probability("mgem", 0.0, 1.0, d1, d2, 0.1)
    up, low = d1 < d2, d1 > d2
    assert np.all(gem[up] > 0.5) and np.all(gem[low] < rnm[low])
    assert np.all(mgem[low] > 0.5) and np.all(mgem[up] < rnm[up])
