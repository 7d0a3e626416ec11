"""Hypothesis strategies: data types from the support tables, shapes of 1-8 dimensions, strided layouts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

#: FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, UINT16, UINT8 (every level from 2.1).
BASE_DTYPES = [np.float32, np.float16, np.int32, np.int16, np.int8, np.uint32, np.uint16, np.uint8]
#: TOP_K(1) from feature level 5.0.
TOP_K_DTYPES = [*BASE_DTYPES, np.int64, np.uint64]
#: SCATTER_ELEMENTS / SCATTER_ND from feature level 4.1.
SCATTER_DTYPES = [*BASE_DTYPES, np.float64, np.int64, np.uint64]
INDEX_DTYPES = [np.int32, np.int64, np.uint32, np.uint64]

MAX_ELEMENTS = 256


@st.composite
def shapes(draw: st.DrawFn, min_dims: int = 1, max_dims: int = 8, max_side: int = 6) -> tuple[int, ...]:
    """Shapes of 1-8 dimensions with at most MAX_ELEMENTS elements."""
    rank = draw(st.integers(min_dims, max_dims))
    sizes: list[int] = []
    budget = MAX_ELEMENTS
    for _ in range(rank):
        side = draw(st.integers(1, max(1, min(max_side, budget))))
        sizes.append(side)
        budget //= side
    return tuple(sizes)


def arrays(dtype: type, shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """Finite values (NaN ordering is not defined by DirectML); a small value range so ties happen."""
    if np.dtype(dtype).kind == "f":
        width = cast(Literal[16, 32, 64], np.dtype(dtype).itemsize * 8)
        elements = st.floats(-8, 8, width=width, allow_nan=False).map(lambda v: round(v, 1))
        return hnp.arrays(dtype, shape, elements=elements)
    info = np.iinfo(dtype)
    return st.one_of(
        hnp.arrays(dtype, shape, elements=st.integers(max(info.min, -4), min(info.max, 4))),
        hnp.arrays(dtype, shape),
    )


@dataclass(frozen=True)
class Layout:
    """Element strides for a tensor (None = packed) and the dimensions it broadcasts (stride 0)."""

    strides: tuple[int, ...] | None
    broadcast: tuple[int, ...] = ()


@st.composite
def layouts(draw: st.DrawFn, shape: tuple[int, ...], allow_broadcast: bool) -> Layout:
    """Packed, padded and permuted strides, and for inputs stride-0 broadcast dimensions."""
    kind = draw(st.sampled_from(["packed", "strided", "broadcast"] if allow_broadcast else ["packed", "strided"]))
    if kind == "packed":
        return Layout(None)
    order = draw(st.permutations(range(len(shape))))
    strides = [0] * len(shape)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d] + draw(st.integers(0, 2))
    broadcast: tuple[int, ...] = ()
    if kind == "broadcast":
        broadcast = tuple(d for d in range(len(shape)) if draw(st.booleans()))
        for d in broadcast:
            strides[d] = 0
    return Layout(tuple(strides), broadcast)


def broadcast_values(values: np.ndarray, layout: Layout) -> np.ndarray:
    """The logical tensor a broadcast layout holds: ``values`` made constant along broadcast dimensions."""
    if not layout.broadcast:
        return values
    index = tuple(slice(0, 1) if d in layout.broadcast else slice(None) for d in range(values.ndim))
    return np.broadcast_to(values[index], values.shape)
