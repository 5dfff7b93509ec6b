# Reference solution of exercise 4: the solved parts only.
#
# The rest of the notebook is the exercise file, dpbandits/course/exercises/ex4_dp_selection.py
# (examples/course/ex4_dp_selection.py): each function
# below is the solved body of the task of the same name there (which has its types,
# defaults and docstring), and the lines between BEGIN ANSWER and END ANSWER replace
# its "# Your answer:".
#   dpbandits course start 4 DIR --solution   writes the complete, runnable notebook;
#   dpbandits course check 4 examples/course-solutions/ex4_dp_selection.py   grades it.

from __future__ import annotations

import numpy as np


def randomized_response(q, epsilon, rng):
    n_rows, k = q.shape
    best = np.argmax(q, axis=1)
    keep = rng.random(n_rows) < np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    other = rng.integers(0, k - 1, size=n_rows)
    other = other + (other >= best)  # skip the argmax: uniform over the K - 1 others
    return np.where(keep, best, other)


def report_noisy_max(q, d, epsilon, rng):
    scale = 2.0 * d.max(axis=1, keepdims=True) / epsilon
    noisy = q + rng.gumbel(size=q.shape) * scale
    return np.argmax(noisy, axis=1)


def privacy_loss(p, p_prime):
    p = np.asarray(p, dtype=float)
    p_prime = np.asarray(p_prime, dtype=float)
    seen = (p > 0) | (p_prime > 0)
    if np.any(seen & ((p == 0) | (p_prime == 0))):
        return float(np.inf)
    return float(np.max(np.abs(np.log(p[seen]) - np.log(p_prime[seen]))))


def expected_utility_krr(q, epsilon):
    q = np.asarray(q, dtype=float)
    k = q.size
    p_best = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    best = q.max()
    others_mean = (q.sum() - best) / (k - 1)
    return float(p_best * best + (1 - p_best) * others_mean)


# BEGIN ANSWER
# 1. Yes (about 1.0): the argmax moves from one candidate to the other, so P[a] changes
#    from e^eps/(e^eps+1) to 1/(e^eps+1), a ratio of exactly e^eps.
# 2. kRR at both: 0.60 against 0.55 at eps = 1, 0.90 against 0.82 at eps = 10. With
#    scores in [0, 1] and d = 1, RNM's law exp(eps q / 2) stays flat until eps/2 times the
#    score gaps is large (0.89 at eps = 40), while kRR only needs e^eps >> K - 1. kRR uses
#    only which candidate is best, which is all that matters when the argmax is what we want.
# 3. On sec4a (built for exponential noise) the loss stays below eps (about 0.5), but on
#    the one-sided pair it is about 1.7 > 1: candidate 0 has almost no noise, so whether
#    candidate 1 wins depends on its own Gumbel noise alone, and moving its score by d_1
#    changes P[candidate 0] = P[G < -q_1 eps/2] by a factor exp(e^{1.5} - e^{1.0}) ~ e^1.8.
#    Scaling every candidate's noise by the same D = max d is what makes RNM eps-DP.
# END ANSWER
