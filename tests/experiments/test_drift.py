"""Named drift profiles: picklable, readable from configs, usable with worker processes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import envs
from dpbandits.experiments.config import Experiment
from dpbandits.experiments.engine import run

T = np.arange(0, 40, dtype=np.int64)


def test_profiles_compute_their_formulas():
    lin = envs.linear_drift([0.2, 0.8], [0.8, 0.2], t_end=30, t_start=10)
    frac = np.clip((T - 10) / 20, 0, 1)[:, None]
    np.testing.assert_allclose(lin(T), np.array([0.2, 0.8]) + np.array([0.6, -0.6]) * frac)
    sin = envs.sinusoidal_drift(0.5, [0.1, 0.2], period=8, phase=[0.0, np.pi / 2])
    np.testing.assert_allclose(
        sin(T), 0.5 + np.array([0.1, 0.2]) * np.sin(2 * np.pi * T[:, None] / 8 + [0, np.pi / 2])
    )
    step = envs.step_drift([[0.1, 0.9], [0.9, 0.1], [0.5, 0.6]], at=[10, 25])
    expect = np.where(T[:, None] < 10, [0.1, 0.9], np.where(T[:, None] < 25, [0.9, 0.1],
                                                            [0.5, 0.6]))  # fmt: skip
    np.testing.assert_array_equal(step(T), expect)
    assert step.change_points == (10, 25)
    pl = envs.piecewise_linear_drift([0, 10, 30], [[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    np.testing.assert_allclose(pl(T)[:, 0], np.interp(T, [0, 10, 30], [0.0, 1.0, 0.5]))
    np.testing.assert_allclose(pl(T)[:, 1], np.interp(T, [0, 10, 30], [1.0, 0.0, 0.5]))


@pytest.mark.parametrize(
    "profile",
    [envs.linear_drift(0.2, 0.8, 30), envs.sinusoidal_drift(0.5, 0.2, 11.0),
     envs.step_drift([0.1, 0.9], at=[5]), envs.piecewise_linear_drift([0, 9], [0.1, 0.7])],
    ids=lambda p: p.profile,
)
def test_profiles_pickle_and_round_trip_through_data(profile):
    again = pickle.loads(pickle.dumps(profile))
    assert again == profile
    np.testing.assert_array_equal(again(T), profile(T))
    spec = profile.to_dict()
    assert spec["profile"] == profile.profile
    assert envs.drift_profile(spec) == profile
    assert repr(profile).startswith(type(profile).__name__ + "(")


@pytest.mark.parametrize(
    ("spec", "error", "match"),
    [
        ({"profile": "wobbly"}, ValueError, "profile must be one of"),
        ({"profile": "linear", "start": 0.1}, TypeError, "linear drift profile takes"),
        ({"profile": "step", "values": [0.1, 0.2], "at": [5, 3]}, ValueError, "at must be"),
        ({"profile": "step", "values": [0.1], "at": [5]}, ValueError, "values must have 2"),
        ({"profile": "sinusoidal", "center": 0.5, "amplitude": 0.1, "period": 0},
         ValueError, "period must be finite and > 0"),
        ({"profile": "piecewise_linear", "steps": [0, 5], "values": [[0.1, 0.2], [0.1, 0.2, 0.3]]},
         ValueError, "same number of arms"),
    ],
)
def test_bad_profiles(spec, error, match):
    with pytest.raises(error, match=match):
        envs.drift_profile(spec)


def test_drifting_env_from_a_config_runs_on_worker_processes():
    cfg = {
        "experiment": {
            "env": "dpbandits/DriftingBandit-v0", "n_runs": 4, "chunk_size": 2, "seed": 3,
            "env_kwargs": {"horizon": 300, "sds": 0.1,
                           "means": {"profile": "step", "values": [[0.2, 0.8], [0.8, 0.2]],
                                     "at": [120]}},
        },
        "agents": {"UCB": {"kind": "ucb"}},
    }  # fmt: skip
    exp = Experiment.from_dict(cfg)
    serial = exp.run(n_jobs=1, progress=False)
    pooled = exp.run(n_jobs=2, progress=False)
    np.testing.assert_array_equal(serial.data["UCB"]["regret"], pooled.data["UCB"]["regret"])
    # the step profile's change point is the environment's: regret per segment
    assert serial.segments() == [(0, 120), (120, 300)]
    # a bad profile in a config names its key path
    cfg["experiment"]["env_kwargs"]["means"] = {"profile": "linear", "start": [0.2, 0.8]}
    with pytest.raises(ValueError, match="experiment.env_kwargs.*linear drift profile takes"):
        Experiment.from_dict(cfg)


def test_unpicklable_drift_with_workers_fails_up_front_saying_how_to_fix_it():
    env = {"id": "dpbandits/DriftingBandit-v0", "horizon": 100,
           "means": lambda t: np.stack([0.2 + 0 * t, 0.8 + 0 * t], axis=1)}  # fmt: skip
    with pytest.raises(ValueError, match=r"cannot be sent to worker processes .*linear_drift"):
        run(env, ["ucb"], n_runs=4, chunk_size=2, n_jobs=2, progress=False)
    # the same with a named profile works, and a lambda is fine in-process
    ok = dict(env, means=envs.linear_drift([0.2, 0.8], [0.8, 0.2], 100))
    assert run(ok, ["ucb"], n_runs=4, chunk_size=2, n_jobs=2, progress=False).n_runs == 4
    assert run(env, ["ucb"], n_runs=2, n_jobs=1, progress=False).n_runs == 2
