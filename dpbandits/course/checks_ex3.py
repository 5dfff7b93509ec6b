"""Checks of exercise 3: window bookkeeping, the SW-UCB index, Thompson sampling's stale arm."""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import fmt, fmt_vec, require_close


def check_window_counts_sums(student: Student, rng: np.random.Generator) -> None:
    """Exact counts and sums over the last ``window`` steps, for windows around the length."""
    r, t, k = 4, 30, 3
    actions = rng.integers(0, k, size=(r, t))
    rewards = np.round(rng.random((r, t)), 2)
    for window in (1, 7, 29, 30, 45):
        out = student.call("window_counts_sums", actions.copy(), rewards.copy(), k, window)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise CheckFailed("`window_counts_sums` must return a pair (counts, sums)")
        counts = Student.floats(out[0], (r, k), "window_counts_sums (counts)")
        sums = Student.floats(out[1], (r, k), "window_counts_sums (sums)")
        last = slice(max(t - window, 0), t)
        exp_counts = np.stack([np.bincount(actions[i, last], minlength=k) for i in range(r)])
        exp_sums = np.stack(
            [np.bincount(actions[i, last], rewards[i, last], minlength=k) for i in range(r)]
        )
        n_last = min(window, t)
        for got, exp, what in ((counts, exp_counts, "counts"), (sums, exp_sums, "sums")):
            bad = ~np.isclose(got, exp, rtol=1e-9, atol=1e-9).all(axis=1)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                hint = ""
                if what == "counts" and got[i].sum() != n_last:
                    hint = f"; your counts add up to {fmt(got[i].sum())} pulls, not {n_last}"
                raise CheckFailed(
                    f"with a history of {t} steps and window = {window}, your {what} for run "
                    f"{i} are {fmt_vec(got[i])}, expected {fmt_vec(exp[i])} (the last "
                    f"{n_last} steps){hint}"
                )


def check_sw_ucb_index(student: Student, rng: np.random.Generator) -> None:
    """Exact comparison, including ``+inf`` for arms absent from the window and t < window."""
    for t, window, xi, bound in ((1200, 500, 0.6, 1.0), (80, 500, 0.5, 2.0)):
        counts = rng.integers(0, 40, size=(4, 3)).astype(float)
        counts[0, 1] = 0.0
        sums = np.round(counts * rng.random((4, 3)), 2)
        got = Student.floats(
            student.call("sw_ucb_index", counts.copy(), sums.copy(), t, window, xi, bound),
            (4, 3),
            "sw_ucb_index",
        )
        safe = np.maximum(counts, 1.0)
        exp = np.where(
            counts > 0, sums / safe + bound * np.sqrt(xi * np.log(min(t, window)) / safe), np.inf
        )
        for i, a in np.ndindex(4, 3):
            if counts[i, a] == 0:
                if not np.isposinf(got[i, a]):
                    raise CheckFailed(
                        f"an arm with no pull inside the window must have index +inf (it must "
                        f"be tried), your index is {fmt(got[i, a])}"
                    )
                continue
            require_close(
                float(got[i, a]),
                float(exp[i, a]),
                f"for N = {int(counts[i, a])}, S = {fmt(sums[i, a])}, t = {t}, window = "
                f"{window}, xi = {xi}, bound = {bound}, your index",
                rtol=1e-9,
            )


def check_ts_stale_probability(student: Student, rng: np.random.Generator) -> None:
    for s, n, thr in ((8.0, 40, 0.8), (8.0, 40, 0.6), (3.0, 5, 0.9), (60.0, 99, 0.5)):
        got = Student.number(
            student.call("ts_stale_probability", s, n, thr), "ts_stale_probability"
        )
        exp = float(stats.norm.sf((thr - s / (n + 1)) * np.sqrt(n + 1)))
        require_close(
            got,
            exp,
            f"for S = {s}, N = {n} and threshold {thr} (posterior Normal(S/(N+1), variance "
            "1/(N+1))), your probability",
            rtol=1e-6,
            atol=1e-15,
        )
