"""gRPC method handlers made from a service's descriptor, and the server's one generic handler serving them wrapped."""

from __future__ import annotations

import abc
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import DecodeError, Message

from dmlrpc_server.errors import InvalidArgument

M = TypeVar("M", bound=Message)

#: The grpc factory of each call kind: (request streaming, response streaming) -> factory.
KINDS: Mapping[tuple[bool, bool], Callable[..., grpc.RpcMethodHandler]] = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
}


def method_handlers(
    service: ServiceDescriptor,
    servicer: object,
    *,
    parse: Callable[[type[Message]], Callable[[bytes], Any]],
    wire_requests: Collection[str] = (),
    wire_responses: Collection[str] = (),
) -> dict[str, grpc.RpcMethodHandler]:
    """The handler of every method of ``service`` by its path (``/package.Service/Method``), each the servicer's
    method of that name: requests read by ``parse(request class)`` and responses serialized, except for the methods
    named in ``wire_requests`` and ``wire_responses``, which read or write wire bytes themselves (no (de)serializer:
    the bytes as they travel). A method the servicer lacks is left out (gRPC answers it UNIMPLEMENTED)."""
    methods: dict[str, grpc.RpcMethodHandler] = {}
    for method in service.methods:
        behaviour = getattr(servicer, method.name, None)
        if behaviour is None:
            continue
        request = message_factory.GetMessageClass(method.input_type)
        response = message_factory.GetMessageClass(method.output_type)
        methods[method_path(service.full_name, method.name)] = KINDS[method.client_streaming, method.server_streaming](
            behaviour,
            request_deserializer=None if method.name in wire_requests else parse(request),
            response_serializer=None if method.name in wire_responses else response.SerializeToString,
        )
    return methods


def method_path(service: str, method: str) -> str:
    """The path gRPC names a method by: ``/package.Service/Method``."""
    return f"/{service}/{method}"


@dataclass(frozen=True)
class Corrupt:
    """A request whose bytes are not a valid message (handed to the method so that the answer is INVALID_ARGUMENT:
    a deserializer that raises makes gRPC answer UNKNOWN, which clients cannot tell from a server fault)."""

    error: str


def tolerant(message: type[M]) -> Callable[[bytes], M | Corrupt]:
    """A request deserializer (``method_handlers``' ``parse``) that hands bad bytes on as ``Corrupt``."""

    def parse(data: bytes) -> M | Corrupt:
        try:
            return message.FromString(data)
        except DecodeError as error:
            return Corrupt(str(error))

    return parse


def decoded(request: M | Corrupt) -> M:
    """The request a method was given, or INVALID_ARGUMENT where its bytes were not the message."""
    if isinstance(request, Corrupt):
        raise InvalidArgument("request", f"the message is not valid protobuf for this method: {request.error}")
    return request


class HandlerWrapper(abc.ABC):
    """Something every call goes through (its end, its connection's limit, its span), wrapped around each method's
    handler once, when the server starts (``wrap``); ``passes`` names the handlers it leaves as they are."""

    @abc.abstractmethod
    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        """``handler`` of ``method``, wrapped."""

    def passes(self, handler: grpc.RpcMethodHandler, method: str) -> bool:
        """Whether ``handler`` of ``method`` is served unwrapped; none is, unless a subclass says so."""
        return False


class Gate(abc.ABC):
    """A check made on a call's headers before any byte of its request is read (bearer tokens)."""

    @abc.abstractmethod
    def admits(self, method: str, metadata: Sequence[tuple[str, str | bytes]] | None) -> bool:
        """Whether a call of ``method`` with these headers runs its handler."""

    @abc.abstractmethod
    def refusing(self, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """A handler of ``handler``'s shape for a call not admitted: it answers, and runs nothing of the method."""


@dataclass(frozen=True, slots=True)
class _Served:
    handler: grpc.RpcMethodHandler
    refused: grpc.RpcMethodHandler | None  # None: the server has no gate


class ServedMethods(grpc.GenericRpcHandler):  # type: ignore[misc] # grpc ships no type stubs
    """The server's one generic handler: every method of every service, its handler wrapped once by ``wrappers``
    (the first outermost) when added.

    Wrapping here rather than in gRPC interceptors keeps the per-call cost to one lookup: grpc.aio runs an awaited
    chain through every interceptor on every call, before the handler starts. A ``gate`` decides on the call's headers
    alone, in that lookup, whether the call gets its method or the gate's refusal (wrapped the same way, so a refused
    call ends, logs and counts like any other)."""

    def __init__(self, wrappers: Sequence[HandlerWrapper], gate: Gate | None = None) -> None:
        self._wrappers = tuple(wrappers)
        self._gate = gate
        self._methods: dict[str, _Served] = {}

    def add(self, methods: Mapping[str, grpc.RpcMethodHandler]) -> None:
        """Serve ``methods`` (handlers by path); a path already served is replaced."""
        for path, handler in methods.items():
            refused = None if self._gate is None else self._wrapped(self._gate.refusing(handler), path)
            self._methods[path] = _Served(self._wrapped(handler, path), refused)

    def _wrapped(self, handler: grpc.RpcMethodHandler, path: str) -> grpc.RpcMethodHandler:
        for wrapper in reversed(self._wrappers):
            if not wrapper.passes(handler, path):
                handler = wrapper.wrap(handler, path)
        return handler

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        served = self._methods.get(handler_call_details.method)
        if served is None:
            return None
        gate = self._gate
        if gate is not None and not gate.admits(handler_call_details.method, handler_call_details.invocation_metadata):
            return served.refused
        return served.handler
