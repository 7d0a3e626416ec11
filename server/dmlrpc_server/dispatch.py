"""The Execute path between the servicer and the executor: admission, deadlines, the thread choice, metrics."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

from dmlrpc.v1 import service_pb2
from dmlrpc_server.errors import DeadlineExceeded, Unavailable
from dmlrpc_server.executor import Executor
from dmlrpc_server.metrics import Metrics
from dmlrpc_server.runtime.admission import Admission


class Dispatcher:
    """Runs Execute requests: waits for a slot (bounded queue), skips expired calls, runs small ones inline."""

    def __init__(
        self,
        executor: Executor,
        admission: Admission,
        workers: ThreadPoolExecutor,
        *,
        inline_bytes: int,
        metrics: Metrics | None = None,
    ) -> None:
        self.executor = executor
        self.admission = admission
        self._workers = workers
        self._inline_bytes = inline_bytes
        self._metrics = metrics
        self.closing = False

    async def drain(self, timeout: float | None) -> bool:
        """Refuse new calls (UNAVAILABLE) and wait up to ``timeout`` s for admitted and queued ones to finish.

        Returns whether every call finished in time.
        """
        self.closing = True
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.admission.running or self.admission.waiting:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.005)
        return True

    async def execute(self, request: service_pb2.ExecuteRequest, time_remaining: float | None) -> list[bytes | None]:
        """Run one request within its deadline (``time_remaining`` seconds, ``None`` = none).

        Raises:
            ServiceError: validation, limits, the queue bound (RESOURCE_EXHAUSTED) or an expired deadline.
        """
        if self.closing:
            # NOTE: refusing here, before gRPC stops, lets clients tell "not run" (UNAVAILABLE, safe to retry
            # elsewhere) from a call cut off mid-way; gRPC's own stop would cancel queued calls instead.
            raise Unavailable("the server is shutting down; retry on another replica")
        arrived = time.monotonic()
        size = request.ByteSize()
        async with self.admission.slot(time_remaining):
            started = time.monotonic()
            if time_remaining is not None and started - arrived >= time_remaining:
                raise DeadlineExceeded("the deadline passed while the call waited; it was not executed")
            if size <= self._inline_bytes:
                # NOTE: a thread hop costs more than a tiny operator; large ones run on workers (ORT frees the GIL).
                outputs = self.executor.execute(request.operator_desc, request.inputs)
            else:
                outputs = await self._on_worker(request)
            finished = time.monotonic()
        if self._metrics is not None:
            operator = request.operator_desc.WhichOneof("desc") or "unset"
            self._metrics.queue_duration.observe(started - arrived)
            self._metrics.compute_duration.labels(operator).observe(finished - started)
            self._metrics.batch_size.observe(1)
            self._metrics.received_bytes.inc(size)
            self._metrics.sent_bytes.inc(sum(len(data) for data in outputs if data is not None))
        return outputs

    async def _on_worker(self, request: service_pb2.ExecuteRequest) -> list[bytes | None]:
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._workers, self.executor.execute, request.operator_desc, request.inputs)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            # The thread cannot be stopped: keep the slot until it finishes so the running count stays true.
            await asyncio.wait({work})
            raise
