"""The symmetry checks of the kit: relabelled candidates, ties and shifted scores.

Every selector of the paper is a symmetric function of the candidates' ``(q[a], d[a])`` and
depends on the scores only through their differences (§IV: noisy max, the exponential
mechanism, GEM, kRR, random stopping; ties for the maximum broken uniformly at random). Each
check compares laws with a chi-square test that fails a correct selector with probability at
most :data:`~dpbandits.testing.harness.P_MIN`. A selector that deliberately treats candidates
unequally (a prior over positions) skips the group with ``skip=("symmetry",)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dpbandits.testing.chisquare import goodness_of_fit_p, two_sample_p
from dpbandits.testing.harness import Context, draw, verdict
from dpbandits.testing.problems import D_A, N_ROWS, Q_A

__all__ = ["CHECKS", "SHIFT"]

#: Scores are shifted by +-SHIFT units of 2/eps: far beyond exp's range (e^709), so that weights
#: computed without subtracting the row maximum overflow or underflow, yet exactly resolvable.
SHIFT = 1e4

# K = 10 with a tie for the maximum (5, 6) and heterogeneous sensitivities.
_Q_PERM = np.array([0.0, 1.0, 1.0, 0.5, -1.0, 2.0, 2.0, 1.5, 0.2, -0.5])
_D_PERM = np.array([1.0, 0.5, 1.0, 2.0, 1.0, 1.5, 1.0, 0.7, 1.2, 0.9])
#: Candidates in the tie check.
_K_TIES = 7


def _symmetry_permutation(ctx: Context) -> str:
    k = _Q_PERM.size
    q = np.tile(_Q_PERM * ctx.scale(), (N_ROWS, 1))
    out = draw(ctx.sel, q, _D_PERM, ctx.seed("symmetry.permutation"), "q (R, 10)")
    # candidates in reverse order: index i of the reversed problem is candidate K - 1 - i
    rev = draw(ctx.sel, q[:, ::-1], _D_PERM[::-1], ctx.seed("symmetry.permutation", 1), "reversed")
    return verdict(
        two_sample_p(out, k - 1 - rev, k),
        f"listing the K = {k} candidates in reverse order changes which candidate is chosen: "
        f"counts {np.bincount(out, minlength=k)} vs {np.bincount(k - 1 - rev, minlength=k)} "
        "reversed back (an index bias: ties broken by position, candidates beyond some index "
        "ignored, code written for K = 2?)",
        f"relabelling the candidates relabels the law (K = {k}, tie for the maximum)",
    )


def _symmetry_ties(ctx: Context) -> str:
    s, k = ctx.scale(), _K_TIES
    uniform = np.full(k, 1.0 / k)
    p_values = {}
    for i, c in enumerate((0.0, -SHIFT * s, SHIFT * s)):
        q = np.full((N_ROWS, k), c)
        out = draw(ctx.sel, q, 0.5, ctx.seed("symmetry.ties", i), f"all scores {c:g}")
        p_values[c] = (goodness_of_fit_p(out, uniform), np.bincount(out, minlength=k))
    worst = min(p_values, key=lambda c: p_values[c][0])
    p, counts = p_values[worst]
    return verdict(
        p,
        f"all K = {k} scores equal to {worst:g} (equal d): the choice is not uniform, counts "
        f"{counts}; ties must be broken uniformly at random",
        f"all-equal scores (0, +-{SHIFT:g} * 2/eps) give the uniform law over K = {k}",
    )


def _symmetry_shift(ctx: Context) -> str:
    s = ctx.scale()
    q = np.tile(Q_A * s, (N_ROWS, 1))
    base = draw(ctx.sel, q, D_A, ctx.seed("symmetry.shift"), "scores q")
    p_values = {}
    for i, c in enumerate((-SHIFT * s, SHIFT * s), start=1):
        out = draw(ctx.sel, q + c, D_A, ctx.seed("symmetry.shift", i), f"scores q + {c:g}")
        p_values[c] = (two_sample_p(base, out, q.shape[1]), np.bincount(out, minlength=4))
    worst = min(p_values, key=lambda c: p_values[c][0])
    p, counts = p_values[worst]
    return verdict(
        p,
        f"adding {worst:g} to every score changes the law: counts {np.bincount(base, minlength=4)} "
        f"at q, {counts} at q + {worst:g} (weights exp(eps q / 2D) computed without subtracting "
        "the row maximum overflow or underflow; large and negative scores must work)",
        f"the law depends on score differences only (shifts +-{SHIFT:g} * 2/eps)",
    )


CHECKS: list[tuple[str, Callable[[Context], str]]] = [
    ("symmetry.permutation", _symmetry_permutation),
    ("symmetry.ties", _symmetry_ties),
    ("symmetry.shift", _symmetry_shift),
]
