"""gRPC method handlers made from a service's descriptor: one per method, of its call kind, protobuf or wire bytes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message

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
) -> grpc.GenericRpcHandler:
    """The handler of every method of ``service``, each the servicer's method of that name: requests read by
    ``parse(request class)`` and responses serialized, except for the methods named in ``wire_requests`` and
    ``wire_responses``, which read or write wire bytes themselves (no (de)serializer: the bytes as they travel)."""
    methods: dict[str, grpc.RpcMethodHandler] = {}
    for method in service.methods:
        request = message_factory.GetMessageClass(method.input_type)
        response = message_factory.GetMessageClass(method.output_type)
        methods[method.name] = KINDS[method.client_streaming, method.server_streaming](
            getattr(servicer, method.name),
            request_deserializer=None if method.name in wire_requests else parse(request),
            response_serializer=None if method.name in wire_responses else response.SerializeToString,
        )
    return grpc.method_handlers_generic_handler(service.full_name, methods)


class WrappedOnce:
    """An interceptor's wrapped handlers, made once per method: wrapping costs more than a tiny operator, and a
    method's handler rarely changes (a new one is wrapped anew)."""

    def __init__(self, wrap: Callable[[grpc.RpcMethodHandler, str], grpc.RpcMethodHandler]) -> None:
        self._wrap = wrap
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def get(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """``handler`` of ``method``, wrapped."""
        known = self._wrapped.get(method)
        if known is None or known[0] is not handler:
            known = self._wrapped[method] = (handler, self._wrap(handler, method))
        return known[1]


class WrappingInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc] # grpc ships no type stubs
    """An interceptor that wraps every method's handler, once per method (``wrap``)."""

    def __init__(self) -> None:
        self._wrapped = WrappedOnce(self.wrap)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        return None if handler is None else self._wrapped.get(handler_call_details.method, handler)

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        """``handler`` of ``method``, wrapped."""
        raise NotImplementedError
