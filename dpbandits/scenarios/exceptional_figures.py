"""Figures of the exceptional scenarios of §V-B (Figs. 4 and 18, App. I).

- :func:`selection_probabilities` -- how likely a selector is to choose each candidate (the
  panels 4e-4h, at eps = 0.05);
- :func:`plot_exceptional` -- Fig. 4 (scatter, MSE, selected candidates of GEM and mGEM) or
  Fig. 18 (scatter with the three correlations, MSE of RNM, GEM and mGEM);
- :func:`exceptional_figure` -- the whole figure from the evaluations of ``exc1`` and ``exc2``.

The scenarios themselves are :class:`dpbandits.scenarios.exceptional.Exceptional`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from matplotlib.figure import Figure
from numpy.typing import NDArray

from dpbandits import scenarios
from dpbandits.core import checks
from dpbandits.scenarios.base import Scenario
from dpbandits.scenarios.evaluation import Evaluation, resolve_selectors
from dpbandits.scenarios.exceptional import PANEL_EPSILON, Exceptional, correlations
from dpbandits.scenarios.plots import selector_style

__all__ = [
    "FIG18_SELECTORS",
    "exceptional_figure",
    "plot_exceptional",
    "selection_probabilities",
]

#: Mechanisms of Fig. 18's MSE panels ("a subset"; Fig. 4 shows the §VI set, the default of
#: ``dpbandits.scenarios.evaluation``).
FIG18_SELECTORS: tuple[str, ...] = ("rnm", "gem", "mgem")


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
