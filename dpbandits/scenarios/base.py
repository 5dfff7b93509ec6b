"""What a selection scenario is: the :class:`Scenario` recipe and the :class:`ScenarioData` it
draws (§VI-a)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits.core import checks

__all__ = [
    "Arrays",
    "ConstantScenario",
    "Correlation",
    "Scenario",
    "ScenarioData",
    "check_quantiles",
]

Correlation = Literal["positive", "negative", "none", "mixed"]
#: ``(scores, sensitivities, lower, upper, centers)`` of the N trials: the fields of
#: :class:`ScenarioData` between its title and its groups, in their order.
Arrays = tuple[
    NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
    NDArray[np.float64],
]  # fmt: skip


def check_quantiles(quantiles: tuple[float, float]) -> tuple[float, float]:
    """The two quantile levels ``lo < hi`` in ``[0, 1]`` whose spread is the sensitivity."""
    lo, hi = (checks.number(v, "quantiles") for v in quantiles)
    if not (0.0 <= lo < hi <= 1.0):
        raise ValueError(f"quantiles must satisfy 0 <= lo < hi <= 1, got {quantiles}")
    return lo, hi


@dataclass(frozen=True)
class ScenarioData:
    """The N trials of one scenario, ready for the selectors.

    Attributes
    ----------
    name, title:
        The scenario's short name (e.g. ``"1"``) and a one-line description.
    scores:
        ``(n_trials, K)`` clipped scores; row ``i`` is trial ``i``.
    sensitivities:
        ``(K,)`` candidate-wise sensitivities ``Delta_a`` (constant over trials, §VI-a).
    lower, upper:
        ``(K,)`` clipping range of each candidate (``upper - lower == sensitivities`` for
        quantile-based scenarios; for the bimodal ones the range is centred on the score).
    centers:
        ``(K,)`` location of ``P_a`` (its mean before clipping) -- the red dots of Fig. 5.
    groups:
        ``(n_trials,)`` user group of each trial for scenarios 7-8, else ``None``.
    """

    name: str
    title: str
    scores: NDArray[np.float64]
    sensitivities: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    centers: NDArray[np.float64]
    groups: NDArray[np.int64] | None = None

    @property
    def n_trials(self) -> int:
        return int(self.scores.shape[0])

    @property
    def n_candidates(self) -> int:
        return int(self.scores.shape[1])

    def candidate_arrays(self) -> dict[str, NDArray[np.float64]]:
        """The ``(K,)`` per-candidate arrays as float64: centres, clipping range, sensitivities."""
        return {
            key: np.asarray(getattr(self, key), dtype=np.float64)
            for key in ("centers", "lower", "upper", "sensitivities")
        }


@dataclass(frozen=True)
class Scenario:
    """Base class: subclasses implement :meth:`draw_raw` (raw scores and centres).

    The default :meth:`sample` follows §VI-a: ``Delta_a`` = spread between the ``quantiles`` of
    candidate a's N raw scores (numpy's default linear interpolation -- the paper does not say
    which quantile estimator it used), and scores are clipped to that range.
    """

    n_candidates: int = 100
    quantiles: tuple[float, float] = (0.1, 0.9)

    # Overridden by subclasses (class-level metadata, not constructor arguments).
    @property
    def name(self) -> str:
        raise NotImplementedError(
            f"{type(self).__name__} is an abstract base: use a concrete scenario "
            "(dpbandits.scenarios.get(name)) or subclass it and define name and draw_raw"
        )

    @property
    def title(self) -> str:
        return self.name

    @property
    def correlation(self) -> Correlation:
        """The sign of the score/sensitivity correlation the paper assigns to the scenario."""
        raise NotImplementedError

    @property
    def default_trials(self) -> int:
        return 10_000

    def __post_init__(self) -> None:
        if isinstance(self.n_candidates, bool) or not isinstance(
            self.n_candidates, (int, np.integer)
        ):
            raise TypeError(f"n_candidates must be an int, got {type(self.n_candidates).__name__}")
        if self.n_candidates < 2:
            raise ValueError(f"n_candidates must be >= 2, got {self.n_candidates}")
        check_quantiles(self.quantiles)

    def draw_raw(
        self, n_trials: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Return raw ``(n_trials, K)`` scores and the ``(K,)`` centres of the ``P_a``."""
        raise NotImplementedError

    def trial_groups(self, n_trials: int) -> NDArray[np.int64] | None:
        """The user group of each trial (scenarios 7-8), else ``None``."""
        return None

    def arrays(self, n_trials: int, seed: int | np.random.Generator | None) -> Arrays:
        """The arrays of :meth:`sample` for ``n_trials`` (already checked) trials."""
        if n_trials < 2:
            # One trial gives a zero quantile spread, i.e. a zero sensitivity.
            raise ValueError(f"n_trials must be >= 2 for a quantile-based scenario, got {n_trials}")
        rng = checks.generator(seed, "seed")
        raw, centers = self.draw_raw(n_trials, rng)
        qlo, qhi = check_quantiles(self.quantiles)
        lower, upper = np.quantile(raw, [qlo, qhi], axis=0)
        d = upper - lower
        if not np.all(d > 0):
            bad = int(np.flatnonzero(~(d > 0))[0])
            raise ValueError(
                f"scenario {self.name}: candidate {bad} has a zero quantile spread "
                "(degenerate score distribution); use more trials"
            )
        return np.clip(raw, lower, upper), d, lower, upper, centers

    def sample(
        self, n_trials: int | None = None, seed: int | np.random.Generator | None = 0
    ) -> ScenarioData:
        """Draw the N trials: clipped scores ``(n_trials, K)`` and sensitivities ``(K,)``."""
        n = self.default_trials if n_trials is None else checks.positive_int(n_trials, "n_trials")
        # raw, clipped and the quantiles' sorted copies: several (n_trials, K) arrays
        checks.memory(8 * n * self.n_candidates, f"n_trials * n_candidates = {n} * "
                      f"{self.n_candidates}")  # fmt: skip
        # arrays() returns the fields of ScenarioData from scores to centers, in order
        return ScenarioData(self.name, self.title, *self.arrays(n, seed), self.trial_groups(n))


@dataclass(frozen=True)
class ConstantScenario(Scenario):
    """A scenario with given scores and sensitivities (§VI-b: "there is no variability").

    Every trial has the same scores :meth:`parameters`; the clipping range is
    ``q_a +- Delta_a / 2`` (clipping is a no-op) and ``quantiles`` is unused.
    """

    def parameters(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The constant scores ``(K,)`` and sensitivities ``(K,)``."""
        raise NotImplementedError

    def arrays(self, n_trials: int, seed: int | np.random.Generator | None) -> Arrays:
        q, d = self.parameters()
        return np.tile(q, (n_trials, 1)), d, q - d / 2, q + d / 2, q
