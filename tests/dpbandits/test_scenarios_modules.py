"""The scenario families behind the catalogue: shared bases, tables and public hooks (§VI-a)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dpbandits import scenarios
from dpbandits.scenarios.base import ConstantScenario, Scenario, ScenarioData
from dpbandits.scenarios.exceptional import Exceptional
from dpbandits.scenarios.exceptional_figures import selection_probabilities
from dpbandits.scenarios.gaussian import GAUSSIAN_SCENARIOS, NumberedGaussian
from dpbandits.scenarios.groups import PAPER_GROUPS, TwoGroups


@dataclass(frozen=True)
class Uniform(Scenario):
    """A user's scenario written against the public hook: ``P_a = U[0, a + 1]``."""

    @property
    def name(self) -> str:
        return "uniform"

    def draw_raw(self, n_trials: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        width = np.arange(1, self.n_candidates + 1, dtype=np.float64)
        return rng.uniform(0.0, width, size=(n_trials, self.n_candidates)), width / 2


def test_catalogue_re_exports_every_family() -> None:
    from dpbandits.scenarios import bimodal as scenarios_bimodal
    from dpbandits.scenarios import gaussian as scenarios_gaussian

    assert scenarios.Bimodal is scenarios_bimodal.Bimodal
    assert scenarios.Scenario4 is scenarios_gaussian.Scenario4
    assert scenarios.TwoGroups is TwoGroups and scenarios.ScenarioData is ScenarioData
    assert isinstance(scenarios.get("exc1"), ConstantScenario)
    assert isinstance(scenarios.get(1), ConstantScenario)


@pytest.mark.parametrize("number", list(GAUSSIAN_SCENARIOS))
def test_numbered_gaussian_scenarios_come_from_their_table_row(number: str) -> None:
    sc = scenarios.get(number)
    assert isinstance(sc, NumberedGaussian) and type(sc).__name__ == f"Scenario{number}"
    assert (sc.name, sc.title, sc.correlation) == (number, *GAUSSIAN_SCENARIOS[number])
    assert sc.sample(50, seed=0).title == GAUSSIAN_SCENARIOS[number][0]


def test_paper_groups_name_scenarios_7_and_8_only_in_the_papers_setting() -> None:
    for sigma, (number, strength) in PAPER_GROUPS.items():
        assert TwoGroups(sigma=sigma).name == number
        assert TwoGroups(sigma=sigma).title.startswith(f"Scenario {number}: two groups, {strength}")
        assert TwoGroups(sigma=sigma, n_candidates=50).name == f"groups:sigma={sigma:g}"
    assert TwoGroups(sigma=1.5).title == "two groups, polarisation, sigma = 1.5"


@pytest.mark.parametrize("sc", [Exceptional(kind=2), scenarios.get("2:p=0.3")], ids=repr)
def test_constant_scenarios_repeat_their_parameters_in_every_trial(sc: ConstantScenario) -> None:
    q, d = sc.parameters()
    data = sc.sample(1)  # one trial is enough: nothing is estimated
    assert data.n_trials == 1 and data.groups is None
    np.testing.assert_array_equal(sc.sample(4).scores, np.tile(q, (4, 1)))
    np.testing.assert_array_equal(data.sensitivities, d)
    np.testing.assert_array_equal(data.lower, q - d / 2)
    np.testing.assert_array_equal(data.upper, q + d / 2)
    np.testing.assert_array_equal(data.centers, q)
    with pytest.raises(ValueError, match="n_trials must be >= 1, got 0"):
        sc.sample(0)
    with pytest.raises(TypeError, match="n_trials must be an integer"):
        sc.sample(True)


def test_selection_probabilities_name_n_draws_in_their_error() -> None:
    with pytest.raises(ValueError, match="n_draws must be >= 1"):
        selection_probabilities("exc1", "rnm", n_draws=0)


def test_a_users_scenario_gets_quantile_sensitivities_and_clipping() -> None:
    sc = Uniform(n_candidates=4)
    data = sc.sample(4000, seed=1)
    raw, _ = sc.draw_raw(4000, np.random.default_rng(1))
    lo, hi = np.quantile(raw, [0.1, 0.9], axis=0)
    np.testing.assert_array_equal(data.sensitivities, hi - lo)
    np.testing.assert_array_equal(data.scores, np.clip(raw, lo, hi))
    # the 10-90 spread of U[0, w] is 0.8 w; each sample quantile has sd sqrt(0.09 / 4000) w,
    # so the spread's relative sd is below 1%: 5% is more than 5 sd
    np.testing.assert_allclose(data.sensitivities, 0.8 * np.arange(1, 5), rtol=0.05)
    arrays = data.candidate_arrays()
    assert list(arrays) == ["centers", "lower", "upper", "sensitivities"]
    np.testing.assert_array_equal(arrays["upper"] - arrays["lower"], data.sensitivities)
    with pytest.raises(ValueError, match="n_trials must be >= 2 for a quantile-based"):
        sc.sample(1)
