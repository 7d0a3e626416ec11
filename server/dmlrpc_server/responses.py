"""Responses as wire bytes: ExecuteResponse and ExecuteMany results written without building protobuf objects."""

from __future__ import annotations

from collections.abc import Sequence

from dmlrpc.v1 import service_pb2, tensor_pb2
from dmlrpc.wire import varint
from dmlrpc_server.errors import ServiceError
from dmlrpc_server.runtime.resident import Resident

#: One output binding, encoded: a buffer's bytes, a tensor array's buffers, or ``None`` (unset).
Encoded = bytes | list[bytes | None] | None

_UNSET_BINDING = b"\x0a\x00"  # ExecuteResponse.outputs (field 1) holding an empty BindingDesc
_FIELD1 = b"\x0a"  # field 1, length-delimited: ExecuteResponse.outputs, BindingDesc.buffer, BufferBinding.data
_TAG = b"\x08"  # ItemResult.tag: field 1, varint
_STATUS = b"\x12"  # ItemResult.status: field 2, length-delimited
_RESPONSE = b"\x1a"  # ItemResult.response: field 3, length-delimited


def execute_response(outputs: Sequence[Encoded]) -> bytes:
    """The serialized ExecuteResponse of a call's outputs (the bytes protobuf would write for the same message).

    NOTE: building BindingDesc and BufferBinding objects and serializing them costs more than a tiny operator;
    a buffer binding is three length prefixes in front of the data.
    """
    parts: list[bytes] = []
    for item in outputs:
        if item is None:
            parts.append(_UNSET_BINDING)
        elif isinstance(item, list):
            buffers = [service_pb2.BufferBinding(data=data or b"") for data in item]
            binding = service_pb2.BindingDesc(
                buffer_array=service_pb2.BufferArrayBinding(binding_count=len(buffers), bindings=buffers)
            ).SerializeToString()
            parts += (_FIELD1, varint(len(binding)), binding)
        else:
            data_header = _FIELD1 + varint(len(item))
            buffer_size = len(data_header) + len(item)
            buffer_header = _FIELD1 + varint(buffer_size)
            parts += (_FIELD1, varint(len(buffer_header) + buffer_size), buffer_header, data_header, item)
    return b"".join(parts)


def item_result(tag: int, response: bytes) -> bytes:
    """One ExecuteManyResponse.results entry (field 1) for an item that succeeded: its tag and response."""
    body = b"".join((_TAG, varint(tag), _RESPONSE, varint(len(response)), response))
    return b"".join((_FIELD1, varint(len(body)), body))


def item_error(tag: int, error: ServiceError) -> bytes:
    """One ExecuteManyResponse.results entry for an item that failed: its tag and its status."""
    status = service_pb2.ItemStatus(
        code=error.code.value[0],
        message=error.message,
        field_violations=[
            service_pb2.FieldViolation(field=v.field, description=v.description) for v in error.violations
        ],
    ).SerializeToString()
    body = b"".join((_TAG, varint(tag), _STATUS, varint(len(status)), status))
    return b"".join((_FIELD1, varint(len(body)), body))


def resident_response(items: Sequence[bytes | Resident | None]) -> bytes:
    """The serialized ExecuteResponse of a resident call (kept outputs as ResidentTensors)."""
    outputs: list[service_pb2.BindingDesc] = []
    for item in items:
        if item is None:
            outputs.append(service_pb2.BindingDesc())
        elif isinstance(item, Resident):
            desc = tensor_pb2.TensorDesc.FromString(item.desc_bytes)
            outputs.append(service_pb2.BindingDesc(resident=service_pb2.ResidentTensor(handle=item.handle, desc=desc)))
        else:
            outputs.append(service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=item)))
    return service_pb2.ExecuteResponse(outputs=outputs).SerializeToString()
