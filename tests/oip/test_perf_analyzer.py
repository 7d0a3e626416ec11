"""perf_analyzer (-i grpc) completes short runs against the real server, sync and streaming, and reports throughput."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: Where tools/install-perf-analyzer.sh puts it (CI runs that script first).
INSTALLED = ROOT / ".perf-analyzer"


def _perf_analyzer() -> tuple[pathlib.Path, dict[str, str]]:
    binary = INSTALLED / "bin" / "perf_analyzer"
    env = {**os.environ, "LD_LIBRARY_PATH": str(INSTALLED / "lib")}
    if not binary.is_file():
        pytest.skip("!!!!!!!! perf_analyzer IS NOT INSTALLED: run tools/install-perf-analyzer.sh (CI does) !!!!!!!!")
    probe = subprocess.run([str(binary), "--version"], env=env, capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"!!!!!!!! perf_analyzer CANNOT RUN HERE: {(probe.stderr or probe.stdout).strip()[:300]} !!!!!!!!")
    return binary, env


@pytest.mark.parametrize("mode", [[], ["--streaming"]], ids=["sync", "streaming"])
def test_perf_analyzer_short_run(oip_server: Any, mode: list[str]) -> None:
    binary, env = _perf_analyzer()
    command = [
        str(binary),
        *("-m", "identity_fp32", "-i", "grpc", "-u", oip_server.address, "-b", "2", "--shape", "INPUT0:16"),
        *("--concurrency-range", "1:2", "--measurement-interval", "500", "--stability-percentage", "999"),
        *("--max-trials", "4", *mode),
    ]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    rates = [float(x) for x in re.findall(r"Concurrency: \d+, throughput: ([\d.]+) infer/sec", result.stdout)]
    assert len(rates) == 2 and all(rate > 0 for rate in rates), result.stdout
