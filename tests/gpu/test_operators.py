"""Every executable operator on ONNX Runtime's CUDA provider (run on a GPU machine; skipped elsewhere): the tests of
tests/ops (doc examples, and a sample of each property test) against the same NumPy references, plus FLOAT32 matrix
products computed as FLOAT32 unless the request allows half-precision computation."""

from __future__ import annotations

import os
from collections.abc import Iterator

import grpc
import numpy as np
import onnxruntime as ort
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from dmlrpc_server.interceptors import EXECUTED_ON_KEY
from tests.conftest import ServerThread, scrape, start_server
from tests.ops.test_element_wise import OPERATORS as ELEMENT_WISE
from tests.provider_cases import LaneClient, not_run, operator_tests

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(
        "CUDAExecutionProvider" not in ort.get_available_providers(), reason="ONNX Runtime's CUDA provider is absent"
    ),
]

#: Generated examples per property test (each new desc is a new CUDA session).
EXAMPLES = int(os.environ.get("DMLRPC_GPU_OPERATOR_EXAMPLES", "3"))
HALF = service_pb2.EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION


@pytest.fixture(scope="module")
def cuda_server() -> Iterator[ServerThread]:
    running = start_server(provider="cuda")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def client(cuda_server: ServerThread) -> Iterator[LaneClient]:
    with dmlrpc.Client(cuda_server.address, timeout=120) as sdk:
        yield LaneClient(sdk.execute, lambda: sdk)


# The element-wise and activation operators have their own CUDA test (test_cuda.py).
globals().update(operator_tests(EXAMPLES, exclude={"element_wise"}))


def test_every_executable_operator_ran_on_cuda(cuda_server: ServerThread, client: LaneClient) -> None:
    # Collected after the moved tests: by now each has run its operator on the CUDA server.
    assert not not_run(client.cases, covered=ELEMENT_WISE)
    fallbacks = {key: value for key, value in scrape(cuda_server).items() if key[0].startswith("dmlrpc_provider_fall")}
    print(f"\ndescs the CUDA provider did not run in full: {fallbacks}")


def test_float32_matrix_products_are_float32_unless_half_precision_is_allowed(client: LaneClient) -> None:
    # TF32 keeps 10 mantissa bits: a product of values with 23 significant bits, summed over 1024 terms, is off by
    # about 1e-4 relative in TF32 and by about 1e-6 in FLOAT32.
    rng = np.random.default_rng(7)
    a = (1 + rng.random((64, 1024))).astype(np.float32)
    b = (1 + rng.random((1024, 64))).astype(np.float32)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    call = ops.gemm(a, b)
    (exact,) = client.execute(call.operator_desc, list(call.inputs))
    (fast,) = client.execute(call.operator_desc, list(call.inputs), execution_flags=HALF)
    exact, fast = np.asarray(exact).reshape(expected.shape), np.asarray(fast).reshape(expected.shape)
    print(
        f"\nGEMM 64x1024x64 max relative error: {np.max(np.abs(exact / expected - 1)):.2e} as FLOAT32, "
        f"{np.max(np.abs(fast / expected - 1)):.2e} with half precision allowed"
    )
    np.testing.assert_allclose(exact, expected, rtol=1e-5)
    np.testing.assert_allclose(fast, expected, rtol=1e-2)


def test_a_desc_the_device_runs_in_full_has_no_executed_on_trailer(cuda_server: ServerThread) -> None:
    x = np.ones((4, 4), np.float32)
    call = ops.gemm(x, x)
    request = service_pb2.ExecuteRequest(
        operator_desc=call.operator_desc,
        inputs=[service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=x.tobytes()))] * 2
        + [service_pb2.BindingDesc()],
    )
    with grpc.insecure_channel(cuda_server.address) as channel:
        _, rpc = service_pb2_grpc.DirectMLServiceStub(channel).Execute.with_call(request, timeout=60)
    assert EXECUTED_ON_KEY not in dict(rpc.trailing_metadata() or ())
