"""Open Inference Protocol tensors: datatypes, raw and typed contents, BYTES framing, shapes against a config."""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import onnx

from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.oip.protocol import model_config_pb2

DataType = model_config_pb2.DataType


@dataclass(frozen=True)
class Datatype:
    """One protocol datatype: its API string, its config enum, its element size, NumPy and ONNX types."""

    name: str
    config: int
    size: int  # bytes per element; 0 for BYTES (length-prefixed elements)
    numpy: np.dtype[np.generic]
    onnx: int
    #: The InferTensorContents field that carries it typed ("" where the protocol has none: FP16, BF16).
    contents: str


def _dt(name: str, config: int, size: int, numpy: str, onnx_type: int, contents: str) -> Datatype:
    return Datatype(name, config, size, np.dtype(numpy), onnx_type, contents)


T = onnx.TensorProto
DATATYPES: Final = {
    d.name: d
    for d in (
        _dt("BOOL", DataType.TYPE_BOOL, 1, "?", T.BOOL, "bool_contents"),
        _dt("UINT8", DataType.TYPE_UINT8, 1, "<u1", T.UINT8, "uint_contents"),
        _dt("UINT16", DataType.TYPE_UINT16, 2, "<u2", T.UINT16, "uint_contents"),
        _dt("UINT32", DataType.TYPE_UINT32, 4, "<u4", T.UINT32, "uint_contents"),
        _dt("UINT64", DataType.TYPE_UINT64, 8, "<u8", T.UINT64, "uint64_contents"),
        _dt("INT8", DataType.TYPE_INT8, 1, "<i1", T.INT8, "int_contents"),
        _dt("INT16", DataType.TYPE_INT16, 2, "<i2", T.INT16, "int_contents"),
        _dt("INT32", DataType.TYPE_INT32, 4, "<i4", T.INT32, "int_contents"),
        _dt("INT64", DataType.TYPE_INT64, 8, "<i8", T.INT64, "int64_contents"),
        _dt("FP16", DataType.TYPE_FP16, 2, "<f2", T.FLOAT16, ""),
        _dt("FP32", DataType.TYPE_FP32, 4, "<f4", T.FLOAT, "fp32_contents"),
        _dt("FP64", DataType.TYPE_FP64, 8, "<f8", T.DOUBLE, "fp64_contents"),
        # NOTE: BF16 is the top half of an FP32; on the wire it is two bytes, held here as their uint16 bits.
        _dt("BF16", DataType.TYPE_BF16, 2, "<u2", T.BFLOAT16, ""),
        _dt("BYTES", DataType.TYPE_STRING, 0, "O", T.STRING, "bytes_contents"),
    )
}
BY_CONFIG: Final = {d.config: d for d in DATATYPES.values()}
BY_ONNX: Final = {d.onnx: d for d in DATATYPES.values()}
_LENGTH = struct.Struct("<I")


def datatype_of(config_type: int) -> Datatype:
    """The protocol datatype of a config ``data_type``."""
    return BY_CONFIG[config_type]


def element_count(shape: Sequence[int]) -> int:
    return math.prod(shape)


def serialize_bytes(array: np.ndarray) -> bytes:
    """BYTES elements in row-major order, each as a little-endian uint32 length and its bytes."""
    parts: list[bytes] = []
    for item in array.reshape(-1):
        data = item.encode() if isinstance(item, str) else bytes(item)
        parts.append(_LENGTH.pack(len(data)))
        parts.append(data)
    return b"".join(parts)


def deserialize_bytes(data: bytes | memoryview, count: int, field: str) -> list[bytes]:
    """``count`` length-prefixed BYTES elements that fill ``data`` exactly.

    Raises:
        InvalidArgument: a length runs past the data, or the elements do not fill it exactly.
    """
    view = memoryview(data)
    items: list[bytes] = []
    offset = 0
    while offset < len(view):
        if offset + 4 > len(view):
            raise InvalidArgument(field, f"BYTES element {len(items)} has a truncated 4-byte length prefix")
        (length,) = _LENGTH.unpack_from(view, offset)
        offset += 4
        if offset + length > len(view):
            raise InvalidArgument(
                field, f"BYTES element {len(items)} declares {length} bytes but only {len(view) - offset} remain"
            )
        items.append(bytes(view[offset : offset + length]))
        offset += length
    if len(items) != count:
        raise InvalidArgument(field, f"holds {len(items)} BYTES elements; the shape needs {count}")
    return items


def from_raw(data: bytes | memoryview, datatype: Datatype, shape: Sequence[int], field: str) -> np.ndarray:
    """The array ``data`` (row-major, little-endian) holds, checked against its shape."""
    count = element_count(shape)
    if datatype.size == 0:
        return bytes_array(deserialize_bytes(data, count, field), shape)
    expected = count * datatype.size
    if len(data) != expected:
        raise InvalidArgument(
            field,
            f"holds {len(data)} bytes; a {datatype.name} tensor of shape {list(shape)} needs {expected}",
        )
    return np.frombuffer(data, datatype.numpy).reshape(shape)


def from_contents(contents: Any, datatype: Datatype, shape: Sequence[int], field: str) -> np.ndarray:
    """The array a typed ``contents`` holds: exactly the field of its datatype, one entry per element."""
    filled = [descriptor.name for descriptor, _ in contents.ListFields()]
    if not datatype.contents:
        raise InvalidArgument(field, f"{datatype.name} has no typed contents field; send it in raw_input_contents")
    others = [name for name in filled if name != datatype.contents]
    if others:
        raise InvalidArgument(f"{field}.{others[0]}", f"does not carry {datatype.name}; use {datatype.contents}")
    values = getattr(contents, datatype.contents)
    count = element_count(shape)
    if len(values) != count:
        raise InvalidArgument(
            f"{field}.{datatype.contents}", f"holds {len(values)} elements; the shape {list(shape)} needs {count}"
        )
    if datatype.size == 0:
        return bytes_array(list(values), shape)
    if datatype.name in {"BOOL", "FP32", "FP64"}:
        return np.array(values, dtype=datatype.numpy).reshape(shape)
    # The typed fields are wider than most integer types (int32 for INT8/16, uint32 for UINT8/16): range-check.
    wide = np.array(values, dtype=np.uint64 if datatype.name == "UINT64" else np.int64)
    converted = wide.astype(datatype.numpy)
    if not np.array_equal(converted, wide):
        raise InvalidArgument(f"{field}.{datatype.contents}", f"holds a value out of the range of {datatype.name}")
    return converted.reshape(shape)


def bytes_array(items: Sequence[bytes], shape: Sequence[int]) -> np.ndarray:
    array = np.empty(len(items), dtype=object)
    array[:] = list(items)
    return array.reshape(shape)


def raw_bytes(array: np.ndarray, datatype: Datatype) -> bytes | memoryview:
    """The raw bytes of an output array in its protocol datatype: a view of the array's own where they already are
    (C-contiguous, of that dtype), else a copy."""
    if datatype.size == 0:
        return serialize_bytes(array)
    packed = np.ascontiguousarray(array, dtype=datatype.numpy)
    # NOTE: a cast refuses a shape with a zero in it, hence the empty case.
    return memoryview(packed).cast("B") if packed.size else b""  # type: ignore[arg-type]


def shape_matches(shape: Sequence[int], dims: Sequence[int]) -> bool:
    """Whether a concrete shape matches config dims (-1 matches any size)."""
    if len(shape) != len(dims):
        return False
    # NOTE: a loop, not all() over a generator: this runs for each input of every ModelInfer.
    for size, dim in zip(shape, dims):  # noqa: B905, SIM110 - the lengths are equal
        if dim != -1 and dim != size:
            return False
    return True
