"""NumPy references of DirectML's data-movement operators, written from the pages, independent of the server."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

#: DML_PADDING_MODE -> numpy.pad mode (the pages' examples all match numpy.pad).
PAD_MODES = {0: "constant", 1: "edge", 2: "reflect", 3: "symmetric", 4: "wrap"}


def slice1(
    x: np.ndarray, offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int], out_sizes: Sequence[int]
) -> np.ndarray:
    """DML_SLICE1 (and SLICE with positive strides and out_sizes = sizes): Output[o] = Input[CopyStart + Strides*o],
    CopyStart moved to the window's last element where the stride is negative."""
    start = [o + (s - 1 if st < 0 else 0) for o, s, st in zip(offsets, sizes, strides, strict=True)]
    out = np.empty(tuple(out_sizes), dtype=x.dtype)
    for position in itertools.product(*(range(n) for n in out_sizes)):
        source = tuple(b + st * p for b, st, p in zip(start, strides, position, strict=True))
        out[position] = x[source]
    return out


def padding(x: np.ndarray, mode: int, value: object, start: Sequence[int], end: Sequence[int]) -> np.ndarray:
    """DML_PADDING(1): numpy.pad with the page's mode; ``value`` already in x's type."""
    widths = list(zip(start, end, strict=True))
    if PAD_MODES[mode] == "constant":
        return np.pad(x, widths, mode="constant", constant_values=np.asarray(value, dtype=x.dtype))
    padded: np.ndarray = np.pad(x, widths, mode=PAD_MODES[mode])  # type: ignore[call-overload]
    return padded


def tile(x: np.ndarray, repeats: Sequence[int]) -> np.ndarray:
    """DML_TILE: Output[o] = Input[o mod InputTensor.Sizes]."""
    out_sizes = tuple(n * r for n, r in zip(x.shape, repeats, strict=True))
    out = np.empty(out_sizes, dtype=x.dtype)
    for position in itertools.product(*(range(n) for n in out_sizes)):
        out[position] = x[tuple(p % n for p, n in zip(position, x.shape, strict=True))]
    return out


def space_to_depth(x: np.ndarray, block: int, depth_column_row: bool) -> np.ndarray:
    """DML_SPACE_TO_DEPTH1: out[n, depth(bh, bw, c), h, w] = in[n, c, h*B + bh, w*B + bw]."""
    n, c, h, w = x.shape
    out = np.empty((n, c * block * block, h // block, w // block), dtype=x.dtype)
    for b, ch, bh, bw, i, j in itertools.product(
        range(n), range(c), range(block), range(block), range(h // block), range(w // block)
    ):
        depth = (bh * block + bw) * c + ch if depth_column_row else ch * block * block + bh * block + bw
        out[b, depth, i, j] = x[b, ch, i * block + bh, j * block + bw]
    return out


def depth_to_space(x: np.ndarray, block: int, depth_column_row: bool) -> np.ndarray:
    """DML_DEPTH_TO_SPACE1: out[n, c, h*B + bh, w*B + bw] = in[n, depth(bh, bw, c), h, w]."""
    n, c, h, w = x.shape
    cout = c // (block * block)
    out = np.empty((n, cout, h * block, w * block), dtype=x.dtype)
    for b, ch, bh, bw, i, j in itertools.product(range(n), range(cout), range(block), range(block), range(h), range(w)):
        depth = (bh * block + bw) * cout + ch if depth_column_row else ch * block * block + bh * block + bw
        out[b, ch, i * block + bh, j * block + bw] = x[b, depth, i, j]
    return out


def reverse_subsequences(x: np.ndarray, lengths: np.ndarray, axis: int) -> np.ndarray:
    """DML_REVERSE_SUBSEQUENCES: along ``axis``, the first L elements of each sequence reversed, the rest copied."""
    out = x.copy()
    for position in itertools.product(*(range(n) for n in x.shape)):
        i = position[axis]
        head = list(position)
        head[axis] = 0
        length = int(lengths[tuple(head)])
        if i < length:
            source = list(position)
            source[axis] = length - 1 - i
            out[position] = x[tuple(source)]
    return out
