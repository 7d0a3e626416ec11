"""ModelInfer against our own Execute of the same ONNX TopK and against a ModelInfer floor, under h2load."""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import h2load
import numpy as np
import onnx
import procs
import report
from echo_server import top_k_model
from h2load import H2load, Load, Run
from report import Row

from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc_server.oip.protocol import service_pb2 as oip_pb2

INFER = "/inference.GRPCInferenceService/ModelInfer"


@dataclass(frozen=True)
class Case:
    """One TopK: the model's name, its input's shape, K and the axis."""

    name: str
    shape: tuple[int, ...]
    k: int
    axis: int

    def input(self) -> np.ndarray:
        return np.random.default_rng(0).standard_normal(self.shape, dtype=np.float32)

    def execute_request(self) -> bytes:
        call = ops.top_k(self.input(), self.k, self.axis)
        return prepare_execute(call.operator_desc, call.inputs).request.SerializeToString()

    def infer_request(self) -> bytes:
        x = self.input()
        tensor = oip_pb2.ModelInferRequest.InferInputTensor(name="x", datatype="FP32", shape=list(self.shape))
        return oip_pb2.ModelInferRequest(
            model_name=self.name, inputs=[tensor], raw_input_contents=[x.tobytes()]
        ).SerializeToString()

    def floor_response_bytes(self) -> int:
        """The size of the floor's answer (its calls are checked by the bytes they bring back)."""
        out = list(self.shape)
        out[self.axis] = self.k
        tensor = oip_pb2.ModelInferResponse.InferOutputTensor
        return len(
            oip_pb2.ModelInferResponse(
                model_name=self.name,
                outputs=[
                    tensor(name="values", datatype="FP32", shape=out),
                    tensor(name="indices", datatype="INT64", shape=out),
                ],
                raw_output_contents=[np.zeros(out, np.float32).tobytes(), np.zeros(out, np.int64).tobytes()],
            ).SerializeToString()
        )

    def config(self) -> str:
        out = list(self.shape)
        out[self.axis] = self.k
        dims, outs = ", ".join(map(str, self.shape)), ", ".join(map(str, out))
        return (
            f'name: "{self.name}"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 0\n'
            f'input [ {{ name: "x" data_type: TYPE_FP32 dims: [ {dims} ] }} ]\n'
            f'output [ {{ name: "values" data_type: TYPE_FP32 dims: [ {outs} ] }},\n'
            f'         {{ name: "indices" data_type: TYPE_INT64 dims: [ {outs} ] }} ]\n'
        )


CASES = (Case("top_k_tiny", (1, 1, 3, 4), 2, 3), Case("top_k_row", (1, 32000), 8, 1))


def repository(root: Path) -> dict[str, Path]:
    """A model repository holding every case's model (version 1): the model files by case."""
    files = {}
    for case in CASES:
        directory = root / case.name
        (directory / "1").mkdir(parents=True)
        path = directory / "1" / "model.onnx"
        onnx.save(top_k_model(list(case.shape), case.axis, case.k), str(path))
        (directory / "config.pbtxt").write_text(case.config())
        files[case.name] = path
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    prepared = h2load.prepare(parser, "oip.py", argv, reps=3)
    if prepared is None:
        return 3
    args, binary, info = prepared
    print(report.conditions_text(info))
    flags = shlex.split(args.server_flags)
    workers = procs.worker_count(flags)
    loads = {args.connections * args.streams: Load(args.connections, args.streams, 1), 1: Load(1, 1, 1)}
    rows: list[Row] = []
    raw: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="bench-oip-") as root:
        files = repository(Path(root))
        servers: dict[str, procs.Server | procs.EchoGroup] = {
            "ours": procs.our_server("ours", [*flags, "--model-repository", root])
        }
        for case in CASES:  # in the default workers' processes on one port, as ours
            servers[f"floor {case.name}"] = procs.EchoGroup("aio-infer", workers, ["--model", str(files[case.name])])
        clients = {
            (case.name, "Execute"): H2load(binary, h2load.grpc_frame(case.execute_request())) for case in CASES
        } | {(case.name, "ModelInfer"): H2load(binary, h2load.grpc_frame(case.infer_request()), path=INFER)
             for case in CASES}  # fmt: skip
        variants = [(case, kind) for case in CASES for kind in ("Execute", "ModelInfer", "floor")]
        runs = 0
        quiet = 0
        try:
            for server in servers.values():
                server.wait_ready()

            def run_once(case: Case, kind: str, load: Load, run: Run) -> dict[str, Any]:
                if kind == "floor":
                    server = servers[f"floor {case.name}"]
                    client = clients[(case.name, "ModelInfer")]
                    return client.run(server.target, load, run, response_bytes=case.floor_response_bytes())
                return clients[(case.name, kind)].run(
                    servers["ours"].target, load, run, metrics_port=servers["ours"].metrics_port
                )

            for case, kind in variants:  # warm-up: connections, sessions, the first compile
                run_once(case, kind, loads[max(loads)], Run(count=2000))
            for rep in range(args.reps):
                for inflight, load in loads.items():
                    order = variants[rep % len(variants) :] + variants[: rep % len(variants)]
                    for case, kind in order:
                        runs += 1
                        quiet += procs.wait_quiet(args.quiet_wait)
                        result = run_once(case, kind, load, Run(duration=args.duration))
                        raw[f"{case.name} {kind} @{inflight}"].append(result)
        finally:
            for server in servers.values():
                server.stop()
            for client in clients.values():
                client.close()

    def rps(case: Case, kind: str, inflight: int) -> float | None:
        results = raw.get(f"{case.name} {kind} @{inflight}")
        return statistics.median(r["rps"] for r in results) if results else None

    for case in CASES:
        for inflight, load in loads.items():
            scenario = f"{case.name} {list(case.shape)} @{inflight} in flight, h2load {load.label()}"
            infer = rps(case, "ModelInfer", inflight)
            rows.append(Row(scenario, "req/s, ModelInfer vs our Execute", infer, rps(case, "Execute", inflight),
                            "Execute", "req/s", (">=", 0.9)))  # fmt: skip
            rows.append(Row(scenario, "req/s, ModelInfer vs the ModelInfer floor", infer, rps(case, "floor", inflight),
                            f"floor, {workers} process{'es' if workers > 1 else ''}", "req/s", (">=", 0.9),
                            "the floor parses ModelInferRequest and runs the session on the loop"))  # fmt: skip
    for row in rows:
        report.print_row(row)
    print(f"\n{runs} measured runs, each checked; {quiet / max(runs, 1):.0%} started on a quiet CPU")
    report.print_goals(rows)
    report.save(rows, info, raw, args.json, args.markdown, args=vars(args) | {"json": None, "markdown": None})
    return 0


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"({(time.perf_counter() - started) / 60:.1f} min)")
    sys.exit(code)
