"""The one-time change of random stream of 2026-11-23 left the law of the regret unchanged.

Random stopping now draws row by row (its rounds, their split, the noise of each drawn
candidate) and the tree mechanism's Laplace node noise takes its sign from the word of its
exponential: same laws, other random numbers (docs/performance.md, "A one-time change of
random stream"). ``tests/data/regret_before_stream_change.npz`` holds the total regret of
4000 replications of every private agent of Fig. 9 on a short two-armed shift, drawn with the
code before the change (``run(shift_env(t_shift=1200, horizon=2000), shift_agents(labels),
n_runs=4000, seed=20261123)``). The same experiment, 3000 replications with another seed, must
give the same distribution: a two-sample Kolmogorov-Smirnov test (conservative on these
discrete regrets) and a Welch test of the means.

The regret reacts little to the details of the noise (measured: RS with half its noise scale
moves its mean regret by 3.4 standard errors, KS p = 1e-6; a biased sign of the means' noise,
common to both arms, not at all), so this test guards the whole agents against a gross change.
The laws themselves are tested directly: random stopping against exact output probabilities
and the literal loop of Alg. 1, its split and its rounds against their pmfs, the maximum
Laplace noise and the node noise against their CDFs
(tests/dpbandits/test_selectors_random_stopping.py, tests/dpbandits/test_continual.py).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpbandits.experiments import run, shift_agents, shift_env
from tests.stats import P_MIN, Z_MAX

# a two-sample test on 3 000 replications of five agents (about 2 GB at once): CI's slow step
pytestmark = pytest.mark.slow

BEFORE = dict(np.load(Path(__file__).parent / "data" / "regret_before_stream_change.npz"))


def test_regret_distribution_unchanged() -> None:
    """Every agent of the file in one test: the 3 000 replications are one run of the five
    agents, made once (as five tests, each pytest-xdist worker that took one made the run:
    twice when the tests were split); every agent is tested and every failure reported."""
    res = run(
        shift_env(t_shift=1200, horizon=2000),
        shift_agents(sorted(BEFORE)),
        n_runs=3000,
        seed=7,
        progress=False,
        n_jobs=1,
    )
    failures = []
    for label in sorted(BEFORE):
        old, new = BEFORE[label], np.asarray(res.data[label]["total_regret"])
        assert old.shape == (4000,) and new.shape == (3000,)
        p = stats.ks_2samp(old, new).pvalue
        se = math.sqrt(new.var(ddof=1) / new.size + old.var(ddof=1) / old.size)
        z = (new.mean() - old.mean()) / se
        if not (p > P_MIN and abs(z) < Z_MAX):
            failures.append(f"{label}: KS p = {p:.2g}, mean regret {new.mean():.1f} vs "
                            f"{old.mean():.1f}, z = {z:.2f}")  # fmt: skip
    assert not failures, "\n".join(failures)
