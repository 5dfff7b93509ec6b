"""The fixed selection problems and sample sizes the kit's checks draw from."""

from __future__ import annotations

import numpy as np

__all__ = ["D_A", "D_B", "N_ROWS", "N_SINGLE", "Q_A", "Q_B"]

#: Rows per sample of a statistical check.
N_ROWS = 20_000
#: Single calls compared with one batch of identical rows (each single call is a Python call).
N_SINGLE = 1_000

# Two K = 4 problems: A with a tie (so that greedy is random too), B with other scores and much
# larger/smaller sensitivities (a selector mixing rows would change A's law).
Q_A = np.array([0.0, 1.0, 1.0, 0.5])
D_A = np.array([1.0, 0.5, 1.0, 2.0])
Q_B = np.array([3.0, -1.0, 0.0, 2.0])
D_B = np.array([10.0, 10.0, 0.1, 5.0])
