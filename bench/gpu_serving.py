"""Serving on a many-core GPU host: dynamic batching, ExecuteMany and server workers, beside a bare echo (same run).

In one run (``--provider cuda`` on an NVIDIA host; ``--provider cpu`` runs it anywhere as a smoke test):

(a) TOP_K1 of a [1, 32000] FLOAT32 input, K = 8: unary calls at 64 in flight, batching on (the server's defaults)
    vs off (``--max-batch-size 1``), and the same items through ExecuteMany; goal: on / off >= 2x for both. Beside
    them, in-process ONNX Runtime ``session.run`` of that top-k (the server's own lowering) for 1 row and for 64
    rows: the compute floor.
(b) tiny unary ops (TOP_K1 of [1,1,3,4]) at 64 in flight from each of ``--processes`` load generator processes, over
    ``--channels`` channels each, against ``--workers N`` servers for N in ``--workers`` (one server at a time):
    scaling = req/s(N) / req/s(1); goal >= 0.7 x N.
(c) the bare gRPC echo at 64 in flight (one process, and ``--processes`` processes) for reference.

Beside (a) with one worker, the floor of batching on grpc.aio: ``bench/echo_server.py --mode aio-top-k``, a bare aio
server that reads the row from the request and runs the same top-k alone per call or in dynamic batches of up to 64
(``--no-floor``: skip it). With ``--h2load`` the unary calls of (a) come from h2load (8 connections x 8 streams),
and (b)'s from h2load too (32 connections x 8 streams, 4 threads), which costs a call far less CPU than the Python
load generator: the figures are the servers', not the client's.

Prints every row as it is measured, then a Markdown table; ``--json FILE`` keeps rows and raw results.
"""

from __future__ import annotations

import argparse
import base64
import functools
import os
import shlex
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling bench modules

import h2load
import procs
import report
from echo_server import top_k_response_bytes
from inproc import per_call_us
from report import Row
from run import (
    STREAM_ITEMS_PER_MESSAGE,
    STREAM_WINDOW,
    execute_many_available,
    median,
    payload,
    tiny_calls,
    workers_available,
)

from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.codec import decode

MiB = 1 << 20
BATCH_OFF = ["--max-batch-size", "1"]
#: The server's default --max-batch-size, which the floor's batches take too.
MAX_BATCH = 64
#: h2load's 64 calls in flight for the unary calls of (a).
H2LOAD_LOAD = h2load.Load(connections=8, streams=8)
#: h2load's load of (b): 256 calls in flight (the Python load's 4 processes x 64) over 32 connections, which the
#: kernel spreads over the workers sharing the port, from 4 client threads.
SCALING_H2LOAD = h2load.Load(connections=32, streams=8, threads=4)
#: Calls of h2load's warm-up run of each server.
WARMUP_CALLS = 1000


class Loaders:
    """Runs each job on the Python load generator, or, for jobs of kind ``h2load``, on h2load: a timed run whose
    calls are proven successes by the server's own count (``metrics_port``), the echo's response bytes (``echo``)
    or the floor's (``response_bytes``)."""

    def __init__(
        self,
        python: procs.Loadgen | procs.LoadgenPool,
        client: h2load.H2load | None,
        load: h2load.Load = H2LOAD_LOAD,
    ) -> None:
        self.python = python
        self.client = client
        self.load = load
        self._warmed: set[str] = set()

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        if job["kind"] != "h2load":
            return self.python.run(job)
        assert self.client is not None
        target = job["target"]
        proof = {
            "metrics_port": job.get("metrics_port"),
            "echo": job.get("echo", False),
            "response_bytes": job.get("response_bytes"),
        }
        if target not in self._warmed:
            # NOTE: a server's first calls compile the desc and make its sessions, which on a GPU can outlast a
            # timed run's warm-up: a counted run first, once per server.
            self.client.run(target, self.load, h2load.Run(count=WARMUP_CALLS), **proof)
            self._warmed.add(target)
        return self.client.run(target, self.load, h2load.Run(duration=job["duration"]), **proof)

    def stop(self) -> None:
        self.python.stop()
        if self.client is not None:
            self.client.close()


@dataclass(frozen=True)
class Options:
    provider: str
    duration: float
    reps: int
    workers: list[int]
    batch_workers: list[int]
    processes: int
    channels: int
    columns: int
    k: int
    rows: int
    quiet_wait: float
    server_flags: list[str]
    inproc_number: int
    floor: bool = True
    h2load: str | None = None


class Run:
    def __init__(self, options: Options) -> None:
        self.options = options
        self.rows: list[Row] = []
        self.raw: dict[str, Any] = {}
        self.runs = 0
        self.noisy_runs = 0

    def add(self, row: Row) -> None:
        self.rows.append(row)
        report.print_row(row)

    def quiet(self) -> None:
        self.runs += 1
        if self.options.quiet_wait > 0 and not procs.wait_quiet(self.options.quiet_wait):
            self.noisy_runs += 1

    def server(self, name: str, flags: list[str]) -> procs.Server:
        """Our server on the chosen provider (``--workers 1`` unless the flags say otherwise, where it has workers)."""
        extra = list(self.options.server_flags)
        if workers_available() and "--workers" not in flags:
            extra += ["--workers", "1"]
        return procs.our_server(name, [*flags, *extra], provider=self.options.provider)

    def measure(
        self,
        servers: dict[str, procs.Server],
        loadgen: procs.Loadgen | procs.LoadgenPool,
        variants: dict[str, tuple[str, dict[str, Any]]],
    ) -> dict[str, list[dict[str, Any]]]:
        """Each variant (server name, job) ``reps`` times, the order rotating every repetition; a variant whose
        server answers UNIMPLEMENTED is dropped."""
        results: dict[str, list[dict[str, Any]]] = defaultdict(list)
        missing: set[str] = set()
        names = list(variants)
        pids = {name: server.pids() for name, server in servers.items()}
        for rep in range(self.options.reps):
            for name in names[rep % len(names) :] + names[: rep % len(names)]:
                if name in missing:
                    continue
                server, job = variants[name]
                self.quiet()
                result = loadgen.run({"target": servers[server].target, "server_pids": pids[server], **job})
                if "unimplemented" in result:
                    missing.add(name)
                else:
                    results[name].append(result)
        return results

    # -- (a) batching of a [1, 32000] top-k ------------------------------------------------------------------------

    def batching(self, workers: int) -> None:
        o = self.options
        shape = f"[1, {o.columns}]"
        spread = f", --workers {workers} ({o.processes} load processes x {o.channels} channels)" if workers > 1 else ""
        print(f"\n== (a) top-k of {shape} float32, K={o.k}: batching on vs off, unary @64 and ExecuteMany{spread}")
        rng = np.random.default_rng(0)
        call = ops.top_k(rng.standard_normal((1, o.columns), dtype=np.float32), o.k)
        body = payload(call)
        count = ["--workers", str(workers)] if workers > 1 else []
        servers = {
            "on": self.server("batch-on", count),
            "off": self.server("batch-off", [*BATCH_OFF, *count]),
            "echo": procs.echo_server("aio"),
        }
        floor = o.floor and workers == 1
        if floor:
            top_k = ["--provider", o.provider, "--columns", str(o.columns), "--k", str(o.k)]
            servers["floor-on"] = procs.echo_server("aio-top-k", args=[*top_k, "--batch-size", str(MAX_BATCH)])
            servers["floor-off"] = procs.echo_server("aio-top-k", args=[*top_k, "--batch-size", "1"])
            # The floor as the per-call goals define it: protobuf parses each request and writes each response.
            servers["floor-parse-on"] = procs.echo_server(
                "aio-top-k", args=[*top_k, "--batch-size", str(MAX_BATCH), "--parse"]
            )
        # Several workers: the calls spread over several connections (each reaches one worker) from several load
        # processes (one Python client cannot keep several workers busy); still 64 calls in flight in all.
        processes = o.processes if workers > 1 else 1
        python: procs.Loadgen | procs.LoadgenPool = procs.LoadgenPool(processes) if processes > 1 else procs.Loadgen()
        client = None
        if o.h2load:
            client = h2load.H2load(o.h2load, h2load.grpc_frame(base64.b64decode(body)))
        loadgen = Loaders(python, client)
        channels = o.channels if workers > 1 else 1
        inflight = max(1, 64 // processes)
        unary = {"kind": "grpc", "payload_b64": body, "inflight": inflight, "duration": o.duration}
        unary["channels"] = channels
        many = {"kind": "execute_many", "payload_b64": body, "duration": o.duration, "streams": channels}
        many["channels"] = channels
        many.update(
            items_per_message=STREAM_ITEMS_PER_MESSAGE,
            inflight=max(STREAM_ITEMS_PER_MESSAGE, STREAM_WINDOW // (channels * processes)),
        )
        try:
            for server in servers.values():
                server.wait_ready(180)
            proofs: dict[str, dict[str, Any]] = {
                "on": {"metrics_port": servers["on"].metrics_port},
                "off": {"metrics_port": servers["off"].metrics_port},
                "echo": {"echo": True},
                "floor-on": {"response_bytes": top_k_response_bytes(o.k)},
                "floor-off": {"response_bytes": top_k_response_bytes(o.k)},
                "floor-parse-on": {"response_bytes": top_k_response_bytes(o.k, parse=True)},
            }

            def calls(server: str) -> dict[str, Any]:
                return {"kind": "h2load", "duration": o.duration, **proofs[server]} if o.h2load else unary

            variants = {
                "unary-on": ("on", calls("on")),
                "unary-off": ("off", calls("off")),
                "many-on": ("on", many),
                "many-off": ("off", many),
                "echo": ("echo", calls("echo")),
            }
            if floor:
                variants["floor-on"] = ("floor-on", calls("floor-on"))
                variants["floor-off"] = ("floor-off", calls("floor-off"))
                variants["floor-parse-on"] = ("floor-parse-on", calls("floor-parse-on"))
            results = self.measure(servers, loadgen, variants)
        finally:
            loadgen.stop()
            for server in servers.values():
                server.stop()
        self.raw[f"batching-{workers}"] = dict(results)

        def figure(name: str, key: str = "rps") -> float | None:
            values = [run[key] for run in results.get(name, []) if key in run]  # h2load's timed runs have no p50
            return median(values) if values else None

        # With --h2load the unary calls came from h2load (8 x 8), whatever the workers; ExecuteMany's from Python.
        unary_load = f", --workers {workers} (h2load {H2LOAD_LOAD.label()})" if o.h2load and workers > 1 else spread
        scenario = f"top-k {shape} K={o.k}, unary @64{unary_load}"
        self.add(
            Row(scenario, "req/s, batching on vs off", figure("unary-on"), figure("unary-off"), "batching off",
                "req/s", (">=", 2.0))
        )  # fmt: skip
        self.add(Row(scenario, "req/s, batching on vs echo", figure("unary-on"), figure("echo"), "aio echo", "req/s"))
        if not o.h2load:  # its timed runs log no latencies
            self.add(
                Row(scenario, "p50 latency, batching on vs off", figure("unary-on", "p50_us"),
                    figure("unary-off", "p50_us"), "batching off", "µs")
            )  # fmt: skip
        if floor:
            self._floor_rows(figure, scenario)
        many_scenario = (
            f"top-k {shape} K={o.k}, ExecuteMany ({STREAM_ITEMS_PER_MESSAGE}/msg, window {STREAM_WINDOW}){spread}"
        )
        if figure("many-on") is None:
            self.add(Row(many_scenario, "items/s, batching on vs off", None, goal=(">=", 2.0), note=report.NA))
        else:
            self.add(
                Row(many_scenario, "items/s, batching on vs off", figure("many-on"), figure("many-off"),
                    "batching off", "req/s", (">=", 2.0))
            )  # fmt: skip
            self.add(
                Row(many_scenario, "items/s, batching on vs echo", figure("many-on"), figure("echo"),
                    "aio echo, unary @64", "req/s")
            )  # fmt: skip
        if workers == 1:
            self.inprocess(call)

    def _floor_rows(self, figure: Callable[..., float | None], scenario: str) -> None:
        """What batching can give on grpc.aio at all (the floor's on vs off) and whether the goal fits under it: our
        batching off against the floor's batching on is the most that our on / off could reach."""
        self.add(Row(scenario, "req/s, floor: batching on vs off", figure("floor-on"), figure("floor-off"),
                     "floor, batching off", "req/s"))  # fmt: skip
        self.add(Row(scenario, "req/s, floor batching on vs our batching off", figure("floor-on"), figure("unary-off"),
                     "ours, batching off", "req/s", note="the most our on / off can reach"))  # fmt: skip
        self.add(Row(scenario, "req/s, our batching on vs the floor's", figure("unary-on"), figure("floor-on"),
                     "floor, batching on", "req/s"))  # fmt: skip
        # The goal of one path per call: the floor as the per-call goals define it parses and writes each call.
        self.add(Row(scenario, "req/s, our batching on vs the parsing floor's", figure("unary-on"),
                     figure("floor-parse-on"), "parsing floor, batching on", "req/s", (">=", 0.9),
                     note="protobuf parses and writes each call"))  # fmt: skip
        self.add(Row(scenario, "req/s, the parsing floor vs the bare floor, batching on", figure("floor-parse-on"),
                     figure("floor-on"), "floor, batching on", "req/s",
                     note="what protobuf costs the floor"))  # fmt: skip

    def inprocess(self, call: ops.Call) -> None:
        """ORT session.run of the server's lowering of the top-k, for 1 row and for ``rows`` rows."""
        from dmlrpc_server.catalog import Catalog
        from dmlrpc_server.feature_levels import LATEST
        from dmlrpc_server.operators.base import Limits
        from dmlrpc_server.runtime.providers import choose_provider

        o = self.options
        limits = Limits(max_tensor_bytes=512 * MiB, max_request_bytes=1024 * MiB, max_message_bytes=512 * MiB)
        catalog = Catalog(choose_provider(o.provider), feature_level=LATEST, limits=limits, cache_capacity=16)
        figures: dict[int, float] = {}
        data = call.inputs[0]
        assert data is not None
        for rows in (1, o.rows):
            batch = ops.top_k(np.repeat(data, rows, axis=0), o.k)
            request = prepare_execute(batch.operator_desc, batch.inputs).request
            compiled = catalog.compiled(request.operator_desc)
            arrays = [
                None if layout is None else decode(binding.buffer.data, layout)
                for binding, layout in zip(request.inputs, compiled.plan.inputs, strict=True)
            ]
            feeds = compiled.plan.prepare(arrays)
            self.quiet()
            number = max(10, o.inproc_number // rows)
            run = functools.partial(compiled.session.run, compiled.output_names, feeds)
            figures[rows] = per_call_us(run, number=number, repeats=5)
        self.raw["inprocess_us"] = figures
        scenario = f"top-k [rows, {o.columns}] K={o.k}, in-process"
        self.add(Row(scenario, "session.run, 1 row", figures[1], None, unit="µs", note="compute floor"))
        self.add(Row(scenario, f"session.run, {o.rows} rows", figures[o.rows], figures[1], "1 row", "µs"))
        self.add(
            Row(scenario, f"rows/s, {o.rows} rows vs 1 row", o.rows * 1e6 / figures[o.rows], 1e6 / figures[1],
                "1 row a run", "rows/s", note="the ceiling batching can reach")
        )  # fmt: skip

    # -- (b) worker scaling ---------------------------------------------------------------------------------------

    def scaling(self) -> None:
        o = self.options
        body = payload(tiny_calls()["top-k"])
        client = None
        if o.h2load:
            # NOTE: the same 256 calls in flight as the Python load, from a compiled client whose threads cost a call
            # far less: 8 workers' req/s are then the servers' own, not the load processes' ceiling.
            load = f"@{SCALING_H2LOAD.inflight} from h2load, {SCALING_H2LOAD.label()}, {SCALING_H2LOAD.threads} threads"
            client = h2load.H2load(o.h2load, h2load.grpc_frame(base64.b64decode(body)))
            job: dict[str, Any] = {"kind": "h2load", "duration": o.duration}
        else:
            load = f"@64 x {o.processes} processes, {o.channels} channels each"
            job = {"kind": "grpc", "payload_b64": body, "inflight": 64, "duration": o.duration, "channels": o.channels}
        print(f"\n== (b) tiny top-k {load}: --workers N, one server at a time")
        available = workers_available()
        counts = o.workers if available else [1]
        rps: dict[int, float] = {}
        raw: dict[int, list[dict[str, Any]]] = {}
        for n in counts:
            flags = ["--workers", str(n)] if available else []
            server = self.server(f"workers-{n}", flags)
            loadgen = Loaders(procs.LoadgenPool(o.processes), client, SCALING_H2LOAD)
            try:
                server.wait_ready(180)
                time.sleep(1.0 if n > 1 else 0.0)  # let every worker come up and warm up
                variant = {**job, "metrics_port": server.metrics_port} if client is not None else job
                raw[n] = self.measure({"ours": server}, loadgen, {"ours": ("ours", variant)})["ours"]
            finally:
                loadgen.python.stop()
                server.stop()
            rps[n] = median([r["rps"] for r in raw[n]])
        if client is not None:
            client.close()
        self.raw["workers"] = raw
        scenario = f"tiny top-k {load}"
        echo = None if client is not None else self.raw.get("echo_pool_rps")  # (c)'s echo ran under the Python load
        for n in o.workers:
            if n not in rps:
                self.add(Row(scenario, f"scaling, --workers {n}", None, goal=(">=", 0.7 * n), note=report.NA))
                continue
            if n == 1:
                self.add(Row(scenario, "req/s, --workers 1", rps[1], echo, "aio echo, same load", "req/s"))
                continue
            self.add(
                Row(scenario, f"scaling, --workers {n}", rps[n], rps.get(1), "--workers 1", "req/s", (">=", 0.7 * n))
            )  # fmt: skip

    # -- (c) the echo ---------------------------------------------------------------------------------------------

    def echo(self) -> None:
        o = self.options
        print("\n== (c) the bare gRPC echo, tiny top-k bytes @64 in flight")
        body = payload(tiny_calls()["top-k"])
        echo = procs.echo_server("aio")
        one, pool = procs.Loadgen(), procs.LoadgenPool(o.processes)
        job = {"kind": "grpc", "payload_b64": body, "inflight": 64, "duration": o.duration}
        spread = f"{o.processes} load processes x {o.channels} channels"
        try:
            echo.wait_ready()
            servers = {"echo": echo}
            single = self.measure(servers, one, {"one": ("echo", job)})["one"]
            several = self.measure(servers, pool, {"pool": ("echo", {**job, "channels": o.channels})})["pool"]
        finally:
            one.stop()
            pool.stop()
            echo.stop()
        self.raw["echo"] = {"one": single, "pool": several}
        self.raw["echo_pool_rps"] = median([r["rps"] for r in several])
        scenario = "aio echo, tiny top-k bytes @64"
        self.add(Row(scenario, "req/s, 1 load process, 1 channel", median([r["rps"] for r in single]), unit="req/s"))
        self.add(
            Row(scenario, f"req/s, {spread}", self.raw["echo_pool_rps"], median([r["rps"] for r in single]),
                "1 process, 1 channel", "req/s", note="the load of (b)")
        )  # fmt: skip


def batch_worker_counts(run: Run) -> list[int]:
    """The worker counts of (a): as asked, where the build has workers; else one."""
    return run.options.batch_workers if workers_available() else [1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--provider", default="cuda", choices=["cuda", "directml", "cpu"])
    parser.add_argument("--quick", action="store_true", help="a ~1 minute smoke run (short runs, 1 repetition)")
    parser.add_argument("--duration", type=float, help="seconds of each load run (default 4, --quick 0.5)")
    parser.add_argument("--reps", type=int, help="interleaved repetitions (default 2, --quick 1)")
    parser.add_argument("--workers", help="server worker counts of (b), comma-separated (default 1,2,4,8; --quick 1,2)")
    parser.add_argument(
        "--batch-workers", default="1,4", help="server worker counts of (a), comma-separated (default 1,4)"
    )
    parser.add_argument("--processes", type=int, default=max(1, (os.cpu_count() or 1) // 4),
                        help="load generator processes of (b) and (c) (default: a quarter of the CPUs)")  # fmt: skip
    parser.add_argument("--channels", type=int, default=8, help="channels (connections) per load process in (b)")
    parser.add_argument("--columns", type=int, default=32000, help="top-k row length of (a)")
    parser.add_argument("--k", type=int, default=8, help="K of (a)'s top-k")
    parser.add_argument("--rows", type=int, default=64, help="rows of (a)'s batched in-process run")
    parser.add_argument("--quiet-wait", type=float, default=2.0, help="max seconds to wait for a quiet CPU per run")
    parser.add_argument("--server-flags", default="", help="extra dmlrpc-server flags")
    parser.add_argument("--floor", action=argparse.BooleanOptionalAction, default=True,
                        help="beside (a) with one worker, the floor of batching on grpc.aio (bench/echo_server.py "
                        "--mode aio-top-k)")  # fmt: skip
    parser.add_argument("--h2load", metavar="BINARY", help="drive (a)'s unary calls with this h2load binary")
    parser.add_argument("--json", type=Path, metavar="FILE", help="save rows, raw results and conditions")
    parser.add_argument("--markdown", type=Path, metavar="FILE", help="also write the Markdown table to FILE")
    args = parser.parse_args(argv)
    quick = args.quick
    options = Options(
        provider=args.provider,
        duration=args.duration if args.duration is not None else (0.5 if quick else 4.0),
        reps=args.reps if args.reps is not None else (1 if quick else 2),
        workers=[int(n) for n in (args.workers or ("1,2" if quick else "1,2,4,8")).split(",")],
        batch_workers=[int(n) for n in args.batch_workers.split(",")],
        processes=args.processes,
        channels=args.channels,
        columns=args.columns,
        k=args.k,
        rows=args.rows,
        quiet_wait=0.0 if quick else args.quiet_wait,
        server_flags=shlex.split(args.server_flags),
        inproc_number=200 if quick else 2000,
        floor=args.floor,
        h2load=args.h2load,
    )
    command = "python bench/gpu_serving.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    info = report.conditions(command.strip())
    info["provider"] = args.provider
    print(report.conditions_text(info))
    print(
        f"provider: {args.provider}; load processes: {options.processes}; "
        f"ExecuteMany: {'yes' if execute_many_available() else report.NA}; "
        f"--workers: {'yes' if workers_available() else report.NA}"
    )
    run = Run(options)
    started = time.perf_counter()
    for count in batch_worker_counts(run):
        run.batching(count)
    run.echo()
    run.scaling()
    minutes = (time.perf_counter() - started) / 60
    print(f"\n{run.runs} measured runs in {minutes:.1f} min; {run.runs - run.noisy_runs} started on a quiet CPU\n")
    table = report.markdown_table(run.rows)
    print(table)
    report.save(run.rows, info, run.raw, args.json, args.markdown, options=options.__dict__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
