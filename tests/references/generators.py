"""NumPy references of the generator operators (ONE_HOT, FILL_VALUE_*, DIAGONAL_MATRIX(1), NONZERO_COORDINATES),
written element by element from the DirectML pages."""

from __future__ import annotations

import itertools

import numpy as np


def one_hot(indices: np.ndarray, values: np.ndarray, axis: int, depth: int) -> np.ndarray:
    """DML_ONE_HOT: along ``axis``, OnValue where the position equals the sequence's index, else OffValue.

    OffValue/OnValue are elements 0 and 1 of ``values`` in row-major order; negative signed indices count from the
    end; an index out of range after that leaves the whole sequence OffValue.
    """
    flat = values.reshape(-1)
    off, on = flat[0], flat[1]
    shape = list(indices.shape)
    shape[axis] = depth
    out = np.full(shape, off, dtype=values.dtype)
    for position in itertools.product(*(range(s) for s in indices.shape)):
        k = int(indices[position])
        if indices.dtype.kind == "i" and k < 0:
            k += depth
        if 0 <= k < depth:
            target = list(position)
            target[axis] = k
            out[tuple(target)] = on
    return out


def fill_value_sequence(start: int | float, delta: int | float, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """DML_FILL_VALUE_SEQUENCE: element i (row-major) = start + i * delta; integers wrap modulo 2^bits, floats
    are FLOAT32(i) * delta + start rounded to FLOAT32 at each step (then to the output type)."""
    count = int(np.prod(shape))
    kind = np.dtype(dtype).kind
    if kind == "f":
        f32 = np.float32
        items = [f32(f32(i) * f32(delta)) + f32(start) for i in range(count)]
        return np.array(items, np.float32).astype(dtype).reshape(shape)
    bits = 8 * np.dtype(dtype).itemsize
    modular = [(int(start) + i * int(delta)) % (1 << bits) for i in range(count)]
    if kind == "i":
        modular = [v - (1 << bits) if v >= 1 << (bits - 1) else v for v in modular]
    return np.array(modular, dtype).reshape(shape)


def diagonal_matrix(shape: tuple[int, ...], offset: int, value: float, dtype: type) -> np.ndarray:
    """DML_DIAGONAL_MATRIX: out[..., y, x] = value if x == y + offset else 0 (value truncated for integers)."""
    out: np.ndarray = np.zeros(shape, dtype)
    fill = np.float32(value).astype(dtype) if np.dtype(dtype).kind == "f" else int(value)
    for position in itertools.product(*(range(s) for s in shape)):
        y, x = position[-2:]
        if x == y + offset:
            out[position] = fill
    return out


def diagonal_matrix1(
    shape: tuple[int, ...], begin: int, end: int, value: int | float, dtype: type, x: np.ndarray | None = None
) -> np.ndarray:
    """DML_DIAGONAL_MATRIX1, the page's pseudocode: topX = x - y; useValue = (End >= Begin) XOR (topX >= Begin)
    XOR (topX < End); out = Value if useValue else (input or 0)."""
    out: np.ndarray = np.zeros(shape, dtype) if x is None else np.array(x, dtype)
    for position in itertools.product(*(range(s) for s in shape)):
        row, column = position[-2:]
        top_x = column - row
        if (end >= begin) ^ (top_x >= begin) ^ (top_x < end):
            out[position] = value
    return out


def nonzero_coordinates(x: np.ndarray, columns: int) -> tuple[int, np.ndarray]:
    """DML_NONZERO_COORDINATES: the count of non-zero elements (+-0.0 are zero) and, in ascending element order,
    the last ``columns`` coordinates of each, one row per element of ``x``; rows past the count are 0 here."""
    rows = np.zeros((x.size, columns), np.uint32)
    count = 0
    for position in itertools.product(*(range(s) for s in x.shape)):
        if x[position] != 0:
            rows[count] = position[len(position) - columns :]
            count += 1
    return count, rows
