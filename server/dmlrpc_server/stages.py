"""The stages every RPC's recipe shares: compile, the run of stages 3-5 within a call's slot and memory, resident
calls, metrics."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass

import onnxruntime as ort

from dmlrpc.v1 import operators_pb2, service_pb2
from dmlrpc_server.calls import EXECUTED_ON
from dmlrpc_server.executor import Executor, compile_flags
from dmlrpc_server.metrics import Metrics
from dmlrpc_server.responses import Encoded
from dmlrpc_server.runtime.admission import ByteBudget
from dmlrpc_server.runtime.buffers import Buffer
from dmlrpc_server.runtime.compiler import Compiled
from dmlrpc_server.runtime.handles import Handle, HandleStore
from dmlrpc_server.runtime.resident import Resident
from dmlrpc_server.scheduler import Scheduler

#: Bytes of a unary call's response still reserved in ``Service.memory`` when the service returns it: the servicer
#: releases them once the RPC is done, as gRPC holds the response until the caller has read it.
RESPONSE_HELD: ContextVar[int] = ContextVar("dmlrpc_response_held", default=0)
#: Smaller responses are released on return: the calls that can run or wait at once hold few of them.
HOLD_RESPONSES_FROM = 1 << 16


@dataclass(frozen=True)
class StreamLimits:
    """Bounds of one ExecuteMany stream: items admitted at once, and their request bytes."""

    items: int
    bytes: int


class Stages:
    """What the recipes of ``Service`` (and each item of an ExecuteMany stream) are made of: stage 2 (``compiled``),
    stages 3-5 of a unary call within its admission slot and reserved memory (``run``), a resident call
    (``resident``), and the metrics every call records."""

    def __init__(
        self,
        executor: Executor,
        scheduler: Scheduler,
        handles: HandleStore,
        *,
        metrics: Metrics | None = None,
        stream_chunk_bytes: int,
        stream_limits: StreamLimits,
        max_graph_nodes: int,
        memory: ByteBudget,
        stream_idle_seconds: float | None,
    ) -> None:
        self.executor = executor
        self.scheduler = scheduler
        self.handles = handles
        self._metrics = metrics
        self._chunk = stream_chunk_bytes
        self.stream_limits = stream_limits
        self.max_graph_nodes = max_graph_nodes
        #: The memory calls in progress add (their runs' tensors, their responses until read): reserved per call.
        self.memory = memory
        #: The longest wait for a client's next message on a stream (None: no limit).
        self.stream_idle = stream_idle_seconds

    async def compiled(
        self, operator_desc: operators_pb2.OperatorDesc, deadline: float | None = None, execution_flags: int = 0
    ) -> Compiled:
        """Stage 2: the cached compiled desc, or compile it on a worker (validation and lowering take milliseconds)
        within an admission turn of its own, so that compiling counts as work the server admits. ``execution_flags``
        is the request's DML_EXECUTION_FLAGS (INVALID_ARGUMENT at `execution_flags` for an unknown bit)."""
        flags = compile_flags(execution_flags)
        compiled = self.executor.cached(operator_desc, flags)
        if compiled is None:
            await self.scheduler.room_for_session(deadline)
            async with self.scheduler.turn(deadline):
                compiled = await self.scheduler.offload(lambda _: self.executor.compiled(operator_desc, flags))
        placed(compiled)
        return compiled

    def on_loop(self, compiled: Compiled) -> bool:
        """Whether binding and encoding stay on the event loop: tiny work, or small requests that may batch."""
        scheduler = self.scheduler
        return scheduler.inline(compiled) or scheduler.batch_size(compiled) > 1

    async def run(
        self,
        compiled: Compiled,
        buffers: list[Buffer | None],
        deadline: float | None,
        arrived: float,
        received: int,
    ) -> list[Encoded]:
        """Stages 3-5 of one unary call within its admission slot and its reserved memory."""
        executor = self.executor
        memory = self.memory
        size = compiled.memory
        if not memory.try_acquire(size):
            await memory.acquire(size, deadline)
        try:
            async with self.scheduler.turn(deadline) as started:
                if self.on_loop(compiled):
                    results = await self.scheduler.run(compiled, executor.feeds(compiled, buffers), deadline)
                    outputs = executor.encode_outputs(compiled, results)
                else:
                    outputs = await self.scheduler.offload(functools.partial(self.whole, compiled, buffers), deadline)
                    self.scheduler.observe_alone()
                self._observe(compiled.label, arrived, started, received, outputs)
        except BaseException:
            memory.release(size)
            raise
        placed(compiled)  # again: a device run that failed moved the desc to the host just now
        self._hold_response(size, compiled.plan.response_bytes)
        return outputs

    def _hold_response(self, reserved: int, response: int) -> None:
        """Release a unary call's reserved memory but for a large response, which stays reserved until the RPC is
        done (``RESPONSE_HELD``: gRPC holds it until the caller reads it)."""
        if response < HOLD_RESPONSES_FROM:
            self.memory.release(reserved)
            return
        self.memory.release(reserved - response)
        RESPONSE_HELD.set(RESPONSE_HELD.get() + response)

    def whole(self, compiled: Compiled, buffers: Sequence[Buffer | None], options: ort.RunOptions) -> list[Encoded]:
        """Stages 3-5 on a worker thread: bind, run, encode."""
        executor = self.executor
        return executor.encode_outputs(compiled, compiled.run(executor.feeds(compiled, buffers), options))

    async def resident(
        self,
        request: service_pb2.ExecuteRequest | service_pb2.DispatchRequest,
        owner: str,
        deadline: float | None,
        compiled: Compiled,
        entry: Handle | None,
        label: str,
        *,
        hold_response: bool = True,
    ) -> list[bytes | Resident | None]:
        """A call with resident bindings or kept outputs (never batched): inline when tiny, else on a worker.

        With ``hold_response`` (a unary call) a large response stays reserved until the RPC is done (see
        ``RESPONSE_HELD``); else the call's memory is released when this returns.
        """
        arrived = time.monotonic()
        size = compiled.memory
        await self.memory.acquire(size, deadline)
        try:
            outputs = await self._resident(request, owner, deadline, compiled, entry, label, arrived)
        except BaseException:
            self.memory.release(size)
            raise
        placed(compiled)  # again: a device run that failed moved the desc to the host just now
        if hold_response:
            self._hold_response(size, compiled.plan.response_bytes)
        else:
            self.memory.release(size)
        return outputs

    async def _resident(
        self,
        request: service_pb2.ExecuteRequest | service_pb2.DispatchRequest,
        owner: str,
        deadline: float | None,
        compiled: Compiled,
        entry: Handle | None,
        label: str,
        arrived: float,
    ) -> list[bytes | Resident | None]:
        """Stages 3-5 of a resident call within its admission slot."""
        run = functools.partial(
            self.executor.execute_resident,
            owner,
            compiled,
            request,
            output_descs=None if entry is None else entry.output_desc_bytes,
            bind=None if entry is None else entry.bind,
        )
        async with self.scheduler.turn(deadline) as started:
            if self.scheduler.inline_on_device(compiled, self._host_bytes(compiled, request)):
                outputs = run()
            else:
                outputs = await self.scheduler.offload(lambda _: run(), deadline)
            self.scheduler.observe_alone()
            sent = [item for item in outputs if not isinstance(item, Resident)]
            self._observe(label, arrived, started, request.ByteSize(), sent)
        return outputs

    def _host_bytes(self, compiled: Compiled, request: service_pb2.ExecuteRequest | service_pb2.DispatchRequest) -> int:
        """The bytes a resident call moves through host memory: its buffer inputs and the outputs it sends back
        (on a host provider every tensor is in host memory)."""
        on_host = self.executor.resident.device.on_host
        plan = compiled.plan
        bindings = request.inputs
        read = sum(
            layout.total_bytes
            for index, layout in enumerate(plan.inputs)
            if layout is not None
            and (on_host or index >= len(bindings) or bindings[index].WhichOneof("binding") != "resident")
        )
        kept = set(request.keep_outputs)
        sent = sum(
            layout.total_bytes
            for index, layout in enumerate(plan.outputs)
            if layout is not None and (on_host or index not in kept)
        )
        return read + sent

    # -- metrics ------------------------------------------------------------------------------------------------

    def _observe(
        self,
        label: str,
        arrived: float,
        started: float,
        received: int,
        outputs: Sequence[bytes | memoryview | list[bytes | None] | None],
    ) -> None:
        metrics = self._metrics
        if metrics is None:
            return
        metrics.queue_duration.observe(started - arrived)
        metrics.compute_duration.labels(label).observe(time.monotonic() - started)
        metrics.received_bytes.inc(received)
        flat = (item for data in outputs for item in (data if isinstance(data, list) else [data]))
        metrics.sent_bytes.inc(sum(len(data) for data in flat if data is not None))


def received_bytes(buffers: Sequence[Buffer | None]) -> int:
    """The bytes a call's buffers bring (a metric; ``ByteSize`` would serialize the message again)."""
    return sum(len(buffer) for buffer in buffers if buffer is not None)


def placed(compiled: Compiled) -> None:
    """Note for the call's trailer where its operator runs, when that is not (only) the server's provider."""
    if compiled.fallback:
        EXECUTED_ON.set(compiled.executed_on)
