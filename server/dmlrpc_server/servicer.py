"""The gRPC methods, thin: decode the request, make one domain call, encode the response."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc

from dmlrpc.v1 import service_pb2, service_pb2_grpc
from dmlrpc_server.dispatch import Dispatcher


class DirectMLServicer(service_pb2_grpc.DirectMLServiceServicer):
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
        self,
        request_iterator: AsyncIterator[service_pb2.ExecuteStreamRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[service_pb2.ExecuteStreamResponse]:
        async for part in self._dispatcher.execute_stream(request_iterator, context.time_remaining()):
            yield part

    async def GetCapabilities(  # noqa: N802
        self, request: service_pb2.GetCapabilitiesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.GetCapabilitiesResponse:
        return self._capabilities
