"""ExecuteMany in the SDK: many Execute and Dispatch items over one stream, as futures or as a mapped iterator."""

from __future__ import annotations

import asyncio
import functools
import queue
import threading
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Sequence,
)
from concurrent.futures import Future
from types import TracebackType
from typing import Any, TypeVar

import numpy as np

from dmlrpc._base import InputValue, decode_outputs, prepare_execute
from dmlrpc._calls import DEFAULT_WINDOW, execute_many
from dmlrpc._transport import AsyncTransport, Transport
from dmlrpc.codec import TensorLayout
from dmlrpc.errors import ArgumentValueError, DmlRpcError, UnknownError, from_item_status
from dmlrpc.handles import _Compiled
from dmlrpc.v1 import operators_pb2, service_pb2
from dmlrpc.wire import varint

__all__ = ["DEFAULT_WINDOW", "AsyncExecuteManyStream", "ExecuteManyStream", "Operator", "Outputs"]

T = TypeVar("T")
F = TypeVar("F")

#: Most items, and bytes, packed into one ExecuteManyRequest (an item larger than that travels alone).
MESSAGE_ITEMS = 64
MESSAGE_BYTES = 4 << 20

#: What an item runs: an operator desc (an Execute item) or a compiled operator or graph (a Dispatch item).
Operator = operators_pb2.OperatorDesc | _Compiled
#: An item's outputs: one read-only array per output (``None`` for an unset one), as ``Client.execute`` gives.
Outputs = list[np.ndarray | None]
_Layouts = tuple[TensorLayout | None, ...]

_ITEMS_FIELD = b"\x0a"  # ExecuteManyRequest.items: field 1, length-delimited
_TAG_FIELD = b"\x08"  # ExecuteItem.tag: field 1, varint
_EXECUTE_FIELD = b"\x12"  # ExecuteItem.execute: field 2, length-delimited
_DISPATCH_FIELD = b"\x1a"  # ExecuteItem.dispatch: field 3, length-delimited


def encode_item(tag: int, operator: Operator, inputs: Sequence[InputValue]) -> tuple[bytes, _Layouts]:
    """One ``items`` entry of an ExecuteManyRequest as wire bytes (a message is such entries, concatenated) and the
    layouts of the item's outputs. The call inside is the unary Execute or Dispatch request, byte for byte.

    Raises:
        ValueError: the inputs do not fit the operator.
    """
    if isinstance(operator, operators_pb2.OperatorDesc):
        prepared = prepare_execute(operator, inputs)
        field, call, layouts = _EXECUTE_FIELD, prepared.request.SerializeToString(), prepared.outputs
    else:
        field, call = _DISPATCH_FIELD, operator.request(inputs, None).SerializeToString()
        layouts = tuple(operator._outputs)
    head = (_TAG_FIELD + varint(tag) if tag else b"") + field + varint(len(call))
    return b"".join((_ITEMS_FIELD, varint(len(head) + len(call)), head, call)), layouts


def _outcome(result: service_pb2.ItemResult, layouts: _Layouts) -> Outputs | BaseException:
    """An item's outputs, or its error (the DmlRpcError the unary call raises)."""
    if result.status.code:
        return from_item_status(result.status)
    try:
        return decode_outputs(result.response, layouts)
    except ValueError as error:
        return error


def _unanswered() -> DmlRpcError:
    return UnknownError("the ExecuteMany stream ended before this item was answered")


class ExecuteManyStream:
    """One ExecuteMany call of a ``Client``: ``submit`` items as you go; each is answered through a Future.

    Made by ``Client.stream()``; use it in a ``with`` block: leaving the block half-closes the stream and waits
    until every item is answered, or cancels the call when the block raised. Items travel several per message;
    at most ``window`` are unanswered at once (``submit`` blocks for room). ``submit`` is thread-safe; results are
    set by a reader thread, which also runs the futures' callbacks (keep those short, and never ``submit`` from
    them).
    """

    def __init__(self, transport: Transport, *, window: int, timeout: float | None) -> None:
        if window < 1:
            raise ArgumentValueError("window", f"window must be at least 1; got {window}")
        #: Most items unanswered at once.
        self.window = window
        self._lock = threading.Condition()
        self._pending: dict[int, tuple[Future[Outputs], _Layouts]] = {}
        self._next_tag = 0
        self._error: DmlRpcError | None = None
        self._closed = False
        self._outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._call: Any = transport.open(execute_many(self._requests(), timeout))
        self._reader = threading.Thread(target=self._read, name="dmlrpc-execute-many", daemon=True)
        self._reader.start()

    def submit(self, operator: Operator, inputs: Sequence[InputValue]) -> Future[Outputs]:
        """Send one item and return the Future of its outputs (as ``Client.execute`` returns them), or of its
        ``DmlRpcError`` (the one the unary call raises; a failed item fails alone and the stream goes on).

        Args:
            operator: an operator desc (an Execute item) or a ``CompiledOperator`` (a Dispatch item).
            inputs: one value per input, as ``Client.execute`` (or the compiled operator's call) takes them.

        Raises:
            ValueError: the inputs do not fit the operator (nothing is sent), or the stream is closed.
            DmlRpcError: the stream itself failed (its status, e.g. DEADLINE_EXCEEDED).
        """
        with self._lock:
            tag = self._next_tag
            self._next_tag += 1
        piece, layouts = encode_item(tag, operator, inputs)
        future: Future[Outputs] = Future()
        future.set_running_or_notify_cancel()  # sent items cannot be taken back
        with self._lock:
            self._lock.wait_for(lambda: len(self._pending) < self.window or self._error is not None or self._closed)
            if self._error is not None:
                raise self._error
            if self._closed:
                raise ValueError("submit on a closed ExecuteMany stream")
            self._pending[tag] = (future, layouts)
            self._outgoing.put(piece)
        return future

    def close(self) -> None:
        """Half-close the stream and wait until every submitted item is answered (its future done)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._outgoing.put(None)
                self._lock.notify_all()
        if threading.current_thread() is not self._reader:
            self._reader.join()

    def cancel(self) -> None:
        """Cancel the call: the futures of unanswered items fail with ``dmlrpc.errors.CancelledError``."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        self._call.cancel()
        self._outgoing.put(None)
        if threading.current_thread() is not self._reader:
            self._reader.join()

    def __enter__(self) -> ExecuteManyStream:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if error is None:
            self.close()
        else:
            self.cancel()

    def _requests(self) -> Iterator[bytes]:
        """The request messages: every item waiting to go (up to MESSAGE_ITEMS / MESSAGE_BYTES) in one message."""
        carry: bytes | None = None
        ending = False
        while not ending:
            first = carry if carry is not None else self._outgoing.get()
            if first is None:
                return
            message, carry, ending = _pack(first, functools.partial(_waiting, self._outgoing, queue.Empty))
            yield message

    def _read(self) -> None:
        failure: DmlRpcError | None = None
        try:
            for response in self._call:
                with self._lock:
                    # A tag this stream did not send, or answered twice, has nobody waiting for it.
                    answered = [(self._pending.pop(r.tag, None), r) for r in response.results]
                    self._lock.notify_all()
                for entry, result in answered:
                    if entry is not None:
                        _settle(entry[0], _outcome(result, entry[1]))
        except DmlRpcError as error:
            failure = error
        with self._lock:
            leftovers = list(self._pending.values())
            self._pending.clear()
            if failure is None and leftovers:
                failure = _unanswered()
            self._error = failure
            self._lock.notify_all()
        self._outgoing.put(None)  # frees the request thread if the call ended while it waited for items
        for future, _ in leftovers:
            future.set_exception(failure)


def _settle(future: Future[Outputs] | asyncio.Future[Outputs], outcome: Outputs | BaseException) -> None:
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def _report(put: Callable[[tuple[int, F]], None], index: int, future: F) -> None:
    """A done callback of ``map(ordered=False)``: hand the finished item over with its index."""
    put((index, future))


def map_ordered(
    stream: Callable[[], ExecuteManyStream], operator: Operator, batches: Iterable[Sequence[InputValue]]
) -> Generator[Outputs, None, None]:
    """``Client.map(ordered=True)``: each item's outputs in input order; no more than ``window`` inputs ahead."""
    with stream() as opened:
        futures: deque[Future[Outputs]] = deque()
        for inputs in batches:
            futures.append(opened.submit(operator, inputs))
            while futures and (futures[0].done() or len(futures) >= opened.window):
                yield futures.popleft().result()
        while futures:
            yield futures.popleft().result()


def map_unordered(
    stream: Callable[[], ExecuteManyStream], operator: Operator, batches: Iterable[Sequence[InputValue]]
) -> Generator[tuple[int, Outputs], None, None]:
    """``Client.map(ordered=False)``: ``(index, outputs)`` as items finish; no more than ``window`` inputs ahead."""
    finished: queue.SimpleQueue[tuple[int, Future[Outputs]]] = queue.SimpleQueue()
    with stream() as opened:
        waiting = 0
        for index, inputs in enumerate(batches):
            future = opened.submit(operator, inputs)
            future.add_done_callback(functools.partial(_report, finished.put, index))
            waiting += 1
            while waiting and (waiting >= opened.window or not finished.empty()):
                position, done = finished.get()
                waiting -= 1
                yield position, done.result()
        while waiting:
            position, done = finished.get()
            waiting -= 1
            yield position, done.result()


class AsyncExecuteManyStream:
    """``ExecuteManyStream`` for ``AsyncClient``: ``async with client.stream() as s: future = await s.submit(op,
    inputs)``, then ``await future``. ``submit`` waits for room when ``window`` items are unanswered; leaving the
    block half-closes the stream and waits for every answer, or cancels the call (and the unanswered futures) when
    the block raised.
    """

    def __init__(self, transport: AsyncTransport, *, window: int | None, timeout: float | None) -> None:
        if window is not None and window < 1:
            raise ArgumentValueError("window", f"window must be at least 1; got {window}")
        #: Most items unanswered at once (the server's limit, asked for on start, when not given).
        self.window = window or 0
        self._transport = transport
        self._timeout = timeout
        self._pending: dict[int, tuple[asyncio.Future[Outputs], _Layouts]] = {}
        self._next_tag = 0
        self._error: DmlRpcError | None = None
        self._closed = False
        self._cancelled = False
        self._outgoing: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._room = asyncio.Event()
        self._call: Any = None
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Open the call (``async with`` and ``submit`` do this; a second call does nothing)."""
        if self._call is not None:
            return
        if not self.window:
            self.window = await self._transport.stream_window()
        if self._call is not None:  # started while the window was asked for
            return
        self._call = self._transport.open(execute_many(None, self._timeout))
        self._tasks = [asyncio.create_task(self._write()), asyncio.create_task(self._read())]

    async def submit(self, operator: Operator, inputs: Sequence[InputValue]) -> asyncio.Future[Outputs]:
        """Send one item; return the future of its outputs or of its ``DmlRpcError`` (see
        ``ExecuteManyStream.submit``).

        Raises:
            ValueError: the inputs do not fit the operator (nothing is sent), or the stream is closed.
            DmlRpcError: the stream itself failed.
        """
        await self.start()
        tag = self._next_tag
        self._next_tag += 1
        piece, layouts = encode_item(tag, operator, inputs)
        while len(self._pending) >= self.window and self._error is None and not self._closed:
            self._room.clear()
            await self._room.wait()
        if self._error is not None:
            raise self._error
        if self._closed:
            raise ValueError("submit on a closed ExecuteMany stream")
        future: asyncio.Future[Outputs] = asyncio.get_running_loop().create_future()
        self._pending[tag] = (future, layouts)
        self._outgoing.put_nowait(piece)
        return future

    async def close(self) -> None:
        """Half-close the stream and wait until every submitted item is answered."""
        if not self._closed:
            self._closed = True
            self._outgoing.put_nowait(None)
            self._room.set()
        await asyncio.gather(*self._tasks)

    async def cancel(self) -> None:
        """Cancel the call; the futures of unanswered items are cancelled."""
        self._closed = self._cancelled = True
        if self._call is not None:
            self._call.cancel()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def __aenter__(self) -> AsyncExecuteManyStream:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if error is None:
            await self.close()
        else:
            await self.cancel()

    async def _write(self) -> None:
        carry: bytes | None = None
        ending = False
        while not ending:
            first = carry if carry is not None else await self._outgoing.get()
            if first is None:
                break
            message, carry, ending = _pack(first, functools.partial(_waiting, self._outgoing, asyncio.QueueEmpty))
            if not await self._send(message):
                return
        await self._send(None)

    async def _send(self, message: bytes | None) -> bool:
        """Write a message (``None``: half-close); False once the call has ended (the reader reports its status)."""
        if self._call.done():
            return False
        try:
            if message is None:
                await self._call.done_writing()
            else:
                await self._call.write(message)
        except (DmlRpcError, asyncio.InvalidStateError):
            return False
        return True

    async def _read(self) -> None:
        failure: DmlRpcError | None = None
        try:
            async for response in self._call:
                for result in response.results:
                    entry = self._pending.pop(result.tag, None)
                    if entry is not None and not entry[0].done():
                        _settle(entry[0], _outcome(result, entry[1]))
                self._room.set()
        except DmlRpcError as error:
            failure = error
        finally:
            self._finish(failure)

    def _finish(self, failure: DmlRpcError | None) -> None:
        if failure is None and self._pending and not self._cancelled:
            failure = _unanswered()
        self._error = failure
        for future, _ in self._pending.values():
            if future.done():
                continue
            if self._cancelled or failure is None:
                future.cancel()
            else:
                future.set_exception(failure)
        self._pending.clear()
        self._outgoing.put_nowait(None)  # lets the writer end
        self._room.set()


async def _each(batches: Iterable[T] | AsyncIterable[T]) -> AsyncIterator[T]:
    if isinstance(batches, AsyncIterable):
        async for batch in batches:
            yield batch
    else:
        for batch in batches:
            yield batch


def _retrieve(futures: Iterable[asyncio.Future[Any]]) -> None:
    """Mark the errors of results never yielded as seen (asyncio logs unseen ones)."""
    for future in futures:
        if future.done() and not future.cancelled():
            future.exception()


async def amap_ordered(
    stream: AsyncExecuteManyStream,
    operator: Operator,
    batches: Iterable[Sequence[InputValue]] | AsyncIterable[Sequence[InputValue]],
) -> AsyncGenerator[Outputs, None]:
    """``AsyncClient.map(ordered=True)``."""
    futures: deque[asyncio.Future[Outputs]] = deque()
    try:
        async with stream:
            async for inputs in _each(batches):
                futures.append(await stream.submit(operator, inputs))
                while futures and (futures[0].done() or len(futures) >= stream.window):
                    yield await futures.popleft()
            while futures:
                yield await futures.popleft()
    finally:
        _retrieve(futures)


async def amap_unordered(
    stream: AsyncExecuteManyStream,
    operator: Operator,
    batches: Iterable[Sequence[InputValue]] | AsyncIterable[Sequence[InputValue]],
) -> AsyncGenerator[tuple[int, Outputs], None]:
    """``AsyncClient.map(ordered=False)``."""
    finished: asyncio.Queue[tuple[int, asyncio.Future[Outputs]]] = asyncio.Queue()
    waiting = 0
    try:
        async with stream:
            index = 0
            async for inputs in _each(batches):
                future = await stream.submit(operator, inputs)
                future.add_done_callback(functools.partial(_report, finished.put_nowait, index))
                index += 1
                waiting += 1
                while waiting and (waiting >= stream.window or not finished.empty()):
                    position, done = await finished.get()
                    waiting -= 1
                    yield position, done.result()
            while waiting:
                position, done = await finished.get()
                waiting -= 1
                yield position, done.result()
    finally:
        while not finished.empty():
            _retrieve([finished.get_nowait()[1]])


def _pack(first: bytes, waiting: Callable[[], tuple[bool, bytes | None]]) -> tuple[bytes, bytes | None, bool]:
    """One request message: ``first`` and the items already waiting, up to MESSAGE_ITEMS items and MESSAGE_BYTES.

    ``waiting()`` gives ``(False, None)`` when nothing waits, ``(True, None)`` at the end of the items. Returns the
    message, an item left for the next message (it did not fit), and whether the end was reached.
    """
    parts, size = [first], len(first)
    while len(parts) < MESSAGE_ITEMS:
        ready, piece = waiting()
        if not ready:
            break
        if piece is None:
            return b"".join(parts), None, True
        if size + len(piece) > MESSAGE_BYTES:
            return b"".join(parts), piece, False
        parts.append(piece)
        size += len(piece)
    return b"".join(parts), None, False


def _waiting(
    outgoing: queue.SimpleQueue[bytes | None] | asyncio.Queue[bytes | None], empty: type[Exception]
) -> tuple[bool, bytes | None]:
    """The next item already in ``outgoing`` (a thread's or the loop's queue), without waiting."""
    try:
        return True, outgoing.get_nowait()
    except empty:
        return False, None
