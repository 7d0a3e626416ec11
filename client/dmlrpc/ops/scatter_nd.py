"""DML_SCATTER_ND as a NumPy-style builder (ONNX ScatterND)."""

from __future__ import annotations

import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.ops._registry import operator
from dmlrpc.ops.base import Call
from dmlrpc.ops.scatter_elements import _scatter_operands
from dmlrpc.v1 import operators_pb2

__all__ = ["scatter_nd"]


@operator(sends=("scatter_nd",))
def scatter_nd(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    *,
    input_dimension_count: int | None = None,
    indices_dimension_count: int | None = None,
) -> Call:
    """DML_SCATTER_ND_OPERATOR_DESC: a copy of ``input`` with ``updates`` written at the index tuples in the
    last dimension of ``indices`` (as ONNX ScatterND); ``updates`` is cast to ``input``'s dtype.

    The arrays may have different ranks, as in ONNX: they are padded with leading 1s to one dimension count
    and the dimension counts default to the arrays' own ranks. Pass the counts explicitly to send arrays that
    already share a dimension count as they are. The result has ``input``'s shape.
    """
    where = "scatter_nd"
    data, index_array, update_array, shape = _scatter_operands(where, input, indices, updates)
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
    return Call(operators_pb2.OperatorDesc(scatter_nd=desc), (data, index_array, update_array), (shape,))
