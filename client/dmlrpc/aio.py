"""AsyncClient: the asyncio SDK over a grpc.aio channel."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, Iterable, Sequence
from typing import Any, Literal, overload

from dmlrpc._base import InputValue
from dmlrpc._client_operators import AsyncClientOperations
from dmlrpc._surface import BaseClient
from dmlrpc._transport import AsyncTransport
from dmlrpc.many import AsyncExecuteManyStream, Operator, Outputs, amap_ordered, amap_unordered

__all__ = ["AsyncClient"]

_Batches = Iterable[Sequence[InputValue]] | AsyncIterable[Sequence[InputValue]]


class AsyncClient(BaseClient[AsyncTransport], AsyncClientOperations):
    """asyncio dmlrpc client: the operations of ``Client``, awaited; the same arguments (see ``BaseClient``).

    Every failed call raises a ``dmlrpc.errors.DmlRpcError`` subclass, never a raw ``grpc.RpcError``.
    """

    _asynchronous = True

    def _drive(self, channel: Any, **settings: Any) -> AsyncTransport:
        return AsyncTransport(channel, **settings)

    async def close(self) -> None:
        """Close the channel if this client created it."""
        await self._transport.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @overload
    def map(
        self,
        operator: Operator,
        batches: _Batches,
        *,
        ordered: Literal[True] = True,
        window: int | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[Outputs, None]: ...

    @overload
    def map(
        self,
        operator: Operator,
        batches: _Batches,
        *,
        ordered: Literal[False],
        window: int | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[tuple[int, Outputs], None]: ...

    def map(
        self,
        operator: Operator,
        batches: _Batches,
        *,
        ordered: bool = True,
        window: int | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[Outputs, None] | AsyncGenerator[tuple[int, Outputs], None]:
        """``Client.map`` as an async generator: ``async for outputs in client.map(op, batches)``; ``batches`` may be
        an async iterable too. ``aclose()`` (or leaving the loop early) cancels the stream."""
        stream = self.stream(window=window, timeout=timeout)
        if ordered:
            return amap_ordered(stream, operator, batches)
        return amap_unordered(stream, operator, batches)

    def stream(self, *, window: int | None = None, timeout: float | None = None) -> AsyncExecuteManyStream:
        """Open an ExecuteMany stream: ``async with client.stream() as s: future = await s.submit(op, inputs)``
        (see ``Client.stream``); nothing is sent before ``async with`` or the first ``submit``."""
        return AsyncExecuteManyStream(self._transport, window=window, timeout=timeout)
