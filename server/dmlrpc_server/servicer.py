"""The gRPC methods, thin: decode the request, make one domain call, encode the response."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc

from dmlrpc.v1 import service_pb2
from dmlrpc_server.dispatch import Dispatcher

SERVICE_NAME = service_pb2.DESCRIPTOR.services_by_name["DirectMLService"].full_name


class DirectMLServicer:
    """Execute, ExecuteStream and GetCapabilities over a Dispatcher."""

    def __init__(self, dispatcher: Dispatcher, capabilities: service_pb2.GetCapabilitiesResponse) -> None:
        self._dispatcher = dispatcher
        self._capabilities = capabilities

    async def Execute(  # noqa: N802 - gRPC method names are PascalCase
        self, request: service_pb2.ExecuteRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.ExecuteResponse:
        outputs = await self._dispatcher.execute(request, context.time_remaining())
        return service_pb2.ExecuteResponse(
            outputs=[
                service_pb2.BindingDesc()
                if data is None
                else service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=data))
                for data in outputs
            ]
        )

    async def ExecuteStream(  # noqa: N802
        self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        # Registered with raw (de)serializers (see `handlers`): chunks are read and written as wire bytes.
        async for part in self._dispatcher.execute_stream(request_iterator, context.time_remaining()):
            yield part

    async def GetCapabilities(  # noqa: N802
        self, request: service_pb2.GetCapabilitiesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.GetCapabilitiesResponse:
        return self._capabilities


def handlers(servicer: DirectMLServicer) -> grpc.GenericRpcHandler:
    """The service's method handlers: protobuf messages for the unary methods, wire bytes for ExecuteStream."""
    request, response = service_pb2.ExecuteRequest, service_pb2.ExecuteResponse
    capabilities_request, capabilities = service_pb2.GetCapabilitiesRequest, service_pb2.GetCapabilitiesResponse
    return grpc.method_handlers_generic_handler(
        SERVICE_NAME,
        {
            "Execute": grpc.unary_unary_rpc_method_handler(
                servicer.Execute,
                request_deserializer=request.FromString,
                response_serializer=response.SerializeToString,
            ),
            "GetCapabilities": grpc.unary_unary_rpc_method_handler(
                servicer.GetCapabilities,
                request_deserializer=capabilities_request.FromString,
                response_serializer=capabilities.SerializeToString,
            ),
            "ExecuteStream": grpc.stream_stream_rpc_method_handler(servicer.ExecuteStream),
        },
    )
