"""The service: one recipe per RPC over the stage modules (calls, catalog, scheduler, binding), top to bottom."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import numpy as np

from dmlrpc.codec import encode_into
from dmlrpc.schema import tensor_descs
from dmlrpc.v1 import operators_pb2, service_pb2, tensor_pb2
from dmlrpc_server.binding import Binding, encode_outputs, feeds, unary_buffers
from dmlrpc_server.calls import Call, deadline_of, parse, write_execute, write_resident
from dmlrpc_server.catalog import Catalog, compile_flags
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.graphs import strip_owned
from dmlrpc_server.many import ManyStream, StreamLimits
from dmlrpc_server.runtime.buffers import Buffer
from dmlrpc_server.runtime.compiler import EXTERNAL_COPIES, SESSIONS, Compiled, StagedCompiled, data_bytes
from dmlrpc_server.runtime.handles import Handle, HandleStore, owned_buffers
from dmlrpc_server.runtime.resident import Resident
from dmlrpc_server.scheduler import Scheduler
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
Feeds = dict[str, np.ndarray]


def _raise(error: Exception) -> Feeds:
    """A bind that fails as the item's binding did (its error is its answer)."""
    raise error


class Service:
    """Every RPC as a short recipe over the stages of the request path:

    1. **read** (``calls``: the servicer reads the request into a ``Call``; streams read their parts here),
    2. **plan** (``Catalog.lookup``: one lookup by the desc's bytes; a miss compiles on a worker; Dispatch takes its
       handle's),
    3. **admit and reserve** (``Scheduler.run``: the drain gate, call memory, an admission slot, the deadline),
    4. **bind** (``binding.feeds``: lengths, views, data-dependent checks),
    5. **place and run** (``Scheduler.run``: inline, worker thread or batch, by the work the desc causes),
    6. **encode** (``binding.encode_outputs`` with the reader's writer, ``calls.write_execute``, where the run is).

    Execute and Dispatch are one recipe (``execute``), ExecuteMany's items the same stages grouped by plan
    (``execute_items``); ExecuteStream is the same stages with its chunked reader and writer. Each stage returns
    its result; what the writer needs of the call (its label, where it ran, the memory its reply holds) is on the
    ``Call``.
    """

    def __init__(
        self,
        catalog: Catalog,
        scheduler: Scheduler,
        binding: Binding,
        handles: HandleStore,
        *,
        stream_chunk_bytes: int,
        stream_limits: StreamLimits,
        max_graph_nodes: int,
        stream_idle_seconds: float | None,
    ) -> None:
        self.catalog = catalog
        self.scheduler = scheduler
        self.binding = binding
        self.handles = handles
        self._chunk = stream_chunk_bytes
        self.stream_limits = stream_limits
        self.max_graph_nodes = max_graph_nodes
        #: The longest wait for a client's next message on a stream (None: no limit).
        self.stream_idle = stream_idle_seconds

    # -- Execute, Dispatch and ExecuteMany's items --------------------------------------------------------------

    def execute(self, call: Call) -> bytes | Awaitable[bytes]:
        """One Execute or Dispatch call: the serialized ExecuteResponse, or what awaits to it.

        A call of the common form whose plan is cached runs at once where it can (stages 3-6 on the loop, alone: the
        bytes themselves), else is the scheduler's run (no frame of its own: this is the tiny call's path); every
        other call is ``_execute``'s, which may wait for a compile.

        Raises:
            ServiceError: validation, limits, the queue bound (RESOURCE_EXHAUSTED) or an expired deadline.
        """
        buffers = call.buffers
        compiled = None
        if buffers is not None:
            compiled = self.catalog.lookup(call)  # 2: the plan of the desc's bytes
            if compiled is not None and not compiled.plan.input_arrays:
                bind = functools.partial(feeds, compiled, buffers)
                encode = functools.partial(encode_outputs, compiled, self.binding.pool, write_execute)
                scheduler = self.scheduler
                response = scheduler.now(call, compiled, bind, encode)  # 3-6, at once
                return scheduler.run(call, compiled, bind, encode) if response is None else response  # 3-6
        return self._execute(call, compiled)

    async def _execute(self, call: Call, found: Compiled | None) -> bytes:
        """``execute`` of every other call: a handle's plan, a desc compiled on a miss, resident or tensor-array
        bindings, a request in its protobuf form. ``found``: the plan ``execute`` looked up already."""
        request = call.request
        entry = None
        if isinstance(request, service_pb2.DispatchRequest):  # 2: a compiled handle's plan, validated once
            entry = self.handles.get(call.owner, request.handle)
            compiled = entry.compiled
            call.label = entry.label
            if compiled.fallback:
                call.executed_on = compiled.executed_on
            if not call.resident:
                self.catalog.check_response_fits(compiled)
        else:  # 2: the plan of the desc's bytes, else compiled on a worker
            compiled = (
                found
                or self.catalog.lookup(call)
                or await self.scheduler.compile(call.deadline, functools.partial(self.catalog.compile, call))
            )
        if call.resident:
            return write_resident(await self._resident(call, compiled, entry))
        if call.buffers is not None and compiled.plan.input_arrays:
            # The common form read no tensor-array bindings: the plan wants them, so protobuf reads the request.
            request = call.request = parse(service_pb2.ExecuteRequest, call.raw)
            call.buffers = None
        buffers: Sequence[Buffer | None]
        if call.buffers is not None:
            buffers = call.buffers
        else:
            assert request is not None
            buffers = unary_buffers(request.inputs, compiled.plan)
            if entry is not None:
                buffers = entry.bind(buffers)
        bind = functools.partial(feeds, compiled, buffers)  # 4
        encode = functools.partial(encode_outputs, compiled, self.binding.pool, write_execute)  # 6
        response = self.scheduler.now(call, compiled, bind, encode)  # 3-6, at once
        return await self.scheduler.run(call, compiled, bind, encode) if response is None else response  # 3, 4, 5

    async def _resident(self, call: Call, compiled: Compiled, entry: Handle | None) -> list[bytes | Resident | None]:
        """A call with resident bindings or kept outputs: one job that binds, runs and encodes (device memory stays
        on the device), placed by the bytes it moves through the host."""
        request = call.request
        assert request is not None
        binding = self.binding
        kept = set(request.keep_outputs)
        call.sent = sum(
            layout.total_bytes for i, layout in enumerate(compiled.plan.outputs) if layout is not None and i not in kept
        )
        job = functools.partial(
            binding.resident_run,
            call.owner,
            compiled,
            request,
            output_descs=None if entry is None else entry.output_desc_bytes,
            bind=None if entry is None else entry.bind,
        )
        return await self.scheduler.run(call, compiled, None, None, job, binding.host_bytes(compiled, request))

    async def execute_items(self, calls: list[Call]) -> list[bytes | Exception]:
        """An ExecuteMany message's items, in the admission slot their stream holds: each item's response, or its
        error. Each runs ``execute``'s stages; consecutive items of one cached plan with plain buffers are bound and
        handed to the scheduler together (``Scheduler.run_items``), so that they batch without a task each."""
        catalog = self.catalog
        binding = self.binding
        outcomes: list[bytes | Exception] = []
        index = 0
        while index < len(calls):
            call = calls[index]
            request = call.request
            try:
                compiled = None
                if isinstance(request, service_pb2.ExecuteRequest) and not call.resident:
                    compiled = catalog.lookup(call)  # 2, a hit
                if compiled is None or compiled.plan.input_arrays:
                    outcomes.append(await self._execute(call, compiled))  # a miss, a handle, resident or array bindings
                    index += 1
                    continue
            except Exception as error:
                outcomes.append(error)
                index += 1
                continue
            group: list[Call] = []
            binds: list[Callable[[], Feeds]] = []
            bound: list[Exception | None] = []
            while index < len(calls):
                call = calls[index]
                request = call.request
                if group:
                    try:
                        same = isinstance(request, service_pb2.ExecuteRequest) and not call.resident
                        same = same and catalog.lookup(call) is compiled
                    except Exception:
                        same = False  # the next pass of the outer loop answers it with its error
                    if not same:
                        break
                group.append(call)
                index += 1
                try:
                    assert request is not None
                    binds.append(functools.partial(feeds, compiled, unary_buffers(request.inputs, compiled.plan)))
                    bound.append(None)
                except Exception as error:
                    binds.append(functools.partial(_raise, error))
                    bound.append(error)
            encode = functools.partial(encode_outputs, compiled, binding.pool, write_execute)
            ran = await self.scheduler.run_items(group, compiled, binds, encode)  # 3-6
            outcomes.extend(error or result for error, result in zip(bound, ran, strict=True))
        return outcomes

    async def compiled(
        self, operator_desc: operators_pb2.OperatorDesc, execution_flags: int, deadline: float | None
    ) -> Compiled:
        """Stage 2 for a desc already parsed (ExecuteStream's start, CompileOperator): the cached plan, else compiled
        on a worker. ``execution_flags`` is the request's DML_EXECUTION_FLAGS (INVALID_ARGUMENT at
        `execution_flags` for an unknown bit)."""
        catalog = self.catalog
        flags = compile_flags(execution_flags)
        compiled = catalog.cached(operator_desc, flags)
        if compiled is None:
            compiled = await self.scheduler.compile(deadline, functools.partial(catalog.compiled, operator_desc, flags))
        return compiled

    async def execute_many(
        self,
        messages: AsyncIterator[tuple[service_pb2.ExecuteManyRequest, int]],
        owner: str,
        time_remaining: float | None,
    ) -> AsyncIterator[bytes]:
        """ExecuteMany: run each item as its unary call would run (``execute``), answer each as it finishes
        (serialized ExecuteManyResponse messages holding the results that are ready together).

        Items of one desc that arrive in one message join one batch. At most ``stream_limits.items`` items (and
        about ``stream_limits.bytes`` request bytes) are in flight, counted until their result is written, so a
        client that sends faster than it reads stops being read instead of growing the server's memory.
        """
        self.scheduler.gate()
        stream = ManyStream(
            self.execute_items,
            self.scheduler,
            self.stream_limits,
            self.stream_idle,
            owner,
            None if time_remaining is None else time.monotonic() + time_remaining,
        )
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
        limits = self.catalog.limits
        pool = self.binding.pool
        layout = validate_tensor(
            start.desc,
            "start.desc",
            ANY_TENSOR,
            output=False,
            max_tensor_bytes=limits.max_tensor_bytes,
            max_tensor_elements=limits.max_tensor_elements,
        )
        store = self.binding.resident
        offload = self.scheduler.offload
        with store.reserve(owner, layout.packed_bytes) as reservation:
            if start.uninitialized:
                if await next_part(parts, idle) is not None:
                    raise InvalidArgument("chunk", "an uninitialized tensor takes no bytes")
                zeros = np.zeros(tuple(layout.sizes), layout.dtype)
                value = await offload(lambda _: store.device.upload(zeros))
            else:
                buffer = pool.acquire(layout.total_bytes)
                try:
                    await receive(parts, [buffer], "start.desc.buffer.total_tensor_size_in_bytes", idle)
                    # A packed copy of the logical tensor: the pooled buffer goes back to the pool.
                    value = await offload(lambda _: upload(store, buffer, layout))
                finally:
                    pool.release(buffer)
            return reservation.add(layout, start.desc.SerializeToString(), value)

    async def read_tensor(self, handle: str, owner: str) -> AsyncIterator[bytes]:
        """ReadTensor: the tensor's handle and desc, then its buffer's bytes in chunks."""
        self.scheduler.gate()
        tensor = self.binding.resident.get(owner, handle)
        device = self.binding.resident.device
        layout = tensor.layout
        # The copies (the device's packed download, the encoded staging) wait for the client to read them: their
        # bytes are reserved before they exist.
        async with self.scheduler.memory.reserved(layout.total_bytes + layout.packed_bytes, None):
            array = await self.scheduler.offload(lambda _: device.download(tensor.value))
            async for part in self._read_out(tensor, array):
                yield part

    async def _read_out(self, tensor: Resident, array: np.ndarray) -> AsyncIterator[bytes]:
        """ReadTensor's messages: the tensor's handle and desc, then its buffer's bytes in chunks."""
        layout = tensor.layout
        pool = self.binding.pool
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
        self.binding.resident.release(owner, handle)

    # -- compiled operators and graphs ---------------------------------------------------------------------------

    async def compile_operator(self, request: service_pb2.CompileOperatorRequest, owner: str) -> Handle:
        """CompileOperator: validate the desc once (sharing Execute's compile cache), bind its owned inputs."""
        self.scheduler.gate()
        sessions_before = SESSIONS.created
        handles = self.handles
        stripped, owned = strip_owned(request.operator_desc, "operator_desc")
        owned_bytes = sum(len(binding.buffer.data) for binding in request.owned_inputs)
        handles.check_room(owner, owned_bytes)
        compiled = await self.compiled(stripped, request.execution_flags, None)
        await self.scheduler.room_for_handle(sessions_before)
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
        sessions_before = SESSIONS.created
        handles = self.handles
        graph = request.graph_desc
        constant_bytes = sum(len(node.constant_data.data) for node in graph.nodes)
        owned_bytes = sum(len(binding.buffer.data) for binding in request.owned_inputs)
        handles.check_room(owner, constant_bytes + owned_bytes)

        def admit(materialised: int) -> None:
            # Refused before the constants are made, not after: a refused graph must not have cost their memory. Each
            # will be charged at least EXTERNAL_COPIES times (more if it is small enough to go inside the model); the
            # charge once the graph is built refuses the rest.
            handles.check_room(owner, EXTERNAL_COPIES * materialised + owned_bytes)

        flags = compile_flags(request.execution_flags)
        await self.scheduler.room_for_session(None)
        async with self.scheduler.turn(None):
            compiled, lowering = await self.scheduler.offload(
                lambda _: self.catalog.compile_graph(
                    graph, max_nodes=self.max_graph_nodes, admit_constants=admit, flags=flags
                )
            )
        await self.scheduler.room_for_handle(sessions_before)
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
        """Run one streamed request: the start message, the input chunks, then the outputs in chunks: the stages of
        ``execute`` with a chunked reader and writer.

        Messages travel as wire bytes (``dmlrpc.wire`` reads and writes the chunks without protobuf copies). The
        desc and the declared lengths are validated, and the limits applied, before a byte is allocated. The inputs
        are received before the call takes a running slot, each chunk within ``stream_idle`` seconds of the last:
        a caller that stalls mid-upload holds its own buffers, never a slot that other calls need. The call's memory
        stays reserved until its outputs are written.
        """
        self.scheduler.gate()
        deadline = deadline_of(time_remaining)
        idle = self.stream_idle
        start = await parse_stream_start(parts, service_pb2.ExecuteStreamRequest, "ExecuteStream", idle)
        try:
            compiled = await self.compiled(start.operator_desc, start.execution_flags, deadline)
        except InvalidArgument as error:
            raise InvalidArgument(f"start.{error.field}", error.description) from None
        lengths = declared_lengths(compiled, start.input_bytes, self.catalog.limits)
        binding = self.binding
        pool = binding.pool
        buffers = [None if n == 0 else pool.acquire(n) for n in lengths]
        call = Call(None, None, sum(lengths), deadline, hold=True, label=compiled.label)
        staged: list[np.ndarray] = []
        try:
            try:
                await receive(parts, buffers, idle=idle)
                call.arrived = time.monotonic()
                outputs, staged = await self.scheduler.run(
                    call,
                    compiled,
                    functools.partial(feeds, compiled, buffers),
                    functools.partial(binding.output_views, compiled),
                )
            finally:
                for buffer in buffers:
                    if buffer is not None:
                        pool.release(buffer)
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
            self.scheduler.memory.release(call.held)
