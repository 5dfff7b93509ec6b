"""The paper's synthetic selection scenarios (§VI, App. E, App. F; §VI, App. H).

A *scenario* is a recipe for the pairs ``{(q_a, Delta_a)}`` of K candidates. Following the
experimental design of §VI-a, each candidate ``a`` has a score distribution ``P_a``; ``N``
trials draw one score per candidate each; the sensitivity ``Delta_a`` is the spread between two
quantiles (default the 10th and 90th, §VI-a; the short version uses 5th/95th) of candidate a's
``N`` sampled scores, and every score is clipped to that range. The error of a trial is then
``max_a q_a - q_selected`` on the clipped scores (see :mod:`dpbandits.evaluation`).

Scenarios, numbered as in the paper:

=====================  =======================================================  ============
name                   score distribution (K = 100)                             correlation
=====================  =======================================================  ============
``1``                  bimodal: high scores 1 with Delta 1.8, low -1 with 1     positive
``2``                  bimodal: high scores 1 with Delta 1, low -1 with 1.8     negative
``3``                  bimodal: each group half Delta 1.8, half Delta 1         none
``4``                  ``N(log a, sigma_a^2)``, ``sigma`` sorted truncated      positive
``5``                  ``N(0.1 a, (2.3 - 0.02 a)^2)``                           negative
``6``                  ``N(mu_a, sigma_a^2)``, ``mu ~ U[0,1]``, sigma trunc.   none
``7`` / ``8``          two user groups with opposite slopes, sigma 0.5 / 3     mixed
``corr:t=<t>``         increasing-correlation family of Fig. 6                 sign of t
``<k>:p=<p>``          bimodal scenario k in {1,2,3} with a fraction p of high  as k
                       scores (App. E, Fig. 13)
=====================  =======================================================  ============

Every generator is deterministic given its seed: ``scenario.sample(n_trials, seed)`` first draws
the scenario's own random parameters (e.g. the ``sigma_a`` of scenario 4) and then the scores,
from one :class:`numpy.random.Generator`; so the parameters do not depend on ``n_trials``.

Choices where the paper is open are stated in each class's docstring.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits import checks

__all__ = [
    "PAPER_EPSILONS",
    "CORRELATION_FAMILY_T",
    "FIG13_PROPORTIONS",
    "FIGURES",
    "Scenario",
    "ScenarioData",
    "Bimodal",
    "GaussianScenario",
    "Scenario4",
    "Scenario5",
    "Scenario6",
    "IncreasingCorrelation",
    "TwoGroups",
    "get",
    "available",
    "figure_scenarios",
    "register",
]

#: The paper's eps grid: 12 values, log-spaced from 0.01 to 16 (§VI, App. H).
PAPER_EPSILONS: NDArray[np.float64] = np.geomspace(0.01, 16.0, 12)
#: The values of t of the increasing-correlation family (§VI-d, Fig. 6).
CORRELATION_FAMILY_T: tuple[float, ...] = (-5.0, -0.8, -0.3, 0.0, 0.3, 0.8, 5.0)
#: Fractions of high scores for the proportion sweep (App. E, Fig. 13; the paper gives no grid).
FIG13_PROPORTIONS: tuple[float, ...] = (
    0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99,
)  # fmt: skip

Correlation = Literal["positive", "negative", "none", "mixed"]


def _check_quantiles(quantiles: tuple[float, float]) -> tuple[float, float]:
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


@dataclass(frozen=True)
class Scenario:
    """Base class: subclasses implement :meth:`_draw` (raw scores and centres).

    The default :meth:`sample` follows §VI-a: ``Delta_a`` = spread between the ``quantiles`` of
    candidate a's N raw scores (numpy's default linear interpolation -- the paper does not say
    which quantile estimator it used), and scores are clipped to that range.
    """

    n_candidates: int = 100
    quantiles: tuple[float, float] = (0.1, 0.9)

    # Overridden by subclasses (class-level metadata, not constructor arguments).
    @property
    def name(self) -> str:
        raise NotImplementedError

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
        _check_quantiles(self.quantiles)

    def _draw(
        self, n_trials: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Return raw ``(n_trials, K)`` scores and the ``(K,)`` centres of the ``P_a``."""
        raise NotImplementedError

    def _groups(self, n_trials: int) -> NDArray[np.int64] | None:
        return None

    def sample(
        self, n_trials: int | None = None, seed: int | np.random.Generator | None = 0
    ) -> ScenarioData:
        """Draw the N trials: clipped scores ``(n_trials, K)`` and sensitivities ``(K,)``."""
        n = self.default_trials if n_trials is None else checks.positive_int(n_trials, "n_trials")
        if n < 2:
            # One trial gives a zero quantile spread, i.e. a zero sensitivity.
            raise ValueError(f"n_trials must be >= 2 for a quantile-based scenario, got {n}")
        rng = np.random.default_rng(seed)
        raw, centers = self._draw(n, rng)
        qlo, qhi = _check_quantiles(self.quantiles)
        lower, upper = np.quantile(raw, [qlo, qhi], axis=0)
        d = upper - lower
        if not np.all(d > 0):
            bad = int(np.flatnonzero(~(d > 0))[0])
            raise ValueError(
                f"scenario {self.name}: candidate {bad} has a zero quantile spread "
                "(degenerate score distribution); use more trials"
            )
        scores = np.clip(raw, lower, upper)
        return ScenarioData(
            name=self.name,
            title=self.title,
            scores=scores,
            sensitivities=d,
            lower=lower,
            upper=upper,
            centers=centers,
            groups=self._groups(n),
        )


# --------------------------------------------------------------------------------------------
# Scenarios 1-3 and the proportion sweep: bimodal scores (§VI-b, Fig. 1; App. E, Fig. 13)
# --------------------------------------------------------------------------------------------

_BIMODAL_KIND = {"positive": 1, "negative": 2, "none": 3}


@dataclass(frozen=True)
class Bimodal(Scenario):
    """Bimodal scores, scenarios 1-3 (§VI-b, Fig. 1) and App. E (Fig. 13).

    A fraction ``proportion`` of the K candidates has the high score ``high`` (1), the others
    the low score ``low`` (-1). Sensitivities are ``d_large`` (1.8) or ``d_small`` (1):

    - ``positive`` (scenario 1): high scores have ``d_large``, low scores ``d_small``;
    - ``negative`` (scenario 2): high scores have ``d_small``, low scores ``d_large``;
    - ``none`` (scenario 3): within each group, alternately ``d_large``, ``d_small``, ...,
      starting with ``d_large`` (so each group of even size has an equal share).

    Choices where the paper is open: scores and sensitivities are *given*, not estimated from
    quantiles ("there is no variability in the scores and sensitivities", §VI-b), so every
    trial has the same scores and the clipping range is ``score +- Delta/2`` (clipping is a
    no-op). The number of high candidates is ``round(proportion * K)`` and must be between 1
    and K - 1. Low-score candidates come first (indices ``0 .. K - n_high - 1``), as in the
    example of §I eq. (5); the order does not matter to any selector. ``quantiles`` is unused.
    """

    kind: Literal["positive", "negative", "none"] = "positive"
    proportion: float = 0.5
    high: float = 1.0
    low: float = -1.0
    d_large: float = 1.8
    d_small: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.kind not in _BIMODAL_KIND:
            raise ValueError(f"kind must be one of {sorted(_BIMODAL_KIND)}, got {self.kind!r}")
        if not (0.0 < float(self.proportion) < 1.0):
            raise ValueError(f"proportion must be in (0, 1), got {self.proportion}")
        n_high = self.n_high
        if not (1 <= n_high <= self.n_candidates - 1):
            raise ValueError(
                f"proportion {self.proportion} gives {n_high} high candidates out of "
                f"{self.n_candidates}; need between 1 and {self.n_candidates - 1}"
            )
        if not (math.isfinite(self.high) and math.isfinite(self.low) and self.low < self.high):
            raise ValueError(f"need finite low < high, got low={self.low}, high={self.high}")
        for nm in ("d_large", "d_small"):
            v = float(getattr(self, nm))
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"{nm} must be finite and > 0, got {v}")

    @property
    def n_high(self) -> int:
        return int(round(float(self.proportion) * self.n_candidates))

    @property
    def name(self) -> str:
        k = _BIMODAL_KIND[self.kind]
        if self.proportion == 0.5 and self.n_candidates == 100 and self._is_paper():
            return str(k)
        return f"{k}:p={self.proportion:g}"

    def _is_paper(self) -> bool:
        return (self.high, self.low, self.d_large, self.d_small) == (1.0, -1.0, 1.8, 1.0)

    @property
    def title(self) -> str:
        label = {"positive": "positive", "negative": "negative", "none": "no"}[self.kind]
        return (
            f"Scenario {_BIMODAL_KIND[self.kind]}: bimodal, {label} correlation, "
            f"{self.n_high}/{self.n_candidates} high"
        )

    @property
    def correlation(self) -> Correlation:
        return self.kind

    def parameters(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The constant scores ``(K,)`` and sensitivities ``(K,)``."""
        k, n_high = self.n_candidates, self.n_high
        n_low = k - n_high
        q = np.concatenate([np.full(n_low, self.low), np.full(n_high, self.high)])
        if self.kind == "positive":
            d = np.concatenate([np.full(n_low, self.d_small), np.full(n_high, self.d_large)])
        elif self.kind == "negative":
            d = np.concatenate([np.full(n_low, self.d_large), np.full(n_high, self.d_small)])
        else:

            def alternate(m: int) -> NDArray[np.float64]:
                return np.where(np.arange(m) % 2 == 0, self.d_large, self.d_small)

            d = np.concatenate([alternate(n_low), alternate(n_high)])
        return q.astype(np.float64), d.astype(np.float64)

    def sample(
        self, n_trials: int | None = None, seed: int | np.random.Generator | None = 0
    ) -> ScenarioData:
        n = self.default_trials if n_trials is None else checks.positive_int(n_trials, "n_trials")
        q, d = self.parameters()
        return ScenarioData(
            name=self.name,
            title=self.title,
            scores=np.tile(q, (n, 1)),
            sensitivities=d,
            lower=q - d / 2,
            upper=q + d / 2,
            centers=q,
        )


# --------------------------------------------------------------------------------------------
# Scenarios 4-6 and the increasing-correlation family: Gaussian P_a (§VI-c, Fig. 5; §VI-d, Fig. 6)
# --------------------------------------------------------------------------------------------


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

    def parameters(
        self, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Return ``(mu, s)``, each ``(K,)``: mean and standard deviation of every ``P_a``."""
        raise NotImplementedError

    def _draw(
        self, n_trials: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        mu, s = self.parameters(rng)
        raw = mu + s * rng.standard_normal((n_trials, self.n_candidates))
        return raw, mu


@dataclass(frozen=True)
class Scenario4(GaussianScenario):
    """Scenario 4 (§VI-c, Fig. 5a), positive correlation.

    Draw K values from ``N_[0.01,0.7](0.5, 1)`` (normal with mean 0.5 and standard deviation 1
    truncated to [0.01, 0.7]), sort them increasingly into ``sigma_1 <= ... <= sigma_K``, and set
    ``P_a = N(log a, sigma_a^2)``. Choice: candidates are numbered ``a = 1 .. K`` (``log 0`` is
    undefined); the second parameter of ``N_[0.01,0.7](0.5; 1)`` is read as the standard
    deviation (it equals the variance here anyway).
    """

    @property
    def name(self) -> str:
        return "4"

    @property
    def title(self) -> str:
        return "Scenario 4: N(log a, sigma_a^2), sigma sorted (positive)"

    @property
    def correlation(self) -> Correlation:
        return "positive"

    def parameters(
        self, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        a = np.arange(1, self.n_candidates + 1, dtype=np.float64)
        sigma = np.sort(_truncated_normal(rng, self.n_candidates, 0.5, 1.0, 0.01, 0.7))
        return np.log(a), sigma


@dataclass(frozen=True)
class Scenario5(GaussianScenario):
    """Scenario 5 (§VI-c, Fig. 5b), negative correlation.

    ``P_a = N(0.1 a; 2.3 - 0.02 a)``. Choices: ``a = 1 .. K`` (as in scenario 4); the second
    parameter ``2.3 - 0.02 a`` is read as the *standard deviation* (the paper's notation is
    ambiguous; scenario 4 writes ``sigma^2``, scenario 6 ``sigma``). It stays positive for
    ``K <= 114``.
    """

    @property
    def name(self) -> str:
        return "5"

    @property
    def title(self) -> str:
        return "Scenario 5: N(0.1 a, (2.3 - 0.02 a)^2) (negative)"

    @property
    def correlation(self) -> Correlation:
        return "negative"

    def __post_init__(self) -> None:
        super().__post_init__()
        if 2.3 - 0.02 * self.n_candidates <= 0:
            raise ValueError(
                f"scenario 5 needs n_candidates <= 114 (sd 2.3 - 0.02 a > 0), "
                f"got {self.n_candidates}"
            )

    def parameters(
        self, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        a = np.arange(1, self.n_candidates + 1, dtype=np.float64)
        return 0.1 * a, 2.3 - 0.02 * a


@dataclass(frozen=True)
class Scenario6(GaussianScenario):
    """Scenario 6 (§VI-c, Fig. 5c), no correlation.

    ``mu_a ~ U[0, 1]`` and ``sigma_a ~ N_[0.01,0.7](0.5, 1)`` independently (sigma drawn first,
    then mu -- our choice of order), ``P_a = N(mu_a, sigma_a^2)`` (sigma read as the standard
    deviation).
    """

    @property
    def name(self) -> str:
        return "6"

    @property
    def title(self) -> str:
        return "Scenario 6: N(mu_a, sigma_a^2), mu ~ U[0,1] (none)"

    @property
    def correlation(self) -> Correlation:
        return "none"

    def parameters(
        self, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        sigma = _truncated_normal(rng, self.n_candidates, 0.5, 1.0, 0.01, 0.7)
        mu = rng.uniform(0.0, 1.0, size=self.n_candidates)
        return mu, sigma


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

    def parameters(
        self, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        x = rng.standard_normal(self.n_candidates)
        z = rng.standard_normal(self.n_candidates)
        v = (self.t * x + z) / 5.0
        return x, np.maximum(v - v.min(), self.floor)


# --------------------------------------------------------------------------------------------
# Scenarios 7-8: two polarised user groups for combined GEM (§VII, Fig. 7; App. F)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TwoGroups(Scenario):
    """Scenarios 7 (``sigma = 0.5``, strong polarisation) and 8 (``sigma = 3``, weak), App. F.

    Trials are users, split into two equal groups: the first ``n_trials // 2`` trials are group
    0, the rest group 1 (with an odd count group 1 gets one more). Base scores for candidate
    ``a = 0 .. K-1`` are ``-8 + 8 a / 100`` in group 0 and ``8 - 8 a / 100`` in group 1 (the
    paper's formula, with 100 replaced by K when K != 100); user ``u``'s score is the base score
    of its group plus ``z_{u,a} ~ N(0, sigma^2)``.

    Choices where App. F is open or garbled: the noise mean is 0 (the text's "N(t, sigma^?)" is
    read as ``N(0, sigma^2)``); as in §VI-a the sensitivity of a candidate is the quantile spread
    of its scores over *all* users (both groups pooled) and scores are clipped to it; the
    quantiles are the 5th and 95th (the red lines of Figs. 14-15), not §VI's 10th/90th.
    Pooling makes ``Delta_a`` about ``16 - 0.16 a`` plus noise: decreasing in ``a``, so group 0
    (scores increasing in ``a``) has negative correlation and group 1 positive -- the "half the
    datasets have strong positive and half strong negative correlation" of §VII.
    ``default_trials`` is the paper's N = 5000 users.
    """

    sigma: float = 0.5
    quantiles: tuple[float, float] = (0.05, 0.95)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (math.isfinite(float(self.sigma)) and self.sigma > 0):
            raise ValueError(f"sigma must be finite and > 0, got {self.sigma}")

    @property
    def name(self) -> str:
        if self.sigma == 0.5 and self.n_candidates == 100 and self.quantiles == (0.05, 0.95):
            return "7"
        if self.sigma == 3.0 and self.n_candidates == 100 and self.quantiles == (0.05, 0.95):
            return "8"
        return f"groups:sigma={self.sigma:g}"

    @property
    def title(self) -> str:
        strength = {0.5: "strong", 3.0: "weak"}.get(float(self.sigma), "")
        label = f"Scenario {self.name}: " if self.name in ("7", "8") else ""
        return f"{label}two groups, {strength + ' ' if strength else ''}polarisation, sigma = " + (
            f"{self.sigma:g}"
        )

    @property
    def correlation(self) -> Correlation:
        return "mixed"

    @property
    def default_trials(self) -> int:
        return 5_000

    def _groups(self, n_trials: int) -> NDArray[np.int64]:
        return (np.arange(n_trials) >= n_trials // 2).astype(np.int64)

    def base_scores(self) -> NDArray[np.float64]:
        """``(2, K)``: the base score of every candidate in group 0 and group 1."""
        a = np.arange(self.n_candidates, dtype=np.float64)
        k = float(self.n_candidates)
        return np.stack([-8.0 + 8.0 * a / k, 8.0 - 8.0 * a / k])

    def _draw(
        self, n_trials: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        base = self.base_scores()[self._groups(n_trials)]
        raw = base + self.sigma * rng.standard_normal((n_trials, self.n_candidates))
        # The pooled population mean of P_a (equal groups): the average of the base scores.
        centers = self.base_scores().mean(axis=0)
        return raw, centers


# --------------------------------------------------------------------------------------------
# Lookup by name
# --------------------------------------------------------------------------------------------

_NUMBERED: dict[str, Callable[[], Scenario]] = {
    "1": lambda: Bimodal(kind="positive"),
    "2": lambda: Bimodal(kind="negative"),
    "3": lambda: Bimodal(kind="none"),
    "4": Scenario4,
    "5": Scenario5,
    "6": Scenario6,
    "7": lambda: TwoGroups(sigma=0.5),
    "8": lambda: TwoGroups(sigma=3.0),
}

#: Scenario groups of the paper's figures, usable wherever a scenario list is expected.
FIGURES: dict[str, tuple[str, ...]] = {
    "fig1": ("1", "2", "3"),
    "fig5": ("4", "5", "6"),
    "fig6": tuple(f"corr:t={t:g}" for t in CORRELATION_FAMILY_T),
    "fig7": ("7", "8"),
}

_CORR_RE = re.compile(r"^corr:t=(?P<t>[-+0-9.eE]+)$")
_PROP_RE = re.compile(r"^(?P<k>[123]):p=(?P<p>[-+0-9.eE]+)$")
_GROUPS_RE = re.compile(r"^groups:sigma=(?P<s>[-+0-9.eE]+)$")


#: Scenarios added by other modules with :func:`register` (Figs. 4/18: exc1, exc2).
_REGISTERED: dict[str, Callable[[], Scenario]] = {}


def available() -> list[str]:
    """Names accepted by :func:`get` (besides the parametrised ``corr:t=``, ``k:p=`` forms)."""
    return list(_NUMBERED) + list(FIGURES["fig6"]) + list(_REGISTERED)


def register(name: str, factory: Callable[[], Scenario]) -> None:
    """Make ``get(name)`` return ``factory()`` (a lower-case name that is not yet taken)."""
    if not isinstance(name, str) or not name or name != name.strip().lower():
        raise ValueError(f"name must be a non-empty lower-case string, got {name!r}")
    if name in _NUMBERED or name in _REGISTERED:
        raise ValueError(f"scenario {name!r} is already defined")
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    _REGISTERED[name] = factory


def get(scenario: int | str | Scenario) -> Scenario:
    """Return a scenario from its paper number (1-8), its name, or the object itself.

    Names: ``"1"`` .. ``"8"`` (also ``"scenario3"``), ``"corr:t=0.3"`` (Fig. 6 family, any
    finite t), ``"2:p=0.1"`` (bimodal scenario 2 with 10% high scores, Fig. 13),
    ``"groups:sigma=1.5"`` (App. F generator with another sigma).
    """
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, bool):
        raise TypeError("scenario must be an int 1-8, a name or a Scenario, got bool")
    if isinstance(scenario, (int, np.integer)):
        key = str(int(scenario))
        if key not in _NUMBERED:
            raise ValueError(f"unknown scenario {int(scenario)}: the paper's scenarios are 1-8")
        return _NUMBERED[key]()
    if not isinstance(scenario, str):
        raise TypeError(
            f"scenario must be an int 1-8, a name or a Scenario, got {type(scenario).__name__}"
        )
    key = scenario.strip().lower().replace(" ", "")
    key = key.removeprefix("scenario")
    if key in _NUMBERED:
        return _NUMBERED[key]()
    if key in _REGISTERED:
        return _REGISTERED[key]()
    try:
        if m := _CORR_RE.match(key):
            return IncreasingCorrelation(t=float(m["t"]))
        if m := _PROP_RE.match(key):
            kind = {"1": "positive", "2": "negative", "3": "none"}[m["k"]]
            return Bimodal(kind=kind, proportion=float(m["p"]))  # type: ignore[arg-type]
        if m := _GROUPS_RE.match(key):
            return TwoGroups(sigma=float(m["s"]))
    except ValueError as exc:
        raise ValueError(f"scenario {scenario!r}: {exc}") from None
    raise ValueError(
        f"unknown scenario {scenario!r}: use 1-8, 'corr:t=<t>', '<1|2|3>:p=<proportion>', "
        f"'groups:sigma=<s>' or a figure group {sorted(FIGURES)}"
    )


def figure_scenarios(spec: str) -> list[Scenario]:
    """Expand a figure group (``fig1``, ``fig5``, ``fig6``, ``fig7``) or a single name."""
    key = spec.strip().lower()
    if key in FIGURES:
        return [get(s) for s in FIGURES[key]]
    if key == "all":
        return [get(s) for s in (*_NUMBERED, *FIGURES["fig6"], *_REGISTERED)]
    return [get(spec)]


# The exceptional scenarios of §V-B (Figs. 4, 18) register themselves (exc1, exc2, fig4, fig18).
import dpbandits.scenarios_exceptional  # noqa: E402, F401
