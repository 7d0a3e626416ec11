"""NumPy reference of DML_CAST, with the conversion rules the service documents (the page defines none)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt


def cast(x: np.ndarray, to: npt.DTypeLike) -> np.ndarray:
    """float -> integer: truncate toward zero, saturate, NaN -> 0; integer -> integer: wrap (keep the low bits);
    to a float type: round to nearest even, once (NumPy's conversions from the exact value)."""
    dtype = np.dtype(to)
    if dtype.kind == "f":
        if x.dtype.kind in "iu" and x.dtype.itemsize == 8 and dtype == np.float16:
            # From the exact integer: every integer that needs rounding is beyond FLOAT16's range anyway.
            exact = np.array([float(v) for v in x.reshape(-1).tolist()], np.float64)
            with np.errstate(over="ignore"):  # beyond FLOAT16's range: inf, as intended
                return exact.astype(dtype).reshape(x.shape)
        with np.errstate(over="ignore"):
            return x.astype(dtype)
    info = np.iinfo(dtype)
    bits = dtype.itemsize * 8
    out = []
    for v in x.reshape(-1).tolist():
        if isinstance(v, float):
            if math.isnan(v):
                n = 0
            elif math.isinf(v):
                n = int(info.max) if v > 0 else int(info.min)
            else:
                n = min(max(math.trunc(v), int(info.min)), int(info.max))
        else:
            n = int(v) % (1 << bits)
            if dtype.kind == "i" and n >= 1 << (bits - 1):
                n -= 1 << bits
        out.append(n)
    return np.array(out, dtype).reshape(x.shape)
