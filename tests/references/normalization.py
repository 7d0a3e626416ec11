"""NumPy references for the normalisation operators, from the DirectML pages' formulas (FLOAT64 throughout)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _scale_bias(value: np.ndarray, scale: np.ndarray | None, bias: np.ndarray | None) -> np.ndarray:
    """Scale * value + Bias; an absent Scale is 1 and an absent Bias 0."""
    if scale is not None:
        value = np.asarray(scale, np.float64) * value
    if bias is not None:
        value = value + np.asarray(bias, np.float64)
    return value


def batch_normalization(
    x: np.ndarray, mean: np.ndarray, variance: np.ndarray, scale: np.ndarray, bias: np.ndarray, epsilon: float
) -> np.ndarray:
    """Scale * (Input - Mean) / sqrt(Variance + Epsilon) + Bias, the statistics broadcast per dimension."""
    centred = np.asarray(x, np.float64) - np.asarray(mean, np.float64)
    normalized = centred / np.sqrt(np.asarray(variance, np.float64) + np.float64(np.float32(epsilon)))
    return _scale_bias(normalized, scale, bias)


def mean_variance_normalization(
    x: np.ndarray,
    axes: Sequence[int],
    *,
    use_mean: bool = True,
    use_variance: bool = True,
    epsilon: float,
    scale: np.ndarray | None = None,
    bias: np.ndarray | None = None,
) -> np.ndarray:
    """Mean and population variance over ``axes``; without UseMean the mean is 0 (so the variance is the mean of
    squares), without UseVariance the divisor is 1."""
    data = np.asarray(x, np.float64)
    axes = tuple(axes)
    mean = data.mean(axis=axes, keepdims=True) if use_mean else np.zeros_like(data)
    centred = data - mean
    if use_variance:
        variance = (centred * centred).mean(axis=axes, keepdims=True)
        centred = centred / np.sqrt(variance + np.float64(np.float32(epsilon)))
    return _scale_bias(centred, scale, bias)


def lp_normalization(x: np.ndarray, axis: int, p: int, epsilon: float) -> np.ndarray:
    """Input / max((sum |Input|^p along Axis)^(1/p), Epsilon)."""
    data = np.asarray(x, np.float64)
    norm = (np.abs(data) ** p).sum(axis=axis, keepdims=True) ** (1.0 / p)
    return np.asarray(data / np.maximum(norm, np.float64(np.float32(epsilon))), np.float64)


def local_response_normalization(
    x: np.ndarray, *, cross_channel: bool, local_size: int, alpha: float, beta: float, bias: float
) -> np.ndarray:
    """Input / (Bias + Alpha / LocalSize * sum of squares over the window)^Beta, by explicit loops: the window is
    LocalSize channels (cross-channel) or LocalSize x LocalSize of H and W, from i - floor((LocalSize - 1) / 2) to
    i + ceil((LocalSize - 1) / 2), clipped to the tensor."""
    data = np.asarray(x, np.float64)
    squares = data * data
    n_size, c_size, h_size, w_size = data.shape
    before = (local_size - 1) // 2
    after = local_size - 1 - before
    sums = np.zeros_like(data)
    for n in range(n_size):
        for c in range(c_size):
            for h in range(h_size):
                for w in range(w_size):
                    if cross_channel:
                        low, high = max(0, c - before), min(c_size, c + after + 1)
                        sums[n, c, h, w] = squares[n, low:high, h, w].sum()
                    else:
                        top, bottom = max(0, h - before), min(h_size, h + after + 1)
                        left, right = max(0, w - before), min(w_size, w + after + 1)
                        sums[n, c, h, w] = squares[n, c, top:bottom, left:right].sum()
    a, b, k = (np.float64(np.float32(v)) for v in (alpha, beta, bias))
    return np.asarray(data / (k + a / local_size * sums) ** b, np.float64)


def relu(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.maximum(x, 0), np.float64)


def linear(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    return np.asarray(np.float64(np.float32(alpha)) * x + np.float64(np.float32(beta)), np.float64)
