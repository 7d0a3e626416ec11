"""BATCH_NORMALIZATION_GRAD, BATCH_NORMALIZATION_TRAINING(_GRAD), LOCAL_RESPONSE_NORMALIZATION_GRAD and
ADAM_OPTIMIZER over the wire: hand-worked cases, properties against the NumPy references, and every rule."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators import REGISTRY
from dmlrpc_server.operators.base import Limits
from tests.references import normalization as forward
from tests.references import training as ref
from tests.strategies import Layout, arrays, broadcast_values, layouts, shapes
from tests.tolerance import assert_close, mean_rounding, tolerance

FL = operators_pb2.FeatureLevel
LATEST = operators_pb2.FEATURE_LEVEL_6_4
LIMITS = Limits(max_tensor_bytes=1 << 30, max_request_bytes=1 << 30, max_message_bytes=1 << 30)
Fused = tuple[operators_pb2.OperatorDesc | None, Callable[[np.ndarray], np.ndarray]]


def _desc(case: str, **fields: Any) -> operators_pb2.OperatorDesc:
    inner = type(getattr(operators_pb2.OperatorDesc(), case))(**fields)
    return operators_pb2.OperatorDesc(**{case: inner})


def _dtypes(case: str, field: str = "input_tensor") -> list[np.dtype[Any]]:
    table = REGISTRY[case].support_at(LATEST)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table[field].data_types), key=str)


def _close(got: Any, expected: np.ndarray, dtype: np.dtype[Any], allowance: Any = 0.0) -> None:
    assert isinstance(got, np.ndarray)
    assert_close(got, expected, dtype, allowance)


def _taken_over(statistics_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The dimensions the statistics are taken over: those where their size is 1."""
    return tuple(d for d, size in enumerate(statistics_shape) if size == 1)


def _gradient_magnitudes(
    case: str, x: np.ndarray, dy: np.ndarray, mean: np.ndarray, variance: np.ndarray, scale: np.ndarray, epsilon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The batch-normalization gradients' formulas on absolute values: how large the terms are that each one sums or
    subtracts. Where they cancel (a constant InputGradient centres to 0, so BATCH_NORMALIZATION_TRAINING_GRAD's
    OutputGradient is 0), FLOAT32 leaves rounding relative to these, not to the result (1.3e-4 for 0 was seen).
    A wrong or missing term still misses by a large fraction of them."""
    x64, dy64, mean64, var64, scale64 = (np.abs(np.asarray(a, np.float64)) for a in (x, dy, mean, variance, scale))
    axes = _taken_over(mean.shape)
    root = np.sqrt(var64 + np.float64(np.float32(epsilon)))  # Variance is positive here
    scale_gradient = np.sum(dy64 * (x64 + mean64) / root, axis=axes, keepdims=True)
    bias_gradient = np.sum(dy64, axis=axes, keepdims=True)
    if case == "batch_normalization_grad":
        return dy64 * scale64 / root, scale_gradient, bias_gradient
    centred = x64 + np.mean(x64, axis=axes, keepdims=True)
    correction = centred * np.mean(dy64 * centred, axis=axes, keepdims=True) / root**2
    gradient = scale64 / root * (dy64 + np.mean(dy64, axis=axes, keepdims=True) + correction)
    return gradient, scale_gradient, bias_gradient


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
        return operators_pb2.OperatorDesc(activation_relu=operators_pb2.ActivationReluOperatorDesc()), forward.relu
    if kind == "linear":
        alpha = draw(st.floats(-2, 2).map(lambda v: round(v, 2)), label="linear alpha")
        beta = draw(st.floats(-2, 2).map(lambda v: round(v, 2)), label="linear beta")
        linear = operators_pb2.ActivationLinearOperatorDesc(alpha=alpha, beta=beta)
        return operators_pb2.OperatorDesc(activation_linear=linear), lambda x: forward.linear(x, alpha, beta)
    return None, lambda x: x


@st.composite
def _statistics_shape(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Per dimension 1 (taken over) or the input's size."""
    return tuple(draw(st.sampled_from([1, s])) for s in shape)


def _tensor(
    data: st.DataObject, dtype: np.dtype[Any], shape: tuple[int, ...], label: str, positive: bool = False
) -> tuple[np.ndarray, Layout]:
    layout = data.draw(layouts(shape, allow_broadcast=True), label=f"{label} layout")
    values = data.draw(arrays(dtype.type, shape), label=label)
    if positive:
        values = (np.abs(values) + np.asarray(0.1, dtype)).astype(dtype)
    return broadcast_values(values, layout), layout


def _output(data: st.DataObject, dtype: np.dtype[Any], shape: tuple[int, ...], label: str) -> Any:
    layout = data.draw(layouts(shape, allow_broadcast=False), label=f"{label} layout")
    return tensor_desc((dtype, shape), layout.strides)


# ---------------------------------------------------------------------------------------------------------------
# Hand-worked cases (the pages give no examples).


def test_batch_normalization_training_per_channel(client: dmlrpc.Client) -> None:
    x = np.array([[[[1, 3]], [[10, 20]]]], np.float32)  # {1, 2, 1, 2}: statistics over N, H, W per channel
    scale = np.array([[[[2]], [[1]]]], np.float32)
    bias = np.array([[[[1]], [[-1]]]], np.float32)
    add = np.full(x.shape, 0.5, np.float32)
    stats = tensor_desc(scale)
    desc = _desc(
        "batch_normalization_training",
        input_tensor=tensor_desc(x),
        scale_tensor=stats,
        bias_tensor=stats,
        fused_add_tensor=tensor_desc(add),
        output_tensor=tensor_desc(x),
        output_mean_tensor=stats,
        output_variance_tensor=stats,
        epsilon=0.0,
    )
    output, mean, variance = client.execute(desc, [x, scale, bias, add])
    np.testing.assert_allclose(mean, [[[[2]], [[15]]]], rtol=1e-6)
    np.testing.assert_allclose(variance, [[[[1]], [[25]]]], rtol=1e-6)  # population variance
    np.testing.assert_allclose(output, [[[[-0.5, 3.5]], [[-1.5, 0.5]]]], rtol=1e-6)


def test_batch_normalization_grad_per_channel(client: dmlrpc.Client) -> None:
    x = np.array([[[[1, 3]], [[10, 20]]]], np.float32)
    dy = np.array([[[[1, 2]], [[-1, 4]]]], np.float32)
    mean = np.array([[[[2]], [[15]]]], np.float32)
    variance = np.array([[[[4]], [[25]]]], np.float32)
    scale = np.array([[[[2]], [[1]]]], np.float32)
    stats = tensor_desc(mean)
    desc = _desc(
        "batch_normalization_grad",
        input_tensor=tensor_desc(x),
        input_gradient_tensor=tensor_desc(dy),
        mean_tensor=stats,
        variance_tensor=stats,
        scale_tensor=stats,
        output_gradient_tensor=tensor_desc(x),
        output_scale_gradient_tensor=stats,
        output_bias_gradient_tensor=stats,
        epsilon=0.0,
    )
    gradient, scale_gradient, bias_gradient = client.execute(desc, [x, dy, mean, variance, scale])
    np.testing.assert_allclose(gradient, [[[[1, 2]], [[-0.2, 0.8]]]], rtol=1e-6)
    # Channel 0: (1 * -1 + 2 * 1) / 2; channel 1: (-1 * -5 + 4 * 5) / 5.
    np.testing.assert_allclose(scale_gradient, [[[[0.5]], [[5]]]], rtol=1e-6)
    np.testing.assert_allclose(bias_gradient, [[[[3]], [[3]]]], rtol=1e-6)


def _training_pair(x: np.ndarray, scale: np.ndarray, epsilon: float) -> Callable[[np.ndarray], float]:
    """The loss sum(dY * BATCH_NORMALIZATION_TRAINING(x)) for a fixed dY, as a function of x (for differences)."""
    dy = np.linspace(-1, 1, x.size).reshape(x.shape)

    def loss(values: np.ndarray) -> float:
        output, _, _ = ref.batch_normalization_training(values, scale, np.zeros_like(scale), None, epsilon)
        return float(np.sum(dy * output))

    return loss


def test_batch_normalization_training_grad_is_the_training_pass_gradient(client: dmlrpc.Client) -> None:
    # With Mean and Variance from the forward pass, OutputGradient is d(sum(dY * Output)) / d(Input): checked
    # against central differences of the forward reference.
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 2, 2)).astype(np.float32)
    scale = np.array([1.5, -0.5, 2.0], np.float32).reshape(1, 3, 1, 1)
    epsilon = 0.01
    loss = _training_pair(x, scale, epsilon)
    dy = np.linspace(-1, 1, x.size).reshape(x.shape).astype(np.float32)
    _, mean, variance = ref.batch_normalization_training(x, scale, np.zeros_like(scale), None, epsilon)
    numeric = np.zeros(x.shape)
    step = 1e-6
    for index in np.ndindex(x.shape):
        up, down = x.astype(np.float64), x.astype(np.float64)
        up[index] += step
        down[index] -= step
        numeric[index] = (loss(up) - loss(down)) / (2 * step)
    stats = tensor_desc(scale)
    desc = _desc(
        "batch_normalization_training_grad",
        input_tensor=tensor_desc(x),
        input_gradient_tensor=tensor_desc(dy),
        mean_tensor=stats,
        variance_tensor=stats,
        scale_tensor=stats,
        output_gradient_tensor=tensor_desc(x),
        output_scale_gradient_tensor=stats,
        output_bias_gradient_tensor=stats,
        epsilon=epsilon,
    )
    inputs = [x, dy, mean.astype(np.float32), variance.astype(np.float32), scale]
    gradient, _, bias_gradient = client.execute(desc, inputs)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(bias_gradient, dy.sum(axis=(0, 2, 3), keepdims=True), rtol=1e-5, atol=1e-6)


def test_local_response_normalization_grad_reference_is_the_forward_gradient() -> None:
    # The reference's loops against central differences of the forward reference, even and odd LocalSize.
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 4, 3, 3))
    dy = rng.standard_normal(x.shape)
    for cross_channel in (True, False):
        for local_size in (2, 3):
            attributes: dict[str, Any] = {
                "cross_channel": cross_channel,
                "local_size": local_size,
                "alpha": 0.5,
                "beta": 0.75,
                "bias": 1.0,
            }
            numeric = np.zeros(x.shape)
            for index in np.ndindex(x.shape):
                up, down = x.copy(), x.copy()
                up[index] += 1e-6
                down[index] -= 1e-6
                difference = forward.local_response_normalization(
                    up, **attributes
                ) - forward.local_response_normalization(down, **attributes)
                numeric[index] = np.sum(dy * difference) / 2e-6
            got = ref.local_response_normalization_grad(x, dy, **attributes)
            np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-7)


def test_local_response_normalization_grad_even_window(client: dmlrpc.Client) -> None:
    # LocalSize 2 across 3 channels: windows {c0, c1}, {c1, c2}, {c2}; sending back reaches {c0}, {c0, c1}, {c1, c2}.
    x = np.array([1, 2, 3], np.float32).reshape(1, 3, 1, 1)
    dy = np.array([1, 0, 0], np.float32).reshape(1, 3, 1, 1)
    desc = _desc(
        "local_response_normalization_grad",
        input_tensor=tensor_desc(x),
        input_gradient_tensor=tensor_desc(dy),
        output_gradient_tensor=tensor_desc(x),
        cross_channel=True,
        local_size=2,
        alpha=2.0,
        beta=1.0,
        bias=1.0,
    )
    (got,) = client.execute(desc, [x, dy])
    # Y0 = x0 / (1 + x0^2 + x1^2) = x0 / 6: dY0/dx0 = 1/6 - 2 x0^2 / 36, dY0/dx1 = -2 x0 x1 / 36, dY0/dx2 = 0.
    np.testing.assert_allclose(got.ravel(), [1 / 6 - 2 / 36, -4 / 36, 0], rtol=1e-6, atol=1e-7)


def _adam(**overrides: Any) -> operators_pb2.OperatorDesc:
    x = tensor_desc((np.float32, (1, 1, 2, 2)))
    fields: dict[str, Any] = {
        name: x
        for name in (
            "input_parameters_tensor",
            "input_first_moment_tensor",
            "input_second_moment_tensor",
            "gradient_tensor",
            "output_parameters_tensor",
            "output_first_moment_tensor",
            "output_second_moment_tensor",
        )
    }
    fields.update(
        training_step_tensor=tensor_desc((np.uint32, (1, 1, 1, 1))),
        learning_rate=0.01,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
    )
    fields.update(overrides)
    return _desc("adam_optimizer", **fields)


def _step(t: int, dtype: Any = np.uint32) -> np.ndarray:
    return np.full((1, 1, 1, 1), t, dtype)


def test_adam_first_step_moves_each_parameter_by_the_learning_rate(client: dmlrpc.Client) -> None:
    # From zero moments at T = 1 the bias correction cancels both decays: X - LearningRate * sign(G) (Epsilon 0).
    x = np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 2, 2)
    g = np.array([0.5, -2, 8, -0.25], np.float32).reshape(x.shape)
    zeros = np.zeros_like(x)
    parameters, first, second = client.execute(_adam(epsilon=0.0, learning_rate=0.5), [x, zeros, zeros, g, _step(1)])
    np.testing.assert_allclose(parameters, x - 0.5 * np.sign(g), rtol=1e-6)
    np.testing.assert_allclose(first, np.float32(1 - np.float32(0.9)) * g, rtol=1e-6)
    np.testing.assert_allclose(second, np.float32(1 - np.float32(0.999)) * g * g, rtol=1e-5)


def test_adam_step_zero_is_nan_as_the_formula_says(client: dmlrpc.Client) -> None:
    x = np.ones((1, 1, 2, 2), np.float32)
    parameters, first, _ = client.execute(_adam(), [x, x, x, x, _step(0)])
    assert np.isnan(parameters).all()  # sqrt(1 - Beta2^0) / (1 - Beta1^0) = 0 / 0
    np.testing.assert_allclose(first, x, rtol=1e-6)


def test_adam_batches_exactly(client: dmlrpc.Client) -> None:
    # The batched model (requests stacked on a leading axis, one training step each) on ONNX Runtime directly.
    operator = REGISTRY["adam_optimizer"]
    assert operator.batching is not None
    plan = operator.plan(_adam().adam_optimizer, feature_level=LATEST, limits=LIMITS)
    session = ort.InferenceSession(
        operator.batching.model(plan.model).SerializeToString(), providers=["CPUExecutionProvider"]
    )
    rng = np.random.default_rng(11)
    requests = []
    for step in (1, 7, 300):
        x, m, g = (rng.standard_normal((1, 1, 2, 2)).astype(np.float32) for _ in range(3))
        v = np.abs(rng.standard_normal((1, 1, 2, 2))).astype(np.float32)
        requests.append([x, m, v, g, _step(step)])
    feeds = {
        name: np.stack([plan.prepare(request)[name] for request in requests]) for name in plan.prepare(requests[0])
    }
    outputs = session.run(None, feeds)
    for index, (x, m, v, g, step_tensor) in enumerate(requests):
        expected = ref.adam_optimizer(
            x, m, v, g, int(step_tensor[0, 0, 0, 0]), learning_rate=0.01, beta1=0.9, beta2=0.999, epsilon=1e-8
        )
        for output, wanted in zip(outputs, expected, strict=True):
            _close(output[index], wanted, np.dtype(np.float32))


# ---------------------------------------------------------------------------------------------------------------
# Properties against the references.

_GRAD_CASES = {
    "batch_normalization_grad": ref.batch_normalization_grad,
    "batch_normalization_training_grad": ref.batch_normalization_training_grad,
}


@settings(max_examples=20)
@given(data=st.data(), case=st.sampled_from(sorted(_GRAD_CASES)))
def test_batch_normalization_gradients_match_reference(client: dmlrpc.Client, data: st.DataObject, case: str) -> None:
    dtype = data.draw(st.sampled_from(_dtypes(case)), label="dtype")
    shape = data.draw(shapes(), label="shape")
    statistics_shape = data.draw(_statistics_shape(shape), label="statistics shape")
    x, x_layout = _tensor(data, dtype, shape, "x")
    dy, dy_layout = _tensor(data, dtype, shape, "dy")
    statistics = {
        name: _tensor(data, dtype, statistics_shape, name, positive=name == "variance")
        for name in ("mean", "variance", "scale")
    }
    epsilon = data.draw(st.floats(1e-5, 1), label="epsilon")
    desc = _desc(
        case,
        input_tensor=tensor_desc(x, x_layout.strides),
        input_gradient_tensor=tensor_desc(dy, dy_layout.strides),
        output_gradient_tensor=_output(data, dtype, shape, "output gradient"),
        output_scale_gradient_tensor=_output(data, dtype, statistics_shape, "scale gradient"),
        output_bias_gradient_tensor=_output(data, dtype, statistics_shape, "bias gradient"),
        epsilon=epsilon,
        **{f"{name}_tensor": tensor_desc(array, layout.strides) for name, (array, layout) in statistics.items()},
    )
    arrays_ = [array for array, _ in statistics.values()]
    got = client.execute(desc, [x, dy, *arrays_])
    expected = _GRAD_CASES[case](x, dy, *arrays_, epsilon)
    magnitudes = _gradient_magnitudes(case, x, dy, *arrays_, epsilon)
    for result, wanted, magnitude in zip(got, expected, magnitudes, strict=True):
        _close(result, wanted, dtype, tolerance(dtype) * magnitude)


@settings(max_examples=20)
@given(data=st.data())
def test_batch_normalization_training_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    case = "batch_normalization_training"
    dtype = data.draw(st.sampled_from(_dtypes(case)), label="dtype")
    shape = data.draw(shapes(), label="shape")
    statistics_shape = data.draw(_statistics_shape(shape), label="statistics shape")
    x, x_layout = _tensor(data, dtype, shape, "x")
    scale, scale_layout = _tensor(data, dtype, statistics_shape, "scale")
    bias, bias_layout = _tensor(data, dtype, statistics_shape, "bias")
    fields: dict[str, Any] = {}
    add: np.ndarray | None = None
    if data.draw(st.booleans(), label="has fused add"):
        add, add_layout = _tensor(data, dtype, shape, "fused add")
        fields["fused_add_tensor"] = tensor_desc(add, add_layout.strides)
    fused, activation = data.draw(_fused())
    if fused is not None:
        fields["fused_activation"] = fused
    epsilon = data.draw(st.floats(1e-5, 1), label="epsilon")
    desc = _desc(
        case,
        input_tensor=tensor_desc(x, x_layout.strides),
        scale_tensor=tensor_desc(scale, scale_layout.strides),
        bias_tensor=tensor_desc(bias, bias_layout.strides),
        output_tensor=_output(data, dtype, shape, "output"),
        output_mean_tensor=_output(data, dtype, statistics_shape, "mean"),
        output_variance_tensor=_output(data, dtype, statistics_shape, "variance"),
        epsilon=epsilon,
        **fields,
    )
    output, mean, variance = client.execute(desc, [x, scale, bias, add])
    expected, expected_mean, expected_variance = ref.batch_normalization_training(x, scale, bias, add, epsilon)
    _close(output, activation(expected), dtype, mean_rounding(x, _taken_over(statistics_shape), epsilon, scale, dtype))
    _close(mean, expected_mean, dtype)
    _close(variance, expected_variance, dtype)


@settings(max_examples=20)
@given(data=st.data())
def test_local_response_normalization_grad_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    case = "local_response_normalization_grad"
    dtype = data.draw(st.sampled_from(_dtypes(case)), label="dtype")
    shape = data.draw(shapes(min_dims=4, max_dims=4), label="shape")
    x, x_layout = _tensor(data, dtype, shape, "x")
    dy, dy_layout = _tensor(data, dtype, shape, "dy")
    attributes: dict[str, Any] = {
        "cross_channel": data.draw(st.booleans(), label="cross_channel"),
        "local_size": data.draw(st.integers(1, 8), label="local_size"),
        "alpha": data.draw(st.floats(0, 1).map(lambda v: round(v, 3)), label="alpha"),
        "beta": data.draw(st.floats(0, 1).map(lambda v: round(v, 3)), label="beta"),
        "bias": data.draw(st.floats(0.5, 2).map(lambda v: round(v, 3)), label="bias"),
    }
    desc = _desc(
        case,
        input_tensor=tensor_desc(x, x_layout.strides),
        input_gradient_tensor=tensor_desc(dy, dy_layout.strides),
        output_gradient_tensor=_output(data, dtype, shape, "output gradient"),
        **attributes,
    )
    (got,) = client.execute(desc, [x, dy])
    _close(got, ref.local_response_normalization_grad(x, dy, **attributes), dtype)


@settings(max_examples=20)
@given(data=st.data())
def test_adam_optimizer_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    case = "adam_optimizer"
    dtype = data.draw(st.sampled_from(_dtypes(case, "input_parameters_tensor")), label="dtype")
    shape = data.draw(shapes(min_dims=4, max_dims=4), label="shape")
    x, x_layout = _tensor(data, dtype, shape, "x")
    m, m_layout = _tensor(data, dtype, shape, "m")
    v, v_layout = _tensor(data, dtype, shape, "v", positive=True)
    g, g_layout = _tensor(data, dtype, shape, "g")
    # The page gives the step two types: UINT32 (its field description) or the parameters' (its table).
    step_type = data.draw(st.sampled_from([np.dtype(np.uint32), dtype]), label="training step type")
    step = data.draw(st.integers(1, 2_000), label="training step")
    hyper: dict[str, Any] = {
        "learning_rate": data.draw(st.floats(-1, 1).map(lambda v: round(v, 3)), label="learning_rate"),
        "beta1": data.draw(st.floats(0, 0.999).map(lambda v: round(v, 3)), label="beta1"),
        "beta2": data.draw(st.floats(0, 0.999).map(lambda v: round(v, 3)), label="beta2"),
        "epsilon": data.draw(st.floats(1e-8, 1), label="epsilon"),
    }
    desc = _desc(
        case,
        input_parameters_tensor=tensor_desc(x, x_layout.strides),
        input_first_moment_tensor=tensor_desc(m, m_layout.strides),
        input_second_moment_tensor=tensor_desc(v, v_layout.strides),
        gradient_tensor=tensor_desc(g, g_layout.strides),
        training_step_tensor=tensor_desc(_step(step, step_type)),
        output_parameters_tensor=_output(data, dtype, shape, "parameters"),
        output_first_moment_tensor=_output(data, dtype, shape, "first moment"),
        output_second_moment_tensor=_output(data, dtype, shape, "second moment"),
        **hyper,
    )
    got = client.execute(desc, [x, m, v, g, _step(step, step_type)])
    expected = ref.adam_optimizer(x, m, v, g, step, **hyper)
    for result, wanted in zip(got, expected, strict=True):
        # A step divided by a tiny second moment can leave FLOAT16's range: there it rounds to an infinity of the
        # step's sign, and the rest is compared as usual.
        with np.errstate(over="ignore"):
            rounded = wanted.astype(dtype)
        over = np.isinf(rounded)
        assert np.array_equal(result[over], rounded[over])
        _close(np.where(over, 0, result).astype(dtype), np.where(over, 0.0, wanted), dtype)


# ---------------------------------------------------------------------------------------------------------------
# Validation: every documented rule, and the choices where the pages are silent.

SOFTMAX = operators_pb2.OperatorDesc(activation_softmax=operators_pb2.ActivationSoftmaxOperatorDesc())
X4 = np.zeros((1, 2, 2, 2), np.float32)
C4 = np.zeros((1, 2, 1, 1), np.float32)
F16_X4 = tensor_desc((np.float16, X4.shape))
F16_C4 = tensor_desc((np.float16, C4.shape))
BYTES = bytes(64)


def _bn_grad(case: str, **overrides: Any) -> operators_pb2.OperatorDesc:
    fields: dict[str, Any] = {
        name: tensor_desc(C4)
        for name in (
            "mean_tensor",
            "variance_tensor",
            "scale_tensor",
            "output_scale_gradient_tensor",
            "output_bias_gradient_tensor",
        )
    }
    fields.update(
        input_tensor=tensor_desc(X4),
        input_gradient_tensor=tensor_desc(X4),
        output_gradient_tensor=tensor_desc(X4),
        epsilon=1e-5,
    )
    fields.update(overrides)
    return _desc(case, **fields)


@pytest.mark.parametrize("case", sorted(_GRAD_CASES))
def test_batch_normalization_gradients_run_with_valid_tensors(client: dmlrpc.Client, case: str) -> None:
    gradient, scale_gradient, bias_gradient = client.execute(_bn_grad(case), [X4, X4, C4, C4 + 1, C4])
    assert gradient.shape == X4.shape and scale_gradient.shape == bias_gradient.shape == C4.shape


@pytest.mark.parametrize("case", sorted(_GRAD_CASES))
@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"input_gradient_tensor": F16_X4}, "input_gradient_tensor.buffer.data_type"),
        ({"variance_tensor": F16_C4}, "variance_tensor.buffer.data_type"),
        ({"output_scale_gradient_tensor": F16_C4}, "output_scale_gradient_tensor.buffer.data_type"),
        ({"input_gradient_tensor": tensor_desc((np.float32, (1, 2, 2, 1)))}, "input_gradient_tensor.buffer.sizes"),
        ({"output_gradient_tensor": tensor_desc((np.float32, (1, 2, 2)))}, "output_gradient_tensor.buffer.sizes"),
        ({"mean_tensor": tensor_desc((np.float32, (2, 1, 1)))}, "mean_tensor.buffer.sizes"),
        ({"mean_tensor": tensor_desc((np.float32, (1, 3, 1, 1)))}, "mean_tensor.buffer.sizes"),
        ({"scale_tensor": tensor_desc((np.float32, (1, 1, 1, 1)))}, "scale_tensor.buffer.sizes"),
        ({"variance_tensor": tensor_desc((np.float32, (1, 2, 2, 2)))}, "variance_tensor.buffer.sizes"),
        (
            {"output_bias_gradient_tensor": tensor_desc((np.float32, (1, 2, 1, 2)))},
            "output_bias_gradient_tensor.buffer.sizes",
        ),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": math.nan}, "epsilon"),
    ],
)
def test_batch_normalization_gradient_rules(
    client: dmlrpc.Client, case: str, overrides: dict[str, Any], field: str
) -> None:
    _invalid(client, _bn_grad(case, **overrides), [BYTES] * 5, f"operator_desc.{case}.{field}")


@pytest.mark.parametrize("case", sorted(_GRAD_CASES))
def test_batch_normalization_gradients_take_only_floats(client: dmlrpc.Client, case: str) -> None:
    x, c = X4.astype(np.int32), C4.astype(np.int32)
    fields = {name: tensor_desc(c) for name in ("mean_tensor", "variance_tensor", "scale_tensor")}
    desc = _bn_grad(case, input_tensor=tensor_desc(x), input_gradient_tensor=tensor_desc(x), **fields)
    _invalid(client, desc, [x, x, c, c, c], f"operator_desc.{case}.input_tensor.buffer.data_type")


def test_batch_normalization_gradients_feature_levels() -> None:
    # BATCH_NORMALIZATION_GRAD from 3.1, BATCH_NORMALIZATION_TRAINING_GRAD from 4.1.
    assert REGISTRY["batch_normalization_grad"].support_at(FL.FEATURE_LEVEL_3_0) is None
    assert REGISTRY["batch_normalization_grad"].support_at(FL.FEATURE_LEVEL_3_1) is not None
    assert REGISTRY["batch_normalization_training_grad"].support_at(FL.FEATURE_LEVEL_4_0) is None
    assert REGISTRY["batch_normalization_training_grad"].support_at(FL.FEATURE_LEVEL_4_1) is not None


BNT = "operator_desc.batch_normalization_training"


def _bn_training(**overrides: Any) -> operators_pb2.OperatorDesc:
    fields: dict[str, Any] = {
        name: tensor_desc(C4)
        for name in ("scale_tensor", "bias_tensor", "output_mean_tensor", "output_variance_tensor")
    }
    fields.update(input_tensor=tensor_desc(X4), output_tensor=tensor_desc(X4), epsilon=1e-5)
    fields.update(overrides)
    return _desc("batch_normalization_training", **fields)


def test_batch_normalization_training_fused_add_is_optional(client: dmlrpc.Client) -> None:
    x = np.arange(8, dtype=np.float32).reshape(X4.shape)
    output, mean, variance = client.execute(_bn_training(), [x, C4 + 1, C4, None])
    expected = ref.batch_normalization_training(x, C4 + 1, C4, None, 1e-5)
    for got, wanted in zip((output, mean, variance), expected, strict=True):
        _close(got, wanted, np.dtype(np.float32))


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"bias_tensor": F16_C4}, "bias_tensor.buffer.data_type"),
        ({"fused_add_tensor": F16_X4}, "fused_add_tensor.buffer.data_type"),
        ({"output_variance_tensor": F16_C4}, "output_variance_tensor.buffer.data_type"),
        ({"output_tensor": tensor_desc((np.float32, (1, 2, 2, 1)))}, "output_tensor.buffer.sizes"),
        ({"fused_add_tensor": tensor_desc((np.float32, (1, 2, 2)))}, "fused_add_tensor.buffer.sizes"),
        ({"scale_tensor": tensor_desc((np.float32, (1, 3, 1, 1)))}, "scale_tensor.buffer.sizes"),
        ({"scale_tensor": tensor_desc((np.float32, (2, 1, 1)))}, "scale_tensor.buffer.sizes"),
        ({"bias_tensor": tensor_desc((np.float32, (1, 1, 1, 1)))}, "bias_tensor.buffer.sizes"),
        ({"output_mean_tensor": tensor_desc((np.float32, (1, 2, 2, 1)))}, "output_mean_tensor.buffer.sizes"),
        ({"epsilon": -1e-3}, "epsilon"),
        ({"epsilon": math.inf}, "epsilon"),
        ({"fused_activation": SOFTMAX}, "fused_activation.activation_softmax"),
        ({"fused_activation": operators_pb2.OperatorDesc()}, "fused_activation"),
    ],
)
def test_batch_normalization_training_rules(client: dmlrpc.Client, overrides: dict[str, Any], field: str) -> None:
    add = BYTES if "fused_add_tensor" in overrides else None
    _invalid(client, _bn_training(**overrides), [BYTES, BYTES, BYTES, add], f"{BNT}.{field}")


def test_batch_normalization_training_exists_from_4_1() -> None:
    assert REGISTRY["batch_normalization_training"].support_at(FL.FEATURE_LEVEL_4_0) is None
    REGISTRY["batch_normalization_training"].plan(
        _bn_training().batch_normalization_training, feature_level=FL.FEATURE_LEVEL_4_1, limits=LIMITS
    )


LRNG = "operator_desc.local_response_normalization_grad"


def _lrn_grad(**overrides: Any) -> operators_pb2.OperatorDesc:
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(X4),
        "input_gradient_tensor": tensor_desc(X4),
        "output_gradient_tensor": tensor_desc(X4),
        "cross_channel": True,
        "local_size": 3,
        "alpha": 1e-4,
        "beta": 0.75,
        "bias": 1.0,
    }
    fields.update(overrides)
    return _desc("local_response_normalization_grad", **fields)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"local_size": 0}, "local_size"),
        ({"alpha": math.nan}, "alpha"),
        ({"beta": math.inf}, "beta"),
        ({"bias": -math.inf}, "bias"),
        ({"input_gradient_tensor": F16_X4}, "input_gradient_tensor.buffer.data_type"),
        ({"output_gradient_tensor": F16_X4}, "output_gradient_tensor.buffer.data_type"),
        ({"input_gradient_tensor": tensor_desc((np.float32, (1, 2, 2, 1)))}, "input_gradient_tensor.buffer.sizes"),
        ({"output_gradient_tensor": tensor_desc((np.float32, (2, 2, 2, 2)))}, "output_gradient_tensor.buffer.sizes"),
        ({"input_tensor": tensor_desc((np.float32, (2, 2, 2)))}, "input_tensor.buffer.sizes"),
    ],
)
def test_local_response_normalization_grad_rules(client: dmlrpc.Client, overrides: dict[str, Any], field: str) -> None:
    _invalid(client, _lrn_grad(**overrides), [BYTES, BYTES], f"{LRNG}.{field}")


def test_local_response_normalization_grad_huge_window_is_the_whole_extent(client: dmlrpc.Client) -> None:
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 2, 2, 2) / 8
    dy = np.ones_like(x)
    for cross_channel in (True, False):
        attributes: dict[str, Any] = {
            "cross_channel": cross_channel,
            "local_size": 2**31,
            "alpha": 2.0**31,
            "beta": 1.0,
            "bias": 1.0,
        }
        (got,) = client.execute(_lrn_grad(**attributes), [x, dy])
        _close(got, ref.local_response_normalization_grad(x, dy, **attributes), np.dtype(np.float32))


ADAM = "operator_desc.adam_optimizer"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"gradient_tensor": tensor_desc((np.float16, (1, 1, 2, 2)))}, "gradient_tensor.buffer.data_type"),
        (
            {"output_second_moment_tensor": tensor_desc((np.float16, (1, 1, 2, 2)))},
            "output_second_moment_tensor.buffer.data_type",
        ),
        (
            {"input_first_moment_tensor": tensor_desc((np.float32, (1, 1, 2, 1)))},
            "input_first_moment_tensor.buffer.sizes",
        ),
        (
            {"output_parameters_tensor": tensor_desc((np.float32, (1, 2, 2, 1)))},
            "output_parameters_tensor.buffer.sizes",
        ),
        ({"training_step_tensor": tensor_desc((np.uint32, (1, 1, 1, 2)))}, "training_step_tensor.buffer.sizes"),
        ({"training_step_tensor": tensor_desc((np.uint32, (1, 1, 1)))}, "training_step_tensor.buffer.sizes"),
        ({"training_step_tensor": tensor_desc((np.float16, (1, 1, 1, 1)))}, "training_step_tensor.buffer.data_type"),
        ({"training_step_tensor": tensor_desc((np.int32, (1, 1, 1, 1)))}, "training_step_tensor.buffer.data_type"),
        (
            {
                name: tensor_desc((np.float32, (2, 2)))
                for name in (
                    "input_parameters_tensor",
                    "input_first_moment_tensor",
                    "input_second_moment_tensor",
                    "gradient_tensor",
                    "output_parameters_tensor",
                    "output_first_moment_tensor",
                    "output_second_moment_tensor",
                )
            },
            "input_parameters_tensor.buffer.sizes",
        ),
        ({"learning_rate": math.nan}, "learning_rate"),
        ({"beta1": -0.1}, "beta1"),
        ({"beta2": 1.5}, "beta2"),
        ({"beta1": math.nan}, "beta1"),
        ({"epsilon": -1e-8}, "epsilon"),
    ],
)
def test_adam_optimizer_rules(client: dmlrpc.Client, overrides: dict[str, Any], field: str) -> None:
    _invalid(client, _adam(**overrides), [bytes(16)] * 4 + [bytes(4)], f"{ADAM}.{field}")


def test_adam_optimizer_exists_from_3_0() -> None:
    assert REGISTRY["adam_optimizer"].support_at(FL.FEATURE_LEVEL_2_1) is None
    REGISTRY["adam_optimizer"].plan(_adam().adam_optimizer, feature_level=FL.FEATURE_LEVEL_3_0, limits=LIMITS)
    _plan_invalid("adam_optimizer", _adam(beta2=-1.0).adam_optimizer, FL.FEATURE_LEVEL_3_0, f"{ADAM}.beta2")
