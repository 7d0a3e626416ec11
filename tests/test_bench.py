"""Smoke test of the benchmark suite: a very short tiny-op run prints ratio lines against the bare echo."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(30)
def test_bench_quick_tiny_prints_ratios() -> None:
    command = [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--only", "tiny"]
    command += ["--duration", "0.05", "--reps", "1", "--quiet-wait", "0"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=28, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"top-k @1 in flight\s+p50 latency .* vs .*\(aio echo\)\s+ratio\s+\d+\.\d+x", done.stdout)
    assert re.search(r"throughput .* ratio\s+\d+\.\d+x\s+goal >= 1x\s+(met|MISSED)", done.stdout)
