"""Gaussian score laws: scenarios 4-6 and the increasing-correlation family (§VI-c, Fig. 5;
§VI-d, Fig. 6)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from dpbandits.scenarios.base import Correlation, Scenario

__all__ = [
    "GAUSSIAN_SCENARIOS",
    "GaussianScenario",
    "IncreasingCorrelation",
    "NumberedGaussian",
    "Scenario4",
    "Scenario5",
    "Scenario6",
]

#: ``(mu, s)``: mean and standard deviation of every ``P_a``, each ``(K,)``.
MeanSd = tuple[NDArray[np.float64], NDArray[np.float64]]

#: Paper number -> (title, correlation) of the numbered Gaussian scenarios (§VI-c, Fig. 5).
GAUSSIAN_SCENARIOS: dict[str, tuple[str, Correlation]] = {
    "4": ("Scenario 4: N(log a, sigma_a^2), sigma sorted (positive)", "positive"),
    "5": ("Scenario 5: N(0.1 a, (2.3 - 0.02 a)^2) (negative)", "negative"),
    "6": ("Scenario 6: N(mu_a, sigma_a^2), mu ~ U[0,1] (none)", "none"),
}


def _truncated_normal(
    rng: np.random.Generator, size: int, mean: float, sd: float, lo: float, hi: float
) -> NDArray[np.float64]:
    """``N_[lo,hi](mean, sd^2)`` by inverse CDF (exact, one uniform per draw)."""
    from scipy.special import ndtr, ndtri

    a, b = ndtr((lo - mean) / sd), ndtr((hi - mean) / sd)
    u = rng.uniform(a, b, size=size)
    return np.clip(mean + sd * ndtri(u), lo, hi)


@dataclass(frozen=True)
class GaussianScenario(Scenario):
    """``P_a = N(mu_a, s_a^2)`` with per-candidate parameters from :meth:`parameters`."""

    def parameters(self, rng: np.random.Generator) -> MeanSd:
        """Return ``(mu, s)``, each ``(K,)``: mean and standard deviation of every ``P_a``."""
        raise NotImplementedError

    def draw_raw(
        self, n_trials: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        mu, s = self.parameters(rng)
        raw = mu + s * rng.standard_normal((n_trials, self.n_candidates))
        return raw, mu


@dataclass(frozen=True)
class NumberedGaussian(GaussianScenario):
    """A numbered scenario of §VI-c: name, title and correlation from its row of
    :data:`GAUSSIAN_SCENARIOS`; candidates are numbered ``a = 1 .. K``."""

    number: ClassVar[str]

    @property
    def name(self) -> str:
        return self.number

    @property
    def title(self) -> str:
        return GAUSSIAN_SCENARIOS[self.number][0]

    @property
    def correlation(self) -> Correlation:
        return GAUSSIAN_SCENARIOS[self.number][1]

    def candidate_numbers(self) -> NDArray[np.float64]:
        """``a = 1 .. K`` as floats (``log 0`` is undefined, so numbering starts at 1)."""
        return np.arange(1, self.n_candidates + 1, dtype=np.float64)

    def sigmas(self, rng: np.random.Generator) -> NDArray[np.float64]:
        """K draws of ``N_[0.01,0.7](0.5, 1)``, the spread law of scenarios 4 and 6."""
        return _truncated_normal(rng, self.n_candidates, 0.5, 1.0, 0.01, 0.7)


@dataclass(frozen=True)
class Scenario4(NumberedGaussian):
    """Scenario 4 (§VI-c, Fig. 5a), positive correlation.

    Draw K values from ``N_[0.01,0.7](0.5, 1)`` (normal with mean 0.5 and standard deviation 1
    truncated to [0.01, 0.7]), sort them increasingly into ``sigma_1 <= ... <= sigma_K``, and set
    ``P_a = N(log a, sigma_a^2)``. Choice: candidates are numbered ``a = 1 .. K`` (``log 0`` is
    undefined); the second parameter of ``N_[0.01,0.7](0.5; 1)`` is read as the standard
    deviation (it equals the variance here anyway).
    """

    number = "4"

    def parameters(self, rng: np.random.Generator) -> MeanSd:
        return np.log(self.candidate_numbers()), np.sort(self.sigmas(rng))


@dataclass(frozen=True)
class Scenario5(NumberedGaussian):
    """Scenario 5 (§VI-c, Fig. 5b), negative correlation.

    ``P_a = N(0.1 a; 2.3 - 0.02 a)``. Choices: ``a = 1 .. K`` (as in scenario 4); the second
    parameter ``2.3 - 0.02 a`` is read as the *standard deviation* (the paper's notation is
    ambiguous; scenario 4 writes ``sigma^2``, scenario 6 ``sigma``). It stays positive for
    ``K <= 114``.
    """

    number = "5"

    def __post_init__(self) -> None:
        super().__post_init__()
        if 2.3 - 0.02 * self.n_candidates <= 0:
            raise ValueError(
                f"scenario 5 needs n_candidates <= 114 (sd 2.3 - 0.02 a > 0), "
                f"got {self.n_candidates}"
            )

    def parameters(self, rng: np.random.Generator) -> MeanSd:
        a = self.candidate_numbers()
        return 0.1 * a, 2.3 - 0.02 * a


@dataclass(frozen=True)
class Scenario6(NumberedGaussian):
    """Scenario 6 (§VI-c, Fig. 5c), no correlation.

    ``mu_a ~ U[0, 1]`` and ``sigma_a ~ N_[0.01,0.7](0.5, 1)`` independently (sigma drawn first,
    then mu -- our choice of order), ``P_a = N(mu_a, sigma_a^2)`` (sigma read as the standard
    deviation).
    """

    number = "6"

    def parameters(self, rng: np.random.Generator) -> MeanSd:
        sigma = self.sigmas(rng)
        return rng.uniform(0.0, 1.0, size=self.n_candidates), sigma


@dataclass(frozen=True)
class IncreasingCorrelation(GaussianScenario):
    """The increasing-correlation family (§VI-d, Fig. 6), indexed by ``t``.

    The paper's text ("sample ``x_a, z_a ~ N(0, 1)`` and define ``P_a = {(t x + z)/5} -
    min_a{(t x + z)/5}``") is garbled; we read it within the §VI-a design as

        ``P_a = N(x_a, s_a^2)``,  ``s_a = max((t x_a + z_a)/5 - min_b (t x_b + z_b)/5, floor)``,

    i.e. ``x_a`` is the mean score and the shifted linear expression is the spread of ``P_a``,
    so that the sensitivity (quantile spread, about ``2.56 s_a``) is linear in the mean score
    with slope ``t/5`` plus noise: the Spearman correlation goes from negative (t = -5) to
    positive (t = 5), as the paper states. ``floor`` (default 0.01) keeps the argmin candidate,
    whose spread would be exactly 0, non-degenerate. ``x`` is drawn before ``z``.
    """

    t: float = 0.0
    floor: float = 0.01

    def __post_init__(self) -> None:
        super().__post_init__()
        if not math.isfinite(float(self.t)):
            raise ValueError(f"t must be finite, got {self.t}")
        if not (math.isfinite(float(self.floor)) and self.floor > 0):
            raise ValueError(f"floor must be finite and > 0, got {self.floor}")

    @property
    def name(self) -> str:
        return f"corr:t={self.t:g}"

    @property
    def title(self) -> str:
        return f"Increasing correlation, t = {self.t:g}"

    @property
    def correlation(self) -> Correlation:
        return "positive" if self.t > 0 else ("negative" if self.t < 0 else "none")

    def parameters(self, rng: np.random.Generator) -> MeanSd:
        x = rng.standard_normal(self.n_candidates)
        z = rng.standard_normal(self.n_candidates)
        v = (self.t * x + z) / 5.0
        return x, np.maximum(v - v.min(), self.floor)
