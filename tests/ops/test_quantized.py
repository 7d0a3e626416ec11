"""QUANTIZE, DEQUANTIZE, DYNAMIC_QUANTIZE_LINEAR and the quantized-linear operators over the wire."""

from __future__ import annotations

from typing import Any, cast

import grpc
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc._base import prepare_execute
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc, tensor_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators import REGISTRY
from dmlrpc_server.operators.base import Limits
from tests.conftest import ServerThread
from tests.references import quantized as ref
from tests.strategies import arrays, broadcast_values, layouts

FL = operators_pb2
SCALE, SCALE_ZERO_POINT = operators_pb2.QUANTIZATION_TYPE_SCALE, operators_pb2.QUANTIZATION_TYPE_SCALE_ZERO_POINT
LIMITS = Limits(max_tensor_bytes=1 << 20, max_request_bytes=1 << 22, max_message_bytes=1 << 22)
INTEGERS = [np.int8, np.uint8]
#: Powers of two: every FLOAT32 product and quotient of the lowering is exact, so results compare bit for bit
#: (ties included, which must round half to even).
POWERS = st.sampled_from([0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0])


def run(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[Any]) -> list[np.ndarray]:
    outputs = client.execute(desc, inputs)
    assert all(isinstance(output, np.ndarray) for output in outputs)
    return cast(list[np.ndarray], outputs)


def invalid(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[Any], field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field == field


def optional(value: np.ndarray | None) -> operators_pb2.TensorDesc | None:
    return None if value is None else tensor_desc(value)


# QUANTIZE and DEQUANTIZE


def quantization_desc(
    case: str,
    x: Any,
    params: list[Any],
    out: Any,
    *,
    kind: int | None = None,
    count: int | None = None,
    strides: Any = None,
) -> operators_pb2.OperatorDesc:
    strides = strides or [None] * len(params)
    message = operators_pb2.QuantizeOperatorDesc if case == "quantize" else operators_pb2.DequantizeOperatorDesc
    inner = message(
        input_tensor=tensor_desc(x),
        quantization_type=kind if kind is not None else (SCALE if len(params) == 1 else SCALE_ZERO_POINT),  # type: ignore[arg-type]
        quantization_tensor_count=len(params) if count is None else count,
        quantization_tensors=[tensor_desc(p, s) for p, s in zip(params, strides, strict=True)],
        output_tensor=tensor_desc(out),
    )
    return operators_pb2.OperatorDesc(**{case: inner})


def _parameter(
    data: st.DataObject, values: st.SearchStrategy[np.ndarray], shape: tuple[int, ...]
) -> tuple[np.ndarray, Any]:
    """A scale or zero point with the input's sizes: per tensor, per axis (broadcast) or per element."""
    layout = data.draw(layouts(shape, allow_broadcast=True), label="parameter layout")
    return broadcast_values(data.draw(values, label="parameter"), layout), layout.strides


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_quantize_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([np.float32, np.float16]), label="input dtype")
    out_type = data.draw(st.sampled_from(INTEGERS), label="output dtype")
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4), label="shape"))
    x = data.draw(arrays(dtype, shape), label="x") * 16
    scale_values = st.sampled_from([0.1, 0.25, 0.3, 1.0, 2.5]).map(lambda v: np.full(shape, v, dtype))
    scale, scale_strides = _parameter(data, scale_values, shape)
    params, strides = [scale], [scale_strides]
    zero = None
    if data.draw(st.booleans(), label="zero point"):
        zero, zero_strides = _parameter(data, arrays(out_type, shape), shape)
        params.append(zero)
        strides.append(zero_strides)
    (got,) = run(client, quantization_desc("quantize", x, params, (out_type, shape), strides=strides), [x, params])
    assert got.dtype == out_type
    np.testing.assert_array_equal(got, ref.quantize_op(x, scale, zero, out_type))


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_dequantize_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    in_type = data.draw(st.sampled_from(INTEGERS), label="input dtype")
    out_type = data.draw(st.sampled_from([np.float32, np.float16]), label="output dtype")
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4), label="shape"))
    x = data.draw(arrays(in_type, shape), label="x")
    scale_values = arrays(out_type, shape).map(lambda v: np.abs(v) + np.asarray(0.5, out_type))
    scale, scale_strides = _parameter(data, scale_values, shape)
    params, strides = [scale], [scale_strides]
    zero = None
    if data.draw(st.booleans(), label="zero point"):
        zero, zero_strides = _parameter(data, arrays(in_type, shape), shape)
        params.append(zero)
        strides.append(zero_strides)
    (got,) = run(client, quantization_desc("dequantize", x, params, (out_type, shape), strides=strides), [x, params])
    assert got.dtype == out_type
    tolerance = 1e-3 if out_type == np.float16 else 0
    np.testing.assert_allclose(got, ref.dequantize_op(x, scale, zero, out_type), rtol=tolerance)


def test_quantize_rounds_half_to_even_and_saturates(client: dmlrpc.Client) -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1000.0, -1000.0], np.float32)
    scale = np.ones_like(x)
    (got,) = run(client, quantization_desc("quantize", x, [scale], (np.int8, x.shape)), [x, [scale]])
    np.testing.assert_array_equal(got, [0, 2, 2, 0, -2, 127, -128])
    zero = np.full(x.shape, 10, np.uint8)
    (got,) = run(client, quantization_desc("quantize", x, [scale, zero], (np.uint8, x.shape)), [x, [scale, zero]])
    np.testing.assert_array_equal(got, [10, 12, 12, 10, 8, 255, 0])


def test_dequantize_per_axis_scale_through_zero_strides(client: dmlrpc.Client) -> None:
    x = np.arange(6, dtype=np.uint8).reshape(2, 3)
    scale = np.broadcast_to(np.array([[1.0], [0.5]], np.float32), (2, 3))
    zero = np.broadcast_to(np.array([1, 2, 3], np.uint8), (2, 3))
    desc = quantization_desc("dequantize", x, [scale, zero], (np.float32, (2, 3)), strides=[(1, 0), (0, 1)])
    (got,) = run(client, desc, [x, [scale, zero]])
    np.testing.assert_array_equal(got, [[-1, -1, -1], [1, 1, 1]])


F4 = np.zeros((2, 2), np.float32)
U4 = np.zeros((2, 2), np.uint8)


@pytest.mark.parametrize(
    ("case", "x", "params", "out", "options", "field"),
    [
        ("quantize", F4, [F4], U4, {"kind": 0}, "quantization_type"),
        ("quantize", F4, [F4], U4, {"kind": 3}, "quantization_type"),
        ("quantize", F4, [F4], U4, {"count": 2}, "quantization_tensor_count"),
        ("quantize", F4, [F4, U4], U4, {"kind": SCALE}, "quantization_tensors"),
        ("quantize", F4, [F4], U4, {"kind": SCALE_ZERO_POINT}, "quantization_tensors"),
        ("quantize", F4, [F4, U4.astype(np.int8)], U4, {}, "quantization_tensors[1].buffer.data_type"),
        ("quantize", F4, [U4], U4, {}, "quantization_tensors[0].buffer.data_type"),
        ("quantize", F4, [np.zeros((2, 1), np.float32)], U4, {}, "quantization_tensors[0].buffer.sizes"),
        ("quantize", F4, [np.zeros((1, 2, 2), np.float32)], U4, {}, "quantization_tensors[0].buffer.sizes"),
        ("quantize", F4, [F4], np.zeros((2, 3), np.uint8), {}, "output_tensor.buffer.sizes"),
        ("quantize", F4, [F4], F4, {}, "output_tensor.buffer.data_type"),
        ("quantize", U4, [F4], U4, {}, "input_tensor.buffer.data_type"),
        ("dequantize", U4, [F4, U4.astype(np.int8)], F4, {}, "quantization_tensors[1].buffer.data_type"),
        ("dequantize", U4, [U4], F4, {}, "quantization_tensors[0].buffer.data_type"),
        ("dequantize", U4, [F4], U4, {}, "output_tensor.buffer.data_type"),
        ("dequantize", np.zeros((2, 2), np.int32), [F4], F4, {}, "input_tensor.buffer.data_type"),
    ],
)
def test_quantization_rules(
    client: dmlrpc.Client, case: str, x: Any, params: list[Any], out: Any, options: dict[str, Any], field: str
) -> None:
    invalid(client, quantization_desc(case, x, params, out, **options), [x, params], f"operator_desc.{case}.{field}")


def test_quantize_batches_requests_of_one_desc_with_unary_results(server: ServerThread) -> None:
    # The element-wise batch rule: ExecuteMany stacks items of one desc (scale broadcast through zero strides).
    rng = np.random.default_rng(3)
    scale = np.broadcast_to(np.array([0.5, 0.25, 2.0], np.float32), (4, 3))
    zero = np.broadcast_to(np.array([[1], [2], [3], [4]], np.int8), (4, 3))
    desc = quantization_desc("quantize", (np.float32, (4, 3)), [scale, zero], (np.int8, (4, 3)))
    desc.quantize.quantization_tensors[0].CopyFrom(tensor_desc(scale, (0, 1)))
    desc.quantize.quantization_tensors[1].CopyFrom(tensor_desc(zero, (1, 0)))
    inputs = [(rng.standard_normal((4, 3)) * 20).astype(np.float32) for _ in range(24)]
    requests = [prepare_execute(desc, [x, [scale, zero]]).request for x in inputs]
    with grpc.insecure_channel(server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        unary = [stub.Execute(request, timeout=30) for request in requests]
        message = service_pb2.ExecuteManyRequest(
            items=[service_pb2.ExecuteItem(tag=i, execute=r) for i, r in enumerate(requests)]
        )
        results = {r.tag: r for response in stub.ExecuteMany(iter([message]), timeout=30) for r in response.results}
    for index, (x, response) in enumerate(zip(inputs, unary, strict=True)):
        assert results[index].status.code == 0 and results[index].response == response
        got = np.frombuffer(response.outputs[0].buffer.data, np.int8)[:12].reshape(4, 3)
        np.testing.assert_array_equal(got, ref.quantize_op(x, scale, zero, np.int8))


def test_quantize_needs_feature_level_6_3() -> None:
    desc = quantization_desc("quantize", F4, [F4], U4)
    REGISTRY["quantize"].plan(desc.quantize, feature_level=FL.FEATURE_LEVEL_6_3, limits=LIMITS)
    assert REGISTRY["quantize"].support_at(FL.FEATURE_LEVEL_6_2) is None
    assert REGISTRY["dequantize"].support_at(FL.FEATURE_LEVEL_6_2) is None


def test_four_bit_tensors_are_refused_by_name() -> None:
    # The page lists INT4/UINT4; the codec carries no 4-bit tensors, so they are refused, never an internal error.
    desc = quantization_desc("dequantize", U4, [F4], F4)
    desc.dequantize.input_tensor.buffer.data_type = tensor_pb2.TENSOR_DATA_TYPE_UINT4
    with pytest.raises(InvalidArgument) as caught:
        REGISTRY["dequantize"].plan(desc.dequantize, feature_level=FL.FEATURE_LEVEL_6_4, limits=LIMITS)
    assert caught.value.field == "operator_desc.dequantize.input_tensor.buffer.data_type"


# DYNAMIC_QUANTIZE_LINEAR


def dynamic_desc(x: Any, out: Any, scale: Any = (np.float32, (1,)), zero: Any = None) -> operators_pb2.OperatorDesc:
    zero = zero if zero is not None else (out[0] if isinstance(out, tuple) else out.dtype, (1,) * len(scale[1]))
    return operators_pb2.OperatorDesc(
        dynamic_quantize_linear=operators_pb2.DynamicQuantizeLinearOperatorDesc(
            input_tensor=tensor_desc(x),
            output_tensor=tensor_desc(out),
            output_scale_tensor=tensor_desc(scale),
            output_zero_point_tensor=tensor_desc(zero),
        )
    )


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_dynamic_quantize_linear_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([np.float32, np.float16]), label="input dtype")
    out_type = data.draw(st.sampled_from(INTEGERS), label="output dtype")
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4), label="shape"))
    layout = data.draw(layouts(shape, allow_broadcast=True), label="layout")
    x = broadcast_values(data.draw(arrays(dtype, shape), label="x"), layout)
    ones = (1,) * len(shape)
    desc = dynamic_desc(x, (out_type, shape), (np.float32, ones), (out_type, ones))
    desc.dynamic_quantize_linear.input_tensor.CopyFrom(tensor_desc(x, layout.strides))
    got, scale, zero = run(client, desc, [x])
    expected, expected_scale, expected_zero = ref.dynamic_quantize_linear(x, out_type)
    assert got.dtype == out_type and zero.dtype == out_type and scale.shape == ones
    np.testing.assert_array_equal(scale.reshape(-1), [expected_scale])
    np.testing.assert_array_equal(zero.reshape(-1), [expected_zero])
    np.testing.assert_array_equal(got, expected)


def test_dynamic_quantize_linear_known_values(client: dmlrpc.Client) -> None:
    # ONNX's DynamicQuantizeLinear example values (a range holding 0; all-negative and all-positive inputs).
    for values, scale, zero in (
        ([0, 2, -3, -2.5, 1.34, 0.5], 5 / 255, 153),
        ([-1.0, -2.1, -1.3, -2.5, -3.34, -4.0], 4 / 255, 255),
        ([1, 2.1, 1.3, 2.5, 3.34, 4.0, 1.5, 2.6, 3.9, 4.0, 3.0, 2.345], 4 / 255, 0),
        ([0.0, 0.0], 0.0, 0),
    ):
        x = np.array(values, np.float32)
        got, got_scale, got_zero = run(client, dynamic_desc(x, (np.uint8, x.shape)), [x])
        np.testing.assert_allclose(got_scale, [scale], rtol=1e-6)
        assert int(got_zero[0]) == zero
        np.testing.assert_array_equal(got, ref.dynamic_quantize_linear(x, np.uint8)[0])


def test_dynamic_quantize_linear_rules(client: dmlrpc.Client) -> None:
    path = "operator_desc.dynamic_quantize_linear"
    invalid(
        client, dynamic_desc(F4, (np.uint8, (2, 3)), (np.float32, (1, 1))), [F4], f"{path}.output_tensor.buffer.sizes"
    )
    invalid(client, dynamic_desc(F4, U4, (np.float32, (1, 2))), [F4], f"{path}.output_scale_tensor.buffer.sizes")
    invalid(client, dynamic_desc(F4, U4, (np.float32, (1,))), [F4], f"{path}.output_scale_tensor.buffer.sizes")
    invalid(
        client,
        dynamic_desc(F4, U4, (np.float32, (1, 1)), (np.int8, (1, 1))),
        [F4],
        f"{path}.output_zero_point_tensor.buffer.data_type",
    )
    invalid(
        client,
        dynamic_desc(F4, U4, (np.float32, (1, 1)), (np.uint8, (2, 1))),
        [F4],
        f"{path}.output_zero_point_tensor.buffer.sizes",
    )


# QUANTIZED_LINEAR_MATRIX_MULTIPLY and MATRIX_MULTIPLY_INTEGER_TO_FLOAT


def qlmm_desc(tensors: dict[str, Any], strides: dict[str, Any] | None = None) -> operators_pb2.OperatorDesc:
    strides = strides or {}
    fields = {name: tensor_desc(value, strides.get(name)) for name, value in tensors.items() if value is not None}
    return operators_pb2.OperatorDesc(
        quantized_linear_matrix_multiply=operators_pb2.QuantizedLinearMatrixMultiplyOperatorDesc(**fields)
    )


def _matrix_shapes(data: st.DataObject) -> tuple[tuple[int, ...], int, int, int]:
    rank = data.draw(st.integers(2, 4), label="rank")
    batch = tuple(data.draw(st.lists(st.integers(1, 2), min_size=rank - 2, max_size=rank - 2), label="batch"))
    m, k, n = (data.draw(st.integers(1, 4), label=name) for name in "mkn")
    return batch, m, k, n


def _vector_shape(data: st.DataObject, count: int, per_row: bool, rank: int) -> tuple[int, ...]:
    """A per-tensor or per-row/column parameter shape, with or without the leading 1s (same for the row count)."""
    chosen = data.draw(st.sampled_from([1, count]), label="count")
    full = (*([1] * (rank - 2)), chosen, 1) if per_row else (*([1] * (rank - 1)), chosen)
    return full


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_quantized_linear_matrix_multiply_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    a_type, b_type, out_type = (data.draw(st.sampled_from(INTEGERS), label=name) for name in ("a", "b", "out"))
    batch, m, k, n = _matrix_shapes(data)
    rank = len(batch) + 2
    a_shape, b_shape, out_shape = (*batch, m, k), (*batch, k, n), (*batch, m, n)
    layout = {
        "a_tensor": data.draw(layouts(a_shape, allow_broadcast=True), label="a layout"),
        "b_tensor": data.draw(layouts(b_shape, allow_broadcast=True), label="b layout"),
    }
    a = broadcast_values(data.draw(arrays(a_type, a_shape), label="a"), layout["a_tensor"])
    b = broadcast_values(data.draw(arrays(b_type, b_shape), label="b"), layout["b_tensor"])

    def scale(count: int, per_row: bool) -> np.ndarray:
        shape = _vector_shape(data, count, per_row, rank)
        return np.array(
            data.draw(st.lists(POWERS, min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))), np.float32
        ).reshape(shape)

    def zero(dtype: Any, count: int, per_row: bool) -> np.ndarray | None:
        if not data.draw(st.booleans(), label="with zero point"):
            return None
        return data.draw(arrays(dtype, _vector_shape(data, count, per_row, rank)), label="zero point")

    tensors = {
        "a_tensor": a,
        "a_scale_tensor": scale(m, True),
        "a_zero_point_tensor": zero(a_type, m, True),
        "b_tensor": b,
        "b_scale_tensor": scale(n, False),
        "b_zero_point_tensor": zero(b_type, n, False),
        "output_scale_tensor": scale(m, True),
        "output_zero_point_tensor": zero(out_type, m, True),
    }
    desc = qlmm_desc({**tensors, "output_tensor": (out_type, out_shape)}, {k: v.strides for k, v in layout.items()})
    (got,) = run(client, desc, list(tensors.values()))
    assert got.dtype == out_type
    np.testing.assert_array_equal(got, ref.quantized_linear_matrix_multiply(*tensors.values(), out_type))


def test_quantized_linear_matrix_multiply_known_values(client: dmlrpc.Client) -> None:
    # A [[1, 2], [3, 4]] - 1, B identity * 2 - 0, scales 0.5 * 0.5, output scale 0.25 zero point 10.
    one = (1, 1, 1, 1)
    tensors = {
        "a_tensor": np.array([[[[1, 2], [3, 4]]]], np.uint8),
        "a_scale_tensor": np.full(one, 0.5, np.float32),
        "a_zero_point_tensor": np.full(one, 1, np.uint8),
        "b_tensor": np.array([[[[2, 0], [0, 2]]]], np.int8),
        "b_scale_tensor": np.full(one, 0.5, np.float32),
        "b_zero_point_tensor": None,
        "output_scale_tensor": np.full(one, 0.25, np.float32),
        "output_zero_point_tensor": np.full(one, 10, np.int8),
    }
    desc = qlmm_desc({**tensors, "output_tensor": (np.int8, (1, 1, 2, 2))})
    (got,) = run(client, desc, list(tensors.values()))
    # (A - 1) x B = [[0, 2], [4, 6]] * 0.25 / 0.25 + 10
    np.testing.assert_array_equal(got, [[[[10, 12], [14, 16]]]])


I2 = np.zeros((2, 2), np.int8)
S1 = np.ones((1, 1), np.float32)
QLMM = "operator_desc.quantized_linear_matrix_multiply"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"a_zero_point_tensor": np.zeros((1, 1), np.uint8)}, "a_zero_point_tensor.buffer.data_type"),
        ({"output_zero_point_tensor": np.zeros((1, 1), np.uint8)}, "output_zero_point_tensor.buffer.data_type"),
        ({"a_scale_tensor": np.ones((1, 3, 1), np.float32)}, "b_scale_tensor.buffer.sizes"),
        ({"a_scale_tensor": np.ones((3, 1), np.float32)}, "a_scale_tensor.buffer.sizes"),
        ({"b_scale_tensor": np.ones((2, 1), np.float32)}, "b_scale_tensor.buffer.sizes"),
        ({"output_scale_tensor": np.ones((1, 2), np.float32)}, "output_scale_tensor.buffer.sizes"),
        ({"b_tensor": np.zeros((3, 2), np.int8)}, "b_tensor.buffer.sizes"),
        ({"output_tensor": (np.int8, (2, 3))}, "output_tensor.buffer.sizes"),
        ({"output_tensor": (np.int32, (2, 2))}, "output_tensor.buffer.data_type"),
        ({"a_scale_tensor": np.ones((1, 1), np.float16)}, "a_scale_tensor.buffer.data_type"),
    ],
)
def test_quantized_linear_matrix_multiply_rules(client: dmlrpc.Client, changes: dict[str, Any], field: str) -> None:
    tensors: dict[str, Any] = {
        "a_tensor": I2,
        "a_scale_tensor": S1,
        "b_tensor": I2,
        "b_scale_tensor": S1,
        "output_scale_tensor": S1,
        "output_tensor": (np.int8, (2, 2)),
        **changes,
    }
    inputs = [tensors.get(f.name) for f in REGISTRY["quantized_linear_matrix_multiply"].inputs]
    invalid(client, qlmm_desc(tensors), inputs, f"{QLMM}.{field}")


def test_quantized_linear_matrix_multiply_is_4d_before_4_0() -> None:
    tensors = {"a_tensor": I2, "a_scale_tensor": S1, "b_tensor": I2, "b_scale_tensor": S1, "output_scale_tensor": S1}
    desc = qlmm_desc({**tensors, "output_tensor": (np.int8, (2, 2))}).quantized_linear_matrix_multiply
    REGISTRY["quantized_linear_matrix_multiply"].plan(desc, feature_level=FL.FEATURE_LEVEL_4_0, limits=LIMITS)
    with pytest.raises(InvalidArgument) as caught:
        REGISTRY["quantized_linear_matrix_multiply"].plan(desc, feature_level=FL.FEATURE_LEVEL_2_1, limits=LIMITS)
    assert caught.value.field == f"{QLMM}.a_tensor.buffer.sizes"


def mmitf_desc(tensors: dict[str, Any], strides: dict[str, Any] | None = None) -> operators_pb2.OperatorDesc:
    strides = strides or {}
    fields = {name: tensor_desc(value, strides.get(name)) for name, value in tensors.items() if value is not None}
    return operators_pb2.OperatorDesc(
        matrix_multiply_integer_to_float=operators_pb2.MatrixMultiplyIntegerToFloatOperatorDesc(**fields)
    )


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_matrix_multiply_integer_to_float_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    in_type = data.draw(
        st.sampled_from([np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]), label="input dtype"
    )
    out_type = data.draw(st.sampled_from([np.float32, np.float16]), label="output dtype")
    batch, m, k, n = _matrix_shapes(data)
    rank = len(batch) + 2
    a_shape, b_shape, out_shape = (*batch, m, k), (*batch, k, n), (*batch, m, n)
    layout = {
        "a_tensor": data.draw(layouts(a_shape, allow_broadcast=True), label="a layout"),
        "b_tensor": data.draw(layouts(b_shape, allow_broadcast=True), label="b layout"),
    }
    small = st.integers(-20, 20) if np.dtype(in_type).kind == "i" else st.integers(0, 40)

    def values(shape: tuple[int, ...]) -> np.ndarray:
        count = int(np.prod(shape))
        return np.array(data.draw(st.lists(small, min_size=count, max_size=count)), in_type).reshape(shape)

    a = broadcast_values(values(a_shape), layout["a_tensor"])
    b = broadcast_values(values(b_shape), layout["b_tensor"])

    def scale(count: int, per_row: bool) -> np.ndarray:
        shape = _vector_shape(data, count, per_row, rank)
        return data.draw(arrays(out_type, shape), label="scale").astype(out_type) / 4 + np.asarray(0.25, out_type)

    def zero(count: int, per_row: bool) -> np.ndarray | None:
        if not data.draw(st.booleans(), label="with zero point"):
            return None
        return values(_vector_shape(data, count, per_row, rank))

    bias = data.draw(arrays(out_type, out_shape), label="bias") if data.draw(st.booleans(), label="bias") else None
    tensors = {
        "a_tensor": a,
        "a_scale_tensor": scale(m, True),
        "a_zero_point_tensor": zero(m, True),
        "b_tensor": b,
        "b_scale_tensor": scale(n, False),
        "b_zero_point_tensor": zero(n, False),
        "bias_tensor": bias,
    }
    desc = mmitf_desc({**tensors, "output_tensor": (out_type, out_shape)}, {k: v.strides for k, v in layout.items()})
    (got,) = run(client, desc, list(tensors.values()))
    assert got.dtype == out_type and got.shape == out_shape
    # FLOAT32 sums of terms up to ~3e4 (and FLOAT16's final rounding) against FLOAT64.
    tolerance = 3e-3 if out_type == np.float16 else 1e-5
    expected = ref.matrix_multiply_integer_to_float(*tensors.values())
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tolerance, atol=1e-2)


MMITF = "operator_desc.matrix_multiply_integer_to_float"
F2 = np.ones((2, 2), np.float32)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"b_tensor": np.zeros((2, 2), np.uint8)}, "b_tensor.buffer.data_type"),
        ({"a_zero_point_tensor": np.zeros((1, 1), np.uint8)}, "a_zero_point_tensor.buffer.data_type"),
        ({"b_scale_tensor": np.ones((1, 1), np.float16)}, "b_scale_tensor.buffer.data_type"),
        ({"bias_tensor": np.ones((2, 2), np.float16)}, "bias_tensor.buffer.data_type"),
        ({"bias_tensor": np.ones((1, 2), np.float32)}, "bias_tensor.buffer.sizes"),
        ({"bias_tensor": np.ones((1, 2, 2), np.float32)}, "bias_tensor.buffer.sizes"),
        ({"b_scale_tensor": np.ones((1, 1, 1), np.float32)}, "b_scale_tensor.buffer.sizes"),
        ({"a_scale_tensor": np.ones((1, 2), np.float32)}, "a_scale_tensor.buffer.sizes"),
        ({"output_tensor": (np.int32, (2, 2))}, "output_tensor.buffer.data_type"),
        ({"a_tensor": np.zeros((2, 2), np.int64)}, "a_tensor.buffer.data_type"),
    ],
)
def test_matrix_multiply_integer_to_float_rules(client: dmlrpc.Client, changes: dict[str, Any], field: str) -> None:
    tensors: dict[str, Any] = {
        "a_tensor": I2,
        "a_scale_tensor": S1,
        "b_tensor": I2,
        "b_scale_tensor": S1,
        "output_tensor": (np.float32, (2, 2)),
        **changes,
    }
    inputs = [tensors.get(f.name) for f in REGISTRY["matrix_multiply_integer_to_float"].inputs]
    invalid(client, mmitf_desc(tensors), inputs, f"{MMITF}.{field}")


# QUANTIZED_LINEAR_CONVOLUTION


def qlconv_desc(tensors: dict[str, Any], attrs: dict[str, Any]) -> operators_pb2.OperatorDesc:
    fields = {name: tensor_desc(value) for name, value in tensors.items() if value is not None}
    return operators_pb2.OperatorDesc(
        quantized_linear_convolution=operators_pb2.QuantizedLinearConvolutionOperatorDesc(**fields, **attrs)
    )


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_quantized_linear_convolution_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    in_type, w_type, out_type = (data.draw(st.sampled_from(INTEGERS), label=name) for name in ("x", "w", "out"))
    groups = data.draw(st.integers(1, 2), label="groups")
    channels = groups * data.draw(st.integers(1, 2), label="channels per group")
    out_channels = groups * data.draw(st.integers(1, 2), label="output channels per group")
    size = [data.draw(st.integers(1, 4), label="spatial") for _ in range(2)]
    kernel = [data.draw(st.integers(1, s), label="kernel") for s in size]
    strides = [data.draw(st.integers(1, 2), label="stride") for _ in range(2)]
    dilations = [1, 1]
    start = [data.draw(st.integers(0, 1), label="start") for _ in range(2)]
    end = [data.draw(st.integers(0, 1), label="end") for _ in range(2)]
    x = data.draw(arrays(in_type, (1, channels, *size)), label="x")
    w = data.draw(arrays(w_type, (out_channels, channels // groups, *kernel)), label="w")
    out_size = [(size[d] + start[d] + end[d] - kernel[d]) // strides[d] + 1 for d in range(2)]
    one = (1, 1, 1, 1)
    per_channel = (1, out_channels, 1, 1)

    def power(shape: tuple[int, ...]) -> np.ndarray:
        count = int(np.prod(shape))
        return np.array(data.draw(st.lists(POWERS, min_size=count, max_size=count)), np.float32).reshape(shape)

    def maybe(dtype: Any, shape: tuple[int, ...]) -> np.ndarray | None:
        return data.draw(arrays(dtype, shape), label="zero point") if data.draw(st.booleans(), label="set") else None

    filter_shape = data.draw(st.sampled_from([one, per_channel]), label="filter parameters")
    bias = None
    if data.draw(st.booleans(), label="bias"):
        bias = np.array(
            data.draw(st.lists(st.integers(-300, 300), min_size=out_channels, max_size=out_channels)), np.int32
        ).reshape(per_channel)
    tensors = {
        "input_tensor": x,
        "input_scale_tensor": power(one),
        "input_zero_point_tensor": maybe(in_type, one),
        "filter_tensor": w,
        "filter_scale_tensor": power(filter_shape),
        "filter_zero_point_tensor": maybe(w_type, filter_shape),
        "bias_tensor": bias,
        "output_scale_tensor": power(one),
        "output_zero_point_tensor": maybe(out_type, one),
    }
    attrs = {
        "dimension_count": 2,
        "strides": strides,
        "dilations": dilations,
        "start_padding": start,
        "end_padding": end,
        "group_count": groups,
    }
    desc = qlconv_desc({**tensors, "output_tensor": (out_type, (1, out_channels, *out_size))}, attrs)
    (got,) = run(client, desc, list(tensors.values()))
    expected = ref.quantized_linear_convolution(
        *tensors.values(), out_type, strides=strides, dilations=dilations, start=start, end=end, groups=groups
    )
    np.testing.assert_array_equal(got, expected)


QLCONV = "operator_desc.quantized_linear_convolution"
X4 = np.zeros((1, 2, 3, 3), np.uint8)
W4 = np.zeros((2, 2, 2, 2), np.int8)
ONE = np.ones((1, 1, 1, 1), np.float32)
CONV_ATTRS = {
    "dimension_count": 2,
    "strides": [1, 1],
    "dilations": [1, 1],
    "start_padding": [0, 0],
    "end_padding": [0, 0],
    "group_count": 1,
}


@pytest.mark.parametrize(
    ("changes", "attrs", "field"),
    [
        ({"input_scale_tensor": np.ones((1, 2, 1, 1), np.float32)}, {}, "input_scale_tensor.buffer.sizes"),
        ({"output_scale_tensor": np.ones((1, 2, 1, 1), np.float32)}, {}, "output_scale_tensor.buffer.sizes"),
        ({"filter_scale_tensor": np.ones((1, 3, 1, 1), np.float32)}, {}, "filter_scale_tensor.buffer.sizes"),
        (
            {"filter_zero_point_tensor": np.zeros((1, 2, 1, 1), np.uint8)},
            {},
            "filter_zero_point_tensor.buffer.data_type",
        ),
        ({"input_zero_point_tensor": np.zeros((1, 1, 1, 1), np.int8)}, {}, "input_zero_point_tensor.buffer.data_type"),
        (
            {"output_zero_point_tensor": np.zeros((1, 1, 1, 1), np.uint8)},
            {},
            "output_zero_point_tensor.buffer.data_type",
        ),
        ({"bias_tensor": np.zeros((1, 1, 1, 1), np.int32)}, {}, "bias_tensor.buffer.sizes"),
        ({"bias_tensor": np.zeros((1, 2, 1, 1), np.float32)}, {}, "bias_tensor.buffer.data_type"),
        ({"output_tensor": (np.int8, (1, 2, 3, 3))}, {}, "output_tensor.buffer.sizes"),
        ({}, {"dimension_count": 3}, "dimension_count"),
        ({}, {"group_count": 3}, "group_count"),
        ({}, {"strides": [1]}, "strides"),
    ],
)
def test_quantized_linear_convolution_rules(
    client: dmlrpc.Client, changes: dict[str, Any], attrs: dict[str, Any], field: str
) -> None:
    tensors: dict[str, Any] = {
        "input_tensor": X4,
        "input_scale_tensor": ONE,
        "filter_tensor": W4,
        "filter_scale_tensor": ONE,
        "output_scale_tensor": ONE,
        "output_tensor": (np.int8, (1, 2, 2, 2)),
        **changes,
    }
    inputs = [tensors.get(f.name) for f in REGISTRY["quantized_linear_convolution"].inputs]
    invalid(client, qlconv_desc(tensors, {**CONV_ATTRS, **attrs}), inputs, f"{QLCONV}.{field}")


# QUANTIZED_LINEAR_AVERAGE_POOLING


def qlpool_desc(tensors: dict[str, Any], attrs: dict[str, Any], strides: Any = None) -> operators_pb2.OperatorDesc:
    fields = {name: tensor_desc(value) for name, value in tensors.items() if value is not None}
    if strides is not None:
        fields["input_tensor"] = tensor_desc(tensors["input_tensor"], strides)
    return operators_pb2.OperatorDesc(
        quantized_linear_average_pooling=operators_pb2.QuantizedLinearAveragePoolingOperatorDesc(**fields, **attrs)
    )


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_quantized_linear_average_pooling_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    in_type, out_type = (data.draw(st.sampled_from(INTEGERS), label=name) for name in ("input", "output"))
    spatial = data.draw(st.integers(2, 3), label="spatial dims")
    channels = data.draw(st.integers(1, 3), label="channels")
    size = [data.draw(st.integers(1, 4), label="size") for _ in range(spatial)]
    window = [data.draw(st.integers(1, 3), label="window") for _ in range(spatial)]
    dilations = [data.draw(st.integers(1, 2), label="dilation") for _ in range(spatial)]
    strides = [data.draw(st.integers(1, 2), label="stride") for _ in range(spatial)]
    include = data.draw(st.booleans(), label="include padding")
    start = [data.draw(st.integers(0, min(1, window[d] - 1)), label="start") for d in range(spatial)]
    end = [data.draw(st.integers(0, min(1, window[d] - 1)), label="end") for d in range(spatial)]
    extent = [(window[d] - 1) * dilations[d] + 1 for d in range(spatial)]
    for d in range(spatial):
        size[d] = max(size[d], extent[d])  # no window falls wholly in the padding
    shape = (1, channels, *size)
    layout = data.draw(layouts(shape, allow_broadcast=True), label="layout")
    x = broadcast_values(data.draw(arrays(in_type, shape), label="x"), layout)
    out_size = [(size[d] + start[d] + end[d] - extent[d]) // strides[d] + 1 for d in range(spatial)]
    parameter_shape = data.draw(st.sampled_from([(1,) * (spatial + 2), (1, channels) + (1,) * spatial]), label="per")

    def power() -> np.ndarray:
        count = int(np.prod(parameter_shape))
        return np.array(data.draw(st.lists(POWERS, min_size=count, max_size=count)), np.float32).reshape(
            parameter_shape
        )

    def maybe(dtype: Any) -> np.ndarray | None:
        return (
            data.draw(arrays(dtype, parameter_shape), label="zero point")
            if data.draw(st.booleans(), label="set")
            else None
        )

    tensors = {
        "input_tensor": x,
        "input_scale_tensor": power(),
        "input_zero_point_tensor": maybe(in_type),
        "output_scale_tensor": power(),
        "output_zero_point_tensor": maybe(out_type),
    }
    attrs = {
        "dimension_count": spatial,
        "strides": strides,
        "window_size": window,
        "start_padding": start,
        "end_padding": end,
        "dilations": dilations,
        "include_padding": include,
    }
    desc = qlpool_desc({**tensors, "output_tensor": (out_type, (1, channels, *out_size))}, attrs, layout.strides)
    (got,) = run(client, desc, list(tensors.values()))
    expected = ref.quantized_linear_average_pooling(
        *tensors.values(),
        out_type,
        strides=strides,
        window=window,
        start=start,
        end=end,
        dilations=dilations,
        include_padding=include,
    )
    np.testing.assert_array_equal(got, expected)


QLPOOL = "operator_desc.quantized_linear_average_pooling"
POOL_ATTRS = {
    "dimension_count": 2,
    "strides": [1, 1],
    "window_size": [2, 2],
    "start_padding": [0, 0],
    "end_padding": [0, 0],
    "dilations": [1, 1],
}


@pytest.mark.parametrize(
    ("changes", "attrs", "field"),
    [
        ({"input_scale_tensor": np.ones((1, 3, 1, 1), np.float32)}, {}, "input_scale_tensor.buffer.sizes"),
        ({"output_scale_tensor": np.ones((2, 1, 1, 1), np.float32)}, {}, "output_scale_tensor.buffer.sizes"),
        ({"input_zero_point_tensor": np.zeros((1, 1, 1, 1), np.int8)}, {}, "input_zero_point_tensor.buffer.data_type"),
        (
            {"output_zero_point_tensor": np.zeros((1, 1, 1, 1), np.uint8)},
            {},
            "output_zero_point_tensor.buffer.data_type",
        ),
        ({"output_tensor": (np.int8, (1, 2, 3, 3))}, {}, "output_tensor.buffer.sizes"),
        ({}, {"dilations": [0, 1]}, "dilations[0]"),
        ({}, {"window_size": [2]}, "window_size"),
        ({"output_tensor": (np.int8, (1, 2, 4, 2))}, {"start_padding": [2, 0]}, "start_padding[0]"),
    ],
)
def test_quantized_linear_average_pooling_rules(
    client: dmlrpc.Client, changes: dict[str, Any], attrs: dict[str, Any], field: str
) -> None:
    tensors: dict[str, Any] = {
        "input_tensor": X4,
        "input_scale_tensor": ONE,
        "output_scale_tensor": ONE,
        "output_tensor": (np.int8, (1, 2, 2, 2)),
        **changes,
    }
    inputs = [tensors.get(f.name) for f in REGISTRY["quantized_linear_average_pooling"].inputs]
    invalid(client, qlpool_desc(tensors, {**POOL_ATTRS, **attrs}), inputs, f"{QLPOOL}.{field}")
