"""NumPy references of DirectML's quantized operators, written from their pages, independent of the server."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tests.references.convolution import forward
from tests.references.pooling import average_pooling


def quantize(real: np.ndarray, scale: Any, zero_point: Any, dtype: Any) -> np.ndarray:
    """clamp(round(real / scale) + zero_point, Min, Max): round half to even, saturated to ``dtype``'s range."""
    info = np.iinfo(dtype)
    zero = 0 if zero_point is None else np.asarray(zero_point).astype(np.float64)
    with np.errstate(all="ignore"):
        q = np.round(np.asarray(real) / np.asarray(scale)).astype(np.float64) + zero
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize(x: np.ndarray, scale: Any, zero_point: Any) -> np.ndarray:
    """(x - zero_point) * scale in FLOAT64 (the difference exact)."""
    zero = 0 if zero_point is None else np.asarray(zero_point).astype(np.int64)
    return (x.astype(np.int64) - zero).astype(np.float64) * np.asarray(scale, np.float64)


def quantize_op(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, dtype: Any) -> np.ndarray:
    """QUANTIZE: the quotient in FLOAT32, as ELEMENT_WISE_QUANTIZE_LINEAR's page computes it."""
    with np.errstate(all="ignore"):
        quotient = x.astype(np.float32) / scale.astype(np.float32)
    return quantize(quotient, 1, zero_point, dtype)


def dequantize_op(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, dtype: Any) -> np.ndarray:
    return dequantize(x, scale, zero_point).astype(dtype)


def dynamic_quantize_linear(x: np.ndarray, dtype: Any) -> tuple[np.ndarray, np.float32, Any]:
    """Output, scale and zero point, in FLOAT32 as the page's formula reads: range widened to hold 0, the zero point
    rounded half to even and saturated; an all-zero input has scale 0, zero point Min, outputs Min."""
    info = np.iinfo(dtype)
    low, high = np.float32(info.min), np.float32(info.max)
    values = x.astype(np.float32)
    smallest = np.minimum(values.min(), np.float32(0))
    largest = np.maximum(values.max(), np.float32(0))
    scale = np.float32(largest - smallest) / np.float32(high - low)
    divisor = np.float32(1) if scale == 0 else scale
    zero = np.clip(np.round(low - smallest / divisor), low, high)
    output = np.clip(np.round(values / divisor) + zero, low, high).astype(dtype)
    return output, np.float32(scale), np.asarray(zero).astype(dtype)


def _rows(values: np.ndarray | None, count: int) -> np.ndarray:
    """A per-tensor or per-row/column parameter as ``count`` values (any leading-1 shape)."""
    flat = np.zeros(1) if values is None else values.reshape(-1)
    return np.broadcast_to(flat, (count,))


def quantized_linear_matrix_multiply(
    a: np.ndarray,
    a_scale: np.ndarray,
    a_zero: np.ndarray | None,
    b: np.ndarray,
    b_scale: np.ndarray,
    b_zero: np.ndarray | None,
    out_scale: np.ndarray,
    out_zero: np.ndarray | None,
    dtype: Any,
) -> np.ndarray:
    """quantize(dequantize(A) x dequantize(B)): A's parameters per row (M), B's per column (N), the output's per
    row; the product in FLOAT64."""
    m, n = a.shape[-2], b.shape[-1]
    left = dequantize(a, _rows(a_scale, m)[:, None], _rows(a_zero, m).astype(np.int64)[:, None])
    right = dequantize(b, _rows(b_scale, n)[None, :], _rows(b_zero, n).astype(np.int64)[None, :])
    real = np.matmul(left, right)
    zero = None if out_zero is None else _rows(out_zero, m)[:, None]
    return quantize(real, _rows(out_scale, m)[:, None], zero, dtype)


def matrix_multiply_integer_to_float(
    a: np.ndarray,
    a_scale: np.ndarray,
    a_zero: np.ndarray | None,
    b: np.ndarray,
    b_scale: np.ndarray,
    b_zero: np.ndarray | None,
    bias: np.ndarray | None,
) -> np.ndarray:
    """dequantize(A) x dequantize(B) + Bias in FLOAT64; A's parameters per row, B's per column."""
    m, n = a.shape[-2], b.shape[-1]
    left = dequantize(a, _rows(a_scale, m)[:, None], _rows(a_zero, m).astype(np.int64)[:, None])
    right = dequantize(b, _rows(b_scale, n)[None, :], _rows(b_zero, n).astype(np.int64)[None, :])
    result: np.ndarray = np.matmul(left, right)
    return result if bias is None else result + bias.astype(np.float64)


def quantized_linear_convolution(
    x: np.ndarray,
    x_scale: np.ndarray,
    x_zero: np.ndarray | None,
    w: np.ndarray,
    w_scale: np.ndarray,
    w_zero: np.ndarray | None,
    bias: np.ndarray | None,
    out_scale: np.ndarray,
    out_zero: np.ndarray | None,
    dtype: Any,
    *,
    strides: Sequence[int],
    dilations: Sequence[int],
    start: Sequence[int],
    end: Sequence[int],
    groups: int,
) -> np.ndarray:
    """quantize(conv(dequantize(X), dequantize(W)) + Bias * XScale * WScale): the filter's parameters per output
    channel, the INT32 bias in the accumulator's domain; padding contributes 0; in FLOAT64."""
    m = w.shape[0]
    channel = (m,) + (1,) * (w.ndim - 1)
    real_x = dequantize(x, x_scale.reshape(-1)[0], None if x_zero is None else x_zero.reshape(-1)[0])
    real_w = dequantize(
        w, _rows(w_scale, m).reshape(channel), None if w_zero is None else _rows(w_zero, m).reshape(channel)
    )
    real = forward(real_x, real_w, strides, dilations, start, end, groups)
    if bias is not None:
        scales = float(x_scale.reshape(-1)[0]) * _rows(w_scale, m).astype(np.float64)
        real = real + bias.astype(np.float64).reshape(1, m, *([1] * (x.ndim - 2))) * scales.reshape(1, m, 1, 1)
    return quantize(real, out_scale.reshape(-1)[0], None if out_zero is None else out_zero.reshape(-1)[0], dtype)


def quantized_linear_average_pooling(
    x: np.ndarray,
    x_scale: np.ndarray,
    x_zero: np.ndarray | None,
    out_scale: np.ndarray,
    out_zero: np.ndarray | None,
    dtype: Any,
    *,
    strides: list[int],
    window: list[int],
    start: list[int],
    end: list[int],
    dilations: list[int],
    include_padding: bool,
) -> np.ndarray:
    """quantize(average_pooling1(dequantize(X))): parameters per tensor or per channel; padding is a real 0."""
    channels = x.shape[1]
    shape = (1, channels) + (1,) * (x.ndim - 2)

    def per_channel(values: np.ndarray | None) -> np.ndarray | None:
        return None if values is None else _rows(values, channels).reshape(shape)

    real = dequantize(x, per_channel(x_scale), per_channel(x_zero))
    pooled = average_pooling(real, strides, window, start, end, include_padding, dilations)
    return quantize(pooled, per_channel(out_scale), per_channel(out_zero), dtype)
