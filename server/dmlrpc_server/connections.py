"""Calls of one client connection: a bounded number run at once; more wait, or are refused."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from dmlrpc_server.handlers import KINDS, HandlerWrapper
from dmlrpc_server.runtime.admission import Admission

#: Calls of one connection that may wait for one of its open calls to end, per call it may have open.
WAITING_PER_OPEN = 4
#: Connections remembered at least: a connection's slots outlive its calls, so that one call at a time on it makes
#: none anew; past this many (or twice as many as the last sweep left) the idle ones are forgotten.
IDLE_CONNECTIONS = 256


class _Slots(Admission):
    """One connection's slots, counted also in ``open_calls`` of all connections."""

    def __init__(self, connections: ConnectionLimitInterceptor) -> None:
        super().__init__(
            connections.max_open,
            connections.max_open * WAITING_PER_OPEN,
            limits=f"the limit --max-streams-per-connection, {WAITING_PER_OPEN} times as many may wait",
            scope=" on this connection",
        )
        self._connections = connections

    def try_acquire(self) -> bool:
        if super().try_acquire():
            self._connections.open_calls += 1
            return True
        return False

    def release(self) -> None:
        running = self.running
        super().release()
        self._connections.open_calls -= running - self.running  # 0 when the slot passed to a waiting call


class ConnectionLimitInterceptor(HandlerWrapper):
    """Admits at most ``max_open`` calls of one client connection at once; up to ``WAITING_PER_OPEN`` times as many
    more wait for one of them to end (FIFO), holding no running slot (a streaming one reads none of its messages
    meanwhile); beyond that a call ends RESOURCE_EXHAUSTED naming --max-streams-per-connection.

    The limit is ours, not HTTP/2's: a server's SETTINGS_MAX_CONCURRENT_STREAMS is not enforced in step with the
    client's count of open streams, so a client at the limit gets streams refused (RST_STREAM REFUSED_STREAM, which
    clients surface as UNAVAILABLE). A connection is known by its peer address; its slots stay while it is idle
    (``IDLE_CONNECTIONS``).

    A call of one response may start before it takes its slot, while no connection is at its limit
    (``open_calls < max_open``): one its handler answers at once (the response, not an awaitable) was the only thing
    running on the event loop from its start to its end, so a slot taken and given back around it could change
    nothing that anything else sees; any other takes its slot before it is awaited (free: nothing ran meanwhile).
    """

    def __init__(self, max_open: int) -> None:
        self.max_open = max_open
        #: Calls admitted now, over all connections.
        self.open_calls = 0
        self._connections: dict[str, _Slots] = {}
        self._sweep_at = IDLE_CONNECTIONS  # NOTE: grows with the busy connections: sweeps stay O(1) a call, amortised

    @property
    def remembered(self) -> int:
        """Connections whose slots are kept now, busy or idle."""
        return len(self._connections)

    @property
    def waiting_calls(self) -> int:
        """Calls waiting now for one of their connection's calls to end, over all connections."""
        return sum(connection.waiting for connection in self._connections.values())

    def take(self, peer: str) -> Admission | None:
        """The connection's slots with one of them taken, when one is free now (most calls; no coroutine); None
        when the call must ``enter``. Give the slot back with ``leave``."""
        connection = self._connections.get(peer)
        if connection is None:
            connection = self._connections[peer] = _Slots(self)
        if connection.try_acquire():
            return connection
        return None

    async def enter(self, peer: str) -> Admission:
        """The connection's slots, one of them taken once one is free (after ``take`` found none)."""
        connection = self._connections[peer]
        try:
            await connection.acquire(None)
        except BaseException:
            self._forget_if_idle(peer, connection)
            raise
        return connection

    def leave(self, peer: str, connection: Admission) -> None:
        """Give back the slot ``take`` or ``enter`` took."""
        connection.release()
        if len(self._connections) > self._sweep_at:
            self._forget_idle()

    def _forget_if_idle(self, peer: str, connection: Admission) -> None:
        if connection.running == 0 and connection.waiting == 0 and self._connections.get(peer) is connection:
            del self._connections[peer]

    def _forget_idle(self) -> None:
        for peer, connection in list(self._connections.items()):
            self._forget_if_idle(peer, connection)
        self._sweep_at = max(IDLE_CONNECTIONS, 2 * len(self._connections))

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        """A handler of the same shape as ``handler`` that runs it holding one of its connection's slots."""
        kwargs = {
            "request_deserializer": handler.request_deserializer,
            "response_serializer": handler.response_serializer,
        }
        inner = next(
            behaviour
            for behaviour in (handler.unary_unary, handler.unary_stream, handler.stream_unary, handler.stream_stream)
            if behaviour is not None
        )
        if inspect.isasyncgenfunction(inner):

            async def limited_stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
                peer = context.peer()
                connection = self.take(peer) or await self.enter(peer)
                try:
                    async for response in inner(request, context):
                        yield response
                finally:
                    self.leave(peer, connection)

            behaviour: Callable[..., Any] = limited_stream
        elif inspect.iscoroutinefunction(inner):  # also a streaming handler that writes with context.write

            async def limited_call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                peer = context.peer()
                connection = self.take(peer) or await self.enter(peer)
                try:
                    return await inner(request, context)
                finally:
                    self.leave(peer, connection)

            behaviour = limited_call
        else:
            return handler  # NOTE: a synchronous handler would run on a thread pool; the server registers none
        return KINDS[bool(handler.request_streaming), bool(handler.response_streaming)](behaviour, **kwargs)
