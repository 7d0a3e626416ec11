"""Smoke test of the benchmark suite: a very short tiny-op run prints ratio lines against the bare echo."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


# A smoke test, not a timing test: ~16 s on a busy 2-core machine (two servers start and warm up), so its limits
# leave room for a loaded CI machine.
@pytest.mark.timeout(75)
def test_bench_quick_tiny_prints_ratios() -> None:
    command = [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--only", "tiny"]
    command += ["--duration", "0.05", "--reps", "1", "--quiet-wait", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=70, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"top-k @1 in flight\s+p50 latency .* vs .*\(aio echo\)\s+ratio\s+\d+\.\d+x", done.stdout)
    assert re.search(r"throughput .* ratio\s+\d+\.\d+x\s+goal >= 1x\s+(met|MISSED)", done.stdout)


@pytest.mark.timeout(90)
def test_gpu_resident_bench_runs_on_the_cpu_provider() -> None:
    # The GPU benchmark's scenario (resident vs in-process IOBinding + echo), runnable without a GPU.
    command = [sys.executable, str(ROOT / "bench" / "gpu_resident.py"), "--provider", "cpu"]
    command += ["--sizes", "1", "--repeats", "3"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=85, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"^top_k\s+1\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+\d+\.\d+$", done.stdout, re.M), done.stdout
    assert re.search(r"^scatter_nd\s+1\s", done.stdout, re.M)


@pytest.mark.timeout(60)
def test_compiled_bench_quick_prints_ratios() -> None:
    # Dispatch of a compiled handle vs Execute of the full desc, and a 5-operator graph vs five Execute calls.
    command = [sys.executable, str(ROOT / "bench" / "compiled.py"), "--quick", "--sizes", "64", "--quiet-wait", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=55, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    ratio = r"ratio\s+\d+\.\d+x"
    assert re.search(rf"top-k @1 in flight, pre-serialized\s+p50 latency .* vs .*\(Execute\)\s+{ratio}", done.stdout)
    assert re.search(rf"add\[16\] @16 in flight, pre-serialized\s+throughput .*\(Execute\)\s+{ratio}", done.stdout)
    assert re.search(rf"5-op chain \[64, 64\]\s+p50, 1 graph Dispatch .*\(5 Execute, arrays\)\s+{ratio}", done.stdout)
    assert re.search(rf"5-op chain \[64, 64\]\s+p50, 1 graph Dispatch .*\(5 Execute, resident\)\s+{ratio}", done.stdout)


@pytest.mark.timeout(30)
def test_bench_quick_stream_and_heavy_print_goal_rows() -> None:
    # ExecuteMany items/s vs the echo's unary req/s ("n/a" where the build lacks it), and health-check liveness.
    command = [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--only", "stream", "--only", "heavy"]
    command += ["--duration", "0.05", "--reps", "1", "--quiet-wait", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=28, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    verdict = r"goal (>=|<=) \d+(\.\d+)?x\s+(met|MISSED by \d+\.\d+x|pending)"
    assert re.search(rf"top-k, ExecuteMany .*items/s vs echo unary @64 .*{verdict}", done.stdout), done.stdout
    assert re.search(rf"health check beside a heavy request\s+max latency, busy .* ms .*{verdict}", done.stdout)


def test_worker_count_is_the_servers_own_for_its_provider() -> None:
    # The bench labels "default workers" (and waits for that many warm-ups) with the count the server will run: the
    # provider it is started with decides it, so a GPU host's "auto" (one worker) must not stand in for --provider cpu.
    sys.path.insert(0, str(ROOT / "bench"))
    import procs

    from dmlrpc_server.host import available_cpus, default_workers

    shared = sys.platform == "linux"
    assert procs.worker_count([]) == default_workers(available_cpus(), gpu=False, shared_port=shared)
    assert procs.worker_count(["--provider", "cuda"]) == 1  # a --provider in the flags wins, as on the command line
    assert procs.worker_count([], "cuda") == 1
    assert procs.worker_count(["--workers", "3"], "cuda") == 3


# -- the compiled load generator (bench/native.py, h2load) --------------------------------------------------------


def _h2load() -> str:
    sys.path.insert(0, str(ROOT / "bench"))
    import h2load

    binary = h2load.find()
    if binary is None:
        pytest.skip(h2load.MISSING)
    return binary


@pytest.mark.timeout(120)
def test_native_bench_prints_ratios_against_the_echo(tmp_path: Path) -> None:
    # ours (default workers) against the bare echo under h2load: req/s at 64 in flight, p50 at 1; every run checked.
    _h2load()
    command = [sys.executable, str(ROOT / "bench" / "native.py"), "--duration", "0.2", "--reps", "1"]
    command += ["--quiet-wait", "0", "--compare-workers", "--json", str(tmp_path / "native.json")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=115, cwd=ROOT)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    verdict = r"ratio\s+\d+\.\d+x\s+goal (>=|<=) \d+(\.\d+)?x\s+(met|MISSED by \d+\.\d+x)"
    assert re.search(
        rf"top-k @64 in flight, h2load 8 conn x 8 streams\s+req/s, default workers .*{verdict}", done.stdout
    )
    assert re.search(rf"top-k @1 in flight, h2load 1 conn x 1 stream\s+p50 latency, default .*{verdict}", done.stdout)
    # The floor (the echo running ONNX Runtime's TopK per call), its calls checked like the echo's, and ours against it.
    for metric in ("req/s", "p50 latency"):
        assert re.search(rf"{metric}, floor \(1 process\).*ratio\s+\d+\.\d+x", done.stdout), done.stdout[-3000:]
        assert re.search(rf"{metric}, ours \(default workers\) vs the floor.*ratio\s+\d+\.\d+x", done.stdout)
        # The bound beside the goal: the parsing floor under our malloc tuning against the plain one; ours against it.
        tuned = "parsing floor, our malloc tuning"
        assert re.search(rf"{metric}, the {tuned} vs the parsing floor.*ratio\s+\d+\.\d+x", done.stdout)
        assert re.search(rf"{metric}, ours \(default workers\) vs the {tuned}.*ratio\s+\d+\.\d+x", done.stdout)
    data = json.loads((tmp_path / "native.json").read_text())
    goals = [row for row in data["rows"] if row["goal"] is not None]
    # The echo's two goals (the serving core's) and the parsing floor's two (one path per call).
    assert len(goals) == 4 and all(row["ratio"] > 0 for row in goals), goals
    assert sum("vs the parsing floor" in row["metric"] for row in goals) == 2, goals
    for name in ("floor", "parsing-floor-tuned"):
        floor = data["raw"]["serving"][f"{name}@64"][0]
        assert floor["count"] > 0 and floor["served"] >= floor["count"]
    ours = data["raw"]["serving"]["ours@64"][0]
    assert ours["count"] > 0 and set(ours["codes"]) <= {"OK", "CANCELLED"} and ours["codes"]["OK"] >= ours["count"]


@pytest.mark.timeout(90)
def test_h2load_success_check_catches_grpc_errors() -> None:
    # h2load counts every HTTP 200 as a success, and a gRPC error is an HTTP 200 too: the check must catch a payload
    # our server rejects (INVALID_ARGUMENT, counted by its /metrics) and a method the echo lacks (UNIMPLEMENTED,
    # trailers-only: no response bytes), in counted and in timed runs, while the same runs of good calls pass.
    binary = _h2load()
    import h2load
    import procs
    from run import payload, tiny_calls

    good = h2load.grpc_frame(base64.b64decode(payload(tiny_calls()["top-k"])))
    bad = h2load.grpc_frame(b"\xff\xff\xff")  # not an ExecuteRequest
    load = h2load.Load(2, 2)
    runs = [h2load.Run(count=20), h2load.Run(duration=0.2, warmup=0.1)]
    ours, echo = procs.our_server("ours", ["--workers", "1"]), procs.echo_server("aio")
    clients: list[h2load.H2load] = []
    try:
        ours.wait_ready()
        echo.wait_ready()
        for body, ok in ((good, True), (bad, False)):
            client = h2load.H2load(binary, body)
            clients.append(client)
            for run in runs:
                if ok:
                    assert client.run(ours.target, load, run, metrics_port=ours.metrics_port)["count"] > 0
                    assert client.run(echo.target, load, run, echo=True)["count"] > 0
                else:
                    with pytest.raises(h2load.CallsFailed, match=r"the server counted .*INVALID_ARGUMENT"):
                        client.run(ours.target, load, run, metrics_port=ours.metrics_port)
        missing = h2load.H2load(binary, good, path="/dmlrpc.v1.DirectMLService/NoSuchMethod")
        clients.append(missing)
        for run in runs:
            with pytest.raises(h2load.CallsFailed, match="echo: 0 response bytes"):
                missing.run(echo.target, load, run, echo=True)
    finally:
        for client in clients:
            client.close()
        ours.stop()
        echo.stop()


# -- the floor of batching on grpc.aio (bench/echo_server.py --mode aio-top-k) ---------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("parse", [False, True])
@pytest.mark.parametrize("batch_size", [1, 64])
def test_top_k_floor_answers_each_call_its_own_rows_top_k(batch_size: int, parse: bool) -> None:
    # The floor must compute what our server computes, per call, whether its calls run alone or batched: 64 calls
    # at once (so that batches form), each answer checked against NumPy. The parsing floor answers a real
    # ExecuteResponse, read here by protobuf (indices as DirectML's UINT32).
    import asyncio

    import grpc
    import numpy as np

    sys.path.insert(0, str(ROOT / "bench"))
    import echo_server
    import procs
    from run import payload

    from dmlrpc import ops
    from dmlrpc.v1 import service_pb2

    columns, k = 1000, 5
    args = ["--provider", "cpu", "--columns", str(columns), "--k", str(k), "--batch-size", str(batch_size)]
    args += ["--parse"] if parse else []
    rows = np.random.default_rng(batch_size).standard_normal((64, columns), dtype=np.float32)
    server = procs.echo_server("aio-top-k", args=args)

    async def ask() -> list[bytes]:
        async with grpc.aio.insecure_channel(server.target) as channel:
            execute = channel.unary_unary("/dmlrpc.v1.DirectMLService/Execute")
            calls = [execute(base64.b64decode(payload(ops.top_k(row[None], k)))) for row in rows]
            return list(await asyncio.gather(*calls))

    try:
        server.wait_ready()
        answers = asyncio.run(ask())
    finally:
        server.stop()
    for row, answer in zip(rows, answers, strict=True):
        if parse:
            outputs = service_pb2.ExecuteResponse.FromString(answer).outputs
            values = np.frombuffer(outputs[0].buffer.data, dtype=np.float32)
            indices = np.frombuffer(outputs[1].buffer.data, dtype=np.uint32)
        else:
            values = np.frombuffer(answer[: 4 * k], dtype=np.float32)
            indices = np.frombuffer(answer[4 * k :], dtype=np.int64)
        assert len(answer) == echo_server.top_k_response_bytes(k, parse=parse)
        np.testing.assert_array_equal(values, -np.sort(-row)[:k])
        np.testing.assert_array_equal(row[indices], values)


@pytest.mark.timeout(120)
def test_gpu_bench_prints_the_batching_floor_under_h2load(tmp_path: Path) -> None:
    # (a) and (b) of the GPU bench on the CPU provider with h2load: our batching on / off beside the floor's, and
    # one worker's req/s, every call proven (ours by its /metrics, the echo and the floor by their response bytes).
    binary = _h2load()
    command = [sys.executable, str(ROOT / "bench" / "gpu_serving.py"), "--provider", "cpu", "--quick"]
    command += ["--workers", "1", "--batch-workers", "1", "--columns", "4000", "--duration", "0.3"]
    command += ["--h2load", binary, "--json", str(tmp_path / "gpu.json")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=115, cwd=ROOT)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    ratio = r"ratio\s+\d+\.\d+x"
    assert re.search(rf"unary @64\s+req/s, batching on vs off .*{ratio}\s+goal >= 2x", done.stdout), done.stdout
    assert re.search(rf"req/s, floor: batching on vs off .*{ratio}", done.stdout), done.stdout
    assert re.search(rf"req/s, floor batching on vs our batching off .*{ratio}", done.stdout)
    raw = json.loads((tmp_path / "gpu.json").read_text())["raw"]["batching-1"]
    parsing = rf"req/s, our batching on vs the parsing floor's .*{ratio}\s+goal >= 0.9x"
    assert re.search(parsing, done.stdout), done.stdout
    for name in ("unary-on", "unary-off", "floor-on", "floor-off", "floor-parse-on", "echo"):
        assert raw[name] and all(run["count"] > 0 and run["served"] >= run["count"] for run in raw[name]), name
    # (b) under h2load too: the workers' req/s, every call counted by the server.
    assert re.search(r"tiny top-k @256 from h2load, 32 conn x 8 streams, 4 threads\s+req/s, --workers 1", done.stdout)
    scaled = json.loads((tmp_path / "gpu.json").read_text())["raw"]["workers"]["1"]
    assert scaled and all(run["count"] > 0 and run["served"] >= run["count"] for run in scaled)


def test_plots_read_the_recorded_series_and_the_docs_show_them() -> None:
    # bench/plots.py's series from bench/recorded/ (matplotlib draws them; the series are what must be right), and
    # docs/benchmarks.md shows the PNGs it wrote.
    sys.path.insert(0, str(ROOT / "bench"))
    import plots

    files = plots.load(sorted(plots.RECORDED.glob("*.json")))
    latency = plots.latency_series(files)
    assert latency["top-k"]["ours, batching off"] == {1: 681.0, 8: 2540.0, 64: 20409.0}
    assert latency["top-k"]["aio echo"][1] == 510.0 and set(latency) == {"top-k", "scatter-ND"}
    scaling = plots.scaling_series(files)
    assert scaling["CPU provider, 16-core host C"] == ({1: 5629, 2: 11596, 4: 23529, 8: 41149}, 10991)
    assert all(sorted(points) == [1, 2, 4, 8] for points, _ in scaling.values())  # run.py's Python-loader rows left out
    floor = plots.floor_series(files)
    assert floor["floor"] == {1: 4759, 2: 5846} and floor["ours"] == {2: 4351} and floor["echo"] == {1: 6798}
    doc = (ROOT / "docs" / "benchmarks.md").read_text()
    for name in ("latency-vs-inflight.png", "rps-vs-workers.png"):
        assert f"](images/{name})" in doc and (ROOT / "docs" / "images" / name).stat().st_size > 10_000


@pytest.mark.timeout(180)
def test_tracing_bench_prints_on_off_and_baseline_ratios() -> None:
    # Tracing off, on (to the bench's own OTLP receiver) and the merge base's server, interleaved under h2load.
    _h2load()
    command = [sys.executable, str(ROOT / "bench" / "tracing.py"), "--duration", "0.2", "--reps", "1"]
    command += ["--baseline", "HEAD"]  # the committed server: whatever branches this checkout has
    done = subprocess.run([*command, "--quiet-wait", "0"], capture_output=True, text=True, timeout=170, cwd=ROOT)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    for load in ("1 in flight", "64 in flight"):
        assert f"\n{load}:" in done.stdout
    ratios = r"req/s \d+\.\d+, p50 µs \d+\.\d+, server CPU µs a call \d+\.\d+"
    assert len(re.findall(rf"on / off: {ratios}", done.stdout)) == 2, done.stdout
    assert len(re.findall(rf"off / baseline: {ratios}", done.stdout)) == 2, done.stdout
    spans = re.search(r"the receiver got (\d+) spans", done.stdout)
    assert spans is not None and int(spans.group(1)) > 0, done.stdout


def test_stages_bench_prints_each_stage_and_the_call_as_served() -> None:
    # In process: the stages alone, the servicer's call and the call as the server serves it (its wrappers too).
    command = [sys.executable, str(ROOT / "bench" / "stages.py"), "--number", "50", "--repeats", "1"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    names = ("read", "plan", "bind", "encode", "whole Execute (servicer)", "as served (the wrappers too)")
    for name in (*names, "as served, caches cooled", "the floor's handler, caches cooled"):
        assert re.search(rf"^{re.escape(name)} +\d+\.\d+ µs$", done.stdout, re.MULTILINE), done.stdout


def test_gil_bench_sorts_the_loops_samples_by_place(tmp_path: Path) -> None:
    # py-spy's raw lines (stack;stack count): the entry point's frames are on every stack, so only what the loop's
    # callback runs counts as the handler's, and native code with no Python frame under the callback by library.
    sys.path.insert(0, str(ROOT / "bench"))
    import gil

    entry = "thread (1): MainThread;main (dmlrpc_server/__main__.py:171);_run_once (asyncio/base_events.py:1)"
    callback = f"{entry};Handle._run (asyncio/events.py:88)"
    raw = tmp_path / "samples.txt"
    raw.write_text(
        "\n".join(
            [
                f"{callback};0x7f (grpc/_cython/cygrpc.cpython-312-x86_64-linux-gnu.so) 5",
                f"{callback};0x7f (libc.so.6) 3",
                f"{callback};0x7f (grpc/_cython/cygrpc.cpython-312-x86_64-linux-gnu.so);Scheduler.run "
                "(dmlrpc_server/scheduler.py:316);decode (dmlrpc/codec.py:375);0x7f (numpy/_core/_umath.so) 4",
                f"{callback};answer (bench/echo_server.py:290) 2",
                f"{entry};EpollSelector.select (selectors.py:468) 7",
                f"{callback} 1",
                "thread (2): dmlrpc-op_0;_worker (concurrent/futures/thread.py:89) 9",
            ]
        )
        + "\n"
    )
    places, frames, other = gil.profile(raw)
    assert places == {
        "native, below Handle._run: gRPC's Cython core": 5,
        "native, below Handle._run: libc (malloc, free, memcpy)": 3,
        "the handler: our code / the floor's": 6,
        "the event loop's Python (asyncio, selectors)": 8,
    }
    assert frames == {"decode": 4, "answer": 2}
    assert other == 9
