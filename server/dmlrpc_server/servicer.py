"""The gRPC methods, thin: decode the request, make one domain call, encode the response."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc

from dmlrpc.v1 import service_pb2, service_pb2_grpc
from dmlrpc_server.executor import Executor


class DirectMLServicer(service_pb2_grpc.DirectMLServiceServicer):
    """Execute and GetCapabilities over an Executor."""

    def __init__(
        self,
        executor: Executor,
        capabilities: service_pb2.GetCapabilitiesResponse,
        workers: ThreadPoolExecutor,
        inline_bytes: int,
    ) -> None:
        self._executor = executor
        self._capabilities = capabilities
        self._workers = workers
        self._inline_bytes = inline_bytes

    async def Execute(  # noqa: N802 - gRPC method names are PascalCase
        self, request: service_pb2.ExecuteRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.ExecuteResponse:
        if request.ByteSize() <= self._inline_bytes:
            # NOTE: a thread hop costs more than a tiny operator; large ones run on workers (ORT frees the GIL).
            outputs = self._executor.execute(request.operator_desc, request.inputs)
        else:
            loop = asyncio.get_running_loop()
            outputs = await loop.run_in_executor(
                self._workers, self._executor.execute, request.operator_desc, request.inputs
            )
        return service_pb2.ExecuteResponse(
            outputs=[
                service_pb2.BindingDesc()
                if data is None
                else service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=data))
                for data in outputs
            ]
        )

    async def GetCapabilities(  # noqa: N802
        self, request: service_pb2.GetCapabilitiesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.GetCapabilitiesResponse:
        return self._capabilities
