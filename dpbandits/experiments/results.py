"""What a run returns: :class:`Results` (curves, per-run totals, privacy reports; saved and
loaded exactly) and its :class:`SummaryTable`."""

from __future__ import annotations

import json
import math
import os
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpbandits.core.extras import install_hint
from dpbandits.core.files import atomic_open, strict_json
from dpbandits.core.formatting import fixed
from dpbandits.trust.notions import check_delta, conversion_text, with_conversion

__all__ = ["RESULTS_FORMAT", "Results", "ResultsFileError", "SummaryTable"]

#: The format tag written into every results file; :meth:`Results.load` reads only this one.
RESULTS_FORMAT = "dpbandits.Results/1"


class ResultsFileError(ValueError):
    """A file given to :meth:`Results.load` is not a complete results file this version reads."""


#: The type of each metadata field of a results file (checked by :meth:`Results.load`).
_META_TYPES: dict[str, type] = {
    "config": dict, "labels": list, "privacy": dict, "timing": dict, "array_keys": list,
    "data_keys": dict,
}  # fmt: skip


def _check_meta(meta: dict[str, Any], path: Path) -> None:
    """Refuse metadata whose fields are not of the types :meth:`Results.save` writes."""
    for key, kind in _META_TYPES.items():
        value = meta.get(key, {} if key == "timing" else None)
        if not isinstance(value, kind):
            raise ResultsFileError(
                f"{path} is not a valid dpbandits results file: metadata {key!r} is "
                f"{type(value).__name__}, expected {kind.__name__}"
            )
    labels = meta["labels"]
    if not all(isinstance(x, str) for x in labels) or len(set(labels)) != len(labels):
        raise ResultsFileError(
            f"{path} is not a valid dpbandits results file: the agent labels {labels!r} are not "
            "distinct strings"
        )


def _privacy_short(report: Any) -> str:
    """One-cell description of the privacy spent by an agent (from its privacy report)."""
    if not isinstance(report, dict):
        return "none (not private)"

    def get(*keys: str) -> Any:
        x: Any = report
        for k in keys:
            x = x.get(k) if isinstance(x, dict) else None
        return x

    total = report.get("epsilon_total")
    conv = report.get("approx_dp")
    approx = ""
    if isinstance(conv, dict):  # the (eps, delta) conversion (docs/trust-models.md)
        eps_d = conv.get("epsilon")
        approx = (f"; (eps, delta)=({eps_d:.3g}, {conv['delta']:g})" if eps_d is not None
                  else "; (eps, delta): needs the extra 'accounting'")  # fmt: skip
    if report.get("model") == "local" and isinstance(total, (int, float)):
        return f"eps={total:g} LDP (at the user){approx}"
    if report.get("notion") == "zcdp":
        return f"rho={report.get('rho', float('nan')):g} zCDP (whole run){approx}"
    if report.get("model") == "global" and isinstance(total, (int, float)):
        # a literature agent: one eps-global-DP guarantee for the whole run
        return f"eps={total:g} (whole run){approx}"
    parts = []
    eps_m = get("means", "epsilon")
    if isinstance(eps_m, (int, float)):
        parts.append(f"eps_M={eps_m:g}")
    eps_p = get("quantiles", "epsilon_per_pair")
    if isinstance(eps_p, (int, float)):
        paper = get("quantiles", "paper_count")
        extra = f" (paper: {paper:g})" if isinstance(paper, (int, float)) else ""
        parts.append(f"eps_p={eps_p:g}{extra}")
    eps_s = get("selection", "epsilon_per_action")
    if isinstance(eps_s, (int, float)):
        parts.append(f"eps_S={eps_s:g}/action")
    if isinstance(total, (int, float)) and parts:
        parts.append(f"total eps={total:g}")
    if report.get("selector_private") is False:
        parts.append("selector NOT DP")
    return ", ".join(parts) if parts else "see privacy report"


class SummaryTable:
    """The summary of a run: one row (a dict) per agent; ``str()`` is an aligned text table.

    Each row has ``regret_mean``, ``regret_sd``, ``regret_se``, ``regret_segment_<j>`` (mean
    regret accumulated in segment ``j``, the steps ``[c_j, c_{j+1})`` between consecutive change
    points of the environment, for every change point), ``pre_change_regret`` /
    ``post_change_regret`` (the split at the first change point), ``reward_mean``,
    ``reward_se`` and ``privacy``. The text table shows one column per segment when the
    environment declares change points.
    """

    def __init__(
        self, rows: list[dict[str, Any]], segments: list[tuple[int, int]] | None = None
    ) -> None:
        self.rows = rows
        self.segments = list(segments or [])

    @property
    def columns(self) -> tuple[tuple[str, str], ...]:
        """``(key, title)`` of every column of the text table."""
        seg_cols = (
            tuple((f"regret_segment_{j}", f"regret in [{a}, {b})")
            for j, (a, b) in enumerate(self.segments))
            if len(self.segments) > 1 else ()
        )  # fmt: skip
        return (
            (("agent", "agent"), ("regret", "total regret (mean ± SE)"))
            + seg_cols
            + (("reward_mean", "final cum. reward"), ("privacy", "privacy spent"))
        )

    def __iter__(self) -> Any:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, label: str) -> dict[str, Any]:
        for row in self.rows:
            if row["agent"] == label:
                return row
        raise KeyError(label)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{label: {regret_mean, regret_se, regret_segment_0, ...}}`` (JSON-able)."""
        return {r["agent"]: {k: v for k, v in r.items() if k != "agent"} for r in self.rows}

    def _cells(self, r: dict[str, Any]) -> list[str]:
        cells = []
        for key, _ in self.columns:
            if key == "agent" or key == "privacy":
                cells.append(str(r[key]))
            elif key == "regret":
                cells.append(f"{fixed(r['regret_mean'])} ± {fixed(r['regret_se'])}")
            else:
                cells.append(fixed(r.get(key, math.nan)))
        return cells

    def __str__(self) -> str:
        head = [title for _, title in self.columns]
        body = [self._cells(r) for r in self.rows]
        widths = [max(len(str(c)) for c in col) for col in zip(head, *body, strict=True)]
        right = [key not in ("agent", "privacy") for key, _ in self.columns]

        def line(cells: list[str]) -> str:
            return "  ".join(
                c.rjust(w) if rj else c.ljust(w)
                for c, w, rj in zip(cells, widths, right, strict=True)
            ).rstrip()

        sep = "  ".join("-" * w for w in widths)
        return "\n".join([line(head), sep] + [line(b) for b in body])

    def to_markdown(self) -> str:
        head = [title for _, title in self.columns]
        out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
        out += ["| " + " | ".join(self._cells(r)) + " |" for r in self.rows]
        return "\n".join(out)

    __repr__ = __str__


@dataclass(eq=False)
class Results:
    """What :func:`run` returns; saved and loaded exactly (``.npz`` + JSON metadata).

    Attributes
    ----------
    config:
        The run's identity and parameters (JSON-able): env, n_runs, horizon, seed, chunk size,
        strides, agents (class, params, repr), change points, library versions, and ``arms``:
        the reward law of every arm in each segment between change points, when the
        environment exposes it (:mod:`dpbandits.experiments.arm_laws`; absent from files
        written before it existed, ``None`` when the means drift).
    labels:
        Agent labels, in order.
    arrays:
        Shared arrays: ``steps`` (P,) recorded step counts (1-based: after ``steps[i]`` steps),
        ``expected_rewards`` (P, K) true expected rewards at those steps, ``trace_steps`` (Q,),
        ``true_quantile_range`` (Q, K) the true quantile range of the clipped reward at the
        trace steps (when the environment exposes its parameters).
    data:
        Per label: ``regret`` and ``reward`` (P, R) per-run cumulative dynamic pseudo-regret and
        realised reward at ``steps``; ``total_regret``, ``total_reward``, ``pre_change_regret``
        (steps before the first change point), ``post_change_regret`` (R,) (without a change
        point: pre = total and post = NaN, "not applicable"; an environment without expected
        rewards gives NaN regret, which the summary shows as "-"); ``segment_regret`` (S, R)
        the regret in each segment between consecutive change points (``config["segments"]``;
        its rows sum to ``total_regret``); ``action_counts``
        (R, K); ``action_freq`` (P, K) fraction of pulls of each arm in each recorded interval;
        for private agents ``private_means`` and ``sensitivities`` (Q, R, K); ``actions`` (T, R)
        when ``keep_actions``.
    privacy:
        Per label, the agent's privacy report (``None`` for non-private agents).
    timing:
        Wall time and workers of the run (not part of equality).
    """

    config: dict[str, Any]
    labels: list[str]
    arrays: dict[str, NDArray[Any]]
    data: dict[str, dict[str, NDArray[Any]]]
    privacy: dict[str, Any]
    timing: dict[str, Any] = field(default_factory=dict)

    # -- curves ---------------------------------------------------------------------------
    @property
    def steps(self) -> NDArray[np.int64]:
        return self.arrays["steps"]

    @property
    def n_runs(self) -> int:
        return int(self.config["n_runs"])

    def _check_label(self, label: str) -> None:
        if label not in self.data:
            raise ValueError(f"unknown agent label {label!r}; labels: {', '.join(self.labels)}")

    def mean(self, label: str, what: str = "regret") -> NDArray[np.float64]:
        """Mean over runs of the cumulative ``what`` (``"regret"`` or ``"reward"``) at ``steps``."""
        self._check_label(label)
        return np.asarray(self.data[label][what].mean(axis=1))

    def se(self, label: str, what: str = "regret") -> NDArray[np.float64]:
        """Standard error over runs (NaN with a single run: it is undefined)."""
        self._check_label(label)
        x = self.data[label][what]
        if x.shape[1] < 2:
            return np.full(x.shape[0], np.nan)
        return np.asarray(x.std(axis=1, ddof=1) / math.sqrt(x.shape[1]))

    # -- tables ---------------------------------------------------------------------------
    def segments(self) -> list[tuple[int, int]]:
        """The segments ``[(start, end), ...]`` (0-based steps, end excluded) between consecutive
        change points of the environment; a single ``(0, horizon)`` without change points."""
        segs = self.config.get("segments")
        if segs:
            return [(int(a), int(b)) for a, b in segs]
        horizon = int(self.config["horizon"])
        cps = [int(c) for c in self.config.get("change_points", []) if 0 < int(c) < horizon]
        return list(zip([0, *cps], [*cps, horizon], strict=True))

    def segment_regret(self, label: str) -> NDArray[np.float64]:
        """Per-run regret accumulated in each segment, ``(S, R)``; the rows sum to the total."""
        self._check_label(label)
        d = self.data[label]
        if "segment_regret" in d:
            return np.asarray(d["segment_regret"])
        # files written before segments were recorded: the split at the first change point
        if len(self.segments()) == 2:
            return np.stack([d["pre_change_regret"], d["post_change_regret"]])
        if len(self.segments()) == 1:
            return np.asarray(d["total_regret"])[None, :]
        raise ValueError(
            f"{label!r}: this results file records regret at the first change point only "
            "(re-run the experiment for every segment)"
        )

    def summary(self) -> SummaryTable:
        """Per agent: total regret mean, SD and SE, regret per segment between change points
        (and the pre-/post-first-change split), final cumulative reward, privacy spent."""
        rows = []
        for label in self.labels:
            d = self.data[label]
            tot = d["total_regret"]
            n = tot.size
            sd = float(tot.std(ddof=1)) if n > 1 else math.nan
            row: dict[str, Any] = {
                "agent": label,
                "n_runs": int(n),
                "regret_mean": float(tot.mean()),
                "regret_sd": sd,
                "regret_se": sd / math.sqrt(n) if n > 1 else math.nan,
            }
            for j, seg in enumerate(self.segment_regret(label)):
                row[f"regret_segment_{j}"] = float(seg.mean())
            row.update(
                {
                    "pre_change_regret": float(d["pre_change_regret"].mean()),
                    "post_change_regret": float(d["post_change_regret"].mean()),
                    "reward_mean": float(d["total_reward"].mean()),
                    "reward_se": float(d["total_reward"].std(ddof=1) / math.sqrt(n))
                    if n > 1
                    else math.nan,
                    "privacy": _privacy_short(self.privacy.get(label)),
                }
            )
            rows.append(row)
        return SummaryTable(rows, self.segments())

    def privacy_text(self) -> str:
        """The privacy report of every private agent as readable text."""
        out = []
        for label in self.labels:
            rep = self.privacy.get(label)
            if not isinstance(rep, dict):
                continue
            text = rep.get("text") or json.dumps(rep, indent=2)
            conv = conversion_text(rep)
            out.append(f"[{label}]\n{text}" + (f"\n{conv}" if conv else ""))
        return "\n\n".join(out) if out else "no private agents"

    def privacy_at(self, delta: float) -> dict[str, Any]:
        """Every privacy report with its guarantee also as (eps, delta) at ``delta``, converted
        by Google's ``dp-accounting`` (the extra ``accounting``; docs/trust-models.md); runs
        made with ``run(..., delta=...)`` have it in :attr:`privacy` already."""
        d = check_delta(delta)
        return {label: with_conversion(rep, d) for label, rep in self.privacy.items()}

    def to_json(self) -> dict[str, Any]:
        """``{"config", "agents": {label: summary row}, "privacy"}`` (the CLI's ``--json``).

        Strict JSON: undefined numbers (the standard error of a single run) become ``None``.
        """

        return strict_json(
            {"config": self.config, "agents": self.summary().to_dict(), "privacy": self.privacy}
        )

    def to_frame(self, kind: str = "curves") -> Any:
        """A tidy ``pandas.DataFrame`` (pandas is imported only here).

        ``kind="curves"``: one row per (agent, step) with mean and SE of cumulative regret and
        reward. ``kind="runs"``: one row per (agent, run) with the per-run totals, including
        ``regret_segment_<j>`` for every segment between change points.
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError(f"to_frame() needs pandas: {install_hint('pandas')}") from exc
        frames = []
        for label in self.labels:
            if kind == "curves":
                frames.append(
                    pd.DataFrame(
                        {
                            "agent": label,
                            "step": self.steps,
                            "regret_mean": self.mean(label, "regret"),
                            "regret_se": self.se(label, "regret"),
                            "reward_mean": self.mean(label, "reward"),
                            "reward_se": self.se(label, "reward"),
                        }
                    )
                )
            elif kind == "runs":
                d = self.data[label]
                frames.append(
                    pd.DataFrame(
                        {
                            "agent": label,
                            "run": np.arange(d["total_regret"].size),
                            "total_regret": d["total_regret"],
                            "pre_change_regret": d["pre_change_regret"],
                            "post_change_regret": d["post_change_regret"],
                            **{
                                f"regret_segment_{j}": seg
                                for j, seg in enumerate(self.segment_regret(label))
                            },
                            "total_reward": d["total_reward"],
                        }
                    )
                )
            else:
                raise ValueError(f"kind must be 'curves' or 'runs', got {kind!r}")
        return pd.concat(frames, ignore_index=True)

    # -- persistence ----------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write one ``.npz`` file (arrays + JSON metadata) atomically; returns its path.

        ``.npz`` is appended to the name if missing. The file is written under a temporary name
        and renamed, so an interrupted save never leaves a truncated file behind.
        :meth:`load` restores an equal object.
        """
        p = Path(path)
        if p.suffix != ".npz":
            p = p.with_name(p.name + ".npz")
        meta = {
            "format": RESULTS_FORMAT,
            "config": self.config,
            "labels": self.labels,
            "privacy": self.privacy,
            "timing": self.timing,
            "array_keys": sorted(self.arrays),
            "data_keys": {label: sorted(self.data[label]) for label in self.labels},
        }
        payload: dict[str, Any] = {"__meta__": np.array(json.dumps(meta))}
        for key, arr in self.arrays.items():
            payload[f"shared__{key}"] = arr
        for j, label in enumerate(self.labels):
            for key, arr in self.data[label].items():
                payload[f"agent{j}__{key}"] = arr
        with atomic_open(p, "wb") as f:
            np.savez_compressed(f, **payload)
        return p

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Results:
        """Read a file written by :meth:`save`.

        Raises ``FileNotFoundError`` when there is no such file, and :class:`ResultsFileError`
        (a ``ValueError``) for anything else that is not a complete results file of a format
        this version reads: another kind of file, a truncated or corrupted one, or one written
        by an incompatible version.
        """
        p = Path(path)
        if not p.exists() and p.with_name(p.name + ".npz").exists():
            p = p.with_name(p.name + ".npz")
        if p.is_dir():
            raise ResultsFileError(f"{str(p)!r} is a directory, expected a results file (.npz)")
        if not p.is_file():
            raise FileNotFoundError(f"no results file at {str(p)!r}")
        with open(p, "rb") as fh:
            magic = fh.read(4)
        if magic != b"PK\x03\x04":  # every .npz archive is a zip file
            raise ResultsFileError(
                f"{p} is not a dpbandits results file (expected a .npz archive written by "
                f"Results.save; the file starts with {magic!r})"
            )
        try:
            with np.load(p, allow_pickle=False) as f:
                if "__meta__" not in f.files:
                    raise ResultsFileError(
                        f"{p} is not a dpbandits results file (expected a .npz archive written "
                        "by Results.save)"
                    )
                meta = json.loads(str(f["__meta__"]))
                fmt = meta.get("format") if isinstance(meta, dict) else None
                if fmt != RESULTS_FORMAT:
                    raise ResultsFileError(
                        f"{p} has results format {fmt!r}; this version of dpbandits reads "
                        f"{RESULTS_FORMAT!r} (re-run the experiment, or load it with the "
                        "dpbandits version that wrote it)"
                    )
                _check_meta(meta, p)
                arrays = {k: f[f"shared__{k}"] for k in meta["array_keys"]}
                data = {
                    label: {k: f[f"agent{j}__{k}"] for k in meta["data_keys"][label]}
                    for j, label in enumerate(meta["labels"])
                }
                named = [*arrays.items()]
                named += [(f"{lab}/{k}", a) for lab in data for k, a in data[lab].items()]
                for name, arr in named:
                    if arr.dtype.kind not in "biuf":
                        raise ResultsFileError(
                            f"{p} is not a valid dpbandits results file: array {name!r} holds "
                            f"{arr.dtype} values, expected numbers"
                        )
                return cls(
                    config=meta["config"],
                    labels=list(meta["labels"]),
                    arrays=arrays,
                    data=data,
                    privacy=meta["privacy"],
                    timing=meta.get("timing", {}),
                )
        except ResultsFileError:
            raise
        except (OSError, EOFError, KeyError, TypeError, ValueError, zipfile.BadZipFile,
                zlib.error) as exc:  # fmt: skip
            # What np.load and the zip layer raise on a file that is not (or no longer) a whole
            # results archive; ``pickle`` is never involved (allow_pickle=False).
            raise ResultsFileError(
                f"{p} is not a readable dpbandits results file ({type(exc).__name__}: {exc}); "
                "it may be truncated, corrupted or of another kind"
            ) from None

    def equals(self, other: Results) -> bool:
        """Exact equality of everything but ``timing`` (arrays bit for bit, NaN equal to NaN)."""

        def same(a: NDArray[Any], b: NDArray[Any]) -> bool:
            return (
                a.dtype == b.dtype
                and a.shape == b.shape
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
            )

        if (self.config, self.labels, self.privacy) != (other.config, other.labels, other.privacy):
            return False
        if sorted(self.arrays) != sorted(other.arrays):
            return False
        if not all(same(self.arrays[k], other.arrays[k]) for k in self.arrays):
            return False
        for label in self.labels:
            a, b = self.data[label], other.data.get(label, {})
            if sorted(a) != sorted(b) or not all(same(a[k], b[k]) for k in a):
                return False
        return True

    def __repr__(self) -> str:
        return (
            f"Results(env={self.config.get('env', {}).get('id')!r}, agents={self.labels}, "
            f"n_runs={self.config.get('n_runs')}, horizon={self.config.get('horizon')}, "
            f"seed={self.config.get('seed')})"
        )
