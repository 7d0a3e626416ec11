"""NumPy references of DirectML's semantics, written from the DirectML pages, independent of the server code."""

from __future__ import annotations

import itertools

import numpy as np


def top_k(x: np.ndarray, axis: int, k: int, decreasing: bool) -> tuple[np.ndarray, np.ndarray]:
    """DML_TOP_K1: per sequence along ``axis``, the k largest (decreasing) or smallest values, sorted in that
    direction, ties ordered by ascending index in both directions; indices relative to the sequence."""
    moved = np.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    values = np.empty(moved.shape[:-1] + (k,), dtype=x.dtype)
    indices = np.empty(moved.shape[:-1] + (k,), dtype=np.int64)
    for position in itertools.product(*(range(s) for s in moved.shape[:-1])):
        sequence = moved[position]
        # Selection by explicit comparison keys (no sign tricks, so unsigned 64-bit values stay exact).
        keys = [
            (-int(v) if decreasing else int(v), i)
            if sequence.dtype.kind in "iu"
            else ((-float(v) if decreasing else float(v)), i)
            for i, v in enumerate(sequence)
        ]
        chosen = [i for _, i in sorted(keys)[:k]]
        assert len(chosen) == min(k, n)
        values[position] = sequence[chosen]
        indices[position] = chosen
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


def normalise(index: int, size: int, signed: bool) -> int | None:
    """An index value made non-negative, or None when DirectML's rules put it out of range."""
    if signed and -size <= index < 0:
        return index + size
    return index if 0 <= index < size else None


def scatter_elements(x: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: int) -> np.ndarray | str:
    """DML_SCATTER_ELEMENTS: output = input; output[..., indices[p] at axis, ...] = updates[p].

    Returns "out of range" or "overlap" where the server must refuse the request (a range error anywhere is
    reported before any overlap).
    """
    signed = indices.dtype.kind == "i"
    if any(normalise(int(v), x.shape[axis], signed) is None for v in indices.reshape(-1)):
        return "out of range"
    out = x.copy()
    written: set[tuple[int, ...]] = set()
    for position in np.ndindex(*indices.shape):
        target = list(position)
        index = normalise(int(indices[position]), x.shape[axis], signed)
        if index is None:
            return "out of range"
        target[axis] = index
        if tuple(target) in written:
            return "overlap"
        written.add(tuple(target))
        out[tuple(target)] = updates[position]
    return out


def scatter_nd(
    x: np.ndarray, indices: np.ndarray, updates: np.ndarray, input_count: int, indices_count: int
) -> np.ndarray | str:
    """DML_SCATTER_ND on tensors of one dimension count D with meaningful trailing dimension counts.

    Returns "out of range" or "overlap" where the server must refuse the request (a range error anywhere is
    reported before any overlap).
    """
    rank = x.ndim
    data = x.copy().reshape(x.shape[rank - input_count :])
    tuples = indices.reshape(indices.shape[rank - indices_count :])
    tuple_size = tuples.shape[-1]
    values = updates.reshape(tuples.shape[:-1] + data.shape[tuple_size:])
    signed = indices.dtype.kind == "i"
    for position in np.ndindex(*tuples.shape[:-1]):
        if any(normalise(int(tuples[position][j]), data.shape[j], signed) is None for j in range(tuple_size)):
            return "out of range"
    written: set[tuple[int, ...]] = set()
    for position in np.ndindex(*tuples.shape[:-1]):
        target = []
        for j in range(tuple_size):
            index = normalise(int(tuples[position][j]), data.shape[j], signed)
            if index is None:
                return "out of range"
            target.append(index)
        if tuple(target) in written:
            return "overlap"
        written.add(tuple(target))
        data[tuple(target)] = values[position]
    return data.reshape(x.shape)
