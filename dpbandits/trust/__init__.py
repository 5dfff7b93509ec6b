"""Trust models beyond the trusted learner under pure eps-DP: the user's randomizers of local
DP (:mod:`dpbandits.trust.randomizers`) and each guarantee in its native notion with its
(eps, delta) conversion by an accountant (:mod:`dpbandits.trust.notions`); docs/trust-models.md.
"""

from __future__ import annotations

from dpbandits.trust.notions import (
    NOTIONS,
    accountant_available,
    approx_dp,
    check_delta,
    implied_rho,
    native_guarantee,
    with_conversion,
)
from dpbandits.trust.randomizers import LocalRandomizer

__all__ = [
    "NOTIONS",
    "LocalRandomizer",
    "accountant_available",
    "approx_dp",
    "check_delta",
    "implied_rho",
    "native_guarantee",
    "with_conversion",
]
