"""Feature selection from private correlations: DP-SIS and the two-stage baseline (paper 002).

- :func:`dp_sis` -- Algorithm 1 of paper 002: scores ``|x_(i)^T y|`` of the columns against
  the target, sensitivity 1, then a private top-k (default the canonical Lipschitz mechanism
  with ``gamma = 1/2``, §4.2).
- :func:`sis` -- non-private Sure Independence Screening (Fan & Lv 2008): the k columns of
  largest absolute correlation (columns centred and scaled to unit variance).
- :func:`two_stage` -- the first stage of Kifer, Smith & Thakurta (2012) as paper 002 runs it
  (§2.2, §3): ``floor(sqrt(N))`` contiguous blocks of rows, an L1-regularised least-squares
  model (LASSO, ``lambda = 0.1`` as in §5) per block, and the k features most often in the
  blocks' supports, chosen privately (or not, with ``epsilon=None``).
- :func:`lasso_ranking` -- the non-private LASSO's features, paper 002's proxy for the true
  top-k on real data (§5), and :func:`lasso_r2`, the R^2 of Table 1.

The LASSO penalty ``lambda`` (:func:`lasso_alpha`). Paper 002 writes the LASSO as eq. (4),
``sum_i l(x_i, y_i; w) + lambda ||w||_1``, without saying how ``l`` is normalised; §5 uses
``lambda = 0.1``. The default convention, ``"mean"``, is scikit-learn's
``||y - Xw||^2 / (2N) + lambda ||w||_1`` (``alpha = lambda``): it is the one under which
Table 1 is possible. Table 1's smallest R^2 (Tian 0.0080, Gravier 0.0689) are the in-sample
R^2 of a LASSO whose penalty is close to the largest useful one, ``max |X^T y| / N`` (0.05-0.2
on centred data scaled to infinity-norm 1): with ``alpha = lambda / N`` (``"half_sum"``, the
convention of the code of Khanna et al.'s review, which minimises
``||y - Xw||^2 / (2N) + (lambda / N) ||w||_1``) or ``lambda / (2N)`` (``"sum"``) the LASSO
interpolates ``d >> N`` data and every in-sample R^2 is above 0.99. Under ``"mean"`` a
continuous target scaled to infinity-norm 1 can zero every coefficient (its
``max |X^T y| / N`` is about 0.065 on a plainly sparse design with N = 100), while the class
labels of Table 1's microarray sets (two classes scaled to +-1) keep
``max |X^T y| / N`` at 0.15-0.25. :func:`lasso_ranking` therefore extends the ranking down the
LASSO path when ``lambda`` keeps fewer than k features, and says at which penalty it did
(docs/topk.md, "The LASSO penalty").

Preprocessing (Algorithm 1, line 1 and §4.1): every column must have infinity-norm at most 1
and so must ``y`` (centred columns are recommended, for a better approximation of the
correlations, but not required for privacy). :func:`dp_sis` checks this and raises; with
``normalize=True`` it first applies :func:`preprocess` (centre the columns and ``y``, divide
each by its largest absolute value). That rescaling looks at the data and is **not private**
-- paper 002 does the same (footnote 1 and 3) and says so.

Neighbouring data sets and sensitivity (choices where the paper is brief): with
``|x_ni|, |y_n| <= 1``, adding or removing one row changes each ``x_(i)^T y`` by at most 1, the
sensitivity paper 002 uses; replacing a row can change it by 2 (pass ``sensitivity=2`` for
that notion). In the two-stage method a row lies in one block, so under replacement of a row
each feature's support count changes by at most 1: the counts have sensitivity 1. Each
block's support is its nonzero LASSO coefficients, cut to the k largest in absolute value
(Kifer et al.'s stage one works with k-sparse supports); ties in the non-private count ranking
are broken uniformly at random (breaking them by index would favour the first features).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dpbandits import topk as _topk
from dpbandits.core import checks
from dpbandits.core.arrays import FloatArray, IntArray
from dpbandits.core.extras import install_hint
from dpbandits.selectors.base import RNGLike

__all__ = [
    "LASSO_CONVENTIONS",
    "SKLEARN_HINT",
    "LassoRanking",
    "check_design",
    "dp_sis",
    "lasso_alpha",
    "lasso_r2",
    "lasso_ranking",
    "lasso_top_k",
    "preprocess",
    "sis",
    "sis_scores",
    "support_counts",
    "two_stage",
]

SKLEARN_HINT = f"the two-stage baseline and LASSO need scikit-learn: {install_hint('sklearn')}"


def _lasso_class() -> Any:
    try:
        from sklearn.linear_model import Lasso
    except ImportError as exc:  # pragma: no cover - exercised by monkeypatching in tests
        raise ImportError(SKLEARN_HINT) from exc
    return Lasso


def check_design(X: ArrayLike, y: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """``X`` (N, d) and ``y`` (N,) as float arrays: real, finite, matching, ``N >= 2``."""
    xa = checks.real_array(X, "X", finite=False)
    ya = checks.real_array(y, "y", finite=False)
    if xa.ndim != 2:
        raise ValueError(f"X must have shape (N, d), got shape {xa.shape}")
    if ya.shape != (xa.shape[0],):
        raise ValueError(f"y must have shape ({xa.shape[0]},) to match X, got {ya.shape}")
    if xa.shape[0] < 2 or xa.shape[1] < 1:
        raise ValueError(f"X needs at least 2 rows and 1 column, got shape {xa.shape}")
    for name, arr in (("X", xa), ("y", ya)):
        if not np.all(np.isfinite(arr)):
            first = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
            raise ValueError(f"{name} must be finite; {name}{list(first)} = {arr[first]!r}")
    return xa, ya


def preprocess(X: ArrayLike, y: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Centre every column and ``y``, then scale each to infinity-norm 1 (**not private**).

    A constant column stays 0. This is the preprocessing paper 002 applies (§4.1, §5 footnote).
    """
    xa, ya = check_design(X, y)
    xc = xa - xa.mean(axis=0)
    scale = np.abs(xc).max(axis=0)
    xc = np.divide(xc, scale, out=np.zeros_like(xc), where=scale > 0)
    yc = ya - ya.mean()
    ys = float(np.abs(yc).max())
    yc = yc / ys if ys > 0 else yc
    return xc, yc


def sis_scores(X: ArrayLike, y: ArrayLike) -> FloatArray:
    """The DP-SIS scores ``|x_(i)^T y|`` (Algorithm 1, line 2), shape ``(d,)``."""
    xa, ya = check_design(X, y)
    return np.abs(xa.T @ ya)


def _check_k(k: Any, d: int) -> int:
    return _topk.check_k(k, d)


def sis(X: ArrayLike, y: ArrayLike, k: int) -> IntArray:
    """Non-private SIS (Fan & Lv 2008): the k largest ``|corr(x_(i), y)|``, best first."""
    xa, ya = check_design(X, y)
    kk = _check_k(k, xa.shape[1])
    xc = xa - xa.mean(axis=0)
    sd = xc.std(axis=0)
    xc = np.divide(xc, sd, out=np.zeros_like(xc), where=sd > 0)
    score = np.abs(xc.T @ (ya - ya.mean()))
    return np.argsort(-score, kind="stable")[:kk].astype(np.int64)


def dp_sis(
    X: ArrayLike,
    y: ArrayLike,
    k: int,
    epsilon: float,
    mechanism: str | _topk.TopKSelector = "canonical_lipschitz",
    rng: RNGLike = None,
    *,
    normalize: bool = False,
    sensitivity: float = 1.0,
    tol: float = 1e-9,
) -> IntArray:
    """DP-SIS, Algorithm 1 of paper 002: a private top-k of ``|x_(i)^T y|`` (sensitivity 1).

    Parameters
    ----------
    X, y:
        Design ``(N, d)`` and target ``(N,)``. Each column and ``y`` must have infinity-norm
        at most 1 (checked, with tolerance ``tol``) unless ``normalize`` is set.
    k:
        Number of features, ``1 <= k <= d``.
    epsilon:
        Privacy budget of the whole selection.
    mechanism:
        A name from :func:`dpbandits.topk.available` or a top-k mechanism instance (its own eps
        is replaced by ``epsilon``); default the canonical Lipschitz mechanism, gamma = 1/2.
    rng:
        Generator or seed.
    normalize:
        Apply :func:`preprocess` first (non-private rescaling, as in paper 002).
    sensitivity:
        Sensitivity of every score: 1 under add/remove-one-row (paper 002); 2 under
        replace-one-row.

    Returns
    -------
    numpy.ndarray
        ``k`` feature indices (a ranking for ranking mechanisms, increasing for set ones).
    """
    eps = checks.positive_number(epsilon, "epsilon")
    checks.positive_number(sensitivity, "sensitivity")
    xa, ya = preprocess(X, y) if normalize else check_design(X, y)
    kk = _check_k(k, xa.shape[1])
    if not normalize:
        col = np.abs(xa).max(axis=0)
        if np.any(col > 1 + tol):
            bad = int(np.argmax(col))
            raise ValueError(
                f"X columns must have infinity-norm <= 1 (Algorithm 1 of paper 002); column "
                f"{bad} has {col[bad]:.6g}. Rescale, or pass normalize=True (not private)"
            )
        ymax = float(np.abs(ya).max())
        if ymax > 1 + tol:
            raise ValueError(
                f"y must have infinity-norm <= 1 (Algorithm 1 of paper 002), got {ymax:.6g}. "
                "Rescale, or pass normalize=True (not private)"
            )
    sel = _topk.make(mechanism)
    sel = sel.with_epsilon(eps)
    return np.asarray(sel.select(np.abs(xa.T @ ya), kk, float(sensitivity), rng), dtype=np.int64)


def _n_blocks(n: int, n_blocks: int | None) -> int:
    if n_blocks is None:
        return max(1, math.isqrt(n))
    if isinstance(n_blocks, bool) or not isinstance(n_blocks, (int, np.integer)):
        raise TypeError(f"n_blocks must be an int or None, got {type(n_blocks).__name__}")
    if not 1 <= n_blocks <= n:
        raise ValueError(f"n_blocks must satisfy 1 <= n_blocks <= N = {n}, got {n_blocks}")
    return int(n_blocks)


#: How eq. (4)'s loss is normalised (:func:`lasso_alpha`).
LASSO_CONVENTIONS = ("mean", "half_sum", "sum")


def lasso_alpha(lam: float, n: int, convention: str = "mean") -> float:
    """scikit-learn's ``Lasso`` ``alpha`` for paper 002's penalty ``lam`` on ``n`` rows.

    scikit-learn minimises ``||y - Xw||^2 / (2n) + alpha ||w||_1``. Paper 002's eq. (4) is
    ``sum_i l(x_i, y_i; w) + lambda ||w||_1``; the three readings of ``l`` are

    - ``"mean"`` (default, paper 002's Table 1): ``l`` = squared error / (2n), ``alpha = lam``;
    - ``"half_sum"``: ``l`` = squared error / 2, ``alpha = lam / n`` (the convention of
      Khanna et al.'s review code, which paper 002's authors share);
    - ``"sum"``: ``l`` = squared error, ``alpha = lam / (2n)``.

    The evidence for ``"mean"`` is in the module docstring and docs/topk.md.
    """
    lam_f = checks.positive_number(lam, "lam (the LASSO penalty lambda)")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n (rows of the regression) must be an integer >= 1, got {n!r}")
    checks.one_of(convention, LASSO_CONVENTIONS, "convention")
    if convention == "mean":
        return lam_f
    if convention == "half_sum":
        return lam_f / int(n)
    return lam_f / (2 * int(n))  # "sum"


def _lasso_fit(xa: FloatArray, ya: FloatArray, alpha: float) -> tuple[FloatArray, float]:
    """Coefficients and intercept of scikit-learn's ``Lasso(alpha)`` (with an intercept)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning on tiny blocks: still a support
        model = _lasso_class()(alpha=float(alpha)).fit(xa, ya)
    return np.asarray(model.coef_, dtype=np.float64), float(model.intercept_)


def lasso_top_k(X: ArrayLike, y: ArrayLike, k: int, alpha: float = 0.1) -> IntArray:
    """The (at most) k nonzero LASSO coefficients of largest magnitude, best first.

    ``alpha`` is scikit-learn's (``||y - Xw||^2 / (2N) + alpha ||w||_1``, with an intercept;
    :func:`lasso_alpha` converts paper 002's ``lambda``). Fewer than k indices come back when
    fewer coefficients are nonzero; :func:`lasso_ranking` never returns fewer.
    """
    xa, ya = check_design(X, y)
    kk = _check_k(k, xa.shape[1])
    checks.positive_number(alpha, "alpha")
    mag = np.abs(_lasso_fit(xa, ya, alpha)[0])
    order = np.argsort(-mag, kind="stable")[:kk]
    return order[mag[order] > 0].astype(np.int64)


def lasso_r2(X: ArrayLike, y: ArrayLike, lam: float = 0.1, convention: str = "mean") -> float:
    """In-sample R^2 of the LASSO at paper 002's ``lam`` (Table 1's column R^2).

    Run it on the data as the experiments see them (centred, infinity-norm 1:
    :func:`preprocess`). A LASSO with an intercept has in-sample R^2 in ``[0, 1]``; 0 when the
    penalty zeroes every coefficient.
    """
    xa, ya = check_design(X, y)
    coef, icpt = _lasso_fit(xa, ya, lasso_alpha(lam, xa.shape[0], convention))
    tss = float(((ya - ya.mean()) ** 2).sum())
    if tss == 0.0:
        raise ValueError("y is constant: R^2 is undefined")
    return 1.0 - float(((ya - xa @ coef - icpt) ** 2).sum()) / tss


@dataclass(frozen=True)
class LassoRanking:
    """The LASSO's ranking of the features (:func:`lasso_ranking`).

    ``features``: best first, at least the k asked for; ``n_nonzero``: nonzero coefficients at
    ``lam``; ``lam_used``: the penalty (same convention) at which the ranking reached k
    features, ``lam`` itself unless ``lam`` kept fewer than k.
    """

    features: IntArray
    lam: float
    lam_used: float
    n_nonzero: int
    convention: str

    @property
    def extended(self) -> bool:
        """Whether the ranking had to go below ``lam`` to reach k features."""
        return self.lam_used < self.lam


def lasso_ranking(
    X: ArrayLike,
    y: ArrayLike,
    k: int,
    lam: float = 0.1,
    convention: str = "mean",
    *,
    shrink: float = 0.8,
    max_steps: int = 200,
    strict: bool = True,
) -> LassoRanking:
    """Paper 002's proxy for the true top-k (§5): the LASSO's largest coefficients at ``lam``.

    The features with a nonzero coefficient at ``lam`` come first, by decreasing magnitude --
    the paper's "top-k components of the non-private LASSO regression". When there are fewer
    than k of them the ranking continues down the LASSO path: the penalty is multiplied by
    ``shrink`` (warm-started fits) until k features have entered, and each step appends the
    features that became nonzero, by decreasing magnitude. ``lam_used`` records where it
    stopped. When no penalty down to ``lam * shrink**max_steps`` gives k features (a LASSO
    keeps at most about N; constant columns and features a perfect fit does not need never
    enter) it raises ValueError, or, with ``strict=False``, returns the shorter ranking.
    """
    xa, ya = check_design(X, y)
    n, d = xa.shape
    kk = _check_k(k, d)
    alpha0 = lasso_alpha(lam, n, convention)
    if not (0.0 < shrink < 1.0):
        raise ValueError(f"shrink must lie in (0, 1), got {shrink!r}")
    lasso = _lasso_class()(alpha=alpha0, warm_start=True)
    ranked: list[int] = []
    seen = np.zeros(d, dtype=bool)
    n_nonzero = 0

    def ranking(steps: int) -> LassoRanking:
        """The ranking so far, its penalty multiplied by ``shrink`` ``steps`` times."""
        return LassoRanking(
            features=np.asarray(ranked, dtype=np.int64),
            lam=float(lam),
            lam_used=float(lam) * shrink**steps,
            n_nonzero=n_nonzero,
            convention=convention,
        )

    alpha = alpha0
    for step in range(max_steps + 1):
        lasso.set_params(alpha=alpha)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning: the support is what matters
            lasso.fit(xa, ya)
        mag = np.abs(np.asarray(lasso.coef_, dtype=np.float64))
        new = np.flatnonzero((mag > 0) & ~seen)
        new = new[np.argsort(-mag[new], kind="stable")]
        ranked.extend(int(i) for i in new)
        seen[new] = True
        if step == 0:
            n_nonzero = int(np.count_nonzero(mag))
        if len(ranked) >= kk:
            return ranking(step)
        alpha *= shrink
    if not strict:
        return ranking(max_steps)
    raise ValueError(
        f"k = {kk} exceeds the {len(ranked)} features the LASSO selects at any penalty down to "
        f"lambda = {float(lam) * shrink**max_steps:.3g} (a LASSO keeps at most about "
        f"N = {n}; constant columns never enter). Choose a smaller k"
    )


def support_counts(
    X: ArrayLike,
    y: ArrayLike,
    k: int,
    *,
    lam: float = 0.1,
    convention: str = "mean",
    n_blocks: int | None = None,
) -> IntArray:
    """How many of the ``floor(sqrt(N))`` contiguous row blocks put each feature in their
    k-support (:func:`lasso_top_k` per block at ``lasso_alpha(lam, block rows, convention)``);
    shape ``(d,)``, sensitivity 1."""
    xa, ya = check_design(X, y)
    n, d = xa.shape
    kk = _check_k(k, d)
    lasso_alpha(lam, 1, convention)  # validate before any work
    b = _n_blocks(n, n_blocks)
    counts = np.zeros(d, dtype=np.int64)
    for rows in np.array_split(np.arange(n), b):
        if rows.size < 2:
            continue
        alpha = lasso_alpha(lam, int(rows.size), convention)
        counts[lasso_top_k(xa[rows], ya[rows], kk, alpha)] += 1
    return counts


def two_stage(
    X: ArrayLike,
    y: ArrayLike,
    k: int,
    epsilon: float | None = None,
    mechanism: str | _topk.TopKSelector = "canonical_lipschitz",
    rng: RNGLike = None,
    *,
    lam: float = 0.1,
    convention: str = "mean",
    n_blocks: int | None = None,
) -> IntArray:
    """Kifer et al.'s first stage as run in paper 002: the k most frequent block supports.

    ``epsilon=None`` is the non-private version of paper 002 §3 (Figure 1; ties broken
    uniformly at random). Otherwise the counts (sensitivity 1) go through the private top-k
    ``mechanism`` at ``epsilon`` -- the same mechanism as DP-SIS by default, so a comparison
    isolates the instability of the supports (paper 002 does not name its mechanism here).
    ``lam`` and ``convention``: the blocks' LASSO penalty (:func:`lasso_alpha`).
    """
    xa, ya = check_design(X, y)
    kk = _check_k(k, xa.shape[1])
    counts = support_counts(xa, ya, kk, lam=lam, convention=convention, n_blocks=n_blocks)
    gen = np.random.default_rng(rng)
    if epsilon is None:
        return top_k_random_ties(counts.astype(np.float64), kk, gen)
    sel = _topk.make(mechanism).with_epsilon(checks.positive_number(epsilon, "epsilon"))
    return np.asarray(sel.select(counts.astype(np.float64), kk, 1.0, gen), dtype=np.int64)


def top_k_random_ties(scores: ArrayLike, k: int, rng: RNGLike = None) -> IntArray:
    """The k largest of ``scores`` (last axis), best first, ties broken uniformly at random."""
    s = np.asarray(scores, dtype=np.float64)
    gen = np.random.default_rng(rng)
    keys = gen.random(s.shape)
    order = np.lexsort((keys, -s), axis=-1)
    return order[..., :k].astype(np.int64)
