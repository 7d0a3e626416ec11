"""Prometheus metrics scraped over HTTP from the real server change as calls are made."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from tests.conftest import ServerThread, scrape, start_server


@pytest.fixture(scope="module")
def observed() -> Iterator[ServerThread]:
    running = start_server()
    yield running
    running.stop()


def _requests(samples: dict, operator: str, code: str) -> float:  # type: ignore[type-arg]
    key = ("dmlrpc_requests_total", (("code", code), ("method", "Execute"), ("operator", operator)))
    return float(samples.get(key, 0.0))


def test_metrics_count_calls_failures_cache_and_time(observed: ServerThread) -> None:
    before = scrape(observed)
    with dmlrpc.Client(observed.address, timeout=30) as client:
        for _ in range(3):
            client.top_k(np.arange(12, dtype=np.float32).reshape(3, 4), 2)
        call = ops.top_k(np.arange(4, dtype=np.float32), 2)
        call.operator_desc.top_k1.k = 9
        with pytest.raises(dmlrpc.InvalidArgumentError):
            client.execute(call.operator_desc, call.inputs)
        client.get_capabilities()
    after = scrape(observed)

    assert _requests(after, "top_k1", "OK") - _requests(before, "top_k1", "OK") == 3
    assert _requests(after, "top_k1", "INVALID_ARGUMENT") - _requests(before, "top_k1", "INVALID_ARGUMENT") == 1
    capabilities = ("dmlrpc_requests_total", (("code", "OK"), ("method", "GetCapabilities"), ("operator", "")))
    assert after[capabilities] - before.get(capabilities, 0) == 1
    # One new desc: one miss, then two hits; the bad desc is a miss that is not cached.
    assert after[("dmlrpc_compile_cache_misses_total", ())] - before[("dmlrpc_compile_cache_misses_total", ())] == 2
    assert after[("dmlrpc_compile_cache_hits_total", ())] - before[("dmlrpc_compile_cache_hits_total", ())] == 2
    assert after[("dmlrpc_compile_cache_entries", ())] >= 1
    compute = ("dmlrpc_compute_duration_seconds_count", (("operator", "top_k1"),))
    assert after[compute] - before.get(compute, 0) == 3
    assert after[("dmlrpc_queue_duration_seconds_count", ())] - before[("dmlrpc_queue_duration_seconds_count", ())] == 3
    assert after[("dmlrpc_batch_size_count", ())] - before[("dmlrpc_batch_size_count", ())] == 3
    duration = ("dmlrpc_request_duration_seconds_count", (("method", "Execute"), ("operator", "top_k1")))
    assert after[duration] - before.get(duration, 0) == 4
    assert after[("dmlrpc_received_bytes_total", ())] > before[("dmlrpc_received_bytes_total", ())]
    assert after[("dmlrpc_sent_bytes_total", ())] - before[("dmlrpc_sent_bytes_total", ())] == 3 * 3 * 2 * 8
    assert after[("dmlrpc_inflight_requests", ())] == 0
    assert after[("dmlrpc_queued_requests", ())] == 0
    assert ("dmlrpc_buffer_pool_bytes", ()) in after


def test_build_info_names_the_provider(observed: ServerThread) -> None:
    samples = scrape(observed)
    (labels,) = [dict(labels) for name, labels in samples if name == "dmlrpc_build_info"]
    assert labels["provider"] == "CPUExecutionProvider"
    assert labels["version"]


def test_metrics_can_be_turned_off() -> None:
    running = start_server(metrics=False)
    try:
        assert running.built.metrics_port is None
    finally:
        running.stop()


def test_calls_of_no_single_operator_are_labelled_with_no_operator(observed: ServerThread) -> None:
    # ExecuteMany carries many descs (and ExecuteStream's label is read from its start): like GetCapabilities, a
    # call that names no one operator is operator="", never "unset" beside it.
    x = np.arange(8, dtype=np.float32)
    with dmlrpc.Client(observed.address, timeout=30) as client:
        assert len(list(client.map(dmlrpc.ops.top_k(x, 2).operator_desc, [[x]] * 3))) == 3
    requests = [dict(labels) for (name, labels) in scrape(observed) if name == "dmlrpc_requests_total"]
    assert {labels["operator"] for labels in requests if labels["method"] == "ExecuteMany"} == {""}
    assert "unset" not in {labels["operator"] for labels in requests}
