"""dpbandits: differentially private selection inside bandit learners.

The core library. Submodules (one idea each):

- :mod:`dpbandits.selectors` -- DP selectors (report noisy max, kRR, random stopping, GEM, ...)
- :mod:`dpbandits.continual` -- private running sums by continual release (hybrid mechanism)
- :mod:`dpbandits.quantiles` -- DP quantiles and windowed sensitivity estimates
- :mod:`dpbandits.accounting` -- the privacy ledger of a private agent
- :mod:`dpbandits.experiments` -- the batched regret engine and :class:`Results`
- :mod:`dpbandits.scenarios` -- the paper's synthetic selection scenarios
- :mod:`dpbandits.plotting` -- matplotlib figures
- :mod:`dpbandits.cli` -- the ``dpbandits`` console script

Environments live in the sibling package :mod:`envs`, agents in :mod:`agents`.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
