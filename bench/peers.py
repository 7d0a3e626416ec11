"""ModelInfer against peer model servers (KServe's, per-request logs off) on the same ONNX TopK models and requests."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import grpc
import h2load
import numpy as np
import procs
import report
from h2load import H2load, Load, Run
from oip import CASES, INFER, Case, interleave, repository, stop
from report import Row

from dmlrpc_server.oip.protocol import service_pb2 as oip_pb2

#: The peer environment bench/install-peers.sh makes.
KSERVE_PYTHON = procs.BENCH / ".peers" / "kserve" / "bin" / "python"
#: The peer's versions, recorded with the results.
PEER_PACKAGES = ("kserve", "onnxruntime", "grpcio", "protobuf", "numpy", "fastapi", "uvicorn")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def kserve_server(files: dict[str, Path]) -> procs.Server:
    """KServe's model server serving every case's model on a gRPC port of its own (one process: KServe's gRPC
    server has no workers of its own)."""
    argv = [str(KSERVE_PYTHON), str(procs.BENCH / "kserve_peer.py"), "--grpc-port", str(free_port())]
    argv += ["--http-port", str(free_port())]
    argv += [arg for name, path in files.items() for arg in ("--model", f"{name}={path}")]
    return procs.Server("kserve", argv)


def peer_versions() -> dict[str, str]:
    listed = subprocess.run(
        [str(KSERVE_PYTHON), "-m", "pip", "list", "--format", "json"], capture_output=True, text=True, check=True
    )
    return {p["name"].lower(): p["version"] for p in json.loads(listed.stdout) if p["name"].lower() in PEER_PACKAGES}


def checked_response_bytes(target: str, case: Case) -> int:
    """One ModelInfer of ``case``: its outputs checked against NumPy's top-k; the size of the answer (the peer's
    calls under load are then proven by the bytes they bring back)."""
    with grpc.insecure_channel(target) as channel:
        raw = channel.unary_unary(INFER)(case.infer_request(), timeout=30)
    response = oip_pb2.ModelInferResponse.FromString(raw)
    x = case.input()
    order = np.argsort(-x, axis=case.axis, kind="stable").take(range(case.k), axis=case.axis)
    values = np.frombuffer(response.raw_output_contents[0], np.float32).reshape(order.shape)
    if not np.array_equal(values, np.take_along_axis(x, order, axis=case.axis)):
        raise procs.ChildError(f"{target}: wrong top-k values for {case.name}")
    return len(raw)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    prepared = h2load.prepare(parser, "peers.py", argv, reps=3)
    if prepared is None:
        return 3
    if not KSERVE_PYTHON.exists():
        print("the peers are not installed: run bench/install-peers.sh", file=sys.stderr)
        return 3
    args, binary, info = prepared
    info["peers"] = peer_versions()
    print(report.conditions_text(info))
    print(f"peers: {info['peers']}")
    flags = shlex.split(args.server_flags)
    workers = procs.worker_count(flags)
    loads = {args.connections * args.streams: Load(args.connections, args.streams, 1), 1: Load(1, 1, 1)}
    names = ("ours", "ours-w1", "kserve", "floor")
    with tempfile.TemporaryDirectory(prefix="bench-peers-") as root:
        files = repository(Path(root))
        servers = {
            "ours": procs.our_server("ours", [*flags, "--model-repository", root]),
            "ours-w1": procs.our_server("ours-w1", [*flags, "--workers", "1", "--model-repository", root]),
            "kserve": kserve_server(files),
        }
        # The bound of any grpc.aio ModelInfer server: the floor parses the request and runs the session on the loop,
        # in the default workers' processes on one port, as ours (one server a model: it serves one).
        for case in CASES:
            servers[f"floor {case.name}"] = procs.EchoGroup("aio-infer", workers, ["--model", str(files[case.name])])
        clients = {case.name: H2load(binary, h2load.grpc_frame(case.infer_request()), path=INFER) for case in CASES}
        variants = [(case, name) for case in CASES for name in names]
        try:
            for server in servers.values():
                server.wait_ready(120)
            sizes = {case.name: checked_response_bytes(servers["kserve"].target, case) for case in CASES}

            def run_once(case: Case, name: str, load: Load, run: Run) -> dict[str, Any]:
                client = clients[case.name]
                if name == "floor":
                    server = servers[f"floor {case.name}"]
                    return client.run(server.target, load, run, response_bytes=case.floor_response_bytes())
                server = servers[name]
                if name == "kserve":
                    return client.run(server.target, load, run, response_bytes=sizes[case.name])
                return client.run(server.target, load, run, metrics_port=server.metrics_port)

            measured = interleave(variants, loads, args, run_once)
        finally:
            stop(servers, clients)
    rps = measured.rps

    rows: list[Row] = []
    for case in CASES:
        for inflight, load in loads.items():
            scenario = f"{case.name} {list(case.shape)} ModelInfer @{inflight} in flight, h2load {load.label()}"
            kserve = rps(case, "kserve", inflight)
            ours = rps(case, "ours", inflight)
            rows.append(Row(scenario, f"req/s, ours (default workers, {workers}) vs KServe", ours, kserve,
                            "KServe, 1 process", "req/s", (">=", 1.2)))  # fmt: skip
            rows.append(Row(scenario, "req/s, ours (--workers 1) vs KServe", rps(case, "ours-w1", inflight), kserve,
                            "KServe, 1 process", "req/s"))  # fmt: skip
            rows.append(Row(scenario, f"req/s, the ModelInfer floor ({workers} processes) vs KServe: the bound",
                            rps(case, "floor", inflight), kserve, "KServe, 1 process", "req/s",
                            note="parses ModelInferRequest, runs the session on the loop"))  # fmt: skip
            rows.append(Row(scenario, "req/s, ours (default workers) vs the floor", ours, rps(case, "floor", inflight),
                            f"floor, {workers} processes", "req/s"))  # fmt: skip
    return report.finish(rows, info, measured.raw, args, measured.runs, measured.quiet)


if __name__ == "__main__":
    sys.exit(report.timed(main))
