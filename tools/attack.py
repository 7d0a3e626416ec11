"""Attack suite: every hostile-caller class of docs/reliability.md against server subprocesses (default, tight
admission, token auth), with the server's peak RSS, health latency and any forbidden status (INTERNAL, UNKNOWN).

    python tools/attack.py                      # all three configurations
    python tools/attack.py --config tight       # one

Exit status 1 when a class got a forbidden status, health answered slower than 0.2 s, a valid request failed
afterwards, the peak RSS exceeded the baseline by more than 1 GiB, or shutdown took longer than grace + 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dmlrpc.v1 import service_pb2, service_pb2_grpc, tensor_pb2  # noqa: E402
from tests.reliability.attacks import (  # noqa: E402
    FORBIDDEN,
    assert_serves,
    broadcast_constant_graph,
    broadcast_gemm,
    broadcast_identity_request,
    broadcast_max_pooling,
    stream_messages,
)
from tests.test_cli import LISTENING, ServerProcess  # noqa: E402

MiB = 1 << 20
TOKEN = "attack-suite-token"
CONFIGS: dict[str, list[str]] = {
    "default": [],
    "tight": [
        "--workers",
        "1",
        "--compile-cache-bytes",
        str(64 * MiB),
        "--buffer-pool-bytes",
        str(64 * MiB),
        "--heap-retain-bytes",
        str(64 * MiB),
        "--compiled-bytes-total",
        str(128 * MiB),
        "--max-concurrent-requests",
        "4",
        "--max-queue-depth",
        "8",
        "--call-memory-bytes",
        str(256 * MiB),
        "--call-memory-wait-seconds",
        "2",
        "--resident-bytes-total",
        str(128 * MiB),
        "--compiled-bytes-per-caller",
        str(64 * MiB),
        "--max-work",
        str(1 << 32),
    ],
    "token": ["--auth-token", TOKEN],
}
METRICS = __import__("re").compile(r"metrics on http://127\.0\.0\.1:(\d+)/metrics")
#: The measured peak may exceed the server's RSS at rest by at most this (docs/reliability.md, "Threats").
RSS_ALLOWANCE = 1024 * MiB
GRACE_SECONDS = 3.0


@dataclass
class Outcome:
    """What one class of attack got: statuses, the slowest health answer, and whether the server still served."""

    name: str
    statuses: Counter[str] = field(default_factory=Counter)
    health_ms: float = 0.0
    health_failures: int = 0
    serves: bool = True
    note: str = ""

    @property
    def forbidden(self) -> int:
        return sum(count for code, count in self.statuses.items() if code in {c.name for c in FORBIDDEN})

    @property
    def ok(self) -> bool:
        return not self.forbidden and self.serves and self.health_ms <= 200 and not self.health_failures


#: The health watch runs in a process of its own: in the attacker's process its answers would wait for the
#: attacker's threads (the interpreter lock), which says nothing about the server.
_WATCH = """
import json, sys, threading, time
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
slowest, checks, failures = 0.0, 0, 0
with grpc.insecure_channel(sys.argv[1]) as channel:
    stub = health_pb2_grpc.HealthStub(channel)
    stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
    print("ready", flush=True)
    while not stop.is_set():
        started = time.perf_counter()
        try:
            if stub.Check(health_pb2.HealthCheckRequest(), timeout=5).status != 1:
                failures += 1
        except grpc.RpcError:
            failures += 1
        slowest = max(slowest, time.perf_counter() - started)
        checks += 1
        stop.wait(0.05)
print(json.dumps({"slowest": slowest, "checks": checks, "failures": failures}), flush=True)
"""


class ProcessHealthWatch:
    """``HealthWatch`` from a process of its own: the slowest health answer and the failures during the block."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.slowest = 0.0
        self.failures = 0

    def __enter__(self) -> ProcessHealthWatch:
        self._process = subprocess.Popen(
            [sys.executable, "-c", _WATCH, self.address], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self._process.stdout is not None
        self._process.stdout.readline()  # "ready"
        return self

    def __exit__(self, *exc: object) -> None:
        output, _ = self._process.communicate("", timeout=30)
        report = json.loads(output.strip().splitlines()[-1])
        self.slowest, self.failures = report["slowest"], report["failures"]


class Target:
    """A server subprocess, its address and credentials, and its process tree's RSS (sampled every 20 ms)."""

    def __init__(self, config: str) -> None:
        flags = ["--port", "0", "--metrics-port", "0", "--provider", "cpu"]
        flags += ["--shutdown-grace-seconds", str(GRACE_SECONDS), *CONFIGS[config]]
        self.config = config
        self.server = ServerProcess(*flags)
        match = self.server.wait_for(LISTENING)
        if match is None:
            raise RuntimeError(self.server.log())
        self.address = f"127.0.0.1:{match.group(1)}"
        metrics = next((METRICS.search(line) for line in self.server.lines if METRICS.search(line)), None)
        self.metrics_port = int(metrics.group(1)) if metrics else None
        self.metadata = (("authorization", f"Bearer {TOKEN}"),) if config == "token" else ()
        self.pid = self.server.process.pid
        self.peak = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._wait_ready()
        time.sleep(1.0)
        self.baseline = tree_rss(self.pid)
        self._sampler.start()

    def _wait_ready(self) -> None:
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        with grpc.insecure_channel(self.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if stub.Check(health_pb2.HealthCheckRequest(), timeout=5).status == 1:
                        return
                except grpc.RpcError:
                    pass
                time.sleep(0.1)
        raise RuntimeError("the server did not become ready")

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            self._stop.wait(0.02)

    def stub(self, channel: grpc.Channel) -> service_pb2_grpc.DirectMLServiceStub:
        return service_pb2_grpc.DirectMLServiceStub(channel)

    def channel(self) -> grpc.Channel:
        return grpc.insecure_channel(self.address, options=[("grpc.max_receive_message_length", 1 << 30)])

    def stop(self) -> float:
        """SIGTERM the server; the seconds until it exited."""
        self._stop.set()
        started = time.monotonic()
        self.server.process.send_signal(signal.SIGTERM)
        try:
            self.server.process.wait(timeout=GRACE_SECONDS + 30)
        except Exception:
            self.server.process.kill()
        seconds = time.monotonic() - started
        self.server.close()
        return seconds


def design_bound(config: str) -> int:
    """What the settings allow a server to hold beyond its baseline: per worker process, the call memory, the
    compile cache, free pooled buffers and free heap; once, the server-wide totals of compiled and resident bytes."""
    from dmlrpc_server.settings import load_settings

    settings = load_settings(["--provider", "cpu", *CONFIGS[config]], environ={})
    return settings.budgets(settings.worker_processes).bound


def tree_rss(pid: int) -> int:
    """The summed VmRSS of ``pid`` and its descendants (the supervisor and its workers)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        stack.extend(children.get(current, []))
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


_COUNTING = threading.Lock()


def call(outcome: Outcome, function: Callable[[], object]) -> None:
    """Run one attacking call and count its status (from any thread)."""
    try:
        function()
        code = "OK"
    except grpc.RpcError as error:
        code = error.code().name
    with _COUNTING:
        outcome.statuses[code] += 1


def many(outcome: Outcome, functions: list[Callable[[], object]], threads: int = 16) -> None:
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda function: call(outcome, function), functions))


# -- the classes -------------------------------------------------------------------------------------------------


def work(target: Target, outcome: Outcome) -> None:
    """1. Work that dwarfs its bytes: GEMMs of broadcast scalars, 5e11 multiply-adds from 8 bytes each."""
    with target.channel() as channel:
        stub = target.stub(channel)
        requests = [broadcast_gemm(4096, 32768 + i, 4096) for i in range(24)]
        many(outcome, [lambda r=r: stub.Execute(r, timeout=30, metadata=target.metadata) for r in requests])


def intermediates(target: Target, outcome: Outcome) -> None:
    """2. Intermediates without a limit: poolings over broadcasts whose gathered windows would be 40+ GB."""
    with target.channel() as channel:
        stub = target.stub(channel)
        requests = [broadcast_max_pooling(4096, (1, 800 + i)) for i in range(16)]
        many(outcome, [lambda r=r: stub.Execute(r, timeout=30, metadata=target.metadata) for r in requests])


def memory_after(target: Target, outcome: Outcome) -> None:
    """3. Memory that outlives the call: ten distinct 60-byte descs with 64 MiB outputs, read by their callers."""
    with target.channel() as channel:
        stub = target.stub(channel)
        requests = [broadcast_identity_request((16 << 20) + 1024 * i) for i in range(10)]
        many(outcome, [lambda r=r: stub.Execute(r, timeout=60, metadata=target.metadata) for r in requests], 2)
    time.sleep(1.0)
    outcome.note = f"RSS at rest after: {(tree_rss(target.pid) - target.baseline) / MiB:+.0f} MiB"


def staged(target: Target, outcome: Outcome) -> None:
    """4. Staged bytes: 40 ExecuteStreams with 64 MiB outputs and ReadTensors of 64 MiB, never read."""
    request = broadcast_identity_request(16 << 20)
    channels = [target.channel() for _ in range(8)]
    held: list[Iterator[object]] = []
    lock = threading.Lock()

    def open_stream(index: int) -> None:
        responses = target.stub(channels[index % 8]).ExecuteStream(
            stream_messages(request), timeout=60, metadata=target.metadata
        )
        next(responses)  # the header: the output exists and waits to be read
        with lock:
            held.append(responses)

    def open_read(index: int) -> None:
        stub = target.stub(channels[index % 8])
        desc = tensor_pb2.TensorDesc(
            buffer=tensor_pb2.BufferTensorDesc(
                data_type=tensor_pb2.TENSOR_DATA_TYPE_FLOAT32, sizes=[16 << 20], total_tensor_size_in_bytes=64 * MiB
            )
        )
        start = service_pb2.CreateTensorRequest(start=service_pb2.CreateTensorStart(desc=desc, uninitialized=True))
        tensor = stub.CreateTensor(iter([start]), timeout=30, metadata=target.metadata)
        responses = stub.ReadTensor(
            service_pb2.ReadTensorRequest(handle=tensor.handle), timeout=60, metadata=target.metadata
        )
        next(responses)
        with lock:
            held.append(responses)

    try:
        many(outcome, [lambda i=i: open_stream(i) for i in range(40)] + [lambda i=i: open_read(i) for i in range(10)])
        time.sleep(1.0)
    finally:
        for responses in held:
            responses.cancel()  # type: ignore[attr-defined]
        for channel in channels:
            channel.close()


def constants(target: Target, outcome: Outcome) -> None:
    """5. Constants that escape quotas: 78-byte CompileGraphs whose constant becomes 64 MiB, 20 client ids."""
    desc = broadcast_constant_graph(16 << 20)
    with target.channel() as channel:
        stub = target.stub(channel)

        def compile_one(index: int) -> None:
            metadata = (*target.metadata, ("dmlrpc-client-id", f"attacker-{index}"))
            stub.CompileGraph(service_pb2.CompileGraphRequest(graph_desc=desc), timeout=60, metadata=metadata)

        many(outcome, [lambda i=i: compile_one(i) for i in range(20)], 4)


def identity(target: Target, outcome: Outcome) -> None:
    """6. Identity: 64 client ids (and with a token, header spellings) each creating 64 MiB resident tensors."""
    desc = tensor_pb2.TensorDesc(
        buffer=tensor_pb2.BufferTensorDesc(
            data_type=tensor_pb2.TENSOR_DATA_TYPE_FLOAT32, sizes=[16 << 20], total_tensor_size_in_bytes=64 * MiB
        )
    )
    start = service_pb2.CreateTensorRequest(start=service_pb2.CreateTensorStart(desc=desc, uninitialized=True))
    with target.channel() as channel:
        stub = target.stub(channel)

        def create(index: int) -> None:
            metadata: tuple[tuple[str, str], ...] = (("dmlrpc-client-id", f"identity-{index}"),)
            if target.metadata:
                scheme = ("Bearer", "bearer", "BEARER")[index % 3]
                metadata += (("authorization", f"{scheme} {TOKEN}"),)
            stub.CreateTensor(iter([start]), timeout=30, metadata=metadata)

        many(outcome, [lambda i=i: create(i) for i in range(64)], 8)


def slow_callers(target: Target, outcome: Outcome) -> None:
    """7. Slow and idle callers: streams that send half their bytes and stall, and 500 half-open connections to
    the metrics endpoint."""
    request = broadcast_identity_request(4)
    data = np.zeros(1 << 20, np.float32).tobytes()
    stalled = threading.Event()

    def half_then_stall() -> Iterator[service_pb2.ExecuteStreamRequest]:
        yield service_pb2.ExecuteStreamRequest(
            start=service_pb2.ExecuteStreamStart(operator_desc=request.operator_desc, input_bytes=[len(data) * 2])
        )
        yield service_pb2.ExecuteStreamRequest(chunk=service_pb2.TensorChunk(binding=0, data=data))
        stalled.wait(60)

    sockets: list[socket.socket] = []
    with target.channel() as channel:
        stub = target.stub(channel)
        calls = [stub.ExecuteStream(half_then_stall(), timeout=30, metadata=target.metadata) for _ in range(16)]
        if target.metrics_port is not None:
            for _ in range(500):
                try:
                    sockets.append(socket.create_connection(("127.0.0.1", target.metrics_port), timeout=2))
                except OSError:
                    outcome.statuses["METRICS_CONNECT_REFUSED"] += 1
        time.sleep(3.0)
        assert_serves_with(target, outcome)
        stalled.set()
        for pending in calls:
            call(outcome, lambda pending=pending: list(pending))  # type: ignore[misc]
    for sock in sockets:
        sock.close()


def reflection(target: Target, outcome: Outcome) -> None:
    """9. Reflection: a v1 client lists the services."""
    from grpc_reflection.v1alpha import reflection_pb2

    with target.channel() as channel:
        method = channel.stream_stream(
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )

        def list_services() -> None:
            request = reflection_pb2.ServerReflectionRequest(list_services="")
            responses = list(method(iter([request]), timeout=10, metadata=target.metadata))
            names = {service.name for service in responses[0].list_services_response.service}
            if "dmlrpc.v1.DirectMLService" not in names:
                raise RuntimeError(f"v1 reflection listed {sorted(names)}")

        call(outcome, list_services)


def assert_serves_with(target: Target, outcome: Outcome) -> None:
    try:
        if target.metadata:
            import dmlrpc

            with dmlrpc.Client(target.address, token=TOKEN) as client:
                data = np.arange(12, dtype=np.float32).reshape(3, 4)
                from dmlrpc import ops

                call_ = ops.top_k(data, 2)
                values, _ = client.execute(call_.operator_desc, list(call_.inputs), timeout=30)
                assert np.array_equal(np.asarray(values), data[:, ::-1][:, :2])
        else:
            assert_serves(target.address)
    except Exception as error:
        outcome.serves = False
        outcome.note += f" valid request failed: {error}"


CLASSES: list[tuple[str, Callable[[Target, Outcome], None]]] = [
    ("1 work", work),
    ("2 intermediates", intermediates),
    ("3 memory after calls", memory_after),
    ("4 staged bytes", staged),
    ("5 constants", constants),
    ("6 identity", identity),
    ("7 slow callers", slow_callers),
    ("9 reflection v1", reflection),
]


def run(config: str) -> bool:
    target = Target(config)
    print(f"\n== {config}: {' '.join(CONFIGS[config]) or '(defaults)'}; baseline RSS {target.baseline / MiB:.0f} MiB")
    healthy = True
    try:
        for name, attack in CLASSES:
            outcome = Outcome(name)
            with ProcessHealthWatch(target.address) as watch:
                try:
                    attack(target, outcome)
                except Exception as error:
                    outcome.note += f" attack raised {type(error).__name__}: {error}"
            outcome.health_ms = watch.slowest * 1e3
            outcome.health_failures = watch.failures
            assert_serves_with(target, outcome)
            healthy &= outcome.ok
            statuses = ", ".join(f"{code} {count}" for code, count in sorted(outcome.statuses.items()))
            print(
                f"  {'ok  ' if outcome.ok else 'FAIL'} {name:22} health max {outcome.health_ms:6.1f} ms  "
                f"peak {(target.peak - target.baseline) / MiB:+7.0f} MiB  [{statuses}] {outcome.note}",
                flush=True,
            )
        # 8. Shutdown: SIGTERM while a call several seconds long runs.
        with target.channel() as channel:
            stub = target.stub(channel)
            pending = stub.Execute.future(broadcast_gemm(4096, 2048, 4096), timeout=60, metadata=target.metadata)
            time.sleep(0.5)
            peak = target.peak
            seconds = target.stop()
            code = pending.exception().code().name if pending.exception() else "OK"  # type: ignore[union-attr]
        in_time = seconds <= GRACE_SECONDS + 1
        healthy &= in_time and code not in {c.name for c in FORBIDDEN}
        print(
            f"  {'ok  ' if in_time else 'FAIL'} {'8 shutdown':22} SIGTERM to exit {seconds:.2f} s "
            f"(grace {GRACE_SECONDS:.0f} s); the call in flight got {code}"
        )
    finally:
        if target.server.process.poll() is None:
            target.stop()
    growth = peak - target.baseline
    within = growth <= RSS_ALLOWANCE
    bound = design_bound(config)
    print(
        f"  peak RSS {peak / MiB:.0f} MiB = baseline {target.baseline / MiB:.0f} MiB {growth / MiB:+.0f} MiB "
        f"({'within' if within else 'OVER'} baseline + {RSS_ALLOWANCE / MiB:.0f} MiB; the settings allow "
        f"+{bound / MiB:.0f} MiB)"
    )
    return healthy and within


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", choices=[*CONFIGS, "all"], default="all")
    args = parser.parse_args()
    configs = list(CONFIGS) if args.config == "all" else [args.config]
    results = {config: run(config) for config in configs}
    print()
    for config, passed in results.items():
        print(f"{config:8} {'held' if passed else 'FAILED'}")
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
