"""Stage 4 of the request path: admission and deadlines, then where work runs (inline, a worker thread, a batch)."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import onnxruntime as ort

from dmlrpc_server.errors import DeadlineExceeded, Unavailable
from dmlrpc_server.runtime.admission import Admission
from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.compiler import Compiled

_log = logging.getLogger(__name__)

T = TypeVar("T")
Results = list[np.ndarray]
#: The most host bytes (inputs read from, outputs sent to the host) of a device call that runs on the event loop.
HOST_INLINE_BYTES = 64 * 1024
#: What a worker thread runs: a callable given the run's options, whose ``terminate`` stops ONNX Runtime.
Job = Callable[[ort.RunOptions], T]


@dataclass
class _Member:
    """One request waiting in a lane: its feeds, its future and its deadline (monotonic seconds)."""

    feeds: dict[str, np.ndarray]
    future: asyncio.Future[Results]
    deadline: float | None


@dataclass
class _Lane:
    """The requests of one compiled desc waiting for a run, and whether a run of them is under way."""

    compiled: Compiled
    size: int
    waiting: list[_Member] = field(default_factory=list)
    busy: bool = False


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
        *,
        inline_work: int,
        batch_work: int,
        device_inline_work: int,
        max_batch_size: int,
        max_delay: float,
        sizes_by_case: Mapping[str, int] | None = None,
        observe_batch: Callable[[int], None] | None = None,
    ) -> None:
        self.admission = admission
        self.workers = workers
        self.pool = pool
        self.inline_work = inline_work
        self.device_inline_work = device_inline_work
        self.batch_work = batch_work
        self.max_batch_size = max_batch_size
        self.max_delay = max_delay
        self.sizes_by_case = dict(sizes_by_case or {})
        self._observe_batch = observe_batch
        #: The most work a batch run on the event loop may have: a few tiny runs' worth.
        self._inline_batch = 4 * inline_work
        self._lanes: dict[int, _Lane] = {}
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
            raise Unavailable("the server is shutting down; retry on another replica")

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

    async def run(self, compiled: Compiled, feeds: dict[str, np.ndarray], deadline: float | None) -> Results:
        """Run one request's feeds: inline, on a worker, or in a batch with others of its desc."""
        size = self.batch_size(compiled)
        if size > 1:
            lane = self._lanes.get(id(compiled))
            idle = lane is None or (not lane.busy and not lane.waiting)
            if idle and self.max_delay == 0 and self.inline(compiled) and self.admission.running <= 1:
                # Alone on the server and no delay to wait for company: no loop turn is spent looking for it.
                self._observe(1)
                return compiled.run(feeds)
            return await self._enqueue(compiled, size, feeds, deadline)
        self._observe(1)
        if self.inline(compiled):
            return compiled.run(feeds)
        return await self.offload(lambda options: compiled.run(feeds, options), deadline)

    def run_group(
        self, compiled: Compiled, feeds: Sequence[dict[str, np.ndarray]], deadline: float | None
    ) -> list[asyncio.Future[Results]]:
        """Run several requests of one desc that arrived together (an ExecuteMany message) through its lane, as
        batches where the operator batches: one future each."""
        size = max(1, self.batch_size(compiled))
        return [self._join(compiled, size, item, deadline) for item in feeds]

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
            return await asyncio.wait_for(asyncio.shield(work), timeout)
        except (TimeoutError, asyncio.TimeoutError):
            options.terminate = True
            await asyncio.wait({work})
            if work.exception() is None:
                return work.result()  # it finished just as the deadline passed
            raise DeadlineExceeded("the deadline passed while the operator ran; it was stopped") from None
        except asyncio.CancelledError:
            options.terminate = True
            await asyncio.wait({work})
            raise

    # -- lanes (dynamic batching) -------------------------------------------------------------------------------

    async def _enqueue(
        self, compiled: Compiled, size: int, feeds: dict[str, np.ndarray], deadline: float | None
    ) -> Results:
        future = self._join(compiled, size, feeds, deadline)
        try:
            return await future
        except asyncio.CancelledError:
            future.cancel()  # a waiting member is skipped; a running batch runs on for the others
            raise

    def _join(
        self, compiled: Compiled, size: int, feeds: dict[str, np.ndarray], deadline: float | None
    ) -> asyncio.Future[Results]:
        loop = asyncio.get_running_loop()
        key = id(compiled)
        lane = self._lanes.get(key)
        if lane is None or lane.compiled is not compiled:
            lane = self._lanes[key] = _Lane(compiled, size)
        member = _Member(feeds, loop.create_future(), deadline)
        lane.waiting.append(member)
        if not lane.busy and len(lane.waiting) == 1:
            # NOTE: the first request schedules the run instead of starting it, so that requests the loop has
            # already taken in (an ExecuteMany message's items, calls that arrived together) join its batch.
            if self.max_delay > 0:
                loop.call_later(self.max_delay, self._start, lane)
            else:
                loop.call_soon(self._start, lane)
        elif not lane.busy and len(lane.waiting) >= lane.size:
            self._start(lane)
        return member.future

    def _start(self, lane: _Lane) -> None:
        """Run the lane's waiting requests, a batch at a time: tiny batches inline, one after another; others on a
        worker, the lane busy (collecting the next batch) until it finishes."""
        while not lane.busy and lane.waiting:
            batch = self._live(lane.waiting[: lane.size])
            del lane.waiting[: lane.size]
            if not batch:
                continue
            self._observe(len(batch))
            compiled = lane.compiled
            options = ort.RunOptions()
            if self.inline(compiled) and compiled.work * len(batch) <= self._inline_batch:
                try:
                    _settle(batch, self._run_batch(compiled, batch, options), None)
                except Exception as error:
                    _settle(batch, None, error)
                continue
            lane.busy = True
            work = asyncio.get_running_loop().run_in_executor(self.workers, self._run_batch, compiled, batch, options)
            work.add_done_callback(functools.partial(self._finished, lane, batch))
            return
        if self._lanes.get(id(lane.compiled)) is lane:
            del self._lanes[id(lane.compiled)]

    def _finished(self, lane: _Lane, batch: list[_Member], done: asyncio.Future[list[Results]]) -> None:
        """A worker's batch ended: give each member its outputs (or the batch's error), then start the next."""
        lane.busy = False
        error = done.exception()
        _settle(batch, None if error is not None else done.result(), error)
        self._start(lane)

    def _run_batch(self, compiled: Compiled, batch: list[_Member], options: ort.RunOptions | None) -> list[Results]:
        if len(batch) == 1:
            return [compiled.run(batch[0].feeds, options)]
        return compiled.run_batch([member.feeds for member in batch], self.pool, options)

    @staticmethod
    def _live(members: list[_Member]) -> list[_Member]:
        """The members still wanted: cancelled ones are dropped, expired ones get DEADLINE_EXCEEDED unrun."""
        now = time.monotonic()
        live: list[_Member] = []
        for member in members:
            if member.future.done():
                continue
            if member.deadline is not None and now >= member.deadline:
                member.future.set_exception(
                    DeadlineExceeded("the deadline passed while the call waited for its batch; it was not executed")
                )
                continue
            live.append(member)
        return live

    def observe_alone(self) -> None:
        """Count a run of one request that the caller ran through ``offload`` (the batch-size metric)."""
        self._observe(1)

    def _observe(self, size: int) -> None:
        if self._observe_batch is not None:
            self._observe_batch(size)


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


def _settle(batch: list[_Member], results: list[Results] | None, error: BaseException | None) -> None:
    """Give each member its own outputs, or the batch's error (every member gets it)."""
    if error is not None or results is None:
        _log.error("batch of %d failed", len(batch), exc_info=error)
        for member in batch:
            if not member.future.done():
                member.future.set_exception(error or RuntimeError("no results"))
        return
    for member, outputs in zip(batch, results, strict=True):
        if not member.future.done():
            member.future.set_result(outputs)
