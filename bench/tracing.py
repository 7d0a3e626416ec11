"""Tiny unary Execute with tracing off, on (OTLP) and on the baseline's path (before tracing existed), under h2load.

Every call carries a W3C traceparent (the off and baseline servers ignore it). The servers run side by side and their
runs are interleaved (off, on, baseline, then on, baseline, off, ...), so that the machine's drift touches each
alike; each figure is the median of the repetitions, and the noise is the spread of one server's runs.
The traced server exports to a local OTLP/gRPC receiver in this process that counts what it receives.
"""

from __future__ import annotations

import argparse
import base64
import os
import subprocess
import sys
import tempfile
import threading
from concurrent import futures
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc
import h2load
import procs
import report
from h2load import H2load, Load, Run
from loadgen import process_cpu
from run import median, payload, tiny_calls

ROOT = Path(__file__).resolve().parent.parent
TRACEPARENT = "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class Receiver:
    """An OTLP/gRPC trace endpoint (OpenTelemetry's own TraceService) that counts the spans it receives."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

        self.spans = 0
        self._lock = threading.Lock()
        receiver = self

        class Servicer(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - the gRPC method's name
                count = sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
                with receiver._lock:
                    receiver.spans += count
                return trace_service_pb2.ExportTraceServiceResponse()

        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Servicer(), self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    def stop(self) -> None:
        self.server.stop(None)


def baseline_tree(revision: str, into: Path) -> tuple[str, dict[str, str]]:
    """The server and SDK of ``revision`` (git archive) under ``into``: its commit and the environment that runs
    them instead of this tree's."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", revision], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    archive = subprocess.run(["git", "archive", commit, "server", "client"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return commit, {"PYTHONPATH": f"{into / 'server'}{os.pathsep}{into / 'client'}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default=None, help="git revision of the baseline's path (default: the merge "
                        "base with main, else HEAD); 'none' leaves it out")  # fmt: skip
    parser.add_argument("--workers", type=int, default=1, help="--workers of every server")
    prepared = h2load.prepare(parser, "tracing.py", argv, reps=7)
    if prepared is None:
        return 3
    args, binary, info = prepared
    print(report.conditions_text(info))
    runs = f"{args.reps} interleaved repetitions of {args.duration:g} s runs"
    print(f"{info['h2load']}; {runs}, --workers {args.workers}")

    revision = args.baseline
    if revision is None:
        base = subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True)
        revision = base.stdout.strip() if base.returncode == 0 else "HEAD"
    receiver = Receiver()
    temporary = tempfile.TemporaryDirectory(prefix="bench-tracing-")
    flags = ["--workers", str(args.workers)]
    traced_env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.port}"}
    servers = {"off": procs.our_server("off", flags), "on": procs.our_server("on", [*flags, "--tracing", "otlp"],
                                                                              env=traced_env)}  # fmt: skip
    if revision != "none":
        commit, env = baseline_tree(revision, Path(temporary.name))
        servers[f"baseline {commit}"] = procs.our_server("baseline", flags, env=env)
        print(f"baseline: the server of {commit}, run from its own sources")
    call = tiny_calls()["top-k"]
    client = H2load(binary, h2load.grpc_frame(base64.b64decode(payload(call))), headers=(TRACEPARENT,))
    loads = {"1 in flight": Load(1, 1), f"{args.connections * args.streams} in flight": Load(args.connections,
                                                                                             args.streams)}  # fmt: skip
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    try:
        for server in servers.values():
            server.wait_ready()
        for rep in range(args.reps):
            order = list(servers.items())
            order = order[rep % len(order) :] + order[: rep % len(order)]  # the order rotates
            for load_name, load in loads.items():
                for name, server in order:
                    procs.wait_quiet(args.quiet_wait)
                    run = Run(duration=args.duration, warmup=0.5)
                    pids = server.pids()
                    cpu = sum(process_cpu(pid) for pid in pids)
                    try:
                        outcome = client.run(server.target, load, run, log=True, metrics_port=server.metrics_port)
                    except h2load.CallsFailed as error:
                        # NOTE: on a shared machine a run now and then completes no call at all: said, and run again.
                        print(f"  {name}, {load_name}: {error}; once more", flush=True)
                        cpu = sum(process_cpu(pid) for pid in pids)
                        outcome = client.run(server.target, load, run, log=True, metrics_port=server.metrics_port)
                    # The server's CPU per call answered (warm-up included, as its calls are): what other work on the
                    # machine moves least.
                    cpu = sum(process_cpu(pid) for pid in pids) - cpu
                    outcome["cpu_us"] = cpu / outcome["served"] * 1e6
                    results.setdefault((name, load_name), []).append(outcome)
            print(f"repetition {rep + 1} of {args.reps} done", flush=True)
    finally:
        client.close()
        for server in servers.values():
            server.stop()
        receiver.stop()
        temporary.cleanup()

    names = list(servers)
    baseline = names[2] if len(names) > 2 else None
    print(f"\nmedians of {args.reps} runs; noise: each figure's spread over its runs, (max - min) / median")
    metrics = (("rps", "req/s"), ("p50_us", "p50 µs"), ("cpu_us", "server CPU µs a call"))
    for load_name in loads:
        print(f"\n{load_name}:")
        figures: dict[str, dict[str, float]] = {}
        for name in names:
            runs = results[name, load_name]
            figures[name] = {key: median([r[key] for r in runs]) for key, _ in metrics}
            shown = []
            for key, label in metrics:
                values = [r[key] for r in runs]
                noise = (max(values) - min(values)) / median(values)
                shown.append(f"{label} {median(values):8.1f} (noise {noise:4.0%})")
            print(f"  {name:>18}: {', '.join(shown)}")
        pairs = [("on", "off")] + ([("off", baseline)] if baseline is not None else [])
        for ours, theirs in pairs:
            ratios = ", ".join(f"{label} {figures[ours][key] / figures[theirs][key]:.3f}" for key, label in metrics)
            print(f"  {ours} / {theirs.split()[0]}: {ratios}")
        if baseline is not None:
            # Each repetition's off run against the baseline's run beside it.
            paired = zip(results["off", load_name], results[baseline, load_name], strict=True)
            per_rep = ", ".join(f"{o['cpu_us'] / b['cpu_us']:.3f}" for o, b in paired)
            print(f"  off / baseline, server CPU a call, per repetition: {per_rep}")
    print(f"\nthe receiver got {receiver.spans} spans")
    return 0


if __name__ == "__main__":
    sys.exit(main())
