"""The two "exceptional" positively correlated scenarios of §V-B (Figs. 4 and 18, App. I).

§V-B shows two selection problems in which both the Pearson and the Spearman correlation of
scores and sensitivities are positive, yet the heuristic "positive correlation -> mGEM" is only
partly right (Fig. 4); App. I (Fig. 18) returns to them to argue that the weighted correlation
of eq. (17) describes mGEM against RNM better. The paper does not give the data, only the
scatter plots and one number (scenario 1 "has 18 candidates overlaid with score 1 and
sensitivity 0.1"), so they are rebuilt from the text (choices in :class:`Exceptional`).

- :class:`Exceptional` -- ``kind=1`` / ``kind=2``, registered as the scenarios ``"exc1"`` and
  ``"exc2"`` and the figure groups ``fig4`` and ``fig18`` of :mod:`dpbandits.scenarios`;
- :func:`correlations` -- the Pearson, Spearman and weighted correlations of one problem.

Their figures (the selection panels 4e-4h, Figs. 4 and 18) are drawn by
:mod:`dpbandits.scenarios.exceptional_figures`, above the evaluation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits.scenarios.base import ConstantScenario, Correlation
from dpbandits.selectors.heuristics import spearman, weighted_correlation

__all__ = ["PANEL_EPSILON", "Exceptional", "correlations"]

#: eps of the selected-candidates panels (Fig. 4e-4h).
PANEL_EPSILON = 0.05


@dataclass(frozen=True)
class Exceptional(ConstantScenario):
    """Scenario 1 or 2 of Fig. 4 (§V-B): fixed scores and sensitivities, positive correlation.

    As in §VI-b "there is no variability": every trial has the same ``(q_a, Delta_a)``, the
    clipping range is ``q_a +- Delta_a / 2`` (clipping is a no-op) and ``quantiles`` is unused.
    With ``K`` candidates (100 in the paper):

    - ``kind=1``: ``round(0.18 K)`` candidates overlaid at score 1 and sensitivity 0.1 (the
      paper's caption: 18 of 100) -- the optimal candidates, with the *smallest* sensitivity;
      the others on a line of positive slope, scores evenly spaced in ``[-1, 0.9]`` and
      sensitivities in ``[0.1, 2]``, so the runners-up (score 0.9) have the largest
      sensitivity. Text: mGEM beats RNM while rarely choosing an optimal candidate; GEM also
      does well because the optimal candidates have low sensitivity.
    - ``kind=2``: ``round(0.85 K)`` candidates on a line of positive slope (scores in
      ``[-1, 1]``, sensitivities in ``[0.1, 2]``) and ``round(0.15 K)`` low scorers with the
      top's high sensitivity (scores evenly in ``[-1, -0.7]``, sensitivity 2). Text: GEM does
      poorly (it
      chooses low-score, low-sensitivity candidates); mGEM does reasonably but RNM beats it at
      higher eps, because mGEM favours the low-score, high-sensitivity candidates.

    Choices where the paper is open: every number above except the 18 overlaid candidates
    (score 1, sensitivity 0.1) is ours, read off the description; the candidates are in a
    fixed order (the order does not matter to any selector).
    """

    kind: Literal[1, 2] = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.kind not in (1, 2):
            raise ValueError(f"kind must be 1 or 2, got {self.kind!r}")
        if self.n_candidates < 10:
            raise ValueError(f"n_candidates must be >= 10, got {self.n_candidates}")

    @property
    def name(self) -> str:
        if self.n_candidates == 100:
            return f"exc{self.kind}"
        return f"exc{self.kind}:k={self.n_candidates}"

    @property
    def title(self) -> str:
        what = {
            1: "18 optimal candidates at (1, 0.1)",
            2: "low scorers with high sensitivity",
        }[self.kind]
        return f"Fig. 4 scenario {self.kind}: {what}"

    @property
    def correlation(self) -> Correlation:
        return "positive"

    def parameters(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The constant scores ``(K,)`` and sensitivities ``(K,)``."""
        k = self.n_candidates
        if self.kind == 1:
            n_top = int(round(0.18 * k))
            line = np.linspace(0.0, 1.0, k - n_top)
            q = np.concatenate([-1.0 + 1.9 * line, np.full(n_top, 1.0)])
            d = np.concatenate([0.1 + 1.9 * line, np.full(n_top, 0.1)])
        else:
            n_low = int(round(0.15 * k))
            line = np.linspace(0.0, 1.0, k - n_low)
            q = np.concatenate([-1.0 + 2.0 * line, np.linspace(-1.0, -0.7, n_low)])
            d = np.concatenate([0.1 + 1.9 * line, np.full(n_low, 2.0)])
        return q, d


def correlations(q: Any, d: Any) -> dict[str, float]:
    """Pearson, Spearman and weighted (App. I eq. (17)) correlation of one problem ``(q, d)``."""
    qa = np.asarray(q, dtype=np.float64)
    da = np.asarray(d, dtype=np.float64)
    pearson = float(np.corrcoef(qa, da)[0, 1]) if np.ptp(qa) > 0 and np.ptp(da) > 0 else math.nan
    return {
        "pearson": pearson,
        "spearman": float(spearman(qa, da)),
        "weighted": float(weighted_correlation(qa, da)),
    }
