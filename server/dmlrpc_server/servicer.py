"""The gRPC methods, thin: decode the request, make one domain call, encode the response."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from dmlrpc.v1 import service_pb2, tensor_pb2
from dmlrpc_server.calls import CALL, deadline_of, parse, read_execute, read_request
from dmlrpc_server.errors import Unimplemented
from dmlrpc_server.handlers import Corrupt, decoded, method_handlers, tolerant
from dmlrpc_server.runtime.handles import Handle
from dmlrpc_server.runtime.resident import Resident
from dmlrpc_server.security import caller_identity
from dmlrpc_server.service import Service

SERVICE = service_pb2.DESCRIPTOR.services_by_name["DirectMLService"]
SERVICE_NAME = SERVICE.full_name
#: The methods registered without serializers because the service reads their requests (calls.py, streams.py) or
#: writes their responses (responses.py, streams.py) as wire bytes: no protobuf objects on their common path.
WIRE_REQUESTS = frozenset({"Execute", "ExecuteMany", "ExecuteStream", "CreateTensor"})
WIRE_RESPONSES = frozenset({"Execute", "ExecuteMany", "ExecuteStream", "ReadTensor", "Dispatch"})
#: Publishes a caller's compiled handle as an Open Inference Protocol model: (owner, handle, model name,
#: max_batch_size) -> the version it is served as (``oip.repository.Repository.publish``).
Publish = Callable[[str, str, str, int], int]


class DirectMLServicer:
    """The DirectMLService methods over a Service."""

    def __init__(
        self,
        service: Service,
        capabilities: service_pb2.GetCapabilitiesResponse,
        *,
        authenticated: bool = False,
        publish: Publish | None = None,
    ) -> None:
        self._service = service
        self._capabilities = capabilities
        self._authenticated = authenticated
        self._publish = publish

    def _owner(self, context: grpc.aio.ServicerContext[Any, Any]) -> str:
        return caller_identity(context.invocation_metadata(), context.peer(), authenticated=self._authenticated)

    def Execute(  # noqa: N802 - gRPC method names are PascalCase
        self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes | Awaitable[bytes]:
        # Registered without serializers (see `handlers`): the common form of a call is read from its wire bytes,
        # and the service writes the response's bytes. Not a coroutine of its own (the tiny call's frames are few):
        # the response itself where the call ran at once, else what awaits to it; the call's end (the interceptor)
        # takes either, and finds the call in CALL.
        call = read_execute(request, context.time_remaining())
        if call is None:
            decoded = parse(service_pb2.ExecuteRequest, request)
            call = read_request(decoded, len(request), deadline_of(context.time_remaining()))
            call.label = decoded.operator_desc.WhichOneof("desc") or "unset"
            if call.resident:
                call.owner = self._owner(context)
        CALL.set(call)
        return self._service.execute(call)

    async def ExecuteMany(  # noqa: N802
        self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        # Registered without serializers: the service reads each message's size (its window counts bytes) and
        # writes the results' bytes.
        async for part in self._service.execute_many(
            _sized(request_iterator), self._owner(context), context.time_remaining()
        ):
            yield part

    async def ExecuteStream(  # noqa: N802
        self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        # Registered with raw (de)serializers (see `handlers`): chunks are read and written as wire bytes.
        async for part in self._service.execute_stream(request_iterator, context.time_remaining()):
            yield part

    async def CreateTensor(  # noqa: N802
        self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.ResidentTensor:
        return _resident(await self._service.create_tensor(request_iterator, self._owner(context)))

    async def ReadTensor(  # noqa: N802
        self, request: service_pb2.ReadTensorRequest | Corrupt, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        async for part in self._service.read_tensor(decoded(request).handle, self._owner(context)):
            yield part

    async def ReleaseTensor(  # noqa: N802
        self, request: service_pb2.ReleaseTensorRequest | Corrupt, context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.ReleaseTensorResponse:
        self._service.release_tensor(decoded(request).handle, self._owner(context))
        return service_pb2.ReleaseTensorResponse()

    async def CompileOperator(  # noqa: N802
        self, request: service_pb2.CompileOperatorRequest | Corrupt, context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.CompiledOperator:
        return _compiled(await self._service.compile_operator(decoded(request), self._owner(context)))

    async def CompileGraph(  # noqa: N802
        self, request: service_pb2.CompileGraphRequest | Corrupt, context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.CompiledOperator:
        return _compiled(await self._service.compile_graph(decoded(request), self._owner(context)))

    def Dispatch(  # noqa: N802
        self, request: service_pb2.DispatchRequest | Corrupt, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes | Awaitable[bytes]:
        # As Execute: the response or what awaits to it; the interceptor finds the call in CALL.
        dispatch = decoded(request)
        call = read_request(dispatch, dispatch.ByteSize(), deadline_of(context.time_remaining()), self._owner(context))
        CALL.set(call)
        return self._service.execute(call)

    async def ReleaseCompiledOperator(  # noqa: N802
        self,
        request: service_pb2.ReleaseCompiledOperatorRequest | Corrupt,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> service_pb2.ReleaseCompiledOperatorResponse:
        self._service.release_compiled(decoded(request).handle, self._owner(context))
        return service_pb2.ReleaseCompiledOperatorResponse()

    async def PublishModel(  # noqa: N802
        self, request: service_pb2.PublishModelRequest | Corrupt, context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.PublishModelResponse:
        publish = decoded(request)
        self._service.scheduler.gate()
        if self._publish is None:
            raise Unimplemented("this server does not serve the Open Inference Protocol, so it cannot publish models")
        version = self._publish(self._owner(context), publish.handle, publish.model_name, publish.max_batch_size)
        return service_pb2.PublishModelResponse(model_name=publish.model_name, model_version=str(version))

    async def GetCapabilities(  # noqa: N802
        self, request: service_pb2.GetCapabilitiesRequest | Corrupt, context: grpc.aio.ServicerContext[Any, Any]
    ) -> service_pb2.GetCapabilitiesResponse:
        decoded(request)
        return self._capabilities


def _resident(tensor: Resident) -> service_pb2.ResidentTensor:
    return service_pb2.ResidentTensor(handle=tensor.handle, desc=tensor_pb2.TensorDesc.FromString(tensor.desc_bytes))


def _compiled(entry: Handle) -> service_pb2.CompiledOperator:
    return service_pb2.CompiledOperator(
        handle=entry.handle, input_descs=entry.input_descs, output_descs=entry.output_descs
    )


async def _sized(messages: AsyncIterator[bytes]) -> AsyncIterator[tuple[service_pb2.ExecuteManyRequest, int]]:
    async for raw in messages:
        yield parse(service_pb2.ExecuteManyRequest, raw), len(raw)


def handlers(servicer: DirectMLServicer) -> dict[str, grpc.RpcMethodHandler]:
    """The service's method handlers by path, from its descriptor: protobuf requests and responses, and wire bytes
    for the messages the service reads (WIRE_REQUESTS) or writes (WIRE_RESPONSES) itself."""
    return method_handlers(
        SERVICE, servicer, parse=tolerant, wire_requests=WIRE_REQUESTS, wire_responses=WIRE_RESPONSES
    )
