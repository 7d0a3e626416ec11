"""DML_SCATTER_ELEMENTS as a NumPy-style builder."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.ops._registry import operator
from dmlrpc.ops.base import Call, _array, _axis, _input
from dmlrpc.v1 import operators_pb2

__all__ = ["scatter_elements"]


def _scatter_operands(
    where: str, input: npt.ArrayLike, indices: npt.ArrayLike, updates: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """A scatter's input, indices and updates (``scatter_elements``'s and ``scatter_nd``'s), a 0-d one as one
    element, and the input's own shape (the result's)."""
    data = _input(input, "input", where, where)
    index_array, update_array = _array(indices, "indices", where), _array(updates, "updates", where)
    shape = data.shape
    data, index_array, update_array = (a.reshape(1) if a.ndim == 0 else a for a in (data, index_array, update_array))
    return data, index_array, update_array, shape


@operator(sends=("scatter_elements",))
def scatter_elements(
    input: npt.ArrayLike,
    indices: npt.ArrayLike,
    updates: npt.ArrayLike,
    axis: int = 0,
) -> Call:
    """DML_SCATTER_ELEMENTS_OPERATOR_DESC: a copy of ``input`` with ``updates`` written at ``indices`` along
    ``axis`` (as ``numpy.put_along_axis``). All three arrays have the same number of dimensions; ``updates`` is
    cast to ``input``'s dtype, as NumPy does."""
    where = "scatter_elements"
    data, index_array, update_array, shape = _scatter_operands(where, input, indices, updates)
    desc = operators_pb2.ScatterElementsOperatorDesc(
        input_tensor=tensor_desc(data),
        indices_tensor=tensor_desc(index_array),
        updates_tensor=tensor_desc(update_array.astype(data.dtype, copy=False)),
        output_tensor=tensor_desc(data),
        axis=_axis(axis, data.ndim, where),
    )
    return Call(operators_pb2.OperatorDesc(scatter_elements=desc), (data, index_array, update_array), (shape,))
