"""Which selector to use, by the paper's correlation heuristic (§V-B, §VI, App. I eq. (17)).

**Not private.** The advice is computed from the scores and sensitivities themselves: run on
private data, the recommendation (and the correlations it reports) reveal information about
them, with no privacy guarantee. Use it on public or synthetic data, or on a domain expert's
expectation of the scores and sensitivities; to choose privately from the data, spend budget on
it as combined GEM does (§VII, Alg. 2, ``selectors.make("combined_gem")``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from dpbandits.selectors.heuristics import spearman, weighted_correlation

__all__ = ["DEFAULT_THRESHOLD", "Recommendation", "recommend"]

#: ``|rho| <= DEFAULT_THRESHOLD`` counts as "no correlation" (RNM).
DEFAULT_THRESHOLD = 0.2

Measure = Literal["weighted", "spearman", "pearson"]


@dataclass(frozen=True)
class Recommendation:
    """What :func:`recommend` returns.

    ``selector`` is a registered selector name (``"gem"``, ``"mgem"`` or ``"rnm"``), ``reason``
    one line saying why; ``pearson``, ``spearman`` and ``weighted`` are the three correlations
    of scores and sensitivities (NaN when undefined), ``measure`` and ``threshold`` the rule
    used, and ``by_measure`` the selector each measure alone would recommend.
    """

    selector: str
    reason: str
    pearson: float
    spearman: float
    weighted: float
    measure: str
    threshold: float
    by_measure: dict[str, str]

    def __str__(self) -> str:
        return (
            f"{self.selector}: {self.reason} (Pearson {self.pearson:+.2f}, "
            f"Spearman {self.spearman:+.2f}, weighted {self.weighted:+.2f})"
        )


def _rule(rho: float, threshold: float) -> str:
    """The heuristic of §V-B: mGEM for positive correlation, GEM for negative, else RNM."""
    if math.isnan(rho) or abs(rho) <= threshold:
        return "rnm"
    return "mgem" if rho > 0 else "gem"


def _pearson(q: np.ndarray, d: np.ndarray) -> float:
    if np.ptp(q) == 0 or np.ptp(d) == 0:
        return math.nan
    return float(np.clip(np.corrcoef(q, d)[0, 1], -1.0, 1.0))


def recommend(
    scores: ArrayLike,
    sensitivities: ArrayLike,
    *,
    measure: Measure = "weighted",
    threshold: float = DEFAULT_THRESHOLD,
    buckets: int = 5,
) -> Recommendation:
    """Recommend GEM, mGEM or RNM for one selection problem by the correlation heuristic.

    The paper's heuristic (§V-B, tested in §VI): when scores and sensitivities are positively
    correlated use mGEM (§IV-D), when negatively GEM (§IV-C), otherwise RNM, "the safe choice"
    (App. I). The correlation is ``measure``: the weighted correlation of App. I eq. (17)
    (default; ``buckets`` as there), which the paper finds more faithful on the scenarios of
    Fig. 4 (App. I, Fig. 18), or Spearman's (§VI) or Pearson's. A correlation with
    ``|rho| <= threshold`` (default 0.2), or an undefined one (constant scores or
    sensitivities), counts as none.

    ``scores`` and ``sensitivities`` are 1-d of the same length K >= 2, finite, sensitivities
    > 0. **Not private**: see the module docstring -- meant for public or synthetic data or a
    domain expert's expectation, not for the private data the selection will run on.
    """
    q = _vector(scores, "scores")
    d = _vector(sensitivities, "sensitivities")
    if q.size != d.size:
        raise ValueError(
            f"scores and sensitivities must have the same length, got {q.size} and {d.size}"
        )
    if q.size < 2:
        raise ValueError(f"need at least 2 candidates, got {q.size}")
    if np.any(d <= 0):
        bad = int(np.flatnonzero(d <= 0)[0])
        raise ValueError(f"sensitivities must be > 0, got {d[bad]!r} at index {bad}")
    if measure not in ("weighted", "spearman", "pearson"):
        raise ValueError(f"measure must be 'weighted', 'spearman' or 'pearson', got {measure!r}")
    if isinstance(threshold, bool) or not isinstance(
        threshold, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"threshold must be a real number, got {threshold!r}")
    thr = float(threshold)
    if not 0.0 <= thr < 1.0:
        raise ValueError(f"threshold must be in [0, 1), got {threshold!r}")
    rhos = {
        "pearson": _pearson(q, d),
        "spearman": float(spearman(q, d)),
        "weighted": float(weighted_correlation(q, d, buckets=buckets)),
    }
    by = {m: _rule(r, thr) for m, r in rhos.items()}
    rho = rhos[measure]
    choice = by[measure]
    if math.isnan(rho):
        reason = f"the {measure} correlation is undefined (constant scores or sensitivities): RNM"
    elif choice == "rnm":
        reason = f"{measure} correlation {rho:+.2f} is within ±{thr:g}: no correlation, RNM"
    elif choice == "mgem":
        reason = (
            f"{measure} correlation {rho:+.2f} > {thr:g}: positive, mGEM favours high sensitivity"
        )
    else:
        reason = (
            f"{measure} correlation {rho:+.2f} < -{thr:g}: negative, GEM favours low sensitivity"
        )
    return Recommendation(
        selector=choice,
        reason=reason,
        pearson=rhos["pearson"],
        spearman=rhos["spearman"],
        weighted=rhos["weighted"],
        measure=measure,
        threshold=thr,
        by_measure=by,
    )


def _vector(x: ArrayLike, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype == np.bool_ or a.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-d (one selection problem), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a
