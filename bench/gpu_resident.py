"""Resident vs host-bound operator calls on a GPU server, against in-process ONNX Runtime with IOBinding.

For TOP_K1 (K = 8 along rows of 4096 FLOAT32) and SCATTER_ND (4096 updates into a [rows, 4096] FLOAT32 tensor), at
input sizes from 1 MiB to 1 GiB, in one run on one machine:

- ``iobinding``: the server's own lowering run in-process on the provider, input already in device memory and
  outputs left there (ONNX Runtime IOBinding): the floor;
- ``echo``: a bare gRPC round trip of the resident call's request bytes (bench/echo_server.py);
- ``resident``: ``client.execute(desc, [resident], keep=True)`` against the real server: nothing crosses the wire but
  the desc and handles (the kept outputs are released between calls, untimed);
- ``host``: ``client.execute(desc, [array])``: the input goes over the wire (streamed above 8 MiB) and the outputs
  come back.

The goal: resident <= 1.2 x (iobinding + echo). Medians; results as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling bench modules (procs)

import grpc
import procs

import dmlrpc
from dmlrpc import ops
from dmlrpc_server.catalog import Catalog
from dmlrpc_server.feature_levels import LATEST
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.runtime.providers import choose_provider

MiB = 1 << 20
COLUMNS = 4096


def median_seconds(fn: Callable[[], object], *, repeats: int, budget: float = 20.0) -> float:
    """Median wall time of ``fn`` over up to ``repeats`` runs (fewer when they would exceed ``budget`` seconds)."""
    fn()  # warm-up: sessions, allocators, caches
    samples: list[float] = []
    spent = 0.0
    while len(samples) < repeats and (spent < budget or len(samples) < 3):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
        spent += samples[-1]
    return statistics.median(samples)


def cases(size_mib: int, rng: np.random.Generator) -> dict[str, tuple[ops.Call, np.ndarray]]:
    rows = max(1, size_mib * MiB // (COLUMNS * 4))
    data = rng.standard_normal((rows, COLUMNS), dtype=np.float32)
    flat = rng.choice(data.size, min(4096, data.size), replace=False)
    indices = np.stack(np.unravel_index(flat, data.shape), axis=-1).astype(np.int64)
    updates = rng.standard_normal(len(flat), dtype=np.float32)
    return {
        "top_k": (ops.top_k(data, 8), data),
        "scatter_nd": (
            ops.scatter_nd(data, indices, updates, input_dimension_count=2, indices_dimension_count=2),
            data,
        ),
    }


def in_process(catalog: Catalog, call: ops.Call, data: np.ndarray, device: str) -> Callable[[], object]:
    """The floor: the compiled session with its first input in device memory and outputs bound to the device."""
    compiled = catalog.compiled(call.operator_desc)
    plan = compiled.plan
    resident = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(data), device, 0)
    name = plan.direct_inputs[0]
    assert name is not None, "the benchmarked operators bind their data input directly"

    def run() -> object:
        binding = compiled.session.io_binding()
        # The data-dependent checks (scatter indices) run on every call, as the server runs them.
        for key, value in plan.prepare([None, *call.inputs[1:]]).items():
            binding.bind_cpu_input(key, value)
        binding.bind_ortvalue_input(name, resident)
        for output in compiled.output_names:
            binding.bind_output(output, device, 0)
        compiled.session.run_with_iobinding(binding)
        return binding.get_outputs()

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--provider", default="cuda", choices=["cuda", "directml", "cpu"])
    parser.add_argument("--sizes", default="1,16,256,1024", help="input sizes in MiB")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--server-flags", default="", help="extra dmlrpc-server flags, e.g. '--worker-threads 1'")
    args = parser.parse_args()
    device = {"cuda": "cuda", "directml": "dml", "cpu": "cpu"}[args.provider]
    limits = Limits(
        max_tensor_bytes=2048 * MiB,
        max_request_bytes=4096 * MiB,
        max_message_bytes=512 * MiB,
        max_run_bytes=8192 * MiB,
    )
    catalog = Catalog(choose_provider(args.provider), feature_level=LATEST, limits=limits, cache_capacity=64)
    flags = ["--provider", args.provider, "--max-tensor-bytes", str(2048 * MiB), "--max-request-bytes", str(4096 * MiB)]
    flags += ["--resident-bytes-per-caller", str(8192 * MiB), "--resident-bytes-total", str(16384 * MiB)]
    flags += ["--call-memory-bytes", str(8192 * MiB)]  # 1 GiB inputs: a call holds several GiB
    flags += args.server_flags.split()
    server = procs.Server(
        "dmlrpc",
        [sys.executable, "-m", "dmlrpc_server", "--port", "0", "--no-metrics", *flags],
        ready=procs._WARMED,
    ).wait_ready(180)
    echo = procs.echo_server("aio").wait_ready()
    rng = np.random.default_rng(0)
    results: list[dict[str, Any]] = []
    try:
        with dmlrpc.Client(server.target, timeout=600) as client, grpc.insecure_channel(echo.target) as channel:
            echo_call = channel.unary_unary("/dmlrpc.v1.DirectMLService/Execute")
            for size in (int(s) for s in args.sizes.split(",")):
                for name, (call, data) in cases(size, rng).items():
                    row = measure(client, catalog, echo_call, call, data, device, args.repeats)
                    row |= {"op": name, "size_mib": size}
                    results.append(row)
                    print(_line(row), flush=True)
    finally:
        server.stop()
        echo.stop()
    print()
    print(f"device: {args.provider}; {ort.__version__}; medians")
    print(f"{'op':<11} {'MiB':>5} {'iobinding ms':>13} {'echo ms':>8} {'resident ms':>12} {'host ms':>10} {'ratio':>6}")
    for row in results:
        print(_line(row))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"provider": args.provider, "onnxruntime": ort.__version__, "results": results}, out, indent=1)
    return 0


def measure(
    client: dmlrpc.Client,
    catalog: Catalog,
    echo_call: Any,
    call: ops.Call,
    data: np.ndarray,
    device: str,
    repeats: int,
) -> dict[str, Any]:
    floor = median_seconds(in_process(catalog, call, data, device), repeats=repeats)
    rest = list(call.inputs[1:])
    with client.upload(data) as resident:
        request = dmlrpc._base.prepare_execute(call.operator_desc, [resident, *rest], keep=True).request
        echo = median_seconds(lambda: echo_call(request.SerializeToString()), repeats=max(repeats, 50))
        kept: list[Any] = []

        def resident_call() -> None:
            kept.extend(client.execute(call.operator_desc, [resident, *rest], keep=True))

        samples = []
        resident_call()
        for _ in range(repeats):
            for tensor in kept:
                tensor.release()
            kept.clear()
            start = time.perf_counter()
            resident_call()
            samples.append(time.perf_counter() - start)
        check = [t.numpy() for t in kept]
        for tensor in kept:
            tensor.release()
    host_outputs: list[Any] = []
    host = median_seconds(
        lambda: host_outputs.append(client.execute(call.operator_desc, call.inputs)), repeats=max(3, repeats // 4)
    )
    for got, want in zip(check, host_outputs[-1], strict=True):
        np.testing.assert_array_equal(got, want)  # the resident chain computes what the host path does
    resident_s = statistics.median(samples)
    return {
        "iobinding_ms": floor * 1e3,
        "echo_ms": echo * 1e3,
        "resident_ms": resident_s * 1e3,
        "host_ms": host * 1e3,
        "ratio": resident_s / (floor + echo),
    }


def _line(row: dict[str, Any]) -> str:
    return (
        f"{row['op']:<11} {row['size_mib']:>5} {row['iobinding_ms']:>13.3f} {row['echo_ms']:>8.3f} "
        f"{row['resident_ms']:>12.3f} {row['host_ms']:>10.1f} {row['ratio']:>6.2f}"
    )


if __name__ == "__main__":
    sys.exit(main())
