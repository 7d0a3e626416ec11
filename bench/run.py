"""Benchmark suite of dmlrpc: each scenario's figure beside a baseline measured in the same run, and their ratio."""

from __future__ import annotations

import argparse
import base64
import inspect
import os
import random
import shlex
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import procs
import report
from report import Row

from dmlrpc import ops
from dmlrpc._base import prepare_execute

MiB = 1 << 20
SCENARIOS = ("tiny", "stream", "add", "workers", "heavy", "large", "inproc", "cache", "huge")
INFLIGHT = (1, 8, 64)
#: Server flags of the batching variants (only used when the build has dynamic batching).
BATCH_OFF = ["--max-batch-size", "1"]
BATCH_ON = ["--max-batch-size", "64"]
STREAM_CHUNK = 4 * MiB
#: ExecuteMany load: items per request message and items outstanding per stream.
STREAM_ITEMS_PER_MESSAGE = 64
STREAM_WINDOW = 512
#: Channels (TCP connections) of the workers scenario, so that a --workers N server sees several.
WORKER_CHANNELS = 8
#: Health checks beside a heavy request must answer within this many seconds.
LIVENESS_LIMIT_S = 0.2


def batching_available() -> bool:
    from dmlrpc_server.settings import ServerSettings

    return "max_batch_size" in ServerSettings.model_fields


def workers_available() -> bool:
    from dmlrpc_server.settings import ServerSettings

    return "workers" in ServerSettings.model_fields


def default_workers() -> str:
    """The server processes a server without ``--workers`` runs on this host, as text."""
    return str(procs.worker_count([]))


def execute_many_available() -> bool:
    from dmlrpc_server.servicer import DirectMLServicer

    return "ExecuteMany" in vars(DirectMLServicer)


def streaming_available() -> bool:
    import dmlrpc

    return "stream_threshold_bytes" in inspect.signature(dmlrpc.Client).parameters


@dataclass(frozen=True)
class Config:
    duration: float  # seconds of one tiny-op load run
    reps: int  # interleaved repetitions of each measurement
    large_calls: int  # round trips of the large payload per repetition
    cache_descs: int  # distinct descs of the cold-compile measurement, per op
    inproc_number: int  # in-process calls per timing repeat


FULL = Config(duration=1.5, reps=3, large_calls=2, cache_descs=8, inproc_number=2000)
QUICK = Config(duration=0.4, reps=1, large_calls=1, cache_descs=3, inproc_number=300)


def tiny_calls() -> dict[str, ops.Call]:
    """The DirectML docs' examples: TOP_K1 of [1,1,3,4] (K=2, axis 3) and SCATTER_ND of [8] with 4 updates."""
    x = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], np.float32)
    return {
        "top-k": ops.top_k(x, k=2, axis=3),
        "scatter-ND": ops.scatter_nd(
            np.arange(1, 9, dtype=np.float32), np.array([[4], [3], [1], [7]]), np.array([9, 10, 11, 12], np.float32)
        ),
    }


def add_call(rows: int = 256, columns: int = 1024) -> ops.Call:
    """ELEMENT_WISE_ADD of two [rows, columns] FLOAT32 (2 MiB in, 1 MiB out at the default size)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, columns), dtype=np.float32)
    b = rng.standard_normal((rows, columns), dtype=np.float32)
    return ops.element_wise("add", a, b)


def heavy_call(m: int = 1024, k: int = 8192) -> ops.Call:
    """Much work in few request bytes: GEMM of [m, k] x [k, m] FLOAT32 whose inputs are one element each,
    broadcast by zero strides (a ~100-byte request, 2 m k m flops, an [m, m] output)."""
    from dmlrpc.codec import tensor_desc
    from dmlrpc.v1 import operators_pb2

    gemm = operators_pb2.GemmOperatorDesc(
        a_tensor=tensor_desc((np.float32, [1, 1, m, k]), [0, 0, 0, 0]),
        b_tensor=tensor_desc((np.float32, [1, 1, k, m]), [0, 0, 0, 0]),
        output_tensor=tensor_desc((np.float32, [1, 1, m, m])),
        alpha=1.0,
        beta=0.0,
    )
    one = np.ones((1, 1, 1, 1), np.float32)
    inputs = (np.broadcast_to(one, (1, 1, m, k)), np.broadcast_to(one, (1, 1, k, m)), None)
    return ops.Call(operators_pb2.OperatorDesc(gemm=gemm), inputs)


def payload(call: ops.Call) -> str:
    """The serialized ExecuteRequest, base64 for the load generator's job line."""
    request = prepare_execute(call.operator_desc, call.inputs).request
    return base64.b64encode(request.SerializeToString()).decode()


def median(values: list[float]) -> float:
    return float(statistics.median(values))


class Suite:
    def __init__(self, config: Config, *, quiet_wait: float, processes: int = 1) -> None:
        self.config = config
        self.processes = processes
        self.quiet_wait = quiet_wait
        self.rows: list[Row] = []
        self.raw: dict[str, Any] = {}
        self.noisy_runs = 0
        self.runs = 0
        self.tiny_p50: dict[str, float] = {}

    # -- plumbing -------------------------------------------------------------------------------------------------

    def add(self, row: Row) -> None:
        self.rows.append(row)
        report.print_row(row)

    def quiet(self) -> None:
        self.runs += 1
        if not procs.wait_quiet(self.quiet_wait):
            self.noisy_runs += 1

    @contextmanager
    def children(self, *started: procs.Server | procs.Loadgen | procs.LoadgenPool) -> Iterator[None]:
        try:
            for child in started:
                if isinstance(child, procs.Server):
                    child.wait_ready()
            yield
        finally:
            for child in started:
                child.stop()

    # -- tiny ops ---------------------------------------------------------------------------------------------------

    def tiny(self) -> None:
        print("\n== tiny ops: N in flight, pre-serialized request bytes; ours vs a bare gRPC echo of the same bytes")
        batching = batching_available()
        servers = {
            "ours": procs.our_server("ours", BATCH_OFF if batching else []),
            "echo-aio": procs.echo_server("aio"),
            "echo-sync": procs.echo_server("sync"),
        }
        if batching:
            servers["ours-batch"] = procs.our_server("ours-batch", BATCH_ON)
        loadgen = procs.Loadgen()
        calls = tiny_calls()
        payloads = {name: payload(call) for name, call in calls.items()}
        results: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
        with self.children(*servers.values(), loadgen):
            names = list(servers)
            pids = {name: server.pids() for name, server in servers.items()}  # with the workers of --workers N
            for rep in range(self.config.reps):
                for inflight in INFLIGHT:
                    for op in calls:
                        order = names[rep % len(names) :] + names[: rep % len(names)]
                        if inflight == 1 and op == "top-k":
                            order.append("sdk")
                        for name in order:
                            self.quiet()
                            job: dict[str, Any]
                            if name == "sdk":
                                job = {"kind": "sdk", "target": servers["ours"].target}
                                job["duration"] = self.config.duration
                            else:
                                job = {
                                    "kind": "grpc",
                                    "target": servers[name].target,
                                    "server_pids": pids[name],
                                    "payload_b64": payloads[op],
                                    "inflight": inflight,
                                    "duration": self.config.duration,
                                }
                            results[(op, inflight, name)].append(loadgen.run(job))
        self.raw["tiny"] = {f"{op}@{n}/{name}": runs for (op, n, name), runs in results.items()}

        def figure(op: str, inflight: int, name: str, key: str) -> float | None:
            runs = results.get((op, inflight, name))
            return median([r[key] for r in runs]) if runs else None

        variants = [("ours", "batching off" if batching else "")]
        variants.append(("ours-batch", "batching on") if batching else ("", ""))
        for op in calls:
            for inflight in INFLIGHT:
                scenario = f"{op} @{inflight} in flight"
                for name, note in variants:
                    if not name:
                        continue
                    p50 = figure(op, inflight, name, "p50_us")
                    echo_p50 = figure(op, inflight, "echo-aio", "p50_us")
                    goal = ("<=", 1.10) if inflight == 1 else None
                    self.add(Row(scenario, "p50 latency", p50, echo_p50, "aio echo", "µs", goal, note))
                    self.add(
                        Row(
                            scenario, "p99 latency", figure(op, inflight, name, "p99_us"),
                            figure(op, inflight, "echo-aio", "p99_us"), "aio echo", "µs", None, note,
                        )
                    )  # fmt: skip
                    goal = (">=", 1.0) if inflight == 64 else None
                    self.add(
                        Row(
                            scenario, "throughput", figure(op, inflight, name, "rps"),
                            figure(op, inflight, "echo-aio", "rps"), "aio echo", "req/s", goal, note,
                        )
                    )  # fmt: skip
                    self.add(
                        Row(
                            scenario, "server CPU per call", figure(op, inflight, name, "server_cpu_us_per_call"),
                            figure(op, inflight, "echo-aio", "server_cpu_us_per_call"), "aio echo", "µs", None, note,
                        )
                    )  # fmt: skip
                    if inflight == 1 and name == "ours":
                        self.tiny_p50[op] = p50 or 0.0
                if not batching:
                    goal = (">=", 2.0) if inflight == 64 else None
                    self.add(Row(scenario, "batching on vs off", None, goal=goal, note=report.NA))
                else:
                    self.add(
                        Row(
                            scenario, "batching on vs off, req/s", figure(op, inflight, "ours-batch", "rps"),
                            figure(op, inflight, "ours", "rps"), "batching off", "req/s",
                            (">=", 2.0) if inflight == 64 else None,
                        )
                    )  # fmt: skip
                # The server model, chosen by measurement: a thread-pool (sync) echo against the aio echo.
                self.add(
                    Row(
                        scenario, "sync echo throughput", figure(op, inflight, "echo-sync", "rps"),
                        figure(op, inflight, "echo-aio", "rps"), "aio echo", "req/s",
                    )
                )  # fmt: skip
        sdk = figure("top-k", 1, "sdk", "p50_us")
        self.add(
            Row(
                "top-k @1, SDK Client.top_k", "p50 latency", sdk, figure("top-k", 1, "ours", "p50_us"),
                "pre-serialized bytes", "µs", note="numpy -> desc -> request -> response -> numpy",
            )
        )  # fmt: skip
        self.add(
            Row("top-k @1, SDK Client.top_k", "p50 latency vs echo", sdk, figure("top-k", 1, "echo-aio", "p50_us"),
                "aio echo", "µs")
        )  # fmt: skip

    def interleaved(
        self, servers: dict[str, procs.Server], loadgen: procs.Loadgen | procs.LoadgenPool,
        variants: dict[str, tuple[str, dict[str, Any]]],
    ) -> dict[str, list[dict[str, Any]]]:  # fmt: skip
        """Runs each variant (server name, job) ``reps`` times, the order rotating every repetition.

        A variant whose server lacks the job's method (UNIMPLEMENTED) is not run again and has no results.
        """
        results: dict[str, list[dict[str, Any]]] = defaultdict(list)
        missing: set[str] = set()
        names = list(variants)
        pids = {name: server.pids() for name, server in servers.items()}
        for rep in range(self.config.reps):
            for name in names[rep % len(names) :] + names[: rep % len(names)]:
                if name in missing:
                    continue
                server, job = variants[name]
                job = {"target": servers[server].target, "server_pids": pids[server], **job}
                self.quiet()
                result = loadgen.run(job)
                if "unimplemented" in result:
                    missing.add(name)
                    continue
                results[name].append(result)
        return results

    # -- ExecuteMany ------------------------------------------------------------------------------------------------

    def stream(self) -> None:
        per_message, window = STREAM_ITEMS_PER_MESSAGE, STREAM_WINDOW
        print(f"\n== ExecuteMany: tiny top-k, {per_message} items a message, {window} items in flight a stream; "
              "vs the bare echo's unary calls at 64 in flight")  # fmt: skip
        servers = {"ours": procs.our_server("ours"), "echo-aio": procs.echo_server("aio")}
        loadgen = procs.LoadgenPool(self.processes)
        top_k = payload(tiny_calls()["top-k"])
        duration = self.config.duration
        unary = {"kind": "grpc", "payload_b64": top_k, "inflight": 64, "duration": duration}
        many = {"kind": "execute_many", "payload_b64": top_k, "duration": duration}
        many.update(items_per_message=per_message, inflight=window, streams=1)
        variants = {"stream": ("ours", many), "unary": ("ours", unary), "echo": ("echo-aio", unary)}
        with self.children(*servers.values(), loadgen):
            results = self.interleaved(servers, loadgen, variants)
        self.raw["stream"] = dict(results)

        def figure(name: str, key: str) -> float | None:
            runs = results.get(name)
            return median([r[key] for r in runs]) if runs else None

        scenario = f"top-k, ExecuteMany ({per_message}/msg, window {window})"
        stream_rps = figure("stream", "rps")
        if stream_rps is None:
            self.add(Row(scenario, "items/s vs echo unary @64", None, goal=(">=", 3.0), note=report.NA))
            return
        errors = sum(r["errors"] for r in results["stream"])
        note = f"{errors} item errors" if errors else ""
        self.add(
            Row(scenario, "items/s vs echo unary @64", stream_rps, figure("echo", "rps"), "aio echo, unary @64",
                "req/s", (">=", 3.0), note)
        )  # fmt: skip
        self.add(
            Row(scenario, "items/s vs our unary @64", stream_rps, figure("unary", "rps"), "ours, unary @64", "req/s")
        )  # fmt: skip
        self.add(
            Row(scenario, "p50 item latency", figure("stream", "p50_us"), figure("echo", "p50_us"),
                "aio echo, unary @64", "µs", note="message sent -> result received")
        )  # fmt: skip
        self.add(
            Row(scenario, "server CPU per item", figure("stream", "server_cpu_us_per_call"),
                figure("echo", "server_cpu_us_per_call"), "aio echo, unary @64", "µs")
        )  # fmt: skip

    # -- medium element-wise add ------------------------------------------------------------------------------------

    def add_scenario(self) -> None:
        print("\n== ELEMENT_WISE_ADD of two [256, 1024] float32 (2 MiB in, 1 MiB out): 64 in flight vs 1 in flight")
        servers = {"ours": procs.our_server("ours"), "echo-aio": procs.echo_server("aio")}
        loadgen = procs.Loadgen()
        body = payload(add_call())
        duration = self.config.duration
        variants = {
            f"@{n}": ("ours", {"kind": "grpc", "payload_b64": body, "inflight": n, "duration": duration})
            for n in (1, 64)
        }
        variants["echo@64"] = ("echo-aio", {**variants["@64"][1]})
        with self.children(*servers.values(), loadgen):
            results = self.interleaved(servers, loadgen, variants)
        self.raw["add"] = dict(results)

        def figure(name: str, key: str) -> float | None:
            runs = results.get(name)
            return median([r[key] for r in runs]) if runs else None

        scenario = "add [256, 1024] float32"
        self.add(
            Row(scenario, "req/s @64 vs @1 in flight", figure("@64", "rps"), figure("@1", "rps"), "ours @1",
                "req/s", (">=", 1.0))
        )  # fmt: skip
        self.add(Row(scenario, "p50 latency @1", figure("@1", "p50_us"), None, unit="µs"))
        self.add(
            Row(scenario, "req/s @64 vs echo", figure("@64", "rps"), figure("echo@64", "rps"), "aio echo @64",
                "req/s", note="echo of the 2 MiB request")
        )  # fmt: skip
        self.add(
            Row(scenario, "server CPU per call @64", figure("@64", "server_cpu_us_per_call"),
                figure("@1", "server_cpu_us_per_call"), "ours @1", "µs")
        )  # fmt: skip

    # -- server workers ---------------------------------------------------------------------------------------------

    def workers(self) -> None:
        channels = WORKER_CHANNELS
        print(f"\n== server workers: tiny top-k at 64 in flight over {channels} channels, vs the single-process echo")
        available = workers_available()
        servers = {"ours": procs.our_server("ours"), "echo-aio": procs.echo_server("aio")}
        if available:
            for n in (1, 2):
                servers[f"ours-w{n}"] = procs.our_server(f"ours-w{n}", ["--workers", str(n)])
        loadgen = procs.LoadgenPool(self.processes)
        job = {"kind": "grpc", "payload_b64": payload(tiny_calls()["top-k"]), "inflight": 64}
        job.update(duration=self.config.duration, channels=channels)
        variants = {name: (name, job) for name in servers}
        with self.children(*servers.values(), loadgen):
            results = self.interleaved(servers, loadgen, variants)
        self.raw["workers"] = dict(results)

        def rps(name: str) -> float | None:
            runs = results.get(name)
            return median([r["rps"] for r in runs]) if runs else None

        scenario = f"top-k @64 in flight, {channels} channels"
        echo = rps("echo-aio")
        label = f"default workers ({default_workers()})" if available else "one process"
        self.add(Row(scenario, f"req/s, {label}", rps("ours"), echo, "aio echo", "req/s", (">=", 1.0)))
        for n in (1, 2):
            if not available:
                self.add(Row(scenario, f"req/s, --workers {n}", None, note=report.NA))
                continue
            self.add(Row(scenario, f"req/s, --workers {n}", rps(f"ours-w{n}"), echo, "aio echo", "req/s"))
        if available:
            self.add(
                Row(scenario, "--workers 2 vs --workers 1", rps("ours-w2"), rps("ours-w1"), "--workers 1", "req/s")
            )  # fmt: skip

    # -- liveness under a heavy request -----------------------------------------------------------------------------

    def heavy(self) -> None:
        call = heavy_call()
        print("\n== liveness: health checks on a second channel while a heavy, tiny-bytes request runs "
              "(GEMM [1024, 8192] x [8192, 1024] of zero-stride inputs) vs idle")  # fmt: skip
        # One worker: each channel is one connection to one worker, so with several the health checks would land on
        # the busy worker or on an idle one by chance.
        servers = {"ours": procs.our_server("ours", ["--workers", "1"] if workers_available() else [])}
        loadgen = procs.Loadgen()
        duration = max(2 * self.config.duration, 1.0)
        job = {"kind": "liveness", "payload_b64": payload(call), "duration": duration, "interval": 0.01}
        variants = {"idle": ("ours", job), "busy": ("ours", {**job, "heavy": True})}
        with self.children(*servers.values(), loadgen):
            results = self.interleaved(servers, loadgen, variants)
        self.raw["heavy"] = dict(results)
        idle, busy = results["idle"], results["busy"]
        scenario = "health check beside a heavy request"
        worst = max(r["max_ms"] for r in busy)
        heavy_calls = sum(r["heavy_calls"] for r in busy)
        heavy_errors = sum(r["heavy_errors"] for r in busy)
        note = f"{heavy_calls} heavy calls" + (f", {heavy_errors} failed" if heavy_errors else "")
        self.add(
            Row(scenario, "max latency, busy", worst, LIVENESS_LIMIT_S * 1e3, "limit", "ms", ("<=", 1.0), note)
        )  # fmt: skip
        self.add(
            Row(scenario, "max latency, busy vs idle", worst, max(r["max_ms"] for r in idle), "idle", "ms")
        )  # fmt: skip
        self.add(
            Row(scenario, "p50 latency, busy vs idle", median([r["p50_ms"] for r in busy]),
                median([r["p50_ms"] for r in idle]), "idle", "ms")
        )  # fmt: skip
        heavy_p50 = [r["heavy_p50_ms"] for r in busy if r["heavy_p50_ms"] is not None]
        self.add(Row(scenario, "heavy call p50", median(heavy_p50) if heavy_p50 else None, None, unit="ms"))

    # -- 64 MiB scatter-ND ----------------------------------------------------------------------------------------

    def large(self, size: int = 64 * MiB) -> None:
        print(f"\n== {size // MiB} MiB scatter-ND round trip: effective MB/s = (bytes sent + received) / time")
        streaming = streaming_available()
        servers = {
            "ours": procs.our_server("ours"),
            "ours-malloc": procs.our_server("ours-malloc", malloc=True),
            "echo": procs.echo_server("aio"),
            "echo-malloc": procs.echo_server("aio", malloc=True),
            "tcp": procs.tcp_server(),
        }
        loadgen, loadgen_malloc = procs.Loadgen(), procs.Loadgen(malloc=True)
        calls = self.config.large_calls
        # variant -> (server, client loadgen, job)
        variants: dict[str, tuple[str, procs.Loadgen, dict[str, Any]]] = {}
        for mode in ("unary", "streamed") if streaming else ("unary",):
            job = {"kind": "sdk_large", "size": size, "reps": calls, "stream": mode == "streamed"}
            job["stream_threshold_bytes"] = STREAM_CHUNK
            variants[f"{mode}"] = ("ours", loadgen, job)
            variants[f"{mode}, server malloc-tuned"] = ("ours-malloc", loadgen, job)
            variants[f"{mode}, server+client malloc-tuned"] = ("ours-malloc", loadgen_malloc, job)
        echo_job = {"kind": "grpc", "payload_size": size, "response_size": size, "count": calls, "warmup": 0.0}
        variants["echo"] = ("echo", loadgen, echo_job)
        variants["echo, malloc-tuned"] = ("echo-malloc", loadgen_malloc, echo_job)
        variants["tcp"] = ("tcp", loadgen, {"kind": "tcp", "size": size, "reps": calls})
        times: dict[str, list[float]] = defaultdict(list)
        moved: dict[str, int] = {}
        with self.children(*servers.values(), loadgen, loadgen_malloc):
            names = list(variants)
            for rep in range(self.config.reps):
                for name in names[rep % len(names) :] + names[: rep % len(names)]:
                    server, client, job = variants[name]
                    job = {**job, "target": servers[server].target, "address": servers[server].target}
                    self.quiet()
                    result = client.run(job)
                    if job["kind"] == "grpc":
                        times[name].extend([result["p50_us"] / 1e6])
                        moved[name] = 2 * size
                    else:
                        times[name].extend(result["times_s"])
                        moved[name] = result["bytes"]
        self.raw["large"] = {"size": size, "times_s": dict(times), "bytes": moved}

        def mbps(name: str) -> float | None:
            return moved[name] / median(times[name]) / 1e6 if times.get(name) else None

        scenario = f"{size // MiB} MiB scatter-ND"
        tcp = mbps("tcp")
        modes = ["unary", "streamed"]
        for mode in modes:
            if mode == "streamed" and not streaming:
                self.add(Row(f"{scenario}, streamed", "vs raw TCP", None, goal=(">=", 0.5), note=report.NA))
                continue
            for suffix in ("", ", server malloc-tuned", ", server+client malloc-tuned"):
                name = mode + suffix
                self.add(Row(f"{scenario}, {name}", "vs raw TCP", mbps(name), tcp, "raw TCP", "MB/s", (">=", 0.5)))
            echo_name = f"{mode}, server+client malloc-tuned"
            self.add(Row(f"{scenario}, {mode}", "vs bare echo", mbps(mode), mbps("echo"), "aio echo", "MB/s"))
            self.add(
                Row(f"{scenario}, {echo_name}", "vs bare echo", mbps(echo_name), mbps("echo, malloc-tuned"),
                    "aio echo, malloc-tuned", "MB/s")
            )  # fmt: skip
            self.add(
                Row(f"{scenario}, {mode}", "malloc env effect", mbps(f"{mode}, server malloc-tuned"), mbps(mode),
                    "default malloc", "MB/s", note="server env only")
            )  # fmt: skip
        self.add(Row(f"{size // MiB} MiB bare echo", "vs raw TCP", mbps("echo"), tcp, "raw TCP", "MB/s"))

    # -- in-process floor -----------------------------------------------------------------------------------------

    def inproc(self) -> None:
        print("\n== in-process ONNX Runtime (the compute floor), the server's own lowering")
        import inproc

        for op, call in tiny_calls().items():
            self.quiet()
            figures = inproc.floor(call, number=self.config.inproc_number)
            self.raw.setdefault("inproc", {})[op] = figures
            rpc = self.tiny_p50.get(op)
            self.add(
                Row(f"{op}, in-process", "ORT session.run", figures["session_run_us"], None, unit="µs",
                    note="compute floor")
            )  # fmt: skip
            self.add(
                Row(f"{op}, in-process", "server handler", figures["handler_us"], figures["session_run_us"],
                    "session.run", "µs", note="the unary stages in a row, no gRPC")
            )  # fmt: skip
            self.add(Row(f"{op}, in-process", "request parse", figures["parse_us"], None, unit="µs"))
            if rpc:
                self.add(
                    Row(f"{op} @1 RPC p50", "vs in-process handler", rpc, figures["handler_us"], "handler", "µs")
                )  # fmt: skip

    # -- compile cache --------------------------------------------------------------------------------------------

    def cache(self) -> None:
        print("\n== compile cache: cold compile cost per op, hit rate of a mixed workload (server's /metrics)")
        import inproc

        n = self.config.cache_descs
        descs = {
            "top-k": [ops.top_k(np.random.rand(1, 1, r, 4).astype(np.float32), k=2, axis=3) for r in range(2, 2 + n)],
            "scatter-ND": [
                ops.scatter_nd(np.zeros(m, np.float32), np.array([[4], [3], [1], [7]]), np.ones(4, np.float32))
                for m in range(9, 9 + n)
            ],
        }
        server = procs.our_server("ours")
        loadgen = procs.Loadgen()
        with self.children(server, loadgen):
            # Connect and warm the server with other descs first, so that the first calls below only pay the compile.
            for call in tiny_calls().values():
                loadgen.run({"kind": "grpc", "target": server.target, "payload_b64": payload(call), "count": 20})
            for op, op_calls in descs.items():
                cold, second = [], []
                known = payload(tiny_calls()[op])
                for call in op_calls:
                    # Three calls of a compiled desc wake the path up after the quiet wait, then a new desc twice.
                    job = {"kind": "sequence", "target": server.target, "payloads_b64": [known, payload(call)]}
                    self.quiet()
                    latencies = loadgen.run({**job, "order": [0, 0, 0, 1, 1]})["latencies_us"]
                    cold.append(latencies[3])
                    second.append(latencies[4])
                self.raw.setdefault("cache", {})[op] = {"first_us": cold, "second_us": second}
                self.add(
                    Row(f"{op}, new desc", "first call", median(cold), median(second), "second call", "µs")
                )  # fmt: skip
                cost = median([a - b for a, b in zip(cold, second, strict=True)])
                self.add(Row(f"{op}, new desc", "cold compile cost", cost, None, unit="µs", note="first - second"))
                compile_us = inproc.cold_compile_us(op_calls)
                self.add(
                    Row(f"{op}, new desc", "in-process compile", median(compile_us), None, unit="µs",
                        note="Catalog.compiled on a miss")
                )  # fmt: skip
        self._hit_rate(calls=1000, distinct=20, cache_size=None)
        self._hit_rate(calls=1000, distinct=20, cache_size=16)

    def _hit_rate(self, *, calls: int, distinct: int, cache_size: int | None) -> None:
        flags = ["--compile-cache-size", str(cache_size)] if cache_size else []
        server = procs.our_server("ours", flags)
        loadgen = procs.Loadgen()
        rng = random.Random(7)
        mixed = [
            ops.top_k(np.zeros((1, r, 4), np.float32), k=2, axis=2) if i % 2 else ops.scatter_nd(
                np.zeros(8 + r, np.float32), np.array([[1]]), np.ones(1, np.float32))
            for i, r in enumerate(range(distinct))
        ]  # fmt: skip
        order = [rng.randrange(distinct) for _ in range(calls)]
        bodies = [payload(call) for call in mixed]
        with self.children(server, loadgen):
            before = procs.scrape(server.metrics_port)
            started = time.perf_counter()
            loadgen.run({"kind": "sequence", "target": server.target, "payloads_b64": bodies, "order": order})
            elapsed = time.perf_counter() - started
            after = procs.scrape(server.metrics_port)
        hits = after.get("dmlrpc_compile_cache_hits_total", 0) - before.get("dmlrpc_compile_cache_hits_total", 0)
        misses = after.get("dmlrpc_compile_cache_misses_total", 0) - before.get("dmlrpc_compile_cache_misses_total", 0)
        rate = hits / (hits + misses) if hits + misses else None
        ideal = 1 - distinct / calls
        label = f"cache size {cache_size}" if cache_size else "default cache size"
        self.raw.setdefault("hit_rate", []).append({"cache_size": cache_size, "hits": hits, "misses": misses})
        self.add(
            Row(f"mixed {calls} calls / {distinct} descs", f"hit rate, {label}", None if rate is None else rate * 100,
                ideal * 100, "ideal (first use misses)", "%", note=f"{elapsed:.1f} s")
        )  # fmt: skip

    # -- > 2 GiB ----------------------------------------------------------------------------------------------------

    def huge(self) -> None:
        print("\n== a tensor over 2 GiB, one round trip (streamed)")
        size = (2 << 30) + 256 * MiB
        if not streaming_available():
            self.add(
                Row(f"{size / (1 << 30):.2f} GiB scatter-ND", "round trip", None,
                    note=report.NA + "; unary messages stop at 2 GiB")
            )  # fmt: skip
            return
        # Streams carry tensors past the message limit; the tensor and request limits must admit them.
        flags = ["--max-tensor-bytes", str(4 << 30), "--max-request-bytes", str(8 << 30)]
        self.quiet()
        server = procs.our_server("ours-huge", flags, malloc=True)
        loadgen = procs.Loadgen(malloc=True)
        with self.children(server, loadgen):
            job = {"kind": "sdk_large", "target": server.target, "size": size, "reps": 1, "warmup_calls": 0}
            result = loadgen.run({**job, "stream": True, "stream_threshold_bytes": STREAM_CHUNK})
        seconds = result["times_s"][0]
        self.raw["huge"] = result
        self.add(
            Row(f"{size / (1 << 30):.2f} GiB scatter-ND, streamed", "effective throughput",
                result["bytes"] / seconds / 1e6, unit="MB/s", note=f"{seconds:.1f} s, correct result")
        )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a ~1 minute smoke run (short runs, one repetition)")
    parser.add_argument("--only", action="append", choices=SCENARIOS, metavar="SCENARIO",
                        help=f"run only this scenario (repeatable): {', '.join(SCENARIOS)}")  # fmt: skip
    parser.add_argument("--huge", action="store_true", help="also run the >2 GiB round trip (needs ~12 GiB RAM)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="save rows, raw results and conditions")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="write the results table as Markdown")
    parser.add_argument("--duration", type=float, help="seconds of each tiny-op load run (overrides the preset)")
    parser.add_argument("--reps", type=int, help="interleaved repetitions (overrides the preset)")
    parser.add_argument("--quiet-wait", type=float, default=2.0, help="max seconds to wait for a quiet CPU per run")
    parser.add_argument("--processes", type=int, default=1,
                        help="load generator processes of the stream and workers scenarios (req/s summed)")  # fmt: skip
    args = parser.parse_args(argv)
    config = QUICK if args.quick else FULL
    overrides = {"duration": args.duration, "reps": args.reps}
    config = Config(**{**config.__dict__, **{k: v for k, v in overrides.items() if v is not None}})
    scenarios = args.only or [s for s in SCENARIOS if s != "huge" or args.huge]
    command = "python bench/run.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    info = report.conditions(command.strip())
    print(report.conditions_text(info))
    print(
        f"dynamic batching: {'yes' if batching_available() else report.NA}; "
        f"streaming: {'yes' if streaming_available() else report.NA}; "
        f"ExecuteMany: {'yes' if execute_many_available() else report.NA}; "
        f"--workers: {default_workers() + ' by default' if workers_available() else report.NA}"
    )
    suite = Suite(config, quiet_wait=args.quiet_wait, processes=args.processes)
    steps: dict[str, Callable[[], None]] = {
        "tiny": suite.tiny,
        "stream": suite.stream,
        "add": suite.add_scenario,
        "workers": suite.workers,
        "heavy": suite.heavy,
        "large": suite.large,
        "inproc": suite.inproc,
        "cache": suite.cache,
        "huge": suite.huge,
    }
    started = time.perf_counter()
    for name in SCENARIOS:
        if name in scenarios:
            steps[name]()
    minutes = (time.perf_counter() - started) / 60
    quiet_share = 1 - suite.noisy_runs / suite.runs if suite.runs else 1.0
    print(f"\n{suite.runs} measured runs in {minutes:.1f} min; {quiet_share:.0%} started on a quiet CPU")
    report.print_goals(suite.rows)
    report.save(suite.rows, info, suite.raw, args.json, args.markdown, config=config.__dict__, quiet_share=quiet_share)
    return 0


if __name__ == "__main__":
    sys.exit(main())
