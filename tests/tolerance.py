"""How close a server result must be to a FLOAT64 reference: per-element bounds that follow its rounding."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def tolerance(dtype: np.dtype[Any]) -> float:
    """The relative tolerance: FLOAT16 computes in FLOAT32 and rounds once; FLOAT32 accumulates reduction rounding."""
    return 2e-3 if dtype == np.float16 else 1e-4


def assert_close(got: np.ndarray, expected: np.ndarray, dtype: np.dtype[Any], allowance: Any = 0.0) -> None:
    """``got`` within ``tolerance(dtype)`` of each element and of the largest (1 + max|expected|), plus a per-element
    ``allowance`` for rounding that the operator's math amplifies (mean_rounding) or cancels down to a small result.
    """
    assert got.dtype == dtype and got.shape == expected.shape
    tol = tolerance(dtype)
    scale = 1 + float(np.abs(expected).max(initial=0))
    error = np.abs(got.astype(np.float64) - expected)
    bound = tol * (np.abs(expected) + scale) + np.broadcast_to(allowance, expected.shape)
    if not np.all(error <= bound):  # NaN fails too
        worst = np.unravel_index(np.argmax(np.nan_to_num(error - bound, nan=np.inf)), error.shape)
        raise AssertionError(
            f"at {tuple(map(int, worst))}: got {got[worst]}, expected {expected[worst]}, error {error[worst]:.3g} > "
            f"{bound[worst]:.3g}; {int(np.sum(~(error <= bound)))} of {error.size} elements out of tolerance"
        )


def mean_rounding(
    x: np.ndarray, axes: Sequence[int], epsilon: float, scale: np.ndarray | None, dtype: np.dtype[Any]
) -> np.ndarray:
    """How far the rounding of a computed mean can move ``Scale * (x - mean) / sqrt(variance + epsilon)``, per element.

    The mean of n values summed in the computation type (FLOAT32 for FLOAT16 and FLOAT32) is off by up to
    n * u * max|x| (u: the unit roundoff), and the division amplifies that where a slice is almost constant (variance
    near 0, epsilon as small as 1e-5): 12 copies of 5.8 normalize to 1.5e-4, not 0. Scale and a fused activation
    (LINEAR's |alpha| <= 2) multiply it. Well-conditioned slices get a negligible allowance.
    """
    data = np.asarray(x, np.float64)
    axes = tuple(axes)
    count = math.prod(data.shape[a] for a in axes)
    u = float(np.finfo(np.float64 if dtype == np.float64 else np.float32).eps) / 2
    error = count * u * np.abs(data).max(axis=axes, keepdims=True)
    amplified = error / np.sqrt(data.var(axis=axes, keepdims=True) + np.float64(np.float32(epsilon)))
    if scale is not None:
        amplified = amplified * np.abs(np.asarray(scale, np.float64))
    return np.asarray(2 * np.broadcast_to(amplified, data.shape))
