"""Typed builders of operator descs from NumPy arrays, shared by Client and AsyncClient."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2, tensor_pb2

__all__ = ["Call", "Direction", "scatter_elements", "scatter_nd", "top_k"]

#: Top-k direction: "decreasing"/"largest", "increasing"/"smallest", or a DML_AXIS_DIRECTION value.
Direction = Literal["decreasing", "increasing", "largest", "smallest"] | int

_DIRECTIONS = {
    "decreasing": tensor_pb2.AXIS_DIRECTION_DECREASING,
    "largest": tensor_pb2.AXIS_DIRECTION_DECREASING,
    "increasing": tensor_pb2.AXIS_DIRECTION_INCREASING,
    "smallest": tensor_pb2.AXIS_DIRECTION_INCREASING,
}


@dataclass(frozen=True)
class Call:
    """An operator desc with its input arrays in binding order (``None`` for an absent optional input)."""

    operator_desc: operators_pb2.OperatorDesc
    inputs: tuple[np.ndarray | None, ...]


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for {rank} dimensions")
    return axis % rank


def _as_tensor(array: npt.ArrayLike) -> np.ndarray:
    data = np.asarray(array)
    return data.reshape(1) if data.ndim == 0 else data


def top_k(
    input: npt.ArrayLike,
    k: int,
    axis: int = -1,
    *,
    direction: Direction = "decreasing",
    index_dtype: npt.DTypeLike = np.uint32,
) -> Call:
    """DML_TOP_K1_OPERATOR_DESC: the k largest (decreasing) or smallest (increasing) elements along ``axis``.

    Args:
        input: the array to select from (1 to 8 dimensions).
        k: how many elements to select, 1 <= k <= input.shape[axis].
        axis: the dimension to select along; negative counts from the end.
        direction: "decreasing" (largest first) or "increasing" (smallest first), or an AxisDirection value.
        index_dtype: np.uint32 or np.uint64 for the returned indices.
    """
    data = _as_tensor(input)
    axis = _axis(axis, data.ndim)
    out_shape = list(data.shape)
    out_shape[axis] = k
    resolved = _DIRECTIONS[direction] if isinstance(direction, str) else direction
    desc = operators_pb2.TopK1OperatorDesc(
        input_tensor=tensor_desc(data),
        output_value_tensor=tensor_desc((data.dtype, out_shape)),
        output_index_tensor=tensor_desc((index_dtype, out_shape)),
        axis=axis,
        k=k,
        axis_direction=resolved,  # type: ignore[arg-type]
    )
    return Call(operators_pb2.OperatorDesc(top_k1=desc), (data,))


def scatter_elements(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    axis: int = 0,
) -> Call:
    """DML_SCATTER_ELEMENTS_OPERATOR_DESC: a copy of ``input`` with ``updates`` written at ``indices`` along
    ``axis`` (as ``numpy.put_along_axis``). All three arrays have the same number of dimensions."""
    data, index_array, update_array = _as_tensor(input), _as_tensor(indices), _as_tensor(updates)
    desc = operators_pb2.ScatterElementsOperatorDesc(
        input_tensor=tensor_desc(data),
        indices_tensor=tensor_desc(index_array),
        updates_tensor=tensor_desc(update_array.astype(data.dtype, copy=False)),
        output_tensor=tensor_desc(data),
        axis=_axis(axis, data.ndim),
    )
    return Call(operators_pb2.OperatorDesc(scatter_elements=desc), (data, index_array, update_array))


def scatter_nd(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    *,
    input_dimension_count: int | None = None,
    indices_dimension_count: int | None = None,
) -> Call:
    """DML_SCATTER_ND_OPERATOR_DESC: a copy of ``input`` with ``updates`` written at the index tuples in the
    last dimension of ``indices`` (as ONNX ScatterND).

    The arrays may have different ranks, as in ONNX: they are padded with leading 1s to one dimension count
    and the dimension counts default to the arrays' own ranks. Pass the counts explicitly to send arrays that
    already share a dimension count as they are.
    """
    data, index_array, update_array = _as_tensor(input), _as_tensor(indices), _as_tensor(updates)
    rank = max(data.ndim, index_array.ndim, update_array.ndim)
    input_count = input_dimension_count if input_dimension_count is not None else data.ndim
    indices_count = indices_dimension_count if indices_dimension_count is not None else index_array.ndim
    data, index_array, update_array = (
        a.reshape((1,) * (rank - a.ndim) + a.shape) for a in (data, index_array, update_array)
    )
    desc = operators_pb2.ScatterNdOperatorDesc(
        input_tensor=tensor_desc(data),
        indices_tensor=tensor_desc(index_array),
        updates_tensor=tensor_desc((data.dtype, update_array.shape)),
        output_tensor=tensor_desc(data),
        input_dimension_count=input_count,
        indices_dimension_count=indices_count,
    )
    return Call(operators_pb2.OperatorDesc(scatter_nd=desc), (data, index_array, update_array))
