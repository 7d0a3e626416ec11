"""--workers: several server processes on one port, as real processes over real channels (one TCP each)."""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import sys
import time
from collections.abc import Iterator
from urllib.request import urlopen

import grpc
import numpy as np
import onnxruntime as ort
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

import dmlrpc
from dmlrpc.v1 import service_pb2
from dmlrpc_server.settings import DEFAULT_WORKER_PORTS, SettingsError, default_workers, load_settings
from tests.processes import alive, kill, suspend
from tests.test_cli import LISTENING, ServerProcess

METRICS = re.compile(r"INFO dmlrpc_server\.metrics: metrics on http://127\.0\.0\.1:(\d+)/metrics$")
WORKER_METRICS = re.compile(r"worker metrics \(summed by the supervisor\) at http://127\.0\.0\.1:(\d+)/metrics")
WORKER = re.compile(r"worker (\d+) serving on 127\.0\.0\.1:(\d+) \(pid (\d+)\)")
GRACE_SECONDS = 5.0
#: Every client gets a subchannel pool of its own: channels to one target otherwise share one TCP connection,
#: and SO_REUSEPORT spreads connections over the workers, not calls.
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]


class Workers:
    """A `--workers 2` server: its port, its (summed) metrics port and its workers' pids and metrics ports."""

    def __init__(self, *flags: str) -> None:
        self.process = ServerProcess(
            "--port", "0", "--metrics-port", "0", "--provider", "cpu", "--workers", "2",
            "--shutdown-grace-seconds", str(GRACE_SECONDS), *flags,
        )  # fmt: skip
        metrics = self.process.wait_for(METRICS)
        listening = self.process.wait_for(LISTENING)
        assert metrics is not None and listening is not None, self.process.log()
        self.metrics_port = int(metrics.group(1))
        self.port = int(listening.group(1))
        self.pids = {int(m.group(1)): int(m.group(3)) for m in map(WORKER.search, self.process.lines) if m}
        self.worker_metrics = [int(m.group(1)) for m in map(WORKER_METRICS.search, self.process.lines) if m]
        assert len(self.pids) == 2 and len(self.worker_metrics) == 2, self.process.log()
        #: Worker i on port + i (the default where there is no SO_REUSEPORT: Windows), not all on port.
        ports = flags[flags.index("--worker-ports") + 1] if "--worker-ports" in flags else DEFAULT_WORKER_PORTS
        self.consecutive = ports == "consecutive"

    def worker_port(self, attempt: int) -> int | None:
        """The port of a new connection's ``attempt``-th try to reach every worker: worker i's own port + i where
        ports are consecutive, else the shared port (None), where the kernel spreads connections."""
        return self.port + attempt % 2 if self.consecutive else None

    def client(self, port: int | None = None) -> dmlrpc.Client:
        return dmlrpc.Client(f"127.0.0.1:{port or self.port}", timeout=30, options=OWN_CONNECTION)

    def stop(self) -> int:
        self.process.signal(signal.SIGTERM)
        return self.process.finish(timeout=GRACE_SECONDS + 10)


@pytest.fixture(scope="module")
def workers() -> Iterator[Workers]:
    server = Workers()
    yield server
    server.process.close()


def _serving(port: int, timeout: float = 30.0) -> None:
    """Wait until the worker behind a new connection to ``port`` reports SERVING."""
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=OWN_CONNECTION) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                status = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5).status
            except grpc.RpcError:
                status = health_pb2.HealthCheckResponse.UNKNOWN
            if status == health_pb2.HealthCheckResponse.SERVING:
                return
            assert time.monotonic() < deadline, f"port {port} not SERVING"
            time.sleep(0.05)


Pair = tuple[dmlrpc.Client, dmlrpc.ResidentTensor]


@contextlib.contextmanager
def _one_client_per_worker(server: Workers) -> Iterator[tuple[Pair, Pair]]:
    """New connections until one reached each worker: worker 0's and 1's client, each with a tensor it made."""
    seen: dict[str, tuple[dmlrpc.Client, dmlrpc.ResidentTensor]] = {}
    opened: list[dmlrpc.Client] = []
    try:
        for attempt in range(40):
            client = server.client(server.worker_port(attempt))
            opened.append(client)
            tensor = client.upload(np.arange(4, dtype=np.float32))
            # A restarted worker's handles also name its process (w1r1.): the worker is what counts here.
            seen.setdefault(tensor.handle.split(".", 1)[0].split("r", 1)[0], (client, tensor))
            if len(seen) == 2:
                break
        assert sorted(seen) == ["w0", "w1"], f"40 connections reached only {sorted(seen)}"
        yield seen["w0"], seen["w1"]
    finally:
        for client in opened:
            client.close()


def test_connections_reach_both_workers_and_handles_name_their_worker(workers: Workers) -> None:
    with _one_client_per_worker(workers) as pairs:
        for index, (client, tensor) in enumerate(pairs):
            assert re.fullmatch(rf"w{index}\.[A-Za-z0-9_-]{{22}}", tensor.handle)
            np.testing.assert_array_equal(tensor.numpy(), np.arange(4, dtype=np.float32))
            assert client.get_capabilities().limits.workers == 2


def test_a_handle_on_another_workers_connection_is_failed_precondition(workers: Workers) -> None:
    with _one_client_per_worker(workers) as ((mine, tensor), (other, _)):
        _use_another_workers_handles(mine, tensor, other)


def _use_another_workers_handles(mine: dmlrpc.Client, tensor: dmlrpc.ResidentTensor, other: dmlrpc.Client) -> None:
    with pytest.raises(dmlrpc.errors.FailedPreconditionError) as raised:
        other.read_tensor(tensor)
    message = str(raised.value)
    assert "made by worker 0" in message and "reached worker 1" in message
    assert "on the channel (connection) that created it" in message
    assert "connection affinity" in message and "--workers 1" in message
    np.testing.assert_array_equal(mine.read_tensor(tensor), np.arange(4, dtype=np.float32))

    x = np.arange(4, dtype=np.float32)
    compiled = mine.compile(dmlrpc.ops.element_wise("identity", x).operator_desc)
    assert compiled.handle.startswith("w0.")
    proto = service_pb2.CompiledOperator(
        handle=compiled.handle, input_descs=compiled.input_descs, output_descs=compiled.output_descs
    )
    elsewhere = dmlrpc.CompiledOperator(other, proto)
    with pytest.raises(dmlrpc.errors.FailedPreconditionError, match=r"compiled operator 'w0\..*made by worker 0"):
        elsewhere(x)
    np.testing.assert_array_equal(compiled(x)[0], x)
    # Malformed, unknown or out-of-range handles stay NOT_FOUND.
    for handle in ("nonsense", "w0.short", "w7." + "A" * 22, "w1." + "A" * 22):
        with pytest.raises(dmlrpc.NotFoundError):
            other.read_tensor(dmlrpc.ResidentTensor(other, handle, tensor.desc))


def _requests(port: int, method: str) -> float:
    with urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    total = 0.0
    for family in text_string_to_metric_families(text):
        if family.name == "dmlrpc_requests":
            total += sum(s.value for s in family.samples if s.labels.get("method") == method)
    return total


def test_the_metrics_endpoint_sums_every_worker(workers: Workers) -> None:
    with _one_client_per_worker(workers) as ((first, _), (second, _)):
        before = _requests(workers.metrics_port, "GetCapabilities")
        for _ in range(3):
            first.get_capabilities()
        for _ in range(5):
            second.get_capabilities()
    assert _requests(workers.metrics_port, "GetCapabilities") - before == 8
    each = [_requests(port, "GetCapabilities") for port in workers.worker_metrics]
    assert all(count > 0 for count in each) and sum(each) == before + 8

    with urlopen(f"http://127.0.0.1:{workers.metrics_port}/metrics", timeout=10) as response:
        families = {f.name: f for f in text_string_to_metric_families(response.read().decode())}
    assert families["dmlrpc_workers"].samples[0].value == 2
    assert len(families["dmlrpc_build_info"].samples) == 1  # the same build: reported once, not summed
    assert families["dmlrpc_build_info"].samples[0].value == 1


def test_a_worker_that_dies_is_restarted(workers: Workers) -> None:
    kill(workers.pids[1])
    restarted = workers.process.wait_for(re.compile(r"worker 1 .*restarting it in"))
    assert restarted is not None, workers.process.log()
    again = workers.process.wait_for(WORKER)
    assert again is not None and again.group(1) == "1" and int(again.group(3)) != workers.pids[1]
    _serving(workers.port)
    with _one_client_per_worker(workers):  # both workers serve again
        pass
    with urlopen(f"http://127.0.0.1:{workers.metrics_port}/metrics", timeout=10) as response:
        families = {f.name: f for f in text_string_to_metric_families(response.read().decode())}
    assert families["dmlrpc_worker_restarts"].samples[0].value == 1
    assert families["dmlrpc_workers"].samples[0].value == 2


@pytest.fixture
def fresh() -> Iterator[Workers]:
    """A server of its own for a test that stops it."""
    server = Workers()
    yield server
    server.process.close()


def test_sigterm_stops_every_worker_and_exits_0(fresh: Workers) -> None:
    _serving(fresh.port)
    started = time.monotonic()
    assert fresh.stop() == 0, fresh.process.log()
    assert time.monotonic() - started < GRACE_SECONDS
    assert not any(alive(pid) for pid in fresh.pids.values())


def test_workers_exit_when_the_supervisor_dies(fresh: Workers) -> None:
    server = fresh
    server.process.process.kill()
    server.process.finish()
    deadline = time.monotonic() + GRACE_SECONDS + 10
    running = set(server.pids.values())
    while running and time.monotonic() < deadline:
        running = {pid for pid in running if alive(pid)}
        time.sleep(0.1)
    assert not running, f"workers {running} outlived their supervisor"


@pytest.mark.skipif(sys.platform != "win32", reason="a job object is Windows': a Linux worker ends on its stdin's end")
def test_a_worker_that_cannot_see_its_supervisor_die_ends_with_it(fresh: Workers) -> None:
    # A worker runs no code while suspended, as one that a killed supervisor left mid-start under Wine: only the
    # supervisor's job object ends it.
    server = fresh
    suspend(server.pids[1])
    server.process.process.kill()
    server.process.finish()
    deadline = time.monotonic() + GRACE_SECONDS + 10
    while alive(server.pids[1]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(server.pids[1]), "a suspended worker outlived its supervisor"


def test_consecutive_ports_put_worker_i_on_port_plus_i() -> None:
    server = Workers("--worker-ports", "consecutive")
    try:
        for offset in (0, 1):
            _serving(server.port + offset)
        # One channel over both addresses, round robin: the SDK's way to reach every worker.
        target = f"ipv4:127.0.0.1:{server.port},127.0.0.1:{server.port + 1}"
        with dmlrpc.Client(target, timeout=30, load_balancing="round_robin") as client:
            prefixes = {client.upload(np.zeros(2, np.float32)).handle[:3] for _ in range(6)}
        assert prefixes == {"w0.", "w1."}
        assert server.stop() == 0, server.process.log()
    finally:
        server.process.close()


def test_relayed_workers_serve_on_one_port_through_the_supervisor() -> None:
    # The default where there is no SO_REUSEPORT (Windows): the supervisor listens on --port and gives each new
    # connection to the next worker; a worker's own port is on the loopback interface only.
    server = Workers("--worker-ports", "relayed")
    try:
        own = {int(m.group(2)) for m in map(WORKER.search, server.process.lines) if m}
        assert len(own) == 2 and server.port not in own, server.process.log()
        with _one_client_per_worker(server) as pairs:
            for index, (_, tensor) in enumerate(pairs):
                assert tensor.handle.startswith(f"w{index}.")
                np.testing.assert_array_equal(tensor.numpy(), np.arange(4, dtype=np.float32))
        assert server.stop() == 0, server.process.log()
    finally:
        server.process.close()


@pytest.mark.skipif(
    "DmlExecutionProvider" in ort.get_available_providers(), reason="this ONNX Runtime build has DirectML"
)
def test_workers_that_cannot_start_give_up_with_the_workers_error() -> None:
    process = ServerProcess("--port", "0", "--metrics-port", "0", "--provider", "directml", "--workers", "2")
    try:
        assert process.finish(timeout=60) == 2, process.log()
    finally:
        process.close()
    log = process.log()
    assert "could not start: execution provider DmlExecutionProvider is not available" in log and "giving up" in log
    assert "listening on" not in log and "Traceback" not in log


def test_shared_ports_without_so_reuseport_are_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(socket, "SO_REUSEPORT", raising=False)  # as on Windows
    with pytest.raises(SettingsError, match=r"needs SO_REUSEPORT.*--worker-ports relayed"):
        load_settings(["--workers", "2", "--worker-ports", "shared"], environ={})
    assert load_settings(["--workers", "2", "--worker-ports", "consecutive"], environ={}).worker_processes == 2


def test_the_default_is_one_worker_per_cpu_up_to_8_with_the_cpu_provider_and_shared_ports() -> None:
    assert [default_workers(cpus, gpu=False, shared_port=True) for cpus in (1, 2, 4, 16)] == [1, 2, 4, 8]
    assert default_workers(16, gpu=True, shared_port=True) == 1
    assert default_workers(16, gpu=False, shared_port=False) == 1
    assert load_settings(["--provider", "cuda"], environ={}).worker_processes == 1
    assert load_settings(["--workers", "3"], environ={}).worker_processes == 3


def test_a_lone_server_reports_one_worker_and_unprefixed_handles(client: dmlrpc.Client) -> None:
    assert client.get_capabilities().limits.workers == 1
    with client.upload(np.zeros(2, np.float32)) as tensor:
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", tensor.handle)
    # Without workers a prefixed handle is just unknown.
    with pytest.raises(dmlrpc.NotFoundError):
        client.read_tensor(dmlrpc.ResidentTensor(client, "w1." + "A" * 22, tensor.desc))
