"""The scheduler over the real server: work placed by its cost, health answered beside heavy work, deadlines that
stop running work, and ExecuteMany items answered one by one."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import math
import threading
import time
import weakref
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc
from dmlrpc_server.binding import feeds
from dmlrpc_server.calls import Call
from dmlrpc_server.catalog import Catalog
from dmlrpc_server.feature_levels import LATEST
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.runtime.admission import Admission, ByteBudget
from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.providers import choose_provider
from dmlrpc_server.scheduler import Place, Scheduler
from tests.conftest import ServerThread, scrape, start_server
from tests.reliability.attacks import HealthWatch


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    running = start_server()
    yield running
    running.stop()


def _broadcast_top_k(rows: int, columns: int) -> service_pb2.ExecuteRequest:
    """TOP_K1 (K=1) over a [rows, columns] FLOAT32 input that is one element broadcast (strides 0): a 4-byte
    buffer whose work is rows x columns elements."""
    call = ops.top_k(np.zeros((1, 2), np.float32), 1, 1)
    desc = operators_pb2.OperatorDesc()
    desc.CopyFrom(call.operator_desc)
    top_k = desc.top_k1
    buffer = top_k.input_tensor.buffer
    del buffer.sizes[:]
    buffer.sizes.extend([rows, columns])
    buffer.strides.extend([0, 0])
    buffer.total_tensor_size_in_bytes = 4
    for output in (top_k.output_value_tensor, top_k.output_index_tensor):
        del output.buffer.sizes[:]
        output.buffer.sizes.extend([rows, 1])
        output.buffer.total_tensor_size_in_bytes = rows * 4
    binding = service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=np.float32(3).tobytes()))
    return service_pb2.ExecuteRequest(operator_desc=desc, inputs=[binding])


def _heavy_graph(columns: int, nodes: int) -> dmlrpc.Graph:
    """A chain of ``nodes`` element-wise inverse hyperbolic sines over [1024, columns] FLOAT32 (a slow function
    on ONNX Runtime's CPU provider, about 100 ms a node): nodes of real work, with RunOptions.terminate seen
    between them."""
    graph = dmlrpc.Graph()
    x = graph.input(np.float32, (1024, columns))
    y = x
    for _ in range(nodes):
        y = graph.element_wise("asinh", y)
    graph.output(y)
    return graph


def test_health_is_answered_while_requests_with_large_work_and_tiny_bytes_run(server: ServerThread) -> None:
    # Each request is 4 bytes of data whose work is 32 M elements (a few hundred ms of ONNX Runtime): before the
    # scheduler judged requests by their work, these ran on the event loop and every call waited. Three callers
    # keep such requests running back to back; a fourth's must have health answered while it runs. (How fast
    # health answers beside them is measured by bench/run.py: "health check beside a heavy request".)
    request = _broadcast_top_k(8, 1 << 22)
    stop = threading.Event()
    errors: list[BaseException] = []

    def load() -> None:
        with grpc.insecure_channel(server.address) as channel:
            stub = service_pb2_grpc.DirectMLServiceStub(channel)
            while not stop.is_set():
                try:
                    response = stub.Execute(request, timeout=60)
                    values = np.frombuffer(response.outputs[0].buffer.data, np.float32)
                    assert values.tolist() == [3.0] * 8
                except BaseException as error:  # surfaced below
                    errors.append(error)
                    return

    threads = [threading.Thread(target=load) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        with HealthWatch(server.address) as watch, grpc.insecure_channel(server.address) as channel:
            stub = service_pb2_grpc.DirectMLServiceStub(channel)
            with watch.during("a request of 32 M elements"):
                response = stub.Execute(request, timeout=60)
            assert np.frombuffer(response.outputs[0].buffer.data, np.float32).tolist() == [3.0] * 8
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert not errors, errors
    watch.assert_served()


def test_a_deadline_stops_running_work_and_frees_its_slot(server: ServerThread) -> None:
    x = np.random.default_rng(1).standard_normal((1024, 4096)).astype(np.float32)
    with dmlrpc.Client(server.address, timeout=120, retry=None) as client, contextlib.ExitStack() as compiled:
        # Enough nodes for over a second of work on this machine, however fast: the deadline below is a fifth of it.
        nodes = 24
        while True:
            op = compiled.enter_context(client.compile(_heavy_graph(4096, nodes)))
            started = time.perf_counter()
            op(x)  # the full run, for scale
            full = time.perf_counter() - started
            if full > 1.0:
                break
            nodes = math.ceil(nodes * 1.5 / max(full, 0.05))
        started = time.perf_counter()
        with pytest.raises(dmlrpc.DeadlineExceededError):
            op(x, timeout=full / 5)
        answered = time.perf_counter() - started
        admission = server.built.service.scheduler.admission
        freed_deadline = time.monotonic() + full / 2
        while admission.running and time.monotonic() < freed_deadline:
            time.sleep(0.005)
        freed = time.perf_counter() - started
    assert answered < full / 5 + 0.3
    assert admission.running == 0, "the stopped run still holds its slot"
    assert freed < full / 2, f"the slot came back {freed:.2f} s after the call (a full run takes {full:.2f} s)"


def test_execute_many_bounds_items_in_flight() -> None:
    # A client that sends many 1 MiB items and reads nothing: the server stops reading at its window (and gRPC's
    # flow control stops the client), so neither side's memory grows; every item is answered once it reads.
    running = start_server(stream_items_in_flight=4)
    try:
        x = np.arange(1 << 17, dtype=np.float32)
        request = prepare_execute(*_call(ops.element_wise("add", x, x))).request
        sent: list[int] = []

        def messages() -> Iterator[service_pb2.ExecuteManyRequest]:
            for tag in range(40):
                sent.append(tag)
                yield service_pb2.ExecuteManyRequest(items=[service_pb2.ExecuteItem(tag=tag, execute=request)])

        with grpc.insecure_channel(running.address) as channel:
            stub = service_pb2_grpc.DirectMLServiceStub(channel)
            responses = stub.ExecuteMany(messages(), timeout=30)
            time.sleep(1.0)  # the server admits 4 items, answers them, and waits for the reader
            assert len(sent) < 40
            tags: list[int] = []
            for response in responses:
                for result in response.results:
                    assert result.status.code == 0
                    np.testing.assert_array_equal(
                        np.frombuffer(result.response.outputs[0].buffer.data, np.float32), 2 * x
                    )
                    tags.append(result.tag)
        assert sorted(tags) == list(range(40))
    finally:
        running.stop()


def _call(call: ops.Call) -> tuple[operators_pb2.OperatorDesc, list[np.ndarray | None]]:
    return call.operator_desc, list(call.inputs)


def test_batches_too_large_to_run_inline_run_on_a_worker_and_equal_single_runs(server: ServerThread) -> None:
    # Work between --inline-work and twice it: on the CPU provider two such requests batch, and the batch runs on a
    # worker thread while the lane collects the next (the path every batch takes on a GPU).
    rng = np.random.default_rng(9)
    rows = [rng.standard_normal((1, 100_000)).astype(np.float32) for _ in range(12)]
    desc = ops.top_k(rows[0], 4, 1).operator_desc
    compiled = server.built.service.catalog.compiled(desc)
    scheduler = server.built.service.scheduler
    assert not scheduler.inline(compiled) and scheduler.batch_size(compiled) == 2, compiled.work
    before = scrape(server)
    with dmlrpc.Client(server.address, timeout=60) as client:
        results = list(client.map(desc, [[row] for row in rows]))
    after = scrape(server)
    for row, (values, indices) in zip(rows, results, strict=True):
        order = np.argsort(-row[0], kind="stable")[:4]
        np.testing.assert_array_equal(values[0], row[0][order])
        np.testing.assert_array_equal(indices[0], order)
    runs = after[("dmlrpc_batch_size_count", ())] - before[("dmlrpc_batch_size_count", ())]
    batched = after[("dmlrpc_batch_size_sum", ())] - before[("dmlrpc_batch_size_sum", ())]
    assert batched == len(rows) and runs < len(rows), (runs, batched)


def _scheduler(executor: ThreadPoolExecutor) -> Scheduler:
    """A scheduler of its own (no server): 4 running slots, a 1 MiB call memory, the default placement limits."""
    return Scheduler(
        Admission(4, 4),
        executor,
        BufferPool(0),
        ByteBudget(1 << 20, max_wait=0.0, setting="--call-memory-bytes"),
        inline_work=1 << 16,
        batch_work=1 << 18,
        device_inline_work=1 << 16,
        max_batch_size=8,
        max_delay=0.0,
    )


def test_a_placement_does_not_keep_its_desc_alive() -> None:
    # The scheduler decides once per compiled desc where its calls run, and keeps that decision (with a batching
    # desc's lane) beside the desc: a desc the compile cache drops must be freed at once, its sessions with it.
    limits = Limits(max_tensor_bytes=1 << 28, max_request_bytes=1 << 30, max_message_bytes=1 << 29)
    catalog = Catalog(choose_provider("cpu"), feature_level=LATEST, limits=limits, cache_capacity=1, cache_bytes=1)
    scheduler = _scheduler(ThreadPoolExecutor(1))
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    compiled = catalog.compiled(ops.top_k(x, 2, 3).operator_desc)  # over the cache's one byte: not cached
    assert scheduler.place(compiled).place is Place.BATCH
    session = weakref.ref(compiled.session)
    del compiled
    assert session() is None


def test_a_lone_tiny_call_runs_at_once_and_any_other_is_left_to_run() -> None:
    # Scheduler.now answers a tiny call on the loop, taking no admission slot and reserving no memory, only while
    # nothing else runs or waits and its memory fits now; any other call (or one past its deadline, a stream's item,
    # or any while the server drains) is left to ``run``, which admits it or refuses it.
    limits = Limits(max_tensor_bytes=1 << 28, max_request_bytes=1 << 30, max_message_bytes=1 << 29)
    provider = choose_provider("cpu")
    catalog = Catalog(provider, feature_level=LATEST, limits=limits, cache_capacity=4, cache_bytes=1 << 24)
    x = np.random.default_rng(7).random((1, 1, 3, 4), dtype=np.float32)
    compiled = catalog.compiled(ops.top_k(x, 2, 3).operator_desc)
    scheduler = _scheduler(ThreadPoolExecutor(1))
    admission, memory = scheduler.admission, scheduler.memory
    bind = functools.partial(feeds, compiled, [x.tobytes()])

    def now(**fields: Any) -> list[np.ndarray] | None:
        return scheduler.now(Call(None, None, x.nbytes, arrived=time.monotonic(), **fields), compiled, bind, list)

    answered = now()
    assert answered is not None
    order = np.argsort(-x, axis=3, kind="stable")[..., :2]
    np.testing.assert_array_equal(answered[0], np.take_along_axis(x, order, axis=3))
    np.testing.assert_array_equal(answered[1], order.astype(answered[1].dtype))
    assert admission.running == 0 and memory.held == 0
    assert now(deadline=time.monotonic() + 60) is not None
    assert admission.try_acquire()  # another call runs
    assert now() is None
    admission.release()
    assert memory.try_acquire(memory.capacity - compiled.memory + 1)  # its memory would not fit now
    assert now() is None
    memory.release(memory.capacity - compiled.memory + 1)
    assert now(deadline=time.monotonic() - 1) is None
    assert now(admitted=True) is None and now(hold=True) is None
    assert now() is not None
    scheduler.closing = True
    assert now() is None


def test_a_stopped_run_whose_caller_is_cancelled_leaves_no_unread_error() -> None:
    # A run stopped at its deadline whose caller is then cancelled too (what the loop's closing does at exit): the
    # run's error is read when it ends, not reported as "Future exception was never retrieved".
    stopping, ended, release = threading.Event(), threading.Event(), threading.Event()

    def job(options: Any) -> None:
        try:
            while not options.terminate:
                time.sleep(0.001)
            stopping.set()
            release.wait(30)  # runs on past its stop until its caller has been cancelled
            raise RuntimeError("Exiting due to terminate flag being set to true.")
        finally:
            ended.set()

    async def main() -> list[str]:
        loop = asyncio.get_running_loop()
        reported: list[str] = []
        loop.set_exception_handler(lambda _, context: reported.append(str(context.get("message"))))
        executor = ThreadPoolExecutor(1)
        scheduler = _scheduler(executor)
        call = asyncio.ensure_future(scheduler.offload(job, time.monotonic() + 0.05))
        assert await asyncio.to_thread(stopping.wait, 30)  # the deadline passed: the run was told to stop
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        release.set()
        assert await asyncio.to_thread(ended.wait, 30)
        executor.shutdown(wait=True)
        for _ in range(3):  # the run's outcome reaches the loop's future, which is then dropped
            await asyncio.sleep(0.01)
        del call
        gc.collect()
        return reported

    reported = asyncio.run(main())
    assert not any("never retrieved" in message for message in reported), reported
