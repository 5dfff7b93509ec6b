# Reference solution of exercise 6: the solved parts only.
#
# The rest of the notebook is the exercise file, dpbandits/course/exercises/ex6_private_agent.py
# (examples/course/ex6_private_agent.py): each function
# below is the solved body of the task of the same name there (which has its types,
# defaults and docstring), and the lines between BEGIN ANSWER and END ANSWER replace
# its "# Your answer:".
#   dpbandits course start 6 DIR --solution   writes the complete, runnable notebook;
#   dpbandits course check 6 examples/course-solutions/ex6_private_agent.py   grades it.

from __future__ import annotations

import numpy as np

import agents
from dpbandits import selectors


def permute_and_flip(q, d, epsilon, rng):
    n_rows, k = q.shape
    scale = 2.0 * d.max(axis=1, keepdims=True)
    p_accept = np.exp(epsilon * (q - q.max(axis=1, keepdims=True)) / scale)
    order = np.argsort(rng.random((n_rows, k)), axis=1)  # a random permutation per row
    rows = np.arange(n_rows)[:, None]
    accepted = rng.random((n_rows, k)) < p_accept[rows, order]
    first = np.argmax(accepted, axis=1)  # the best candidate always accepts
    return order[np.arange(n_rows), first]


def make_agent(epsilon):
    selector = selectors.from_function(permute_and_flip, name="my_pf", epsilon=epsilon)
    return agents.PrivateAgent(selector)


def compare(epsilons, n_runs, horizon, seed):
    from dpbandits.experiments import run

    env = {"id": "dpbandits/TwoArmedShift-v0", "t_shift": 3 * horizon // 5, "horizon": horizon}
    players = {"UCB": agents.UCB(log="t"), "TS": agents.ThompsonSampling()}
    for eps in epsilons:
        players[f"PF eps={eps:g}"] = make_agent(eps)
    return run(env, players, n_runs=n_runs, seed=seed, n_jobs=1, progress=False)


# BEGIN ANSWER
# (seed 0, 20 runs, T = 10 000, shift at 6 000)
# 1. Total regret falls from 2 647 (eps = 0.25) to 2 188 (eps = 2) and then stops improving
#    (2 393 +- 142 at 4, 2 304 +- 114 at 8): the selection is then nearly greedy, and the
#    error comes from the private means (eps_M = 1) and the noisy sensitivities, which eps_S
#    does not control.
# 2. Before the shift the private agent pays for its noise (515-1 485 against 26 for UCB and
#    17 for TS). After it, small eps adapts best: post-change regret 1 163 at eps = 0.25
#    against 1 790 at eps = 8, and below TS's 1 252 for eps <= 0.5 -- noise does help
#    adaptation, as the paper says. But UCB with ln t (23 after the shift) beats everything,
#    the same finding as docs/shift.md.
# 3. n_actions * eps_S, e.g. 9 998 * 2 = 19 996 for eps = 2: basic composition over all
#    actions is meaningless. App. H states a per-action guarantee (eps_S for each recorded
#    action) plus eps_M and eps_p for the released means and sensitivities.
# END ANSWER
