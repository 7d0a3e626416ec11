"""The server on ONNX Runtime's CUDA provider (run on a GPU machine; skipped elsewhere): resident tensors in device
memory, chains without host copies, and the operators against their references."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc import ops
from tests.conftest import ServerThread, scrape, start_server
from tests.ops.test_element_wise import OPERATORS, check_against_reference, check_log_softmax_of_large_inputs

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        "CUDAExecutionProvider" not in ort.get_available_providers(), reason="ONNX Runtime's CUDA provider is absent"
    ),
]


def _stored(server: ServerThread, handle: str) -> ort.OrtValue:
    """The server-side value of a resident tensor (the test runs the server in-process)."""
    return next(tensor.value for tensor in server.built.resident if tensor.handle == handle)


@pytest.fixture(scope="module")
def cuda_server() -> Iterator[ServerThread]:
    running = start_server(provider="cuda")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def cuda(cuda_server: ServerThread) -> Iterator[dmlrpc.Client]:
    with dmlrpc.Client(cuda_server.address, timeout=120) as client:
        yield client


def test_capabilities_name_cuda(cuda: dmlrpc.Client) -> None:
    capabilities = cuda.get_capabilities()
    assert capabilities.execution_provider == "CUDAExecutionProvider"


def test_resident_tensors_live_in_device_memory(cuda_server: ServerThread, cuda: dmlrpc.Client) -> None:
    x = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32)
    with cuda.upload(x) as tensor:
        stored = _stored(cuda_server, tensor.handle)
        assert isinstance(stored, ort.OrtValue) and stored.device_name() == "cuda"
        np.testing.assert_array_equal(tensor.numpy(), x)


def test_a_chain_stays_on_the_device_and_equals_the_host_path(cuda_server: ServerThread, cuda: dmlrpc.Client) -> None:
    x = np.random.default_rng(1).standard_normal((512, 1024)).astype(np.float32)
    add = ops.element_wise("add", x, x).operator_desc
    relu = ops.activation("relu", x).operator_desc
    top = ops.top_k(x, 8).operator_desc
    with cuda.upload(x) as resident:
        (doubled,) = cuda.execute(add, [resident, resident], keep=True)
        (rectified,) = cuda.execute(relu, [doubled], keep=True)
        values, indices = cuda.execute(top, [rectified], keep=True)
        for kept in (doubled, rectified, values, indices):
            assert _stored(cuda_server, kept.handle).device_name() == "cuda"
        (host_doubled,) = cuda.execute(add, [x, x])
        (host_rectified,) = cuda.execute(relu, [host_doubled])
        host_values, host_indices = cuda.execute(top, [host_rectified])
        np.testing.assert_array_equal(values.numpy(), host_values)
        np.testing.assert_array_equal(indices.numpy(), host_indices)
        expected = np.maximum(2 * x, 0)
        np.testing.assert_allclose(rectified.numpy(), expected, rtol=1e-6)
        for kept in (doubled, rectified, values, indices):
            kept.release()


def test_scatter_nd_on_resident_data(cuda: dmlrpc.Client) -> None:
    rng = np.random.default_rng(2)
    data = rng.standard_normal((256, 512)).astype(np.float32)
    flat = rng.choice(data.size, 300, replace=False)
    indices = np.stack(np.unravel_index(flat, data.shape), axis=-1).astype(np.int64)
    updates = rng.standard_normal(300).astype(np.float32)
    call = ops.scatter_nd(data, indices, updates, input_dimension_count=2, indices_dimension_count=2)
    with cuda.upload(data) as resident:
        (kept,) = cuda.execute(call.operator_desc, [resident, call.inputs[1], call.inputs[2]], keep=True)
        expected = data.copy()
        expected[tuple(indices.T)] = updates
        np.testing.assert_array_equal(kept.numpy(), expected)
        kept.release()


@pytest.mark.parametrize("name", OPERATORS)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_element_wise_and_activations_on_cuda(cuda: dmlrpc.Client, name: str, data: st.DataObject) -> None:
    check_against_reference(cuda.execute, name, data, device=True)  # type: ignore[arg-type]


def test_batches_form_while_the_device_runs(cuda_server: ServerThread, cuda: dmlrpc.Client) -> None:
    # On a device provider requests of one desc queue while a run of it is under way, then run as one batch on a
    # worker thread: through ExecuteMany and through concurrent unary calls, every result equals its own run.
    rng = np.random.default_rng(3)
    rows = [rng.standard_normal((1, 4096)).astype(np.float32) for _ in range(96)]
    desc = ops.top_k(rows[0], 8).operator_desc
    before = scrape(cuda_server)
    results = list(cuda.map(desc, [[row] for row in rows]))
    with ThreadPoolExecutor(16) as pool:
        unary = list(pool.map(lambda row: cuda.execute(desc, [row]), rows))
    after = scrape(cuda_server)
    for row, (values, indices), (unary_values, unary_indices) in zip(rows, results, unary, strict=True):
        expected = np.sort(row, axis=1)[:, ::-1][:, :8]
        np.testing.assert_array_equal(values, expected)
        np.testing.assert_array_equal(unary_values, expected)
        np.testing.assert_array_equal(indices, unary_indices)
    runs = after[("dmlrpc_batch_size_count", ())] - before[("dmlrpc_batch_size_count", ())]
    requests = after[("dmlrpc_batch_size_sum", ())] - before[("dmlrpc_batch_size_sum", ())]
    assert requests == 2 * len(rows) and runs < requests / 2, (runs, requests)


def test_log_softmax_of_large_inputs_is_exact_on_cuda(cuda: dmlrpc.Client) -> None:
    """ONNX's test_logsoftmax_large_number, the one CUDA miss of its operator cases, through LOG_SOFTMAX."""
    check_log_softmax_of_large_inputs(cuda)
