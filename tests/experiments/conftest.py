"""Small configs shared by the experiment, sweep and drift tests."""

from __future__ import annotations

import copy
from typing import Any

import pytest

#: Three change points, three arms; tiny so that a cell takes a fraction of a second.
PIECEWISE: dict[str, Any] = {
    "experiment": {
        "env": "dpbandits/PiecewiseBandit-v0",
        "n_runs": 6,
        "seed": 7,
        "chunk_size": 4,
        "env_kwargs": {
            "horizon": 400,
            "segments": [
                [0, [0.2, 0.5, 0.8], [0.1, 0.1, 0.1]],
                [100, [0.8, 0.5, 0.2], [0.1, 0.1, 0.1]],
                [200, [0.5, 0.8, 0.2], [0.1, 0.1, 0.1]],
                [300, [0.2, 0.8, 0.5], [0.1, 0.1, 0.1]],
            ],
        },
    },
    "agents": {
        "UCB": {"kind": "ucb"},
        "mGEM": {"kind": "private", "selector": "mgem", "epsilon_select": 1.0, "beta": 0.05,
                 "window": 20},  # fmt: skip
    },
}


@pytest.fixture
def piecewise() -> dict[str, Any]:
    return copy.deepcopy(PIECEWISE)


@pytest.fixture
def piecewise_sweep() -> dict[str, Any]:
    cfg = copy.deepcopy(PIECEWISE)
    cfg["sweep"] = {
        "agents.mGEM.epsilon_select": [0.5, 2.0],
        "experiment.env_kwargs.horizon": [350, 400],
    }
    return cfg
