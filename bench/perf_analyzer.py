"""perf_analyzer -i grpc against dmlrpc's Open Inference Protocol: a small FP32 model with and without dynamic
batching, sync and streaming, at several concurrencies (tools/install-perf-analyzer.sh installs the binary).

python bench/perf_analyzer.py                                   # concurrency 1, 4, 16; batch 1
python bench/perf_analyzer.py --concurrency 1 8 --batch 2 --provider cuda
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import socket
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
INSTALLED = ROOT / ".perf-analyzer"
CONFIGS = {
    "batched": "max_batch_size: 8\ndynamic_batching { }\n",
    "unbatched": "max_batch_size: 8\n",
}


def _model() -> onnx.ModelProto:
    """FP32 INPUT0 [N,16] -> OUTPUT0 = INPUT0 * 2 + 1 (the size of Triton's examples: the protocol dominates)."""
    graph = helper.make_graph(
        [helper.make_node("Mul", ["INPUT0", "two"], ["t"]), helper.make_node("Add", ["t", "one"], ["OUTPUT0"])],
        "affine",
        [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["N", 16])],
        [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, ["N", 16])],
        initializer=[
            helper.make_tensor("two", TensorProto.FLOAT, [], [2.0]),
            helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--provider", default="cpu")
    parser.add_argument("--interval-ms", type=int, default=2000)
    args = parser.parse_args()
    binary = INSTALLED / "bin" / "perf_analyzer"
    if not binary.is_file():
        sys.exit("perf_analyzer is not installed: run tools/install-perf-analyzer.sh")
    env = {**os.environ, "LD_LIBRARY_PATH": str(INSTALLED / "lib")}
    with tempfile.TemporaryDirectory() as repository:
        for name, config in CONFIGS.items():
            (pathlib.Path(repository) / name / "1").mkdir(parents=True)
            onnx.save(_model(), str(pathlib.Path(repository) / name / "1" / "model.onnx"))
            (pathlib.Path(repository) / name / "config.pbtxt").write_text(config)
        port = _free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "dmlrpc_server", "--model-repository", repository, "--port", str(port)]
            + ["--workers", "1", "--provider", args.provider, "--metrics-port", "0", "--log-level", "WARNING"],
        )
        try:
            time.sleep(5)  # start and warm-up
            print("| model | mode | concurrency | infer/s | p50 latency (us) | p99 latency (us) |")
            print("|---|---|---|---|---|---|")
            for name in CONFIGS:
                for mode in ("sync", "streaming"):
                    for concurrency in args.concurrency:
                        command = [
                            str(binary),
                            *("-m", name, "-i", "grpc", "-u", f"127.0.0.1:{port}", "-b", str(args.batch)),
                            *("--concurrency-range", f"{concurrency}:{concurrency}", "--percentile", "99"),
                            *("--measurement-interval", str(args.interval_ms), "--stability-percentage", "50"),
                            *(("--streaming",) if mode == "streaming" else ()),
                        ]
                        out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300).stdout
                        rate = re.search(r"Throughput: ([\d.]+) infer/sec", out)
                        p50 = re.search(r"p50 latency: (\d+) usec", out)
                        p99 = re.search(r"p99 latency: (\d+) usec", out)
                        cells = [m.group(1) if m else "-" for m in (rate, p50, p99)]
                        print(f"| {name} | {mode} | {concurrency} | " + " | ".join(cells) + " |", flush=True)
        finally:
            server.terminate()
            server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
