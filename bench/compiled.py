"""Compiled operators and graphs: ``Dispatch`` of a compiled handle against ``Execute`` of the full desc, same run."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import grpc
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling bench modules

import procs
import report
from inproc import make_catalog, per_call_us
from loadgen import process_cpu
from report import Row

import dmlrpc
from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.v1 import service_pb2

SERVICE = "/dmlrpc.v1.DirectMLService/"
OPTIONS = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
INFLIGHT = (1, 16)
CHAIN_K = 4


@dataclass(frozen=True)
class Config:
    duration: float  # seconds of one tiny-op load run
    reps: int  # interleaved repetitions of each measurement
    chain_calls: int  # timed calls of one chain variant per repetition (fewer for the large tensor if slow)
    chain_budget: float  # seconds one chain variant may take per repetition (at least 3 calls)
    sizes: tuple[int, ...]  # the chain's square tensor sides


FULL = Config(duration=1.0, reps=3, chain_calls=40, chain_budget=4.0, sizes=(64, 1024))
QUICK = Config(duration=0.15, reps=1, chain_calls=3, chain_budget=0.5, sizes=(64, 1024))


def tiny_calls() -> dict[str, ops.Call]:
    """TOP_K1 of [1,1,3,4] (K=2, axis 3; the DirectML doc example) and ELEMENT_WISE_ADD of two [16] FLOAT32."""
    x = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], np.float32)
    a = np.arange(16, dtype=np.float32)
    return {"top-k": ops.top_k(x, k=2, axis=3), "add[16]": ops.element_wise("add", a, a[::-1].copy())}


def summarize(latencies: Sequence[float], elapsed: float, server_cpu: float) -> dict[str, float]:
    data = np.asarray(latencies)
    return {
        "server_cpu_us": server_cpu / len(latencies) * 1e6,
        "p50_us": float(np.percentile(data, 50)) * 1e6,
        "p99_us": float(np.percentile(data, 99)) * 1e6,
        "rps": len(latencies) / elapsed,
    }


async def _load(
    target: str,
    method: str,
    payload: bytes,
    inflight: int,
    duration: float,
    metadata: Sequence[tuple[str, str]],
    server_pid: int,
) -> dict[str, float]:
    """``inflight`` concurrent callers of ``method`` with pre-serialized ``payload`` (no serializers either way);
    ``metadata`` carries the SDK client's id, which owns the compiled handle (sent on both methods alike)."""
    async with grpc.aio.insecure_channel(target, options=OPTIONS) as channel:
        call = channel.unary_unary(SERVICE + method)
        warm_until = time.perf_counter() + 0.1
        while time.perf_counter() < warm_until:
            await call(payload, metadata=metadata)
        latencies: list[float] = []
        start = time.perf_counter()
        stop = start + duration

        async def worker() -> None:
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                await call(payload, metadata=metadata)
                latencies.append(time.perf_counter() - t0)

        cpu = process_cpu(server_pid)
        await asyncio.gather(*(worker() for _ in range(inflight)))
        return summarize(latencies, time.perf_counter() - start, process_cpu(server_pid) - cpu)


def sequential(fn: Callable[[], object], duration: float, server_pid: int) -> dict[str, float]:
    """One call at a time for ``duration`` seconds (after 0.1 s of warm-up)."""
    warm_until = time.perf_counter() + 0.1
    while time.perf_counter() < warm_until:
        fn()
    latencies: list[float] = []
    cpu = process_cpu(server_pid)
    start = time.perf_counter()
    stop = start + duration
    while time.perf_counter() < stop:
        t0 = time.perf_counter()
        fn()
        latencies.append(time.perf_counter() - t0)
    return summarize(latencies, time.perf_counter() - start, process_cpu(server_pid) - cpu)


def timed(fn: Callable[[], object], calls: int, budget: float) -> float:
    """Median seconds of ``fn`` over up to ``calls`` calls (fewer past ``budget`` seconds, at least 3)."""
    fn()  # warm-up
    samples: list[float] = []
    while len(samples) < calls and (sum(samples) < budget or len(samples) < 3):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


class Bench:
    def __init__(self, client: dmlrpc.Client, server: procs.Server, config: Config, quiet_wait: float) -> None:
        self.client = client
        self.target = server.target
        self.server_pid = server.pid
        self.config = config
        self.quiet_wait = quiet_wait
        self.rows: list[Row] = []
        self.runs = 0
        self.noisy = 0

    def add(self, row: Row) -> None:
        self.rows.append(row)
        report.print_row(row)

    def quiet(self) -> None:
        self.runs += 1
        if not procs.wait_quiet(self.quiet_wait):
            self.noisy += 1

    # -- tiny ops ---------------------------------------------------------------------------------------------------

    def tiny(self) -> None:
        print("\n== tiny ops: Dispatch of a compiled handle vs Execute of the full desc (ratio = Dispatch / Execute)")
        results: dict[tuple[str, str, str], list[dict[str, float]]] = defaultdict(list)
        jobs: list[tuple[str, str, Callable[[], dict[str, float]]]] = []
        lookup: dict[str, tuple[float, float]] = {}
        for name, call in tiny_calls().items():
            op = self.client.compile(call.operator_desc)
            inputs = list(call.inputs)
            np.testing.assert_array_equal(op(*inputs)[0], self.client.execute(call.operator_desc, inputs)[0])
            payloads = {
                "Execute": prepare_execute(call.operator_desc, inputs).request.SerializeToString(),
                "Dispatch": op.request(inputs, None).SerializeToString(),
            }
            lookup[name] = self._inproc(call, payloads["Execute"], payloads["Dispatch"])
            for inflight in INFLIGHT:
                for method, payload in payloads.items():
                    jobs.append((name, f"@{inflight} bytes/{method}", self._wire(method, payload, inflight)))
            jobs.append((name, "sdk/Execute", self._seq(partial(self.client.execute, call.operator_desc, inputs))))
            jobs.append((name, "sdk/Dispatch", self._seq(partial(op, *inputs))))
        for rep in range(self.config.reps):
            shift = rep % len(jobs)
            for name, key, job in jobs[shift:] + jobs[:shift]:
                self.quiet()
                variant, _, method = key.rpartition("/")
                results[(name, variant, method)].append(job())

        def figure(name: str, variant: str, method: str, key: str) -> float:
            return float(statistics.median(r[key] for r in results[(name, variant, method)]))

        for name in tiny_calls():
            variants = [(f"@{n} bytes", f"{name} @{n} in flight, pre-serialized") for n in INFLIGHT]
            variants.append(("sdk", f"{name} @1, SDK op(x) vs client.execute"))
            for variant, scenario in variants:
                metrics = [
                    ("p50 latency", "p50_us", "µs"),
                    ("p99 latency", "p99_us", "µs"),
                    ("throughput", "rps", "req/s"),
                    ("server CPU per call", "server_cpu_us", "µs"),
                ]
                for metric, key, unit in metrics:
                    self.add(
                        Row(scenario, metric, figure(name, variant, "Dispatch", key),
                            figure(name, variant, "Execute", key), "Execute", unit)
                    )  # fmt: skip
            dispatch_us, execute_us = lookup[name]
            self.add(
                Row(f"{name}, in-process", "parse + operator lookup", dispatch_us, execute_us, "Execute", "µs",
                    note="what Dispatch skips: the desc's parse and cache key")
            )  # fmt: skip

    def _inproc(self, call: ops.Call, execute_bytes: bytes, dispatch_bytes: bytes) -> tuple[float, float]:
        """µs per call, in this process, of the server's first steps: parsing the request and finding the compiled
        operator (Execute: the compile cache, keyed by the desc; Dispatch: the handle table, a dict here)."""
        catalog = make_catalog()
        compiled = catalog.compiled(call.operator_desc)
        handles = {service_pb2.DispatchRequest.FromString(dispatch_bytes).handle: compiled}

        def execute() -> object:
            found = catalog.compiled(service_pb2.ExecuteRequest.FromString(execute_bytes).operator_desc)
            catalog.check_response_fits(found)  # as the server's Execute does
            return found

        def dispatch() -> object:
            found = handles[service_pb2.DispatchRequest.FromString(dispatch_bytes).handle]
            catalog.check_response_fits(found)  # as the server's dispatch does
            return found

        number, repeats = (300, 1) if self.config.reps == 1 else (3000, 5)
        return per_call_us(dispatch, number=number, repeats=repeats), per_call_us(
            execute, number=number, repeats=repeats
        )

    def _wire(self, method: str, payload: bytes, inflight: int) -> Callable[[], dict[str, float]]:
        return lambda: asyncio.run(
            _load(
                self.target,
                method,
                payload,
                inflight,
                self.config.duration,
                self.client._transport.metadata,
                self.server_pid,
            )
        )

    def _seq(self, fn: Callable[[], object]) -> Callable[[], dict[str, float]]:
        return lambda: sequential(fn, self.config.duration, self.server_pid)

    # -- five-operator chain ----------------------------------------------------------------------------------------

    def chain(self, side: int) -> None:
        print(f"\n== chain add -> relu -> multiply -> sigmoid -> top-k (K={CHAIN_K}) on [{side}, {side}] float32")
        rng = np.random.default_rng(side)
        x = rng.standard_normal((side, side), dtype=np.float32)
        b = rng.standard_normal((side, side), dtype=np.float32)
        client = self.client
        # The five descs (they depend on shapes and types only), built once as a caller would.
        add = ops.element_wise("add", x, b).operator_desc
        relu = ops.activation("relu", x).operator_desc
        mul = ops.element_wise("multiply", x, b).operator_desc
        sigmoid = ops.activation("sigmoid", x).operator_desc
        top_k = ops.top_k(x, CHAIN_K).operator_desc

        graph = dmlrpc.Graph()
        gx, gb = graph.input(np.float32, x.shape), graph.input(np.float32, b.shape)
        gy = graph.activation(
            "sigmoid", graph.element_wise("multiply", graph.activation("relu", graph.element_wise("add", gx, gb)), gb)
        )
        graph.output(*graph.top_k(gy, CHAIN_K))
        compiled = client.compile(graph)

        def graph_call() -> list[Any]:
            return compiled(x, b)

        def arrays() -> list[Any]:
            (y,) = client.execute(add, [x, b])
            (y,) = client.execute(relu, [y])
            (y,) = client.execute(mul, [y, b])
            (y,) = client.execute(sigmoid, [y])
            return client.execute(top_k, [y])

        kept: list[Any] = []
        # Inputs uploaded once, before the timed calls: the steady state of a caller that keeps its data resident.
        px, pb = client.upload(x), client.upload(b)

        def inputs(upload: bool) -> tuple[Any, Any]:
            if not upload:
                return px, pb
            rx, rb = client.upload(x), client.upload(b)
            kept.extend([rx, rb])
            return rx, rb

        def resident(upload: bool) -> list[Any]:
            rx, rb = inputs(upload)
            (y1,) = client.execute(add, [rx, rb], keep=True)
            (y2,) = client.execute(relu, [y1], keep=True)
            (y3,) = client.execute(mul, [y2, rb], keep=True)
            (y4,) = client.execute(sigmoid, [y3], keep=True)
            kept.extend([y1, y2, y3, y4])
            return client.execute(top_k, [y4])

        def graph_resident(upload: bool) -> list[Any]:
            return compiled(*inputs(upload))

        def release() -> None:  # untimed, between calls: the handles a resident chain created
            for tensor in kept:
                tensor.release()
            kept.clear()

        variants: dict[str, Callable[[], list[Any]]] = {
            "graph": graph_call,
            "arrays": arrays,
            "resident": partial(resident, True),
            "resident, pre-uploaded": partial(resident, False),
            "graph, resident inputs": partial(graph_resident, True),
            "graph, pre-uploaded": partial(graph_resident, False),
        }
        want = arrays()
        for variant in variants.values():
            for got, expected in zip(variant(), want, strict=True):
                np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
            release()
        times: dict[str, list[float]] = defaultdict(list)
        names = list(variants)
        for rep in range(self.config.reps):
            for name in names[rep % len(names) :] + names[: rep % len(names)]:
                self.quiet()
                times[name].append(self._chain_median(variants[name], release))
        compiled.release()
        px.release()
        pb.release()
        p50 = {name: statistics.median(values) * 1e6 for name, values in times.items()}
        scenario = f"5-op chain [{side}, {side}]"
        rows = [
            ("p50, 1 graph Dispatch", "graph", "arrays", "5 Execute, arrays", ""),
            ("p50, 1 graph Dispatch", "graph", "resident", "5 Execute, resident", ""),
            ("p50, graph pre-uploaded", "graph, pre-uploaded", "resident, pre-uploaded", "5 Execute, pre-uploaded",
             "inputs uploaded once, untimed"),
            ("p50, 5 Execute resident", "resident", "arrays", "5 Execute, arrays", "2 uploads + 4 keep + 1 call"),
            ("p50, 5 Execute pre-uploaded", "resident, pre-uploaded", "arrays", "5 Execute, arrays", "4 keep + 1 call"),
            ("p50, graph upload + Dispatch", "graph, resident inputs", "graph", "graph, array inputs",
             "2 uploads + 1 Dispatch"),
        ]  # fmt: skip
        for metric, ours, baseline, baseline_name, note in rows:
            self.add(Row(scenario, metric, p50[ours], p50[baseline], baseline_name, "µs", note=note))

    def _chain_median(self, fn: Callable[[], object], release: Callable[[], None]) -> float:
        fn()  # warm-up
        release()
        samples: list[float] = []
        while len(samples) < self.config.chain_calls and (sum(samples) < self.config.chain_budget or len(samples) < 3):
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
            release()
        return statistics.median(samples)


def _has_workers() -> bool:
    from dmlrpc_server.settings import ServerSettings

    return "workers" in ServerSettings.model_fields


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="short runs, one repetition (a smoke test, < 20 s)")
    parser.add_argument("--duration", type=float, help="seconds of each tiny-op load run")
    parser.add_argument("--reps", type=int, help="interleaved repetitions of each measurement")
    parser.add_argument("--chain-calls", type=int, help="timed chain calls per variant and repetition")
    parser.add_argument("--sizes", help="the chain's tensor sides, comma-separated (default 64,1024)")
    parser.add_argument("--only", choices=["tiny", "chain"], help="one part only")
    parser.add_argument(
        "--quiet-wait", type=float, help="longest wait for a quiet CPU before each run (default 2 s, --quick 0)"
    )
    parser.add_argument("--server-flags", default="", help="extra dmlrpc-server flags")
    parser.add_argument("--json", help="write the rows and conditions here")
    parser.add_argument("--markdown", help="write the rows as a Markdown table here")
    args = parser.parse_args()
    base = QUICK if args.quick else FULL
    config = Config(
        duration=args.duration if args.duration is not None else base.duration,
        reps=args.reps if args.reps is not None else base.reps,
        chain_calls=args.chain_calls if args.chain_calls is not None else base.chain_calls,
        chain_budget=base.chain_budget,
        sizes=tuple(int(s) for s in args.sizes.split(",")) if args.sizes else base.sizes,
    )
    command = "python bench/compiled.py " + " ".join(sys.argv[1:])
    info = report.conditions(command.strip())
    print(report.conditions_text(info))
    flags = args.server_flags.split()
    if "--workers" not in flags and _has_workers():
        # Handles live in the worker that made them, and this bench compiles on one channel and dispatches on others.
        flags += ["--workers", "1"]
    server = procs.our_server("ours", flags).wait_ready()
    try:
        with dmlrpc.Client(server.target, timeout=120) as client:
            quiet_wait = args.quiet_wait if args.quiet_wait is not None else (0.0 if args.quick else 2.0)
            bench = Bench(client, server, config, quiet_wait)
            if args.only in (None, "tiny"):
                bench.tiny()
            if args.only in (None, "chain"):
                for side in config.sizes:
                    bench.chain(side)
    finally:
        server.stop()
    print(f"\n{bench.runs - bench.noisy} of {bench.runs} runs started on a quiet CPU; medians of {config.reps} reps")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"conditions": info, "rows": [r.as_dict() for r in bench.rows]}, out, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(report.markdown_table(bench.rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
