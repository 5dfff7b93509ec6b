"""Checks of exercise 3: window bookkeeping, the SW-UCB index, Thompson sampling's stale arm."""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpbandits.course.checker import CheckFailed, Student
from dpbandits.course.common import first_match, fmt, fmt_vec, require_close


def _window_stats(
    actions: np.ndarray, rewards: np.ndarray, k: int, cols: slice
) -> tuple[np.ndarray, np.ndarray]:
    """Per-run pulls and reward sums of each arm over the columns ``cols`` of the history."""
    a, r = actions[:, cols], rewards[:, cols]
    counts = np.stack([np.bincount(a[i], minlength=k) for i in range(a.shape[0])]).astype(float)
    sums = np.stack([np.bincount(a[i], r[i], minlength=k) for i in range(a.shape[0])])
    return counts, sums


def _window_causes(
    actions: np.ndarray, rewards: np.ndarray, k: int, window: int, what: int
) -> list[tuple[str, np.ndarray]]:
    """Counts (``what = 0``) or sums (``what = 1``) as typical mistakes compute them."""
    t = actions.shape[1]
    out = [
        (f"an off-by-one in the pull counts: your window holds the last {window + 1} steps, "
         f"not {window} (actions[:, -window:] is exactly the last window steps)",
         _window_stats(actions, rewards, k, slice(max(t - window - 1, 0), t))[what]),
        (f"an off-by-one in the pull counts: your window holds the last {window - 1} steps, "
         f"not {window} (actions[:, -window:] is exactly the last window steps)",
         _window_stats(actions, rewards, k, slice(max(t - window + 1, 0), t))[what]),
        ("an off-by-one in the pull counts: your window leaves out the latest step",
         _window_stats(actions, rewards, k, slice(max(t - window - 1, 0), t - 1))[what]),
        ("the window is the *last* window steps of the history, not the first ones",
         _window_stats(actions, rewards, k, slice(0, window))[what]),
    ]  # fmt: skip
    if window > t:
        # actions[:, t - window:] with a negative start counts from the end instead.
        out.append((
            "a history shorter than the window: then the window is the whole history (a "
            "negative start t - window counts from the end)",
            _window_stats(actions, rewards, k, slice(t - window, t))[what],
        ))  # fmt: skip
    return out


def check_window_counts_sums(student: Student, rng: np.random.Generator) -> None:
    """Exact counts and sums over the last ``window`` steps, for windows around the length."""
    r, t, k = 4, 30, 3
    actions = rng.integers(0, k, size=(r, t))
    rewards = np.round(rng.random((r, t)), 2)
    for window in (7, 1, 29, 30, 45):
        out = student.call("window_counts_sums", actions.copy(), rewards.copy(), k, window)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise CheckFailed("`window_counts_sums` must return a pair (counts, sums)")
        counts = Student.floats(out[0], (r, k), "window_counts_sums (counts)")
        sums = Student.floats(out[1], (r, k), "window_counts_sums (sums)")
        n_last = min(window, t)
        exp_counts, exp_sums = _window_stats(actions, rewards, k, slice(t - n_last, t))
        for j, (got, exp, what) in enumerate(
            ((counts, exp_counts, "counts"), (sums, exp_sums, "sums"))
        ):
            bad = ~np.isclose(got, exp, rtol=1e-9, atol=1e-9).all(axis=1)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                hint = ""
                if what == "counts" and got[i].sum() != n_last:
                    hint = f"; your counts add up to {fmt(got[i].sum())} pulls, not {n_last}"
                cause = first_match(got, _window_causes(actions, rewards, k, window, j), 1e-9, 1e-9)
                if cause is None and what == "sums" and np.allclose(got, got[:, :1]):
                    cause = "the sums must be per arm: add up only the rewards of that arm's pulls"
                if cause is None and what == "counts" and np.allclose(got * n_last, exp):
                    cause = "counts are numbers of pulls, not frequencies"
                raise CheckFailed(
                    f"with a history of {t} steps and window = {window}, your {what} for run "
                    f"{i} are {fmt_vec(got[i])}, expected {fmt_vec(exp[i])} (the last "
                    f"{n_last} steps){hint}",
                    cause=cause,
                )


def check_sw_ucb_index(student: Student, rng: np.random.Generator) -> None:
    """Exact comparison, including ``+inf`` for arms absent from the window and t < window."""
    for t, window, xi, bound in ((1200, 500, 0.6, 1.5), (80, 500, 0.5, 2.0)):
        counts = rng.integers(0, 40, size=(4, 3)).astype(float)
        counts[0, 1] = 0.0
        sums = np.round(counts * rng.random((4, 3)), 2)
        got = Student.floats(
            student.call("sw_ucb_index", counts.copy(), sums.copy(), t, window, xi, bound),
            (4, 3),
            "sw_ucb_index",
        )
        pulled = counts > 0
        safe = np.maximum(counts, 1.0)
        mean = sums / safe
        log = np.log(min(t, window))
        exp = np.where(pulled, mean + bound * np.sqrt(xi * log / safe), np.inf)
        for i, a in np.ndindex(4, 3):
            if counts[i, a] == 0:
                if not np.isposinf(got[i, a]):
                    raise CheckFailed(
                        f"an arm with no pull inside the window must have index +inf (it must "
                        f"be tried), your index is {fmt(got[i, a])}",
                        cause="np.where(counts > 0, index, np.inf): +inf, not -inf or 0, for "
                        "the arms not pulled inside the window",
                    )
        causes = [
            ("the log is of min(t, window), not of t: inside the window at most `window` "
             "steps count", mean + bound * np.sqrt(xi * np.log(t) / safe)),
            ("the log is of min(t, window): while t < window only t steps have been made",
             mean + bound * np.sqrt(xi * np.log(window) / safe)),
            ("a bonus that does not shrink with the count: the bonus is "
             "bound * sqrt(xi * ln(min(t, window)) / N)", mean + bound * np.sqrt(xi * log)),
            ("bound multiplies the square root; it is not inside it",
             mean + np.sqrt(bound * xi * log / safe)),
            ("xi is missing under the square root", mean + bound * np.sqrt(log / safe)),
            ("bound is missing in front of the square root", mean + np.sqrt(xi * log / safe)),
            ("the mean is S / N, the arm's own pulls inside the window",
             sums / min(t, window) + bound * np.sqrt(xi * log / safe)),
        ]  # fmt: skip
        for i, a in np.ndindex(4, 3):
            if counts[i, a] == 0:
                continue
            require_close(
                float(got[i, a]),
                float(exp[i, a]),
                f"for N = {int(counts[i, a])}, S = {fmt(sums[i, a])}, t = {t}, window = "
                f"{window}, xi = {xi}, bound = {bound}, your index",
                rtol=1e-9,
                causes=[(c, float(v[i, a])) for c, v in causes],
            )


def check_ts_stale_probability(student: Student, rng: np.random.Generator) -> None:
    for s, n, thr in ((8.0, 40, 0.8), (8.0, 40, 0.6), (3.0, 5, 0.9), (60.0, 99, 0.5)):
        got = Student.number(
            student.call("ts_stale_probability", s, n, thr), "ts_stale_probability"
        )
        mean, sd = s / (n + 1), 1 / np.sqrt(n + 1)
        exp = float(stats.norm.sf(thr, mean, sd))
        require_close(
            got, exp,
            f"for S = {s}, N = {n} and threshold {thr} (posterior Normal(S/(N+1), variance "
            "1/(N+1))), your probability",
            rtol=1e-6, atol=1e-15,
            causes=[
                ("noise on the wrong scale: 1 / (N + 1) is the variance, the scale (standard "
                 "deviation) is its square root", stats.norm.sf(thr, mean, 1 / (n + 1))),
                ("the posterior mean is S / (N + 1), not S / N", stats.norm.sf(thr, s / n, sd)),
                ("you computed P(theta <= threshold): the chance to exceed it is the upper tail, "
                 "norm.sf", stats.norm.cdf(thr, mean, sd)),
                ("the variance is 1 / (N + 1), not 1 / N", stats.norm.sf(thr, mean, 1 /
                np.sqrt(n))),
                ("the posterior is Normal(S/(N+1), 1/(N+1)): give norm its loc and scale",
                 stats.norm.sf(thr - mean)),
            ],
        )  # fmt: skip
