"""Stage 1 and its writer: the ``Call`` that flows through the stages, read from a request, its reply written."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from google.protobuf.message import DecodeError, Message

from dmlrpc.v1 import service_pb2, tensor_pb2
from dmlrpc.wire import read_varint, varint
from dmlrpc_server.errors import InvalidArgument, ServiceError
from dmlrpc_server.runtime.resident import Resident

M = TypeVar("M", bound=Message)

_LEN = 2  # wire type of a length-delimited field
_OPERATOR_DESC = 1 << 3 | _LEN  # ExecuteRequest.operator_desc
_INPUTS = 2 << 3 | _LEN  # ExecuteRequest.inputs (BindingDesc)
_BUFFER = 1 << 3 | _LEN  # BindingDesc.buffer (BufferBinding); BufferBinding.data is the same tag
_BUFFER_HEADS = (_BUFFER, _BUFFER)  # an input's: BindingDesc.buffer, then BufferBinding.data

_UNSET_BINDING = b"\x0a\x00"  # ExecuteResponse.outputs (field 1) holding an empty BindingDesc
_FIELD1 = b"\x0a"  # field 1, length-delimited: ExecuteResponse.outputs, BindingDesc.buffer, BufferBinding.data
_TAG = b"\x08"  # ItemResult.tag: field 1, varint
_STATUS = b"\x12"  # ItemResult.status: field 2, length-delimited
_RESPONSE = b"\x1a"  # ItemResult.response: field 3, length-delimited

#: One output binding, encoded: a buffer's bytes (or a view of them, or a C-contiguous array that is them), a tensor
#: array's buffers, or ``None`` (unset).
Encoded = bytes | memoryview | np.ndarray | list[bytes | None] | None
Request = service_pb2.ExecuteRequest | service_pb2.DispatchRequest


@dataclass(eq=False, slots=True)
class Call:
    """One Execute, Dispatch or ExecuteMany item on its way through the stages: what the reader found, and what the
    stages found that the writer needs.

    ``desc`` is the operator desc's bytes as the client sent them (the plan's lookup key) and ``buffers`` the plain
    buffer bindings as views of the request's bytes, when the request has the common form; otherwise ``request`` is
    the parsed message (its desc, handle, bindings and kept outputs).
    """

    desc: bytes | None
    buffers: list[memoryview | None] | None
    #: The request's bytes (a metric, and the common form's fallback to protobuf).
    size: int
    deadline: float | None = None
    arrived: float = 0.0
    request: Request | None = None
    raw: bytes = b""
    #: The caller (who owns handles and resident tensors); set only where the call names any.
    owner: str = ""
    #: Whether the call binds resident tensors or keeps outputs (it then runs as one job, never batched).
    resident: bool = False
    #: Keep the call's whole memory reservation until its result is written (ExecuteMany items), not only a large
    #: response's.
    hold: bool = False
    #: Its admission slot is held for it (an ExecuteMany message's items share one: they batch together).
    admitted: bool = False
    # -- found by the stages, read by the writer -----------------------------------------------------------------
    #: The operator case (or "graph"): the interceptor's label.
    label: str = ""
    #: The providers that ran the operator when the server's own did not run all of it (the fallback trailer).
    executed_on: str = ""
    #: Bytes of call memory still reserved when the reply is returned: released once the reply is written.
    held: int = 0
    #: Gives ``held`` bytes back to the call memory they were reserved in (set with ``held``).
    release: Callable[[int], object] | None = None
    #: The output bytes the call sends back when not all its outputs are (kept outputs stay resident); -1: all.
    sent: int = -1


#: The call the interceptor ends (its log line, its metrics label, the ``dmlrpc-executed-on`` trailer and the memory
#: its reply holds until written): the servicer sets it as soon as it has read an Execute or Dispatch call.
CALL: ContextVar[Call | None] = ContextVar("dmlrpc_call", default=None)


def read_execute(raw: bytes, time_remaining: float | None = None) -> Call | None:
    """The call in ``raw`` (a serialized ExecuteRequest) when it has the common form, else ``None``: resident or
    array bindings, kept outputs, unknown or repeated fields and anything malformed are left to protobuf.

    NOTE: upb copies every bytes field it parses and again on every access, and the desc would be serialized
    once more for the cache key; reading the few fields of the common form by hand copies nothing.
    """
    view = memoryview(raw)
    end = len(raw)
    desc: bytes | None = None
    buffers: list[memoryview | None] = []
    offset = 0
    # NOTE: one loop, written out (no field reader, no tuples): this is every tiny call's stage 1. Heads are read
    # from ``raw`` (indexing bytes is cheaper than a memoryview); one-byte lengths inline, longer ones by read_varint.
    try:
        while offset < end:
            tag, size, start = raw[offset], raw[offset + 1], offset + 2
            if size > 0x7F:
                size, start = read_varint(view, offset + 1)
            stop = start + size
            if stop > end:
                return None
            if tag == _INPUTS:
                if size == 0:
                    buffers.append(None)  # an unset binding
                else:
                    # A BindingDesc holding only its buffer (a BufferBinding) holding only its data: two heads, each
                    # field 1 and each running to the binding's end.
                    data = start
                    for head in _BUFFER_HEADS:
                        if raw[data] != head:
                            return None
                        size, data = raw[data + 1], data + 2
                        if size > 0x7F:
                            size, data = read_varint(view, data - 1)
                        if data + size != stop:
                            return None
                        if size == 0:
                            break  # an empty buffer (BufferBinding.data unset)
                    buffers.append(view[data:stop])
            elif tag == _OPERATOR_DESC and desc is None:
                desc = raw[start:stop]
            else:
                return None
            offset = stop
    except (IndexError, ValueError):
        return None
    if desc is None:
        return None
    arrived = time.monotonic()
    deadline = None if time_remaining is None else arrived + time_remaining
    return Call(desc, buffers, len(raw), deadline, arrived, None, raw)


def read_request(request: Request, size: int, deadline: float | None, owner: str = "") -> Call:
    """An Execute or Dispatch call in its protobuf form (``size``: its bytes, a metric)."""
    resident = bool(request.keep_outputs) or any(b.WhichOneof("binding") == "resident" for b in request.inputs)
    return Call(None, None, size, deadline, time.monotonic(), request, owner=owner, resident=resident)


def deadline_of(time_remaining: float | None) -> float | None:
    """The monotonic deadline of a call with ``time_remaining`` seconds left (None: none)."""
    return None if time_remaining is None else time.monotonic() + time_remaining


def parse(message: type[M], raw: bytes) -> M:
    """``raw`` parsed as ``message``, or INVALID_ARGUMENT (never UNKNOWN) when it is not valid protobuf."""
    try:
        return message.FromString(raw)
    except DecodeError as error:
        raise InvalidArgument("request", f"the message is not valid protobuf for this method: {error}") from None


def operator_case(raw: bytes) -> str:
    """The operator case of a serialized ExecuteRequest (``""`` when it names none): a label for calls that ended
    before the service read them (refused by auth, say)."""
    try:
        request = service_pb2.ExecuteRequest.FromString(raw)
    except DecodeError:
        return ""
    return request.operator_desc.WhichOneof("desc") or "unset"


# -- the writer ------------------------------------------------------------------------------------------------------


def write_execute(outputs: Sequence[Encoded]) -> bytes:
    """The serialized ExecuteResponse of a call's outputs (the bytes protobuf would write for the same message),
    joined once from the output buffers.

    NOTE: building BindingDesc and BufferBinding objects and serializing them costs more than a tiny operator, and
    copies each buffer twice; a buffer binding is three length prefixes in front of the data.
    """
    parts: list[bytes | memoryview | np.ndarray] = []
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
            # NOTE: bytes.join reads a C-contiguous array's bytes as it reads a memoryview's (the buffer protocol)
            parts += (_buffer_framing(len(item) if isinstance(item, bytes) else item.nbytes), item)
    return b"".join(parts)  # type: ignore[arg-type]  # NumPy's stubs lack __buffer__


@functools.lru_cache(maxsize=1024)
def _buffer_framing(length: int) -> bytes:
    """What goes in front of ``length`` data bytes in an ExecuteResponse output: the output's tag and length (a
    BindingDesc), its buffer's (a BufferBinding) and the data's; a plan's outputs have the same few lengths."""
    data_header = _FIELD1 + varint(length)
    buffer_size = len(data_header) + length
    buffer_header = _FIELD1 + varint(buffer_size)
    return _FIELD1 + varint(len(buffer_header) + buffer_size) + buffer_header + data_header


def write_resident(items: Sequence[bytes | Resident | None]) -> bytes:
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
