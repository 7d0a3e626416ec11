"""Class 7, slow and idle callers: stalled streams hold no running slot and end after --stream-idle-seconds, one
connection opens at most --max-streams-per-connection calls at once."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from dmlrpc.wire import encode_chunk
from dmlrpc_server.connections import IDLE_CONNECTIONS
from tests.conftest import ServerThread, scrape, start_server
from tests.reliability.fuzzing import EXECUTE, EXECUTE_STREAM
from tests.reliability.hostile import RunGate, Stalling, half_upload, health_answers, slow_pooling
from tests.reliability.test_fuzz import assert_still_serving

IDLE = 1.0
SLOTS = 2
STALLED = 4  # more than SLOTS
EXECUTE_MANY = "/dmlrpc.v1.DirectMLService/ExecuteMany"
LENT = ("dmlrpc_buffer_pool_lent_bytes", ())


@pytest.fixture(scope="module")
def idle_server() -> Iterator[ServerThread]:
    running = start_server(stream_idle_seconds=IDLE, max_concurrent_requests=SLOTS, max_queue_depth=8)
    yield running
    running.stop()


def _valid_call_is_answered(channel: grpc.Channel) -> None:
    call = ops.top_k(np.array([3.0, 9.0, 1.0], np.float32), 2)
    request = prepare_execute(call.operator_desc, call.inputs).request.SerializeToString()
    response = channel.unary_unary(EXECUTE, request_serializer=None, response_deserializer=None)(request, timeout=30)
    values = service_pb2.ExecuteResponse.FromString(response).outputs[0].buffer.data
    np.testing.assert_array_equal(np.frombuffer(values, np.float32), [9.0, 3.0])


def _ended_idle(error: BaseException | None) -> None:
    assert isinstance(error, grpc.RpcError), error
    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED, (error.code(), error.details())
    assert "--stream-idle-seconds" in str(error.details())


def test_stalled_uploads_hold_no_slot_and_end_after_the_idle_time(idle_server: ServerThread) -> None:
    admission = idle_server.built.service.scheduler.admission
    uploads = [Stalling(half_upload()) for _ in range(STALLED)]
    channels = [grpc.insecure_channel(idle_server.address, [("grpc.use_local_subchannel_pool", 1)]) for _ in uploads]
    errors: list[BaseException | None] = [None] * STALLED
    ended = [0.0] * STALLED

    def run(index: int) -> None:
        stream = channels[index].stream_stream(EXECUTE_STREAM, request_serializer=None, response_deserializer=None)
        try:
            list(stream(iter(uploads[index]), timeout=60))
        except grpc.RpcError as error:
            errors[index] = error
        ended[index] = time.monotonic()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(STALLED)]
    try:
        with grpc.insecure_channel(idle_server.address) as channel:
            health_answers(channel)  # connected before the stalls start
            began = time.monotonic()
            for thread in threads:
                thread.start()
            for upload in uploads:
                assert upload.sent.wait(10)
            stalled_at = time.monotonic()
            health_answers(channel)
            # Answered while the stalls last: a loop the stalled streams held would answer only once the idle
            # time had ended them.
            assert not any(ended), "health was answered only after the stalled uploads ended"
            while time.monotonic() - stalled_at < IDLE * 0.7:  # the whole stall: others are served meanwhile
                health_answers(channel)
                _valid_call_is_answered(channel)
                assert admission.running <= 1  # only the valid call: the stalled streams hold no slot
            for thread in threads:
                thread.join(timeout=IDLE + 30)
            for index in range(STALLED):
                _ended_idle(errors[index])  # by the server's idle time (the caller's deadline is 60 s)
                assert ended[index] - began >= IDLE
            assert scrape(idle_server)[LENT] == 0  # the stalled streams' buffers came back
            assert_still_serving(channel)
    finally:
        for upload in uploads:
            upload.release.set()
        for channel in channels:
            channel.close()


def test_a_stream_that_sends_nothing_ends_after_the_idle_time(idle_server: ServerThread) -> None:
    for method in (EXECUTE_STREAM, EXECUTE_MANY):
        stalled = Stalling([])
        with grpc.insecure_channel(idle_server.address) as channel:
            stream = channel.stream_stream(method, request_serializer=None, response_deserializer=None)
            started = time.monotonic()
            with pytest.raises(grpc.RpcError) as info:
                list(stream(iter(stalled), timeout=30))
            stalled.release.set()
            _ended_idle(info.value)
            assert time.monotonic() - started >= IDLE
            health_answers(channel)


def test_a_stalled_create_tensor_ends_and_frees_its_reservation(idle_server: ServerThread) -> None:
    start = service_pb2.CreateTensorStart(desc=tensor_desc((np.float32, (1 << 16,))))
    first = service_pb2.CreateTensorRequest(start=start).SerializeToString()
    stalled = Stalling([first, encode_chunk(0, bytes(1 << 16))])
    with grpc.insecure_channel(idle_server.address) as channel:
        create = channel.stream_unary(
            "/dmlrpc.v1.DirectMLService/CreateTensor", request_serializer=None, response_deserializer=None
        )
        with pytest.raises(grpc.RpcError) as info:
            create(iter(stalled), timeout=30)
        stalled.release.set()
        _ended_idle(info.value)
        assert idle_server.built.resident.held == (0, 0)
        assert scrape(idle_server)[LENT] == 0
        # An upload without pauses still works.
        with dmlrpc.Client(idle_server.address, timeout=30) as client, client.upload(np.ones(8, np.float32)) as held:
            np.testing.assert_array_equal(client.read_tensor(held), np.ones(8, np.float32))
        assert_still_serving(channel)


def test_execute_many_may_wait_longer_than_the_idle_time_for_its_results(
    idle_server: ServerThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Idle time counts only while nothing of the stream is in flight: a caller waiting for a slow result is not
    idle, and one that answers within the idle time after its result keeps its stream."""
    desc, image = slow_pooling(256)
    gate = RunGate(monkeypatch, image.shape)  # the run lasts as long as this test holds it, on any machine
    request = prepare_execute(desc, [image]).request
    item = service_pb2.ExecuteItem(tag=7, execute=request)
    answered = threading.Event()

    def messages() -> Iterator[bytes]:
        yield service_pb2.ExecuteManyRequest(items=[item]).SerializeToString()
        answered.wait(60)
        time.sleep(IDLE / 3)

    try:
        with grpc.insecure_channel(idle_server.address) as channel:
            stream = channel.stream_stream(EXECUTE_MANY, request_serializer=None, response_deserializer=None)
            responses = stream(messages(), timeout=60)
            assert gate.entered.wait(30)
            time.sleep(IDLE * 4 / 3)  # the run, held, outlasts the idle time
            gate.release.set()
            results = []
            for raw in responses:
                results.extend(service_pb2.ExecuteManyResponse.FromString(raw).results)
                answered.set()
            assert [result.tag for result in results] == [7]
            assert results[0].status.code == 0, results[0].status
            assert len(results[0].response.outputs[0].buffer.data) == 129 * 129 * 4
            health_answers(channel)
    finally:
        gate.release.set()


@pytest.fixture(scope="module")
def capped_server() -> Iterator[ServerThread]:
    running = start_server(max_streams_per_connection=2, stream_idle_seconds=30)
    yield running
    running.stop()


def _top_k_request() -> service_pb2.ExecuteRequest:
    call = ops.top_k(np.array([3.0, 9.0, 1.0], np.float32), 2)
    return prepare_execute(call.operator_desc, call.inputs).request


def _until(condition: Callable[[], bool], timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_one_connection_gets_at_most_its_streams(capped_server: ServerThread) -> None:
    """Two calls open on a connection capped at two: more wait in the server (eight of them, four per open call),
    the next is refused RESOURCE_EXHAUSTED naming the flag; none is refused by HTTP/2 (that is UNAVAILABLE)."""
    connections = capped_server.built.connections
    assert connections is not None
    uploads = [Stalling(half_upload()) for _ in range(2)]
    # NOTE: a local subchannel pool each, or the two channels would share one connection.
    own = [("grpc.use_local_subchannel_pool", 1)]
    with (
        grpc.insecure_channel(capped_server.address, options=own) as crowded,
        grpc.insecure_channel(capped_server.address, options=own) as other,
    ):
        stream = crowded.stream_stream(EXECUTE_STREAM, request_serializer=None, response_deserializer=None)
        calls = [stream(iter(upload), timeout=60) for upload in uploads]
        for upload in uploads:
            assert upload.sent.wait(10)
        assert _until(lambda: connections.open_calls == 2)
        execute = service_pb2_grpc.DirectMLServiceStub(crowded).Execute
        queued = [execute.future(_top_k_request(), timeout=30) for _ in range(9)]
        # Eight wait for one of the two to end; the ninth, whichever it is, finds the queue full.
        assert _until(lambda: sum(call.done() for call in queued) == 1)
        refused = next(call for call in queued if call.done())
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.details()
        assert "--max-streams-per-connection" in str(refused.details())
        assert connections.waiting_calls == 8
        health_answers(other)  # other connections are served meanwhile
        _valid_call_is_answered(other)
        calls[0].cancel()
        for call in queued:
            if call is not refused:
                outputs = call.result(timeout=10).outputs
                np.testing.assert_array_equal(np.frombuffer(outputs[0].buffer.data, np.float32), [9.0, 3.0])
        calls[1].cancel()
        for upload in uploads:
            upload.release.set()
        assert_still_serving(other)
    assert _until(lambda: connections.open_calls == 0 and connections.waiting_calls == 0)


@pytest.fixture(scope="module")
def default_server() -> Iterator[ServerThread]:
    running = start_server()
    yield running
    running.stop()


def test_idle_connections_are_remembered_up_to_a_bound(default_server: ServerThread) -> None:
    """A connection's slots stay while it is idle (one call at a time makes none anew), and the idle ones are
    forgotten once more than IDLE_CONNECTIONS are kept: connections that come and go hold no memory. Each connection
    runs a stream, which holds a slot throughout (a tiny unary call that never suspends takes none)."""
    connections = default_server.built.connections
    assert connections is not None
    call = ops.top_k(np.array([3.0, 9.0, 1.0], np.float32), 2)
    messages = list(prepare_execute(call.operator_desc, call.inputs).stream_requests())
    for _ in range(IDLE_CONNECTIONS + 40):
        # NOTE: a local subchannel pool each: every channel its own connection, from its own port.
        with grpc.insecure_channel(default_server.address, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
            stream = channel.stream_stream(EXECUTE_STREAM, request_serializer=None, response_deserializer=None)
            assert list(stream(iter(messages), timeout=30))
    assert 0 < connections.remembered <= IDLE_CONNECTIONS, connections.remembered
    assert connections.open_calls == 0


def test_many_callers_on_one_connection_are_all_answered(default_server: ServerThread) -> None:
    """200 threads calling at once over one connection of a default server: every call succeeds. An HTTP/2 stream
    limit refused some of them (RST_STREAM REFUSED_STREAM, which grpc surfaces as UNAVAILABLE) as the client's count
    of open streams ran ahead of the server's."""
    callers, rounds = 200, 30
    request = _top_k_request()
    start = threading.Barrier(callers)
    codes: list[grpc.StatusCode] = []
    details: dict[grpc.StatusCode, str] = {}
    lock = threading.Lock()
    with grpc.insecure_channel(default_server.address) as channel:
        execute = service_pb2_grpc.DirectMLServiceStub(channel).Execute

        def call() -> None:
            start.wait(60)
            for _ in range(rounds):
                try:
                    execute(request, timeout=60)
                    code = grpc.StatusCode.OK
                except grpc.RpcError as error:
                    code = error.code()
                    details[code] = str(error.details())
                with lock:
                    codes.append(code)

        threads = [threading.Thread(target=call) for _ in range(callers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    assert Counter(codes) == {grpc.StatusCode.OK: callers * rounds}, details
