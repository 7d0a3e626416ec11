"""NumPy references of DML_REDUCE, DML_ARGMIN and DML_ARGMAX, written from the DirectML pages."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

FUNCTIONS = [
    "ARGMAX",
    "ARGMIN",
    "AVERAGE",
    "L1",
    "L2",
    "LOG_SUM",
    "LOG_SUM_EXP",
    "MAX",
    "MIN",
    "MULTIPLY",
    "SUM",
    "SUM_SQUARE",
]


def _groups(x: np.ndarray, axes: Sequence[int]) -> list[tuple[tuple[int, ...], list[object]]]:
    """Per output position (reduced axes at 0), the input elements of its slice in row-major order of the reduced
    axes, as Python numbers (exact integers)."""
    kept = [d for d in range(x.ndim) if d not in axes]
    reduced = sorted(axes)
    result = []
    for position in itertools.product(*(range(x.shape[d]) if d in kept else range(1) for d in range(x.ndim))):
        values = []
        for inner in itertools.product(*(range(x.shape[d]) for d in reduced)):
            index = list(position)
            for d, i in zip(reduced, inner, strict=True):
                index[d] = i
            values.append(x[tuple(index)].item())
        result.append((position, values))
    return result


def _wrap(value: int, dtype: np.dtype) -> int:
    """Two's complement wrap-around into ``dtype``."""
    bits = dtype.itemsize * 8
    value %= 1 << bits
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def arg_extreme(x: np.ndarray, axes: Sequence[int], largest: bool, last: bool) -> np.ndarray:
    """Index over the reduced axes (row-major flattened) of the first (or last) maximum (or minimum)."""
    out_shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape))
    out = np.zeros(out_shape, np.int64)
    for position, values in _groups(x, axes):
        best = max(values) if largest else min(values)  # type: ignore[type-var]
        hits = [i for i, v in enumerate(values) if v == best]
        out[position] = hits[-1] if last else hits[0]
    return out


def reduce(x: np.ndarray, axes: Sequence[int], function: str) -> np.ndarray:
    """DML_REDUCE: integers exactly with two's complement wrap-around; floats in float64 (rounded to x's type)."""
    if function in ("ARGMAX", "ARGMIN"):
        return arg_extreme(x, axes, function == "ARGMAX", last=False)
    out_shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape))
    out = np.zeros(out_shape, x.dtype)
    integral = x.dtype.kind in "iu"
    for position, values in _groups(x, axes):
        if integral:
            ints = [int(v) for v in values]  # type: ignore[call-overload]
            if function == "MAX":
                result: float = max(ints)
            elif function == "MIN":
                result = min(ints)
            elif function == "SUM":
                result = _wrap(sum(ints), x.dtype)
            elif function == "MULTIPLY":
                result = _wrap(math.prod(ints), x.dtype)
            elif function == "L1":
                result = _wrap(sum(abs(_wrap(v, x.dtype)) for v in ints), x.dtype)
            elif function == "SUM_SQUARE":
                result = _wrap(sum(v * v for v in ints), x.dtype)
            else:
                raise ValueError(f"{function} takes no integers")
            out[position] = result
            continue
        with np.errstate(all="ignore"):
            out[position] = _float_reduce(np.array(values, np.float64), function)
    return out


def _float_reduce(f: np.ndarray, function: str) -> float:
    if function == "AVERAGE":
        return float(f.mean())
    if function == "L1":
        return float(np.abs(f).sum())
    if function == "L2":
        return float(np.sqrt((f * f).sum()))
    if function == "LOG_SUM":
        return float(np.log(f.sum()))
    if function == "LOG_SUM_EXP":
        return float(np.log(np.exp(f).sum()))
    if function == "MAX":
        return float(f.max())
    if function == "MIN":
        return float(f.min())
    if function == "MULTIPLY":
        return float(f.prod())
    if function == "SUM":
        return float(f.sum())
    if function == "SUM_SQUARE":
        return float((f * f).sum())
    raise ValueError(function)
