"""The I/O half of both clients: one channel, its stub callables (made from the service descriptor, each wrapped
once so that failures raise ``DmlRpcError``), call metadata and deadlines; ``invoke`` sends a ``_calls.Call``."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any, ClassVar, TypeVar

from dmlrpc._calls import DEFAULT_WINDOW, SERVICE, WIRE_REQUESTS, WIRE_RESPONSES, Call, stream_window
from dmlrpc._channel import call_metadata
from dmlrpc.errors import DmlRpcError, wrap, wrap_async
from dmlrpc.handles import AsyncCompiledOperator, AsyncResidentTensor, CompiledOperator, ResidentTensor
from dmlrpc.v1 import service_pb2, tensor_pb2

__all__ = ["CLIENT_ID_KEY", "AsyncTransport", "Transport"]

T = TypeVar("T")

#: Call metadata naming this client (scopes its resident tensors where the server has no auth).
CLIENT_ID_KEY = "dmlrpc-client-id"

_ARITY = {(False, False): "unary_unary", (False, True): "unary_stream", (True, False): "stream_unary"}


class _Transport:
    """A channel's stub callables by method name, with the call metadata and the default deadline."""

    _asynchronous: ClassVar[bool] = False
    #: The handle classes this transport makes (resident tensor, compiled operator).
    _handles: ClassVar[tuple[type[Any], type[Any]]] = (ResidentTensor, CompiledOperator)

    def __init__(
        self,
        channel: Any,
        *,
        owns_channel: bool,
        timeout: float | None,
        token: str | None,
        stream_threshold_bytes: int,
    ) -> None:
        self.channel = channel
        self.owns_channel = owns_channel
        self.timeout = timeout
        # The random client id scopes this client's resident tensors on a server without auth (see the protocol).
        self.client_id = uuid.uuid4().hex
        self.metadata = (*call_metadata(token), (CLIENT_ID_KEY, self.client_id))
        self.stream_threshold_bytes = stream_threshold_bytes
        #: ExecuteMany's default window: the server's Limits.max_stream_items_in_flight, asked for once.
        self.window: int | None = None
        self.methods = {method.name: self._stub(method) for method in SERVICE.methods}

    def _stub(self, method: Any) -> Any:
        """The method's stub callable; requests and answers of WIRE_* methods stay bytes (``dmlrpc.wire``)."""
        make = getattr(self.channel, _ARITY.get((method.client_streaming, method.server_streaming), "stream_stream"))
        request = getattr(service_pb2, method.input_type.name)
        response = getattr(service_pb2, method.output_type.name)
        callable_ = make(
            f"/{SERVICE.full_name}/{method.name}",
            request_serializer=None if method.name in WIRE_REQUESTS else request.SerializeToString,
            response_deserializer=None if method.name in WIRE_RESPONSES else response.FromString,
            _registered_method=True,  # as the generated stubs do: the channel registers the path once
        )
        wrapper = wrap_async if self._asynchronous else wrap
        return wrapper(callable_, streaming=method.server_streaming)

    def resident(self, handle: str, desc: tensor_pb2.TensorDesc) -> Any:
        """A handle of this transport's kind to a tensor the server keeps."""
        return self._handles[0](self, handle, desc)

    def compiled(self, compiled: service_pb2.CompiledOperator) -> Any:
        """A handle of this transport's kind to an operator or graph the server compiled."""
        return self._handles[1](self, compiled)

    def open(self, call: Call[Any]) -> Any:
        """Start ``call`` on the channel (one whose ``choose`` was applied): its answer (blocking or awaitable), or
        its stream."""
        timeout = self.timeout if call.timeout is None else call.timeout
        return self.methods[call.method](call.request, timeout=timeout, metadata=self.metadata)


class Transport(_Transport):
    """The blocking transport of ``Client``; its handles are ``ResidentTensor`` and ``CompiledOperator``."""

    def invoke(self, call: Call[T]) -> T:
        """Send ``call`` and return its results."""
        if call.choose is not None:
            call = call.choose(self.stream_threshold_bytes)
        answer = self.open(call)
        if call.sink is not None:
            sink = call.sink()
            for message in answer:
                sink.add(message)
            answer = sink
        return call.read(answer, self)

    def stream_window(self) -> int:
        """ExecuteMany's default window, asked of the server once (DEFAULT_WINDOW when it cannot say)."""
        if self.window is None:
            with contextlib.suppress(DmlRpcError):
                self.window = self.invoke(stream_window())
        return self.window or DEFAULT_WINDOW

    def close(self) -> None:
        if self.owns_channel:
            self.channel.close()


class AsyncTransport(_Transport):
    """The asyncio transport of ``AsyncClient`` (a grpc.aio channel); its handles are the ``Async`` ones."""

    _asynchronous = True
    _handles = (AsyncResidentTensor, AsyncCompiledOperator)

    async def invoke(self, call: Call[T]) -> T:
        """Send ``call`` and return its results, awaited."""
        if call.choose is not None:
            call = call.choose(self.stream_threshold_bytes)
        if call.sink is None:
            return call.read(await self.open(call), self)
        sink = call.sink()
        async for message in self.open(call):
            sink.add(message)
        return call.read(sink, self)

    async def stream_window(self) -> int:
        """``Transport.stream_window``, awaited."""
        if self.window is None:
            with contextlib.suppress(DmlRpcError):
                self.window = await self.invoke(stream_window())
        return self.window or DEFAULT_WINDOW

    async def close(self) -> None:
        if self.owns_channel:
            await self.channel.close()
