"""Stages 3 and 5 of the request path: admit and reserve, then place (decided once, here) and run."""

from __future__ import annotations

import asyncio
import enum
import functools
import logging
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import onnxruntime as ort

from dmlrpc_server.batching import BatchQueue, Member
from dmlrpc_server.calls import Call
from dmlrpc_server.errors import DeadlineExceeded, Unavailable
from dmlrpc_server.metrics import Metrics
from dmlrpc_server.runtime.admission import Admission, ByteBudget, wait_within
from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.compiler import Compiled

_log = logging.getLogger(__name__)

T = TypeVar("T")
Results = list[np.ndarray]
#: The most host bytes (inputs read from, outputs sent to the host) of a device call that runs on the event loop.
HOST_INLINE_BYTES = 64 * 1024
#: What the scheduler runs: a callable given the run's options, whose ``terminate`` stops ONNX Runtime on a worker
#: thread, or None on the event loop (nothing stops a tiny run half-way).
Job = Callable[[ort.RunOptions | None], T]
Feeds = dict[str, np.ndarray]
#: Smaller responses are released on return: the calls that can run or wait at once hold few of them.
HOLD_RESPONSES_FROM = 1 << 16
_SHUTTING_DOWN = "the server is shutting down; retry on another replica"


class Place(enum.Enum):
    """Where a compiled desc's calls run."""

    INLINE = "inline"  # on the event loop: bind, run and encode (tiny host work)
    BATCH = "batch"  # bound and encoded on the loop, run in its lane with others of its desc
    THREAD = "thread"  # bind, run and encode on a worker thread


@dataclass(frozen=True)
class Placement:
    """Where a compiled desc runs, decided once (again only if its provider falls back): ``Scheduler.place``.

    It refers to its desc weakly (as its lane does), so that a desc the compile cache evicts, with its sessions, is
    freed at once; that reference takes the placement out of the scheduler's table as the desc goes, so an entry
    found by a desc's id is that desc's.
    """

    compiled: weakref.ref[Compiled]
    fallback: str
    place: Place
    batch_size: int
    inline: bool
    #: The desc's batch queue (``Place.BATCH``).
    lane: BatchQueue[Results] | None
    #: Whether a lone call runs to its end on the event loop at once (inline, no delay to wait for company, a
    #: response small enough to be released on return): ``Scheduler.run``'s first branch.
    at_once: bool


class Scheduler:
    """Runs what the request path hands it, within each call's admission slot and deadline.

    Where work runs is decided by the work it causes (``Compiled.work``, estimated from the lowered model when the
    desc was compiled), never by the request's size in bytes:

    - **inline** on the event loop: only provably tiny work on a host provider, where a thread hop costs more
      than the operator;
    - **worker threads** (ONNX Runtime releases the GIL) for everything else; a deadline or a cancelled call sets
      the run's ``RunOptions.terminate``, so ONNX Runtime stops between nodes and the slot comes back;
    - **lanes** (dynamic batching) for operators that batch: requests of one desc queue while a run of that desc
      is under way and then run together as one call (up to the batch size); a lone request runs at once, or
      waits at most ``max_delay`` seconds for company. Use from the event loop thread only.
    """

    def __init__(
        self,
        admission: Admission,
        workers: ThreadPoolExecutor,
        pool: BufferPool,
        memory: ByteBudget,
        *,
        inline_work: int,
        batch_work: int,
        device_inline_work: int,
        max_batch_size: int,
        max_delay: float,
        sizes_by_case: Mapping[str, int] | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.admission = admission
        #: The memory calls in progress add (their runs' tensors, their responses until read): reserved per call.
        self.memory = memory
        self.metrics = metrics
        self.workers = workers
        self.pool = pool
        self.inline_work = inline_work
        self.device_inline_work = device_inline_work
        self.batch_work = batch_work
        self.max_batch_size = max_batch_size
        self.max_delay = max_delay
        self.sizes_by_case = dict(sizes_by_case or {})
        self._placed: dict[int, Placement] = {}
        #: The most work a batch run on the event loop may have: a few tiny runs' worth.
        self._inline_batch = 4 * inline_work
        self.closing = False
        #: Set once this worker process has made its --max-sessions-per-worker sessions (it is being recycled).
        self.sessions_spent = False
        #: Set once a recycled worker has handed over (``hand_over``): gRPC has sent GOAWAY on its connections.
        self.handed_over = False

    # -- admission ----------------------------------------------------------------------------------------------

    def gate(self) -> None:
        """Refuse a new call while the server drains."""
        if self.closing:
            # NOTE: refusing here, before gRPC stops, lets clients tell "not run" (UNAVAILABLE, safe to retry
            # elsewhere) from a call cut off mid-way; gRPC's own stop would cancel queued calls instead.
            raise Unavailable(_SHUTTING_DOWN)

    async def room_for_session(self, deadline: float | None) -> None:
        """Before a call makes a new ONNX Runtime session: on a worker that has made its --max-sessions-per-worker
        sessions, wait until it hands over to its replacement (``hand_over``), then let the call make it. Calls of
        compiled descs meanwhile run as usual.

        NOTE: waiting bounds what a spent worker makes to one session per call in flight when it hands over (no
        new call reaches it after that), and those sessions go with the process when it exits at the end of its
        grace period; refusing the calls instead would fail them for clients without a retry policy, and could
        send a retried one to a worker that has spent its sessions too.

        Raises:
            Unavailable: the server shuts down (not a handover) first.
            DeadlineExceeded: the deadline passed first.
        """
        if not self.sessions_spent:
            return
        # NOTE: polled like drain: a handful of calls wait here at most, for as long as a replacement takes to start.
        while not (self.handed_over or self.closing):
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlineExceeded("the deadline passed while this worker process was being recycled")
            await asyncio.sleep(0.01)
        if not self.handed_over:
            raise Unavailable("the server is shutting down; retry on another replica")

    async def room_for_handle(self, sessions_before: int) -> None:
        """Before a compile answers with its handle: a worker being recycled (its sessions spent, perhaps by this
        very compile) loses what it holds when it exits, so a handle it made would answer NOT_FOUND at its first use.
        Such a call waits for the handover, which sends GOAWAY on the worker's connections, and is refused as not run:
        its client's retry (or a plain client's next try) reaches the replacement on a new connection.

        ``sessions_before``: the sessions this process had made when the call began. A compile that spends a fresh
        process by itself keeps its handle (a logged warning): the replacement could do no better, and refusing it
        would send it round for ever.

        Raises:
            Unavailable: this worker is being recycled (or the server shuts down).
        """
        if not self.sessions_spent:
            return
        if not sessions_before:
            _log.warning(
                "a compile alone spent this worker process (--max-sessions-per-worker or --worker-memory-bytes): its "
                "handle goes with the process when it is recycled"
            )
            return
        await self.room_for_session(None)
        raise Unavailable(
            "this worker process is being recycled and a handle it made would go with it: retry, and the call "
            "reaches its replacement"
        )

    def hand_over(self) -> None:
        """A recycled worker has handed over (gRPC's stop has sent GOAWAY, so no new call reaches it): the calls
        waiting for a session make theirs, and it serves every call in flight to the end."""
        self.handed_over = True

    async def drain(self, timeout: float | None) -> bool:
        """Refuse new calls and wait up to ``timeout`` s for admitted and queued ones; whether all finished."""
        self.closing = True
        return await self.settle(timeout)

    async def settle(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` s for admitted and queued calls, refusing none; whether all finished."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.admission.running or self.admission.waiting:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.005)
        return True

    def turn(self, deadline: float | None) -> _Turn:
        """``async with scheduler.turn(deadline) as started``: hold a running slot for the body (waiting in the
        bounded queue if need be); ``started`` is when the body began.

        Raises:
            ResourceExhausted: the queue is full.
            DeadlineExceeded: the deadline passed before the call could start (it did not run).
        """
        return _Turn(self.admission, deadline)

    async def in_turn(self, deadline: float | None, work: Callable[[], Awaitable[T]]) -> T:
        """``await work()`` holding a running slot, as ``turn`` does, with no context manager's two coroutines (a
        ModelInfer takes one on every call).

        Raises:
            ResourceExhausted: the queue is full.
            DeadlineExceeded: the deadline passed before the call could start (it did not run).
        """
        admission = self.admission
        if not admission.try_acquire():
            await admission.acquire(None if deadline is None else deadline - time.monotonic())
        try:
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlineExceeded("the deadline passed while the call waited; it was not executed")
            return await work()
        finally:
            admission.release()

    # -- where work runs ----------------------------------------------------------------------------------------

    def inline(self, compiled: Compiled) -> bool:
        """Whether ``compiled`` runs on the event loop: provably tiny work on a host provider."""
        return compiled.work <= self.inline_work and not compiled.on_device

    def inline_on_device(self, compiled: Compiled, host_bytes: int) -> bool:
        """Whether a call whose data stays on the device runs on the event loop: host-tiny work, or device work the
        GPU does in about a tenth of a millisecond with at most ``HOST_INLINE_BYTES`` crossing to or from the host
        (a thread hop would cost more than the run)."""
        if self.inline(compiled):
            return True
        return compiled.on_device and compiled.work <= self.device_inline_work and host_bytes <= HOST_INLINE_BYTES

    def batch_size(self, compiled: Compiled) -> int:
        """How many requests of ``compiled`` may run as one batch (1: it runs alone)."""
        if compiled.batching is None or compiled.work > self.batch_work:
            return 1
        size = self.sizes_by_case.get(compiled.label, self.max_batch_size)
        if not compiled.on_device:
            # NOTE: on the host a batch saves only ONNX Runtime's per-run cost, which matters beside tiny work
            # alone, while stacking copies every input: batches stay small enough to run inline.
            size = min(size, self._inline_batch // max(compiled.work, 1))
        return size

    def place(self, compiled: Compiled) -> Placement:
        """Where ``compiled``'s calls run, by the work they cause (decided here only, once per compiled desc)."""
        size = self.batch_size(compiled)
        inline = self.inline(compiled)
        place = Place.BATCH if size > 1 else Place.INLINE if inline else Place.THREAD
        lane = BatchQueue(_Lane(self, compiled, size), self.workers) if place is Place.BATCH else None
        key = id(compiled)
        placements = self._placed
        # Its entry goes with the desc (an id is unique among live objects, so the key is still its own then).
        gone = weakref.ref(compiled, lambda _: placements.pop(key, None))
        at_once = (
            inline
            and (place is Place.INLINE or self.max_delay == 0)
            and compiled.plan.response_bytes < HOLD_RESPONSES_FROM
        )
        placement = Placement(gone, compiled.fallback, place, size, inline, lane, at_once)
        placements[key] = placement
        return placement

    def now(
        self, call: Call, compiled: Compiled, bind: Callable[[], Feeds], encode: Callable[[Results], T]
    ) -> T | None:
        """Stages 3-6 for a lone tiny call, at once: its result when it can run to its end now, on the loop (its
        placement says it may: inline, no company to wait for, a response released on return), while nothing else
        runs or waits and its memory fits; else ``None``, and ``run`` runs it. It takes no admission slot and
        reserves no memory: it would take and give back both while nothing else can run, so nothing could see them.
        Records the call's metrics."""
        placed = self._placed.get(id(compiled))
        if placed is None or placed.fallback != compiled.fallback:
            placed = self.place(compiled)
        lane = placed.lane
        if (
            not placed.at_once
            or call.admitted
            or call.hold
            or self.closing
            or not self.admission.idle()
            or not self.memory.fits(compiled.memory)
            or (lane is not None and (lane.queue or lane.running))
        ):
            return None
        started = time.monotonic()
        deadline = call.deadline
        if deadline is not None and started >= deadline:
            return None  # ``run`` refuses it
        result = encode(compiled.run(bind()))
        metrics = self.metrics
        if metrics is not None:
            sent = compiled.plan.response_bytes if call.sent < 0 else call.sent
            metrics.ran(call.label, 1, started - call.arrived, time.monotonic() - started, call.size, sent)
        if compiled.fallback:
            call.executed_on = compiled.executed_on  # as ``run`` does
        return result

    async def run(
        self,
        call: Call,
        compiled: Compiled,
        bind: Callable[[], Feeds] | None,
        encode: Callable[[Results], T] | None,
        job: Job[T] | None = None,
        host_bytes: int = 0,
    ) -> T:
        """Stages 3 and 5 for one call (4 and 6 run where its placement puts them): refuse it while draining,
        reserve its memory, take an admission slot within its deadline, then run ``encode(run(bind()))`` inline, on a
        worker thread or in a batch; or ``job`` (a resident call, which binds, runs and encodes itself: never batched,
        inline when it is tiny or moves at most ``host_bytes`` through the host on a device). Records the call's
        metrics; leaves ``call.held`` bytes reserved for the writer to release (a large response, with
        ``call.release``; or with ``call.hold`` the whole reservation, which the caller releases).

        Raises:
            Unavailable: the server drains.
            ResourceExhausted: the call memory or the admission queue is full.
            DeadlineExceeded: the deadline passed before the call could start, or while it ran (it was stopped).
        """
        if self.closing and not call.admitted:  # a stream's items run on: the stream was admitted before
            raise Unavailable(_SHUTTING_DOWN)
        # NOTE: an entry of this id is this desc's: it goes with the desc (``place``), before the id is free.
        placed = self._placed.get(id(compiled))
        if placed is None or placed.fallback != compiled.fallback:
            placed = self.place(compiled)
        deadline = call.deadline
        memory = self.memory
        size = compiled.memory
        admission = self.admission
        metrics = self.metrics
        lane = placed.lane
        if not memory.try_acquire(size):
            await memory.acquire(size, deadline)
        try:
            admitted = call.admitted
            if not admitted and not admission.try_acquire():
                await admission.acquire(None if deadline is None else deadline - time.monotonic())
            try:
                started = time.monotonic()
                if deadline is not None and started >= deadline:
                    raise DeadlineExceeded("the deadline passed while the call waited; it was not executed")
                if job is not None:
                    if self.inline_on_device(compiled, host_bytes):
                        result = job(None)
                    else:
                        result = await self.offload(job, deadline)
                    batch = 1
                elif placed.place is Place.BATCH:
                    assert bind is not None and encode is not None
                    feeds = bind()
                    assert lane is not None
                    if (
                        not admitted
                        and not lane.queue
                        and not lane.running
                        and self.max_delay == 0
                        and placed.inline
                        and admission.running <= 1
                    ):
                        # Alone on the server and no delay to wait for company: no loop turn is spent looking for it.
                        result = encode(compiled.run(feeds))
                        batch = 1
                    else:
                        # ``lane.result`` without its frame: one request of an operator is never a batch alone.
                        waiting = lane.submit(feeds, 1, None, deadline)
                        try:
                            results = await waiting
                        except asyncio.CancelledError:
                            waiting.cancel()  # it leaves its batch
                            raise
                        result = encode(results)
                        batch = 0  # the lane counts its batches
                elif placed.place is Place.INLINE:
                    assert bind is not None and encode is not None
                    result = encode(compiled.run(bind()))
                    batch = 1
                else:
                    assert bind is not None and encode is not None
                    result = await self.offload(functools.partial(_whole, compiled, bind, encode), deadline)
                    batch = 1
            finally:
                if not admitted:
                    admission.release()
            if metrics is not None:
                metrics.ran(
                    call.label,
                    batch,
                    started - call.arrived,
                    time.monotonic() - started,
                    call.size,
                    compiled.plan.response_bytes if call.sent < 0 else call.sent,
                )
        except BaseException:
            memory.release(size)
            raise
        if compiled.fallback:
            call.executed_on = compiled.executed_on  # again: a device run that failed moved the desc to the host
        if call.hold:
            call.held += size
        else:
            # A large response stays reserved until the RPC is done: gRPC holds it until the caller reads it.
            response = compiled.plan.response_bytes
            if response >= HOLD_RESPONSES_FROM:
                memory.release(size - response)
                call.held += response
                call.release = memory.release
            else:
                memory.release(size)
        return result

    async def run_items(
        self,
        calls: list[Call],
        compiled: Compiled,
        binds: list[Callable[[], Feeds]],
        encode: Callable[[Results], T],
    ) -> list[T | Exception]:
        """``run`` for calls of one plan whose admission slot their stream holds (an ExecuteMany message's items):
        each reserves its memory (kept until its result is written) and is bound and encoded as ``run`` would; where
        the plan batches, they join its lane together, without a task each. Each call's result or error."""
        placed = self._placed.get(id(compiled))
        if placed is None or placed.fallback != compiled.fallback:
            placed = self.place(compiled)
        lane = placed.lane
        outcomes: list[T | Exception] = []
        if lane is None:  # inline or on a worker: each call as ``run`` runs it
            for call, bind in zip(calls, binds, strict=True):
                try:
                    outcomes.append(await self.run(call, compiled, bind, encode))
                except Exception as error:
                    outcomes.append(error)
            return outcomes
        memory = self.memory
        size = compiled.memory
        started = time.monotonic()
        pending: list[asyncio.Future[Results] | Exception] = []
        try:
            for call, bind in zip(calls, binds, strict=True):
                try:
                    if not memory.try_acquire(size):
                        await memory.acquire(size, call.deadline)
                except Exception as error:
                    pending.append(error)
                    continue
                try:
                    pending.append(lane.submit(bind(), 1, None, call.deadline))
                except Exception as error:
                    memory.release(size)
                    pending.append(error)
            for call, waiting in zip(calls, pending, strict=True):
                if isinstance(waiting, Exception):
                    outcomes.append(waiting)
                    continue
                try:
                    result = encode(await waiting)
                except asyncio.CancelledError:
                    raise
                except Exception as error:
                    memory.release(size)
                    outcomes.append(error)
                    continue
                call.held += size  # until its result is written
                self._observe_call(call, compiled, started)
                outcomes.append(result)
        except BaseException:
            # Cancelled (the stream ended): the calls not yet answered give their reservations back.
            for waiting in pending[len(outcomes) :]:
                if not isinstance(waiting, Exception):
                    waiting.cancel()
                    memory.release(size)
            raise
        return outcomes

    def _observe_call(self, call: Call, compiled: Compiled, started: float) -> None:
        """A call's metrics (``run`` records its own inline): queue and compute time, bytes in and out."""
        metrics = self.metrics
        if metrics is not None:
            metrics.ran(
                call.label,
                0,
                started - call.arrived,
                time.monotonic() - started,
                call.size,
                compiled.plan.response_bytes,
            )

    async def compile(self, deadline: float | None, job: Callable[[], Compiled]) -> Compiled:
        """Stage 2 on a miss: ``job`` (validation, lowering, a session) on a worker, within an admission slot of its
        own (compiling is work the server admits), once the worker may make a new session."""
        if self.closing:
            raise Unavailable(_SHUTTING_DOWN)
        await self.room_for_session(deadline)
        async with self.turn(deadline):
            return await self.offload(lambda _: job())

    async def offload(self, job: Job[T], deadline: float | None = None) -> T:
        """Run ``job`` on a worker thread. When the deadline passes or the caller is cancelled, the run's
        ``RunOptions.terminate`` is set and the slot is held until the thread returns (ONNX Runtime stops between
        nodes), so the running count stays true.

        Raises:
            DeadlineExceeded: the deadline passed while it ran (the run was stopped).
        """
        options = ort.RunOptions()
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self.workers, job, options)
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            return await wait_within(work, timeout)
        except (TimeoutError, asyncio.TimeoutError):
            options.terminate = True
            # NOTE: this wait can be cancelled too (the loop closing at exit); the outcome is read either way.
            work.add_done_callback(_read_outcome)
            await asyncio.wait({work})
            if work.exception() is None:
                return work.result()  # it finished just as the deadline passed
            raise DeadlineExceeded("the deadline passed while the operator ran; it was stopped") from None
        except asyncio.CancelledError:
            options.terminate = True
            # NOTE: a second cancellation (the loop closing at exit) would leave the run's outcome unread.
            work.add_done_callback(_read_outcome)
            await asyncio.wait({work})
            raise

    def inline_batch(self, work: int, on_device: bool, items: int) -> bool:
        """Whether a batch of ``items`` requests of ``work`` each runs on the event loop: tiny host work, a few tiny
        runs' worth together (an operator's lane and a model's queue alike)."""
        return not on_device and work <= self.inline_work and work * items <= self._inline_batch

    def observe_batch(self, size: int) -> None:
        """Count a batch run (the batch-size metric), whichever queue ran it."""
        if self.metrics is not None:
            self.metrics.batched(size)


class _Lane:
    """An operator's batching policy (``batching.Policy``): requests of one compiled desc stacked on a new axis,
    up to its batch size, one run at a time; a lone request waits at most ``max_delay`` for company."""

    slots = 1

    def __init__(self, scheduler: Scheduler, compiled: Compiled, size: int) -> None:
        self.scheduler = scheduler
        self._compiled = weakref.ref(compiled)  # its callers hold it while they wait: it lives while it runs
        self.full = size
        self.delay_ns = int(scheduler.max_delay * 1e9)

    def take(self, queue: deque[Member[Results]], now_ns: int) -> int | float:
        waited = now_ns - queue[0].arrived
        if len(queue) >= self.full or waited >= self.delay_ns:
            return min(len(queue), self.full)
        return (self.delay_ns - waited) / 1e9

    def inline(self, batch: list[Member[Results]]) -> bool:
        compiled = self._desc()
        return self.scheduler.inline_batch(compiled.work, compiled.on_device, len(batch))

    def run(self, batch: list[Member[Results]]) -> list[Results]:
        compiled = self._desc()
        if len(batch) == 1:
            return [compiled.run(batch[0].feeds)]
        return compiled.run_batch([member.feeds for member in batch], self.scheduler.pool)

    def _desc(self) -> Compiled:
        compiled = self._compiled()
        assert compiled is not None, "a lane runs only for callers that hold its desc"
        return compiled

    def ran(
        self, batch: list[Member[Results]], started_ns: int, results: list[Results] | None, error: BaseException | None
    ) -> None:
        self.scheduler.observe_batch(len(batch))


class _Turn:
    """One call's admission slot, as an async context manager (a plain class: it is entered on every call)."""

    __slots__ = ("admission", "deadline")

    def __init__(self, admission: Admission, deadline: float | None) -> None:
        self.admission = admission
        self.deadline = deadline

    async def __aenter__(self) -> float:
        admission = self.admission
        deadline = self.deadline
        if not admission.try_acquire():
            await admission.acquire(None if deadline is None else deadline - time.monotonic())
        started = time.monotonic()
        if deadline is not None and started >= deadline:
            admission.release()
            raise DeadlineExceeded("the deadline passed while the call waited; it was not executed")
        return started

    async def __aexit__(self, *exc_info: object) -> None:
        self.admission.release()


def _read_outcome(work: asyncio.Future[Any]) -> None:
    """Read a stopped run's outcome, so that its error is not reported as never retrieved."""
    if not work.cancelled():
        work.exception()


def _whole(compiled: Compiled, bind: Callable[[], Feeds], encode: Callable[[Results], T], options: ort.RunOptions) -> T:
    """A call's stages 4-6 on a worker thread: bind, run, encode."""
    return encode(compiled.run(bind(), options))
