"""DML_TOP_K1 and DML_TOP_K as one NumPy-style builder."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import PAIR, operator
from dmlrpc.ops.base import Call, _axis, _input, _version
from dmlrpc.v1 import operators_pb2, tensor_pb2

__all__ = ["Direction", "top_k"]


#: Top-k direction: "decreasing"/"largest", "increasing"/"smallest", or a DML_AXIS_DIRECTION value.
Direction = Literal["decreasing", "increasing", "largest", "smallest"] | int


_DIRECTIONS = {
    "decreasing": tensor_pb2.AXIS_DIRECTION_DECREASING,
    "largest": tensor_pb2.AXIS_DIRECTION_DECREASING,
    "increasing": tensor_pb2.AXIS_DIRECTION_INCREASING,
    "smallest": tensor_pb2.AXIS_DIRECTION_INCREASING,
}


@operator(sends=("top_k", "top_k1"), result=PAIR)
def top_k(
    input: npt.ArrayLike,
    k: int,
    axis: int = -1,
    *,
    direction: Direction = "decreasing",
    index_dtype: npt.DTypeLike = np.uint32,
    version: int | None = None,
) -> Call:
    """DML_TOP_K1_OPERATOR_DESC (DML_TOP_K_OPERATOR_DESC with ``version=0``): the k largest (decreasing) or
    smallest (increasing) elements along ``axis``.

    Args:
        input: the array to select from (1 to 8 dimensions).
        k: how many elements to select, 1 <= k <= input.shape[axis] (the server checks the upper bound).
        axis: the dimension to select along; negative counts from the end.
        direction: "decreasing" (largest first) or "increasing" (smallest first), or an AxisDirection value.
        index_dtype: np.uint32 or np.uint64 for the returned indices.
        version: 1 (the default) for TOP_K1, 0 for the older TOP_K, which has no AxisDirection: it selects the
            largest elements only.

    Raises:
        ArgumentValueError, ArgumentTypeError: an argument the SDK cannot send (named, with its allowed values).
    """
    where = "top_k"
    data = _input(input, "input", "top_k1", where)
    if data.ndim == 0:
        # NumPy has no axis in a 0-d array to select along either (np.sort raises AxisError).
        raise ArgumentValueError("input", f"{where}: input is 0-d; it needs at least 1 dimension to select along")
    axis = _axis(axis, data.ndim, where)
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ArgumentTypeError("k", f"{where}: k must be an int; got {type(k).__name__}")
    if k < 1:
        raise ArgumentValueError("k", f"{where}: k = {k} must be at least 1")
    out_shape = list(data.shape)
    out_shape[axis] = int(k)
    chosen = _version(version, where, (0, 1))
    order = _direction(direction, where)
    common: dict[str, Any] = {
        "input_tensor": tensor_desc(data),
        "output_value_tensor": tensor_desc((data.dtype, out_shape)),
        "output_index_tensor": tensor_desc((_index_dtype(index_dtype, where), out_shape)),
        "axis": axis,
        "k": int(k),
    }
    if chosen == 0:
        if order != tensor_pb2.AXIS_DIRECTION_DECREASING:
            raise ArgumentValueError(
                "direction",
                f"{where}: DML_TOP_K (version 0) selects the largest elements only; direction {direction!r} needs "
                "TOP_K1 (version 1)",
                allowed=("'decreasing'", "'largest'"),
            )
        return Call(operators_pb2.OperatorDesc(top_k=operators_pb2.TopKOperatorDesc(**common)), (data,))
    desc = operators_pb2.TopK1OperatorDesc(**common, axis_direction=order)  # type: ignore[arg-type]
    return Call(operators_pb2.OperatorDesc(top_k1=desc), (data,))


def _direction(direction: object, where: str) -> int:
    if isinstance(direction, str):
        if direction not in _DIRECTIONS:
            raise ArgumentValueError(
                "direction",
                f"{where}: direction {direction!r} is not a top-k direction",
                allowed=(*(repr(name) for name in _DIRECTIONS), "an AxisDirection int"),
            )
        return _DIRECTIONS[direction]
    if isinstance(direction, bool) or not isinstance(direction, int | np.integer):
        raise ArgumentTypeError(
            "direction", f"{where}: direction must be a str or an AxisDirection int; got {type(direction).__name__}"
        )
    # An int goes into the desc as it is (the way to send any DML_AXIS_DIRECTION): the server names bad ones.
    return int(direction)


def _index_dtype(index_dtype: npt.DTypeLike, where: str) -> np.dtype[Any]:
    try:
        dtype = np.dtype(index_dtype)
    except TypeError:
        raise ArgumentTypeError(
            "index_dtype", f"{where}: index_dtype {index_dtype!r} is not a NumPy dtype", allowed=("uint32", "uint64")
        ) from None
    # Other DirectML types go into the desc as asked; the server refuses them, naming UINT32 and UINT64.
    return dtype
