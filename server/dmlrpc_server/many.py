"""ExecuteMany's stream: a window of admitted items, stages 2-5 per item, one batch per desc, results as they come."""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dmlrpc.v1 import service_pb2
from dmlrpc_server.bindings import unary_buffers
from dmlrpc_server.errors import Cancelled, Internal, InvalidArgument, ServiceError
from dmlrpc_server.responses import execute_response, item_error, item_result, resident_response
from dmlrpc_server.runtime.buffers import Buffer
from dmlrpc_server.runtime.compiler import Compiled
from dmlrpc_server.streams import idle_error, next_part

if TYPE_CHECKING:
    from dmlrpc_server.stages import Stages

_log = logging.getLogger(__name__)


class ManyStream:
    """The state of one ExecuteMany call: admitted items, the results waiting to be written, and the window."""

    def __init__(self, service: Stages, owner: str, deadline: float | None) -> None:
        self.service = service
        self.owner = owner
        self.deadline = deadline
        self.limits = service.stream_limits
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
        idle = self.service.stream_idle
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
        """Run one message's items, consecutive items of one compiled desc as one batch; every item is answered
        exactly once, whatever fails."""
        try:
            bound: list[_Item] = []
            for item in group:
                try:
                    await self._bind(item)
                except Exception as error:
                    self._answer(item, error)
                    continue
                if not item.done:
                    bound.append(item)
            start = 0
            while start < len(bound):
                end = start + 1
                while end < len(bound) and bound[end].compiled is bound[start].compiled:
                    end += 1
                await self._run_batch(bound[start:end])
                start = end
        except BaseException as error:
            for item in group:
                if not item.done:
                    self._answer(item, error if isinstance(error, Exception) else Cancelled("the stream ended"))
            raise

    async def _bind(self, item: _Item) -> None:
        """Stages 1-3 for one item: its compiled desc (or handle) and its bound buffers."""
        service = self.service
        call = item.call
        kind = call.WhichOneof("call")
        entry = None
        if kind == "execute":
            request: service_pb2.ExecuteRequest | service_pb2.DispatchRequest = call.execute
            compiled = await service.compiled(call.execute.operator_desc, self.deadline, call.execute.execution_flags)
        elif kind == "dispatch":
            request = call.dispatch
            entry = service.handles.get(self.owner, call.dispatch.handle)
            compiled = entry.compiled
        else:
            raise InvalidArgument("call", "an item needs an `execute` or a `dispatch` call")
        if request.keep_outputs or binds_resident(request.inputs):
            outputs = await service.resident(
                request, self.owner, self.deadline, compiled, entry, compiled.label, hold_response=False
            )
            self._answer(item, resident_response(outputs))
            return
        service.executor.check_response_fits(compiled)
        buffers = unary_buffers(request.inputs, compiled.plan)
        item.compiled = compiled
        item.buffers = buffers if entry is None else entry.bind(buffers)

    async def _run_batch(self, group: list[_Item]) -> None:
        """Run items of one compiled desc, as many together as the call memory has room for (each item's run, then
        its result until the client has read it: reserved before they exist)."""
        compiled = group[0].compiled
        assert compiled is not None
        staged = self.service.memory
        size = compiled.memory
        while group:
            try:
                await staged.acquire(size, self.deadline)
            except ServiceError as error:
                for item in group:
                    self._answer(item, error)
                return
            count = 1
            while count < len(group) and staged.try_acquire(size):
                count += 1
            part, group = group[:count], group[count:]
            for item in part:
                item.staged = size
            await self._run_part(compiled, part)

    async def _run_part(self, compiled: Compiled, group: list[_Item]) -> None:
        service = self.service
        executor = service.executor
        scheduler = service.scheduler
        try:
            async with scheduler.turn(self.deadline):
                if not service.on_loop(compiled):
                    for item in group:
                        try:
                            outputs = await scheduler.offload(
                                functools.partial(service.whole, compiled, item.buffers), self.deadline
                            )
                            scheduler.observe_alone()
                            self._answer(item, execute_response(outputs))
                        except Exception as error:
                            self._answer(item, error)
                    return
                runnable: list[_Item] = []
                feeds: list[dict[str, np.ndarray]] = []
                for item in group:
                    try:
                        feeds.append(executor.feeds(compiled, item.buffers))
                        runnable.append(item)
                    except Exception as error:
                        self._answer(item, error)
                futures = scheduler.run_group(compiled, feeds, self.deadline)
                for item, future in zip(runnable, futures, strict=True):
                    try:
                        self._answer(item, execute_response(executor.encode_outputs(compiled, await future)))
                    except Exception as error:
                        self._answer(item, error)
        except ServiceError as error:  # admission refused, or the deadline passed while waiting for a slot
            for item in group:
                if not item.done:
                    self._answer(item, error)

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
        self.ready.append((result, item.size, item.staged))
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
        self.service.memory.release(sum(staged for _, _, staged in ready))
        self.room.set()
        if self.in_flight == 0 and self._waiting is not None and self.service.stream_idle is not None:
            self._waiting.reschedule(asyncio.get_running_loop().time() + self.service.stream_idle)
        return b"".join(result for result, _, _ in ready)

    async def stop(self) -> None:
        """Cancel whatever still runs (the call ended: the client went away or the stream failed)."""
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(self.tasks)
        ready, self.ready = self.ready, []
        self.service.memory.release(sum(staged for _, _, staged in ready))


@dataclass(eq=False)
class _Item:
    """One ExecuteMany item on its way: the call, its size, what binding found, and whether it was answered."""

    call: service_pb2.ExecuteItem
    size: int
    compiled: Compiled | None = None
    buffers: list[Buffer | None] = field(default_factory=list)
    done: bool = False
    #: Bytes reserved in the service's call memory for this item until its result is written.
    staged: int = 0


def binds_resident(bindings: Sequence[service_pb2.BindingDesc]) -> bool:
    """Whether a call binds a resident tensor (it then takes the resident path)."""
    return any(binding.WhichOneof("binding") == "resident" for binding in bindings)


def _internal(error: Exception) -> ServiceError:
    """An unexpected failure of one ExecuteMany item: logged here, answered INTERNAL with a generic message."""
    _log.error("an ExecuteMany item failed", exc_info=error)
    return Internal("internal server error while running this item; see the server log")
