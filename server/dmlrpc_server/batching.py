"""Stage 5's dynamic batcher, one for both front doors: a queue under a policy (an operator's lane, a model's)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

import numpy as np
import onnxruntime as ort

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

    def run(self, batch: list[Member[R]], options: ort.RunOptions | None) -> list[R]:
        """Run a batch (on a worker thread unless ``inline``): each member's result. ``options`` is the run's own,
        by which its thread is stopped, or None on the loop (nothing stops a tiny run half-way)."""
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

    def __init__(
        self, policy: Policy[R], offload: Callable[[Callable[[ort.RunOptions], list[R]]], Awaitable[list[R]]]
    ) -> None:
        """``offload`` runs a batch on a worker thread (``Scheduler.offload``)."""
        self.policy = policy
        self._offload = offload
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
                    results = policy.run(lone, None)
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
            if policy.inline(batch):
                started = time.perf_counter_ns()
                try:
                    results = policy.run(batch, None)
                except Exception as error:
                    self._settle(batch, None, error, started)
                else:
                    self._settle(batch, results, None, started)
                continue
            self.running += 1
            task = asyncio.ensure_future(self._execute(batch))
            task.add_done_callback(self._finished)

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

    async def _execute(self, batch: list[Member[R]]) -> None:
        started = time.perf_counter_ns()
        policy = self.policy
        try:
            results = await self._offload(lambda options: policy.run(batch, options))
        except Exception as error:
            self._settle(batch, None, error, started)
        else:
            self._settle(batch, results, None, started)

    def _finished(self, task: asyncio.Future[None]) -> None:
        self.running -= 1
        if self.queue:
            self.dispatch()

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
