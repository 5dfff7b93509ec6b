"""Paper 002's synthetic experiments: Figure 1 counts, Figure 5 accuracy, Figure 8 metrics.

- :func:`figure1_design` / :func:`figure1_counts` -- §3: N = 100 rows, ``X ~ N(0, I_100)``,
  ``y = X w_1 + e`` (W1) or the W1/W2 mixture with one ``w_2`` outlier in every block of 10;
  how often non-private SIS and non-private two-stage pick each feature (k = 5).
- :func:`fan_lv_design` -- §5 eqs. (5)-(6), after Fan & Lv (2008, §3.3.1):
  ``(n, d) = (100, 2000)``, 8 nonzero weights ``(-1)^u (a + |z|)``, ``a = 4 log(n)/sqrt(n)``.
- :func:`accuracy_curves` -- for each k and eps, ``trials`` runs of DP-SIS and of the private
  two-stage method; accuracy = |selected ∩ true top-k| / k (§5), plus the TOP / GREAT / GOOD
  metrics of Figure 8 (:func:`order_metrics`) against the order statistics of the DP-SIS scores.

The real-data experiments (loaders, Table 1, stand-ins, Figs. 6-7) are
:mod:`dpbandits.topk.real_data`; they run :func:`accuracy_curves` on :class:`Dataset` objects.

Choices where the paper is open (each is a parameter):

- Noise: eq. (5) writes ``N(0, 1.5 I)`` and §3 ``N(0, 0.1)``; we read the second argument as
  the *variance* (``noise_var``). Fan & Lv's sigma = 1.5 is a standard deviation; pass
  ``noise_var=2.25`` for that reading.
- Figure 5 uses one synthetic data set (like a real one) and 100 trials of the mechanisms; the
  true top-k are the k largest ``|w_i|`` (the known model). The data are centred and scaled to
  infinity-norm 1 for *both* methods (§5 footnote 3); LASSO ``lambda = 0.1`` in paper 002's
  convention (:func:`dpbandits.topk.feature_selection.lasso_alpha`).
- Figure 1: SIS is the non-private correlation screen (:func:`dpbandits.topk.feature_selection.sis`)
  and the two-stage blocks are the 10 contiguous blocks of 10 rows (so each gets one outlier
  in W1/W2); each repetition draws new data.
- Figure 8: ``GREAT`` = all of the top ``floor(k/10)`` selected and the rest within the top
  ``ceil(11k/10)``; ``GOOD`` = top ``floor(k/100)`` and the rest within the top ``ceil(3k/2)``
  (the ceilings keep the metrics distinct from ``TOP`` for small k).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpbandits import topk as _topk
from dpbandits.topk import feature_selection as fs

__all__ = [
    "PAPER_EPSILONS",
    "Dataset",
    "accuracy_curves",
    "fan_lv_design",
    "figure1_counts",
    "figure1_design",
    "order_metrics",
    "resolve_k",
]

#: eps grid of Figs. 2-8 (the paper tests "values between 0.1 and 20").
PAPER_EPSILONS: NDArray[np.float64] = np.geomspace(0.1, 20.0, 12)



@dataclass(frozen=True)
class Dataset:
    """A regression data set and, when known, its true feature ranking.

    For real data (and stand-ins) the LASSO fields say how the truth was made: ``r2`` is the
    in-sample R^2 of the LASSO at ``lam`` (Table 1), ``n_nonzero`` its number of nonzero
    coefficients, ``truth_lambda`` the penalty at which the ranking reached its length
    (``lam`` unless extended down the path); ``support`` is the known model's support of a
    synthetic set; ``paper`` the Table 1 data set it stands for (a name of
    :data:`dpbandits.topk.real_data.TABLE1`: a stand-in's, or the one a user names), whose
    published numbers are set beside ours.
    """

    name: str
    X: NDArray[np.float64]
    y: NDArray[np.float64]
    truth: NDArray[np.int64]  # features, best first (the k truths are truth[:k])
    feature_names: tuple[str, ...] = ()
    r2: float = math.nan
    n_nonzero: int = -1
    lam: float = math.nan
    truth_lambda: float = math.nan
    convention: str = ""
    support: NDArray[np.int64] | None = None
    paper: str | None = None


def figure1_design(
    kind: str, rng: np.random.Generator, *, n: int = 100, d: int = 100, noise_var: float = 0.1
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One data set of §3: ``kind`` ``"W1"`` or ``"W1/W2"`` (9 rows of w_1, then 1 of w_2)."""
    if kind not in ("W1", "W1/W2"):
        raise ValueError(f"kind must be 'W1' or 'W1/W2', got {kind!r}")
    X = rng.standard_normal((n, d))
    w1 = np.zeros(d)
    w1[:5] = 1.0
    noise = rng.normal(scale=math.sqrt(noise_var), size=n)
    if kind == "W1":
        return X, X @ w1 + noise
    w2 = np.zeros(d)
    w2[-5:] = 1.0
    outlier = (np.arange(n) % 10) == 9  # rows 10, 20, ...: one per block of 10
    y = np.where(outlier, X @ w2, X @ w1) + noise
    return X, y


def figure1_counts(
    reps: int = 1000,
    seed: int = 0,
    *,
    k: int = 5,
    lam: float = 0.1,
    convention: str = "mean",
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Selection counts per feature of non-private SIS and two-stage over ``reps`` data sets.

    Returns records ``{design, method, feature (1-based), count, reps}``. ``lam``,
    ``convention``: the blocks' LASSO penalty (:func:`~dpbandits.topk.feature_selection.
    lasso_alpha`).
    """
    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or reps < 1:
        raise ValueError(f"reps must be a positive int, got {reps!r}")
    root = np.random.SeedSequence(seed)
    records: list[dict[str, Any]] = []
    for di, kind in enumerate(("W1", "W1/W2")):
        counts = {"SIS": np.zeros(100, dtype=np.int64), "two-stage": np.zeros(100, dtype=np.int64)}
        for r in range(reps):
            rng = np.random.default_rng(_child(root, di, r))
            X, y = figure1_design(kind, rng)
            counts["SIS"][fs.sis(X, y, k)] += 1
            counts["two-stage"][
                fs.two_stage(X, y, k, None, rng=rng, lam=lam, convention=convention)
            ] += 1
            if progress is not None:
                progress(1)
        for method, c in counts.items():
            records.extend(
                {
                    "design": kind,
                    "method": method,
                    "feature": i + 1,
                    "count": int(c[i]),
                    "reps": reps,
                }
                for i in range(100)
            )
    return records


def _child(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """A child stream addressed by ``key`` (independent of how many others are drawn)."""
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, *key))


def fan_lv_design(
    rng: np.random.Generator,
    *,
    n: int = 100,
    d: int = 2000,
    n_nonzero: int = 8,
    noise_var: float = 1.5,
) -> Dataset:
    """The synthetic data of paper 002 §5, eqs. (5)-(6), centred and scaled to norm 1."""
    X = rng.standard_normal((n, d))
    support = rng.choice(d, size=n_nonzero, replace=False)
    u = rng.random(n_nonzero) < 0.4
    z = rng.standard_normal(n_nonzero)
    a = 4.0 * math.log(n) / math.sqrt(n)
    w = np.zeros(d)
    w[support] = np.where(u, -1.0, 1.0) * (a + np.abs(z))
    y = X @ w + rng.normal(scale=math.sqrt(noise_var), size=n)
    Xs, ys = fs.preprocess(X, y)
    truth = np.argsort(-np.abs(w), kind="stable")[:n_nonzero].astype(np.int64)
    return Dataset(name="synth", X=Xs, y=ys, truth=truth)


def resolve_k(spec: int | str, d: int) -> int:
    """``5``, ``"8"`` or ``"log"`` (``floor(log d)``, §5) -> an int in ``[1, d]``."""
    if isinstance(spec, str):
        s = spec.strip().lower()
        if s in ("log", "logd", "log(d)"):
            return _topk.check_k(max(1, int(math.floor(math.log(d)))), d)
        try:
            return _topk.check_k(int(s), d)
        except ValueError:
            raise ValueError(f"k must be an integer or 'log', got {spec!r}") from None
    return _topk.check_k(spec, d)


def order_metrics(selected: ArrayLike, scores: ArrayLike, k: int) -> dict[str, NDArray[np.bool_]]:
    """TOP / GREAT / GOOD of Figure 8 (Shekelyan & Loukides 2022) per row of ``selected``.

    ``selected`` has shape ``(trials, k)``; ranks come from ``scores`` (ties by index).
    """
    sel = np.atleast_2d(np.asarray(selected))
    s = np.asarray(scores, dtype=np.float64)
    rank = np.empty(s.size, dtype=np.int64)
    rank[np.argsort(-s, kind="stable")] = np.arange(1, s.size + 1)
    r = rank[sel]  # 1-based ranks of the selected features

    def metric(head: int, window: int) -> NDArray[np.bool_]:
        has_head = np.sum(r <= head, axis=1) == head
        return has_head & np.all(r <= window, axis=1)

    return {
        "top": metric(k, k),
        "great": metric(k // 10, math.ceil(11 * k / 10)),
        "good": metric(k // 100, math.ceil(3 * k / 2)),
    }


def accuracy_curves(
    data: Dataset,
    ks: Sequence[int | str],
    epsilons: ArrayLike,
    trials: int = 100,
    seed: int = 0,
    *,
    mechanisms: Iterable[str] = ("canonical_lipschitz",),
    lam: float = 0.1,
    convention: str = "mean",
    methods: Sequence[str] = ("dp_sis", "two_stage"),
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Top-k accuracy of DP-SIS and two-stage against eps (Figs. 2-5) with Fig. 8's metrics.

    For each k, eps and mechanism, ``trials`` independent selections on ``data`` (the DP-SIS
    scores and the two-stage support counts are computed once per data set and k, so each trial
    is one call of the batched mechanism); ``lam``/``convention`` are the two-stage blocks'
    LASSO penalty. Records:
    ``{dataset, method, mechanism, k, epsilon, accuracy, accuracy_se, top, great, good,
    trials}``; non-private references (SIS, two-stage) have ``epsilon = inf``.
    """
    eps = np.asarray(epsilons, dtype=np.float64).ravel()
    if eps.size == 0 or not np.all(np.isfinite(eps) & (eps > 0)):
        raise ValueError(f"epsilons must be finite and > 0, got {eps}")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ValueError(f"trials must be a positive int, got {trials!r}")
    for m in methods:
        if m not in ("dp_sis", "two_stage"):
            raise ValueError(f"methods must be among 'dp_sis', 'two_stage', got {m!r}")
    mech_names = list(mechanisms)
    sels = [_topk.make(m) for m in mech_names]
    X, y = data.X, data.y
    d = X.shape[1]
    scores = fs.sis_scores(X, y)
    root = np.random.SeedSequence(seed)
    records: list[dict[str, Any]] = []
    done: set[int] = set()
    for ki, kspec in enumerate(ks):
        k = resolve_k(kspec, d)
        if k in done:  # e.g. 5 and floor(log d) = 5: one set of records
            continue
        done.add(k)
        truth = data.truth[:k]
        if truth.size < k:
            raise ValueError(f"k = {k} exceeds the {truth.size} true features of {data.name}")
        inputs: dict[str, NDArray[np.float64]] = {"dp_sis": scores}
        if "two_stage" in methods:
            counts = fs.support_counts(X, y, k, lam=lam, convention=convention)
            inputs["two_stage"] = counts.astype(np.float64)

        def add(method: str, mech: str, e: float, chosen: NDArray[np.int64]) -> None:
            records.append(_record(data.name, scores, truth, method, mech, e, chosen))  # noqa: B023

        # non-private references (random tie-breaking for the two-stage counts)
        ref_rng = np.random.default_rng(_child(root, ki, 0))
        for method in methods:
            base = inputs[method]
            chosen = fs.top_k_random_ties(np.broadcast_to(base, (trials, d)), k, ref_rng)
            add("SIS" if method == "dp_sis" else "two-stage", "none", math.inf, chosen)
        for mi, (name, sel) in enumerate(zip(mech_names, sels, strict=True)):
            for ei, e in enumerate(eps):
                s = sel.with_epsilon(float(e))
                for hi, method in enumerate(methods):
                    rng = np.random.default_rng(_child(root, ki, 1 + mi, ei, hi))
                    base = inputs[method]
                    chosen = np.asarray(s.select(np.broadcast_to(base, (trials, d)), k, 1.0, rng))
                    add(
                        "DP-SIS" if method == "dp_sis" else "two-stage (private)",
                        name,
                        float(e),
                        chosen,
                    )
                if progress is not None:
                    progress(1)
    return records


def _record(
    dataset: str,
    scores: NDArray[np.float64],
    truth: NDArray[np.int64],
    method: str,
    mech: str,
    e: float,
    chosen: NDArray[np.int64],
) -> dict[str, Any]:
    k = truth.size
    hits = np.isin(chosen, truth).sum(axis=1) / k
    om = order_metrics(chosen, scores, k)
    se = float(hits.std(ddof=1) / math.sqrt(hits.size)) if hits.size > 1 else float("nan")
    return {
        "dataset": dataset,
        "method": method,
        "mechanism": mech,
        "k": k,
        "epsilon": e,
        "accuracy": float(hits.mean()),
        "accuracy_se": se,
        "top": float(om["top"].mean()),
        "great": float(om["great"].mean()),
        "good": float(om["good"].mean()),
        "trials": int(hits.size),
    }
