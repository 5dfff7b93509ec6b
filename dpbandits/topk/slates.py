"""k-slates on the selection scenarios: top-k accuracy of any top-k mechanism (main paper §VI).

:func:`evaluate_slates` draws a scenario of :mod:`dpbandits.scenarios` (its N trials of K
clipped scores and the sensitivities ``Delta_a``) and asks each top-k mechanism for a slate of
``k`` candidates per trial, over an eps grid. Per mechanism and eps it reports

- ``accuracy``: mean over trials of ``|slate ∩ true top-k| / k`` (the top-k accuracy of
  paper 002 §5), with its standard error;
- ``regret``: mean over trials of ``(sum of the k best scores - sum of the slate's scores)/k``
  (the slate analogue of the scenarios' error ``max q - q_selected``).

The mechanisms get the scenario's candidate-wise sensitivities and use their maximum (the
global sensitivity, as ``rnm`` does). Mechanism ``i`` at the ``j``-th eps draws from
``SeedSequence(seed, spawn_key=(1, i, j))``; the trials are ``scenario.sample(n_trials, seed)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpbandits import scenarios as _scenarios
from dpbandits.topk import TopKSelector, check_k, make

__all__ = ["evaluate_slates"]


def evaluate_slates(
    scenario: int | str | _scenarios.Scenario | _scenarios.ScenarioData,
    mechanisms: Sequence[str | TopKSelector] = ("canonical_lipschitz", "joint", "gumbel"),
    k: int = 5,
    epsilons: ArrayLike | None = None,
    n_trials: int | None = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Top-k accuracy and slate regret of each mechanism on a scenario; see the module doc.

    ``epsilons`` defaults to the main paper's grid (:data:`dpbandits.scenarios.PAPER_EPSILONS`).
    Returns records ``{scenario, mechanism, k, epsilon, accuracy, accuracy_se, regret,
    regret_se, trials, private}``.
    """
    if isinstance(scenario, _scenarios.ScenarioData):
        data = scenario
    else:
        data = _scenarios.get(scenario).sample(n_trials, seed)
    eps = _scenarios.PAPER_EPSILONS if epsilons is None else np.asarray(epsilons, dtype=float)
    eps = np.atleast_1d(eps).astype(np.float64)
    if eps.size == 0 or not np.all(np.isfinite(eps) & (eps > 0)):
        raise ValueError(f"epsilons must be finite and > 0, got {eps}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    q = np.asarray(data.scores, dtype=np.float64)
    n, d = q.shape
    kk = check_k(k, d)
    sels = [make(m) for m in mechanisms]
    sens = np.asarray(data.sensitivities, dtype=np.float64)
    best_sorted = -np.sort(-q, axis=1)[:, :kk]
    best_sum = best_sorted.sum(axis=1)
    threshold = best_sorted[:, -1:]
    # the true top-k as a mask (ties at the k-th score: any tied candidate counts as correct)
    n_above = np.sum(q > threshold, axis=1, keepdims=True)
    records: list[dict[str, Any]] = []
    rows = np.arange(n)[:, None]
    for i, base in enumerate(sels):
        for j, e in enumerate(eps):
            sel = base.with_epsilon(float(e))
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, i, j)))
            slate = np.asarray(sel.select(q, kk, sens, rng))
            vals = q[rows, slate]
            above = np.sum(vals > threshold, axis=1, keepdims=True)
            tied = np.sum(vals == threshold, axis=1, keepdims=True)
            # correct = above the k-th score, plus tied ones up to the free places at the tie
            correct = (above + np.minimum(tied, kk - n_above)).ravel()
            acc = correct / kk
            reg = (best_sum - vals.sum(axis=1)) / kk
            records.append(
                {
                    "scenario": data.name,
                    "mechanism": getattr(sel, "name", type(sel).__name__),
                    "k": kk,
                    "epsilon": float(e),
                    "accuracy": float(acc.mean()),
                    "accuracy_se": float(acc.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan,
                    "regret": float(reg.mean()),
                    "regret_se": float(reg.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan,
                    "trials": n,
                    "private": bool(getattr(sel, "private", True)),
                }
            )
    return records
