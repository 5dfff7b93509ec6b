"""The two "exceptional" positively correlated scenarios of §V-B (Figs. 4 and 18, App. I).

§V-B shows two selection problems in which both the Pearson and the Spearman correlation of
scores and sensitivities are positive, yet the heuristic "positive correlation -> mGEM" is only
partly right (Fig. 4); App. I (Fig. 18) returns to them to argue that the weighted correlation
of eq. (17) describes mGEM against RNM better. The paper does not give the data, only the
scatter plots and one number (scenario 1 "has 18 candidates overlaid with score 1 and
sensitivity 0.1"), so they are rebuilt from the text (choices in :class:`Exceptional`).

- :class:`Exceptional` -- ``kind=1`` / ``kind=2``, registered as the scenarios ``"exc1"`` and
  ``"exc2"`` and the figure groups ``fig4`` and ``fig18`` of :mod:`dpbandits.scenarios`;
- :func:`selection_probabilities` -- how likely a selector is to choose each candidate (the
  panels 4e-4h, at eps = 0.05);
- :func:`plot_exceptional` -- Fig. 4 (scatter, MSE, selected candidates of GEM and mGEM) or
  Fig. 18 (scatter with the three correlations, MSE of RNM, GEM and mGEM).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from dpbandits.core import checks
from dpbandits.scenarios import FIGURES, register
from dpbandits.scenarios.base import ConstantScenario, Correlation, Scenario

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from dpbandits.scenarios.evaluation import Evaluation

__all__ = [
    "FIG18_SELECTORS",
    "PANEL_EPSILON",
    "Exceptional",
    "correlations",
    "exceptional_figure",
    "plot_exceptional",
    "selection_probabilities",
]

#: eps of the selected-candidates panels (Fig. 4e-4h).
PANEL_EPSILON = 0.05
#: Mechanisms of Fig. 18's MSE panels ("a subset"; Fig. 4 shows the §VI set, the default of
#: ``dpbandits.scenarios.evaluation``).
FIG18_SELECTORS: tuple[str, ...] = ("rnm", "gem", "mgem")


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
    from dpbandits import selectors

    qa = np.asarray(q, dtype=np.float64)
    da = np.asarray(d, dtype=np.float64)
    pearson = float(np.corrcoef(qa, da)[0, 1]) if np.ptp(qa) > 0 and np.ptp(da) > 0 else math.nan
    return {
        "pearson": pearson,
        "spearman": float(selectors.spearman(qa, da)),
        "weighted": float(selectors.weighted_correlation(qa, da)),
    }


def selection_probabilities(
    scenario: Scenario | str,
    selector: Any,
    epsilon: float = PANEL_EPSILON,
    n_draws: int = 100_000,
    seed: int | np.random.Generator | None = 0,
) -> NDArray[np.float64]:
    """Empirical probability that ``selector`` (a name or spec) picks each candidate, ``(K,)``.

    The weights of the selected-candidates panels of Fig. 4 (e-h): ``n_draws`` independent
    selections on the scenario's constant ``(q, d)`` at ``epsilon``.
    """
    from dpbandits import scenarios
    from dpbandits.scenarios.evaluation import resolve_selectors

    sc = scenarios.get(scenario)
    if not isinstance(sc, Exceptional):
        raise TypeError(f"scenario must be an exceptional scenario (exc1, exc2), got {sc.name!r}")
    n = checks.positive_int(n_draws, "n_draws")
    q, d = sc.parameters()
    ((_, base),) = resolve_selectors([selector])
    sel = base.with_epsilon(float(epsilon))
    rng = np.random.default_rng(seed)
    counts = np.zeros(q.size, dtype=np.int64)
    chunk = 20_000
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        idx = sel.select(np.broadcast_to(q, (m, q.size)), d, rng)
        counts += np.bincount(np.asarray(idx).ravel(), minlength=q.size)
    return counts / n


def plot_exceptional(
    evaluations: Sequence[Evaluation],
    selections: Mapping[tuple[str, str], NDArray[np.float64]] | None = None,
    *,
    figure: Literal["fig4", "fig18"] = "fig4",
    epsilon: float = PANEL_EPSILON,
    column_width: float = 3.8,
) -> Figure:
    """Fig. 4 or Fig. 18: one column per scenario.

    Top row: sensitivity against score, titled with the Pearson, Spearman and weighted
    correlations; second row: MSE against eps. For ``figure="fig4"``, one more row per selector
    in ``selections`` (``(scenario name, selector) -> (K,)`` probabilities from
    :func:`selection_probabilities`): the candidates drawn with an area proportional to the
    probability of being selected (Fig. 4e-4h) at ``epsilon``.
    """
    from matplotlib.figure import Figure

    from dpbandits import scenarios
    from dpbandits.scenarios.plots import selector_style

    evs = list(evaluations)
    if not evs:
        raise ValueError("evaluations must not be empty")
    if figure not in ("fig4", "fig18"):
        raise ValueError(f"figure must be 'fig4' or 'fig18', got {figure!r}")
    sel = dict(selections or {}) if figure == "fig4" else {}
    panel_selectors = list(dict.fromkeys(s for _, s in sel))
    n_rows = 2 + len(panel_selectors)
    fig = Figure(figsize=(column_width * len(evs) + 1.6, 3.0 * n_rows), layout="constrained")
    axes = fig.subplots(n_rows, len(evs), squeeze=False)
    for j, ev in enumerate(evs):
        sc = scenarios.get(ev.scenario)
        if not isinstance(sc, Exceptional):
            raise TypeError(f"not an exceptional scenario: {ev.scenario!r}")
        q, d = sc.parameters()
        c = correlations(q, d)
        ax = axes[0, j]
        ax.scatter(q, d, s=14, color="#40004b", alpha=0.6)
        pairs, counts = np.unique(np.stack([q, d], axis=1), axis=0, return_counts=True)
        for (x, y), c_xy in zip(pairs, counts, strict=True):
            if c_xy > 1:  # overlaid candidates (Fig. 4a: 18 at score 1, sensitivity 0.1)
                ax.annotate(f"×{c_xy}", (x, y), textcoords="offset points", xytext=(-14, 6))
        ax.set_xlabel("score q")
        ax.set_ylabel("sensitivity")
        ax.set_title(
            f"{ev.title}\nPearson {c['pearson']:+.2f}, Spearman {c['spearman']:+.2f}, "
            f"weighted {c['weighted']:+.2f}",
            fontsize=8,
        )
        ax = axes[1, j]
        for i, lab in enumerate(ev.mse):
            style = selector_style(lab, ev.private.get(lab), i)
            m = np.where(ev.mse[lab] > 0, ev.mse[lab], np.nan)  # 0 cannot be drawn on a log axis
            ax.plot(ev.epsilons, m, marker=".", ms=3, label=lab, **style)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon")
        ax.set_ylabel("MSE")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=6, loc="best")
        for r, name in enumerate(panel_selectors, start=2):
            ax = axes[r, j]
            p = sel.get((ev.scenario, name))
            if p is None:
                ax.set_visible(False)
                continue
            ax.scatter(q, d, s=4, color="#bbbbbb", zorder=0)
            ax.scatter(q, d, s=2000 * np.asarray(p), color=selector_style(name)["color"], alpha=0.5)
            best = q == q.max()
            ax.set_title(
                f"selected by {name} at eps = {epsilon:g}: "
                f"P(optimal) = {float(np.asarray(p)[best].sum()):.2f}",
                fontsize=8,
            )
            ax.set_xlabel("score q")
            ax.set_ylabel("sensitivity")
    fig.suptitle("Fig. 4 (§V-B)" if figure == "fig4" else "Fig. 18 (App. I)")
    return fig


def exceptional_figure(
    evaluations: Sequence[Evaluation],
    figure: str = "fig4",
    *,
    epsilon: float = PANEL_EPSILON,
    n_draws: int = 100_000,
    seed: int | None = 0,
) -> Figure:
    """The whole of Fig. 4 (with the GEM and mGEM selection panels at ``epsilon``) or Fig. 18
    from the evaluations of ``exc1`` and ``exc2`` (what ``dpbandits scenarios -s fig4`` draws)."""
    if figure not in ("fig4", "fig18"):
        raise ValueError(f"figure must be 'fig4' or 'fig18', got {figure!r}")
    selections: dict[tuple[str, str], NDArray[np.float64]] = {}
    if figure == "fig4":
        for ev in evaluations:
            for name in ("gem", "mgem"):
                selections[(ev.scenario, name)] = selection_probabilities(
                    ev.scenario, name, epsilon, n_draws, seed
                )
    kind: Literal["fig4", "fig18"] = "fig4" if figure == "fig4" else "fig18"
    return plot_exceptional(evaluations, selections, figure=kind, epsilon=epsilon)


# Fig. 4 / Fig. 18 groups and the scenario names, for dpbandits.scenarios.get and the CLI.
register("exc1", lambda: Exceptional(kind=1))
register("exc2", lambda: Exceptional(kind=2))
FIGURES["fig4"] = ("exc1", "exc2")
FIGURES["fig18"] = ("exc1", "exc2")
