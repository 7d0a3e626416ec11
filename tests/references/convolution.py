"""NumPy references of CONVOLUTION and CONVOLUTION_INTEGER: explicit loops over output (forward) or input
(backward) positions, written from DirectML's pages, independent of the server code."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np


def forward(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    dilations: Sequence[int],
    start: Sequence[int],
    end: Sequence[int],
    groups: int,
) -> np.ndarray:
    """Cross-correlation of x {N, C, spatial..} with w {M, C / groups, kernel..}; padding contributes zero."""
    n, c = x.shape[:2]
    m = w.shape[0]
    spatial = x.ndim - 2
    kernel = w.shape[2:]
    sizes = [
        (x.shape[2 + d] + start[d] + end[d] - ((kernel[d] - 1) * dilations[d] + 1)) // strides[d] + 1
        for d in range(spatial)
    ]
    group_in, group_out = c // groups, m // groups
    out = np.zeros((n, m, *sizes), dtype=x.dtype)
    for batch, channel in itertools.product(range(n), range(m)):
        group = channel // group_out
        for position in itertools.product(*(range(s) for s in sizes)):
            total = x.dtype.type(0)
            for inner in range(group_in):
                for tap in itertools.product(*(range(k) for k in kernel)):
                    source = [position[d] * strides[d] + tap[d] * dilations[d] - start[d] for d in range(spatial)]
                    if all(0 <= source[d] < x.shape[2 + d] for d in range(spatial)):
                        total += x[(batch, group * group_in + inner, *source)] * w[(channel, inner, *tap)]
            out[(batch, channel, *position)] = total
    return out


def backward(
    x: np.ndarray,
    w: np.ndarray,
    strides: Sequence[int],
    dilations: Sequence[int],
    start: Sequence[int],
    end: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
) -> np.ndarray:
    """The transposed cross-correlation: each input element scatters x * w {C, M / groups, kernel..} onto the
    full result, which is then cropped by start/end padding and extended by output padding."""
    n, c = x.shape[:2]
    spatial = x.ndim - 2
    kernel = w.shape[2:]
    group_in, group_out = c // groups, w.shape[1]
    sizes = [
        (x.shape[2 + d] - 1) * strides[d] + (kernel[d] - 1) * dilations[d] + 1 - start[d] - end[d] + output_padding[d]
        for d in range(spatial)
    ]
    out = np.zeros((n, group_out * groups, *sizes), dtype=x.dtype)
    for batch, channel in itertools.product(range(n), range(c)):
        group = channel // group_in
        for position in itertools.product(*(range(s) for s in x.shape[2:])):
            value = x[(batch, channel, *position)]
            for tap in itertools.product(*(range(k) for k in kernel)):
                target = [position[d] * strides[d] + tap[d] * dilations[d] - start[d] for d in range(spatial)]
                if all(0 <= target[d] < sizes[d] for d in range(spatial)):
                    for inner in range(group_out):
                        out[(batch, group * group_out + inner, *target)] += value * w[(channel, inner, *tap)]
    return out


def convolution(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    *,
    flip: bool,
    backward_direction: bool,
    strides: Sequence[int],
    dilations: Sequence[int],
    start: Sequence[int],
    end: Sequence[int],
    output_padding: Sequence[int],
    groups: int,
) -> np.ndarray:
    """DML_CONVOLUTION in FLOAT64: mode CONVOLUTION (``flip``) reverses the filter spatially; forward output padding
    appends zeros to the result; then the bias {1, M, 1..} is added."""
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    if flip:
        w64 = w64[(slice(None), slice(None), *([slice(None, None, -1)] * (w.ndim - 2)))]
    if backward_direction:
        out = backward(x64, w64, strides, dilations, start, end, output_padding, groups)
    else:
        out = forward(x64, w64, strides, dilations, start, end, groups)
        out = np.pad(out, [(0, 0), (0, 0), *((0, p) for p in output_padding)])
    if bias is not None:
        out = out + bias.astype(np.float64)
    return out


def convolution_integer(
    x: np.ndarray,
    x_zero: np.ndarray | None,
    w: np.ndarray,
    w_zero: np.ndarray | None,
    *,
    strides: Sequence[int],
    dilations: Sequence[int],
    start: Sequence[int],
    end: Sequence[int],
    groups: int,
) -> np.ndarray:
    """conv(X - XZeroPoint, W - WZeroPoint[m]) in INT32 (wrapping); the padded (X - XZeroPoint) is zero."""
    m = w.shape[0]
    zx = 0 if x_zero is None else int(x_zero.reshape(-1)[0])
    zw = np.zeros(1, np.int64) if w_zero is None else w_zero.astype(np.int64).reshape(-1)
    shifted_w = w.astype(np.int64) - np.broadcast_to(zw, (m,)).reshape((m,) + (1,) * (w.ndim - 1))
    out = forward(x.astype(np.int64) - zx, shifted_w, strides, dilations, start, end, groups)
    return ((out + 2**31) % 2**32 - 2**31).astype(np.int32)
