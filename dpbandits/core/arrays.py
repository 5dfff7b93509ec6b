"""The array types of the library's annotations, named once.

``FloatArray``, ``IntArray`` and ``BoolArray`` are the float64, int64 and bool numpy arrays the
modules pass around (scores, selected indices, masks); they are type aliases only, nothing
converts or checks at run time.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["BoolArray", "FloatArray", "IntArray"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
