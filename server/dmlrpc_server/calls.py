"""Stage 1 of the request path: an ExecuteRequest read from its wire bytes, its buffers as views, nothing copied."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from google.protobuf.message import DecodeError, Message

from dmlrpc.v1 import service_pb2
from dmlrpc.wire import read_varint
from dmlrpc_server.errors import InvalidArgument

M = TypeVar("M", bound=Message)

#: The operator case of the call being handled, for the interceptor's log line and metrics labels (a request read
#: from its wire bytes has no parsed desc to ask).
OPERATOR: ContextVar[str] = ContextVar("dmlrpc_operator", default="")
#: The providers that ran the call's operator when its own provider did not run all of it (``Compiled.executed_on``):
#: the interceptor sends it back as the ``dmlrpc-executed-on`` trailer.
EXECUTED_ON: ContextVar[str] = ContextVar("dmlrpc_executed_on", default="")

_LEN = 2  # wire type of a length-delimited field
_OPERATOR_DESC = 1 << 3 | _LEN  # ExecuteRequest.operator_desc
_INPUTS = 2 << 3 | _LEN  # ExecuteRequest.inputs (BindingDesc)
_BUFFER = 1 << 3 | _LEN  # BindingDesc.buffer (BufferBinding); BufferBinding.data is the same tag


class _Uncommon(Exception):
    """The request is not in the common form: protobuf reads it."""


@dataclass(frozen=True)
class ExecuteCall:
    """An Execute call in its common form: one desc and plain buffer bindings (or unset ones).

    ``desc`` is the operator desc's bytes as the client sent them (the key of the prepared-plan lookup), and each
    buffer a view into the request's own bytes.
    """

    desc: bytes
    buffers: list[memoryview | None]
    size: int


def read_execute(raw: bytes) -> ExecuteCall | None:
    """The call in ``raw`` (a serialized ExecuteRequest) when it has the common form, else ``None``: resident or
    array bindings, kept outputs, unknown or repeated fields and anything malformed are left to protobuf.

    NOTE: upb copies every bytes field it parses and again on every access, and the desc would be serialized
    once more for the cache key; reading the few fields of the common form by hand copies nothing.
    """
    view = memoryview(raw)
    end = len(view)
    offset = 0
    desc: bytes | None = None
    buffers: list[memoryview | None] = []
    try:
        while offset < end:
            tag = view[offset]
            size, start = read_varint(view, offset + 1)
            stop = start + size
            if stop > end:
                return None
            if tag == _OPERATOR_DESC and desc is None:
                desc = bytes(view[start:stop])
            elif tag == _INPUTS:
                buffers.append(_buffer(view, start, stop))
            else:
                return None
            offset = stop
    except (IndexError, ValueError, _Uncommon):
        return None
    if desc is None:
        return None
    return ExecuteCall(desc, buffers, end)


def _buffer(view: memoryview, start: int, stop: int) -> memoryview | None:
    """A BindingDesc's buffer bytes, or ``None`` for an unset binding.

    Raises:
        _Uncommon: the binding is not a plain buffer (an array, a resident tensor, unknown fields).
    """
    if start == stop:
        return None
    if view[start] != _BUFFER:
        raise _Uncommon
    size, inner = read_varint(view, start + 1)
    if inner + size != stop:
        raise _Uncommon
    if size == 0:
        return view[inner:inner]  # an empty buffer: BufferBinding.data unset
    if view[inner] != _BUFFER:
        raise _Uncommon
    length, data = read_varint(view, inner + 1)
    if data + length != stop:
        raise _Uncommon
    return view[data:stop]


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
