"""The service around the operators under Windows Python: its platform branches (process memory, metrics) run on the
Windows interpreter, not only Linux's."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from dmlrpc import ops
from tests.dml.conftest import WineServer

pytestmark = [pytest.mark.dml, pytest.mark.timeout(900)]


def _scrape(address: str) -> dict[str, float]:
    """The supervisor's /metrics: {sample name: value} of the unlabelled samples."""
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=60) as response:
        text = response.read().decode()
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if not sample.labels
    }


def test_metrics_export_the_workers_series_on_windows_python(dml_environment: Path) -> None:
    # The worker's resident memory is read the Windows way (its working set), although Wine shows it Linux's /proc.
    server = WineServer(metrics=True)
    server.start()
    try:
        x = np.arange(-2, 2, dtype=np.float32)
        call = ops.activation("relu", x)
        (relu,) = server.execute(call.operator_desc, call.inputs)
        np.testing.assert_array_equal(relu, np.maximum(x, 0))
        samples = _scrape(server.metrics_address)
        assert samples.get("dmlrpc_workers", 0) >= 1, samples  # every worker's scrape succeeded
        assert samples.get("dmlrpc_resident_memory_bytes", 0) > 0, samples
    finally:
        server.stop()
