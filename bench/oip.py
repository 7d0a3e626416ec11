"""ModelInfer against our own Execute of the same ONNX TopK and against a ModelInfer floor, under h2load."""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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


#: One measured run of a case's variant under a load: h2load's result.
RunOnce = Callable[[Case, str, Load, Run], dict[str, Any]]


@dataclass
class Runs:
    """Every (case, variant) run at every load: results by ``"<case> <variant> @<in flight>"``."""

    raw: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    runs: int = 0
    #: Runs that started on a quiet CPU.
    quiet: int = 0

    def rps(self, case: Case, variant: str, inflight: int) -> float | None:
        """The median req/s of a case's variant at ``inflight``."""
        results = self.raw.get(f"{case.name} {variant} @{inflight}")
        return statistics.median(r["rps"] for r in results) if results else None


def interleave(
    variants: list[tuple[Case, str]], loads: dict[int, Load], args: argparse.Namespace, run_once: RunOnce
) -> Runs:
    """A counted warm-up run of each variant, then ``args.reps`` rounds of timed runs at every load, the variants'
    order rotating each round."""
    runs = Runs()
    for case, variant in variants:  # warm-up: connections, sessions, the first compile
        run_once(case, variant, loads[max(loads)], Run(count=2000))
    for rep in range(args.reps):
        for inflight, load in loads.items():
            for case, variant in variants[rep % len(variants) :] + variants[: rep % len(variants)]:
                runs.runs += 1
                runs.quiet += procs.wait_quiet(args.quiet_wait)
                result = run_once(case, variant, load, Run(duration=args.duration))
                runs.raw[f"{case.name} {variant} @{inflight}"].append(result)
    return runs


def stop(servers: Mapping[str, procs.Server | procs.EchoGroup], clients: Mapping[Any, H2load]) -> None:
    for server in servers.values():
        server.stop()
    for client in clients.values():
        client.close()


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

            measured = interleave(variants, loads, args, run_once)
        finally:
            stop(servers, clients)
    rps = measured.rps

    for case in CASES:
        for inflight, load in loads.items():
            scenario = f"{case.name} {list(case.shape)} @{inflight} in flight, h2load {load.label()}"
            infer = rps(case, "ModelInfer", inflight)
            rows.append(Row(scenario, "req/s, ModelInfer vs our Execute", infer, rps(case, "Execute", inflight),
                            "Execute", "req/s", (">=", 0.9)))  # fmt: skip
            rows.append(Row(scenario, "req/s, ModelInfer vs the ModelInfer floor", infer, rps(case, "floor", inflight),
                            f"floor, {workers} process{'es' if workers > 1 else ''}", "req/s", (">=", 0.9),
                            "the floor parses ModelInferRequest and runs the session on the loop"))  # fmt: skip
    return report.finish(rows, info, measured.raw, args, measured.runs, measured.quiet)


if __name__ == "__main__":
    sys.exit(report.timed(main))
