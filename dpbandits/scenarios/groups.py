"""Two polarised user groups: scenarios 7-8 for combined GEM (§VII, Fig. 7; App. F)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpbandits.scenarios.base import Correlation, Scenario

__all__ = ["PAPER_GROUPS", "TwoGroups"]

#: sigma -> (paper number, strength of the polarisation) of scenarios 7 and 8 (App. F).
PAPER_GROUPS: dict[float, tuple[str, str]] = {0.5: ("7", "strong"), 3.0: ("8", "weak")}


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
        paper = PAPER_GROUPS.get(float(self.sigma))
        if paper is not None and self.n_candidates == 100 and self.quantiles == (0.05, 0.95):
            return paper[0]
        return f"groups:sigma={self.sigma:g}"

    @property
    def title(self) -> str:
        strength = PAPER_GROUPS.get(float(self.sigma), ("", ""))[1]
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

    def trial_groups(self, n_trials: int) -> NDArray[np.int64]:
        return (np.arange(n_trials) >= n_trials // 2).astype(np.int64)

    def base_scores(self) -> NDArray[np.float64]:
        """``(2, K)``: the base score of every candidate in group 0 and group 1."""
        a = np.arange(self.n_candidates, dtype=np.float64)
        k = float(self.n_candidates)
        return np.stack([-8.0 + 8.0 * a / k, 8.0 - 8.0 * a / k])

    def draw_raw(
        self, n_trials: int, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        base = self.base_scores()[self.trial_groups(n_trials)]
        raw = base + self.sigma * rng.standard_normal((n_trials, self.n_candidates))
        # The pooled population mean of P_a (equal groups): the average of the base scores.
        centers = self.base_scores().mean(axis=0)
        return raw, centers
