"""DML_GATHER, GATHER_ELEMENTS and GATHER_ND(1) as NumPy-style builders (np.take, np.take_along_axis, ONNX
GatherND)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import GraphFace, operator
from dmlrpc.ops.base import Call, _array, _axis, _count, _fits, _input, _padded, _version, _wrap
from dmlrpc.v1 import operators_pb2

__all__ = ["gather", "gather_elements", "gather_nd"]


@operator(
    sends=("gather",),
    graph=GraphFace(trace=lambda **arguments: _gather(**arguments, where="Graph.gather", padded=False)),
)
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


@operator(sends=("gather_elements",))
def gather_elements(input: npt.ArrayLike, indices: npt.ArrayLike, axis: int = 0) -> Call:
    """DML_GATHER_ELEMENTS_OPERATOR_DESC: ``output[p] = input[p with its axis coordinate replaced by indices[p]]``,
    as ``np.take_along_axis(input, indices, axis)``; the result has ``indices``'s shape.

    DirectML's rules: input, indices and output have one dimension count (1 to 8) and the indices the input's sizes
    in every dimension but ``axis`` (no broadcasting); the output is typed as the input (any DirectML type: FLOAT64
    and 64-bit integers from feature level 4.1), the indices INT32, INT64, UINT32 or UINT64; an index outside
    ``[-input.shape[axis], input.shape[axis])`` is refused (negative ones count from the end).

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input, an axis out of range, indices that are not integers or
            whose shape differs from the input's other than along ``axis`` (both shapes quoted).
    """
    where = "gather_elements"
    data = _input(input, "input", where, where)
    index_array = _indices(indices, where)
    if data.ndim == 0:
        raise ArgumentValueError("input", f"{where}: input is 0-d; it needs at least 1 dimension to gather along")
    _fits(data.ndim, "input", where)
    axis = _axis(axis, data.ndim, where)
    if index_array.ndim != data.ndim or any(
        d != axis and size != data.shape[d] for d, size in enumerate(index_array.shape)
    ):
        raise ArgumentValueError(
            "indices",
            f"{where}: indices have shape {index_array.shape} and input {data.shape}; DirectML takes indices of the "
            f"input's dimension count and sizes except along axis {axis} (they do not broadcast)",
        )
    desc = operators_pb2.GatherElementsOperatorDesc(
        input_tensor=tensor_desc(data),
        indices_tensor=tensor_desc(index_array),
        output_tensor=tensor_desc((data.dtype, index_array.shape)),
        axis=axis,
    )
    return Call(operators_pb2.OperatorDesc(gather_elements=desc), (data, index_array), (), (data.dtype,))


@operator(
    sends=("gather_nd", "gather_nd1"),
    graph=GraphFace(
        trace=lambda input, indices, batch_dimension_count, version: _gather_nd(
            input, indices, batch_dimension_count, version, where="Graph.gather_nd", padded=False
        )
    ),
)
def gather_nd(
    input: npt.ArrayLike, indices: npt.ArrayLike, batch_dimension_count: int = 0, *, version: int | None = None
) -> Call:
    """DML_GATHER_ND_OPERATOR_DESC, or DML_GATHER_ND1_OPERATOR_DESC with batch dimensions or ``version=1``: the
    slices of ``input`` at the index tuples in the last dimension of ``indices``, as ONNX GatherND with
    ``batch_dims=batch_dimension_count``: the result's shape is ``indices.shape[:-1] +
    input.shape[batch_dimension_count + indices.shape[-1]:]``.

    DirectML's rules: input, indices and output have one dimension count (1 to 8; the arrays are sent padded with
    leading 1s, InputDimensionCount and IndicesDimensionCount their own ranks); the index tuples have at most
    InputDimensionCount - BatchDimensionCount elements; the first BatchDimensionCount sizes of the input and the
    indices agree, and the indices have one more dimension (the tuples'); the output is typed as the input (any
    DirectML type), the indices INT32, INT64, UINT32 or UINT64, each index within its dimension (negative ones count
    from the end).

    Raises:
        ArgumentValueError, ArgumentTypeError: a 0-d input or indices, indices that are not integers, tuples longer
            than the input has dimensions, batch sizes that differ (both shapes quoted), batch dimensions with
            ``version=0``, or a result of more than 8 dimensions.
    """
    return _gather_nd(input, indices, batch_dimension_count, version, where="gather_nd", padded=True)


def _indices(indices: npt.ArrayLike, where: str) -> np.ndarray:
    index_array = _array(indices, "indices", where)
    if index_array.dtype.kind not in "iu":
        raise ArgumentTypeError(
            "indices",
            f"{where}: indices have dtype {index_array.dtype}; DirectML's gathers take integer indices",
            allowed=("int32", "int64", "uint32", "uint64"),
        )
    return index_array


def _gather_nd(
    input: npt.ArrayLike, indices: npt.ArrayLike, batch: object, version: object, *, where: str, padded: bool
) -> Call:
    """GATHER_ND(1)'s desc; ``padded``: the arrays are padded with leading 1s to the dimension count the result
    needs (eager calls), else sent as they are (graph edges: one dimension count, every dimension meaningful)."""
    data = _input(input, "input", "gather_nd", where)
    index_array = _indices(indices, where)
    batch_count = _count(batch, "batch_dimension_count", where, 0)
    # The older desc wherever it suffices (no batch dimensions), as the other versioned builders send theirs.
    chosen = (1 if batch_count else 0) if version is None else _version(version, where, (0, 1))
    if data.ndim == 0 or index_array.ndim == 0:
        raise ArgumentValueError(
            "input" if data.ndim == 0 else "indices", f"{where}: input and indices need at least 1 dimension"
        )
    if batch_count and chosen == 0:
        raise ArgumentValueError(
            "batch_dimension_count",
            f"{where}: batch_dimension_count = {batch_count} needs DML_GATHER_ND1 (version 1); version 0 has none",
        )
    size = index_array.shape[-1]
    shapes = f"input {data.shape} and indices {index_array.shape}"
    if batch_count >= index_array.ndim or batch_count + size > data.ndim:
        raise ArgumentValueError(
            "indices",
            f"{where}: {shapes}: {batch_count} batch dimensions and index tuples of {size} need indices of more than "
            f"{batch_count} dimensions and an input of at least {batch_count + size}",
        )
    if index_array.shape[:batch_count] != data.shape[:batch_count]:
        raise ArgumentValueError("indices", f"{where}: {shapes} differ in their first {batch_count} (batch) dimensions")
    if not padded and index_array.ndim != data.ndim:
        raise ArgumentValueError(
            "indices", f"{where}: {shapes}: a graph's gather_nd takes one dimension count (pad with leading 1s)"
        )
    shape = index_array.shape[:-1] + data.shape[batch_count + size :]
    rank = max(data.ndim, index_array.ndim, len(shape)) if padded else data.ndim
    _fits(rank, "indices", where)
    excess = len(shape) - rank
    if any(extent != 1 for extent in shape[: max(excess, 0)]):
        raise ArgumentValueError(
            "indices", f"{where}: {shapes}: the result {shape} has more than the tensors' {rank} dimensions"
        )
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(_padded(data, rank)),
        "indices_tensor": tensor_desc(_padded(index_array, rank)),
        "output_tensor": tensor_desc((data.dtype, (1,) * max(-excess, 0) + shape[max(excess, 0) :])),
        "input_dimension_count": data.ndim,
        "indices_dimension_count": index_array.ndim,
    }
    arrays = (_padded(data, rank), _padded(index_array, rank))
    shapes_back = (shape,) if padded else (None,)
    if chosen == 0:
        desc: Any = operators_pb2.GatherNdOperatorDesc(**fields)
    else:
        desc = operators_pb2.GatherNd1OperatorDesc(**fields, batch_dimension_count=batch_count)
    return Call(_wrap(f"gather_nd{chosen or ''}", desc), arrays, shapes_back, (data.dtype,))
