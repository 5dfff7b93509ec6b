"""The reward law of every arm in each stationary segment: ``Results.config["arms"]``.

The engine records it (:func:`record_laws`) from the environment it probes before a run, so
that a results file says which bandit problem its regret was measured on; the lower-bound curves
of the regret plots (:mod:`dpbandits.experiments.bounds`) read it back (:func:`laws_of`).

The record, JSON-able, one entry per segment ``[start, end)`` of ``config["segments"]`` (the
steps between consecutive change points)::

    {"arm": "bernoulli" | "gaussian", "lo": 0.0, "hi": 1.0,
     "means": [[m_0, ..., m_{K-1}], ...],      # per segment; Gaussian: before clipping
     "sds": [[s_0, ..., s_{K-1}], ...] | None}  # Gaussian arms only

It is written for the environments that expose their schedule (``arm``, ``lo``, ``hi``,
``means_table()``, ``sds_table()``: the project's environments, docs/environments.md) when
every arm's law is constant within each segment. It is ``None`` otherwise: drifting means
(``dpbandits/DriftingBandit-v0``), or an environment that does not say. Files written before
this record existed have no ``"arms"`` key; they load as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.experiments.envspec import reward_family

__all__ = ["ArmLaws", "SegmentLaw", "laws_of", "record_laws"]


@dataclass(frozen=True)
class SegmentLaw:
    """The arms of one stationary segment, the 0-based steps ``[start, end)``: ``means`` (K,)
    (Bernoulli: success probabilities; Gaussian: means before clipping) and ``sds`` (K,)
    (``None`` for Bernoulli arms)."""

    start: int
    end: int
    means: NDArray[np.float64]
    sds: NDArray[np.float64] | None


@dataclass(frozen=True)
class ArmLaws:
    """The reward family (``"bernoulli"``, or ``"gaussian"`` clipped to ``[lo, hi]``) and the
    law of every arm in each segment of a run."""

    arm: str
    lo: float
    hi: float
    segments: list[SegmentLaw]


def record_laws(env: Any, horizon: int, change_points: Sequence[int]) -> dict[str, Any] | None:
    """The ``"arms"`` record of a run of ``horizon`` steps on ``env`` (see the module), or
    ``None`` when the environment does not expose its laws or they change within a segment."""
    u = getattr(env, "unwrapped", env)
    arm = reward_family(u)
    if arm is None or not callable(getattr(u, "means_table", None)):
        return None
    means = np.asarray(u.means_table(), dtype=np.float64)[:horizon]
    sds_table = getattr(u, "sds_table", None)
    sds = sds_table() if callable(sds_table) else None
    sds = None if sds is None else np.asarray(sds, dtype=np.float64)[:horizon]
    if (arm == "gaussian") != (sds is not None) or means.ndim != 2:
        return None
    cps = [int(c) for c in change_points]
    bounds = list(zip([0, *cps], [*cps, horizon], strict=True))
    for a, b in bounds:
        for table in (means, sds):
            if table is not None and not (table[a:b] == table[a]).all():
                return None  # the laws drift within a segment: no stationary law to record
    return {
        "arm": arm,
        "lo": float(u.lo),
        "hi": float(u.hi),
        "means": [means[a].tolist() for a, _ in bounds],
        "sds": None if sds is None else [sds[a].tolist() for a, _ in bounds],
    }


def laws_of(results: Any) -> ArmLaws:
    """The arms' laws per segment recorded in ``results.config["arms"]``; a ``ValueError``
    saying why when the results do not have them."""
    config = results.config
    if "arms" not in config:
        raise ValueError(
            "these results do not record the arms' reward laws (config['arms']): the file was "
            "written by an earlier version of dpbandits; run the experiment again"
        )
    rec = config["arms"]
    if rec is None:
        raise ValueError(
            "the arms' reward laws of this run are not constant between change points (the "
            "means drift, e.g. dpbandits/DriftingBandit-v0) or the environment does not expose "
            "them: there is no stationary segment to compute a regret lower bound on"
        )
    segs = results.segments()
    means, sds = rec["means"], rec.get("sds")
    if len(means) != len(segs) or (sds is not None and len(sds) != len(segs)):
        raise ValueError(
            f"config['arms'] has {len(means)} segment(s) of means but the run has {len(segs)}"
        )
    return ArmLaws(
        arm=str(rec["arm"]),
        lo=float(rec["lo"]),
        hi=float(rec["hi"]),
        segments=[
            SegmentLaw(a, b, np.asarray(means[j], dtype=np.float64),
                       None if sds is None else np.asarray(sds[j], dtype=np.float64))
            for j, (a, b) in enumerate(segs)
        ],
    )  # fmt: skip
