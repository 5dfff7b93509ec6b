# Reference solution of exercise 2: the solved parts only.
#
# The rest of the notebook is the exercise file, dpbandits/course/exercises/ex2_ucb_thompson.py
# (examples/course/ex2_ucb_thompson.py): each function
# below is the solved body of the task of the same name there (which has its types,
# defaults and docstring), and the lines between BEGIN ANSWER and END ANSWER replace
# its "# Your answer:".
#   dpbandits course start 2 DIR --solution   writes the complete, runnable notebook;
#   dpbandits course check 2 examples/course-solutions/ex2_ucb_thompson.py   grades it.

from __future__ import annotations

import numpy as np


def ucb_index(counts, sums, t, alpha):
    return sums / counts + alpha * np.sqrt(np.log(t) / counts)


def thompson_choose(successes, failures, rng):
    theta = rng.beta(1.0 + successes, 1.0 + failures)
    return np.argmax(theta, axis=1)


def lai_robbins_constant(means):
    mu = np.asarray(means, dtype=float)
    best = mu.max()
    bad = mu[mu < best]
    kl = bad * np.log(bad / best) + (1 - bad) * np.log((1 - bad) / (1 - best))
    return float(np.sum((best - bad) / kl))


# BEGIN ANSWER
# (seed 0, 100 runs, T = 5000) Your agents match the library's: UCB 179 +- 2, TS 40 +- 2.
# 1. Both become straight lines in ln t. Here c = 9.2, c ln T = 79. UCB1's slope is
#    several times c (its bonus sqrt(2 ln t / N) is loose); TS stays below c ln t at this
#    horizon: the bound is asymptotic (a liminf), finite-time regret has lower-order terms.
# 2. alpha = 0.5 explores too little: some runs lock on a worse arm (large spread, partly
#    linear regret); alpha = 3 explores too much: the slope in ln t grows like alpha^2.
# 3. In pulls of the clearly bad arms (0.2, 0.4): the bonus keeps trying them, while TS's
#    posterior rules them out quickly.
# END ANSWER
