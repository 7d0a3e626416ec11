"""NumPy references of the pooling, resample and slice gradients, straight loops over the pages' definitions."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from tests.references.resample import axis_taps


def _window_elements(
    in_sizes: Sequence[int],
    position: Sequence[int],
    strides: Sequence[int],
    window: Sequence[int],
    start: Sequence[int],
    dilations: Sequence[int],
) -> list[tuple[int, ...]]:
    """The in-bounds input coordinates of one output position's window, in row-major window order."""
    n, c, *o = position
    found = []
    for k in itertools.product(*(range(w) for w in window)):
        coords = [o[i] * strides[i] - start[i] + k[i] * dilations[i] for i in range(len(o))]
        if all(0 <= coords[i] < in_sizes[2 + i] for i in range(len(o))):
            found.append((n, c, *coords))
    return found


def average_pooling_grad(
    dy: np.ndarray,
    in_sizes: Sequence[int],
    strides: Sequence[int],
    window: Sequence[int],
    start: Sequence[int],
    include_padding: bool,
) -> np.ndarray:
    """dx[i] = sum of dy[o] / count(o) over the windows o containing i (FLOAT64)."""
    dx = np.zeros(tuple(in_sizes), np.float64)
    ones = [1] * len(strides)
    for position in itertools.product(*(range(s) for s in dy.shape)):
        elements = _window_elements(in_sizes, position, strides, window, start, ones)
        count = math.prod(window) if include_padding else len(elements)
        for element in elements:
            dx[element] += float(dy[position]) / count
    return dx


def max_pooling_grad(
    x: np.ndarray,
    dy: np.ndarray,
    strides: Sequence[int],
    window: Sequence[int],
    start: Sequence[int],
    dilations: Sequence[int],
) -> np.ndarray:
    """dx[argmax(o)] += dy[o], argmax the first (lowest logical index) maximum of x in o's window (FLOAT64)."""
    dx = np.zeros(x.shape, np.float64)
    for position in itertools.product(*(range(s) for s in dy.shape)):
        elements = _window_elements(x.shape, position, strides, window, start, dilations)
        best = min(elements, key=lambda e: (-float(x[e]), np.ravel_multi_index(e, x.shape)))
        dx[best] += float(dy[position])
    return dx


def resample_grad(
    dy: np.ndarray,
    in_sizes: Sequence[int],
    scales: Sequence[float],
    input_offsets: Sequence[float],
    output_offsets: Sequence[float],
    *,
    linear: bool,
    rounding: str,
) -> np.ndarray:
    """The transpose of RESAMPLE1/2: every output position o of the forward adds dy[o] times its weight to each
    input element it reads (the product of its per-dimension taps), FLOAT64."""
    dx = np.zeros(tuple(in_sizes), np.float64)
    for position in itertools.product(*(range(s) for s in dy.shape)):
        per_axis = [
            axis_taps(
                o,
                in_sizes[d],
                scales[d],
                input_offsets[d],
                output_offsets[d],
                linear=linear,
                rounding=rounding,
                antialiased=False,
            )
            for d, o in enumerate(position)
        ]
        for combination in itertools.product(*per_axis):
            weight = math.prod(w for _, w in combination)
            dx[tuple(i for i, _ in combination)] += weight * float(dy[position])
    return dx


def slice_grad(
    dy: np.ndarray,
    in_sizes: Sequence[int],
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int],
) -> np.ndarray:
    """Zeros of the sliced tensor's sizes with dy[o] at CopyStart + Strides * o (SLICE1's positions)."""
    start = [o + (s - 1 if st < 0 else 0) for o, s, st in zip(offsets, sizes, strides, strict=True)]
    dx = np.zeros(tuple(in_sizes), dy.dtype)
    for position in itertools.product(*(range(n) for n in dy.shape)):
        dx[tuple(b + st * p for b, st, p in zip(start, strides, position, strict=True))] = dy[position]
    return dx
