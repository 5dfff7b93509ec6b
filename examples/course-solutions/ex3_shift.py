# Reference solution of exercise 3: the solved parts only.
#
# The rest of the notebook is the exercise file, dpbandits/course/exercises/ex3_shift.py
# (examples/course/ex3_shift.py): each function
# below is the solved body of the task of the same name there (which has its types,
# defaults and docstring), and the lines between BEGIN ANSWER and END ANSWER replace
# its "# Your answer:".
#   dpbandits course start 3 DIR --solution   writes the complete, runnable notebook;
#   dpbandits course check 3 examples/course-solutions/ex3_shift.py   grades it.

from __future__ import annotations

import numpy as np
from scipy import stats


def window_counts_sums(actions, rewards, n_arms, window):
    recent_a = actions[:, -window:]
    recent_r = rewards[:, -window:]
    arms = np.arange(n_arms)
    pulled = recent_a[:, :, None] == arms  # (R, w, K)
    counts = pulled.sum(axis=1).astype(float)
    sums = (pulled * recent_r[:, :, None]).sum(axis=1)
    return counts, sums


def sw_ucb_index(counts, sums, t, window, xi, bound):
    safe = np.maximum(counts, 1.0)
    index = sums / safe + bound * np.sqrt(xi * np.log(min(t, window)) / safe)
    return np.where(counts > 0, index, np.inf)


def ts_stale_probability(stale_sum, stale_pulls, threshold):
    mean = stale_sum / (stale_pulls + 1)
    sd = 1.0 / np.sqrt(stale_pulls + 1)
    return float(stats.norm.sf(threshold, loc=mean, scale=sd))


# BEGIN ANSWER
# 1. (seed 0, 50 runs) UCB (ln t) 26 and SW-UCB 39 after the shift, TS 701: TS is stuck.
#    Before the shift TS is best (15), UCB 23, SW-UCB 32: the window makes SW-UCB
#    re-explore the bad arm in every window.
# 2. About 5e-5 at 0.8 and 0.5 % at 0.6: TS waits until the old arm's mean has decayed a
#    long way. From 0.8 to 0.6 takes n steps with (30000*0.8 + 0.2 n)/(30000 + n) = 0.6,
#    n = 15 000 steps.
# 3. The stale arm's index becomes the larger one, so UCB pulls it, sees rewards of about
#    0.8, its mean jumps from 0.2 up, and after a few hundred steps UCB has switched.
# 4. A short window adapts fast but re-explores often (more regret when nothing changes);
#    a long window is the reverse.
# END ANSWER
