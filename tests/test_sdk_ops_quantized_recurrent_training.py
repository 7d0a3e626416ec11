"""The SDK's quantized, recurrent, training, spatial-gradient, FOLD/UNFOLD, ROI_ALIGN(1) and RANDOM_GENERATOR
functions against the NumPy references on the real server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dmlrpc
from tests.conftest import ServerThread
from tests.references import fold as fold_ref
from tests.references import quantized as quantized_ref
from tests.references import random_generator as random_ref
from tests.references import recurrent as recurrent_ref
from tests.references import roi_align as roi_ref
from tests.references import spatial_grad as grad_ref
from tests.references import training as training_ref

_RNG = np.random.default_rng(23)


def _floats(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


def test_quantize_and_dequantize_match_numpy(client: dmlrpc.Client) -> None:
    x = _floats(2, 3, 4) * 50
    scale = _RNG.uniform(0.5, 2, (3, 1)).astype(np.float32)  # per row, broadcast by NumPy's rule
    zero = np.int8([[3], [-2], [0]])
    q = client.quantize(x, scale, zero)
    assert q.dtype == np.int8 and q.shape == x.shape
    np.testing.assert_array_equal(q, quantized_ref.quantize_op(x, scale, zero, np.int8))
    np.testing.assert_array_equal(
        client.quantize(x, np.float32(3)), quantized_ref.quantize_op(x, np.float32(3), None, np.uint8)
    )
    back = client.dequantize(q, scale, zero)
    assert back.dtype == np.float32
    np.testing.assert_allclose(back, quantized_ref.dequantize_op(q, scale, zero, np.float32), rtol=1e-6)
    output, out_scale, out_zero = client.dynamic_quantize_linear(x)
    expected = quantized_ref.dynamic_quantize_linear(x, np.uint8)
    np.testing.assert_array_equal(output, expected[0])
    assert out_scale.shape == () and out_zero.shape == () and out_zero.dtype == np.uint8
    np.testing.assert_allclose(out_scale, expected[1], rtol=1e-6)
    np.testing.assert_array_equal(out_zero, expected[2])


def test_quantized_matrix_products_match_numpy(client: dmlrpc.Client) -> None:
    a = _RNG.integers(0, 255, (3, 5)).astype(np.uint8)
    b = _RNG.integers(-128, 127, (5, 4)).astype(np.int8)
    a_scale = np.float32(0.02)
    b_scale = _RNG.uniform(0.01, 0.05, 4).astype(np.float32)  # per column
    a_zero, b_zero = np.uint8(128), np.int8([1, -1, 0, 2])
    out = client.quantized_linear_matrix_multiply(
        a, a_scale, b, b_scale, np.float32(0.05), a_zero_point=a_zero, b_zero_point=b_zero, dtype=np.int8
    )
    expected = quantized_ref.quantized_linear_matrix_multiply(
        a, a_scale, a_zero, b, b_scale, b_zero, np.float32(0.05), None, np.int8
    )
    assert out.shape == (3, 4) and out.dtype == np.int8
    np.testing.assert_allclose(out.astype(int), expected.astype(int), atol=1)  # FLOAT32 against FLOAT64 rounding
    bias, a16 = _floats(4), a.astype(np.uint16)
    b16 = _RNG.integers(0, 999, (5, 4)).astype(np.uint16)
    real = client.matrix_multiply_integer_to_float(a16, a_scale, b16, b_scale, bias, a_zero_point=np.uint16(128))
    reference = quantized_ref.matrix_multiply_integer_to_float(a16, a_scale, np.uint16(128), b16, b_scale, None, bias)
    assert real.dtype == np.float32 and real.shape == (3, 4)
    np.testing.assert_allclose(real, reference, rtol=1e-5, atol=1e-5)


def test_quantized_convolution_and_pooling_match_numpy(client: dmlrpc.Client) -> None:
    x = _RNG.integers(0, 255, (1, 2, 5, 5)).astype(np.uint8)
    w = _RNG.integers(-20, 20, (3, 2, 3, 3)).astype(np.int8)
    w_scale = _RNG.uniform(0.01, 0.05, 3).astype(np.float32)
    bias = _RNG.integers(-100, 100, 3).astype(np.int32)
    out = client.quantized_linear_convolution(
        x,
        np.float32(0.1),
        w,
        w_scale,
        np.float32(0.5),
        bias,
        input_zero_point=np.uint8(100),
        start_padding=1,
        end_padding=1,
    )
    expected = quantized_ref.quantized_linear_convolution(
        x, np.float32([0.1]), np.uint8([100]), w, w_scale, None, bias, np.float32([0.5]), None, np.uint8,
        strides=[1, 1], dilations=[1, 1], start=[1, 1], end=[1, 1], groups=1,
    )  # fmt: skip
    assert out.shape == (1, 3, 5, 5) and out.dtype == np.uint8
    np.testing.assert_allclose(out.astype(int), expected.astype(int), atol=1)
    pooled = client.quantized_linear_average_pooling(
        x, np.float32([0.1, 0.2]), np.float32(0.1), 2, input_zero_point=np.uint8([10, 20]), strides=2
    )
    reference = quantized_ref.quantized_linear_average_pooling(
        x, np.float32([0.1, 0.2]), np.uint8([10, 20]), np.float32([0.1]), None, np.uint8,
        strides=[2, 2], window=[2, 2], start=[0, 0], end=[0, 0], dilations=[1, 1], include_padding=False,
    )  # fmt: skip
    assert pooled.shape == (1, 2, 2, 2)
    np.testing.assert_allclose(pooled.astype(int), reference.astype(int), atol=1)


def _descs(names: tuple[str, ...]) -> list[tuple[str, Any]]:
    return [(f"ACTIVATION_{name.upper()}", None) for name in names]


@pytest.mark.parametrize(("kind", "direction"), [("rnn", "forward"), ("lstm", "bidirectional"), ("gru", "backward")])
def test_recurrent_networks_match_numpy(client: dmlrpc.Client, kind: str, direction: str) -> None:
    steps, batch, size, hidden = 3, 2, 4, 5
    directions = 2 if direction == "bidirectional" else 1
    gates = recurrent_ref.GATES[kind]
    x = _floats(steps, batch, size)
    w = _floats(directions, gates * hidden, size) * 0.5
    r = _floats(directions, gates * hidden, hidden) * 0.5
    b = _floats(directions, 2 * gates * hidden)
    h0 = _floats(directions, batch, hidden)
    lengths = np.uint32([3, 2])
    arguments: dict[str, Any] = {"hidden_init": h0, "sequence_lengths": lengths, "direction": direction}
    names = {"rnn": ("tanh",), "lstm": ("sigmoid", "tanh", "tanh"), "gru": ("sigmoid", "tanh")}[kind]
    results = getattr(client, kind)(x, w, r, b, **arguments)
    expected = recurrent_ref.recurrent(
        kind, x[None], w[None], r[None], activations=_descs(names) * directions, direction=direction,
        bias=b[None, None], hidden_init=h0[None], lengths=lengths,
    )  # fmt: skip
    assert results[0].shape == (steps, directions, batch, hidden)
    np.testing.assert_allclose(results[0], expected.sequence, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(results[1], expected.single[0], rtol=1e-4, atol=1e-5)
    if kind == "lstm":
        np.testing.assert_allclose(results[2], expected.cell_single[0], rtol=1e-4, atol=1e-5)
    (single,) = getattr(client, kind)(x, w, r, b, **arguments, outputs=("single",))
    np.testing.assert_allclose(single, expected.single[0], rtol=1e-4, atol=1e-5)


def test_batch_normalization_training_family_matches_numpy(client: dmlrpc.Client) -> None:
    x, dy = _floats(2, 3, 4, 4), _floats(2, 3, 4, 4)
    scale, bias = _floats(3, 1, 1), _floats(3, 1, 1)
    output, mean, variance = client.batch_normalization_training(x, scale, bias, epsilon=1e-3)
    expected = training_ref.batch_normalization_training(x, scale[None], bias[None], None, 1e-3)
    for got, want in zip((output, mean, variance), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    relu, _, _ = client.batch_normalization_training(x, scale, bias, x, fused_activation="relu")
    added = training_ref.batch_normalization_training(x, scale[None], bias[None], x, 1e-5)[0]
    np.testing.assert_allclose(relu, np.maximum(added, 0), rtol=1e-4, atol=1e-5)
    variance = np.abs(variance) + 0.5
    for name in ("batch_normalization_grad", "batch_normalization_training_grad"):
        results = getattr(client, name)(x, dy, mean, variance, scale[None], epsilon=1e-3)
        reference = getattr(training_ref, name)(x, dy, mean, variance, scale[None], 1e-3)
        assert results[1].shape == (1, 3, 1, 1)
        for got, want in zip(results, reference, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_lrn_grad_and_adam_match_numpy(client: dmlrpc.Client) -> None:
    x, dy = _floats(1, 4, 3, 3), _floats(1, 4, 3, 3)
    for cross_channel in (True, False):
        out = client.local_response_normalization_grad(x, dy, cross_channel=cross_channel, local_size=3, alpha=0.5)
        expected = training_ref.local_response_normalization_grad(
            x, dy, cross_channel=cross_channel, local_size=3, alpha=0.5, beta=0.75, bias=1.0
        )
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    p, m, g = _floats(3, 4), _floats(3, 4), _floats(3, 4)
    v = np.abs(_floats(3, 4))
    for step in (3, np.float32(3)):
        results = client.adam_optimizer(p, m, v, g, step, learning_rate=0.1)
        reference = training_ref.adam_optimizer(p, m, v, g, 3, learning_rate=0.1, beta1=0.9, beta2=0.999, epsilon=1e-8)
        for got, want in zip(results, reference, strict=True):
            assert got.shape == (3, 4)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_spatial_gradients_match_numpy(client: dmlrpc.Client) -> None:
    dy = _floats(1, 2, 2, 2)
    out = client.average_pooling_grad(dy, (1, 2, 4, 5), 3, strides=2, start_padding=(1, 0), include_padding=True)
    expected = grad_ref.average_pooling_grad(dy, (1, 2, 4, 5), [2, 2], [3, 3], [1, 0], True)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    x = _floats(1, 2, 5, 5)
    dy_max = _floats(1, 2, 2, 2)
    out = client.max_pooling_grad(x, dy_max, 2, strides=2, dilations=2)
    np.testing.assert_allclose(out, grad_ref.max_pooling_grad(x, dy_max, [2, 2], [2, 2], [0, 0], [2, 2]), rtol=1e-6)
    dy_resample = _floats(1, 1, 4, 6)
    for rounding in (None, "decreasing"):
        out = client.resample_grad(dy_resample, (1, 1, 2, 3), mode="linear", rounding_direction=rounding)
        expected = grad_ref.resample_grad(
            dy_resample, (1, 1, 2, 3), [1, 1, 2, 2], [0.5] * 4, [-0.5] * 4, linear=True, rounding="floor"
        )
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    dy_slice = _RNG.integers(0, 9, (2, 2)).astype(np.int32)
    out = client.slice_grad(dy_slice, (3, 5), (0, 1), (3, 4), (2, -2))
    np.testing.assert_array_equal(out, grad_ref.slice_grad(dy_slice, (3, 5), (0, 1), (3, 4), (2, -2)))


def test_fold_unfold_roi_align_and_random_generator_match_numpy(client: dmlrpc.Client) -> None:
    x = _floats(1, 2, 4, 5)
    columns = client.unfold(x, (2, 3), strides=(1, 2), start_padding=1)
    np.testing.assert_allclose(columns, fold_ref.unfold(x, [2, 3], [1, 2], [1, 1], [1, 1], [0, 0]), rtol=1e-6)
    folded = client.fold(columns, (4, 5), (2, 3), strides=(1, 2), start_padding=1)
    np.testing.assert_allclose(
        folded, fold_ref.fold(columns, (4, 5), [2, 3], [1, 2], [1, 1], [1, 1], [0, 0]), rtol=1e-5, atol=1e-6
    )
    image = _floats(2, 3, 6, 6)
    rois = np.float32([[0, 0, 4, 4], [1, 2, 5, 6], [0.5, 0.5, 3, 2]])
    indices = np.uint32([0, 1, 1])
    for arguments, offsets, corners in (
        ({}, (0.5, -0.5), False),
        ({"align_regions_to_corners": True}, (0.5, -0.5), True),
    ):
        out = client.roi_align(image, rois, indices, (2, 3), reduction="max", **arguments)
        expected = roi_ref.roi_align(
            image, rois, indices, (2, 3), average=False, nearest=False, offsets=offsets, align_corners=corners
        )
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    state = np.uint32([1, 2, 3, 4, 5, 6])
    values, after = client.random_generator(state, (3, 5))
    expected_values, expected_state = random_ref.random_generator(state, 15)
    np.testing.assert_array_equal(values, expected_values.reshape(3, 5))
    np.testing.assert_array_equal(after, expected_state)
    values, none = client.random_generator(after, 2, next_state=False)
    assert none is None
    np.testing.assert_array_equal(values, random_ref.random_generator(expected_state, 2)[0])


def test_async_client_runs_the_new_functions(server: ServerThread) -> None:
    async def run() -> None:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as client:
            q = await client.quantize(np.float32([1, 2, 3]), np.float32(0.5))
            np.testing.assert_array_equal(q, [2, 4, 6])
            columns = await client.unfold(np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2), 1)
            np.testing.assert_array_equal(columns, [[[0, 1, 2, 3]]])
            values, _ = await client.random_generator([0, 0, 0, 0, 0, 0], 4)
            np.testing.assert_array_equal(values, random_ref.random_generator(np.zeros(6, np.uint32), 4)[0])
            out = await client.slice_grad(np.float32([7]), (3,), (1,), (1,))
            np.testing.assert_array_equal(out, [0, 7, 0])

    asyncio.run(run())


def _refused(kind: type[dmlrpc.ArgumentError], argument: str, call: Callable[[], Any]) -> dmlrpc.ArgumentError:
    with pytest.raises(kind) as caught:
        call()
    assert caught.value.argument == argument and caught.value.request_id is None
    return caught.value


def test_argument_errors_come_before_any_request() -> None:
    # Port 1 has no server: a request would fail UNAVAILABLE, so each argument error shows none was tried.
    x = np.zeros((2, 3, 4), np.float32)
    with dmlrpc.Client("127.0.0.1:1", timeout=5, retry=None) as client:
        _refused(dmlrpc.ArgumentValueError, "zero_point", lambda: client.quantize(x, 1.0, np.int8([1, 2])))
        _refused(dmlrpc.ArgumentTypeError, "dtype", lambda: client.quantize(x, 1.0, dtype=np.int32))
        _refused(dmlrpc.ArgumentTypeError, "input", lambda: client.dequantize(x, 1.0))
        error = _refused(dmlrpc.ArgumentValueError, "b", lambda: client.quantized_linear_matrix_multiply(
            np.uint8([[1, 2]]), 1.0, np.uint8([[1, 2]]), 1.0, 1.0))  # fmt: skip
        assert "(1, 2)" in str(error)
        _refused(dmlrpc.ArgumentValueError, "filter", lambda: client.quantized_linear_convolution(
            np.zeros((1, 2, 3, 3), np.uint8), 1.0, np.zeros((1, 3, 1, 1), np.uint8), 1.0, 1.0))  # fmt: skip
        error = _refused(dmlrpc.ArgumentValueError, "weight", lambda: client.lstm(x, np.zeros((1, 6, 4), np.float32),
            np.zeros((1, 8, 2), np.float32)))  # fmt: skip
        assert "(1, 6, 4)" in str(error) and "(1, 8, 4)" in str(error)
        error = _refused(dmlrpc.ArgumentValueError, "outputs", lambda: client.gru(x, np.zeros((1, 6, 4), np.float32),
            np.zeros((1, 6, 2), np.float32), outputs=("cell_single",)))  # type: ignore[arg-type]  # fmt: skip
        assert "single" in error.allowed
        _refused(dmlrpc.ArgumentValueError, "activations", lambda: client.rnn(x, np.zeros((1, 2, 4), np.float32),
            np.zeros((1, 2, 2), np.float32), activations=["no_such"]))  # fmt: skip
        _refused(
            dmlrpc.ArgumentValueError,
            "scale",
            lambda: client.batch_normalization_training(x, np.ones(5, np.float32), 0.0),
        )
        _refused(dmlrpc.ArgumentValueError, "beta1", lambda: client.adam_optimizer(x, x, x, x, 1, beta1=2))
        _refused(dmlrpc.ArgumentValueError, "input", lambda: client.local_response_normalization_grad(x, x))
        error = _refused(dmlrpc.ArgumentValueError, "input_gradient", lambda: client.average_pooling_grad(
            np.zeros((1, 1, 3, 3), np.float32), (1, 1, 4, 4), 2, strides=2))  # fmt: skip
        assert "(1, 1, 3, 3)" in str(error) and "(1, 1, 2, 2)" in str(error)
        _refused(
            dmlrpc.ArgumentValueError,
            "strides",
            lambda: client.slice_grad(x, (2, 3, 4), (0, 0, 0), (2, 3, 4), (1, 0, 1)),
        )
        _refused(dmlrpc.ArgumentValueError, "mode", lambda: client.resample_grad(x, (2, 3, 2), mode="cubic"))  # type: ignore[arg-type]
        _refused(dmlrpc.ArgumentValueError, "input", lambda: client.fold(np.zeros((1, 5, 4), np.float32), (3, 3), 2))
        _refused(dmlrpc.ArgumentValueError, "rois", lambda: client.roi_align(np.zeros((1, 1, 2, 2), np.float32),
            np.zeros((2, 3), np.float32), [0, 0], (1, 1)))  # fmt: skip
        _refused(dmlrpc.ArgumentTypeError, "input_state", lambda: client.random_generator([-1, 0, 0, 0, 0, 0], 3))
        _refused(
            dmlrpc.ArgumentValueError, "shape", lambda: client.random_generator(np.zeros(6, np.uint32), (1, 2, 3, 4, 5))
        )


def _graph_case(name: str) -> tuple[list[np.ndarray], Callable[..., Any], Callable[..., Any]]:
    """Per operator: the arrays (in DirectML's shapes), the graph's node over its inputs and the eager call."""
    x4, s1 = _floats(1, 2, 4, 4), np.ones((1, 2, 1, 1), np.float32)
    u8 = _RNG.integers(0, 255, (1, 2, 4, 4)).astype(np.uint8)
    one = np.float32(0.1).reshape(1, 1, 1, 1)
    table: dict[str, tuple[list[np.ndarray], Callable[..., Any], Callable[..., Any]]] = {
        "dynamic_quantize_linear": (
            [x4], lambda g, a: g.dynamic_quantize_linear(a), lambda c, a: c.dynamic_quantize_linear(a)
        ),
        "quantized_linear_average_pooling": (
            [u8, one, one],
            lambda g, a, s, o: g.quantized_linear_average_pooling(a, s, o, 2),
            lambda c, a, s, o: c.quantized_linear_average_pooling(a, s, o, 2),
        ),
        "matrix_multiply_integer_to_float": (
            [u8[:, :1, :, :3], one, u8[:, :1, :3, :], one],
            lambda g, a, sa, b, sb: g.matrix_multiply_integer_to_float(a, sa, b, sb),
            lambda c, a, sa, b, sb: c.matrix_multiply_integer_to_float(a, sa, b, sb),
        ),
        "batch_normalization_training": (
            [x4, s1, s1 * 0],
            lambda g, a, s, b: g.batch_normalization_training(a, s, b),
            lambda c, a, s, b: c.batch_normalization_training(a, s, b),
        ),
        "lstm": (
            [_floats(1, 2, 1, 3), _floats(1, 1, 8, 3), _floats(1, 1, 8, 2)],
            lambda g, a, w, r: g.lstm(a, w, r),
            lambda c, a, w, r: c.lstm(a[0], w[0], r[0]),
        ),
        "adam_optimizer": (
            [x4, x4, np.abs(x4), x4, np.uint32(2).reshape(1, 1, 1, 1)],
            lambda g, *t: g.adam_optimizer(*t),
            lambda c, *t: c.adam_optimizer(*t[:4], 2),
        ),
        "max_pooling_grad": ([x4, x4[:, :, :2, :2]], lambda g, a, d: g.max_pooling_grad(a, d, 2, strides=2),
                             lambda c, a, d: c.max_pooling_grad(a, d, 2, strides=2)),
        "slice_grad": ([x4[:, :, :2]], lambda g, d: g.slice_grad(d, (1, 2, 4, 4), (0, 0, 1, 0), (1, 2, 2, 4)),
                       lambda c, d: c.slice_grad(d, (1, 2, 4, 4), (0, 0, 1, 0), (1, 2, 2, 4))),
        "unfold": ([x4], lambda g, a: g.unfold(a, 2), lambda c, a: c.unfold(a, 2)),
        "roi_align": (
            [x4, np.float32([[0, 0, 3, 3]]), np.uint32([0])],
            lambda g, a, r, i: g.roi_align(a, r, i, (2, 2)),
            lambda c, a, r, i: c.roi_align(a, r, i, (2, 2)),
        ),
        "random_generator": (
            [np.uint32([1, 2, 3, 4, 5, 6]).reshape(1, 1, 1, 6)],
            lambda g, s: g.random_generator(s, 8),
            lambda c, s: tuple(np.reshape(o, (1, 1, 1, -1)) for o in c.random_generator(s, 8)),
        ),
    }  # fmt: skip
    return table[name]


@pytest.mark.parametrize(
    "name",
    [
        "dynamic_quantize_linear", "quantized_linear_average_pooling", "matrix_multiply_integer_to_float",
        "batch_normalization_training", "lstm", "adam_optimizer", "max_pooling_grad", "slice_grad", "unfold",
        "roi_align", "random_generator",
    ],
)  # fmt: skip
def test_graph_nodes_equal_the_eager_functions(client: dmlrpc.Client, name: str) -> None:
    arrays, node, eager = _graph_case(name)
    g = dmlrpc.Graph()
    inputs = [g.input(a.dtype, a.shape) for a in arrays]
    outputs = node(g, *inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    g.output(*outputs)
    with client.compile(g) as op:
        results = op(*arrays)
    expected = eager(client, *arrays)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(results) == len(expected)
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_allclose(
            np.asarray(got, np.float64), np.reshape(want, got.shape).astype(np.float64), rtol=1e-5
        )
