"""--device-memory-bytes on ONNX Runtime's CUDA provider (run on a GPU machine; skipped elsewhere): thousands of
distinct descs, each a CUDA session of its own, stay within the budget, and none falls back to the CPU."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess

import numpy as np
import onnxruntime as ort
import pytest

import dmlrpc
from dmlrpc import ops
from tests.conftest import scrape, start_server

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(
        "CUDAExecutionProvider" not in ort.get_available_providers(), reason="ONNX Runtime's CUDA provider is absent"
    ),
]

_log = logging.getLogger(__name__)
DESCS = int(os.environ.get("DMLRPC_GPU_DISTINCT_DESCS", "2000"))
BUDGET = int(os.environ.get("DMLRPC_GPU_DEVICE_MEMORY_BYTES", str(8 << 30)))
MiB = 1 << 20


def _device_used() -> int:
    """Bytes in use on the GPU the server runs on (device 0), as the driver counts them."""
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "--id=0"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    return int(out.split()[0]) * MiB


def _desc(index: int) -> tuple[ops.Call, np.ndarray]:
    """A distinct desc per index: a GEMM every fourth (cuBLAS), element-wise additions otherwise."""
    if index % 4 == 0:
        m = np.random.default_rng(index).random((8 + index // 4, 16), dtype=np.float32)
        return ops.gemm(m, m.T), m @ m.T
    x = np.arange(8 + index, dtype=np.float32)
    return ops.element_wise("add", x, x), x + x


@pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="nvidia-smi is absent: device memory is unreadable")
def test_distinct_descs_stay_within_the_device_memory_budget() -> None:
    before = _device_used()
    running = start_server(provider="cuda", device_memory_bytes=BUDGET)
    peak = 0
    try:
        with dmlrpc.Client(running.address, timeout=120) as client:
            for index in range(DESCS):
                call, expected = _desc(index)
                (output,) = client.execute(call.operator_desc, call.inputs)
                np.testing.assert_allclose(np.asarray(output).reshape(expected.shape), expected, rtol=1e-5)
                if index % 50 == 49:
                    peak = max(peak, _device_used() - before)
                    assert peak <= BUDGET, f"{peak / MiB:.0f} MiB in use after {index + 1} descs"
        fallbacks = {
            key: value for key, value in scrape(running).items() if key[0].startswith("dmlrpc_provider_fallbacks")
        }
        assert not any(fallbacks.values()), fallbacks
    finally:
        running.stop()
    _log.warning("%d distinct descs: peak device memory %.0f MiB of a %.0f MiB budget", DESCS, peak / MiB, BUDGET / MiB)
