"""Stage 5's dynamic batcher, one for both front doors: a queue under a policy (an operator's lane, a model's)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

import numpy as np

from dmlrpc_server.errors import DeadlineExceeded

_log = logging.getLogger(__name__)

R = TypeVar("R")
Feeds = dict[str, np.ndarray]
_EXPIRED = "the deadline passed while the call waited for its batch; it was not executed"
#: The future of a member run at once, before any queue holds it (it gets a real one if it queues after all).
#: NOTE: a future is a loop call and an object, and a tiny unbatched model call would await none.
_UNQUEUED: asyncio.Future[Any] = cast("asyncio.Future[Any]", None)


@dataclass(eq=False)
class Member(Generic[R]):
    """One request waiting in a queue."""

    feeds: Feeds
    #: The batch items it brings (1 for a request stacked on a new axis; its first dimension for a model's).
    size: int
    #: Requests batch together only when their keys are equal (a model's non-batch shapes).
    key: Hashable
    future: asyncio.Future[R]
    arrived: int  # perf_counter_ns
    deadline: float | None


class Policy(Protocol[R]):
    """When a queue takes a batch, how many runs it has at once, where a batch runs and how, and what is counted."""

    #: Runs of this queue at once (a model's instances; one for an operator's lane).
    slots: int
    #: A waiting queue this long is taken at once, without waiting for the loop's next turn.
    full: int

    def take(self, queue: deque[Member[R]], now_ns: int) -> int | float:
        """How many of the queue's first members run now (an int, at least 1), or the seconds to wait for company
        (a float)."""
        ...

    def inline(self, batch: list[Member[R]]) -> bool:
        """Whether ``batch`` runs on the event loop (tiny work: a thread hop would cost more)."""
        ...

    def run(self, batch: list[Member[R]]) -> list[R]:
        """Run a batch (on a worker thread unless ``inline``): each member's result. Nothing stops a batch
        half-way: its members' deadlines are checked before it starts, and its other members still wait for it."""
        ...

    def ran(
        self, batch: list[Member[R]], started_ns: int, results: list[R] | None, error: BaseException | None
    ) -> None:
        """Count a batch that ran (its ``results``) or failed (``error``): the statistics hook."""
        ...


class BatchQueue(Generic[R]):
    """The requests waiting for one batch run after another, taken in arrival order under ``policy``.

    The first request schedules a look at the queue on the loop's next turn instead of running at once, so that
    requests the loop has already taken in (an ExecuteMany message's items, calls that arrived together) join its
    batch; a queue as long as ``policy.full`` goes at once. While every slot runs, requests queue and then run
    together, so batches grow as fast as the work is busy. Use from the event loop thread only.
    """

    def __init__(self, policy: Policy[R], workers: Executor) -> None:
        """``workers`` run the batches that are not inline (the scheduler's threads)."""
        self.policy = policy
        self._workers = workers
        self.queue: deque[Member[R]] = deque()
        self.running = 0
        self._scheduled = False
        self._timer: asyncio.TimerHandle | None = None

    def submit(self, feeds: Feeds, size: int, key: Hashable, deadline: float | None) -> asyncio.Future[R]:
        """Queue one request's feeds: its result's future (cancel it to leave a batch that has not run)."""
        loop = asyncio.get_running_loop()
        member: Member[R] = Member(feeds, size, key, loop.create_future(), time.perf_counter_ns(), deadline)
        self.queue.append(member)
        if len(self.queue) >= self.policy.full and self.running < self.policy.slots:
            self.dispatch()
        elif not self._scheduled:
            # NOTE: a turn later, not now: requests the loop has already taken in join this batch.
            self._scheduled = True
            loop.call_soon(self.dispatch)
        return member.future

    async def result(self, feeds: Feeds, size: int, key: Hashable, deadline: float | None) -> R:
        """``submit``, awaited: a cancelled caller leaves its batch (a running batch runs on for the others).

        A request that is a whole batch alone (``policy.full``), with nothing queued and a slot free, is taken at
        once; when its run is inline it runs here, with no queue entry to settle (an unbatched model's calls).
        """
        policy = self.policy
        if size >= policy.full and not self.queue and self.running < policy.slots:
            arrived = time.perf_counter_ns()
            lone = [Member(feeds, size, key, _UNQUEUED, arrived, deadline)]
            if policy.inline(lone):
                if deadline is not None and time.monotonic() >= deadline:
                    raise DeadlineExceeded(_EXPIRED)
                try:
                    results = policy.run(lone)
                except Exception as error:
                    policy.ran(lone, arrived, None, error)
                    raise
                policy.ran(lone, arrived, results, None)
                return results[0]
            future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
            lone[0].future = future
            self.queue.append(lone[0])
            self.dispatch()
        else:
            future = self.submit(feeds, size, key, deadline)
        try:
            return await future
        except asyncio.CancelledError:
            future.cancel()
            raise

    def dispatch(self) -> None:
        """Start the batches the policy takes now, while a slot is free; inline ones run here, one after another."""
        self._scheduled = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        policy = self.policy
        while self.running < policy.slots and self.queue:
            self._drop_dead()
            if not self.queue:
                return
            take = policy.take(self.queue, time.perf_counter_ns())
            if isinstance(take, float):
                self._timer = asyncio.get_running_loop().call_later(take, self.dispatch)
                return
            batch = [self.queue.popleft() for _ in range(take)]
            started = time.perf_counter_ns()
            if policy.inline(batch):
                try:
                    results = policy.run(batch)
                except Exception as error:
                    self._settle(batch, None, error, started)
                else:
                    self._settle(batch, results, None, started)
                continue
            try:
                work = self._workers.submit(policy.run, batch)
            except RuntimeError as error:  # the workers are shut down: the server stops
                self._settle(batch, None, error, started)
                continue
            self.running += 1
            work.add_done_callback(functools.partial(_hand_back, asyncio.get_running_loop(), self._ran, batch, started))

    def _drop_dead(self) -> None:
        """Cancelled members leave; expired ones get DEADLINE_EXCEEDED unrun."""
        now = time.monotonic()
        for member in self.queue:  # NOTE: the queue is rebuilt only when a member leaves (seldom)
            if member.future.done() or (member.deadline is not None and now >= member.deadline):
                break
        else:
            return
        live: deque[Member[R]] = deque()
        for member in self.queue:
            if member.future.done():
                continue
            if member.deadline is not None and now >= member.deadline:
                member.future.set_exception(DeadlineExceeded(_EXPIRED))
                continue
            live.append(member)
        self.queue = live

    def _ran(self, batch: list[Member[R]], started: int, work: Future[list[R]]) -> None:
        """A batch's run on a worker ended: the next batch starts first, then its members get their results.

        NOTE: in this order, one loop callback after the thread returns, the worker is busy again before the
        members' callers wake up to write their responses (under load, dozens of them): the batching floor's way.
        """
        self.running -= 1
        if self.queue:
            self.dispatch()
        if work.cancelled():  # the workers were shut down (the server stops) before it ran
            for member in batch:
                member.future.cancel()
            return
        error = work.exception()
        if error is None:
            self._settle(batch, work.result(), None, started)
        else:
            self._settle(batch, None, error, started)

    def _settle(
        self, batch: list[Member[R]], results: list[R] | None, error: BaseException | None, started: int
    ) -> None:
        """Give each member its own result, or the batch's error (every member gets it), and count the batch."""
        self.policy.ran(batch, started, results, error)
        if error is not None or results is None:
            _log.debug("a batch of %d failed", len(batch), exc_info=error)
            for member in batch:
                if not member.future.done():
                    member.future.set_exception(error or RuntimeError("no results"))
            return
        for member, result in zip(batch, results, strict=True):
            if not member.future.done():
                member.future.set_result(result)


def _hand_back(
    loop: asyncio.AbstractEventLoop,
    ran: Callable[[list[Member[R]], int, Future[list[R]]], None],
    batch: list[Member[R]],
    started: int,
    work: Future[list[R]],
) -> None:
    """On the worker thread that ran ``batch``: hand its outcome to the event loop (``BatchQueue._ran``)."""
    # NOTE: the loop may have closed (the server stopped) while the batch ran: then nobody waits for it.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(ran, batch, started, work)
