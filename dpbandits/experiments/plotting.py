"""Figures of the bandit-under-shift experiment (App. H, Fig. 9 of the paper).

- :func:`plot_cumulative` -- cumulative reward and/or regret over time, bands over replications,
  change point marked (Fig. 9a); on request the regret lower bounds (``bounds=True``,
  :mod:`dpbandits.experiments.bounds`);
- :func:`plot_private_means` -- private means of each arm over time against the true expected
  rewards (Fig. 9b);
- :func:`plot_sensitivities` -- estimated sensitivities of one arm against the true 10%-90%
  quantile range of its clipped reward distribution (Fig. 9c, 9d);
- :func:`plot_shift` -- the four panels in one figure.

Every function takes a :class:`~dpbandits.experiments.Results` and returns a
:class:`matplotlib.figure.Figure`. Figures are built with the object-oriented API on the Agg
canvas (no ``pyplot``, no global state, no display needed); save them with ``fig.savefig``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from numpy.typing import NDArray

from dpbandits.core import checks
from dpbandits.experiments.bounds import BoundCurve, bound_curves

__all__ = ["plot_cumulative", "plot_private_means", "plot_sensitivities", "plot_shift"]

_Z = 1.96  # normal quantile of the default 95% band


def _figure(n_axes: int, width: float = 6.4, height: float = 4.0) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(width * n_axes, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, n_axes, squeeze=False)[0]
    return fig, list(axes)


def _colors(results: Any) -> dict[str, Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return {label: cmap(i % 10) for i, label in enumerate(results.labels)}


def _labels(results: Any, labels: Sequence[str] | None, private_only: bool = False) -> list[str]:
    chosen = list(results.labels) if labels is None else list(labels)
    for label in chosen:
        if label not in results.data:
            raise ValueError(f"unknown agent label {label!r}; labels: {', '.join(results.labels)}")
    if private_only:
        chosen = [lab for lab in chosen if "private_means" in results.data[lab]]
    return chosen


def _mark_changes(ax: Axes, results: Any) -> None:
    for i, cp in enumerate(results.config.get("change_points", [])):
        ax.axvline(cp, color="0.4", linestyle=":", linewidth=1.2,
                   label="change point" if i == 0 else None)  # fmt: skip


def _draw_cumulative(
    ax: Axes, results: Any, what: str, labels: list[str], band: str, colors: dict[str, Any]
) -> None:
    x = results.steps
    for label in labels:
        curves = results.data[label][what]
        mean = curves.mean(axis=1)
        ax.plot(x, mean, color=colors[label], label=label, linewidth=1.5)
        if curves.shape[1] > 1:
            if band == "se":
                half = _Z * curves.std(axis=1, ddof=1) / np.sqrt(curves.shape[1])
                low, high = mean - half, mean + half
            else:
                low, high = np.quantile(curves, [0.1, 0.9], axis=1)
            ax.fill_between(x, low, high, color=colors[label], alpha=0.2, linewidth=0)
    _mark_changes(ax, results)
    ax.set_xlabel("step t")
    ax.set_ylabel(f"cumulative {what}")
    ax.grid(alpha=0.3)


#: Line style of each lower bound (:data:`dpbandits.theory.BOUND_LABELS`) on the regret plots.
_BOUND_STYLES = {
    "lai_robbins": "--",
    "shariff_sheffet": (0, (1, 1)),  # denser than the change points' dotted line
    "azize_basu_2022": "-.",
    "azize_2025": (0, (5, 1, 1, 1, 1, 1)),
    "local_dp": (0, (3, 2, 1, 2)),  # the other trust models (docs/trust-models.md)
    "zcdp": (0, (8, 2)),
}
_BOUND_GRAYS = ("0.3", "0.55", "0.7", "0.8")  # one shade per eps of the private bounds


def _draw_bounds(ax: Axes, curves: list[BoundCurve], steps: Any) -> None:
    shades: dict[float, str] = {}
    for c in curves:
        if c.key == "lai_robbins":
            color = "k"
        else:
            color = shades.setdefault(c.epsilon, _BOUND_GRAYS[len(shades) % len(_BOUND_GRAYS)])
        ax.plot(steps, c.values, linestyle=_BOUND_STYLES[c.key], color=color, linewidth=1.2,
                label=c.label)  # fmt: skip


def plot_cumulative(
    results: Any,
    what: str | Sequence[str] = ("reward", "regret"),
    labels: Sequence[str] | None = None,
    band: str = "se",
    bounds: bool = False,
    bounds_epsilon: float | Sequence[float] | NDArray[np.float64] = 1.0,
) -> Figure:
    """Cumulative reward and/or dynamic pseudo-regret over time, mean over runs (Fig. 9a).

    ``band="se"``: mean ± 1.96 standard errors (a 95% confidence band of the mean);
    ``band="runs"``: the 10%-90% range of the individual runs. The dotted line marks the change
    point(s).

    ``bounds=True`` adds the regret lower bounds to the regret panel
    (:mod:`dpbandits.experiments.bounds`, docs/private-bandits.md "Lower bounds"): Lai--Robbins,
    which every consistent agent obeys, and the eps-global-DP bounds at each eps of
    ``bounds_epsilon`` (one value or several; ``()`` for none), which an agent obeys when its
    whole action sequence is eps-DP. Bernoulli arms get all four bounds (Shariff & Sheffet 2018,
    Azize & Basu 2022, Azize et al. 2025 at each eps); clipped Gaussian arms Lai--Robbins and
    Azize & Basu 2022 only (the other two are stated for Bernoulli arms), with the clipping
    handled conservatively. Each is the asymptotic ``c log T`` read at finite ``T``. With change
    points the curve is the sum over the stationary segments of each segment's bound at its
    length (every bound's legend label says "summed over N segments"): what an agent told the
    change points would need at least. When the means drift within segments there is no
    stationary segment, and ``bounds=True`` raises a ``ValueError`` saying so (as for results
    written before the arms' laws were recorded).
    """
    whats = [what] if isinstance(what, str) else list(what)
    for w in whats:
        if w not in ("reward", "regret"):
            raise ValueError(f"what must be 'reward' and/or 'regret', got {w!r}")
    if band not in ("se", "runs"):
        raise ValueError(f"band must be 'se' or 'runs', got {band!r}")
    checks.flag(bounds, "bounds")
    epsilons = _bounds_epsilons(bounds_epsilon)
    if bounds and "regret" not in whats:
        raise ValueError("bounds=True draws on the regret panel: what must include 'regret'")
    chosen = _labels(results, labels)
    curves = bound_curves(results, epsilons) if bounds else []
    colors = _colors(results)
    fig, axes = _figure(len(whats))
    for ax, w in zip(axes, whats, strict=True):
        _draw_cumulative(ax, results, w, chosen, band, colors)
        ax.set_title(f"Cumulative {w} ({results.n_runs} runs, band: "
                     f"{'95% CI of the mean' if band == 'se' else '10-90% of runs'})")  # fmt: skip
        if w == "regret" and curves:
            _draw_bounds(ax, curves, results.steps)
            _log_if_flat(ax, results, chosen, curves)
            ax.legend(fontsize="x-small", loc="upper left")
    if not (curves and whats[0] == "regret"):
        axes[0].legend(fontsize="small")
    return fig


#: Bounds below this fraction of the largest regret would sit flat on a linear axis.
_FLAT = 0.05


def _log_if_flat(ax: Axes, results: Any, labels: list[str], curves: list[BoundCurve]) -> None:
    """A logarithmic regret axis when the lower bounds end below :data:`_FLAT` of the largest
    mean regret (logarithmic bounds against a linear regret are otherwise a flat line at 0),
    from the bounds' first positive values."""
    top = max((float(results.data[a]["regret"].mean(axis=1)[-1]) for a in labels), default=0.0)
    ends = [float(c.values[-1]) for c in curves if np.isfinite(c.values[-1])]
    if not ends or top <= 0 or max(ends) >= _FLAT * top:
        return
    lows = [float(v) for c in curves for v in c.values if np.isfinite(v) and v > 0]
    ax.set_yscale("log")
    ax.set_ylim(bottom=min(lows) / 2 if lows else None)


def _bounds_epsilons(value: Any) -> list[float]:
    """``bounds_epsilon``: one eps or a sequence of them, each > 0 (``inf`` allowed)."""
    values = [value] if isinstance(value, (str, bytes)) or np.ndim(value) == 0 else list(value)
    return [checks.positive_number(v, "bounds_epsilon", allow_inf=True) for v in values]


def _means_ylim(ax: Axes, results: Any) -> None:
    """Zoom on the true expected rewards: the first released means (one or two rewards plus
    continual-release noise) can be far outside [lo, hi] and would flatten the plot."""
    true = results.arrays["expected_rewards"]
    lo, hi = float(np.nanmin(true)), float(np.nanmax(true))
    pad = 0.3 * max(hi - lo, 0.1)
    ax.set_ylim(lo - pad, hi + pad)


def _draw_means(
    ax: Axes, results: Any, arm: int, labels: list[str], run: int, colors: dict[str, Any]
) -> None:
    tx = results.arrays["trace_steps"]
    for label in labels:
        pm = results.data[label]["private_means"][:, :, arm]
        ax.scatter(tx, pm[:, run], s=3, color=colors[label], alpha=0.35, linewidths=0)
        ax.plot(tx, pm.mean(axis=1), color=colors[label], label=label, linewidth=1.5)
    ax.plot(results.steps, results.arrays["expected_rewards"][:, arm], "k--", linewidth=1.2,
            label="true expected reward")  # fmt: skip
    _mark_changes(ax, results)
    _means_ylim(ax, results)
    ax.set_xlabel("step t")
    ax.set_ylabel(f"private mean of arm {arm}")
    ax.set_title(f"Arm {arm}: private means (line: mean over runs; points: run {run})")
    ax.grid(alpha=0.3)


def plot_private_means(
    results: Any, labels: Sequence[str] | None = None, arms: Sequence[int] | None = None,
    run: int = 0,
) -> Figure:  # fmt: skip
    """Private means over time against the true expected rewards, one panel per arm (Fig. 9b).

    Solid lines: the mean over runs of each private agent's released mean; points: the released
    means of one run (``run``); dashed: the true expected (clipped) reward.
    """
    chosen = _labels(results, labels, private_only=True)
    if not chosen:
        raise ValueError("no agent with private means in these results (trace=False?)")
    k = int(results.config["n_arms"])
    arm_list = list(range(k)) if arms is None else [int(a) for a in arms]
    for a in arm_list:
        if not 0 <= a < k:
            raise ValueError(f"arms must lie in 0..{k - 1}, got {a}")
    if not 0 <= run < results.n_runs:
        raise ValueError(f"run must lie in 0..{results.n_runs - 1}, got {run}")
    colors = _colors(results)
    fig, axes = _figure(len(arm_list))
    for ax, a in zip(axes, arm_list, strict=True):
        _draw_means(ax, results, a, chosen, run, colors)
    axes[0].legend(fontsize="small")
    return fig


def _draw_sensitivities(
    ax: Axes, results: Any, arm: int, labels: list[str], colors: dict[str, Any]
) -> None:
    tx = results.arrays["trace_steps"]
    for label in labels:
        s = results.data[label]["sensitivities"][:, :, arm]
        ax.plot(tx, s.mean(axis=1), color=colors[label], label=label, linewidth=1.5)
        if s.shape[1] > 1:
            low, high = np.quantile(s, [0.1, 0.9], axis=1)
            ax.fill_between(tx, low, high, color=colors[label], alpha=0.15, linewidth=0)
    true = results.arrays.get("true_quantile_range")
    levels = results.config.get("quantile_levels", [0.1, 0.9])
    if true is not None:
        ax.plot(tx, true[:, arm], "k--", linewidth=1.2,
                label=f"true {levels[0]:g}-{levels[1]:g} quantile range")  # fmt: skip
    _mark_changes(ax, results)
    ax.set_xlabel("step t")
    ax.set_ylabel(f"sensitivity estimate of arm {arm}")
    ax.set_title(f"Arm {arm}: DP sensitivity estimates (mean, 10-90% of runs)")
    ax.grid(alpha=0.3)


def plot_sensitivities(results: Any, arm: int = 0, labels: Sequence[str] | None = None) -> Figure:
    """Estimated sensitivities of ``arm`` over time against the true quantile range (Fig. 9c/d).

    Lines: mean over runs; band: 10%-90% of runs; dashed: the true range between the 10% and
    90% quantiles of the arm's clipped reward distribution (the quantity the windowed DP
    estimate targets). Agents without sensitivities (e.g. kRR) are skipped.
    """
    chosen = [lab for lab in _labels(results, labels) if "sensitivities" in results.data[lab]]
    if not chosen:
        raise ValueError("no agent with sensitivity estimates in these results")
    k = int(results.config["n_arms"])
    if not 0 <= int(arm) < k:
        raise ValueError(f"arm must lie in 0..{k - 1}, got {arm}")
    colors = _colors(results)
    fig, (ax,) = _figure(1)
    _draw_sensitivities(ax, results, int(arm), chosen, colors)
    ax.legend(fontsize="small")
    return fig


def plot_shift(results: Any, labels: Sequence[str] | None = None, run: int = 0) -> Figure:
    """The four panels of Fig. 9 in one figure: (a) cumulative reward, (b) private means of
    both arms, (c)/(d) sensitivities of arms 0 and 1 (panels without data are left empty)."""
    chosen = _labels(results, labels)
    colors = _colors(results)
    fig = Figure(figsize=(13, 9), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 2)
    a, b, c, d = axes.ravel()
    _draw_cumulative(a, results, "reward", chosen, "se", colors)
    a.set_title("(a) cumulative reward (mean, 95% CI)")
    a.legend(fontsize="small")
    private = [lab for lab in chosen if "private_means" in results.data[lab]]
    if private:
        for arm, style in ((0, "-"), (1, "-")):
            if arm >= int(results.config["n_arms"]):
                continue
            tx = results.arrays["trace_steps"]
            for label in private:
                pm = results.data[label]["private_means"][:, :, arm]
                b.scatter(tx, pm[:, run], s=2, color=colors[label], alpha=0.25, linewidths=0)
                b.plot(tx, pm.mean(axis=1), style, color=colors[label], linewidth=1.2,
                       label=label if arm == 0 else None)  # fmt: skip
            b.plot(results.steps, results.arrays["expected_rewards"][:, arm], "k--",
                   linewidth=1.0, label="true expected rewards" if arm == 0 else None)  # fmt: skip
        _mark_changes(b, results)
        _means_ylim(b, results)
        b.set_xlabel("step t")
        b.set_ylabel("private mean")
        b.grid(alpha=0.3)
        b.legend(fontsize="small")
    b.set_title("(b) private means of arms 0 and 1 (lines: mean; points: one run)")
    with_sens = [lab for lab in chosen if "sensitivities" in results.data[lab]]
    for ax, arm, tag in ((c, 0, "(c)"), (d, 1, "(d)")):
        if with_sens and arm < int(results.config["n_arms"]):
            _draw_sensitivities(ax, results, arm, with_sens, colors)
            ax.legend(fontsize="small")
        ax.set_title(f"{tag} sensitivity estimates of arm {arm}")
    return fig
