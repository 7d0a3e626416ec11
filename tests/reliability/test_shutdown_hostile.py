"""Class 8, shutdown: SIGTERM with grace G exits within G + 1 s even while a long operator runs and a caller stalls
mid-upload, cancelling what still runs and saying so in the log."""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Callable

import grpc
import pytest

from dmlrpc.v1 import service_pb2, service_pb2_grpc
from tests.reliability.attacks import broadcast_gemm
from tests.reliability.fuzzing import EXECUTE_STREAM
from tests.reliability.hostile import Stalling, half_upload, wait_serving
from tests.reliability.test_metrics_connections import METRICS
from tests.reliability.test_recycling import scrape
from tests.test_cli import LISTENING, ServerProcess, spawn  # noqa: F401 - spawn is a fixture

GRACE = 1.0
#: A GEMM of broadcast scalars, 2.7e11 multiply-adds (several seconds on one core, so the server runs with a raised
#: --max-work): far past the grace period, and one ONNX Runtime node, which RunOptions.terminate cannot stop (it
#: acts between nodes).
SLOW_GEMM = (4096, 16384, 4096)


def _attack(address: str) -> tuple[list[BaseException | None], list[Stalling], list[grpc.Channel]]:
    """A long operator call and a stalled upload in flight; returns their outcomes' slots and what to release."""
    outcomes: list[BaseException | None] = [None, None]
    stall = Stalling(half_upload())
    own = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.insecure_channel(address, own), grpc.insecure_channel(address, own)]
    request = broadcast_gemm(*SLOW_GEMM)
    # NOTE: compiled first, on the connection (so the worker) that runs it: a call compiled before the stop runs
    # within the grace period, while one whose compile ends after it is refused UNAVAILABLE, and nothing the test
    # can watch tells a compile that has just ended from the run that follows it.
    service_pb2_grpc.DirectMLServiceStub(channels[0]).CompileOperator(
        service_pb2.CompileOperatorRequest(operator_desc=request.operator_desc), timeout=60
    )
    # The stalled upload's desc too, on its own connection: its compile would hold a running slot for a moment, which
    # the test would take for the GEMM's and signal before the GEMM had reached its worker (which then refuses it as
    # not run, and cancels nothing: this failed CI once, with two workers).
    start = service_pb2.ExecuteStreamRequest.FromString(stall.messages[0]).start
    service_pb2_grpc.DirectMLServiceStub(channels[1]).CompileOperator(
        service_pb2.CompileOperatorRequest(operator_desc=start.operator_desc, execution_flags=start.execution_flags),
        timeout=60,
    )

    def slow() -> None:
        try:
            service_pb2_grpc.DirectMLServiceStub(channels[0]).Execute(request, timeout=60)
        except grpc.RpcError as error:
            outcomes[0] = error

    def stalled() -> None:
        stream = channels[1].stream_stream(EXECUTE_STREAM, request_serializer=None, response_deserializer=None)
        try:
            list(stream(iter(stall), timeout=60))
        except grpc.RpcError as error:
            outcomes[1] = error

    for target in (slow, stalled):
        threading.Thread(target=target, daemon=True).start()
    assert stall.sent.wait(10)
    return outcomes, [stall], channels


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_exits_within_the_grace_period_cancelling_what_runs(
    spawn: Callable[..., ServerProcess],  # noqa: F811
    workers: int,
) -> None:
    server = spawn(
        *("--port", "0", "--metrics-port", "0", "--provider", "cpu", "--workers", str(workers)),
        *("--worker-threads", "1", "--shutdown-grace-seconds", str(GRACE), "--max-work", str(1 << 40)),
        *("--call-memory-bytes", str(4 << 30)),
    )
    metrics = server.wait_for(METRICS)
    match = server.wait_for(LISTENING)
    assert match is not None and metrics is not None, server.log()
    address = f"127.0.0.1:{match.group(1)}"
    with grpc.insecure_channel(address) as channel:
        wait_serving(channel)
    outcomes, stalls, channels = _attack(address)
    try:
        # The GEMM runs before the signal comes: it holds the only running slot (the stalled upload takes none before
        # its inputs are in, and neither desc needs a compile, which would hold one too).
        deadline = time.monotonic() + 60
        while True:
            if scrape(int(metrics.group(1)))["dmlrpc_inflight_requests"]:
                break
            assert time.monotonic() < deadline, server.log()
            time.sleep(0.05)
        signalled = time.monotonic()
        server.signal(signal.SIGTERM)
        code = server.finish(timeout=60)
        took = time.monotonic() - signalled
    finally:
        for stall in stalls:
            stall.release.set()
        for channel in channels:
            channel.close()
    log = server.log()
    assert code == 0, log
    assert took <= GRACE + 1.0, f"exit {took:.2f} s after SIGTERM with a {GRACE} s grace period\n{log}"
    assert re.search(r"cancell?ing \d+ call", log), log
    assert server.lines[-1].endswith("stopped"), log
    for outcome in outcomes:  # cut off, and told so: never an INTERNAL or UNKNOWN answer
        assert outcome is None or outcome.code() not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
