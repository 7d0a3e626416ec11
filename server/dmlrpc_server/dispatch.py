"""The Execute paths between the servicer and the executor: admission, deadlines, batching, streams, metrics."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import onnxruntime as ort
from google.protobuf.message import DecodeError

from dmlrpc._wire import CHUNK_BYTES, decode_chunk, encode_chunk
from dmlrpc.codec import TensorLayout, decode, encode_into
from dmlrpc.v1 import operators_pb2, service_pb2, tensor_pb2
from dmlrpc_server.errors import DeadlineExceeded, InvalidArgument, ResourceExhausted, Unavailable
from dmlrpc_server.executor import Buffer, Executor, unary_buffers
from dmlrpc_server.metrics import Metrics
from dmlrpc_server.runtime.admission import Admission
from dmlrpc_server.runtime.batching import Batcher
from dmlrpc_server.runtime.compiler import Compiled
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
    ) -> None:
        self.executor = executor
        self.admission = admission
        self.batcher = batcher
        self._workers = workers
        self._inline_bytes = inline_bytes
        self._metrics = metrics
        self._chunk = stream_chunk_bytes
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

    async def execute(self, request: service_pb2.ExecuteRequest, time_remaining: float | None) -> list[bytes | None]:
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
            self._observe(request.operator_desc, arrived, started, size, outputs)
        finally:
            admission.release()
        return outputs

    async def execute_resident(
        self, request: service_pb2.ExecuteRequest, owner: str, time_remaining: float | None
    ) -> list[bytes | Resident | None]:
        """Execute with resident bindings or kept outputs (never batched): admission and deadline as ``execute``."""
        self._gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        compiled = self.executor.compiled(request.operator_desc)
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
        async with self.admission.slot(time_remaining):
            started = self._started(deadline)
            if host_bytes <= self._inline_bytes:
                outputs = self.executor.execute_resident(owner, compiled, request)
            else:
                outputs = await self._on_worker(self.executor.execute_resident, owner, compiled, request)
            if self._metrics is not None:
                self._metrics.batch_size.observe(1)
            sent = [item for item in outputs if not isinstance(item, Resident)]
            self._observe(request.operator_desc, arrived, started, request.ByteSize(), sent)
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

    async def _small(self, request: service_pb2.ExecuteRequest, deadline: float | None) -> list[bytes | None]:
        executor = self.executor
        compiled = executor.unary_compiled(request.operator_desc)
        batcher = self.batcher
        if batcher is None or compiled.batching is None or not batcher.wanted(self.admission.running > 1):
            if self._metrics is not None:
                self._metrics.batch_size.observe(1)
            return executor.encode_outputs(
                compiled, compiled.run(executor.feeds(compiled, _buffers(request, compiled)))
            )
        # Validation and the data-dependent checks run first: a request that fails them never joins a batch.
        # NOTE: tiny requests never yield the event loop otherwise, so this is also where concurrent ones meet.
        feeds = executor.feeds(compiled, _buffers(request, compiled))
        case = request.operator_desc.WhichOneof("desc") or ""
        results = await batcher.run(compiled, case, feeds, deadline)
        return executor.encode_outputs(compiled, results)

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
            self._observe(start.operator_desc, arrived, started, sum(lengths), outputs)
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
                f"{len(declared)} lengths for {len(layouts)} input tensor fields; give each in order",
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
        operator_desc: operators_pb2.OperatorDesc,
        arrived: float,
        started: float,
        received: int,
        outputs: Sequence[bytes | memoryview | None],
    ) -> None:
        metrics = self._metrics
        if metrics is None:
            return
        metrics.queue_duration.observe(started - arrived)
        metrics.compute_duration.labels(operator_desc.WhichOneof("desc") or "unset").observe(time.monotonic() - started)
        metrics.received_bytes.inc(received)
        metrics.sent_bytes.inc(sum(len(data) for data in outputs if data is not None))

    async def _on_worker(self, function: Callable[..., T], *args: object) -> T:
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._workers, function, *args)
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            # The thread cannot be stopped: keep the slot until it finishes so the running count stays true.
            await asyncio.wait({work})
            raise


def _buffers(request: service_pb2.ExecuteRequest, compiled: Compiled) -> list[Buffer | None]:
    return unary_buffers(request.inputs, compiled.plan.inputs)


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
