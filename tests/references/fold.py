"""NumPy references of DirectML's FOLD and UNFOLD (im2col / col2im), written from the pages."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np


def blocks_per_dimension(
    spatial: tuple[int, ...],
    window: list[int],
    strides: list[int],
    dilations: list[int],
    start: list[int],
    end: list[int],
) -> list[int]:
    """The pages' BlocksPerDimension formula."""
    return [
        (spatial[d] + start[d] + end[d] - dilations[d] * (window[d] - 1) - 1) // strides[d] + 1
        for d in range(len(spatial))
    ]


def _entries(
    spatial: tuple[int, ...],
    window: list[int],
    strides: list[int],
    dilations: list[int],
    start: list[int],
    end: list[int],
) -> Iterator[tuple[int, int, tuple[int, ...] | None]]:
    """(window offset k, block b, spatial coordinates or None in the padding), both numbered row-major."""
    blocks = blocks_per_dimension(spatial, window, strides, dilations, start, end)
    for b, block in enumerate(itertools.product(*(range(n) for n in blocks))):
        for k, offset in enumerate(itertools.product(*(range(w) for w in window))):
            coords = tuple(block[d] * strides[d] - start[d] + offset[d] * dilations[d] for d in range(len(spatial)))
            inside = all(0 <= coords[d] < spatial[d] for d in range(len(spatial)))
            yield k, b, coords if inside else None


def unfold(
    x: np.ndarray, window: list[int], strides: list[int], dilations: list[int], start: list[int], end: list[int]
) -> np.ndarray:
    """out[n, c*K + k, b] = x[n, c, position of offset k in block b], 0 in the padding (in float64)."""
    n, c, *spatial = x.shape
    blocks = blocks_per_dimension(tuple(spatial), window, strides, dilations, start, end)
    windows = int(np.prod(window))
    out = np.zeros((n, c * windows, int(np.prod(blocks))), np.float64)
    for k, b, coords in _entries(tuple(spatial), window, strides, dilations, start, end):
        if coords is not None:
            for channel in range(c):
                out[:, channel * windows + k, b] = x[(slice(None), channel, *coords)]
    return out


def fold(
    x: np.ndarray,
    spatial: tuple[int, ...],
    window: list[int],
    strides: list[int],
    dilations: list[int],
    start: list[int],
    end: list[int],
) -> np.ndarray:
    """out[n, c, p] = the sum of x[n, c*K + k, b] over the (k, b) whose element lands on p (in float64)."""
    n, columns, _ = x.shape
    windows = int(np.prod(window))
    c = columns // windows
    out = np.zeros((n, c, *spatial), np.float64)
    for k, b, coords in _entries(spatial, window, strides, dilations, start, end):
        if coords is not None:
            for channel in range(c):
                out[(slice(None), channel, *coords)] += x[:, channel * windows + k, b].astype(np.float64)
    return out
