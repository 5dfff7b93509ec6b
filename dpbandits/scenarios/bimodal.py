"""Bimodal scores: scenarios 1-3 and the proportion sweep (§VI-b, Fig. 1; App. E, Fig. 13)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits.core import checks
from dpbandits.scenarios.base import ConstantScenario, Correlation

__all__ = ["BIMODAL_KIND", "Bimodal"]

#: Correlation of a bimodal scenario -> its paper number.
BIMODAL_KIND: dict[str, int] = {"positive": 1, "negative": 2, "none": 3}


@dataclass(frozen=True)
class Bimodal(ConstantScenario):
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
        checks.one_of(self.kind, BIMODAL_KIND, "kind")
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
        k = BIMODAL_KIND[self.kind]
        if self.proportion == 0.5 and self.n_candidates == 100 and self._is_paper():
            return str(k)
        return f"{k}:p={self.proportion:g}"

    def _is_paper(self) -> bool:
        return (self.high, self.low, self.d_large, self.d_small) == (1.0, -1.0, 1.8, 1.0)

    @property
    def title(self) -> str:
        label = {"positive": "positive", "negative": "negative", "none": "no"}[self.kind]
        return (
            f"Scenario {BIMODAL_KIND[self.kind]}: bimodal, {label} correlation, "
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
