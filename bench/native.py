"""Tiny unary calls under a compiled load generator (h2load): ours vs the bare echo, and worker scaling."""

from __future__ import annotations

import argparse
import base64
import os
import shlex
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h2load
import procs
import report
from echo_server import tiny_response_bytes
from h2load import H2load, Load, Run
from loadgen import process_cpu
from report import Row
from run import median, payload, tiny_calls

#: Runs of each (server, calls in flight).
Results = dict[tuple[str, int], list[dict[str, Any]]]

#: Calls of each variant's warm-up run (connections, first compile), which also sizes its measured runs.
WARMUP_CALLS = {1: 300, 64: 3000}
#: The fewest calls of a measured run, however slow the warm-up was.
MIN_CALLS = {1: 200, 64: 1000}


def spread(ours: list[float], baseline: list[float] | None = None) -> str:
    """The per-run range of a figure (and of its baseline), as a row's note; empty for a single run."""
    if len(ours) < 2:
        return ""
    text = f"runs {min(ours):,.0f}-{max(ours):,.0f}"
    return text + (f" vs {min(baseline):,.0f}-{max(baseline):,.0f}" if baseline and len(baseline) > 1 else "")


class Native:
    """Interleaved h2load runs of several servers (variants), each run's calls proven successful."""

    def __init__(self, args: argparse.Namespace, binary: str) -> None:
        self.args = args
        self.rows: list[Row] = []
        self.raw: dict[str, Any] = {}
        self.runs = 0
        self.noisy_runs = 0
        call = tiny_calls()["top-k"]
        message = base64.b64decode(payload(call))
        self.client = H2load(binary, h2load.grpc_frame(message), cpus=args.h2load_cpus)
        self.parsing_floor_bytes = tiny_response_bytes(call.inputs[0])

    def add(self, row: Row) -> None:
        self.rows.append(row)
        report.print_row(row)

    def servers(self, workers: list[int | None], floor: int = 0) -> dict[str, procs.Server | procs.EchoGroup]:
        """The single-process aio echo, our server with each ``--workers`` (None: the default) and, with ``floor``,
        the floor: the aio echo that also runs the tiny TopK in ONNX Runtime per call, in one process and in
        ``floor`` processes sharing the port (the default workers' count), and the parsing floor (the issue's), plain
        and under our workers' malloc tuning."""
        flags = shlex.split(self.args.server_flags)
        servers: dict[str, procs.Server | procs.EchoGroup] = {"echo": procs.echo_server("aio")}
        if floor:
            servers["floor"] = procs.echo_server("aio-onnx")
            if floor > 1:
                servers[f"floor-p{floor}"] = procs.EchoGroup("aio-onnx", floor)
            # The issue's floor: protobuf parses the request and writes a real response, in the default workers'
            # processes on one port.
            servers["parsing-floor"] = procs.EchoGroup("aio-parse", floor)
            # The same under the malloc tuning our workers apply to themselves: the floor as bounded in memory as ours.
            tuned = procs.server_malloc_environment(flags)
            servers["parsing-floor-tuned"] = procs.EchoGroup("aio-parse", floor, env=tuned)
        for n in workers:
            name = "ours" if n is None else f"ours-w{n}"
            servers[name] = procs.our_server(name, flags + ([] if n is None else ["--workers", str(n)]))
        return servers

    def measure(
        self, servers: dict[str, procs.Server | procs.EchoGroup], loads: dict[int, Load], latency: bool
    ) -> Results:
        """Runs every server at every load, ``reps`` times interleaved (the order rotating), each instance after one
        counted warm-up run a load, whose calls are checked exactly against the server's count. With
        ``--fresh-servers`` (the default) every repetition starts each server anew. Runs at 1 in flight are counted
        (sized by the first warm-up to about ``duration`` seconds; with ``latency``, logged for percentiles); the
        others are timed (see ``h2load.Run``). Returns results[(name, inflight)].

        NOTE: one instance's luck repeats in every run it serves: two instances of the same floor, started side by
        side on the 2-core machine, differed by 6.5% in req/s at 64 in flight over 5 repetitions (docs/benchmarks.md),
        as much as the goals' margins; fresh instances make it part of each repetition's spread instead.
        """
        results: Results = defaultdict(list)
        runs: dict[tuple[str, int], Run] = {}
        duration = self.args.duration
        try:
            pids = self._warm(servers, loads, runs, duration)
            names = list(servers)
            for rep in range(self.args.reps):
                if rep and self.args.fresh_servers:
                    for name in names:
                        servers[name] = servers[name].respawn()
                    pids = self._warm(servers, loads, runs, duration)
                for inflight, load in loads.items():
                    for name in names[rep % len(names) :] + names[: rep % len(names)]:
                        self.runs += 1
                        if not procs.wait_quiet(self.args.quiet_wait):
                            self.noisy_runs += 1
                        run = runs[(name, inflight)]
                        cpu0 = sum(process_cpu(pid) for pid in pids[name])
                        result = self._run(servers[name], name, load, run, log=latency and inflight == 1)
                        calls = result["served"]  # a timed run's warm-up and end included, as in the CPU times
                        result["server_cpu_us_per_call"] = (
                            (sum(process_cpu(p) for p in pids[name]) - cpu0) / max(calls, 1) * 1e6
                        )
                        result["client_cpu_us_per_call"] = result["client_cpu_s"] / max(calls, 1) * 1e6
                        results[(name, inflight)].append(result)
        finally:
            for server in servers.values():
                server.stop()
        return results

    def _warm(
        self,
        servers: dict[str, procs.Server | procs.EchoGroup],
        loads: dict[int, Load],
        runs: dict[tuple[str, int], Run],
        duration: float,
    ) -> dict[str, list[int]]:
        """Wait for every server, then warm each up at each load with a counted, checked run; the first time, size
        the measured runs (``runs``) from the warm-ups. Returns each server's processes."""
        for server in servers.values():
            server.wait_ready()
        for (name, server), (inflight, load) in ((s, x) for s in servers.items() for x in loads.items()):
            warm = self._run(server, name, load, Run(count=WARMUP_CALLS.get(inflight, 50 * inflight)), log=False)
            if (name, inflight) not in runs:
                count = max(MIN_CALLS.get(inflight, 20 * inflight), round(warm["rps"] * duration))
                runs[(name, inflight)] = Run(count=count) if inflight == 1 else Run(duration=duration)
        return {name: server.pids() for name, server in servers.items()}

    def _run(
        self, server: procs.Server | procs.EchoGroup, name: str, load: Load, run: Run, *, log: bool
    ) -> dict[str, Any]:
        if name.startswith("parsing-floor"):  # a real ExecuteResponse of the tiny top-k, of a known size
            return self.client.run(server.target, load, run, log=log, response_bytes=self.parsing_floor_bytes)
        echo = name == "echo" or name.startswith("floor")  # the floor answers with the request's bytes too
        metrics_port = None if echo else server.metrics_port
        return self.client.run(server.target, load, run, log=log, echo=echo, metrics_port=metrics_port)

    # -- the serving goals: req/s at 64 in flight, p50 at 1 ------------------------------------------------------------

    def serving(self) -> None:
        load = Load(self.args.connections, self.args.streams, self.args.threads)
        workers: list[int | None] = [None, *self.args.compare_workers]
        default = procs.worker_count(shlex.split(self.args.server_flags))
        others = ", ".join(f"--workers {n}" for n in self.args.compare_workers) or "no other"
        print(f"\n== tiny top-k, h2load: {load.label()} ({load.inflight} in flight) and 1 in flight; ours (default "
              f"--workers {default}, and {others}) vs the single-process aio echo")  # fmt: skip
        loads = {load.inflight: load, 1: Load(1, 1, 1)}
        floor = default if self.args.floor else 0
        results = self.measure(self.servers(workers, floor), loads, latency=True)
        self.raw["serving"] = {f"{name}@{n}": runs for (name, n), runs in results.items()}

        def figure(name: str, inflight: int, key: str) -> float | None:
            runs = results.get((name, inflight))
            return median([r[key] for r in runs]) if runs else None

        def runs_of(name: str, inflight: int, key: str) -> str:
            return spread(*([r[key] for r in results.get((v, inflight), [])] for v in (name, "echo")))

        n = load.inflight
        scenario = f"top-k @{n} in flight, h2load {load.label()}"
        for index, w in enumerate(workers):
            name = "ours" if w is None else f"ours-w{w}"
            label = f"default workers ({default})" if w is None else f"--workers {w}"
            note = runs_of(name, n, "rps")
            goal = (">=", 1.0) if index == 0 else None
            self.add(Row(scenario, f"req/s, {label}", figure(name, n, "rps"), figure("echo", n, "rps"), "aio echo",
                         "req/s", goal, note))  # fmt: skip
            self.add(Row(scenario, f"server CPU per call, {label}", figure(name, n, "server_cpu_us_per_call"),
                         figure("echo", n, "server_cpu_us_per_call"), "aio echo", "µs"))  # fmt: skip
        for w in self.args.compare_workers:
            self.add(Row(scenario, f"default vs --workers {w}", figure("ours", n, "rps"),
                         figure(f"ours-w{w}", n, "rps"), f"--workers {w}", "req/s"))  # fmt: skip
        self.add(Row(scenario, "h2load CPU per call", figure("echo", n, "client_cpu_us_per_call"), None, unit="µs",
                     note="echo runs"))  # fmt: skip
        self._floor_rows(figure, scenario, n, "rps", "req/s", floor)
        scenario = "top-k @1 in flight, h2load 1 conn x 1 stream"
        for index, w in enumerate(workers):
            name = "ours" if w is None else f"ours-w{w}"
            label = f"default workers ({default})" if w is None else f"--workers {w}"
            note = runs_of(name, 1, "p50_us")
            goal = ("<=", 1.10) if index == 0 else None
            self.add(Row(scenario, f"p50 latency, {label}", figure(name, 1, "p50_us"), figure("echo", 1, "p50_us"),
                         "aio echo", "µs", goal, note))  # fmt: skip
            self.add(Row(scenario, f"server CPU per call, {label}", figure(name, 1, "server_cpu_us_per_call"),
                         figure("echo", 1, "server_cpu_us_per_call"), "aio echo", "µs"))  # fmt: skip
        self._floor_rows(figure, scenario, 1, "p50_us", "µs", floor)

    def _floor_rows(
        self, figure: Callable[[str, int, str], float | None], scenario: str, n: int, key: str, unit: str, floor: int
    ) -> None:
        """What any per-call server on grpc.aio that runs ONNX Runtime reaches (the floor, against the echo), and
        ours against it: the share of a goal that gRPC and ONNX Runtime leave to the rest of the request path."""
        if not floor:
            return
        metric = "req/s" if key == "rps" else "p50 latency"
        note = "aio echo + ONNX Runtime TopK per call"
        self.add(Row(scenario, f"{metric}, floor (1 process)", figure("floor", n, key), figure("echo", n, key),
                     "aio echo", unit, note=note))  # fmt: skip
        widest = "floor" if floor == 1 else f"floor-p{floor}"
        if floor > 1:
            self.add(Row(scenario, f"{metric}, floor ({floor} processes, one port)", figure(widest, n, key),
                         figure("echo", n, key), "aio echo", unit, note=note))  # fmt: skip
        self.add(Row(scenario, f"{metric}, ours (default workers) vs the floor", figure("ours", n, key),
                     figure(widest, n, key), f"floor, {floor} process{'es' if floor > 1 else ''}", unit))  # fmt: skip
        processes = f"{floor} process{'es' if floor > 1 else ''}"
        goal = (">=", 0.95) if key == "rps" else ("<=", 1.05)
        self.add(Row(scenario, f"{metric}, ours (default workers) vs the parsing floor", figure("ours", n, key),
                     figure("parsing-floor", n, key), f"parsing floor, {processes}", unit, goal,
                     "the floor parses the request and writes a real response with protobuf"))  # fmt: skip
        # The bound beside the goal: what our malloc tuning (glibc's arena cap, which bounds the memory threads keep)
        # costs the floor itself, and ours against the floor under it.
        tuned = "parsing floor, our malloc tuning"
        self.add(Row(scenario, f"{metric}, the {tuned} vs the parsing floor", figure("parsing-floor-tuned", n, key),
                     figure("parsing-floor", n, key), f"parsing floor, {processes}", unit,
                     note="glibc's settings of --tune-malloc, set in the environment"))  # fmt: skip
        self.add(Row(scenario, f"{metric}, ours (default workers) vs the {tuned}", figure("ours", n, key),
                     figure("parsing-floor-tuned", n, key), f"{tuned}, {processes}", unit))  # fmt: skip

    # -- worker scaling -----------------------------------------------------------------------------------------------

    def scaling(self) -> None:
        load = Load(self.args.scaling_connections, self.args.scaling_streams, self.args.threads)
        counts = self.args.scaling_workers
        print(f"\n== worker scaling, tiny top-k, h2load: {load.label()} ({load.inflight} in flight); --workers "
              f"{', '.join(map(str, counts))} vs --workers 1, the single-process echo under the same load")  # fmt: skip
        results = self.measure(self.servers(list(counts)), {load.inflight: load}, latency=False)
        n = load.inflight
        self.raw["scaling"] = {f"{name}@{n}": runs for (name, _), runs in results.items()}

        def rps(name: str) -> float | None:
            runs = results.get((name, n))
            return median([r["rps"] for r in runs]) if runs else None

        scenario = f"top-k @{n} in flight, h2load {load.label()}"
        for w in counts:
            name = f"ours-w{w}"
            runs = [r["rps"] for r in results.get((name, n), [])]
            self.add(Row(scenario, f"req/s, --workers {w}", rps(name), rps("echo"), "aio echo", "req/s",
                         note=spread(runs)))  # fmt: skip
            cpu = median([r["server_cpu_us_per_call"] for r in results.get((name, n), [])] or [0.0])
            self.add(Row(scenario, f"server CPU per call, --workers {w}", cpu, None, unit="µs"))
            if w != 1 and 1 in counts:
                self.add(Row(scenario, f"--workers {w} vs --workers 1", rps(name), rps("ours-w1"), "--workers 1",
                             "req/s", (">=", round(0.7 * w, 2))))  # fmt: skip
        echo_cpu = median([r["client_cpu_us_per_call"] for r in results.get(("echo", n), [])] or [0.0])
        self.add(Row(scenario, "h2load CPU per call", echo_cpu, None, unit="µs", note="echo runs"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scaling", action="store_true", help="worker scaling (--scaling-workers) instead of the "
                        "serving goals")  # fmt: skip
    parser.add_argument("--h2load-cpus", help="taskset CPU list of h2load (default: the runner's CPUs)")
    parser.add_argument("--duration", type=float, default=2.0, help="seconds of each measured run (about)")
    parser.add_argument("--reps", type=int, default=3, help="interleaved repetitions")
    parser.add_argument(
        "--fresh-servers",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="start every server anew for each repetition (its instance's luck does not repeat)",
    )
    parser.add_argument("--connections", type=int, default=8, help="h2load -c of the 64-in-flight load")
    parser.add_argument("--streams", type=int, default=8, help="h2load -m (calls in flight a connection)")
    parser.add_argument("--threads", type=int, default=1, help="h2load -t")
    parser.add_argument("--compare-workers", type=int, nargs="*", default=[1], metavar="N",
                        help="also run ours with --workers N beside the default (none: the default only)")  # fmt: skip
    parser.add_argument("--scaling-workers", type=int, nargs="+", default=[1, 2, 4, 8], metavar="N")
    parser.add_argument("--scaling-connections", type=int, default=64, help="h2load -c of the scaling load")
    parser.add_argument("--scaling-streams", type=int, default=4, help="h2load -m of the scaling load")
    parser.add_argument("--floor", action=argparse.BooleanOptionalAction, default=True,
                        help="also measure the floor: the aio echo running ONNX Runtime's TopK per call, in one "
                        "process and in as many as the default workers")  # fmt: skip
    prepared = h2load.prepare(parser, "native.py", argv)
    if prepared is None:
        return 3
    args, binary, info = prepared
    info["runner_cpus"] = sorted(os.sched_getaffinity(0))
    info["h2load_cpus"] = args.h2load_cpus or "the runner's"
    print(report.conditions_text(info))
    print(f"{info['h2load']}; runner and servers on CPUs {info['runner_cpus']}, h2load on {info['h2load_cpus']}")
    suite = Native(args, binary)
    started = time.perf_counter()
    try:
        suite.scaling() if args.scaling else suite.serving()
    finally:
        suite.client.close()
    quiet = 1 - suite.noisy_runs / suite.runs if suite.runs else 1.0
    minutes = (time.perf_counter() - started) / 60
    print(f"\n{suite.runs} measured runs in {minutes:.1f} min, each checked; {quiet:.0%} started on a quiet CPU")
    report.print_goals(suite.rows)
    options = vars(args) | {"json": None, "markdown": None}
    report.save(suite.rows, info, suite.raw, args.json, args.markdown, args=options, quiet_share=quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
