"""Admission control: a bounded number of calls run, a bounded number wait (FIFO), the rest are refused."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import TypeVar

from dmlrpc_server.errors import DeadlineExceeded, ResourceExhausted

T = TypeVar("T")

#: The context the timers of ``wait_within`` run in: none of a call's.
_NO_CALL = contextvars.Context()


async def wait_within(future: asyncio.Future[T], timeout: float | None) -> T:
    """``future``'s result once it is done, as ``asyncio.wait_for(asyncio.shield(future), timeout)``: TimeoutError
    after ``timeout`` seconds, and neither that nor the caller's cancellation cancels ``future``.

    NOTE: not wait_for itself: its timer holds a copy of the caller's context (the call the servicer set, and so
    its request's buffers), and a cancelled timer stays in the loop's schedule until its time comes (asyncio sweeps
    cancelled timers out only while more than 100 are scheduled and over half of them are cancelled). That kept
    each call until its deadline: 1.2 GiB at rest after 72 calls of 4-28 MiB requests (docs/reliability.md).
    """
    if future.done() or timeout is None:
        return await asyncio.shield(future)
    loop = asyncio.get_running_loop()
    ended = loop.create_future()

    def end(_: object = None) -> None:
        if not ended.done():
            ended.set_result(None)

    timer = loop.call_later(timeout, end, context=_NO_CALL)
    future.add_done_callback(end, context=_NO_CALL)
    try:
        await ended
    finally:
        timer.cancel()
        future.remove_done_callback(end)
    if not future.done():
        raise TimeoutError
    return future.result()


class Admission:
    """Slots for running calls plus a bounded FIFO queue of waiting ones.

    A slot freed by a finishing call passes straight to the oldest waiter, so the running count never dips
    below the limit while calls wait. Use only from the event loop thread.
    """

    def __init__(
        self,
        max_running: int,
        max_waiting: int,
        *,
        limits: str = "the limits --max-concurrent-requests and --max-queue-depth",
        scope: str = "",
    ) -> None:
        self.max_running = max_running
        self.max_waiting = max_waiting
        self._limits = limits
        self._scope = scope
        self.running = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def idle(self) -> bool:
        """Whether no call holds a slot or waits for one."""
        return not self.running and not self._waiters

    def try_acquire(self) -> bool:
        """Take a slot if one is free and nobody waits (the fast path: no coroutine, no future)."""
        if self.running < self.max_running and not self._waiters:
            self.running += 1
            return True
        return False

    @contextlib.asynccontextmanager
    async def slot(self, timeout: float | None) -> AsyncIterator[None]:
        """Hold a running slot for the ``async with`` body.

        Raises:
            ResourceExhausted: the queue is full (nothing was queued).
            DeadlineExceeded: ``timeout`` seconds passed while waiting (the body did not run).
        """
        await self.acquire(timeout)
        try:
            yield
        finally:
            self.release()

    async def acquire(self, timeout: float | None) -> None:
        """Take a slot, waiting in the queue if need be (see ``slot``); pair with ``release``."""
        if self.try_acquire():
            return
        if len(self._waiters) >= self.max_waiting:
            raise ResourceExhausted(
                f"server busy: {self.running} calls running{self._scope} and {len(self._waiters)} waiting "
                f"({self._limits}); retry later"
            )
        if timeout is not None and timeout <= 0:
            raise DeadlineExceeded("the deadline passed before the call could start; it was not executed")
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await wait_within(waiter, timeout)
        except BaseException as error:
            if waiter.done() and not waiter.cancelled():
                self.release()  # the slot arrived as we gave up: pass it on
            else:
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            if isinstance(error, TimeoutError | asyncio.TimeoutError):
                raise DeadlineExceeded(
                    f"the deadline passed after waiting {timeout:.3f} s for a free slot; the call was not executed"
                ) from None
            raise

    def release(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # hand the slot over; `running` is unchanged
                return
        self.running -= 1


class ByteBudget:
    """Bytes held for callers beyond their run (outputs waiting to be read), bounded server-wide.

    A call reserves its bytes before it makes them and releases them once they are written to its caller; a call
    that does not fit waits in FIFO order, at most ``max_wait`` seconds (and its deadline), then is refused. A
    caller that never reads keeps only what it reserved: never more than ``capacity`` bytes in all. Use only from
    the event loop thread.
    """

    def __init__(self, capacity: int, *, max_wait: float, setting: str) -> None:
        self.capacity = capacity
        self.max_wait = max_wait
        self.setting = setting
        self.held = 0
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()

    @property
    def waiting(self) -> int:
        """Calls waiting now for their bytes to fit."""
        return len(self._waiters)

    def fits(self, size: int) -> bool:
        """Whether ``try_acquire(size)`` would reserve the bytes now (reserves nothing)."""
        return not self._waiters and self.held + size <= self.capacity

    def try_acquire(self, size: int) -> bool:
        """Reserve ``size`` bytes if they fit now and nobody waits (pair with ``release``)."""
        if not self._waiters and self.held + size <= self.capacity:
            self.held += size
            return True
        return False

    async def acquire(self, size: int, deadline: float | None) -> None:
        """Reserve ``size`` bytes (pair with ``release``).

        Raises:
            ResourceExhausted: ``size`` exceeds the capacity, or the bytes did not become free in time.
        """
        if size > self.capacity:
            raise ResourceExhausted(
                f"the call stages {size:,} bytes of outputs for its caller, over the limit of {self.capacity:,} "
                f"({self.setting}); raise {self.setting} or make the outputs smaller"
            )
        if self.try_acquire(size):
            return
        loop = asyncio.get_running_loop()
        timeout = self.max_wait if deadline is None else min(self.max_wait, max(0.0, deadline - time.monotonic()))
        waiter = loop.create_future()
        entry = (size, waiter)
        self._waiters.append(entry)
        try:
            await wait_within(waiter, timeout)
        except BaseException as error:
            if waiter.done() and not waiter.cancelled():
                self.release(size)  # the bytes arrived as we gave up: pass them on
            else:
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    self._waiters.remove(entry)
                self._wake()
            if isinstance(error, TimeoutError | asyncio.TimeoutError):
                raise ResourceExhausted(
                    f"other calls' outputs waiting for their callers to read them hold {self.held:,} of the "
                    f"{self.capacity:,} bytes allowed ({self.setting}); retry later or raise {self.setting}"
                ) from None
            raise

    def release(self, size: int) -> None:
        self.held -= size
        if self._waiters:
            self._wake()

    def _wake(self) -> None:
        while self._waiters:
            size, waiter = self._waiters[0]
            if waiter.done():
                self._waiters.popleft()
                continue
            if self.held + size > self.capacity:
                return
            self._waiters.popleft()
            self.held += size
            waiter.set_result(None)

    @contextlib.asynccontextmanager
    async def reserved(self, size: int, deadline: float | None) -> AsyncIterator[None]:
        """Hold ``size`` bytes for the ``async with`` body."""
        await self.acquire(size, deadline)
        try:
            yield
        finally:
            self.release(size)
