"""dpbandits: differentially private selection inside bandit learners.

The core library. Submodules (one idea each; docs/architecture.md has the map):

- :mod:`dpbandits.selectors` -- DP selectors (report noisy max, kRR, random stopping, GEM, ...)
- :mod:`dpbandits.continual` -- private running sums by continual release (hybrid mechanism)
- :mod:`dpbandits.quantiles` -- DP quantiles and windowed sensitivity estimates
- :mod:`dpbandits.accounting` -- the privacy ledger of a private agent
- :mod:`dpbandits.experiments.engine` -- the batched regret engine (:func:`dpbandits.experiments.engine.run`)
- :mod:`dpbandits.experiments.results` -- :class:`~dpbandits.experiments.results.Results` and summary tables
- :mod:`dpbandits.experiments.presets` -- the paper's Fig. 9 configuration
- :mod:`dpbandits.experiments` -- the experiment API in one place (run, Results, presets)
- :mod:`dpbandits.experiments.config` -- an experiment as data (TOML/dict -> validated ``Experiment``)
- :mod:`dpbandits.experiments.sweep`, :mod:`dpbandits.experiments.store` -- parameter sweeps in a resumable store
- :mod:`dpbandits.scenarios` -- the paper's synthetic selection scenarios
- :mod:`dpbandits.experiments.plotting` -- matplotlib figures
- :mod:`dpbandits.testing` -- the conformance kit for selector authors (``check_selector``)
- :mod:`dpbandits.cli` -- the ``dpbandits`` console script

Environments live in the sibling package :mod:`envs`, agents in :mod:`agents`. Importing
``dpbandits`` checks that those two names are this project's packages (another distribution can
install packages of the same names) and registers the ``dpbandits/<Name>-v0`` environment ids
with Gymnasium.
"""

from __future__ import annotations

from dpbandits.core.registration import register_envs
from dpbandits.core.sibling_packages import check_sibling_packages

__version__ = "0.1.0"

__all__ = ["__version__"]

check_sibling_packages()
register_envs()
