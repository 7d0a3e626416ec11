"""NumPy references of DirectML's gather family, written from the DirectML pages, independent of the server code."""

from __future__ import annotations

import numpy as np


def _index(value: int, size: int, signed: bool) -> int | None:
    """An index value made non-negative (signed types count negatives from the end), or None if out of range."""
    if signed and -size <= value < 0:
        return value + size
    return value if 0 <= value < size else None


def right_aligned(shape: tuple[int, ...], rank: int) -> tuple[int, ...] | None:
    """``shape`` as ``rank`` sizes: leading 1s added or cropped; None when a cropped size is not 1."""
    if len(shape) <= rank:
        return (1,) * (rank - len(shape)) + shape
    excess = len(shape) - rank
    return shape[excess:] if all(size == 1 for size in shape[:excess]) else None


def gather_sizes(
    input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...], axis: int, index_dimensions: int
) -> tuple[int, ...] | None:
    """DML_GATHER's output sizes: input sizes before Axis ++ the last IndexDimensions indices sizes ++ input sizes
    after Axis, right-aligned to the dimension count (None when that needs more dimensions than there are)."""
    rank = len(input_sizes)
    meaningful = indices_sizes[rank - index_dimensions :] if index_dimensions else ()
    return right_aligned(input_sizes[:axis] + meaningful + input_sizes[axis + 1 :], rank)


def gather(x: np.ndarray, indices: np.ndarray, axis: int, index_dimensions: int) -> np.ndarray | str:
    """DML_GATHER: output[before, j..., after] = input[before, indices[j...], after]; "out of range" if any index is."""
    rank = x.ndim
    selectors = indices.reshape(indices.shape[rank - index_dimensions :] if index_dimensions else ())
    signed = indices.dtype.kind == "i"
    logical = x.shape[:axis] + selectors.shape + x.shape[axis + 1 :]
    out = np.empty(logical, dtype=x.dtype)
    for position in np.ndindex(*logical):
        chosen = _index(int(selectors[position[axis : axis + index_dimensions]]), x.shape[axis], signed)
        if chosen is None:
            return "out of range"
        out[position] = x[position[:axis] + (chosen,) + position[axis + index_dimensions :]]
    sizes = gather_sizes(x.shape, indices.shape, axis, index_dimensions)
    assert sizes is not None
    return out.reshape(sizes)


def gather_elements(x: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray | str:
    """DML_GATHER_ELEMENTS: output[p] = input[p with coordinate Axis replaced by indices[p]]."""
    signed = indices.dtype.kind == "i"
    out = np.empty(indices.shape, dtype=x.dtype)
    for position in np.ndindex(*indices.shape):
        chosen = _index(int(indices[position]), x.shape[axis], signed)
        if chosen is None:
            return "out of range"
        source = list(position)
        source[axis] = chosen
        out[position] = x[tuple(source)]
    return out


def gather_nd_sizes(
    input_sizes: tuple[int, ...],
    indices_sizes: tuple[int, ...],
    input_count: int,
    indices_count: int,
    batch_count: int = 0,
) -> tuple[int, ...] | None:
    """The output sizes of DML_GATHER_ND(1), as its examples compute them: the meaningful indices sizes without the
    tuple dimension ++ the meaningful input sizes after the batch and indexed ones, right-aligned."""
    rank = len(input_sizes)
    data = input_sizes[rank - input_count :]
    tuples = indices_sizes[rank - indices_count :]
    return right_aligned(tuples[:-1] + data[batch_count + tuples[-1] :], rank)


def gather_nd(
    x: np.ndarray, indices: np.ndarray, input_count: int, indices_count: int, batch_count: int = 0
) -> np.ndarray | str:
    """DML_GATHER_ND1 (GATHER_ND: no batch dimensions): output[b, j...] = input[b, indices[b, j..., :], ...]."""
    rank = x.ndim
    data = x.reshape(x.shape[rank - input_count :])
    tuples = indices.reshape(indices.shape[rank - indices_count :])
    size = int(indices.shape[-1])
    signed = indices.dtype.kind == "i"
    logical = tuples.shape[:-1] + data.shape[batch_count + size :]
    out = np.empty(logical, dtype=x.dtype)
    for position in np.ndindex(*tuples.shape[:-1]):
        batch = position[:batch_count]
        chosen = [_index(int(tuples[position][j]), data.shape[batch_count + j], signed) for j in range(size)]
        if any(c is None for c in chosen):
            return "out of range"
        out[position] = data[batch + tuple(c for c in chosen if c is not None)]
    sizes = gather_nd_sizes(x.shape, indices.shape, input_count, indices_count, batch_count)
    assert sizes is not None
    return out.reshape(sizes)
