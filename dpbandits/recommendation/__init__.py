"""Private recommendation: local-DP selection (paper 001) and multi-selection (paper 004).

The score transforms are built-in selector names (imported on first use), so that
``dpbandits.selectors.make("scaled", inner="rnm", epsilon=1.0)`` and
``make("clipped", inner="krr", bound=0.25, public=s_server)`` work like any other name.

- :mod:`.local` -- :class:`Scaled` (Eq. 3), :class:`Clipped` (Eq. 4), the cut-off of
  Algorithm 2 (:func:`cutoff_mask`), :func:`select_among`, the pmfs of Eqs. 2 and 5;
- :mod:`.synthetic` -- requests with the App. G knobs; the Gymnasium environment is
  ``envs.recommendation`` (id ``dpbandits/Recommendation-v0``);
- :mod:`.local_experiments` -- Figs. 3-4 and App. G sweeps;
- :mod:`.geo`, :mod:`.posterior`, :mod:`.submodular`, :mod:`.frugal`, :mod:`.multiselection`
  -- paper 004's signal, posteriors, greedy k-set, frugal model and Tables 1-2;
- :mod:`.world` (synthetic latent-factor world), :mod:`.movielens` (local MovieLens files).
"""

from __future__ import annotations

from dpbandits.recommendation import local as _local
from dpbandits.recommendation.local import *  # noqa: F403 (the names of local.__all__)

__all__ = list(_local.__all__)
