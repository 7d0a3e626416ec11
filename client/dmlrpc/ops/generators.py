"""DML_ONE_HOT, DML_FILL_VALUE_SEQUENCE, DML_FILL_VALUE_CONSTANT, DML_DIAGONAL_MATRIX(1) and
DML_NONZERO_COORDINATES as NumPy-style builders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import DATA_TYPE_BY_DTYPE, tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import GraphFace, Result, operator, pair, second, sized_output
from dmlrpc.ops.base import Call, _array, _axis, _count, _fits, _input, _scalar, _wrap
from dmlrpc.v1 import operators_pb2

__all__ = ["diagonal_matrix", "fill_value_constant", "fill_value_sequence", "nonzero_coordinates", "one_hot"]


_INDEX_TYPES = ("int64", "int32", "uint64", "uint32")


def _one_hot_node(graph: Any, where: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An edge does not reshape, so a graph's ``indices`` have the output's dimension count, with size 1 along
    ``axis`` (where the output has ``depth``); the builder takes them without it."""
    indices = arguments["indices"]
    position = _axis(arguments["axis"], len(indices.shape), where)
    if indices.shape[position] != 1:
        raise ArgumentValueError(
            "indices",
            f"{where}: indices has shape {indices.shape}; in a graph it has the output's dimension count, with "
            f"size 1 along axis {arguments['axis']}",
        )
    return {"indices": np.asarray(indices).squeeze(position), "axis": position}


@operator(sends=("one_hot",), graph=GraphFace(prepare=_one_hot_node))
def one_hot(indices: npt.ArrayLike, depth: int, values: npt.ArrayLike = (0, 1), axis: int = -1) -> Call:
    """DML_ONE_HOT_OPERATOR_DESC: ``values[1]`` where the position along the new ``axis`` equals the index, else
    ``values[0]``, as ONNX OneHot: ``np.where(np.expand_dims(indices, axis) == positions, values[1], values[0])``
    with ``depth`` positions.

    DirectML's rules: the output has ``values``' dtype (int64 for the default ``(0, 1)``; every DirectML type from
    feature level 4.1, FLOAT64 included) and the indices' shape with ``depth`` inserted at ``axis``; indices are
    int32, int64, uint32 or uint64, a negative one counting from the end (``-1``: the last position); an index
    out of range after that gives a sequence of ``values[0]`` only. The tensors travel with one dimension count:
    the indices with size 1 at ``axis``, ``values`` as {1, .., 2}.

    Args:
        indices: the hot position of each output sequence (0-d or more, at most 7 dimensions).
        depth: the new axis's size, at least 1.
        values: (off value, on value).
        axis: where the new axis goes, ``-(indices.ndim + 1) <= axis <= indices.ndim``; default last.

    Raises:
        ArgumentValueError, ArgumentTypeError: an index dtype DirectML does not take, a depth below 1, values not
            two elements, an axis out of range.
    """
    where = case = "one_hot"
    index_array = _array(indices, "indices", where)
    if index_array.dtype.name not in _INDEX_TYPES:
        raise ArgumentTypeError(
            "indices",
            f"{where}: indices has dtype {index_array.dtype}; DML_OPERATOR_ONE_HOT takes integer indices of 32 or 64 "
            f"bits, e.g. np.asarray(indices, np.int64)",
            allowed=_INDEX_TYPES,
        )
    count = _count(depth, "depth", where, 1)
    value_array = _input(values, "values", case, where)
    if value_array.size != 2:
        raise ArgumentValueError(
            "values", f"{where}: values has {value_array.size} elements; it is (off value, on value)", allowed=("2",)
        )
    boolean = value_array.dtype == np.bool_
    if boolean:
        value_array = value_array.astype(np.uint8)  # bool travels as UINT8 and comes back as bool
    rank = index_array.ndim + 1
    position = _axis(axis, rank, where)
    out_shape = list(index_array.shape)
    out_shape.insert(position, count)
    wire_indices = np.expand_dims(index_array, position)
    wire_values = value_array.reshape((1,) * (rank - 1) + (2,))
    desc = operators_pb2.OneHotOperatorDesc(
        indices_tensor=tensor_desc(wire_indices),
        values_tensor=tensor_desc(wire_values),
        output_tensor=tensor_desc((wire_values.dtype, out_shape)),
        axis=position,
    )
    dtype = np.dtype(np.bool_) if boolean else None
    return Call(_wrap(case, desc), (wire_indices, wire_values), (tuple(out_shape),), (dtype,))


#: The types DML_FILL_VALUE_SEQUENCE fills (64-bit integers from feature level 5.0; never FLOAT64).
_SEQUENCE_TYPES = ("float32", "float16", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8")


@operator(sends=("fill_value_sequence",), graph=GraphFace(prepare=sized_output))
def fill_value_sequence(
    shape: int | Sequence[int], start: float, delta: float, dtype: npt.DTypeLike = np.float32
) -> Call:
    """DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC: ``start + i * delta`` at row-major element ``i`` of an array of
    ``shape``, as ``(start + delta * np.arange(n)).astype(dtype).reshape(shape)`` (``np.arange(start, stop,
    delta)`` for a 1-D one).

    DirectML's rules: no inputs; ValueDataType (``dtype``) types both scalars and the output. float32, float16,
    32-bit and 8/16-bit integers; 64-bit integers from feature level 5.0; never FLOAT64 or bool. Floats compute
    in float32 as ``float32(i) * delta + start`` (float16 rounded once at the end); integers wrap in two's
    complement (a negative ``delta`` counts an unsigned type down, as the page's UINT8 example). ``start`` must
    be a value of ``dtype``; an integer ``delta`` may also be negative down to ``-(2**bits - 1)``. 1 to 8
    dimensions (a 0-d shape travels as {1}).

    Raises:
        ArgumentValueError, ArgumentTypeError: a shape that is not ints >= 1, a dtype the operator does not
            fill, a float ``start``/``delta`` for an integer dtype, a value out of the type's range.
    """
    where = case = "fill_value_sequence"
    sizes = _shape(shape, where)
    target = _fill_dtype(dtype, where, _SEQUENCE_TYPES, "DML_OPERATOR_FILL_VALUE_SEQUENCE fills")
    scalars = [
        _sequence_scalar(value, argument, target, where) for argument, value in (("start", start), ("delta", delta))
    ]
    desc = operators_pb2.FillValueSequenceOperatorDesc(
        output_tensor=tensor_desc((target, sizes or (1,))),
        value_data_type=DATA_TYPE_BY_DTYPE[target],  # type: ignore[arg-type]
        value_start=scalars[0],
        value_delta=scalars[1],
    )
    return Call(_wrap(case, desc), (), (sizes,))


def _sequence_scalar(value: object, argument: str, dtype: np.dtype[Any], where: str) -> operators_pb2.ScalarUnion:
    """``value`` in the DML_SCALAR_UNION member for ``dtype`` (FLOAT16 travels in the FLOAT32 member)."""
    if dtype.kind == "f":
        return operators_pb2.ScalarUnion(float32=_scalar(value, argument, where))
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ArgumentTypeError(
            argument, f"{where}: {argument} must be an int for dtype {dtype}; got {type(value).__name__}"
        )
    info = np.iinfo(dtype)
    number = int(value)
    low = -int(info.max) if argument == "delta" and dtype.kind == "u" else int(info.min)
    if not low <= number <= int(info.max):
        raise ArgumentValueError(
            argument, f"{where}: {argument} = {number} is out of range for {dtype}: {low}..{info.max}"
        )
    if dtype.kind == "u":
        number %= 1 << (8 * dtype.itemsize)  # a negative delta wraps: adding it counts down
    member = f"{'uint' if dtype.kind == 'u' else 'int'}{8 * dtype.itemsize}"
    scalar = operators_pb2.ScalarUnion()
    setattr(scalar, member, number)
    return scalar


#: The types DML_FILL_VALUE_CONSTANT and DML_DIAGONAL_MATRIX(1) fill (every DirectML type; 64-bit ones from
#: feature level 4.1 / 5.0).
_FILL_TYPES = ("float64", *_SEQUENCE_TYPES)


def _shape(shape: object, where: str) -> tuple[int, ...]:
    items = [shape] if isinstance(shape, int | np.integer) else shape
    if isinstance(shape, bool) or not isinstance(items, Sequence | np.ndarray):
        raise ArgumentTypeError("shape", f"{where}: shape must be an int or a sequence of ints; got {shape!r}")
    return tuple(_count(size, "shape", where, 1) for size in items)


def _fill_dtype(
    dtype: npt.DTypeLike,
    where: str,
    allowed: tuple[str, ...] = _FILL_TYPES,
    fills: str = "DirectML fills (no bool: use uint8)",
) -> np.dtype[Any]:
    """``dtype`` as NumPy's, one of ``allowed`` (``fills`` says whose types they are)."""
    try:
        target = np.dtype(dtype)
    except TypeError:
        raise ArgumentTypeError("dtype", f"{where}: dtype {dtype!r} is not a NumPy dtype", allowed=allowed) from None
    if target.name not in allowed:
        raise ArgumentTypeError("dtype", f"{where}: dtype {target} is not one {fills}", allowed=allowed)
    return target


def _value_scalar(value: object, dtype: np.dtype[Any], where: str) -> operators_pb2.ScalarUnion:
    """``value`` in the DML_SCALAR_UNION member for ``dtype`` (FLOAT16 travels in FLOAT32's)."""
    if dtype == np.float64:
        return operators_pb2.ScalarUnion(float64=_scalar(value, "value", where))
    return _sequence_scalar(value, "value", dtype, where)


@operator(sends=("fill_value_constant",), graph=GraphFace(prepare=sized_output))
def fill_value_constant(shape: int | Sequence[int], value: float, dtype: npt.DTypeLike = np.float32) -> Call:
    """DML_FILL_VALUE_CONSTANT_OPERATOR_DESC: an array of ``shape`` with every element ``value``, as
    ``np.full(shape, value, dtype)``.

    DirectML's rules: no inputs; ValueDataType (``dtype``) types the value and the output; every DirectML type
    (no bool); 1 to 8 dimensions (a 0-d shape travels as {1}). An integer dtype takes an int value in its range.

    Raises:
        ArgumentValueError, ArgumentTypeError: a shape that is not ints >= 1, a dtype DirectML has not, a float
            value for an integer dtype, a value out of the type's range.
    """
    where = case = "fill_value_constant"
    sizes = _shape(shape, where)
    target = _fill_dtype(dtype, where)
    desc = operators_pb2.FillValueConstantOperatorDesc(
        output_tensor=tensor_desc((target, sizes or (1,))),
        value_data_type=DATA_TYPE_BY_DTYPE[target],  # type: ignore[arg-type]
        value=_value_scalar(value, target, where),
    )
    return Call(_wrap(case, desc), (), (sizes,))


@operator(sends=("diagonal_matrix", "diagonal_matrix1"))
def diagonal_matrix(
    shape: Sequence[int] | None,
    offset: int = 0,
    value: float = 1,
    dtype: npt.DTypeLike = np.float32,
    *,
    fill_end: int | None = None,
    input: npt.ArrayLike | None = None,
) -> Call:
    """DML_DIAGONAL_MATRIX_OPERATOR_DESC (1): ``value`` on the diagonal ``offset`` of each trailing {height,
    width} matrix and 0 elsewhere, as ``value * np.eye(height, width, k=offset, dtype=dtype)`` broadcast over the
    leading (batch) dimensions.

    With ``fill_end`` every diagonal ``k`` with ``offset <= k < fill_end`` gets ``value`` (DIAGONAL_MATRIX1's
    DiagonalFillBegin/End; with ``fill_end < offset`` every diagonal outside ``[fill_end, offset)``, as the page's
    pseudocode), and with ``input`` the elements off those diagonals are ``input``'s, not 0 (then ``shape`` and
    ``dtype`` are ``input``'s: pass ``None`` or the same). The desc sent is DIAGONAL_MATRIX when it expresses the
    call (no ``fill_end`` or ``input``, a float dtype or an int value that FLOAT32 holds: its Value is a FLOAT),
    else DIAGONAL_MATRIX1 (feature level 5.1). DirectML's rules: 2 to 4 dimensions; every DirectML type but bool.

    Raises:
        ArgumentValueError, ArgumentTypeError: a shape that is not 2 to 4 ints >= 1, a dtype DirectML has not, a
            value out of the type's range, an ``input`` whose shape or dtype differ from ``shape``/``dtype``.
    """
    where = "diagonal_matrix"
    data = None
    if input is not None:
        data = _input(input, "input", "diagonal_matrix1", where)
        if shape is not None and tuple(shape) != data.shape:
            raise ArgumentValueError(
                "shape", f"{where}: shape {tuple(shape)} differs from input's {data.shape}; pass None or the same"
            )
        sizes = data.shape
        target = _fill_dtype(data.dtype, where)
    else:
        if shape is None:
            raise ArgumentValueError("shape", f"{where}: shape is None and there is no input to take it from")
        sizes = _shape(shape, where)
        target = _fill_dtype(dtype, where)
    if not 2 <= len(sizes) <= 4:
        raise ArgumentValueError(
            "shape",
            f"{where}: shape {sizes} has {len(sizes)} dimensions; DirectML takes 2 to 4 ({{[batch..,] "
            "height, width}})",
            allowed=("2", "3", "4"),
        )
    begin = _offset(offset, "offset", where)
    scalar = _value_scalar(value, target, where)
    # DIAGONAL_MATRIX's Value is a FLOAT: an integer it does not hold exactly needs DIAGONAL_MATRIX1's typed one.
    exact = target.kind == "f" or float(np.float32(int(value))) == int(value)
    if fill_end is None and data is None and exact and target != np.float64:
        old = operators_pb2.DiagonalMatrixOperatorDesc(
            output_tensor=tensor_desc((target, sizes)), offset=begin, value=float(value)
        )
        return Call(_wrap("diagonal_matrix", old), ())
    end = begin + 1 if fill_end is None else _offset(fill_end, "fill_end", where)
    desc = operators_pb2.DiagonalMatrix1OperatorDesc(
        output_tensor=tensor_desc((target, sizes)),
        value_data_type=DATA_TYPE_BY_DTYPE[target],  # type: ignore[arg-type]
        value=scalar,
        diagonal_fill_begin=begin,
        diagonal_fill_end=end,
    )
    if data is not None:
        desc.input_tensor.CopyFrom(tensor_desc(data))
    return Call(_wrap("diagonal_matrix1", desc), (data,))


def _offset(value: object, argument: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ArgumentTypeError(argument, f"{where}: {argument} must be an int; got {type(value).__name__}")
    if not -(2**31) <= value < 2**31:
        raise ArgumentValueError(argument, f"{where}: {argument} = {value} does not fit DirectML's INT")
    return int(value)


#: The types DML_NONZERO_COORDINATES reads (8, 16 and 32-bit; no 64-bit type).
_NONZERO_TYPES = ("float32", "float16", "int32", "int16", "int8", "uint32", "uint16", "uint8")


@operator(sends=("nonzero_coordinates",), result=Result(second, pair))
def nonzero_coordinates(input: npt.ArrayLike) -> Call:
    """DML_NONZERO_COORDINATES_OPERATOR_DESC: the count of non-zero elements of ``input`` and their coordinates
    in row-major order, one row of ``input.ndim`` uint32 coordinates per element: ``np.argwhere(input)``.

    DirectML's outputs have fixed sizes: OutputCountTensor {1} and OutputCoordinatesTensor {input.size,
    input.ndim}, whose rows past the count are unspecified; the client's call gives ``np.argwhere``'s array
    (the first ``count`` rows, as uint32), a graph node both tensors. NaN counts as non-zero, +-0.0 as zero.
    DirectML's rules: 1 to 8 dimensions (a 0-d input travels as {1}); 8, 16 and 32-bit types (bool travels as
    UINT8).

    Raises:
        ArgumentTypeError: a 64-bit dtype.
    """
    where = case = "nonzero_coordinates"
    data = _input(input, "input", case, where)
    if data.dtype == np.bool_:
        data = data.view(np.uint8)
    if data.dtype.name not in _NONZERO_TYPES:
        raise ArgumentTypeError(
            "input",
            f"{where}: input has dtype {data.dtype}, which DML_OPERATOR_NONZERO_COORDINATES does not take",
            allowed=_NONZERO_TYPES,
        )
    data = data.reshape(1) if data.ndim == 0 else data
    _fits(data.ndim, "input", where)
    desc = operators_pb2.NonzeroCoordinatesOperatorDesc(
        input_tensor=tensor_desc(data),
        output_count_tensor=tensor_desc((np.uint32, (1,))),
        output_coordinates_tensor=tensor_desc((np.uint32, (data.size, data.ndim))),
    )
    columns = np.ndim(input)

    def finish(outputs: list[Any]) -> list[Any]:
        count, coordinates = outputs
        if not isinstance(count, np.ndarray) or not isinstance(coordinates, np.ndarray):
            return outputs  # kept on the server: resident tensors have their desc's sizes
        # Rows past the count are unspecified, and a 0-d input's one column is DirectML's, not NumPy's.
        return [count, coordinates[: int(count.reshape(-1)[0]), :columns]]

    return Call(_wrap(case, desc), (data,), finish=finish)
