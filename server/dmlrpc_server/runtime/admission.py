"""Admission control: a bounded number of calls run, a bounded number wait (FIFO), the rest are refused."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

from dmlrpc_server.errors import DeadlineExceeded, ResourceExhausted


class Admission:
    """Slots for running calls plus a bounded FIFO queue of waiting ones.

    A slot freed by a finishing call passes straight to the oldest waiter, so the running count never dips
    below the limit while calls wait. Use only from the event loop thread.
    """

    def __init__(self, max_running: int, max_waiting: int) -> None:
        self.max_running = max_running
        self.max_waiting = max_waiting
        self.running = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

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
                f"server busy: {self.running} calls running and {len(self._waiters)} waiting (the queue limit); "
                "retry later"
            )
        if timeout is not None and timeout <= 0:
            raise DeadlineExceeded("the deadline passed before the call could start; it was not executed")
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter), timeout)
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
