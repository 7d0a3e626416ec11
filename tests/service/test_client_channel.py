"""The SDK's channel: gRPC-native retries of UNAVAILABLE, round-robin over replicas, dns:/// targets, keepalive."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc._channel import channel_options, service_config
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from tests.conftest import ServerThread, scrape, start_server


class FlakyCapabilities(service_pb2_grpc.DirectMLServiceServicer):
    """A real gRPC server whose GetCapabilities and ReleaseTensor answer ``code`` ``failures`` times, then
    succeed."""

    def __init__(self, failures: int, code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE) -> None:
        self.failures = failures
        self.code = code
        self.attempts = 0
        self._lock = threading.Lock()

    def _attempt(self, context: grpc.ServicerContext) -> None:
        with self._lock:
            self.attempts += 1
            attempt = self.attempts
        if attempt <= self.failures:
            context.abort(self.code, f"attempt {attempt} fails")

    def GetCapabilities(self, request: Any, context: grpc.ServicerContext) -> service_pb2.GetCapabilitiesResponse:  # noqa: N802
        self._attempt(context)
        return service_pb2.GetCapabilitiesResponse(server_version="flaky")

    def ReleaseTensor(self, request: Any, context: grpc.ServicerContext) -> service_pb2.ReleaseTensorResponse:  # noqa: N802
        self._attempt(context)
        return service_pb2.ReleaseTensorResponse()


@contextlib.contextmanager
def serving(servicer: FlakyCapabilities) -> Iterator[str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    service_pb2_grpc.add_DirectMLServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(None)


@pytest.fixture
def flaky() -> Iterator[tuple[FlakyCapabilities, str]]:
    servicer = FlakyCapabilities(failures=2)
    with serving(servicer) as address:
        yield servicer, address


def test_a_pure_call_is_retried_on_cancelled_and_one_with_effects_is_not() -> None:
    # A recycled worker's stop cancels the calls it holds but has not started: on the SDK's channel, a call that
    # only computes its answer (GetCapabilities, Execute, Dispatch...) is sent again; a release, which changes what
    # the server holds, is not.
    servicer = FlakyCapabilities(failures=1, code=grpc.StatusCode.CANCELLED)
    options = channel_options(
        retry=dmlrpc.RetryPolicy(), keepalive=None, load_balancing="pick_first", tls=None, extra=()
    )
    with serving(servicer) as address, grpc.insecure_channel(address, options=options) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        assert stub.GetCapabilities(service_pb2.GetCapabilitiesRequest(), timeout=30).server_version == "flaky"
        assert servicer.attempts == 2
        servicer.attempts = 0
        with pytest.raises(grpc.RpcError) as info:
            stub.ReleaseTensor(service_pb2.ReleaseTensorRequest(handle="w0.t1"), timeout=30)
        assert info.value.code() == grpc.StatusCode.CANCELLED
        assert servicer.attempts == 1


def test_unavailable_is_retried_by_grpc_per_the_service_config(flaky: tuple[FlakyCapabilities, str]) -> None:
    servicer, address = flaky
    with dmlrpc.Client(address, timeout=30) as client:
        assert client.get_capabilities().server_version == "flaky"
    assert servicer.attempts == 3


def test_retries_can_be_turned_off(flaky: tuple[FlakyCapabilities, str]) -> None:
    servicer, address = flaky
    with dmlrpc.Client(address, timeout=30, retry=None) as client, pytest.raises(dmlrpc.UnavailableError) as info:
        client.get_capabilities()
    assert info.value.message == "attempt 1 fails"
    assert servicer.attempts == 1


def test_async_client_retries_too(flaky: tuple[FlakyCapabilities, str]) -> None:
    import asyncio

    servicer, address = flaky

    async def call() -> str:
        async with dmlrpc.AsyncClient(address, timeout=30) as client:
            return (await client.get_capabilities()).server_version

    assert asyncio.run(call()) == "flaky"
    assert servicer.attempts == 3


def test_retry_gives_up_after_max_attempts(flaky: tuple[FlakyCapabilities, str]) -> None:
    servicer, address = flaky
    retry = dmlrpc.RetryPolicy(max_attempts=2, initial_backoff=0.01)
    with dmlrpc.Client(address, timeout=30, retry=retry) as client, pytest.raises(dmlrpc.UnavailableError):
        client.get_capabilities()
    assert servicer.attempts == 2


@pytest.fixture(scope="module")
def replicas() -> Iterator[list[ServerThread]]:
    running = [start_server(), start_server()]
    yield running
    for server in running:
        server.stop()


def _calls(server: ServerThread) -> float:
    key = ("dmlrpc_requests_total", (("code", "OK"), ("method", "Execute"), ("operator", "top_k1")))
    return scrape(server).get(key, 0.0)


def _spread(replicas: list[ServerThread], before: list[float], calls: int) -> list[float]:
    """Calls each replica counted since ``before`` (a call is counted just after its answer: wait for all)."""
    deadline = time.monotonic() + 10
    while True:
        spread = [_calls(server) - b for server, b in zip(replicas, before, strict=True)]
        if sum(spread) >= calls or time.monotonic() > deadline:
            return spread
        time.sleep(0.01)


def test_round_robin_spreads_calls_over_every_address(replicas: list[ServerThread]) -> None:
    target = "ipv4:" + ",".join(server.address for server in replicas)
    start = [_calls(server) for server in replicas]
    with dmlrpc.Client(target, timeout=30) as client:
        for _ in range(10):  # until both connections are up, the first ready one takes the calls
            client.top_k(np.arange(6, dtype=np.float32), 1)
        _spread(replicas, start, 10)  # every warm-up call counted
        before = [_calls(server) for server in replicas]
        for _ in range(20):
            values, _ = client.top_k(np.arange(6, dtype=np.float32), 1)
            assert values.tolist() == [5.0]
    assert _spread(replicas, before, 20) == [10, 10]


def test_pick_first_sends_every_call_to_one_address(replicas: list[ServerThread]) -> None:
    before = [_calls(server) for server in replicas]
    target = "ipv4:" + ",".join(server.address for server in replicas)
    with dmlrpc.Client(target, timeout=30, load_balancing="pick_first") as client:
        for _ in range(6):
            client.top_k(np.arange(6, dtype=np.float32), 1)
    assert sorted(_spread(replicas, before, 6)) == [0, 6]


def test_dns_target(replicas: list[ServerThread]) -> None:
    with dmlrpc.Client(f"dns:///localhost:{replicas[0].built.port}", timeout=30) as client:
        values, _ = client.top_k(np.arange(6, dtype=np.float32), 2)
    assert values.tolist() == [5.0, 4.0]


def _states_while_idle(address: str, keepalive: dmlrpc.KeepAlive, idle: float) -> list[str]:
    """Connectivity states of a channel with the SDK's options, through one call and ``idle`` seconds of pings."""
    options = channel_options(retry=None, keepalive=keepalive, load_balancing="pick_first", tls=None, extra=())
    states: list[str] = []
    with grpc.insecure_channel(address, options=options) as channel:
        channel.subscribe(lambda state: states.append(state.name), try_to_connect=True)
        service_pb2_grpc.DirectMLServiceStub(channel).GetCapabilities(service_pb2.GetCapabilitiesRequest(), timeout=10)
        time.sleep(idle)
    return states


def test_keepalive_pings_within_the_server_minimum_keep_the_connection(replicas: list[ServerThread]) -> None:
    tolerant = start_server(keepalive_min_ping_interval_seconds=0.5)
    try:
        states = _states_while_idle(tolerant.address, dmlrpc.KeepAlive(time=1.0, timeout=5.0), idle=3.5)
    finally:
        tolerant.stop()
    assert states[-1] == "READY" and states.count("READY") == 1, states
    # The same pings against the default 10 s minimum: GOAWAY (too_many_pings), and the channel drops to IDLE.
    states = _states_while_idle(replicas[0].address, dmlrpc.KeepAlive(time=1.0, timeout=5.0), idle=3.5)
    assert states[-1] == "IDLE", states


def test_service_config_is_valid_json_naming_the_service() -> None:
    config = json.loads(service_config(dmlrpc.RetryPolicy(), "round_robin"))
    assert config["loadBalancingConfig"] == [{"round_robin": {}}]
    every, pure = config["methodConfig"]
    assert every["name"] == [{"service": "dmlrpc.v1.DirectMLService"}]
    assert every["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE"]
    assert {"service": "dmlrpc.v1.DirectMLService", "method": "Execute"} in pure["name"]
    assert {name["method"] for name in pure["name"]} <= {
        m.name for m in service_pb2.DESCRIPTOR.services_by_name["DirectMLService"].methods
    }
    assert pure["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE", "CANCELLED"]
    options = dict(
        channel_options(retry=None, keepalive=dmlrpc.KeepAlive(), load_balancing="pick_first", tls=None, extra=())
    )
    assert options["grpc.enable_retries"] == 0
    assert options["grpc.keepalive_time_ms"] == 30_000


class _Malformed(service_pb2_grpc.DirectMLServiceServicer):
    """Answers ExecuteStream against the protocol: a chunk before the outputs header."""

    def ExecuteStream(self, request_iterator: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        for _ in request_iterator:
            pass
        yield service_pb2.ExecuteStreamResponse(chunk=service_pb2.TensorChunk(binding=0, data=b"\0" * 8))


def test_a_malformed_stream_answer_is_a_typed_error() -> None:
    # A server that breaks the stream protocol is a server fault, not the caller's ValueError: MalformedResponseError
    # is a DataLossError (DATA_LOSS), and still a ValueError for code that caught the old error.
    import numpy as np

    from dmlrpc import ops

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    service_pb2_grpc.add_DirectMLServiceServicer_to_server(_Malformed(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        call = ops.top_k(np.zeros((1, 4), np.float32), 2)
        with (
            dmlrpc.Client(f"127.0.0.1:{port}", timeout=30) as client,
            pytest.raises(dmlrpc.MalformedResponseError) as info,
        ):
            client.execute(call.operator_desc, list(call.inputs), stream=True)
    finally:
        server.stop(None)
    error = info.value
    assert isinstance(error, dmlrpc.DmlRpcError) and isinstance(error, ValueError)
    assert error.code == grpc.StatusCode.DATA_LOSS and "chunks before the outputs header" in error.message
    assert dmlrpc.errors.DmlRpcError._by_code[grpc.StatusCode.DATA_LOSS] is dmlrpc.errors.DataLossError
