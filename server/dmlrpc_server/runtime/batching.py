"""Dynamic batching: requests of one compiled desc that wait together run as one ONNX Runtime call."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import onnxruntime as ort

from dmlrpc_server.errors import DeadlineExceeded
from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.compiler import Compiled

_log = logging.getLogger(__name__)

#: While batches find no company, one request in this many still goes through a batch to look for it.
PROBE_EVERY = 8


@dataclass
class _Waiting:
    feeds: dict[str, np.ndarray]
    future: asyncio.Future[list[np.ndarray]]
    deadline: float | None


class Batcher:
    """Queues requests per compiled desc and flushes each queue as one batch.

    A queue flushes when it reaches its operator's batch size, or ``max_delay`` seconds after its first request
    (0: as soon as the event loop has taken in the requests that arrived together: batching under load, no added
    wait when idle). Each request's future gets its own outputs, or the error of its batch; a request whose
    client went away is skipped, and one whose deadline passed gets DEADLINE_EXCEEDED without running.
    Use from the event loop thread only.
    """

    def __init__(
        self,
        pool: BufferPool,
        *,
        max_batch_size: int,
        max_delay: float,
        sizes_by_case: Mapping[str, int] | None = None,
        observe: Callable[[int], None] | None = None,
    ) -> None:
        self.pool = pool
        self.max_batch_size = max_batch_size
        self.max_delay = max_delay
        self.sizes_by_case = dict(sizes_by_case or {})
        self._observe = observe
        self._queues: dict[int, tuple[Compiled, list[_Waiting]]] = {}
        self._company = False
        self._solo_left = 0
        self._terminate_next = False

    def fail_next_batch(self) -> None:
        """Make ONNX Runtime itself fail the next batch of two or more requests (``RunOptions.terminate``): the
        reliability suite's fault point for "the runtime raised inside a batch". Call from the event loop thread."""
        self._terminate_next = True

    def wanted(self, busy: bool) -> bool:
        """Whether the next request should go through a batch (and yield the loop once) or run at once.

        Batching pays a loop turn per request, and tiny requests never overlap unless one yields, so concurrency
        cannot be seen in advance. Requests batch while other calls run (``busy``) or recent batches had company;
        otherwise they run at once, and every ``PROBE_EVERY``-th one batches to look for company.
        """
        if busy or self._company:
            return True
        self._solo_left -= 1
        if self._solo_left <= 0:
            self._solo_left = PROBE_EVERY
            return True
        return False

    def batch_size(self, case: str) -> int:
        return self.sizes_by_case.get(case, self.max_batch_size)

    async def run(
        self, compiled: Compiled, case: str, feeds: dict[str, np.ndarray], deadline: float | None
    ) -> list[np.ndarray]:
        """The model outputs for one request's ``feeds``, computed in a batch with others of the same desc."""
        loop = asyncio.get_running_loop()
        waiting = _Waiting(feeds, loop.create_future(), deadline)
        key = id(compiled)
        entry = self._queues.get(key)
        if entry is None:
            entry = (compiled, [])
            self._queues[key] = entry
            if self.max_delay > 0:
                loop.call_later(self.max_delay, self._flush, key)
            else:
                loop.call_soon(self._flush, key)
        entry[1].append(waiting)
        if len(entry[1]) >= self.batch_size(case):
            self._flush(key)
        return await waiting.future

    def _flush(self, key: int) -> None:
        entry = self._queues.pop(key, None)
        if entry is None:
            return  # already flushed by size
        compiled, queue = entry
        now = time.monotonic()
        live: list[_Waiting] = []
        for waiting in queue:
            if waiting.future.done():
                continue  # cancelled by its client: the others run without it
            if waiting.deadline is not None and now >= waiting.deadline:
                waiting.future.set_exception(
                    DeadlineExceeded("the deadline passed while the call waited for its batch; it was not executed")
                )
                continue
            live.append(waiting)
        if not live:
            return
        self._company = len(live) > 1
        if self._observe is not None:
            self._observe(len(live))
        try:
            if len(live) == 1:
                results = [compiled.run(live[0].feeds)]
            else:
                options = None
                if self._terminate_next:
                    self._terminate_next = False
                    options = ort.RunOptions()
                    options.terminate = True
                results = compiled.run_batch([waiting.feeds for waiting in live], self.pool, options)
        except Exception as error:  # every member gets its batch's error
            _log.exception("batch of %d failed", len(live))
            for waiting in live:
                if not waiting.future.done():
                    waiting.future.set_exception(error)
            return
        for waiting, outputs in zip(live, results, strict=True):
            if not waiting.future.done():
                waiting.future.set_result(outputs)
