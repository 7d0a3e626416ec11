"""DML_GATHER as a NumPy-style builder (np.take)."""

from __future__ import annotations

import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops.base import Call, _array, _axis, _fits, _input, _padded
from dmlrpc.v1 import operators_pb2

__all__ = ["gather"]


def gather(input: npt.ArrayLike, indices: npt.ArrayLike, axis: int = 0) -> Call:
    """DML_GATHER_OPERATOR_DESC: the elements of ``input`` at ``indices`` along ``axis``, as
    ``np.take(input, indices, axis)``: the result's shape is ``input.shape[:axis] + indices.shape +
    input.shape[axis + 1:]``.

    DirectML's rules: input, indices and output have one dimension count (1 to 8), the output is typed as the
    input (any DirectML type: FLOAT64 and 64-bit integers from feature level 4.1), the indices are INT32, INT64,
    UINT32 or UINT64 and IndexDimensions of their last dimensions are meaningful; an index outside
    ``[-input.shape[axis], input.shape[axis])`` is refused (negative ones count from the end, as NumPy). The
    tensors are sent padded with leading 1s to the dimension count the result needs, and the result comes back in
    NumPy's shape.

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, an axis out of range, indices that are not integers,
            or a result of more than 8 dimensions.
    """
    return _gather(input, indices, axis, where="gather", padded=True)


def _gather(input: npt.ArrayLike, indices: npt.ArrayLike, axis: int, *, where: str, padded: bool) -> Call:
    """GATHER's desc; ``padded``: the tensors are padded with leading 1s to the dimension count the result needs
    (eager calls), else sent as they are (graph edges): then ``input`` and ``indices`` have one dimension count,
    the indices' leading 1s are not meaningful (IndexDimensions counts the rest, at least 1) and the output has
    that dimension count too."""
    data = _input(input, "input", "gather", where)
    index_array = _array(indices, "indices", where)
    if data.ndim == 0:
        raise ArgumentValueError("input", f"{where}: input is 0-d; it needs at least 1 dimension to gather along")
    axis = _axis(axis, data.ndim, where)
    if index_array.dtype.kind not in "iu":
        raise ArgumentTypeError(
            "indices",
            f"{where}: indices have dtype {index_array.dtype}; DirectML's gather takes integer indices",
            allowed=("int32", "int64", "uint32", "uint64"),
        )
    if padded:
        index_dimensions = index_array.ndim
        rank = max(data.ndim, index_array.ndim, data.ndim + index_array.ndim - 1, 1)
        _fits(rank, "indices", where)
    else:
        rank = data.ndim
        if index_array.ndim != rank:
            raise ArgumentValueError(
                "indices",
                f"{where}: indices have {index_array.ndim} dimensions and input {rank}; DirectML's gather takes one "
                "dimension count (pad the indices with leading 1s)",
            )
        leading = next((i for i, size in enumerate(index_array.shape) if size != 1), rank - 1)
        index_dimensions = rank - min(leading, rank - 1)
    shape = data.shape[:axis] + index_array.shape[index_array.ndim - index_dimensions :] + data.shape[axis + 1 :]
    excess = len(shape) - rank
    if any(size != 1 for size in shape[: max(excess, 0)]):
        raise ArgumentValueError(
            "indices",
            f"{where}: the result {shape} has more than the tensors' {rank} dimensions (pad input with leading 1s)",
        )
    lead = rank - data.ndim
    data, index_array = _padded(data, rank), _padded(index_array, rank)
    desc = operators_pb2.GatherOperatorDesc(
        input_tensor=tensor_desc(data),
        indices_tensor=tensor_desc(index_array),
        output_tensor=tensor_desc((data.dtype, (1,) * max(-excess, 0) + shape[max(excess, 0) :])),
        axis=axis + lead,
        index_dimensions=index_dimensions,
    )
    # Bool travels as UINT8 and comes back bool, as NumPy moves it.
    shapes = (shape,) if padded else (None,)
    return Call(operators_pb2.OperatorDesc(gather=desc), (data, index_array), shapes, (data.dtype,))
