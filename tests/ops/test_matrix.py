"""GEMM and MATRIX_MULTIPLY_INTEGER over the wire: properties against NumPy references, and every documented rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators import REGISTRY
from tests.directml_lowering import run_directml_lowering
from tests.references import matrix as reference
from tests.strategies import arrays, broadcast_values, layouts

FL_6_4 = operators_pb2.FEATURE_LEVEL_6_4
NONE, TRANSPOSE = operators_pb2.MATRIX_TRANSFORM_NONE, operators_pb2.MATRIX_TRANSFORM_TRANSPOSE


def _dtypes(case: str, field: str) -> list[Any]:
    table = REGISTRY[case].support_at(FL_6_4)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table[field].data_types), key=str)


def _invalid(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[Any], field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field == field


def gemm_desc(
    a: Any,
    b: Any,
    c: Any,
    out: Any,
    *,
    trans_a: int = NONE,
    trans_b: int = NONE,
    alpha: float = 1.0,
    beta: float = 1.0,
    fused: operators_pb2.OperatorDesc | None = None,
    strides: dict[str, tuple[int, ...] | None] | None = None,
) -> operators_pb2.OperatorDesc:
    strides = strides or {}
    return operators_pb2.OperatorDesc(
        gemm=operators_pb2.GemmOperatorDesc(
            a_tensor=tensor_desc(a, strides.get("a")),
            b_tensor=tensor_desc(b, strides.get("b")),
            c_tensor=None if c is None else tensor_desc(c, strides.get("c")),
            output_tensor=tensor_desc(out, strides.get("out")),
            trans_a=trans_a,  # type: ignore[arg-type]
            trans_b=trans_b,  # type: ignore[arg-type]
            alpha=alpha,
            beta=beta,
            fused_activation=fused,
        )
    )


def _fused(name: str) -> operators_pb2.OperatorDesc | None:
    if name == "relu":
        return operators_pb2.OperatorDesc(activation_relu=operators_pb2.ActivationReluOperatorDesc())
    if name == "leaky_relu":
        return operators_pb2.OperatorDesc(
            activation_leaky_relu=operators_pb2.ActivationLeakyReluOperatorDesc(alpha=0.25)
        )
    return None


def _activate(values: np.ndarray, name: str) -> np.ndarray:
    if name == "relu":
        result: np.ndarray = np.maximum(values, 0)
        return result
    if name == "leaky_relu":
        return np.where(values < 0, 0.25 * values, values)
    return values


@settings(max_examples=30)
@given(data=st.data())
def test_gemm_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(_dtypes("gemm", "output_tensor")), label="dtype")
    rank = data.draw(st.integers(2, 4), label="rank")
    batch = tuple(data.draw(st.lists(st.integers(1, 2), min_size=rank - 2, max_size=rank - 2), label="batch"))
    m, k, n = (data.draw(st.integers(1, 4), label=name) for name in "mkn")
    trans_a, trans_b = data.draw(st.booleans(), label="trans_a"), data.draw(st.booleans(), label="trans_b")
    a_shape = (*batch, *((k, m) if trans_a else (m, k)))
    b_shape = (*batch, *((n, k) if trans_b else (k, n)))
    out_shape = (*batch, m, n)
    with_c = data.draw(st.booleans(), label="with C")
    alpha = data.draw(st.sampled_from([1.0, -1.0, 0.5, 2.0, 0.0]), label="alpha")
    beta = data.draw(st.sampled_from([1.0, -0.5, 2.0, 0.0]), label="beta")
    activation = data.draw(st.sampled_from(["none", "relu", "leaky_relu"]), label="fused activation")
    layout = {
        "a": data.draw(layouts(a_shape, allow_broadcast=True), label="a layout"),
        "b": data.draw(layouts(b_shape, allow_broadcast=True), label="b layout"),
        "c": data.draw(layouts(out_shape, allow_broadcast=True), label="c layout"),
        "out": data.draw(layouts(out_shape, allow_broadcast=False), label="out layout"),
    }
    a = broadcast_values(data.draw(arrays(dtype, a_shape), label="a"), layout["a"])
    b = broadcast_values(data.draw(arrays(dtype, b_shape), label="b"), layout["b"])
    c = broadcast_values(data.draw(arrays(dtype, out_shape), label="c"), layout["c"]) if with_c else None
    desc = gemm_desc(
        a,
        b,
        c,
        (dtype, out_shape),
        trans_a=TRANSPOSE if trans_a else NONE,
        trans_b=TRANSPOSE if trans_b else NONE,
        alpha=alpha,
        beta=beta,
        fused=_fused(activation),
        strides={name: value.strides for name, value in layout.items()},
    )
    (got,) = client.execute(desc, [a, b, c])
    expected = _activate(reference.gemm(a, b, c, trans_a, trans_b, alpha, beta), activation)
    assert isinstance(got, np.ndarray) and got.dtype == dtype and got.shape == out_shape
    tolerance = 2e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tolerance, atol=tolerance)


def test_gemm_of_known_values(client: dmlrpc.Client) -> None:
    a = np.array([[1, 2], [3, 4]], np.float32)
    b = np.array([[5, 6], [7, 8]], np.float32)
    c = np.array([[1, 1], [1, 1]], np.float32)
    (got,) = client.execute(gemm_desc(a, b, c, a, trans_b=TRANSPOSE, alpha=2.0, beta=-1.0), [a, b, c])
    np.testing.assert_array_equal(got, 2 * a @ b.T - c)


def test_gemm_ignores_beta_without_c(client: dmlrpc.Client) -> None:
    a = np.eye(2, dtype=np.float32)
    (got,) = client.execute(gemm_desc(a, a, None, a, beta=float("nan")), [a, a, None])
    np.testing.assert_array_equal(got, a)


def test_gemm_broadcasts_c_through_zero_strides(client: dmlrpc.Client) -> None:
    a = np.ones((1, 2, 2, 3), np.float32)
    b = np.ones((1, 2, 3, 2), np.float32)
    row = np.array([10, 20], np.float32)
    c = np.broadcast_to(row, (1, 2, 2, 2))
    desc = gemm_desc(a, b, c, (np.float32, (1, 2, 2, 2)), strides={"c": (0, 0, 0, 1)})
    (got,) = client.execute(desc, [a, b, c])
    np.testing.assert_array_equal(got, 3 + c)


F2 = np.zeros((2, 2), np.float32)
GEMM = "operator_desc.gemm"


@pytest.mark.parametrize(
    ("a", "b", "c", "out", "options", "field"),
    [
        (F2, F2.astype(np.float16), None, F2, {}, f"{GEMM}.b_tensor.buffer.data_type"),
        (F2, F2, F2.astype(np.float16), F2, {}, f"{GEMM}.c_tensor.buffer.data_type"),
        (F2, F2, None, F2.astype(np.float16), {}, f"{GEMM}.output_tensor.buffer.data_type"),
        (F2, np.zeros((1, 2, 2), np.float32), None, F2, {}, f"{GEMM}.b_tensor.buffer.sizes"),
        (F2, F2, None, np.zeros((1, 2, 2), np.float32), {}, f"{GEMM}.output_tensor.buffer.sizes"),
        (F2, np.zeros((3, 2), np.float32), None, np.zeros((2, 2), np.float32), {}, f"{GEMM}.b_tensor.buffer.sizes"),
        (F2, np.zeros((2, 3), np.float32), None, F2, {}, f"{GEMM}.output_tensor.buffer.sizes"),
        (
            np.zeros((3, 2), np.float32),
            np.zeros((3, 2), np.float32),
            None,
            np.zeros((3, 2), np.float32),
            {"trans_a": TRANSPOSE},
            f"{GEMM}.output_tensor.buffer.sizes",
        ),
        (np.zeros((2, 2, 2)), F2, None, F2, {}, f"{GEMM}.a_tensor.buffer.data_type"),
        (
            np.zeros((2, 2, 2), np.float32),
            np.zeros((3, 2, 2), np.float32),
            None,
            np.zeros((2, 2, 2), np.float32),
            {},
            f"{GEMM}.b_tensor.buffer.sizes",
        ),
        (F2, F2, np.zeros((2, 1), np.float32), F2, {}, f"{GEMM}.c_tensor.buffer.sizes"),
        (F2, F2, None, F2, {"trans_a": 2}, f"{GEMM}.trans_a"),
        (F2, F2, None, F2, {"trans_b": 7}, f"{GEMM}.trans_b"),
        (np.zeros((2, 2), np.int32), np.zeros((2, 2), np.int32), None, np.zeros((2, 2), np.int32), {}, None),
        (np.zeros((1, 1, 1, 2, 2), np.float32), np.zeros((1, 1, 1, 2, 2), np.float32), None, None, {}, None),
    ],
)
def test_gemm_rules(client: dmlrpc.Client, a: Any, b: Any, c: Any, out: Any, options: Any, field: str | None) -> None:
    out = a if out is None else out
    desc = gemm_desc(a, b, c, out, **options)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, [a, b, c])
    if field is not None:
        assert caught.value.field_violations[0].field == field
    else:  # outside the support table: the A tensor is named
        assert caught.value.field_violations[0].field.startswith(f"{GEMM}.a_tensor.buffer")


def test_gemm_fused_activation_rules(client: dmlrpc.Client) -> None:
    with_tensor = operators_pb2.OperatorDesc(
        activation_relu=operators_pb2.ActivationReluOperatorDesc(input_tensor=tensor_desc(F2))
    )
    _invalid(
        client,
        gemm_desc(F2, F2, None, F2, fused=with_tensor),
        [F2, F2, None],
        f"{GEMM}.fused_activation.activation_relu.input_tensor",
    )
    empty = operators_pb2.OperatorDesc()
    _invalid(client, gemm_desc(F2, F2, None, F2, fused=empty), [F2, F2, None], f"{GEMM}.fused_activation")


def mmi_desc(
    a: Any, az: Any, b: Any, bz: Any, out: Any, strides: dict[str, Any] | None = None
) -> operators_pb2.OperatorDesc:
    strides = strides or {}
    return operators_pb2.OperatorDesc(
        matrix_multiply_integer=operators_pb2.MatrixMultiplyIntegerOperatorDesc(
            a_tensor=tensor_desc(a, strides.get("a")),
            a_zero_point_tensor=None if az is None else tensor_desc(az),
            b_tensor=tensor_desc(b, strides.get("b")),
            b_zero_point_tensor=None if bz is None else tensor_desc(bz),
            output_tensor=tensor_desc(out, strides.get("out")),
        )
    )


@settings(max_examples=30)
@given(data=st.data())
def test_matrix_multiply_integer_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    a_type = data.draw(st.sampled_from(_dtypes("matrix_multiply_integer", "a_tensor")), label="a dtype")
    b_type = data.draw(st.sampled_from(_dtypes("matrix_multiply_integer", "b_tensor")), label="b dtype")
    rank = data.draw(st.integers(2, 4), label="rank")
    batch = tuple(data.draw(st.lists(st.integers(1, 2), min_size=rank - 2, max_size=rank - 2), label="batch"))
    m, k, n = (data.draw(st.integers(1, 4), label=name) for name in "mkn")
    a_shape, b_shape, out_shape = (*batch, m, k), (*batch, k, n), (*batch, m, n)
    a_zero_shape = data.draw(
        st.sampled_from([None, (1,), (m,), (m, 1), (1, 1, m, 1), (1, 1, 1, 1), (1, 1)]), label="a zero point shape"
    )
    b_zero_shape = data.draw(
        st.sampled_from([None, (1,), (n,), (1, n), (1, 1, 1, n), (1, 1, 1, 1), (1, 1, 1)]), label="b zero point shape"
    )
    layout = {
        "a": data.draw(layouts(a_shape, allow_broadcast=True), label="a layout"),
        "b": data.draw(layouts(b_shape, allow_broadcast=True), label="b layout"),
        "out": data.draw(layouts(out_shape, allow_broadcast=False), label="out layout"),
    }
    a = broadcast_values(data.draw(arrays(a_type, a_shape), label="a"), layout["a"])
    b = broadcast_values(data.draw(arrays(b_type, b_shape), label="b"), layout["b"])
    az = None if a_zero_shape is None else data.draw(arrays(a_type, a_zero_shape), label="a zero point")
    bz = None if b_zero_shape is None else data.draw(arrays(b_type, b_zero_shape), label="b zero point")
    desc = mmi_desc(a, az, b, bz, (np.int32, out_shape), {name: value.strides for name, value in layout.items()})
    (got,) = client.execute(desc, [a, az, b, bz])
    assert isinstance(got, np.ndarray) and got.dtype == np.int32
    np.testing.assert_array_equal(got, reference.matrix_multiply_integer(a, az, b, bz))


def test_matrix_multiply_integer_extremes(client: dmlrpc.Client) -> None:
    a = np.full((2, 3), -128, np.int8)
    b = np.full((3, 2), 255, np.uint8)
    az = np.array([127], np.int8)
    bz = np.array([[0, 255]], np.uint8)
    (got,) = client.execute(mmi_desc(a, az, b, bz, (np.int32, (2, 2))), [a, az, b, bz])
    np.testing.assert_array_equal(got, [[-255 * 255 * 3, 0], [-255 * 255 * 3, 0]])


I8 = np.zeros((2, 2), np.int8)
MMI = "operator_desc.matrix_multiply_integer"


@pytest.mark.parametrize(
    ("a", "az", "b", "bz", "out", "field"),
    [
        (I8, None, np.zeros((1, 2, 2), np.int8), None, (np.int32, (2, 2)), f"{MMI}.b_tensor.buffer.sizes"),
        (I8, None, I8, None, (np.int32, (1, 2, 2)), f"{MMI}.output_tensor.buffer.sizes"),
        (I8, np.zeros(1, np.uint8), I8, None, (np.int32, (2, 2)), f"{MMI}.a_zero_point_tensor.buffer.data_type"),
        (I8, None, I8, np.zeros(1, np.uint8), (np.int32, (2, 2)), f"{MMI}.b_zero_point_tensor.buffer.data_type"),
        (I8, None, I8, None, (np.float32, (2, 2)), f"{MMI}.output_tensor.buffer.data_type"),
        (I8, None, I8, None, (np.int8, (2, 2)), f"{MMI}.output_tensor.buffer.data_type"),
        (I8, np.zeros((1, 1, 2, 2), np.int8), I8, None, (np.int32, (2, 2)), f"{MMI}.a_zero_point_tensor.buffer.sizes"),
        (I8, np.zeros(3, np.int8), I8, None, (np.int32, (2, 2)), f"{MMI}.a_zero_point_tensor.buffer.sizes"),
        (I8, np.zeros((1, 2), np.int8), I8, None, (np.int32, (2, 2)), f"{MMI}.a_zero_point_tensor.buffer.sizes"),
        (I8, None, I8, np.zeros((2, 1), np.int8), (np.int32, (2, 2)), f"{MMI}.b_zero_point_tensor.buffer.sizes"),
        (I8, None, I8, np.zeros((1, 3), np.int8), (np.int32, (2, 2)), f"{MMI}.b_zero_point_tensor.buffer.sizes"),
        (I8, None, np.zeros((3, 2), np.int8), None, (np.int32, (2, 2)), f"{MMI}.b_tensor.buffer.sizes"),
        (I8, None, I8, None, (np.int32, (2, 3)), f"{MMI}.output_tensor.buffer.sizes"),
        (
            np.zeros((2, 2, 2), np.int8),
            None,
            np.zeros((1, 2, 2), np.int8),
            None,
            (np.int32, (2, 2, 2)),
            f"{MMI}.b_tensor.buffer.sizes",
        ),
        (np.zeros((2, 2), np.int16), None, I8, None, (np.int32, (2, 2)), f"{MMI}.a_tensor.buffer.data_type"),
    ],
)
def test_matrix_multiply_integer_rules(
    client: dmlrpc.Client, a: Any, az: Any, b: Any, bz: Any, out: Any, field: str
) -> None:
    _invalid(client, mmi_desc(a, az, b, bz, out), [a, az, b, bz], field)


def _softmax(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    shifted = np.exp(values - values.max(axis=axes, keepdims=True))
    result: np.ndarray = shifted / shifted.sum(axis=axes, keepdims=True)
    return result


def test_gemm_fuses_softmax_over_rows(client: dmlrpc.Client) -> None:
    a = np.arange(12, dtype=np.float32).reshape(2, 2, 3) / 10
    b = np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 3, 2)
    fused = operators_pb2.OperatorDesc(activation_softmax=operators_pb2.ActivationSoftmaxOperatorDesc())
    (got,) = client.execute(gemm_desc(a, b, None, (np.float32, (2, 2, 2)), fused=fused), [a, b, None])
    expected = _softmax(reference.gemm(a, b, None, False, False, 1.0, 1.0), (-1,))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)  # type: ignore[arg-type]


def test_gemm_fuses_softmax1_over_axes(client: dmlrpc.Client) -> None:
    a = np.arange(12, dtype=np.float32).reshape(2, 2, 3) / 10
    b = np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 3, 2)
    fused = operators_pb2.OperatorDesc(
        activation_softmax1=operators_pb2.ActivationSoftmax1OperatorDesc(axis_count=2, axes=[0, 1])
    )
    (got,) = client.execute(gemm_desc(a, b, None, (np.float32, (2, 2, 2)), fused=fused), [a, b, None])
    expected = _softmax(reference.gemm(a, b, None, False, False, 1.0, 1.0), (0, 1))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)  # type: ignore[arg-type]


def test_gemm_softmax1_rules(client: dmlrpc.Client) -> None:
    path = f"{GEMM}.fused_activation.activation_softmax1"
    bad_axis = operators_pb2.OperatorDesc(
        activation_softmax1=operators_pb2.ActivationSoftmax1OperatorDesc(axis_count=1, axes=[2])
    )
    _invalid(client, gemm_desc(F2, F2, None, F2, fused=bad_axis), [F2, F2, None], f"{path}.axes[0]")
    bad_count = operators_pb2.OperatorDesc(
        activation_softmax1=operators_pb2.ActivationSoftmax1OperatorDesc(axis_count=2, axes=[1])
    )
    _invalid(client, gemm_desc(F2, F2, None, F2, fused=bad_count), [F2, F2, None], f"{path}.axis_count")
    with_tensor = operators_pb2.OperatorDesc(
        activation_softmax1=operators_pb2.ActivationSoftmax1OperatorDesc(
            output_tensor=tensor_desc(F2), axis_count=1, axes=[1]
        )
    )
    _invalid(client, gemm_desc(F2, F2, None, F2, fused=with_tensor), [F2, F2, None], f"{path}.output_tensor")


def test_softmax_fusion_stays_gemm_only(client: dmlrpc.Client) -> None:
    """GEMM's softmax fusion does not leak into ADD1 (the shared fusable list has no softmax)."""
    fused = operators_pb2.OperatorDesc(activation_softmax=operators_pb2.ActivationSoftmaxOperatorDesc())
    desc = operators_pb2.OperatorDesc(
        element_wise_add1=operators_pb2.ElementWiseAdd1OperatorDesc(
            a_tensor=tensor_desc(F2), b_tensor=tensor_desc(F2), output_tensor=tensor_desc(F2), fused_activation=fused
        )
    )
    _invalid(client, desc, [F2, F2], "operator_desc.element_wise_add1.fused_activation.activation_softmax")


@pytest.mark.parametrize("types", [(np.uint8, np.uint8), (np.int8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
@pytest.mark.parametrize("zero_points", [False, True])
@pytest.mark.parametrize("quantized", [False, True])
def test_the_directml_integer_product_is_one_matmul_integer(types: Any, zero_points: bool, quantized: bool) -> None:
    # On DirectML, zero points per tensor (or none): one ONNX MatMulInteger (DML_MATRIX_MULTIPLY_INTEGER), no 64-bit
    # operation. Run here on the CPU provider, its extremes must come out as the exact INT64 lowering's.
    rng = np.random.default_rng(5)
    a_type, b_type = types
    a = rng.integers(np.iinfo(a_type).min, np.iinfo(a_type).max, (2, 3, 64), endpoint=True).astype(a_type)
    b = rng.integers(np.iinfo(b_type).min, np.iinfo(b_type).max, (2, 64, 5), endpoint=True).astype(b_type)
    a[0, 0], b[0, :, 0] = np.iinfo(a_type).max, np.iinfo(b_type).min  # a row and a column of extremes
    zeros: dict[str, Any] = {"a_zero_point": a_type(7), "b_zero_point": b_type(3)} if zero_points else {}
    if quantized:
        one = np.float32(1.0)
        call = dmlrpc.ops.quantized_linear_matrix_multiply(a, one, b, one, np.float32(4096.0), dtype=np.int8, **zeros)
    else:
        call = dmlrpc.ops.matrix_multiply_integer(a, b, **zeros)
    (result,), model = run_directml_lowering(call)
    assert [node.op_type for node in model.graph.node].count("MatMulInteger") == 1
    zero_a, zero_b = (int(zeros["a_zero_point"]), int(zeros["b_zero_point"])) if zero_points else (0, 0)
    exact = np.matmul(a.astype(np.int64) - zero_a, b.astype(np.int64) - zero_b)
    if quantized:
        exact = np.clip(np.round(exact.astype(np.float64) / 4096.0), -128, 127)
    np.testing.assert_array_equal(result.reshape(exact.shape), exact.astype(result.dtype))
