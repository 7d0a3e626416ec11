"""BATCH_NORMALIZATION, MEAN_VARIANCE_NORMALIZATION(1/2), LP and LOCAL_RESPONSE_NORMALIZATION over the wire:
hand-worked cases, properties against the NumPy references, and every documented rule."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators import REGISTRY
from dmlrpc_server.operators.base import Limits
from tests.references import normalization as ref
from tests.strategies import Layout, arrays, broadcast_values, layouts, shapes
from tests.tolerance import assert_close, mean_rounding

FL = operators_pb2.FeatureLevel
LATEST = operators_pb2.FEATURE_LEVEL_6_4
LIMITS = Limits(max_tensor_bytes=1 << 30, max_request_bytes=1 << 30, max_message_bytes=1 << 30)
Fused = tuple[operators_pb2.OperatorDesc | None, Callable[[np.ndarray], np.ndarray]]


def _desc(case: str, **fields: Any) -> operators_pb2.OperatorDesc:
    inner = type(getattr(operators_pb2.OperatorDesc(), case))(**fields)
    return operators_pb2.OperatorDesc(**{case: inner})


def _dtypes(case: str) -> list[np.dtype[Any]]:
    table = REGISTRY[case].support_at(LATEST)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table["input_tensor"].data_types), key=str)


def _one(results: list[Any]) -> np.ndarray:
    """The single output array of a call."""
    (result,) = results
    assert isinstance(result, np.ndarray)
    return result


def _invalid(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[Any], field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field == field


def _plan_invalid(case: str, inner: Any, level: int, field: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        REGISTRY[case].plan(inner, feature_level=level, limits=LIMITS)
    assert caught.value.field == field


@st.composite
def _fused(draw: st.DrawFn) -> Fused:
    kind = draw(st.sampled_from(["none", "relu", "linear"]), label="fused activation")
    if kind == "relu":
        return operators_pb2.OperatorDesc(activation_relu=operators_pb2.ActivationReluOperatorDesc()), ref.relu
    if kind == "linear":
        alpha = draw(st.floats(-2, 2).map(lambda v: round(v, 2)), label="linear alpha")
        beta = draw(st.floats(-2, 2).map(lambda v: round(v, 2)), label="linear beta")
        linear = operators_pb2.ActivationLinearOperatorDesc(alpha=alpha, beta=beta)
        return operators_pb2.OperatorDesc(activation_linear=linear), lambda x: ref.linear(x, alpha, beta)
    return None, lambda x: x


@st.composite
def _parameter_shape(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Per dimension 1 (broadcast) or the input's size."""
    return tuple(draw(st.sampled_from([1, s])) for s in shape)


def _tensor(
    data: st.DataObject, dtype: np.dtype[Any], shape: tuple[int, ...], label: str, positive: bool = False
) -> tuple[np.ndarray, Layout]:
    layout = data.draw(layouts(shape, allow_broadcast=True), label=f"{label} layout")
    values = data.draw(arrays(dtype.type, shape), label=label)
    if positive:
        values = (np.abs(values) + np.asarray(0.1, dtype)).astype(dtype)
    return broadcast_values(values, layout), layout


def _with_fused(fields: dict[str, Any], fused: operators_pb2.OperatorDesc | None) -> dict[str, Any]:
    if fused is not None:
        fields["fused_activation"] = fused
    return fields


# ---------------------------------------------------------------------------------------------------------------
# Hand-worked cases (the pages give no examples).


def test_batch_normalization_per_channel(client: dmlrpc.Client) -> None:
    x = np.array([[[[1, 3]], [[10, 20]]]], np.float32)  # {1, 2, 1, 2}
    mean = np.array([[[[2]], [[15]]]], np.float32)
    variance = np.array([[[[4]], [[25]]]], np.float32)
    scale = np.array([[[[2]], [[1]]]], np.float32)
    bias = np.array([[[[1]], [[-1]]]], np.float32)
    desc = _desc(
        "batch_normalization",
        input_tensor=tensor_desc(x),
        mean_tensor=tensor_desc(mean),
        variance_tensor=tensor_desc(variance),
        scale_tensor=tensor_desc(scale),
        bias_tensor=tensor_desc(bias),
        output_tensor=tensor_desc(x),
        spatial=True,
        epsilon=0.0,
    )
    got = _one(client.execute(desc, [x, mean, variance, scale, bias]))
    np.testing.assert_allclose(got, [[[[0, 2]], [[-2, 0]]]], rtol=1e-6)


def test_lp_normalization_p1_p2_and_a_zero_slice(client: dmlrpc.Client) -> None:
    x = np.array([[3, 4], [0, 0]], np.float32)
    expected = {2: np.array([[0.6, 0.8], [0, 0]]), 1: np.array([[3 / 7, 4 / 7], [0, 0]])}
    for p, values in expected.items():
        desc = _desc(
            "lp_normalization", input_tensor=tensor_desc(x), output_tensor=tensor_desc(x), axis=1, epsilon=1e-5, p=p
        )
        got = _one(client.execute(desc, [x]))
        np.testing.assert_allclose(got, values, rtol=1e-6)


def test_local_response_normalization_cross_channel(client: dmlrpc.Client) -> None:
    x = np.ones((1, 3, 1, 1), np.float32)
    desc = _desc(
        "local_response_normalization",
        input_tensor=tensor_desc(x),
        output_tensor=tensor_desc(x),
        cross_channel=True,
        local_size=3,
        alpha=3.0,
        beta=1.0,
        bias=1.0,
    )
    got = _one(client.execute(desc, [x]))
    # Windows {c0, c1}, {c0, c1, c2}, {c1, c2}: 1 / (1 + 3 / 3 * sum).
    np.testing.assert_allclose(got.ravel(), [1 / 3, 1 / 4, 1 / 3], rtol=1e-6)


def test_local_response_normalization_within_channel(client: dmlrpc.Client) -> None:
    x = np.full((1, 2, 2, 2), 2, np.float32)
    desc = _desc(
        "local_response_normalization",
        input_tensor=tensor_desc(x),
        output_tensor=tensor_desc(x),
        cross_channel=False,
        local_size=2,
        alpha=2.0,
        beta=0.5,
        bias=0.0,
    )
    got = _one(client.execute(desc, [x]))
    # A 2x2 window from (h, w) to (h + 1, w + 1): 4 squares at (0, 0), 2 on the edges, 1 at (1, 1); alpha / 2.
    sums = np.array([[16, 8], [8, 4]], np.float64)
    np.testing.assert_allclose(got[0, 0], 2 / np.sqrt(sums), rtol=1e-6)


def test_mean_variance_normalization2_without_mean_is_rms_normalization(client: dmlrpc.Client) -> None:
    x = np.array([[3, 4]], np.float32)
    desc = _desc(
        "mean_variance_normalization2",
        input_tensor=tensor_desc(x),
        output_tensor=tensor_desc(x),
        axis_count=1,
        axes=[1],
        use_mean=False,
        use_variance=True,
        epsilon=0.0,
    )
    got = _one(client.execute(desc, [x, None, None]))
    np.testing.assert_allclose(got, x / math.sqrt(12.5), rtol=1e-6)


def test_mean_variance_normalization_uses_the_population_variance(client: dmlrpc.Client) -> None:
    x = np.array([1, 3], np.float32).reshape(1, 1, 1, 2)
    desc = _desc(
        "mean_variance_normalization",
        input_tensor=tensor_desc(x),
        output_tensor=tensor_desc(x),
        cross_channel=False,
        normalize_variance=True,
        epsilon=0.0,
    )
    got = _one(client.execute(desc, [x, None, None]))
    np.testing.assert_allclose(got.ravel(), [-1, 1], rtol=1e-6)


def test_mean_variance_normalization_keeps_a_small_spread_about_a_large_mean(client: dmlrpc.Client) -> None:
    # The variance about the mean, E[(x - mean)^2], keeps the spread of values near 1000 that E[x^2] - E[x]^2
    # cancels away in FLOAT32 (x^2 ~ 1e6 has a spacing of 0.0625, the variance here is 0.0125).
    x = np.array([1000.1, 1000.2, 1000.3, 1000.4], np.float32).reshape(1, 1, 1, 4)
    desc = _desc(
        "mean_variance_normalization",
        input_tensor=tensor_desc(x),
        output_tensor=tensor_desc(x),
        cross_channel=False,
        normalize_variance=True,
        epsilon=1e-5,
    )
    got = _one(client.execute(desc, [x, None, None]))
    expected = ref.mean_variance_normalization(x, (2, 3), epsilon=1e-5)
    assert_close(got, expected, np.dtype(np.float32), mean_rounding(x, (2, 3), 1e-5, None, np.dtype(np.float32)))


# ---------------------------------------------------------------------------------------------------------------
# Properties against the references.


@settings(max_examples=20)
@given(data=st.data())
def test_batch_normalization_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(_dtypes("batch_normalization")), label="dtype")
    shape = data.draw(shapes(), label="shape")
    x, x_layout = _tensor(data, dtype, shape, "x")
    parameters: dict[str, tuple[np.ndarray, Layout]] = {}
    for name in ("mean", "variance", "scale", "bias"):
        parameter_shape = data.draw(_parameter_shape(shape), label=f"{name} shape")
        parameters[name] = _tensor(data, dtype, parameter_shape, name, positive=name == "variance")
    epsilon = data.draw(st.floats(1e-5, 1), label="epsilon")
    fused, activation = data.draw(_fused())
    out_layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    fields = {f"{name}_tensor": tensor_desc(array, layout.strides) for name, (array, layout) in parameters.items()}
    desc = _desc(
        "batch_normalization",
        input_tensor=tensor_desc(x, x_layout.strides),
        output_tensor=tensor_desc((dtype, shape), out_layout.strides),
        spatial=data.draw(st.booleans(), label="spatial"),
        epsilon=epsilon,
        **_with_fused(fields, fused),
    )
    got = _one(client.execute(desc, [x, *(array for array, _ in parameters.values())]))
    arrays_ = {name: array for name, (array, _) in parameters.items()}
    expected = ref.batch_normalization(
        x, arrays_["mean"], arrays_["variance"], arrays_["scale"], arrays_["bias"], epsilon
    )
    assert_close(got, activation(expected), dtype)


def _scale_bias(
    data: st.DataObject, dtype: np.dtype[Any], shape: tuple[int, ...]
) -> tuple[dict[str, Any], list[np.ndarray | None]]:
    """Optional Scale and Bias (each may be absent from feature level 5.2)."""
    fields: dict[str, Any] = {}
    values: list[np.ndarray | None] = []
    for name in ("scale", "bias"):
        if not data.draw(st.booleans(), label=f"has {name}"):
            values.append(None)
            continue
        array, layout = _tensor(data, dtype, data.draw(_parameter_shape(shape), label=f"{name} shape"), name)
        fields[f"{name}_tensor"] = tensor_desc(array, layout.strides)
        values.append(array)
    return fields, values


def _mvn_case(
    data: st.DataObject, case: str, shape: tuple[int, ...]
) -> tuple[np.dtype[Any], np.ndarray, dict[str, Any], list[np.ndarray | None], float, Fused]:
    dtype = data.draw(st.sampled_from(_dtypes(case)), label="dtype")
    x, x_layout = _tensor(data, dtype, shape, "x")
    fields, parameters = _scale_bias(data, dtype, shape)
    epsilon = data.draw(st.floats(1e-5, 1), label="epsilon")
    fused = data.draw(_fused())
    out_layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    fields.update(
        input_tensor=tensor_desc(x, x_layout.strides),
        output_tensor=tensor_desc((dtype, shape), out_layout.strides),
        epsilon=epsilon,
    )
    _with_fused(fields, fused[0])
    return dtype, x, fields, [x, *parameters], epsilon, fused


@settings(max_examples=20)
@given(data=st.data())
def test_mean_variance_normalization_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    shape = data.draw(shapes(min_dims=4, max_dims=4), label="shape")
    dtype, x, fields, inputs, epsilon, (_, activation) = _mvn_case(data, "mean_variance_normalization", shape)
    cross_channel = data.draw(st.booleans(), label="cross_channel")
    normalize_variance = data.draw(st.booleans(), label="normalize_variance")
    desc = _desc(
        "mean_variance_normalization", cross_channel=cross_channel, normalize_variance=normalize_variance, **fields
    )
    got = _one(client.execute(desc, inputs))
    axes = (1, 2, 3) if cross_channel else (2, 3)
    expected = ref.mean_variance_normalization(
        x, axes, use_variance=normalize_variance, epsilon=epsilon, scale=inputs[1], bias=inputs[2]
    )
    amplified = mean_rounding(x, axes, epsilon, inputs[1], dtype) if normalize_variance else 0.0
    assert_close(got, activation(expected), dtype, amplified)


@settings(max_examples=25)
@given(data=st.data(), version=st.sampled_from([1, 2]))
def test_mean_variance_normalization1_and_2_match_reference(
    client: dmlrpc.Client, data: st.DataObject, version: int
) -> None:
    shape = data.draw(shapes(), label="shape")
    case = f"mean_variance_normalization{version}"
    dtype, x, fields, inputs, epsilon, (_, activation) = _mvn_case(data, case, shape)
    order = data.draw(st.permutations(range(len(shape))), label="axis order")
    axes = order[: data.draw(st.integers(1, len(shape)), label="axis count")]
    if version == 1:
        use_mean, use_variance = True, data.draw(st.booleans(), label="normalize_variance")
        flags = {"normalize_variance": use_variance}
    else:
        use_mean, use_variance = data.draw(st.booleans(), label="use_mean"), data.draw(st.booleans(), label="use_var")
        flags = {"use_mean": use_mean, "use_variance": use_variance}
    desc = _desc(case, axis_count=len(axes), axes=list(axes), **flags, **fields)
    got = _one(client.execute(desc, inputs))
    expected = ref.mean_variance_normalization(
        x, axes, use_mean=use_mean, use_variance=use_variance, epsilon=epsilon, scale=inputs[1], bias=inputs[2]
    )
    amplified = mean_rounding(x, axes, epsilon, inputs[1], dtype) if use_mean and use_variance else 0.0
    assert_close(got, activation(expected), dtype, amplified)


@settings(max_examples=20)
@given(data=st.data())
def test_lp_normalization_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(_dtypes("lp_normalization")), label="dtype")
    shape = data.draw(shapes(), label="shape")
    x, x_layout = _tensor(data, dtype, shape, "x")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    p = data.draw(st.sampled_from([1, 2]), label="p")
    epsilon = data.draw(st.floats(1e-5, 1), label="epsilon")
    out_layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    desc = _desc(
        "lp_normalization",
        input_tensor=tensor_desc(x, x_layout.strides),
        output_tensor=tensor_desc((dtype, shape), out_layout.strides),
        axis=axis,
        epsilon=epsilon,
        p=p,
    )
    got = _one(client.execute(desc, [x]))
    assert_close(got, ref.lp_normalization(x, axis, p, epsilon), dtype)


@settings(max_examples=20)
@given(data=st.data())
def test_local_response_normalization_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(_dtypes("local_response_normalization")), label="dtype")
    shape = data.draw(shapes(min_dims=4, max_dims=4), label="shape")
    x, x_layout = _tensor(data, dtype, shape, "x")
    attributes: dict[str, Any] = {
        "cross_channel": data.draw(st.booleans(), label="cross_channel"),
        "local_size": data.draw(st.integers(1, 13), label="local_size"),
        "alpha": data.draw(st.floats(0, 1).map(lambda v: round(v, 3)), label="alpha"),
        "beta": data.draw(st.floats(0, 1).map(lambda v: round(v, 3)), label="beta"),
        "bias": data.draw(st.floats(0.5, 2).map(lambda v: round(v, 3)), label="bias"),
    }
    out_layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    desc = _desc(
        "local_response_normalization",
        input_tensor=tensor_desc(x, x_layout.strides),
        output_tensor=tensor_desc((dtype, shape), out_layout.strides),
        **attributes,
    )
    got = _one(client.execute(desc, [x]))
    assert_close(got, ref.local_response_normalization(x, **attributes), dtype)


# ---------------------------------------------------------------------------------------------------------------
# Validation: every documented rule, and the choices where the pages are silent.

SOFTMAX = operators_pb2.OperatorDesc(activation_softmax=operators_pb2.ActivationSoftmaxOperatorDesc())
X4 = np.zeros((1, 2, 2, 2), np.float32)
C4 = np.zeros((1, 2, 1, 1), np.float32)
BN = "operator_desc.batch_normalization"


def _bn(**overrides: Any) -> operators_pb2.OperatorDesc:
    fields: dict[str, Any] = {name: tensor_desc(C4) for name in ("mean", "variance", "scale", "bias")}
    fields = {f"{name}_tensor": desc for name, desc in fields.items()}
    fields.update(input_tensor=tensor_desc(X4), output_tensor=tensor_desc(X4), spatial=True, epsilon=1e-5)
    fields.update(overrides)
    return _desc("batch_normalization", **fields)


BN_INPUTS = [X4, C4, C4, C4, C4]


def test_batch_normalization_runs_with_valid_parameters(client: dmlrpc.Client) -> None:
    got = _one(client.execute(_bn(), BN_INPUTS))
    assert got is not None and got.shape == X4.shape


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"output_tensor": tensor_desc((np.float32, (1, 2, 2, 1)))}, "output_tensor.buffer.sizes"),
        ({"output_tensor": tensor_desc((np.float16, X4.shape))}, "output_tensor.buffer.data_type"),
        ({"mean_tensor": tensor_desc((np.float16, C4.shape))}, "mean_tensor.buffer.data_type"),
        ({"variance_tensor": tensor_desc((np.float32, (2, 1, 1)))}, "variance_tensor.buffer.sizes"),
        ({"scale_tensor": tensor_desc((np.float32, (1, 3, 1, 1)))}, "scale_tensor.buffer.sizes"),
        ({"bias_tensor": tensor_desc((np.float32, (2, 2, 1, 1)))}, "bias_tensor.buffer.sizes"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": math.nan}, "epsilon"),
        (
            {"fused_activation": SOFTMAX},
            "fused_activation.activation_softmax",
        ),
    ],
)
def test_batch_normalization_rules(client: dmlrpc.Client, overrides: dict[str, Any], field: str) -> None:
    inputs: list[Any] = [X4, *(bytes(64) for _ in range(4))]
    _invalid(client, _bn(**overrides), inputs, f"{BN}.{field}")


def test_batch_normalization_requires_every_statistics_tensor(client: dmlrpc.Client) -> None:
    desc = _bn()
    desc.batch_normalization.ClearField("variance_tensor")
    _invalid(client, desc, [X4, C4, None, C4, C4], f"{BN}.variance_tensor")


def test_batch_normalization_takes_only_floats(client: dmlrpc.Client) -> None:
    x = X4.astype(np.int32)
    fields = {f"{n}_tensor": tensor_desc(C4.astype(np.int32)) for n in ("mean", "variance", "scale", "bias")}
    desc = _bn(input_tensor=tensor_desc(x), output_tensor=tensor_desc(x), **fields)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, [x, *[C4.astype(np.int32)] * 4])
    assert caught.value.field_violations[0].field.startswith(f"{BN}.")


def test_batch_normalization_spatial_false_before_4_0_needs_full_spatial_statistics() -> None:
    inner = _bn(spatial=False).batch_normalization
    _plan_invalid("batch_normalization", inner, FL.FEATURE_LEVEL_3_1, f"{BN}.mean_tensor.buffer.sizes")
    full = tensor_desc(np.zeros((1, 2, 2, 2), np.float32))
    inner = _bn(spatial=False, mean_tensor=full, variance_tensor=full).batch_normalization
    REGISTRY["batch_normalization"].plan(inner, feature_level=FL.FEATURE_LEVEL_3_1, limits=LIMITS)
    # Deprecated from 4.0: no effect.
    REGISTRY["batch_normalization"].plan(_bn(spatial=False).batch_normalization, feature_level=LATEST, limits=LIMITS)


MVN = "operator_desc.mean_variance_normalization"


def _mvn(case: str, **overrides: Any) -> operators_pb2.OperatorDesc:
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(X4),
        "output_tensor": tensor_desc(X4),
        "scale_tensor": tensor_desc(C4),
        "bias_tensor": tensor_desc(C4),
        "epsilon": 1e-5,
    }
    if case != "mean_variance_normalization":
        fields.update(axis_count=2, axes=[2, 3])
    fields.update(overrides)
    return _desc(case, **fields)


MVN_CASES = ["mean_variance_normalization", "mean_variance_normalization1", "mean_variance_normalization2"]


@pytest.mark.parametrize("case", MVN_CASES)
@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"output_tensor": tensor_desc((np.float32, (1, 2, 2, 1)))}, "output_tensor.buffer.sizes"),
        ({"bias_tensor": tensor_desc((np.float16, C4.shape))}, "bias_tensor.buffer.data_type"),
        ({"output_tensor": tensor_desc((np.float16, X4.shape))}, "output_tensor.buffer.data_type"),
        ({"scale_tensor": tensor_desc((np.float32, (1, 2, 3, 1)))}, "scale_tensor.buffer.sizes"),
        ({"epsilon": -0.5}, "epsilon"),
        ({"epsilon": math.inf}, "epsilon"),
        (
            {"fused_activation": SOFTMAX},
            "fused_activation.activation_softmax",
        ),
    ],
)
def test_mean_variance_normalization_rules(
    client: dmlrpc.Client, case: str, overrides: dict[str, Any], field: str
) -> None:
    _invalid(client, _mvn(case, **overrides), [X4, bytes(64), bytes(64)], f"operator_desc.{case}.{field}")


@pytest.mark.parametrize("case", MVN_CASES[1:])
def test_mean_variance_normalization1_scale_needs_the_input_dimension_count(client: dmlrpc.Client, case: str) -> None:
    desc = _mvn(case, scale_tensor=tensor_desc((np.float32, (2, 1, 1))))
    _invalid(client, desc, [X4, bytes(64), bytes(64)], f"operator_desc.{case}.scale_tensor.buffer.sizes")


@pytest.mark.parametrize("case", MVN_CASES[:2])  # MEAN_VARIANCE_NORMALIZATION2 exists from 6.3 only
def test_scale_and_bias_are_independent_from_5_2_and_paired_before(client: dmlrpc.Client, case: str) -> None:
    desc = _mvn(case)
    getattr(desc, case).ClearField("bias_tensor")
    got = _one(client.execute(desc, [X4, C4, None]))
    assert got is not None
    _plan_invalid(case, getattr(desc, case), FL.FEATURE_LEVEL_5_1, f"operator_desc.{case}.bias_tensor")
    getattr(desc, case).ClearField("scale_tensor")
    REGISTRY[case].plan(getattr(desc, case), feature_level=FL.FEATURE_LEVEL_5_1, limits=LIMITS)


def test_mean_variance_normalization1_channel_of_scale_before_4_0() -> None:
    case = "mean_variance_normalization1"
    inner = _mvn(case, scale_tensor=tensor_desc((np.float32, (1, 1, 1, 1)))).mean_variance_normalization1
    _plan_invalid(case, inner, FL.FEATURE_LEVEL_3_1, f"operator_desc.{case}.scale_tensor.buffer.sizes")
    REGISTRY[case].plan(inner, feature_level=FL.FEATURE_LEVEL_4_0, limits=LIMITS)


@pytest.mark.parametrize("case", MVN_CASES[1:])
@pytest.mark.parametrize(
    ("axis_count", "axes", "field"),
    [
        (3, [2, 3], "axis_count"),
        (0, [], "axes"),
        (2, [1, 4], "axes[1]"),
        (2, [3, 3], "axes"),
    ],
)
def test_mean_variance_normalization_axes_rules(
    client: dmlrpc.Client, case: str, axis_count: int, axes: list[int], field: str
) -> None:
    desc = _mvn(case, axis_count=axis_count, axes=axes)
    _invalid(client, desc, [X4, C4, C4], f"operator_desc.{case}.{field}")


def test_mean_variance_normalization_is_4d_only(client: dmlrpc.Client) -> None:
    x = np.zeros((2, 2, 2), np.float32)
    desc = _mvn("mean_variance_normalization", input_tensor=tensor_desc(x), output_tensor=tensor_desc(x))
    desc.mean_variance_normalization.ClearField("scale_tensor")
    desc.mean_variance_normalization.ClearField("bias_tensor")
    _invalid(client, desc, [x, None, None], f"{MVN}.input_tensor.buffer.sizes")


LP = "operator_desc.lp_normalization"


def _lp(**overrides: Any) -> operators_pb2.OperatorDesc:
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(X4),
        "output_tensor": tensor_desc(X4),
        "axis": 1,
        "epsilon": 1e-5,
        "p": 2,
    }
    fields.update(overrides)
    return _desc("lp_normalization", **fields)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"axis": 4}, "axis"),
        ({"p": 0}, "p"),
        ({"p": 3}, "p"),
        ({"epsilon": -1e-5}, "epsilon"),
        ({"output_tensor": tensor_desc((np.float16, X4.shape))}, "output_tensor.buffer.data_type"),
        ({"output_tensor": tensor_desc((np.float32, (1, 2, 2)))}, "output_tensor.buffer.sizes"),
    ],
)
def test_lp_normalization_rules(client: dmlrpc.Client, overrides: dict[str, Any], field: str) -> None:
    _invalid(client, _lp(**overrides), [X4], f"{LP}.{field}")


LRN = "operator_desc.local_response_normalization"


def _lrn(**overrides: Any) -> operators_pb2.OperatorDesc:
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(X4),
        "output_tensor": tensor_desc(X4),
        "cross_channel": True,
        "local_size": 3,
        "alpha": 1e-4,
        "beta": 0.75,
        "bias": 1.0,
    }
    fields.update(overrides)
    return _desc("local_response_normalization", **fields)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"local_size": 0}, "local_size"),
        ({"alpha": math.nan}, "alpha"),
        ({"beta": math.inf}, "beta"),
        ({"bias": -math.inf}, "bias"),
        ({"output_tensor": tensor_desc((np.float16, X4.shape))}, "output_tensor.buffer.data_type"),
        ({"output_tensor": tensor_desc((np.float32, (1, 2, 2, 1)))}, "output_tensor.buffer.sizes"),
        (
            {
                "input_tensor": tensor_desc((np.float32, (2, 2, 2))),
                "output_tensor": tensor_desc((np.float32, (2, 2, 2))),
            },
            "input_tensor.buffer.sizes",
        ),
    ],
)
def test_local_response_normalization_rules(client: dmlrpc.Client, overrides: dict[str, Any], field: str) -> None:
    _invalid(client, _lrn(**overrides), [bytes(64)], f"{LRN}.{field}")


def test_local_response_normalization_huge_window_is_the_whole_extent(client: dmlrpc.Client) -> None:
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 2, 2, 2)
    for cross_channel in (True, False):
        desc = _lrn(cross_channel=cross_channel, local_size=2**31, alpha=2.0**31, beta=1.0, bias=1.0)
        got = _one(client.execute(desc, [x]))
        expected = ref.local_response_normalization(
            x, cross_channel=cross_channel, local_size=2**31, alpha=2.0**31, beta=1.0, bias=1.0
        )
        assert_close(got, expected, np.dtype(np.float32))
