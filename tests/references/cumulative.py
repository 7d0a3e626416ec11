"""NumPy references of DML_CUMULATIVE_SUMMATION and DML_CUMULATIVE_PRODUCT, written from the pages."""

from __future__ import annotations

import itertools
import math

import numpy as np


def _wrap(value: int, dtype: np.dtype) -> int:
    bits = dtype.itemsize * 8
    value %= 1 << bits
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def scan(x: np.ndarray, axis: int, decreasing: bool, exclusive: bool, product: bool) -> np.ndarray:
    """Per sequence along ``axis``: the running sum/product from the start (INCREASING) or the end (DECREASING),
    exclusive of the current element when asked; integers exactly with two's complement wrap-around, floats in
    float64 sequentially (rounded to x's type)."""
    out = np.empty(x.shape, x.dtype)
    n = x.shape[axis]
    for position in itertools.product(*(range(s) for d, s in enumerate(x.shape) if d != axis)):
        values = []
        for i in range(n):
            index = list(position)
            index.insert(axis, i)
            values.append(x[tuple(index)].item())
        for i in range(n):
            part = values[i + 1 :] if decreasing else values[:i]
            if not exclusive:
                part = values[i:] if decreasing else values[: i + 1]
            if x.dtype.kind in "iu":
                total: float = _wrap(math.prod(part) if product else sum(part), x.dtype)
            else:
                total = math.prod(float(v) for v in part) if product else math.fsum(float(v) for v in part)
            index = list(position)
            index.insert(axis, i)
            with np.errstate(over="ignore"):
                out[tuple(index)] = total
    return out
