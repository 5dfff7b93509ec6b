"""End-to-end results pinned before the engine was reorganised and optimised.

The same seed must give the same numbers, bit for bit: every agent of the Fig. 9 experiment and
the extra baselines, on a short two-armed shift, with two chunks of replications. A deliberate
change of the random stream must update ``tests/data/pinned_shift.json`` in the same commit and
say why in docs/performance.md.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from dpbandits.experiments import run, shift_agents, shift_env

PINNED = json.loads((Path(__file__).parent / "data" / "pinned_shift.json").read_text())


@pytest.fixture(scope="module")
def results():  # type: ignore[no-untyped-def]
    return run(
        shift_env(t_shift=1200, horizon=2000),
        shift_agents(list(PINNED)),
        n_runs=6,
        seed=3,
        progress=False,
        n_jobs=1,
        chunk_size=4,
    )


@pytest.mark.parametrize("label", list(PINNED))
def test_same_seed_same_numbers(results, label: str) -> None:  # type: ignore[no-untyped-def]
    d = results.data[label]
    got = [float(x).hex() for x in d["total_regret"]]
    assert got == PINNED[label]["total_regret"]
    sha = hashlib.sha256(np.ascontiguousarray(d["action_counts"]).tobytes()).hexdigest()[:16]
    assert sha == PINNED[label]["counts_sha"]
