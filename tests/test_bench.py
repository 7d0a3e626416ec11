"""Smoke test of the benchmark suite: a very short tiny-op run prints ratio lines against the bare echo."""

from __future__ import annotations

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
