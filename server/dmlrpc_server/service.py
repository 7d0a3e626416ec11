"""The service: one recipe per RPC over the request path's stages (decode, compile, bind, schedule, encode)."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnxruntime as ort

from dmlrpc.codec import encode_into
from dmlrpc.schema import tensor_descs
from dmlrpc.v1 import operators_pb2, service_pb2, tensor_pb2
from dmlrpc_server.calls import OPERATOR, ExecuteCall, parse
from dmlrpc_server.errors import Cancelled, Internal, InvalidArgument, ServiceError
from dmlrpc_server.executor import Buffer, Executor, unary_buffers
from dmlrpc_server.graphs import strip_owned
from dmlrpc_server.metrics import Metrics
from dmlrpc_server.responses import Encoded, execute_response, item_error, item_result
from dmlrpc_server.runtime.compiler import Compiled
from dmlrpc_server.runtime.handles import Handle, HandleStore, owned_buffers
from dmlrpc_server.runtime.resident import Resident
from dmlrpc_server.scheduler import Scheduler
from dmlrpc_server.streams import declared_lengths, parse_stream_start, receive, stream_outputs, upload
from dmlrpc_server.tensors import ANY_TENSOR, validate_tensor

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StreamLimits:
    """Bounds of one ExecuteMany stream: items admitted at once, and their request bytes."""

    items: int
    bytes: int


class Service:
    """Every RPC as a short recipe over the stages of the request path:

    1. **decode** (the servicer parsed the message; streams parse their parts here),
    2. **compile** (``Executor.cached`` on a hit: one lookup by the desc's bytes; a miss compiles on a worker),
    3. **bind** (``unary_buffers`` and ``Executor.feeds``: lengths, data-dependent checks),
    4. **schedule** (``Scheduler``: admission, deadline, inline / worker / batch by the work the desc causes),
    5. **encode** (``Executor.encode_outputs`` and ``responses``: the outputs as wire bytes).

    Stages 3-5 of work that is not tiny run on a worker thread together, so the event loop only moves bytes.
    """

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
    ) -> None:
        self.executor = executor
        self.scheduler = scheduler
        self.handles = handles
        self._metrics = metrics
        self._chunk = stream_chunk_bytes
        self.stream_limits = stream_limits
        self.max_graph_nodes = max_graph_nodes

    # -- Execute and Dispatch -----------------------------------------------------------------------------------

    async def execute_call(self, call: ExecuteCall, raw: bytes, time_remaining: float | None) -> bytes:
        """Execute in its common form (``calls.read_execute``): the desc looked up by its bytes as sent, the
        buffers bound as views of the request. Anything else about the call goes the way of ``execute``."""
        self.scheduler.gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        executor = self.executor
        compiled = executor.cached_bytes(call.desc)
        if compiled is None:
            OPERATOR.set(executor.case_of(call.desc))
            compiled = await self.scheduler.offload(lambda _: executor.compiled_bytes(call.desc))
        OPERATOR.set(compiled.label)
        if compiled.plan.input_arrays:
            return await self.execute(parse(service_pb2.ExecuteRequest, raw), "", time_remaining)
        executor.check_response_fits(compiled)
        outputs = await self._run(compiled, list(call.buffers), deadline, arrived, call.size)
        return execute_response(outputs)

    async def execute(self, request: service_pb2.ExecuteRequest, owner: str, time_remaining: float | None) -> bytes:
        """Execute: the serialized ExecuteResponse.

        Raises:
            ServiceError: validation, limits, the queue bound (RESOURCE_EXHAUSTED) or an expired deadline.
        """
        self.scheduler.gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        compiled = await self._compiled(request.operator_desc)
        if request.keep_outputs or _binds_resident(request.inputs):
            items = await self._resident(request, owner, deadline, compiled, None, compiled.label)
            return _response(items)
        self.executor.check_response_fits(compiled)
        buffers = unary_buffers(request.inputs, compiled.plan)
        outputs = await self._run(compiled, buffers, deadline, arrived, _received(buffers))
        return execute_response(outputs)

    async def dispatch(self, request: service_pb2.DispatchRequest, owner: str, time_remaining: float | None) -> bytes:
        """Dispatch: run a compiled handle with new bindings; nothing about its desc is validated again."""
        self.scheduler.gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        entry = self.handles.get(owner, request.handle)
        compiled = entry.compiled
        if request.keep_outputs or _binds_resident(request.inputs):
            items = await self._resident(request, owner, deadline, compiled, entry, entry.label)
            return _response(items)
        self.executor.check_response_fits(compiled)
        buffers = entry.bind(unary_buffers(request.inputs, compiled.plan))
        outputs = await self._run(compiled, buffers, deadline, arrived, _received(buffers))
        return execute_response(outputs)

    async def _compiled(self, operator_desc: operators_pb2.OperatorDesc) -> Compiled:
        """Stage 2: the cached compiled desc, or compile it on a worker (validation and lowering take milliseconds)."""
        compiled = self.executor.cached(operator_desc)
        if compiled is None:
            compiled = await self.scheduler.offload(lambda _: self.executor.compiled(operator_desc))
        return compiled

    def _on_loop(self, compiled: Compiled) -> bool:
        """Whether binding and encoding stay on the event loop: tiny work, or small requests that may batch."""
        scheduler = self.scheduler
        return scheduler.inline(compiled) or scheduler.batch_size(compiled) > 1

    async def _run(
        self,
        compiled: Compiled,
        buffers: list[Buffer | None],
        deadline: float | None,
        arrived: float,
        received: int,
    ) -> list[Encoded]:
        """Stages 3-5 of one call within its admission slot."""
        executor = self.executor
        async with self.scheduler.turn(deadline) as started:
            if self._on_loop(compiled):
                results = await self.scheduler.run(compiled, executor.feeds(compiled, buffers), deadline)
                outputs = executor.encode_outputs(compiled, results)
            else:
                outputs = await self.scheduler.offload(functools.partial(self._whole, compiled, buffers), deadline)
                self.scheduler.observe_alone()
            self._observe(compiled.label, arrived, started, received, outputs)
        return outputs

    def _whole(self, compiled: Compiled, buffers: Sequence[Buffer | None], options: ort.RunOptions) -> list[Encoded]:
        """Stages 3-5 on a worker thread: bind, run, encode."""
        executor = self.executor
        return executor.encode_outputs(compiled, compiled.run(executor.feeds(compiled, buffers), options))

    async def _resident(
        self,
        request: service_pb2.ExecuteRequest | service_pb2.DispatchRequest,
        owner: str,
        deadline: float | None,
        compiled: Compiled,
        entry: Handle | None,
        label: str,
    ) -> list[bytes | Resident | None]:
        """A call with resident bindings or kept outputs (never batched): inline when tiny, else on a worker."""
        arrived = time.monotonic()
        run = functools.partial(
            self.executor.execute_resident,
            owner,
            compiled,
            request,
            output_descs=None if entry is None else entry.output_desc_bytes,
            bind=None if entry is None else entry.bind,
        )
        async with self.scheduler.turn(deadline) as started:
            if self.scheduler.inline(compiled):
                outputs = run()
            else:
                outputs = await self.scheduler.offload(lambda _: run(), deadline)
            self.scheduler.observe_alone()
            sent = [item for item in outputs if not isinstance(item, Resident)]
            self._observe(label, arrived, started, request.ByteSize(), sent)
        return outputs

    # -- ExecuteMany --------------------------------------------------------------------------------------------

    async def execute_many(
        self,
        messages: AsyncIterator[tuple[service_pb2.ExecuteManyRequest, int]],
        owner: str,
        time_remaining: float | None,
    ) -> AsyncIterator[bytes]:
        """ExecuteMany: run each item as its unary call would run, answer each as it finishes (serialized
        ExecuteManyResponse messages holding the results that are ready together).

        Items of one desc that arrive in one message join one batch. At most ``stream_limits.items`` items (and
        about ``stream_limits.bytes`` request bytes) are in flight, counted until their result is written, so a
        client that sends faster than it reads stops being read instead of growing the server's memory.
        """
        self.scheduler.gate()
        stream = _ManyStream(self, owner, None if time_remaining is None else time.monotonic() + time_remaining)
        reader = asyncio.ensure_future(stream.read(messages))
        try:
            while True:
                ready = await stream.results(reader)
                if ready is None:
                    break
                yield ready
            reader.result()  # a stream-level error (a message that is not a request) ends the call
        finally:
            reader.cancel()
            await stream.stop()

    # -- resident tensors ---------------------------------------------------------------------------------------

    async def create_tensor(self, parts: AsyncIterator[bytes], owner: str) -> Resident:
        """CreateTensor: validate the desc and reserve the caller's quota before allocating, then receive the
        bytes (unless uninitialised) and keep the tensor on the device."""
        self.scheduler.gate()
        start = await parse_stream_start(parts, service_pb2.CreateTensorRequest, "CreateTensor")
        executor = self.executor
        layout = validate_tensor(
            start.desc,
            "start.desc",
            ANY_TENSOR,
            output=False,
            max_tensor_bytes=executor.limits.max_tensor_bytes,
            max_tensor_elements=executor.limits.max_tensor_elements,
        )
        store = executor.resident
        offload = self.scheduler.offload
        with store.reserve(owner, layout.packed_bytes) as reservation:
            if start.uninitialized:
                if await anext(parts, None) is not None:
                    raise InvalidArgument("chunk", "an uninitialized tensor takes no bytes")
                zeros = np.zeros(tuple(layout.sizes), layout.dtype)
                value = await offload(lambda _: store.device.upload(zeros))
            else:
                buffer = executor.pool.acquire(layout.total_bytes)
                try:
                    await receive(parts, [buffer], declared="start.desc.buffer.total_tensor_size_in_bytes")
                    # A packed copy of the logical tensor: the pooled buffer goes back to the pool.
                    value = await offload(lambda _: upload(store, buffer, layout))
                finally:
                    executor.pool.release(buffer)
            return reservation.add(layout, start.desc.SerializeToString(), value)

    async def read_tensor(self, handle: str, owner: str) -> AsyncIterator[bytes]:
        """ReadTensor: the tensor's handle and desc, then its buffer's bytes in chunks."""
        self.scheduler.gate()
        tensor = self.executor.resident.get(owner, handle)
        device = self.executor.resident.device
        array = await self.scheduler.offload(lambda _: device.download(tensor.value))
        layout = tensor.layout
        pool = self.executor.pool
        staging = pool.acquire(layout.total_bytes)
        try:
            encode_into(array, layout, staging)
            yield service_pb2.ReadTensorResponse(
                tensor=service_pb2.ResidentTensor(
                    handle=tensor.handle, desc=tensor_pb2.TensorDesc.FromString(tensor.desc_bytes)
                )
            ).SerializeToString()
            async for part in stream_outputs([staging.data], self._chunk):
                yield part
        finally:
            pool.release(staging)

    def release_tensor(self, handle: str, owner: str) -> None:
        self.executor.resident.release(owner, handle)

    # -- compiled operators and graphs ---------------------------------------------------------------------------

    async def compile_operator(self, request: service_pb2.CompileOperatorRequest, owner: str) -> Handle:
        """CompileOperator: validate the desc once (sharing Execute's compile cache), bind its owned inputs."""
        self.scheduler.gate()
        handles = self.handles
        stripped, owned = strip_owned(request.operator_desc, "operator_desc")
        owned_bytes = sum(len(binding.buffer.data) for binding in request.owned_inputs)
        handles.check_room(owner, owned_bytes)
        async with self.scheduler.turn(None):
            compiled = await self._compiled(stripped)
        bound = owned_buffers(request.owned_inputs, compiled.plan.inputs, owned)
        inputs = tensor_descs(request.operator_desc, output=False)
        outputs = tensor_descs(request.operator_desc, output=True)
        return handles.add(owner, compiled, bound, inputs, outputs, owned_bytes, compiled.label)

    async def compile_graph(self, request: service_pb2.CompileGraphRequest, owner: str) -> Handle:
        """CompileGraph: validate the graph, lower it (one session where possible), bind constants and owned inputs."""
        self.scheduler.gate()
        handles = self.handles
        graph = request.graph_desc
        constant_bytes = sum(len(node.constant_data.data) for node in graph.nodes)
        owned_bytes = sum(len(binding.buffer.data) for binding in request.owned_inputs)
        handles.check_room(owner, constant_bytes + owned_bytes)
        async with self.scheduler.turn(None):
            compiled, lowering = await self.scheduler.offload(
                lambda _: self.executor.compile_graph(graph, max_nodes=self.max_graph_nodes)
            )
        bound = owned_buffers(request.owned_inputs, compiled.plan.inputs, lowering.owned)
        return handles.add(
            owner,
            compiled,
            bound,
            lowering.input_descs,
            lowering.output_descs,
            constant_bytes + owned_bytes,
            "graph",
        )

    def release_compiled(self, handle: str, owner: str) -> None:
        self.handles.release(owner, handle)

    # -- ExecuteStream ------------------------------------------------------------------------------------------

    async def execute_stream(self, parts: AsyncIterator[bytes], time_remaining: float | None) -> AsyncIterator[bytes]:
        """Run one streamed request: the start message, the input chunks, then the outputs in chunks.

        Messages travel as wire bytes (``dmlrpc._wire`` reads and writes the chunks without protobuf copies). The
        desc and the declared lengths are validated, and the limits applied, before a byte is allocated.
        """
        self.scheduler.gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        start = await parse_stream_start(parts, service_pb2.ExecuteStreamRequest, "ExecuteStream")
        try:
            compiled = await self._compiled(start.operator_desc)
        except InvalidArgument as error:
            raise InvalidArgument(f"start.{error.field}", error.description) from None
        lengths = declared_lengths(compiled, start.input_bytes, self.executor.limits)
        pool = self.executor.pool
        async with self.scheduler.turn(deadline) as started:
            buffers = [None if n == 0 else pool.acquire(n) for n in lengths]
            try:
                await receive(parts, buffers)
                outputs, staged = await self.scheduler.offload(
                    functools.partial(self._run_buffers, compiled, buffers), deadline
                )
                self.scheduler.observe_alone()
            finally:
                for buffer in buffers:
                    if buffer is not None:
                        pool.release(buffer)
            self._observe(compiled.label, arrived, started, sum(lengths), outputs)
        try:
            yield service_pb2.ExecuteStreamResponse(
                outputs=service_pb2.ExecuteStreamOutputs(
                    output_bytes=[0 if view is None else len(view) for view in outputs]
                )
            ).SerializeToString()
            async for part in stream_outputs(outputs, self._chunk):
                yield part
        finally:
            for buffer in staged:
                pool.release(buffer)

    def _run_buffers(
        self, compiled: Compiled, buffers: Sequence[np.ndarray | None], options: ort.RunOptions
    ) -> tuple[list[memoryview | None], list[np.ndarray]]:
        feeds = self.executor.feeds(compiled, buffers)
        return self.executor.output_views(compiled, compiled.run(feeds, options))

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


class _ManyStream:
    """The state of one ExecuteMany call: admitted items, the results waiting to be written, and the window."""

    def __init__(self, service: Service, owner: str, deadline: float | None) -> None:
        self.service = service
        self.owner = owner
        self.deadline = deadline
        self.limits = service.stream_limits
        self.in_flight = 0
        self.in_flight_bytes = 0
        self.ready: list[tuple[bytes, int]] = []
        self.answered = asyncio.Event()  # results are ready, or the reader ended
        self.room = asyncio.Event()  # results were written: the window has room
        self.tasks: set[asyncio.Task[None]] = set()

    async def read(self, messages: AsyncIterator[tuple[service_pb2.ExecuteManyRequest, int]]) -> None:
        """Admit every message's items within the window; the items of one message run as one group. An item's
        size is its share of its message's bytes (asking protobuf would serialize each item again)."""
        try:
            async for message, message_size in messages:
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
            compiled = await service._compiled(call.execute.operator_desc)
        elif kind == "dispatch":
            request = call.dispatch
            entry = service.handles.get(self.owner, call.dispatch.handle)
            compiled = entry.compiled
        else:
            raise InvalidArgument("call", "an item needs an `execute` or a `dispatch` call")
        if request.keep_outputs or _binds_resident(request.inputs):
            outputs = await service._resident(request, self.owner, self.deadline, compiled, entry, compiled.label)
            self._answer(item, _response(outputs))
            return
        service.executor.check_response_fits(compiled)
        buffers = unary_buffers(request.inputs, compiled.plan)
        item.compiled = compiled
        item.buffers = buffers if entry is None else entry.bind(buffers)

    async def _run_batch(self, group: list[_Item]) -> None:
        service = self.service
        executor = service.executor
        scheduler = service.scheduler
        compiled = group[0].compiled
        assert compiled is not None
        try:
            async with scheduler.turn(self.deadline):
                if not service._on_loop(compiled):
                    for item in group:
                        try:
                            outputs = await scheduler.offload(
                                functools.partial(service._whole, compiled, item.buffers), self.deadline
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
        self.ready.append((result, item.size))
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
        self.in_flight_bytes -= sum(size for _, size in ready)
        self.room.set()
        return b"".join(result for result, _ in ready)

    async def stop(self) -> None:
        """Cancel whatever still runs (the call ended: the client went away or the stream failed)."""
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(self.tasks)


@dataclass(eq=False)
class _Item:
    """One ExecuteMany item on its way: the call, its size, what binding found, and whether it was answered."""

    call: service_pb2.ExecuteItem
    size: int
    compiled: Compiled | None = None
    buffers: list[Buffer | None] = field(default_factory=list)
    done: bool = False


def _received(buffers: Sequence[Buffer | None]) -> int:
    """The bytes a call's buffers bring (a metric; ``ByteSize`` would serialize the message again)."""
    return sum(len(buffer) for buffer in buffers if buffer is not None)


def _binds_resident(bindings: Sequence[service_pb2.BindingDesc]) -> bool:
    return any(binding.WhichOneof("binding") == "resident" for binding in bindings)


def _response(items: Sequence[bytes | Resident | None]) -> bytes:
    """The serialized ExecuteResponse of a resident call (kept outputs as ResidentTensors)."""
    outputs: list[service_pb2.BindingDesc] = []
    for item in items:
        if item is None:
            outputs.append(service_pb2.BindingDesc())
        elif isinstance(item, Resident):
            desc = tensor_pb2.TensorDesc.FromString(item.desc_bytes)
            outputs.append(service_pb2.BindingDesc(resident=service_pb2.ResidentTensor(handle=item.handle, desc=desc)))
        else:
            outputs.append(service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=item)))
    return service_pb2.ExecuteResponse(outputs=outputs).SerializeToString()


def _internal(error: Exception) -> ServiceError:
    """An unexpected failure of one ExecuteMany item: logged here, answered INTERNAL with a generic message."""
    _log.error("an ExecuteMany item failed", exc_info=error)
    return Internal("internal server error while running this item; see the server log")
