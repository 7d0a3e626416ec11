"""The service: one recipe per RPC over the request path's stages (decode, compile, bind, schedule, encode)."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterator, Sequence

import numpy as np
import onnxruntime as ort

from dmlrpc.codec import encode_into
from dmlrpc.schema import tensor_descs
from dmlrpc.v1 import service_pb2, tensor_pb2
from dmlrpc_server.bindings import unary_buffers
from dmlrpc_server.calls import OPERATOR, ExecuteCall, parse
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.executor import compile_flags
from dmlrpc_server.graphs import strip_owned
from dmlrpc_server.many import ManyStream, binds_resident
from dmlrpc_server.responses import execute_response, resident_response
from dmlrpc_server.runtime.compiler import INITIALIZER_COPIES, Compiled, StagedCompiled, data_bytes
from dmlrpc_server.runtime.handles import Handle, owned_buffers
from dmlrpc_server.runtime.resident import Resident
from dmlrpc_server.stages import Stages, placed, received_bytes
from dmlrpc_server.streams import (
    declared_lengths,
    next_part,
    parse_stream_start,
    receive,
    stream_outputs,
    upload,
)
from dmlrpc_server.tensors import ANY_TENSOR, validate_tensor

_log = logging.getLogger(__name__)


class Service(Stages):
    """Every RPC as a short recipe over the stages of the request path:

    1. **decode** (the servicer parsed the message; streams parse their parts here),
    2. **compile** (``Executor.cached`` on a hit: one lookup by the desc's bytes; a miss compiles on a worker),
    3. **bind** (``unary_buffers`` and ``Executor.feeds``: lengths, data-dependent checks),
    4. **schedule** (``Scheduler``: admission, deadline, inline / worker / batch by the work the desc causes),
    5. **encode** (``Executor.encode_outputs`` and ``responses``: the outputs as wire bytes).

    Stages 3-5 of work that is not tiny run on a worker thread together, so the event loop only moves bytes; the
    stages themselves are ``Stages``'.
    """

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
            await self.scheduler.room_for_session(deadline)
            async with self.scheduler.turn(deadline):
                compiled = await self.scheduler.offload(lambda _: executor.compiled_bytes(call.desc))
        OPERATOR.set(compiled.label)
        placed(compiled)
        if compiled.plan.input_arrays:
            return await self.execute(parse(service_pb2.ExecuteRequest, raw), "", time_remaining)
        executor.check_response_fits(compiled)
        outputs = await self.run(compiled, list(call.buffers), deadline, arrived, call.size)
        return execute_response(outputs)

    async def execute(self, request: service_pb2.ExecuteRequest, owner: str, time_remaining: float | None) -> bytes:
        """Execute: the serialized ExecuteResponse.

        Raises:
            ServiceError: validation, limits, the queue bound (RESOURCE_EXHAUSTED) or an expired deadline.
        """
        self.scheduler.gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        compiled = await self.compiled(request.operator_desc, deadline, request.execution_flags)
        if request.keep_outputs or binds_resident(request.inputs):
            items = await self.resident(request, owner, deadline, compiled, None, compiled.label)
            return resident_response(items)
        self.executor.check_response_fits(compiled)
        buffers = unary_buffers(request.inputs, compiled.plan)
        outputs = await self.run(compiled, buffers, deadline, arrived, received_bytes(buffers))
        return execute_response(outputs)

    async def dispatch(self, request: service_pb2.DispatchRequest, owner: str, time_remaining: float | None) -> bytes:
        """Dispatch: run a compiled handle with new bindings; nothing about its desc is validated again."""
        self.scheduler.gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        entry = self.handles.get(owner, request.handle)
        compiled = entry.compiled
        placed(compiled)
        if request.keep_outputs or binds_resident(request.inputs):
            items = await self.resident(request, owner, deadline, compiled, entry, entry.label)
            return resident_response(items)
        self.executor.check_response_fits(compiled)
        buffers = entry.bind(unary_buffers(request.inputs, compiled.plan))
        outputs = await self.run(compiled, buffers, deadline, arrived, received_bytes(buffers))
        return execute_response(outputs)

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
        stream = ManyStream(self, owner, None if time_remaining is None else time.monotonic() + time_remaining)
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
        idle = self.stream_idle
        start = await parse_stream_start(parts, service_pb2.CreateTensorRequest, "CreateTensor", idle)
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
                if await next_part(parts, idle) is not None:
                    raise InvalidArgument("chunk", "an uninitialized tensor takes no bytes")
                zeros = np.zeros(tuple(layout.sizes), layout.dtype)
                value = await offload(lambda _: store.device.upload(zeros))
            else:
                buffer = executor.pool.acquire(layout.total_bytes)
                try:
                    await receive(parts, [buffer], "start.desc.buffer.total_tensor_size_in_bytes", idle)
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
        layout = tensor.layout
        # The copies (the device's packed download, the encoded staging) wait for the client to read them: their
        # bytes are reserved before they exist.
        async with self.memory.reserved(layout.total_bytes + layout.packed_bytes, None):
            array = await self.scheduler.offload(lambda _: device.download(tensor.value))
            async for part in self._read_out(tensor, array):
                yield part

    async def _read_out(self, tensor: Resident, array: np.ndarray) -> AsyncIterator[bytes]:
        """ReadTensor's messages: the tensor's handle and desc, then its buffer's bytes in chunks."""
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
        compiled = await self.compiled(stripped, None, request.execution_flags)
        bound = owned_buffers(request.owned_inputs, compiled.plan.inputs, owned)
        inputs = tensor_descs(request.operator_desc, output=False)
        outputs = tensor_descs(request.operator_desc, output=True)
        # What the handle holds is what it is charged: its model's data too (the compile cache may evict its entry
        # while the handle keeps it), and its owned data.
        charged = data_bytes(compiled.plan.model) + owned_bytes
        return handles.add(owner, compiled, bound, inputs, outputs, charged, compiled.label)

    async def compile_graph(self, request: service_pb2.CompileGraphRequest, owner: str) -> Handle:
        """CompileGraph: validate the graph, lower it (one session where possible), bind constants and owned inputs."""
        self.scheduler.gate()
        handles = self.handles
        graph = request.graph_desc
        constant_bytes = sum(len(node.constant_data.data) for node in graph.nodes)
        owned_bytes = sum(len(binding.buffer.data) for binding in request.owned_inputs)
        handles.check_room(owner, constant_bytes + owned_bytes)

        def admit(materialised: int) -> None:
            # Refused before the constants are made, not after: a refused graph must not have cost their memory.
            handles.check_room(owner, INITIALIZER_COPIES * materialised + owned_bytes)

        flags = compile_flags(request.execution_flags)
        await self.scheduler.room_for_session(None)
        async with self.scheduler.turn(None):
            compiled, lowering = await self.scheduler.offload(
                lambda _: self.executor.compile_graph(
                    graph, max_nodes=self.max_graph_nodes, admit_constants=admit, flags=flags
                )
            )
        placed(compiled)
        bound = owned_buffers(request.owned_inputs, compiled.plan.inputs, lowering.owned)
        # What the handle holds is what it is charged: its models' data, constants as materialised (a few bytes of
        # broadcast constant can become a whole tensor); a graph run node by node keeps its constant arrays too;
        # and its owned data.
        if isinstance(compiled, StagedCompiled):
            held = sum(data_bytes(node.plan.model) for node in lowering.nodes) + lowering.constant_bytes
        else:
            held = data_bytes(compiled.plan.model)
        charged = max(constant_bytes, held) + owned_bytes
        handles.check_room(owner, charged)
        return handles.add(owner, compiled, bound, lowering.input_descs, lowering.output_descs, charged, "graph")

    def release_compiled(self, handle: str, owner: str) -> None:
        self.handles.release(owner, handle)

    # -- ExecuteStream ------------------------------------------------------------------------------------------

    async def execute_stream(self, parts: AsyncIterator[bytes], time_remaining: float | None) -> AsyncIterator[bytes]:
        """Run one streamed request: the start message, the input chunks, then the outputs in chunks.

        Messages travel as wire bytes (``dmlrpc.wire`` reads and writes the chunks without protobuf copies). The
        desc and the declared lengths are validated, and the limits applied, before a byte is allocated. The inputs
        are received before the call takes a running slot, each chunk within ``stream_idle`` seconds of the last:
        a caller that stalls mid-upload holds its own buffers, never a slot that other calls need.
        """
        self.scheduler.gate()
        arrived = time.monotonic()
        deadline = None if time_remaining is None else arrived + time_remaining
        idle = self.stream_idle
        start = await parse_stream_start(parts, service_pb2.ExecuteStreamRequest, "ExecuteStream", idle)
        try:
            compiled = await self.compiled(start.operator_desc, deadline, start.execution_flags)
        except InvalidArgument as error:
            raise InvalidArgument(f"start.{error.field}", error.description) from None
        lengths = declared_lengths(compiled, start.input_bytes, self.executor.limits)
        pool = self.executor.pool
        buffers = [None if n == 0 else pool.acquire(n) for n in lengths]
        staged: list[np.ndarray] = []
        # The run's tensors, then its outputs until the client has read them: reserved once the inputs are here
        # (what the caller sent is not counted: it is the caller's own bytes), before the outputs exist.
        reserved = 0
        try:
            try:
                await receive(parts, buffers, idle=idle)
                received = time.monotonic()
                await self.memory.acquire(compiled.memory, deadline)
                reserved = compiled.memory
                async with self.scheduler.turn(deadline) as started:
                    outputs, staged = await self.scheduler.offload(
                        functools.partial(self._run_buffers, compiled, buffers), deadline
                    )
                    self.scheduler.observe_alone()
            finally:
                for buffer in buffers:
                    if buffer is not None:
                        pool.release(buffer)
            self._observe(compiled.label, received, started, sum(lengths), outputs)
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
            if reserved:
                self.memory.release(reserved)

    def _run_buffers(
        self, compiled: Compiled, buffers: Sequence[np.ndarray | None], options: ort.RunOptions
    ) -> tuple[list[memoryview | None], list[np.ndarray]]:
        feeds = self.executor.feeds(compiled, buffers)
        return self.executor.output_views(compiled, compiled.run(feeds, options))
