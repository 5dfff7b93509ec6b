"""The experiment API in one import: the engine, its results and the paper's presets.

Each name has its home in its own module; this module gathers the ones a user needs to run a
regret experiment::

    from dpbandits.experiments import run, shift_env, shift_agents
    res = run(shift_env(), shift_agents(), n_runs=100, seed=0)
    print(res.summary())

- :func:`~dpbandits.experiments.engine.run` -- :mod:`dpbandits.experiments.engine`;
  :func:`~dpbandits.experiments.chunk.chunk_seeds`
  (the seeds of one task) -- :mod:`dpbandits.experiments.chunk`
- :class:`~dpbandits.experiments.results.Results`,
  :class:`~dpbandits.experiments.results.SummaryTable`,
  :class:`~dpbandits.experiments.results.ResultsFileError` -- :mod:`dpbandits.experiments.results`
- :func:`~dpbandits.experiments.presets.shift_env`,
  :func:`~dpbandits.experiments.presets.shift_agents`,
  :data:`~dpbandits.experiments.presets.FIG9_LABELS` -- :mod:`dpbandits.experiments.presets` (App.
  H, Fig. 9)
"""

from __future__ import annotations

from dpbandits.experiments.chunk import chunk_seeds
from dpbandits.experiments.engine import run
from dpbandits.experiments.presets import (
    EXTRA_LABELS,
    FIG9_LABELS,
    SHIFT_ENV_ID,
    shift_agents,
    shift_env,
)
from dpbandits.experiments.results import Results, ResultsFileError, SummaryTable

__all__ = [
    "EXTRA_LABELS",
    "FIG9_LABELS",
    "SHIFT_ENV_ID",
    "Results",
    "ResultsFileError",
    "SummaryTable",
    "chunk_seeds",
    "run",
    "shift_agents",
    "shift_env",
]
