"""Request-level validation, size limits and feature levels, over the real server and channel.

Also home of the helpers that ``test_validation_tensor.py`` and ``test_validation_ops.py`` share: a refusal
(status code, message and google.rpc.BadRequest field violations) read either through the SDK or through the
raw generated stub, for requests the SDK's own encoding would refuse to build.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import grpc
import numpy as np
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

import dmlrpc
from dmlrpc import ops
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc, tensor_pb2
from tests.conftest import ServerThread, start_server

INVALID = grpc.StatusCode.INVALID_ARGUMENT
EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
UNIMPLEMENTED = grpc.StatusCode.UNIMPLEMENTED
EXECUTE_METHOD = "/dmlrpc.v1.DirectMLService/Execute"
FL = operators_pb2.FeatureLevel


@dataclass(frozen=True)
class Refusal:
    """A failed Execute: its status code, message and (field, description) violations."""

    code: grpc.StatusCode
    message: str
    violations: tuple[tuple[str, str], ...]


def binding(data: bytes | None) -> service_pb2.BindingDesc:
    """A buffer binding, or an unset one for ``None``."""
    if data is None:
        return service_pb2.BindingDesc()
    return service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=data))


def raw_refusal(address: str, request: service_pb2.ExecuteRequest | bytes) -> Refusal:
    """Send a request through the generated stub (or raw bytes, unserialised) and read the error it gets."""
    with grpc.insecure_channel(address) as channel:
        if isinstance(request, bytes):
            call = channel.unary_unary(EXECUTE_METHOD, request_serializer=None, response_deserializer=None)
        else:
            call = service_pb2_grpc.DirectMLServiceStub(channel).Execute
        with pytest.raises(grpc.RpcError) as info:
            call(request, timeout=60)
    error = info.value
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    violations: list[tuple[str, str]] = []
    for detail in status.details if status is not None else ():
        bad_request = error_details_pb2.BadRequest()
        assert detail.Unpack(bad_request), detail.type_url
        violations.extend((v.field, v.description) for v in bad_request.field_violations)
    return Refusal(error.code(), error.details(), tuple(violations))  # type: ignore[attr-defined]


def raw_execute(
    address: str, operator_desc: operators_pb2.OperatorDesc, buffers: Sequence[bytes | None]
) -> service_pb2.ExecuteResponse:
    with grpc.insecure_channel(address) as channel:
        request = service_pb2.ExecuteRequest(operator_desc=operator_desc, inputs=[binding(b) for b in buffers])
        return service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=60)  # type: ignore[no-any-return]


def raw_desc_refusal(
    address: str, operator_desc: operators_pb2.OperatorDesc, buffers: Sequence[bytes | None]
) -> Refusal:
    request = service_pb2.ExecuteRequest(operator_desc=operator_desc, inputs=[binding(b) for b in buffers])
    return raw_refusal(address, request)


def sdk_refusal(client: dmlrpc.Client, operator_desc: operators_pb2.OperatorDesc, inputs: Sequence[object]) -> Refusal:
    """Execute through the SDK, which must raise a DmlRpcError (never a raw grpc.RpcError)."""
    with pytest.raises(dmlrpc.DmlRpcError) as info:
        client.execute(operator_desc, inputs)  # type: ignore[arg-type]
    error = info.value
    assert isinstance(error.__cause__, grpc.RpcError)
    return Refusal(error.code, error.message, tuple((v.field, v.description) for v in error.field_violations))


def assert_violation(refusal: Refusal, field: str, *fragments: str) -> None:
    """INVALID_ARGUMENT with exactly one violation on ``field`` whose description contains ``fragments``."""
    assert refusal.code == INVALID, refusal
    assert [f for f, _ in refusal.violations] == [field], refusal
    description = refusal.violations[0][1]
    assert refusal.message == f"{field}: {description}"
    for fragment in fragments:
        assert fragment in description, refusal


def assert_status(refusal: Refusal, code: grpc.StatusCode, *fragments: str) -> None:
    """A status without field violations (UNIMPLEMENTED, RESOURCE_EXHAUSTED) whose message has ``fragments``."""
    assert refusal.code == code, refusal
    assert refusal.violations == (), refusal
    for fragment in fragments:
        assert fragment in refusal.message, refusal


def as_case(call: ops.Call, case: str) -> operators_pb2.OperatorDesc:
    """The call's top_k1 desc, or the same desc as DML_TOP_K_OPERATOR_DESC (always decreasing)."""
    if case == "top_k1":
        return call.operator_desc
    k1 = call.operator_desc.top_k1
    assert k1.axis_direction == tensor_pb2.AXIS_DIRECTION_DECREASING
    return operators_pb2.OperatorDesc(
        top_k=operators_pb2.TopKOperatorDesc(
            input_tensor=k1.input_tensor,
            output_value_tensor=k1.output_value_tensor,
            output_index_tensor=k1.output_index_tensor,
            axis=k1.axis,
            k=k1.k,
        )
    )


def top_k_call(k: int = 2, shape: tuple[int, ...] = (2, 3), dtype: str = "float32", **kwargs: object) -> ops.Call:
    """A valid top_k1 request over distinct values, ready to be broken one rule at a time."""
    data = np.random.default_rng(7).permutation(int(np.prod(shape))).reshape(shape).astype(dtype)
    return ops.top_k(data, k, **kwargs)  # type: ignore[arg-type]


def expected_top_k(data: np.ndarray, k: int, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Largest k along ``axis``, decreasing, ties by ascending index."""
    order = np.argsort(-data.astype(np.float64), axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(data, indices, axis=axis), indices


# --- request level -------------------------------------------------------------------------------------------


def test_operator_desc_without_a_case_is_invalid(server: ServerThread) -> None:
    refusal = raw_refusal(server.address, service_pb2.ExecuteRequest(operator_desc=operators_pb2.OperatorDesc()))
    assert_violation(refusal, "operator_desc.desc", "no operator desc")


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


@pytest.mark.parametrize(
    ("field_number", "name"),
    [(178, "operator type 178"), (500, "operator type 500")],
)
def test_unknown_operator_desc_case_from_a_newer_client_is_unimplemented(
    server: ServerThread, field_number: int, name: str
) -> None:
    # What a client built from a newer proto sends: OperatorDesc with a case this server's proto lacks.
    operator_desc = _varint(field_number << 3 | 2) + b"\x00"
    request = b"\x0a" + _varint(len(operator_desc)) + operator_desc
    refusal = raw_refusal(server.address, request)
    assert_status(refusal, UNIMPLEMENTED, name, "not executable", f"unknown OperatorDesc case {field_number}")


@pytest.mark.parametrize("count", [0, 2, 5])
def test_wrong_number_of_input_bindings(server: ServerThread, count: int) -> None:
    call = top_k_call()
    data = call.inputs[0].tobytes()  # type: ignore[union-attr]
    refusal = raw_desc_refusal(server.address, call.operator_desc, [data] * count)
    assert_violation(refusal, "inputs", f"{count} bindings for 1 input tensor fields")


def test_buffer_shorter_than_total_tensor_size(client: dmlrpc.Client) -> None:
    call = top_k_call()
    short = call.inputs[0].tobytes()[:-4]  # type: ignore[union-attr]
    assert_violation(sdk_refusal(client, call.operator_desc, [short]), "inputs[0].buffer.data", "20 bytes", "(24)")


def test_short_buffer_of_a_later_binding_names_its_index(client: dmlrpc.Client) -> None:
    call = ops.scatter_elements(np.zeros((2, 3), np.float32), np.array([[1, 0, 1]], np.int64), np.ones((1, 3)))
    data, indices, updates = (a.tobytes() for a in call.inputs)  # type: ignore[union-attr]
    refusal = sdk_refusal(client, call.operator_desc, [data, indices, updates[:4]])
    assert_violation(refusal, "inputs[2].buffer.data", "4 bytes", "(12)")


def test_buffer_longer_than_total_tensor_size_is_accepted(client: dmlrpc.Client) -> None:
    call = top_k_call()
    values, indices = client.execute(call.operator_desc, [call.inputs[0].tobytes() + b"\xff" * 13])  # type: ignore[union-attr]
    expected_values, expected_indices = expected_top_k(call.inputs[0], 2)  # type: ignore[arg-type]
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(indices, expected_indices)


@pytest.mark.parametrize("unset", [0, 2])
def test_unset_binding_for_a_required_tensor(server: ServerThread, unset: int) -> None:
    call = ops.scatter_elements(np.zeros((2, 3), np.float32), np.array([[1, 0, 1]], np.int64), np.ones((1, 3)))
    buffers: list[bytes | None] = [a.tobytes() for a in call.inputs]  # type: ignore[union-attr]
    buffers[unset] = None
    refusal = raw_desc_refusal(server.address, call.operator_desc, buffers)
    assert_violation(refusal, f"inputs[{unset}]", "buffer binding is required")


def test_large_requests_run_on_workers_and_report_the_same_errors(client: dmlrpc.Client) -> None:
    # Requests above the server's inline_bytes (64 KiB) run on worker threads; errors map the same way there.
    data = np.zeros((256, 128), np.float32)  # 128 KiB
    indices = np.tile(np.arange(128, dtype=np.int32), (2, 1)) % 256
    indices[1] += 128
    (output,) = client.execute(*_scatter_rows(data, indices))
    expected = data.copy()
    np.put_along_axis(expected, indices.astype(np.int64), 1.0, axis=0)
    np.testing.assert_array_equal(output, expected)
    indices[1, 77] = 256
    refusal = sdk_refusal(client, *_scatter_rows(data, indices))
    assert_violation(refusal, "inputs[1].buffer.data", "index value 256 at indices_tensor position [1, 77]")


def _scatter_rows(data: np.ndarray, indices: np.ndarray) -> tuple[operators_pb2.OperatorDesc, tuple[object, ...]]:
    call = ops.scatter_elements(data, indices, np.ones(indices.shape, np.float32), 0)
    return call.operator_desc, call.inputs


# --- size limits ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_server() -> Iterator[ServerThread]:
    """4 KiB per tensor, 8 KiB per request (all tensors), 64 KiB per message."""
    running = start_server(max_tensor_bytes=4096, max_request_bytes=8192, max_message_bytes=65536)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def small_messages() -> Iterator[ServerThread]:
    """4 KiB messages, generous tensor and request limits."""
    running = start_server(max_message_bytes=4096)
    yield running
    running.stop()


def test_tensor_over_max_tensor_bytes(small_server: ServerThread) -> None:
    call = top_k_call(k=1, shape=(2, 513))  # input 4104 bytes; outputs 8 bytes each
    with dmlrpc.Client(small_server.address, timeout=60) as sdk:
        refusal = sdk_refusal(sdk, call.operator_desc, call.inputs)
    assert_status(refusal, EXHAUSTED, "operator_desc.top_k1.input_tensor.buffer.total_tensor_size_in_bytes = 4104")


def test_tensor_at_max_tensor_bytes_is_accepted(small_server: ServerThread) -> None:
    call = top_k_call(k=1, shape=(2, 512))  # exactly 4096 bytes
    with dmlrpc.Client(small_server.address, timeout=60) as sdk:
        values, indices = sdk.execute(call.operator_desc, call.inputs)
    expected_values, expected_indices = expected_top_k(call.inputs[0], 1)  # type: ignore[arg-type]
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(indices, expected_indices)


def test_request_over_max_request_bytes(small_server: ServerThread) -> None:
    call = top_k_call(k=1024, shape=(1024,))  # 4096 bytes each for input, values and indices: 12288 in all
    with dmlrpc.Client(small_server.address, timeout=60) as sdk:
        refusal = sdk_refusal(sdk, call.operator_desc, call.inputs)
    assert_status(refusal, EXHAUSTED, "12288 bytes", "8192")


def test_outputs_over_max_message_bytes_are_refused_before_running(small_messages: ServerThread) -> None:
    call = top_k_call(k=512, shape=(512,), index_dtype=np.uint64)  # request ~2 KiB; outputs 2048 + 4096 bytes
    with dmlrpc.Client(small_messages.address, timeout=60) as sdk:
        refusal = sdk_refusal(sdk, call.operator_desc, call.inputs)
    assert_status(refusal, EXHAUSTED, "6144 bytes", "message limit of 4096")


@pytest.mark.parametrize("n", [510, 512])
def test_outputs_at_the_message_limit_are_refused_up_front(small_messages: ServerThread, n: int) -> None:
    # Outputs of 8 * n bytes (4080 / 4096) pass `response_bytes > max_message_bytes`, but the response message
    # carries a few bytes of tags and lengths more: the server computes the result, then gRPC refuses to send it
    # ("SERVER: Sent message larger than max (4098 vs. 4096)"), and logs an ExecuteBatchError traceback.
    call = top_k_call(k=n, shape=(n,))
    with dmlrpc.Client(small_messages.address, timeout=60) as sdk:
        refusal = sdk_refusal(sdk, call.operator_desc, call.inputs)
    assert_status(refusal, EXHAUSTED, "over the message limit of 4096")


def test_outputs_well_under_the_message_limit_are_sent(small_messages: ServerThread) -> None:
    call = top_k_call(k=500, shape=(500,))  # 4000 bytes of outputs plus framing fits in 4096
    with dmlrpc.Client(small_messages.address, timeout=60) as sdk:
        values, indices = sdk.execute(call.operator_desc, call.inputs)
    np.testing.assert_array_equal(values, np.sort(call.inputs[0])[::-1])  # type: ignore[arg-type]
    np.testing.assert_array_equal(call.inputs[0][indices], values)  # type: ignore[index]


def test_request_message_over_max_message_bytes(small_messages: ServerThread) -> None:
    call = top_k_call(k=1, shape=(2048,))  # an 8 KiB input buffer in a 4 KiB message limit
    with dmlrpc.Client(small_messages.address, timeout=60) as sdk, pytest.raises(dmlrpc.ResourceExhaustedError) as info:
        sdk.execute(call.operator_desc, call.inputs)
    assert info.value.code == EXHAUSTED
    assert info.value.field_violations == ()


def broadcast_call(sizes: tuple[int, int], k: int) -> tuple[operators_pb2.OperatorDesc, bytes]:
    """top_k1 along axis 1 of a UINT8 input whose rows all view one 256-byte row (stride 0 on axis 0)."""
    row = np.random.default_rng(3).permutation(256).astype(np.uint8)
    strides = [0, 1] if sizes[1] == 256 else [0, 0]
    desc = operators_pb2.TopK1OperatorDesc(
        input_tensor=tensor_desc((np.uint8, sizes), strides),
        output_value_tensor=tensor_desc((np.uint8, (sizes[0], k))),
        output_index_tensor=tensor_desc((np.uint32, (sizes[0], k))),
        axis=1,
        k=k,
        axis_direction=tensor_pb2.AXIS_DIRECTION_DECREASING,
    )
    return operators_pb2.OperatorDesc(top_k1=desc), row.tobytes()


def test_stride_zero_input_counts_its_materialised_size(small_server: ServerThread) -> None:
    # 64 x 256 UINT8 elements from a 256-byte buffer: 16 KiB once materialised for ONNX Runtime, over 4 KiB.
    operator_desc, row = broadcast_call((64, 256), k=3)
    refusal = raw_desc_refusal(small_server.address, operator_desc, [row])
    assert_status(refusal, EXHAUSTED, "operator_desc.top_k1.input_tensor.buffer.sizes")


def test_stride_zero_input_within_limits_is_computed(small_server: ServerThread) -> None:
    # 8 x 256 elements (2 KiB materialised) from a 256-byte buffer.
    operator_desc, row = broadcast_call((8, 256), k=3)
    assert operator_desc.top_k1.input_tensor.buffer.total_tensor_size_in_bytes == 256
    with dmlrpc.Client(small_server.address, timeout=60) as sdk:
        values, indices = sdk.execute(operator_desc, [row])
    expected_values, expected_indices = expected_top_k(np.frombuffer(row, np.uint8)[None, :], 3)
    np.testing.assert_array_equal(values, np.repeat(expected_values, 8, axis=0))
    np.testing.assert_array_equal(indices, np.repeat(expected_indices, 8, axis=0))


def test_stride_zero_input_of_2_pow_32_minus_2_pow_16_elements_is_refused_up_front(
    small_server: ServerThread,
) -> None:
    # The input passes every tensor rule (65536 * 65535 < 2^32 elements, last index 0, 4 bytes); the server
    # refuses it before allocating anything: about 4 GiB once materialised, over the 4 KiB per-tensor limit.
    operator_desc, _ = broadcast_call((65536, 65535), k=1)
    assert operator_desc.top_k1.input_tensor.buffer.total_tensor_size_in_bytes == 4
    refusal = raw_desc_refusal(small_server.address, operator_desc, [b"\x07\x00\x00\x00"])
    assert_status(refusal, EXHAUSTED, "operator_desc.top_k1.input_tensor.buffer.sizes")


def test_stride_zero_input_of_2_pow_32_elements_is_invalid(small_server: ServerThread) -> None:
    operator_desc, _ = broadcast_call((65536, 65536), k=1)
    refusal = raw_desc_refusal(small_server.address, operator_desc, [b"\x07\x00\x00\x00"])
    assert_violation(refusal, "operator_desc.top_k1.input_tensor.buffer.sizes", "4294967296 elements", "2^32 - 1")


# --- feature levels -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fl30_client() -> Iterator[dmlrpc.Client]:
    running = start_server(feature_level=FL.FEATURE_LEVEL_3_0)
    with dmlrpc.Client(running.address, timeout=60) as sdk:
        yield sdk
    running.stop()


def test_feature_level_3_0_top_k1_needs_exactly_4_dimensions(fl30_client: dmlrpc.Client) -> None:
    call = top_k_call(shape=(2, 3))
    refusal = sdk_refusal(fl30_client, call.operator_desc, call.inputs)
    assert_violation(refusal, "operator_desc.top_k1.input_tensor.buffer.sizes", "2 dimensions", "supports 4")


def test_feature_level_3_0_top_k1_in_4_dimensions_is_computed(fl30_client: dmlrpc.Client) -> None:
    call = top_k_call(shape=(1, 2, 2, 3), k=2)
    values, indices = fl30_client.execute(call.operator_desc, call.inputs)
    expected_values, expected_indices = expected_top_k(call.inputs[0], 2)  # type: ignore[arg-type]
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(indices, expected_indices)


@pytest.mark.parametrize(
    ("dtype", "index_dtype", "field"),
    [("int64", np.uint32, "input_tensor"), ("float32", np.uint64, "output_index_tensor")],
)
def test_feature_level_3_0_has_no_64_bit_top_k(
    fl30_client: dmlrpc.Client, dtype: str, index_dtype: type, field: str
) -> None:
    call = top_k_call(shape=(1, 1, 2, 3), dtype=dtype, index_dtype=index_dtype)
    refusal = sdk_refusal(fl30_client, call.operator_desc, call.inputs)
    assert_violation(refusal, f"operator_desc.top_k1.{field}.buffer.data_type", "64 is not supported here")


def test_operator_newer_than_the_feature_level_is_unimplemented() -> None:
    running = start_server(feature_level=FL.FEATURE_LEVEL_2_0)
    try:
        call = ops.scatter_nd(np.zeros((1, 1, 1, 4), np.float32), np.array([[[[2]]]], np.uint32), np.ones((1, 1, 1, 1)))
        with dmlrpc.Client(running.address, timeout=60) as sdk:
            refusal = sdk_refusal(sdk, call.operator_desc, call.inputs)
    finally:
        running.stop()
    assert_status(refusal, UNIMPLEMENTED, "DML_OPERATOR_SCATTER_ND", "newer feature level")
