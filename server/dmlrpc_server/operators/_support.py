"""The checks operators share, DML_SCALAR_UNION and FLOAT conversions."""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from dmlrpc.codec import DTYPE_BY_DATA_TYPE, data_type_name
from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators.base import Prepare, Tensors, require

FL = operators_pb2.FeatureLevel
DT = tensor_pb2.TensorDataType


# DML_SCALAR_UNION members by the data type they hold, and the struct format of its leading bytes.
_MEMBERS: dict[int, tuple[str, str]] = {
    DT.TENSOR_DATA_TYPE_INT8: ("int8", "<b"),
    DT.TENSOR_DATA_TYPE_UINT8: ("uint8", "<B"),
    DT.TENSOR_DATA_TYPE_INT16: ("int16", "<h"),
    DT.TENSOR_DATA_TYPE_UINT16: ("uint16", "<H"),
    DT.TENSOR_DATA_TYPE_INT32: ("int32", "<i"),
    DT.TENSOR_DATA_TYPE_UINT32: ("uint32", "<I"),
    DT.TENSOR_DATA_TYPE_INT64: ("int64", "<q"),
    DT.TENSOR_DATA_TYPE_UINT64: ("uint64", "<Q"),
    DT.TENSOR_DATA_TYPE_FLOAT32: ("float32", "<f"),
    DT.TENSOR_DATA_TYPE_FLOAT64: ("float64", "<d"),
    DT.TENSOR_DATA_TYPE_FLOAT16: ("float32", "<e"),
}


def scalar_value(scalar: operators_pb2.ScalarUnion, data_type: int, path: str) -> Any:
    """The value a DML_SCALAR_UNION holds as ``data_type`` (a NumPy scalar of that type).

    Raises:
        InvalidArgument: no member or another type's member is set, an integer is out of the type's range, or
            ``bytes`` is not 8 bytes long.
    """
    if data_type not in _MEMBERS:
        raise InvalidArgument(path, f"no DML_SCALAR_UNION member holds {data_type_name(data_type)}")
    member, fmt = _MEMBERS[data_type]
    dtype: np.dtype[Any] = DTYPE_BY_DATA_TYPE[data_type]
    case = scalar.WhichOneof("value")
    if case == "bytes":
        if len(scalar.bytes) != 8:
            raise InvalidArgument(f"{path}.bytes", f"{len(scalar.bytes)} bytes; DML_SCALAR_UNION.Bytes is 8 bytes")
        return dtype.type(struct.unpack_from(fmt, scalar.bytes)[0])
    if case != member:
        wanted = f"`{member}` or `bytes`"
        got = "no member" if case is None else f"`{case}`"
        raise InvalidArgument(
            path, f"{got} is set, but the paired data type {data_type_name(data_type)} needs {wanted}"
        )
    value = getattr(scalar, member)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise InvalidArgument(f"{path}.{member}", f"{value} is out of range for {data_type_name(data_type)}")
    # A FLOAT16 held in the FLOAT32 member rounds as any float narrowing does: beyond FLOAT16's range to +-inf (as
    # PADDING's value does), not an overflow warning.
    with np.errstate(over="ignore"):
        return dtype.type(value)


def integer_bounds(low: float, high: float, dtype: np.dtype[Any]) -> tuple[int, int]:
    """FLOAT bounds [low, high] as the integers of ``dtype`` inside them: ceil(low), floor(high), saturated."""
    info = np.iinfo(dtype)

    def clamp(value: float) -> int:
        if value == math.inf:
            return int(info.max)
        if value == -math.inf:
            return int(info.min)
        return min(max(int(value), int(info.min)), int(info.max))

    return clamp(math.ceil(low) if math.isfinite(low) else low), clamp(
        math.floor(high) if math.isfinite(high) else high
    )


def same_type(tensors: Tensors, names: Sequence[str], reference: str = "input_tensor") -> None:
    """Every set tensor of ``names`` has ``reference``'s data type."""
    data_type = tensors[reference].data_type
    for name in names:
        layout = tensors.layouts[name]
        require(
            layout is None or layout.data_type == data_type,
            f"{tensors.field(name)}.buffer.data_type",
            f"must equal {reference}'s data type",
        )


def same_rank(tensors: Tensors, names: Sequence[str], reference: str = "input_tensor") -> None:
    """Every tensor of ``names`` has ``reference``'s DimensionCount (its sizes are the field at fault)."""
    rank = len(tensors[reference].sizes)
    for name in names:
        require(
            len(tensors[name].sizes) == rank,
            f"{tensors.field(name)}.buffer.sizes",
            f"{len(tensors[name].sizes)} dimensions; must equal {reference}'s {rank}",
        )


def same_sizes(tensors: Tensors, name: str = "output_tensor", reference: str = "input_tensor") -> None:
    """``name`` has ``reference``'s DimensionCount, then its sizes."""
    sizes, expected = list(tensors[name].sizes), list(tensors[reference].sizes)
    same_dimension_count(tensors, name, reference)
    require(
        sizes == expected,
        f"{tensors.field(name)}.buffer.sizes",
        f"sizes {sizes} must equal {reference}'s sizes {expected}",
    )


def same_sizes_but_axis(tensors: Tensors, name: str, axis: int, reference: str = "input_tensor") -> None:
    """``name`` has ``reference``'s size in every dimension but ``axis`` (both of one DimensionCount)."""
    expected = tensors[reference].sizes
    for d, size in enumerate(tensors[name].sizes):
        require(
            d == axis or size == expected[d],
            f"{tensors.field(name)}.buffer.sizes[{d}]",
            f"{size} must equal {reference}'s size {expected[d]} (only the axis dimension may differ)",
        )


def elements_axis(tensors: Tensors, axis: int, sized: str) -> None:
    """GATHER_ELEMENTS' and SCATTER_ELEMENTS' axis rules: Axis below the DimensionCount, indices_tensor of
    input_tensor's sizes but along Axis, and ``sized`` (the output, or the updates) of indices_tensor's sizes."""
    rank = len(tensors["input_tensor"].sizes)
    require(axis < rank, tensors.field("axis"), f"axis {axis} is not less than the dimension count {rank}")
    same_sizes_but_axis(tensors, "indices_tensor", axis)
    indices, target = tensors["indices_tensor"], tensors[sized]
    require(
        target.sizes == indices.sizes,
        f"{tensors.field(sized)}.buffer.sizes",
        f"sizes {list(target.sizes)} must equal indices_tensor's {list(indices.sizes)}",
    )


def same_dimension_count(tensors: Tensors, name: str = "output_tensor", reference: str = "input_tensor") -> None:
    """``name`` has ``reference``'s DimensionCount (the field at fault: its dimension_count)."""
    require(
        len(tensors[name].sizes) == len(tensors[reference].sizes),
        f"{tensors.field(name)}.buffer.dimension_count",
        f"must equal {reference}'s dimension count",
    )


def axis_direction(direction: int, tensors: Tensors, field: str = "axis_direction") -> int:
    """A DML_AXIS_DIRECTION attribute, checked."""
    require(
        direction in tensor_pb2.AxisDirection.values(),
        tensors.field(field),
        f"{direction} is not a DML_AXIS_DIRECTION (0 = INCREASING, 1 = DECREASING)",
    )
    return direction


def reshaping_feeder(feeds: Sequence[str], shapes: Sequence[tuple[int, ...] | None]) -> Prepare:
    """A ``prepare``: each present input as feed ``feeds[i]``, reshaped to ``shapes[i]`` unless that is None."""

    def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
        result: dict[str, np.ndarray] = {}
        for name, array, shape in zip(feeds, arrays, shapes, strict=True):
            if array is not None:
                result[name] = np.ascontiguousarray(array if shape is None else array.reshape(shape))
        return result

    return prepare
