"""The memory bound by design: every byte budget defaults to a share of --memory-bytes, so that the defaults bound
what callers can make the server hold, and a server reports the budgets it applies."""

from __future__ import annotations

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from dmlrpc_server.settings import MiB, default_memory_bytes, load_settings, physical_memory
from tests.conftest import start_server


def test_the_default_budgets_sum_to_memory_bytes_for_any_worker_count() -> None:
    settings = load_settings(["--provider", "cpu"], environ={})
    for workers in (1, 2, 3, 8):
        budgets = settings.budgets(workers)
        assert budgets.memory == default_memory_bytes() <= 4096 * MiB
        assert budgets.bound <= budgets.memory
        # Half of it is the call memory, an eighth each the resident and compiled totals.
        assert budgets.call_memory == budgets.memory // 2 // workers
        assert budgets.resident_total == budgets.compiled_total == budgets.memory // 8


def test_memory_bytes_scales_every_default_and_explicit_budgets_win() -> None:
    settings = load_settings(["--provider", "cpu", "--memory-bytes", str(4096 * MiB)], environ={})
    budgets = settings.budgets(2)
    assert (budgets.call_memory, budgets.compile_cache, budgets.buffer_pool, budgets.heap_retain) == (
        1024 * MiB,
        256 * MiB,
        128 * MiB,
        128 * MiB,
    )
    assert budgets.bound == 4096 * MiB
    explicit = load_settings(
        ["--provider", "cpu", "--call-memory-bytes", str(64 * MiB), "--resident-bytes-total", "0"], environ={}
    ).budgets(2)
    assert explicit.call_memory == 64 * MiB and explicit.resident_total == 0
    assert explicit.compiled_total == default_memory_bytes() // 8


def test_the_default_follows_the_memory_the_process_may_use() -> None:
    # On a host (or in a container) with under 8 GiB, half of it; else 4 GiB.
    assert default_memory_bytes() == min(4096 * MiB, physical_memory() // 2)


@pytest.mark.parametrize(
    ("memory", "workers", "tensor"),
    [
        (4096 * MiB, 2, 256 * MiB),  # a host of 8 GiB or more, 2 workers: 1 GiB of call memory each
        (4096 * MiB, 1, 512 * MiB),
        (1024 * MiB, 2, 64 * MiB),  # a host of 2 GiB
        (64 * MiB, 8, 1 * MiB),
    ],
)
def test_the_tensor_limit_agrees_with_the_call_memory(memory: int, workers: int, tensor: int) -> None:
    """An element-wise call over the largest tensor the limits admit (two inputs and the output, then its response)
    fits one worker's call memory: no tensor that --max-tensor-bytes admits is then refused for its call's memory."""
    budgets = load_settings(["--provider", "cpu", "--memory-bytes", str(memory)], environ={}).budgets(workers)
    assert budgets.max_tensor == tensor
    assert 4 * budgets.max_tensor <= budgets.call_memory or budgets.max_tensor == MiB
    explicit = load_settings(["--provider", "cpu", "--max-tensor-bytes", str(3 * MiB)], environ={}).budgets(workers)
    assert explicit.max_tensor == 3 * MiB


def test_an_element_wise_call_over_the_largest_admitted_tensor_runs_with_the_defaults() -> None:
    """A server whose budgets are those of a 2-worker host of 1 GiB of --memory-bytes: an element-wise add over
    tensors of its published --max-tensor-bytes runs; they once disagreed (512 MiB tensors, 256 MiB of call memory
    a worker: an add over 128 MiB was refused)."""
    running = start_server(memory_bytes=512 * MiB)  # one worker: the call memory of 2 workers sharing 1 GiB
    try:
        with dmlrpc.Client(running.address) as client:
            largest = client.get_capabilities().limits.max_tensor_bytes
            assert largest == 64 * MiB
            a = np.ones(largest // 4, np.float32)
            np.testing.assert_array_equal(client.element_wise("add", a, a), a + a)
    finally:
        running.stop()


def test_a_gpu_provider_keeps_resident_tensors_in_device_memory_out_of_the_host_budget() -> None:
    budgets = load_settings(["--provider", "cuda"], environ={}).budgets(1)
    assert budgets.resident_total == min(16384 * MiB, physical_memory() // 4)


@pytest.mark.parametrize("memory", [256 * MiB])
def test_a_server_applies_and_reports_the_shares(memory: int) -> None:
    running = start_server(memory_bytes=memory)
    try:
        with grpc.insecure_channel(running.address) as channel:
            stub = service_pb2_grpc.DirectMLServiceStub(channel)
            limits = stub.GetCapabilities(service_pb2.GetCapabilitiesRequest(), timeout=10).limits
        assert limits.call_memory_bytes == memory // 2
        assert limits.compile_cache_bytes == memory // 8
        assert limits.resident_bytes_total == limits.compiled_bytes_total == memory // 8
    finally:
        running.stop()


@pytest.mark.skipif(physical_memory() < 8 << 30, reason="the defaults admit 256 MiB tensors on hosts of 8 GiB or more")
@pytest.mark.parametrize("mib", [64, 256])
def test_a_plain_unary_execute_returns_a_large_result_with_the_defaults(mib: int) -> None:
    """A client in any language sends one unary Execute and reads one ExecuteResponse (no streaming, as the SDK
    would use above 8 MiB): a FILL_VALUE_SEQUENCE of ``mib`` MiB comes back with the server's default limits."""
    count = mib << 18
    call = dmlrpc.ops.fill_value_sequence((count,), 0.0, 1.0, np.float32)
    request = service_pb2.ExecuteRequest(operator_desc=call.operator_desc)
    running = start_server()
    try:
        options = [("grpc.max_receive_message_length", -1)]
        with grpc.insecure_channel(running.address, options=options) as channel:
            response = service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=120)
        data = np.frombuffer(response.outputs[0].buffer.data, np.float32)
        assert data.size == count and data[1] == 1.0 and data[-1] == np.float32(count - 1)
    finally:
        running.stop()
