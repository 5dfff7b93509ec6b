"""dpbandits: differentially private selection inside bandit learners.

The front door: the names most users need, importable from here (each is loaded on first use,
so ``import dpbandits`` stays cheap)::

    import dpbandits
    results = dpbandits.run("dpbandits/TwoArmedShift-v0", {"UCB": "ucb", "mGEM": "private"},
                            n_runs=20, horizon=5_000)

- :func:`run` -- the batched regret engine (:mod:`dpbandits.experiments.engine`);
- :class:`Results` -- what :func:`run` returns: summaries, curves, the privacy ledger, save/load;
- :func:`sweep` -- a resumable parameter sweep of an experiment config;
- :func:`load_config` -- an experiment config (TOML file or mapping) as a validated
  :class:`~dpbandits.experiments.config.Experiment`;
- :mod:`selectors` -- the DP selectors (``selectors.make("mgem", epsilon=1.0)``);
- :mod:`agents` -- the bandit agents (``agents.make("ucb")``, a sibling package);
- :mod:`plotting` -- the regret figures.

The rooms, bottom floor first (docs/architecture.md draws them): :mod:`dpbandits.core`
(checks, compiled-code helpers, samplers, files), the mechanisms (:mod:`dpbandits.selectors`,
:mod:`dpbandits.continual`, :mod:`dpbandits.quantiles`, :mod:`dpbandits.accounting`,
:mod:`dpbandits.theory`), the sibling packages :mod:`envs` and :mod:`agents`, the selection
scenarios (:mod:`dpbandits.scenarios`), top-k and recommendation, the experiment layer
(:mod:`dpbandits.experiments`), then :mod:`dpbandits.testing`, :mod:`dpbandits.course` and
:mod:`dpbandits.cli`.

Importing ``dpbandits`` checks that ``agents`` and ``envs`` are this project's packages
(another distribution can install packages of the same names) and registers the
``dpbandits/<Name>-v0`` environment ids with Gymnasium.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpbandits.core.registration import register_envs
from dpbandits.core.sibling_packages import check_sibling_packages, lazy_attributes
from dpbandits.core.version import __version__

if TYPE_CHECKING:
    import agents
    from dpbandits import selectors
    from dpbandits.experiments import plotting
    from dpbandits.experiments.config import load_config
    from dpbandits.experiments.engine import run
    from dpbandits.experiments.results import Results
    from dpbandits.experiments.sweep import sweep

__all__ = [
    "Results",
    "__version__",
    "agents",
    "load_config",
    "plotting",
    "run",
    "selectors",
    "sweep",
]

# name -> the module that defines it (a module's own name: the module itself). Loaded on first
# use: the experiment layer imports agents and envs, which import this package's floor.
_LAZY = {
    "Results": "dpbandits.experiments.results",
    "load_config": "dpbandits.experiments.config",
    "run": "dpbandits.experiments.engine",
    "sweep": "dpbandits.experiments.sweep",
    "selectors": "dpbandits.selectors",
    "plotting": "dpbandits.experiments.plotting",
    "agents": "agents",
}

__getattr__ = lazy_attributes("dpbandits", _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


check_sibling_packages()
register_envs()
