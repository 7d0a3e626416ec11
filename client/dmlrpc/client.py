"""Client: the blocking SDK over a gRPC channel."""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Any, Literal, overload

from dmlrpc._base import InputValue
from dmlrpc._client_operators import ClientOperations
from dmlrpc._surface import BaseClient
from dmlrpc._transport import Transport
from dmlrpc.many import ExecuteManyStream, Operator, Outputs, map_ordered, map_unordered

__all__ = ["Client"]


class Client(BaseClient[Transport], ClientOperations):
    """Blocking dmlrpc client; its arguments are ``BaseClient``'s (target, channel, timeout, tls, token, retry,
    keepalive, load_balancing, stream_threshold_bytes, options), its operations too (``execute``, ``upload``,
    ``compile``, ``top_k``, ...), each a blocking call here.

    Every failed call raises a ``dmlrpc.errors.DmlRpcError`` subclass, never a raw ``grpc.RpcError``.
    """

    def _drive(self, channel: Any, **settings: Any) -> Transport:
        return Transport(channel, **settings)

    def close(self) -> None:
        """Close the channel if this client created it."""
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @overload
    def map(
        self,
        operator: Operator,
        batches: Iterable[Sequence[InputValue]],
        *,
        ordered: Literal[True] = True,
        window: int | None = None,
        timeout: float | None = None,
    ) -> Generator[Outputs, None, None]: ...

    @overload
    def map(
        self,
        operator: Operator,
        batches: Iterable[Sequence[InputValue]],
        *,
        ordered: Literal[False],
        window: int | None = None,
        timeout: float | None = None,
    ) -> Generator[tuple[int, Outputs], None, None]: ...

    def map(
        self,
        operator: Operator,
        batches: Iterable[Sequence[InputValue]],
        *,
        ordered: bool = True,
        window: int | None = None,
        timeout: float | None = None,
    ) -> Generator[Outputs, None, None] | Iterator[tuple[int, Outputs]]:
        """Run ``operator`` on every input list of ``batches`` over one ExecuteMany stream.

        Items travel several per message, and the server batches items of one desc that are in flight together,
        so many small calls cost far less than one Execute each. The stream opens on the first ``next()``; closing
        the iterator (or leaving a ``for`` loop early) cancels it. Each item travels whole in one message, so
        tensors beyond the server's message limit need ``execute`` (which streams them).

        Args:
            operator: an operator desc (Execute items) or a ``CompiledOperator`` (Dispatch items).
            batches: one input list per item, each as ``execute`` (or the compiled operator's call) takes it; read
                lazily, never more than ``window`` lists ahead of the results taken.
            ordered: yield each item's outputs in input order (``True``), or ``(index, outputs)`` as items finish.
            window: most items unanswered at once (defaults to the server's ``max_stream_items_in_flight``).
            timeout: deadline in seconds for the whole stream (defaults to the client's).

        Yields:
            Each item's outputs, as ``execute`` returns them.

        Raises:
            DmlRpcError: an item failed (the error its unary call raises, with the same field paths): with
                ``ordered=True`` at that item's position, after the outputs of every item before it. The stream is
                then cancelled; use ``stream()`` to go on past failed items.
        """
        if ordered:
            return map_ordered(lambda: self.stream(window=window, timeout=timeout), operator, batches)
        return map_unordered(lambda: self.stream(window=window, timeout=timeout), operator, batches)

    def stream(self, *, window: int | None = None, timeout: float | None = None) -> ExecuteManyStream:
        """Open an ExecuteMany stream: ``with client.stream() as s: future = s.submit(operator, inputs)``.

        Args:
            window: most items unanswered at once; ``submit`` blocks for room (defaults to the server's
                ``max_stream_items_in_flight``).
            timeout: deadline in seconds for the whole stream (defaults to the client's).
        """
        window = self._transport.stream_window() if window is None else window
        return ExecuteManyStream(self._transport, window=window, timeout=timeout)
