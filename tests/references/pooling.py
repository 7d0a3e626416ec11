"""NumPy references of DirectML's pooling operators, written from the pages (independent of the server code)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np


def output_sizes(
    in_sizes: tuple[int, ...],
    strides: list[int],
    window: list[int],
    start: list[int],
    end: list[int],
    dilations: list[int],
) -> tuple[int, ...]:
    """The pooling output-size formula, the window spanning (WindowSize - 1) * Dilations + 1 elements."""
    spatial = [
        (in_sizes[2 + i] + start[i] + end[i] - ((window[i] - 1) * dilations[i] + 1)) // strides[i] + 1
        for i in range(len(strides))
    ]
    return (in_sizes[0], in_sizes[1], *spatial)


def _windows(
    x: np.ndarray, strides: list[int], window: list[int], start: list[int], end: list[int], dilations: list[int]
) -> Iterator[tuple[tuple[int, ...], list[tuple[int, Any]]]]:
    """Yield (output position, [(flat input index, value) of in-bounds window elements in row-major order])."""
    out = output_sizes(x.shape, strides, window, start, end, dilations)
    for position in itertools.product(*(range(s) for s in out)):
        n, c, *o = position
        elements = []
        for k in itertools.product(*(range(w) for w in window)):
            coords = [o[i] * strides[i] - start[i] + k[i] * dilations[i] for i in range(len(o))]
            if all(0 <= coords[i] < x.shape[2 + i] for i in range(len(o))):
                index = (n, c, *coords)
                elements.append((int(np.ravel_multi_index(index, x.shape)), x[index]))
        yield position, elements


def max_pooling(
    x: np.ndarray,
    strides: list[int],
    window: list[int],
    start: list[int],
    end: list[int],
    dilations: list[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Values and flat indices: the max over the in-bounds window elements, the first one on ties."""
    dilations = dilations or [1] * len(strides)
    out = output_sizes(x.shape, strides, window, start, end, dilations)
    values = np.zeros(out, x.dtype)
    indices = np.zeros(out, np.int64)
    for position, elements in _windows(x, strides, window, start, end, dilations):
        best: tuple[float, int, Any] | None = None
        for index, value in elements:
            key: float = int(value) if x.dtype.kind in "iu" else float(value)
            if best is None or key > best[0]:
                best = (key, index, value)
        assert best is not None, "a window covers only padding"
        values[position] = best[2]
        indices[position] = best[1]
    return values, indices


def average_pooling(
    x: np.ndarray,
    strides: list[int],
    window: list[int],
    start: list[int],
    end: list[int],
    include_padding: bool,
    dilations: list[int] | None = None,
) -> np.ndarray:
    dilations = dilations or [1] * len(strides)
    out = output_sizes(x.shape, strides, window, start, end, dilations)
    result = np.zeros(out, np.float64)
    for position, elements in _windows(x, strides, window, start, end, dilations):
        total = sum(float(v) for _, v in elements)
        count = math.prod(window) if include_padding else len(elements)
        result[position] = total / count
    return result


def lp_pooling(
    x: np.ndarray,
    strides: list[int],
    window: list[int],
    start: list[int],
    end: list[int],
    p: int,
    dilations: list[int] | None = None,
) -> np.ndarray:
    dilations = dilations or [1] * len(strides)
    out = output_sizes(x.shape, strides, window, start, end, dilations)
    result = np.zeros(out, np.float64)
    for position, elements in _windows(x, strides, window, start, end, dilations):
        result[position] = sum(abs(float(v)) ** p for _, v in elements) ** (1.0 / p)
    return result


def max_unpooling(x: np.ndarray, indices: np.ndarray, out_sizes: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(out_sizes, x.dtype)
    flat = out.reshape(-1)
    for value, index in zip(x.reshape(-1), indices.reshape(-1), strict=True):
        flat[int(index)] = value
    return out


def _round(value: float) -> int:
    """C round(): half away from zero."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def roi_pooling(x: np.ndarray, rois: np.ndarray, spatial_scale: float, pooled_h: int, pooled_w: int) -> np.ndarray:
    """The page's function: integer bin bounds, Start floor / End ceil, clamped; an empty bin gives 0."""
    table = rois.reshape(-1, 5)
    _, channels, height, width = x.shape
    out = np.zeros((table.shape[0], channels, pooled_h, pooled_w), np.float64)
    scale = np.float32(spatial_scale)
    for r, (batch, *corners) in enumerate(table):
        x1, y1, x2, y2 = (_round(float(np.float32(c) * scale)) for c in corners)
        region_h, region_w = y2 - y1 + 1, x2 - x1 + 1
        for ph in range(pooled_h):
            start_y = min(max((ph * region_h) // pooled_h + y1, 0), height)
            end_y = min(max(((ph + 1) * region_h + pooled_h - 1) // pooled_h + y1, 0), height)
            for pw in range(pooled_w):
                start_x = min(max((pw * region_w) // pooled_w + x1, 0), width)
                end_x = min(max(((pw + 1) * region_w + pooled_w - 1) // pooled_w + x1, 0), width)
                if start_y >= end_y or start_x >= end_x:
                    continue
                region = x[int(batch), :, start_y:end_y, start_x:end_x].astype(np.float64)
                out[r, :, ph, pw] = region.max(axis=(1, 2))
    return out
