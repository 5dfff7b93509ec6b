"""The experiment API in one import: the engine, its results and the paper's presets.

Each name has its home in its own module; this module gathers the ones a user needs to run a
regret experiment::

    from dpbandits.experiments import run, shift_env, shift_agents
    res = run(shift_env(), shift_agents(), n_runs=100, seed=0)
    print(res.summary())

- :func:`~dpbandits.engine.run` -- :mod:`dpbandits.engine`; :func:`~dpbandits.chunk.chunk_seeds`
  (the seeds of one task) -- :mod:`dpbandits.chunk`
- :class:`~dpbandits.results.Results`, :class:`~dpbandits.results.SummaryTable`,
  :class:`~dpbandits.results.ResultsFileError` -- :mod:`dpbandits.results`
- :func:`~dpbandits.presets.shift_env`, :func:`~dpbandits.presets.shift_agents`,
  :data:`~dpbandits.presets.FIG9_LABELS` -- :mod:`dpbandits.presets` (App. H, Fig. 9)
"""

from __future__ import annotations

from dpbandits.chunk import chunk_seeds
from dpbandits.engine import run
from dpbandits.presets import EXTRA_LABELS, FIG9_LABELS, SHIFT_ENV_ID, shift_agents, shift_env
from dpbandits.results import Results, ResultsFileError, SummaryTable

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
