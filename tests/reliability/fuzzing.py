"""Fuzzing strategies over the request protos, and the invariant every answer must keep (shared with tools/fuzz.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import grpc
import numpy as np
from google.protobuf import message as protobuf_message
from hypothesis import strategies as st

from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.v1 import operators_pb2, service_pb2

EXECUTE = "/dmlrpc.v1.DirectMLService/Execute"
EXECUTE_STREAM = "/dmlrpc.v1.DirectMLService/ExecuteStream"

#: The statuses a request may get (docs/protocol.md); anything else, INTERNAL and UNKNOWN above all, is a fault.
DOCUMENTED = frozenset(
    {
        grpc.StatusCode.OK,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    }
)

#: Limits for fuzzed servers: small enough that no accepted request can take the machine's memory.
FUZZ_LIMITS: dict[str, int] = {
    "max_tensor_bytes": 16 << 20,
    "max_request_bytes": 48 << 20,
    "max_message_bytes": 64 << 20,
    "max_tensor_elements": 4 << 20,
    "max_request_elements": 12 << 20,
}

U32_MAX = (1 << 32) - 1
#: Sizes, strides and counts at and around the edges of uint32 (and of int32, where a signed reading overflows).
EXTREME_U32 = [0, 1, 2, 3, 7, 8, 255, 256, 65535, 65536, (1 << 31) - 1, 1 << 31, U32_MAX - 1, U32_MAX]
EXTREME_U64 = [*EXTREME_U32, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]
#: Every TensorDataType value, and unknown ones (proto3 enums are open: any int32 arrives as is).
DATA_TYPES = [*range(0, 16), 99, (1 << 31) - 1, -1, -(1 << 31)]
#: Every AxisDirection value and unknown ones.
DIRECTIONS = [0, 1, 2, -1, 1000, (1 << 31) - 1]

_FLOATS = [np.float32, np.float16, np.float64]
_INTS = [np.int32, np.int16, np.int8, np.uint32, np.uint16, np.uint8, np.int64, np.uint64]
_INDEX_DTYPES = [np.int32, np.int64, np.uint32, np.uint64]
_SPECIAL_FLOATS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, 3.4e38, -3.4e38, 65504.0]


@st.composite
def _shape(draw: st.DrawFn, max_dims: int = 4, max_side: int = 5) -> tuple[int, ...]:
    return tuple(draw(st.lists(st.integers(1, max_side), min_size=1, max_size=max_dims)))


@st.composite
def _values(draw: st.DrawFn, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    """Data of ``dtype``: for floats, NaN, infinities, subnormals and signed zeros mixed in."""
    count = int(np.prod(shape))
    if np.dtype(dtype).kind == "f":
        pool = st.one_of(st.sampled_from(_SPECIAL_FLOATS), st.floats(-8, 8, allow_nan=False))
        values = draw(st.lists(pool, min_size=count, max_size=count))
        with np.errstate(over="ignore", invalid="ignore"):
            return np.array(values, dtype=np.float64).astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    values = draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=count, max_size=count))
    return np.array(values, dtype=dtype).reshape(shape)


@st.composite
def _indices(draw: st.DrawFn, dtype: type, shape: tuple[int, ...], bound: int) -> np.ndarray:
    """Index values in range, at the edges, out of range, negative (wrapping or not) and duplicated."""
    info = np.iinfo(dtype)
    edges = [0, bound - 1, bound, bound + 1, -1, -bound, -bound - 1, int(info.min), int(info.max)]
    pool = st.one_of(st.integers(-bound, bound - 1), st.sampled_from(edges))
    values = draw(st.lists(pool, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    array = np.array([v % (int(info.max) + 1) if info.min == 0 and v < 0 else v for v in values], dtype=object)
    result: np.ndarray = np.clip(array, int(info.min), int(info.max)).astype(dtype)
    if draw(st.booleans()) and result.size > 1:
        result.reshape(-1)[-1] = result.reshape(-1)[0]  # a duplicate
    return result.reshape(shape)


@st.composite
def valid_calls(draw: st.DrawFn) -> ops.Call:
    """A well-formed call of each executable operator (values may still break data-dependent rules)."""
    kind = draw(st.sampled_from(["top_k", "scatter_elements", "scatter_nd"]))
    dtype = draw(st.sampled_from(_FLOATS + _INTS))
    shape = draw(_shape())
    data = draw(_values(dtype, shape))
    if kind == "top_k":
        # The SDK refuses FLOAT64 for TOP_K1 (DirectML has no such kernel) before any request is made; the mutations
        # below still send the server every data type.
        data = data.astype(np.float32) if data.dtype == np.float64 else data
        axis = draw(st.integers(0, len(shape) - 1))
        k = draw(st.integers(1, shape[axis]))
        direction: Literal["decreasing", "increasing"] = draw(st.sampled_from(("decreasing", "increasing")))
        return ops.top_k(data, k, axis, direction=direction, index_dtype=draw(st.sampled_from([np.uint32, np.uint64])))
    index_dtype = draw(st.sampled_from(_INDEX_DTYPES))
    if kind == "scatter_elements":
        axis = draw(st.integers(0, len(shape) - 1))
        index_shape = tuple(draw(st.integers(1, side)) if d == axis else side for d, side in enumerate(shape))
        indices = draw(_indices(index_dtype, index_shape, shape[axis]))
        updates = draw(_values(dtype, index_shape))
        return ops.scatter_elements(data, indices, updates, axis)
    depth = draw(st.integers(1, len(shape)))
    rows = draw(st.integers(1, 4))
    indices = draw(_indices(index_dtype, (rows, depth), min(shape[:depth])))
    updates = draw(_values(dtype, (rows, *shape[depth:])))
    return ops.scatter_nd(data, indices, updates)


def _tensor_descs(desc: protobuf_message.Message) -> list[str]:
    return [
        f.name
        for f in desc.DESCRIPTOR.fields
        if f.message_type is not None and f.message_type.name == "TensorDesc" and not f.is_repeated
    ]


def _scalar_fields(desc: protobuf_message.Message) -> list[str]:
    return [f.name for f in desc.DESCRIPTOR.fields if f.message_type is None and not f.is_repeated]


@st.composite
def _mutate_desc(draw: st.DrawFn, operator_desc: operators_pb2.OperatorDesc) -> None:
    """Change fields of the desc in place: tensor descs (type, sizes, strides, total size, flags) and attributes."""
    case = operator_desc.WhichOneof("desc")
    assert case is not None
    desc = getattr(operator_desc, case)
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(["tensor", "tensor", "tensor", "attribute", "case"]))
        if target == "case":  # the same fields read as another operator's desc, or an unknown case
            # The seed operators, element-wise and activation ones, once-unimplemented ones (CONVOLUTION, CAST,
            # ACTIVATION_SOFTMAX1: every type executes now) and unknown numbers.
            other = draw(st.sampled_from([71, 94, 109, 112, 1, 2, 4, 25, 33, 89, 99, 158, 53, 61, 200, 536870911]))
            raw = desc.SerializeToString()
            original = operator_desc.SerializeToString()
            tag = _varint((other << 3) | 2)
            operator_desc.Clear()
            try:
                operator_desc.MergeFromString(tag + _varint(len(raw)) + raw)
            except protobuf_message.DecodeError:
                # These bytes do not parse as that desc at all (the corrupt-message case is fuzzed elsewhere).
                operator_desc.Clear()
                operator_desc.MergeFromString(original)
                desc = getattr(operator_desc, case)
                continue
            if operator_desc.WhichOneof("desc") is None:
                return
            case = operator_desc.WhichOneof("desc")
            assert case is not None
            desc = getattr(operator_desc, case)
            continue
        if target == "attribute":
            if not _scalar_fields(desc):
                continue
            name = draw(st.sampled_from(_scalar_fields(desc)))
            field = desc.DESCRIPTOR.fields_by_name[name]
            if field.enum_type is not None:
                setattr(desc, name, draw(st.sampled_from(DIRECTIONS)))
            elif field.type in (field.TYPE_FLOAT, field.TYPE_DOUBLE):
                setattr(desc, name, draw(st.one_of(st.floats(width=32), st.sampled_from([0.0, -1.0, 1e38]))))
            elif field.type == field.TYPE_BOOL:
                setattr(desc, name, draw(st.booleans()))
            elif field.type == field.TYPE_INT32:
                setattr(desc, name, draw(st.integers(-(1 << 31), (1 << 31) - 1)))
            else:
                setattr(desc, name, draw(st.one_of(st.sampled_from(EXTREME_U32), st.integers(0, 10))))
            continue
        if not _tensor_descs(desc):
            continue
        name = draw(st.sampled_from(_tensor_descs(desc)))
        tensor = getattr(desc, name)
        change = draw(
            st.sampled_from(["clear", "data_type", "sizes", "strides", "total", "flags", "alignment", "rank", "empty"])
        )
        buffer = tensor.buffer
        if change == "clear":
            desc.ClearField(name)
        elif change == "empty":
            tensor.Clear()
        elif change == "data_type":
            buffer.data_type = draw(st.sampled_from(DATA_TYPES))
        elif change == "sizes" and buffer.sizes:
            buffer.sizes[draw(st.integers(0, len(buffer.sizes) - 1))] = draw(st.sampled_from(EXTREME_U32))
        elif change == "strides":
            rank = len(buffer.sizes)
            strides = list(buffer.strides) or [0] * rank
            if strides:
                strides[draw(st.integers(0, len(strides) - 1))] = draw(st.sampled_from(EXTREME_U32))
            if draw(st.booleans()):
                strides = draw(st.lists(st.sampled_from(EXTREME_U32), max_size=9))
            del buffer.strides[:]
            buffer.strides.extend(strides)
        elif change == "total":
            buffer.total_tensor_size_in_bytes = draw(
                st.one_of(st.sampled_from(EXTREME_U64), st.integers(0, 4 * buffer.total_tensor_size_in_bytes + 8))
            )
        elif change == "flags":
            buffer.flags = draw(st.sampled_from([0, 1, 2, 3, U32_MAX]))
        elif change == "alignment":
            buffer.guaranteed_base_offset_alignment = draw(st.sampled_from([0, 1, 3, 16, 256, U32_MAX]))
        elif change == "rank":
            sizes = draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 65536, U32_MAX]), max_size=10))
            del buffer.sizes[:]
            buffer.sizes.extend(sizes)


@st.composite
def _mutate_buffers(draw: st.DrawFn, inputs: list[bytes | None]) -> list[bytes | None]:
    """Truncated, extended, replaced, dropped, extra and unset bindings."""
    inputs = list(inputs)
    for _ in range(draw(st.integers(1, 2))):
        change = draw(st.sampled_from(["truncate", "extend", "random", "unset", "drop", "extra", "empty"]))
        if change == "drop":
            if inputs:
                inputs.pop(draw(st.integers(0, len(inputs) - 1)))
            continue
        if change == "extra":
            inputs.append(draw(st.one_of(st.none(), st.binary(max_size=64))))
            continue
        if not inputs:
            continue
        index = draw(st.integers(0, len(inputs) - 1))
        data = inputs[index] or b""
        if change == "truncate":
            inputs[index] = data[: draw(st.integers(0, max(0, len(data) - 1)))]
        elif change == "extend":
            inputs[index] = data + draw(st.binary(min_size=1, max_size=64))
        elif change == "random":
            inputs[index] = draw(st.binary(min_size=len(data), max_size=len(data)))
        elif change == "unset":
            inputs[index] = None
        else:
            inputs[index] = b""
    return inputs


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | 0x80 if value else byte)
        if not value:
            return bytes(out)


def request_of(operator_desc: operators_pb2.OperatorDesc, inputs: Sequence[bytes | None]) -> service_pb2.ExecuteRequest:
    return service_pb2.ExecuteRequest(
        operator_desc=operator_desc,
        inputs=[
            service_pb2.BindingDesc()
            if data is None
            else service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=data))
            for data in inputs
        ],
    )


@st.composite
def _flip_bytes(draw: st.DrawFn, wire: bytes) -> bytes | None:
    """Byte-level mutations of a serialized message (which may no longer parse)."""
    data = bytearray(wire)
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        position = draw(st.integers(0, len(data) - 1))
        data[position] = draw(st.integers(0, 255))
    return bytes(data)  # undecodable results included: they must get INVALID_ARGUMENT (test_regressions.py)


@dataclass(frozen=True)
class Fuzzed:
    """One fuzzed Execute request: its wire bytes and how it was made."""

    wire: bytes
    how: str


@st.composite
def execute_requests(draw: st.DrawFn) -> Fuzzed:
    """Valid requests, then (mostly) mutated descs, buffers or bytes; all parse as ExecuteRequest."""
    call = draw(valid_calls())
    prepared = prepare_execute(call.operator_desc, call.inputs)
    operator_desc = operators_pb2.OperatorDesc()
    operator_desc.CopyFrom(prepared.operator_desc)
    inputs: list[bytes | None] = [None if data is None else bytes(data) for data in prepared.inputs]
    how = draw(st.sampled_from(["valid", "desc", "desc", "buffers", "both", "bytes"]))
    if how in ("desc", "both"):
        draw(_mutate_desc(operator_desc))
    if how in ("buffers", "both"):
        inputs = draw(_mutate_buffers(inputs))
    wire = request_of(operator_desc, inputs).SerializeToString()
    if how == "bytes":
        flipped = draw(_flip_bytes(wire))
        if flipped is not None:
            wire = flipped
    return Fuzzed(wire, how)


@st.composite
def stream_sequences(draw: st.DrawFn) -> tuple[list[bytes], str]:
    """ExecuteStream message sequences: valid ones in small chunks, then dropped, repeated, reordered, mutated."""
    call = draw(valid_calls())
    prepared = prepare_execute(call.operator_desc, call.inputs)
    messages = list(prepared.stream_requests(chunk_bytes=draw(st.sampled_from([1, 7, 64, 4096]))))
    how = draw(st.sampled_from(["valid", "order", "start", "chunk", "random"]))
    if how == "order" and messages:
        change = draw(st.sampled_from(["drop", "repeat", "swap", "no_start", "two_starts", "empty"]))
        index = draw(st.integers(0, len(messages) - 1))
        if change == "drop":
            messages.pop(index)
        elif change == "repeat":
            messages.insert(index, messages[index])
        elif change == "swap":
            other = draw(st.integers(0, len(messages) - 1))
            messages[index], messages[other] = messages[other], messages[index]
        elif change == "no_start":
            messages.pop(0)
        elif change == "two_starts":
            messages.append(messages[0])
        else:
            messages = []
    elif how == "start":
        start = service_pb2.ExecuteStreamRequest.FromString(messages[0])
        if draw(st.booleans()):
            draw(_mutate_desc(start.start.operator_desc))
        else:
            lengths = list(start.start.input_bytes)
            lengths = draw(
                st.one_of(
                    st.lists(st.sampled_from(EXTREME_U64), max_size=5),
                    st.just([*lengths, draw(st.sampled_from(EXTREME_U64))]),
                    st.just(lengths[:-1]),
                )
            )
            del start.start.input_bytes[:]
            start.start.input_bytes.extend(lengths)
        messages[0] = start.SerializeToString()
    elif how == "chunk":
        binding = draw(st.sampled_from([0, 1, 2, 3, 4, 255, U32_MAX]))
        data = draw(st.binary(max_size=256))
        chunk = service_pb2.ExecuteStreamRequest(chunk=service_pb2.TensorChunk(binding=binding, data=data))
        messages.insert(draw(st.integers(0, len(messages))), chunk.SerializeToString())
    elif how == "random":
        messages.insert(draw(st.integers(0, len(messages))), draw(st.binary(max_size=64)))
    return messages, how
