"""ExecuteMany's stream: a window of items, each run by the unary recipe, a message's items in one slot."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from dmlrpc.v1 import service_pb2
from dmlrpc_server.calls import Call, item_error, item_result, read_request
from dmlrpc_server.errors import Cancelled, Internal, InvalidArgument, ServiceError
from dmlrpc_server.scheduler import Scheduler
from dmlrpc_server.streams import idle_error, next_part

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StreamLimits:
    """Bounds of one ExecuteMany stream: items admitted at once, and their request bytes."""

    items: int
    bytes: int


class ManyStream:
    """The state of one ExecuteMany call: admitted items, the results waiting to be written, and the window."""

    def __init__(
        self,
        execute_items: Callable[[list[Call]], Awaitable[list[bytes | Exception]]],
        scheduler: Scheduler,
        limits: StreamLimits,
        idle: float | None,
        owner: str,
        deadline: float | None,
    ) -> None:
        self.execute_items = execute_items
        self.scheduler = scheduler
        self.idle = idle
        self.owner = owner
        self.deadline = deadline
        self.limits = limits
        self.in_flight = 0
        self.in_flight_bytes = 0
        #: Answered items' results waiting to be written: (result, window bytes, call memory reserved).
        self.ready: list[tuple[bytes, int, int]] = []
        self.answered = asyncio.Event()  # results are ready, or the reader ended
        self.room = asyncio.Event()  # results were written: the window has room
        self.tasks: set[asyncio.Task[None]] = set()
        #: The reader's wait for the next message, while one is under way (Python 3.11+): rescheduled to
        #: ``stream_idle`` from the moment the last item in flight is written.
        self._waiting: Any = None

    async def _next(
        self, messages: AsyncIterator[tuple[service_pb2.ExecuteManyRequest, int]]
    ) -> tuple[service_pb2.ExecuteManyRequest, int] | None:
        """The next message, within ``stream_idle`` seconds of the stream having nothing in flight: a caller may
        wait for its results as long as they take, but an idle stream ends (DEADLINE_EXCEEDED)."""
        idle = self.idle
        if idle is None:
            return await anext(messages, None)
        if sys.version_info < (3, 11):  # pragma: no cover - no reschedulable timeout: idle counts while nothing runs
            return await next_part(messages, None if self.in_flight else idle)
        try:
            async with asyncio.timeout(None if self.in_flight else idle) as waiting:
                self._waiting = waiting
                try:
                    return await anext(messages, None)
                finally:
                    self._waiting = None
        except TimeoutError:
            raise idle_error(idle) from None

    async def read(self, messages: AsyncIterator[tuple[service_pb2.ExecuteManyRequest, int]]) -> None:
        """Admit every message's items within the window; the items of one message run as one group. An item's
        size is its share of its message's bytes (asking protobuf would serialize each item again)."""
        try:
            while (received := await self._next(messages)) is not None:
                message, message_size = received
                group: list[_Item] = []
                group_bytes = 0
                size = message_size // max(1, len(message.items))
                for item in message.items:
                    if not self._fits(len(group) + 1, group_bytes + size):
                        self._launch(group)
                        group, group_bytes = [], 0
                        while not self._fits(1, size):
                            self.room.clear()
                            await self.room.wait()
                    group.append(_Item(item, size))
                    group_bytes += size
                self._launch(group)
        finally:
            self.answered.set()

    def _fits(self, count: int, size: int) -> bool:
        """Whether ``count`` more items of ``size`` bytes fit the window (one item always fits an empty one)."""
        if self.in_flight == 0 and count == 1:
            return True
        return self.in_flight + count <= self.limits.items and self.in_flight_bytes + size <= self.limits.bytes

    def _launch(self, group: list[_Item]) -> None:
        if not group:
            return
        self.in_flight += len(group)
        self.in_flight_bytes += sum(item.size for item in group)
        task = asyncio.ensure_future(self._run_group(group))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _run_group(self, group: list[_Item]) -> None:
        """Run one message's items within one admission slot, each by the unary recipe's stages
        (``Service.execute_items``: those of one compiled desc join one batch). Every item is answered exactly once,
        whatever fails."""
        try:
            calls: list[_Item] = []
            for item in group:
                try:
                    item.run = self._read(item)
                except ServiceError as error:
                    self._answer(item, error)
                    continue
                calls.append(item)
            async with self.scheduler.turn(self.deadline):
                outcomes = await self.execute_items([item.run for item in calls if item.run is not None])
            for item, outcome in zip(calls, outcomes, strict=True):
                self._answer(item, outcome)
        except BaseException as error:
            for item in group:
                if not item.done:
                    self._answer(item, error if isinstance(error, Exception) else Cancelled("the stream ended"))
            if not isinstance(error, ServiceError):  # admission refused, or the deadline passed waiting for a slot
                raise

    def _read(self, item: _Item) -> Call:
        """An item's call, read as its unary call is (the whole call memory it reserves stays reserved until its
        result is written; its slot is the group's)."""
        call = item.call
        kind = call.WhichOneof("call")
        if kind == "execute":
            request: service_pb2.ExecuteRequest | service_pb2.DispatchRequest = call.execute
        elif kind == "dispatch":
            request = call.dispatch
        else:
            raise InvalidArgument("call", "an item needs an `execute` or a `dispatch` call")
        read = read_request(request, item.size, self.deadline, self.owner)
        read.hold = True
        read.admitted = True
        return read

    def _answer(self, item: _Item, outcome: bytes | Exception) -> None:
        """Queue an item's result for writing: its response, or its error as an ItemStatus."""
        if item.done:
            return
        item.done = True
        tag = item.call.tag
        if isinstance(outcome, bytes):
            result = item_result(tag, outcome)
        else:
            result = item_error(tag, outcome if isinstance(outcome, ServiceError) else _internal(outcome))
        self.ready.append((result, item.size, 0 if item.run is None else item.run.held))
        self.answered.set()

    async def results(self, reader: asyncio.Future[None]) -> bytes | None:
        """The next message of results to write, or ``None`` once the client half-closed and all are answered
        (or the reader failed)."""
        while not self.ready:
            if reader.done() and (self.in_flight == 0 or reader.exception() is not None):
                return None
            self.answered.clear()
            await self.answered.wait()
        ready, self.ready = self.ready, []
        # Written results leave the window: the reader may admit more.
        self.in_flight -= len(ready)
        self.in_flight_bytes -= sum(size for _, size, _ in ready)
        self.scheduler.memory.release(sum(staged for _, _, staged in ready))
        self.room.set()
        if self.in_flight == 0 and self._waiting is not None and self.idle is not None:
            self._waiting.reschedule(asyncio.get_running_loop().time() + self.idle)
        return b"".join(result for result, _, _ in ready)

    async def stop(self) -> None:
        """Cancel whatever still runs (the call ended: the client went away or the stream failed)."""
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(self.tasks)
        ready, self.ready = self.ready, []
        self.scheduler.memory.release(sum(staged for _, _, staged in ready))


@dataclass(eq=False)
class _Item:
    """One ExecuteMany item on its way: the message's item, its size, its call once read, and whether it was
    answered."""

    call: service_pb2.ExecuteItem
    size: int
    #: The call the recipe runs (its ``held`` bytes of call memory are released once its result is written).
    run: Call | None = None
    done: bool = False


def _internal(error: Exception) -> ServiceError:
    """An unexpected failure of one ExecuteMany item: logged here, answered INTERNAL with a generic message."""
    _log.error("an ExecuteMany item failed", exc_info=error)
    return Internal("internal server error while running this item; see the server log")
