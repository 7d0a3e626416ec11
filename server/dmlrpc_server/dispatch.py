"""The Execute paths between the servicer and the executor: admission, deadlines, batching, streams, metrics."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import onnxruntime as ort
from google.protobuf.message import DecodeError

from dmlrpc._wire import CHUNK_BYTES, decode_chunk, encode_chunk
from dmlrpc.codec import TensorLayout, decode, encode_into
from dmlrpc.schema import tensor_descs
from dmlrpc.v1 import operators_pb2, service_pb2, tensor_pb2
from dmlrpc_server.errors import DeadlineExceeded, InvalidArgument, ResourceExhausted, Unavailable
from dmlrpc_server.executor import Buffer, Encoded, Executor, unary_buffers
from dmlrpc_server.graphs import strip_owned
from dmlrpc_server.metrics import Metrics
from dmlrpc_server.runtime.admission import Admission
from dmlrpc_server.runtime.batching import Batcher
from dmlrpc_server.runtime.compiler import Compiled
from dmlrpc_server.runtime.handles import Handle, HandleStore, owned_buffers
from dmlrpc_server.runtime.resident import Resident, ResidentStore
from dmlrpc_server.tensors import ANY_TENSOR, validate_tensor

T = TypeVar("T")


class Dispatcher:
    """Runs Execute requests: waits for a slot (bounded queue), skips expired calls, batches tiny requests of one
    desc, runs other small ones inline and large ones on worker threads."""

    def __init__(
        self,
        executor: Executor,
        admission: Admission,
        workers: ThreadPoolExecutor,
        *,
        inline_bytes: int,
        batcher: Batcher | None = None,
        metrics: Metrics | None = None,
        stream_chunk_bytes: int = CHUNK_BYTES,
        handles: HandleStore | None = None,
        max_graph_nodes: int = 64,
    ) -> None:
        self.executor = executor
        self.admission = admission
        self.batcher = batcher
        self._workers = workers
        self._inline_bytes = inline_bytes
        self._metrics = metrics
        self._chunk = stream_chunk_bytes
        self.handles = handles or HandleStore(handles_per_owner=256, bytes_per_owner=1 << 30, idle_seconds=600)
        self.max_graph_nodes = max_graph_nodes
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

    def _gate(self) -> None:
        if self.closing:
            # NOTE: refusing here, before gRPC stops, lets clients tell "not run" (UNAVAILABLE, safe to retry
            # elsewhere) from a call cut off mid-way; gRPC's own stop would cancel queued calls instead.
            raise Unavailable("the server is shutting down; retry on another replica")

    async def execute(self, request: service_pb2.ExecuteRequest, time_remaining: float | None) -> list[Encoded]:
        """Run one unary request within its deadline (``time_remaining`` seconds, ``None`` = none).

        Raises:
            ServiceError: validation, limits, the queue bound (RESOURCE_EXHAUSTED) or an expired deadline.
        """
        self._gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        size = request.ByteSize()
        admission = self.admission
        if not admission.try_acquire():
            await admission.acquire(time_remaining)
        try:
            started = self._started(deadline)
            if size <= self._inline_bytes:
                # NOTE: a thread hop costs more than a tiny operator; large ones run on workers (ORT frees the GIL).
                outputs = await self._small(request, deadline)
            else:
                outputs = await self._on_worker(self.executor.execute, request.operator_desc, request.inputs)
                if self._metrics is not None:
                    self._metrics.batch_size.observe(1)
            self._observe(_label(request), arrived, started, size, outputs)
        finally:
            admission.release()
        return outputs

    async def execute_resident(
        self, request: service_pb2.ExecuteRequest, owner: str, time_remaining: float | None
    ) -> list[bytes | Resident | None]:
        """Execute with resident bindings or kept outputs (never batched): admission and deadline as ``execute``."""
        self._gate()
        compiled = self.executor.compiled(request.operator_desc)
        return await self._resident(request, owner, time_remaining, compiled, None, _label(request))

    async def _resident(
        self,
        request: service_pb2.ExecuteRequest | service_pb2.DispatchRequest,
        owner: str,
        time_remaining: float | None,
        compiled: Compiled,
        entry: Handle | None,
        label: str,
    ) -> list[bytes | Resident | None]:
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        plan = compiled.plan
        on_host = self.executor.resident.device.on_host
        # The bytes this process touches say how long the call holds its thread: on a GPU provider resident inputs
        # and kept outputs stay in device memory (the thread only waits for the device), on the CPU they count.
        host_bytes = sum(
            layout.total_bytes
            for index, layout in enumerate(plan.inputs)
            if layout is not None
            and (on_host or index >= len(request.inputs) or request.inputs[index].WhichOneof("binding") != "resident")
        ) + sum(
            layout.total_bytes
            for index, layout in enumerate(plan.outputs)
            if layout is not None and (on_host or index not in request.keep_outputs)
        )
        run = functools.partial(
            self.executor.execute_resident,
            owner,
            compiled,
            request,
            output_descs=None if entry is None else entry.output_desc_bytes,
            bind=None if entry is None else entry.bind,
        )
        async with self.admission.slot(time_remaining):
            started = self._started(deadline)
            outputs = run() if host_bytes <= self._inline_bytes else await self._on_worker(run)
            if self._metrics is not None:
                self._metrics.batch_size.observe(1)
            sent = [item for item in outputs if not isinstance(item, Resident)]
            self._observe(label, arrived, started, request.ByteSize(), sent)
        return outputs

    async def create_tensor(self, parts: AsyncIterator[bytes], owner: str) -> Resident:
        """CreateTensor: validate the desc and reserve the caller's quota before allocating, then receive the
        bytes (unless uninitialised) and keep the tensor on the device."""
        self._gate()
        raw = await anext(parts, None)
        try:
            first = None if raw is None else service_pb2.CreateTensorRequest.FromString(raw)
        except DecodeError:
            raise InvalidArgument("start", "a CreateTensor message is not a valid CreateTensorRequest") from None
        if first is None or first.WhichOneof("part") != "start":
            raise InvalidArgument("start", "the first message of CreateTensor must be `start`")
        start = first.start
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
        with store.reserve(owner, layout.packed_bytes) as reservation:
            if start.uninitialized:
                if await anext(parts, None) is not None:
                    raise InvalidArgument("chunk", "an uninitialized tensor takes no bytes")
                value = await self._on_worker(store.device.upload, np.zeros(tuple(layout.sizes), layout.dtype))
            else:
                buffer = executor.pool.acquire(layout.total_bytes)
                try:
                    await _receive(parts, [buffer], declared="start.desc.buffer.total_tensor_size_in_bytes")
                    # A packed copy of the logical tensor: the pooled buffer goes back to the pool.
                    value = await self._on_worker(_upload, store, buffer, layout)
                finally:
                    executor.pool.release(buffer)
            return reservation.add(layout, start.desc.SerializeToString(), value)

    async def read_tensor(self, handle: str, owner: str) -> AsyncIterator[bytes]:
        """ReadTensor: the tensor's handle and desc, then its buffer's bytes in chunks."""
        self._gate()
        tensor = self.executor.resident.get(owner, handle)
        array = await self._on_worker(self.executor.resident.device.download, tensor.value)
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
            view = staging.data
            for offset in range(0, len(view), self._chunk):
                yield encode_chunk(0, view[offset : offset + self._chunk])
        finally:
            pool.release(staging)

    def release_tensor(self, handle: str, owner: str) -> None:
        self.executor.resident.release(owner, handle)

    async def _small(self, request: service_pb2.ExecuteRequest, deadline: float | None) -> list[Encoded]:
        compiled = self.executor.unary_compiled(request.operator_desc)
        buffers = _buffers(request, compiled)
        return await self._run_small(compiled, buffers, request.operator_desc.WhichOneof("desc") or "", deadline)

    async def _run_small(
        self, compiled: Compiled, buffers: list[Buffer | None], label: str, deadline: float | None
    ) -> list[Encoded]:
        executor = self.executor
        batcher = self.batcher
        if batcher is None or compiled.batching is None or not batcher.wanted(self.admission.running > 1):
            if self._metrics is not None:
                self._metrics.batch_size.observe(1)
            return executor.encode_outputs(compiled, compiled.run(executor.feeds(compiled, buffers)))
        # Validation and the data-dependent checks run first: a request that fails them never joins a batch.
        # NOTE: tiny requests never yield the event loop otherwise, so this is also where concurrent ones meet.
        feeds = executor.feeds(compiled, buffers)
        results = await batcher.run(compiled, label, feeds, deadline)
        return executor.encode_outputs(compiled, results)

    def _run_buffers_encoded(self, compiled: Compiled, buffers: list[Buffer | None]) -> list[Encoded]:
        executor = self.executor
        return executor.encode_outputs(compiled, compiled.run(executor.feeds(compiled, buffers)))

    # -- compiled operators and graphs ---------------------------------------------------------------------------

    async def compile_operator(self, request: service_pb2.CompileOperatorRequest, owner: str) -> Handle:
        """CompileOperator: validate the desc once (sharing Execute's compile cache), bind its owned inputs."""
        self._gate()
        handles = self.handles
        stripped, owned = strip_owned(request.operator_desc, "operator_desc")
        owned_bytes = sum(len(binding.buffer.data) for binding in request.owned_inputs)
        handles.check_room(owner, owned_bytes)
        async with self.admission.slot(None):
            compiled = await self._on_worker(self.executor.compiled, stripped)
        bound = owned_buffers(request.owned_inputs, compiled.plan.inputs, owned)
        case = stripped.WhichOneof("desc") or ""
        inputs = tensor_descs(request.operator_desc, output=False)
        outputs = tensor_descs(request.operator_desc, output=True)
        return handles.add(owner, compiled, bound, inputs, outputs, owned_bytes, case)

    async def compile_graph(self, request: service_pb2.CompileGraphRequest, owner: str) -> Handle:
        """CompileGraph: validate the graph, lower it (one session where possible), bind constants and owned inputs."""
        self._gate()
        handles = self.handles
        graph = request.graph_desc
        constant_bytes = sum(len(node.constant_data.data) for node in graph.nodes)
        owned_bytes = sum(len(binding.buffer.data) for binding in request.owned_inputs)
        handles.check_room(owner, constant_bytes + owned_bytes)
        async with self.admission.slot(None):
            compiled, lowering = await self._on_worker(
                functools.partial(self.executor.compile_graph, graph, max_nodes=self.max_graph_nodes)
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

    async def dispatch(
        self, request: service_pb2.DispatchRequest, owner: str, time_remaining: float | None
    ) -> list[Encoded | Resident]:
        """Dispatch: run a compiled handle with new bindings; nothing about its desc is validated again."""
        self._gate()
        entry = self.handles.get(owner, request.handle)
        compiled = entry.compiled
        if request.keep_outputs or any(b.WhichOneof("binding") == "resident" for b in request.inputs):
            items = await self._resident(request, owner, time_remaining, compiled, entry, entry.label)
            return list(items)
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        self.executor.check_response_fits(compiled)
        buffers = entry.bind(unary_buffers(request.inputs, compiled.plan))
        size = request.ByteSize()
        async with self.admission.slot(time_remaining):
            started = self._started(deadline)
            if size <= self._inline_bytes:
                outputs = await self._run_small(compiled, buffers, entry.label, deadline)
            else:
                outputs = await self._on_worker(self._run_buffers_encoded, compiled, buffers)
                if self._metrics is not None:
                    self._metrics.batch_size.observe(1)
            self._observe(entry.label, arrived, started, size, outputs)
        return list(outputs)

    def release_compiled(self, handle: str, owner: str) -> None:
        self.handles.release(owner, handle)

    async def execute_stream(self, parts: AsyncIterator[bytes], time_remaining: float | None) -> AsyncIterator[bytes]:
        """Run one streamed request: the start message, the input chunks, then the outputs in chunks.

        Messages travel as wire bytes (``dmlrpc._wire`` reads and writes the chunks without protobuf copies). The
        desc and the declared lengths are validated, and the limits applied, before a byte is allocated.
        """
        self._gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        raw = await anext(parts, None)
        first = None if raw is None else _parse_request(raw)
        if first is None or first.WhichOneof("part") != "start":
            raise InvalidArgument("start", "the first message of ExecuteStream must be `start`")
        start = first.start
        compiled = self._stream_compiled(start.operator_desc)
        lengths = self._declared_lengths(compiled, start.input_bytes)
        pool = self.executor.pool
        async with self.admission.slot(time_remaining):
            buffers = [None if n == 0 else pool.acquire(n) for n in lengths]
            try:
                await _receive(parts, buffers)
                started = self._started(deadline)
                outputs, staged = await self._on_worker(self._run_buffers, compiled, buffers)
                if self._metrics is not None:
                    self._metrics.batch_size.observe(1)
            finally:
                for buffer in buffers:
                    if buffer is not None:
                        pool.release(buffer)
            self._observe(start.operator_desc.WhichOneof("desc") or "unset", arrived, started, sum(lengths), outputs)
        try:
            yield service_pb2.ExecuteStreamResponse(
                outputs=service_pb2.ExecuteStreamOutputs(
                    output_bytes=[0 if view is None else len(view) for view in outputs]
                )
            ).SerializeToString()
            for index, view in enumerate(outputs):
                if view is None:
                    continue
                for offset in range(0, len(view), self._chunk):
                    yield encode_chunk(index, view[offset : offset + self._chunk])
        finally:
            for buffer in staged:
                pool.release(buffer)

    def _stream_compiled(self, operator_desc: operators_pb2.OperatorDesc) -> Compiled:
        try:
            return self.executor.compiled(operator_desc)
        except InvalidArgument as error:
            raise InvalidArgument(f"start.{error.field}", error.description) from None

    def _declared_lengths(self, compiled: Compiled, declared: Sequence[int]) -> list[int]:
        layouts = compiled.plan.inputs
        if len(declared) != len(layouts):
            raise InvalidArgument(
                "start.input_bytes",
                f"{len(declared)} lengths for {len(layouts)} input buffers; give each in order (a tensor-array field "
                "takes one per tensor)",
            )
        limits = self.executor.limits
        for i, (length, layout) in enumerate(zip(declared, layouts, strict=True)):
            field = f"start.input_bytes[{i}]"
            if layout is None and length:
                raise InvalidArgument(field, "the tensor desc is unset, so its length must be 0")
            if layout is not None and length < layout.total_bytes:
                raise InvalidArgument(
                    field,
                    f"{length} bytes is shorter than the tensor's total_tensor_size_in_bytes ({layout.total_bytes})",
                )
            if length > limits.max_tensor_bytes:
                raise ResourceExhausted(
                    f"{field} = {length} exceeds the limit of {limits.max_tensor_bytes} bytes per tensor"
                )
        if sum(declared) > limits.max_request_bytes:
            raise ResourceExhausted(
                f"start.input_bytes total {sum(declared)} bytes, over the limit of {limits.max_request_bytes}"
            )
        return list(declared)

    def _run_buffers(
        self, compiled: Compiled, buffers: Sequence[np.ndarray | None]
    ) -> tuple[list[memoryview | None], list[np.ndarray]]:
        feeds = self.executor.feeds(compiled, buffers)
        return self.executor.output_views(compiled, compiled.run(feeds))

    def _started(self, deadline: float | None) -> float:
        started = time.monotonic()
        if deadline is not None and started >= deadline:
            raise DeadlineExceeded("the deadline passed while the call waited; it was not executed")
        return started

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

    async def _on_worker(self, function: Callable[..., T], *args: object) -> T:
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._workers, function, *args)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            # The thread cannot be stopped: keep the slot until it finishes so the running count stays true.
            await asyncio.wait({work})
            raise


def _label(request: service_pb2.ExecuteRequest) -> str:
    """The metrics label of a call: its operator's case."""
    return request.operator_desc.WhichOneof("desc") or "unset"


def _buffers(request: service_pb2.ExecuteRequest, compiled: Compiled) -> list[Buffer | None]:
    return unary_buffers(request.inputs, compiled.plan)


def _upload(store: ResidentStore, buffer: np.ndarray, layout: TensorLayout) -> np.ndarray | ort.OrtValue:
    return store.device.upload(np.array(decode(buffer, layout)))


def _parse_request(raw: bytes) -> service_pb2.ExecuteStreamRequest:
    try:
        return service_pb2.ExecuteStreamRequest.FromString(raw)
    except DecodeError:
        raise InvalidArgument("start", "an ExecuteStream message is not a valid ExecuteStreamRequest") from None


def _chunk_of(raw: bytes) -> tuple[int, memoryview]:
    try:
        chunk = decode_chunk(raw)
    except ValueError as error:
        raise InvalidArgument("chunk", f"a malformed chunk message: {error}") from None
    if chunk is not None:
        return chunk
    part = _parse_request(raw)  # a chunk protobuf wrote differently, or a second start
    if part.WhichOneof("part") != "chunk":
        raise InvalidArgument("start", "`start` may come only once, first")
    return part.chunk.binding, memoryview(part.chunk.data)


async def _receive(
    parts: AsyncIterator[bytes], buffers: Sequence[np.ndarray | None], declared: str = "start.input_bytes"
) -> None:
    """Fill each binding's buffer from the chunks, checking every chunk lands inside its declared length
    (``declared``: the field that declared the lengths, for errors)."""
    filled = [0] * len(buffers)
    async for raw in parts:
        index, data = _chunk_of(raw)
        if index >= len(buffers) or buffers[index] is None:
            raise InvalidArgument("chunk.binding", f"binding {index} takes no bytes (see {declared})")
        target = buffers[index]
        assert target is not None
        end = filled[index] + len(data)
        if end > len(target):
            raise InvalidArgument(
                "chunk.data",
                f"binding {index} receives more than the {len(target)} bytes declared in {declared}",
            )
        target[filled[index] : end] = np.frombuffer(data, np.uint8)  # the one copy of the data on this side
        filled[index] = end
    for index, (count, buffer) in enumerate(zip(filled, buffers, strict=True)):
        if buffer is not None and count != len(buffer):
            field = f"{declared}[{index}]" if declared == "start.input_bytes" else declared
            raise InvalidArgument(field, f"the stream ended after {count} of the {len(buffer)} bytes declared")
