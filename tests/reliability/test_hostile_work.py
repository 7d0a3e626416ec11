"""Hostile callers, work and memory that dwarf a request's bytes: the work budget, intermediates, constants and
outputs staged for callers that never read them (docs/reliability.md, "Threats")."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from dmlrpc_server.runtime.compiler import EXTERNAL_COPIES
from tests.conftest import ServerThread, start_server
from tests.reliability.attacks import (
    FORBIDDEN,
    HELD_WINDOW,
    HealthWatch,
    assert_serves,
    broadcast_constant_graph,
    broadcast_identity,
    broadcast_identity_request,
    broadcast_max_pooling,
    large_intermediate,
    much_work,
    stream_messages,
)

#: The call memory of this module's server (--call-memory-bytes).
BUDGET = 320 << 20


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    running = start_server(
        compiled_bytes_per_caller=200 << 20,
        compiled_bytes_total=512 << 20,
        call_memory_bytes=BUDGET,
        call_memory_wait_seconds=1.0,
        # Tensors the call memory cannot hold: its refusals are what this module tests (by default the tensor limit
        # follows the call memory, and would refuse them first).
        max_tensor_bytes=512 << 20,
    )
    yield running
    running.stop()


def _refusal(stub: service_pb2_grpc.DirectMLServiceStub, request: service_pb2.ExecuteRequest) -> grpc.RpcError:
    started = time.monotonic()
    with pytest.raises(grpc.RpcError) as caught:
        stub.Execute(request, timeout=20)
    assert time.monotonic() - started < 5, "the refusal came only after the work ran"
    error = caught.value
    assert isinstance(error, grpc.RpcError)
    assert error.code() not in FORBIDDEN, error.details()
    return error


def test_work_that_dwarfs_its_bytes_is_refused_before_it_runs(server: ServerThread) -> None:
    # 8 bytes of data, 5.5e11 multiply-adds: main ran it (hours of a worker thread, or every call frozen before
    # the serving core); the work budget refuses it from the desc alone.
    request = much_work()
    assert request.ByteSize() < 200
    # Refused from the desc alone, within a round trip (_refusal): there is no work for health to be answered
    # during, so the watch asks only that every check answers SERVING.
    with HealthWatch(server.address) as watch, grpc.insecure_channel(server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        for _ in range(3):
            error = _refusal(stub, request)
            assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            details = error.details() or ""
            assert details.startswith("operator_desc.gemm:"), details
            assert "--max-work" in details and "element-operations" in details
    watch.assert_served()
    assert_serves(server.address)


def test_work_budget_is_a_setting(server: ServerThread) -> None:
    # A 100-byte pooling of a broadcast: its work (about 2e5 element-operations) runs under the default budget and
    # is refused under a budget of 2^14.
    request = broadcast_max_pooling(64, (16, 16))
    with grpc.insecure_channel(server.address) as channel:
        response = service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=30)
    assert np.all(np.frombuffer(response.outputs[0].buffer.data, np.float32) == 3.0)
    small = start_server(max_work=1 << 14)
    try:
        with grpc.insecure_channel(small.address) as channel:
            error = _refusal(service_pb2_grpc.DirectMLServiceStub(channel), request)
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "--max-work" in (error.details() or "")
    finally:
        small.stop()


def test_an_intermediate_over_the_tensor_limit_is_refused_naming_the_field(server: ServerThread) -> None:
    # Input and output are within the limits; the lowering's gathered windows would be 43 GB (main: INTERNAL
    # after ONNX Runtime failed to allocate it, or the machine's memory).
    with HealthWatch(server.address) as watch, grpc.insecure_channel(server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        error = _refusal(stub, large_intermediate())
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        details = error.details() or ""
        assert details.startswith("operator_desc.max_pooling:"), details
        assert "--max-tensor-bytes" in details and "window elements" in details
    watch.assert_served()
    assert_serves(server.address)


def test_a_graph_constant_is_charged_what_it_materialises(server: ServerThread) -> None:
    # 78 bytes of CompileGraph whose 4-byte constant feeds a broadcast input of 16 Mi elements: the server holds
    # the 64 MiB constant as an array beside the model and in its session (128 MiB charged), and the caller's
    # 200 MiB quota (compiled_bytes_per_caller) has room for one such handle, not two (main charged each 4 bytes).
    desc = broadcast_constant_graph(1 << 24)
    assert desc.ByteSize() < 100
    with HealthWatch(server.address) as watch, dmlrpc.Client(server.address) as client:
        with watch.during("the first compile"):
            first = client.compile(desc)
        (charged,) = [entry.nbytes for entry in server.built.service.handles]
        assert charged >= EXTERNAL_COPIES * (64 << 20)
        with pytest.raises(dmlrpc.ResourceExhaustedError, match="--compiled-bytes-per-caller"):
            client.compile(desc)
        first.release()
        second = client.compile(desc)  # the charge went back with the handle
        with watch.during("the call of the compiled graph"):
            (result,) = second(timeout=60)
        assert isinstance(result, np.ndarray) and result.shape == (1, 1 << 24) and np.all(result == 2.0)
        second.release()
    watch.assert_served()


def test_the_health_watch_fails_a_call_that_holds_the_servers_loop(server: ServerThread) -> None:
    # What the watch's marks catch: while something holds the server's loop, no health check is answered, so a
    # call in flight all that time fails the watch (however many checks were sent meanwhile, none or many).
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        holding.set()
        release.wait(30)

    with HealthWatch(server.address) as watch:
        server.loop.call_soon_threadsafe(hold)
        assert holding.wait(10)
        try:
            with watch.during("the held loop"):
                time.sleep(0.2)  # the watch sends checks meanwhile; its length does not decide the outcome
        finally:
            release.set()
    with pytest.raises(AssertionError, match="no health check was answered while the held loop was in flight"):
        watch.assert_served()


def test_graph_constants_over_the_tensor_limit_are_refused() -> None:
    # Two constants of 4 bytes, each read as a 48 MiB broadcast: each node's tensors are within a 64 MiB limit, the
    # constants together materialise 96 MiB.
    graph = dmlrpc.Graph()
    first = graph.constant(np.float32(2.0))
    second = graph.constant(np.float32(3.0))
    (a,) = graph.node(broadcast_identity(12 << 20), [first])
    (b,) = graph.node(broadcast_identity(12 << 20), [second])
    graph.output(a, b)
    small = start_server(max_tensor_bytes=64 << 20, compiled_bytes_total=1 << 30)
    try:
        with dmlrpc.Client(small.address) as client:
            with pytest.raises(dmlrpc.ResourceExhaustedError, match=r"constant_data: .*--max-tensor-bytes"):
                client.compile(graph.desc())
            node_path = r"^RESOURCE_EXHAUSTED: graph_desc\.nodes\[1\]\.operator\."
            with pytest.raises(dmlrpc.ResourceExhaustedError, match=node_path):
                client.compile(broadcast_constant_graph(1 << 25))  # one node's input: named by its graph path
        assert_serves(small.address)
    finally:
        small.stop()


def _call_memory(server: ServerThread, request: service_pb2.ExecuteRequest) -> int:
    """What one call of ``request`` reserves of the server's call memory."""
    return server.built.catalog.compiled(request.operator_desc).memory


def _wait_held(server: ServerThread, held: int) -> int:
    memory = server.built.service.scheduler.memory
    deadline = time.monotonic() + 10
    while memory.held != held and time.monotonic() < deadline:
        time.sleep(0.05)
    return memory.held


def test_outputs_staged_for_callers_that_never_read_are_bounded(server: ServerThread) -> None:
    # Each call's output is 32 MiB from a 4-byte input; the callers never read it. Main held every such output
    # (2.5 GiB for callers that never read); now each call reserves its memory (its run, then its output until
    # read) in --call-memory-bytes, and the caller that finds no room waits, then is refused naming the setting.
    request = broadcast_identity_request(1 << 23)
    per_call = _call_memory(server, request)
    assert per_call >= 64 << 20  # the broadcast input made whole, the output, the output's staged copy
    fit = BUDGET // per_call
    # Windows held: else gRPC's transport may take a whole output, and the server rightly gives its memory back.
    channels = [grpc.insecure_channel(server.address, options=HELD_WINDOW) for _ in range(fit + 1)]
    held: list[Iterator[service_pb2.ExecuteStreamResponse]] = []
    try:
        for channel in channels[:fit]:
            responses = service_pb2_grpc.DirectMLServiceStub(channel).ExecuteStream(
                stream_messages(request), timeout=60
            )
            header = next(responses)  # the output is made; its 32 MiB wait to be read
            assert list(header.outputs.output_bytes) == [32 << 20]
            held.append(responses)
        assert _wait_held(server, fit * per_call) == fit * per_call
        with HealthWatch(server.address) as watch:
            stub = service_pb2_grpc.DirectMLServiceStub(channels[fit])
            with watch.during("the call that waited for call memory"), pytest.raises(grpc.RpcError) as caught:
                list(stub.ExecuteStream(stream_messages(request), timeout=30))
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "--call-memory-bytes" in (caught.value.details() or "")
            assert_serves(server.address)  # small calls still run
        watch.assert_served()
    finally:
        for responses in held:
            responses.cancel()  # type: ignore[attr-defined]
        for channel in channels:
            channel.close()
    assert _wait_held(server, 0) == 0, "cancelled calls did not give their memory back"


def test_execute_many_results_count_against_the_call_memory(server: ServerThread) -> None:
    # 8 items of 32 MiB outputs from 4-byte inputs, never read: only what fits the call memory is made.
    request = broadcast_identity_request(1 << 23)
    items = [service_pb2.ExecuteItem(tag=i, execute=request) for i in range(8)]
    options = [("grpc.max_receive_message_length", 512 << 20), *HELD_WINDOW]
    with grpc.insecure_channel(server.address, options=options) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        call = stub.ExecuteMany(iter([service_pb2.ExecuteManyRequest(items=items)]), timeout=60)
        # Nobody reads: the items run until one waits for call memory that the unread results hold (or all of
        # them are made, should they ever fit together).
        memory = server.built.service.scheduler.memory
        deadline = time.monotonic() + 30
        while not (memory.waiting or memory.held >= 8 << 25):
            assert time.monotonic() < deadline, memory.held
            time.sleep(0.01)
        assert memory.held <= BUDGET
        statuses = []
        for message in call:
            statuses.extend(result.status.code for result in message.results)
    assert len(statuses) == 8
    assert set(statuses) <= {grpc.StatusCode.OK.value[0], grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]}, statuses
    assert grpc.StatusCode.OK.value[0] in statuses
    assert _wait_held(server, 0) == 0


def test_large_unary_responses_stay_reserved_until_the_call_is_done(server: ServerThread) -> None:
    # A unary response is held by gRPC until its caller reads it: its bytes stay reserved until the RPC is done.
    request = broadcast_identity_request(1 << 22)
    options = [("grpc.max_receive_message_length", 64 << 20)]
    with grpc.insecure_channel(server.address, options=options) as channel:
        response = service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=30)
    assert len(response.outputs[0].buffer.data) == 16 << 20
    assert _wait_held(server, 0) == 0


def test_capabilities_report_the_hardening_limits() -> None:
    settings = {
        "max_work": 1 << 30,
        "call_memory_bytes": 96 << 20,
        "resident_tensors_total": 12,
        "compiled_operators_total": 13,
        "compiled_bytes_total": 14 << 20,
        "stream_idle_seconds": 7.5,
        "max_streams_per_connection": 15,
        "compile_cache_bytes": 16 << 20,
    }
    running = start_server(**settings)
    try:
        with dmlrpc.Client(running.address) as client:
            limits = client.get_capabilities().limits
        assert {name: getattr(limits, name) for name in settings} == settings
    finally:
        running.stop()


def _rss() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) << 10 for line in status if line.startswith("VmRSS:"))


def test_a_graph_over_the_quota_is_refused_before_its_constants_are_made(server: ServerThread) -> None:
    # A 256 MiB constant (charged 1 GiB) against a 200 MiB quota: refused before it is materialised, so the
    # server (in this process) does not grow by it, however many times it is asked.
    desc = broadcast_constant_graph(1 << 26)
    before = _rss()
    with dmlrpc.Client(server.address) as client:
        for _ in range(3):
            with pytest.raises(dmlrpc.ResourceExhaustedError, match="--compiled-bytes-per-caller"):
                client.compile(desc)
    assert _rss() - before < 64 << 20
