"""The SDK's CUMULATIVE_SUMMATION/PRODUCT, MEAN_VARIANCE_NORMALIZATION2, BATCH_NORMALIZATION, LP_NORMALIZATION,
ONE_HOT and FILL_VALUE_SEQUENCE functions against NumPy references on the real server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dmlrpc
from tests.conftest import ServerThread

_RNG = np.random.default_rng(11)


def _scan_reference(function: str, x: np.ndarray, axis: int, reverse: bool, exclusive: bool) -> np.ndarray:
    """np.cumsum / np.cumprod in the input's dtype (integers wrap), reversed and exclusive as DirectML's."""
    scan = np.cumsum if function == "cumsum" else np.cumprod
    identity = 0 if function == "cumsum" else 1
    wide = x.astype(np.float64) if x.dtype.kind == "f" else x
    data = np.flip(wide, axis) if reverse else wide
    result = scan(data, axis=axis, dtype=data.dtype)
    if exclusive:
        result = np.concatenate(
            [np.full_like(np.take(result, [0], axis), identity), np.delete(result, -1, axis)], axis=axis
        )
    return (np.flip(result, axis) if reverse else result).astype(x.dtype)


@pytest.mark.parametrize("function", ["cumsum", "cumprod"])
@pytest.mark.parametrize(
    ("axis", "reverse", "exclusive"), [(0, False, False), (-1, True, False), (1, False, True), (-2, True, True)]
)
def test_scans_match_numpy(client: dmlrpc.Client, function: str, axis: int, reverse: bool, exclusive: bool) -> None:
    x = _RNG.uniform(0.5, 1.5, (3, 4, 5)).astype(np.float32)
    out = getattr(client, function)(x, axis, reverse=reverse, exclusive=exclusive)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(out, _scan_reference(function, x, axis, reverse, exclusive), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.float16])
def test_scans_other_types_wrap_as_directml(client: dmlrpc.Client, dtype: type[Any]) -> None:
    x = _RNG.integers(1, 9 if np.dtype(dtype).kind == "f" else 1000, (2, 6)).astype(dtype)
    for function in ("cumsum", "cumprod"):
        out = getattr(client, function)(x, 1)
        assert out.dtype == np.dtype(dtype)
        expected = _scan_reference(function, x, 1, False, False)
        if np.dtype(dtype).kind == "f":
            np.testing.assert_allclose(out, expected, rtol=2e-3)
        else:
            np.testing.assert_array_equal(out, expected)
    # The page's example: {1,1,3,4}, axis 3, decreasing, inclusive.
    page = np.array([[[[2, 1, 3, 5], [3, 8, 7, 3], [9, 6, 2, 4]]]], np.float32)
    np.testing.assert_array_equal(
        client.cumsum(page, 3, reverse=True), [[[[11, 9, 8, 5], [21, 18, 10, 3], [21, 12, 6, 4]]]]
    )
    np.testing.assert_array_equal(client.cumsum([1, 2, 3], 0), [1, 3, 6])  # a list of ints is int64


def _mvn_reference(
    x: np.ndarray, axes: tuple[int, ...], scale: Any, bias: Any, normalize_variance: bool, epsilon: float
) -> np.ndarray:
    wide = x.astype(np.float64)
    centred = wide - wide.mean(axis=axes, keepdims=True)
    if normalize_variance:
        centred = centred / np.sqrt(wide.var(axis=axes, keepdims=True) + epsilon)
    if scale is not None:
        centred = centred * scale
    if bias is not None:
        centred = centred + bias
    return centred


@pytest.mark.parametrize(
    ("axes", "with_scale", "with_bias", "normalize_variance"),
    [((-1,), True, True, True), ((1, 2), False, False, True), ((0,), True, False, False), (None, False, True, True)],
)
def test_mean_variance_normalization_matches_numpy(
    client: dmlrpc.Client, axes: Any, with_scale: bool, with_bias: bool, normalize_variance: bool
) -> None:
    x = _RNG.standard_normal((2, 3, 5)).astype(np.float32)
    scale = _RNG.standard_normal(5).astype(np.float32) if with_scale else None  # broadcast over the last axis
    bias = _RNG.standard_normal((3, 1)).astype(np.float32) if with_bias else None
    out = client.mean_variance_normalization(
        x, axes, scale=scale, bias=bias, normalize_variance=normalize_variance, epsilon=1e-3
    )
    reduced = tuple(range(3)) if axes is None else tuple(a % 3 for a in axes)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(
        out, _mvn_reference(x, reduced, scale, bias, normalize_variance, 1e-3), rtol=1e-4, atol=1e-5
    )


def test_batch_normalization_matches_numpy(client: dmlrpc.Client) -> None:
    x = _RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    mean, scale, bias = (_RNG.standard_normal((3, 1, 1)).astype(np.float32) for _ in range(3))
    variance = _RNG.uniform(0.5, 2, (3, 1, 1)).astype(np.float32)
    wide = x.astype(np.float64)
    normalized = (wide - mean) / np.sqrt(variance.astype(np.float64) + 1e-3)
    out = client.batch_normalization(x, mean, variance, scale, bias, epsilon=1e-3)
    np.testing.assert_allclose(out, scale * normalized + bias, rtol=1e-4, atol=1e-5)
    out = client.batch_normalization(x, mean, variance)  # DirectML's required Scale and Bias sent as 1 and 0
    np.testing.assert_allclose(out, (wide - mean) / np.sqrt(variance.astype(np.float64) + 1e-5), rtol=1e-4, atol=1e-5)
    half = client.batch_normalization(np.float16([[1, 3]]), np.float16(2), np.float16(1), epsilon=0)
    assert half.dtype == np.float16 and half.shape == (1, 2)
    np.testing.assert_array_equal(half, [[-1, 1]])
    vector = client.batch_normalization(np.float32([1, 2, 3]), np.float32(2), np.float32(4), epsilon=0)
    np.testing.assert_allclose(vector, [-0.5, 0, 0.5])


@pytest.mark.parametrize(("axis", "p"), [(-1, 2), (0, 1), (1, 2)])
def test_lp_normalization_matches_numpy(client: dmlrpc.Client, axis: int, p: int) -> None:
    x = _RNG.standard_normal((3, 4, 2)).astype(np.float32)
    x[0, :, 0] = 0  # a zero slice along axis 1: max(norm, epsilon) makes it 0, not NaN
    out = client.lp_normalization(x, axis, p=p)
    norm = np.linalg.norm(x.astype(np.float64), ord=p, axis=axis, keepdims=True) if p == 2 else None
    if norm is None:
        norm = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=True)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(out, x / np.maximum(norm, 1e-5), rtol=1e-5, atol=1e-6)


def _one_hot_reference(indices: np.ndarray, depth: int, values: np.ndarray, axis: int) -> np.ndarray:
    expanded = np.expand_dims(indices.astype(np.int64), axis)
    expanded = np.where(expanded < 0, expanded + depth, expanded)
    positions = np.arange(depth).reshape([depth if d == axis % expanded.ndim else 1 for d in range(expanded.ndim)])
    return np.where(expanded == positions, values[1], values[0])


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32, np.uint32])
def test_one_hot_matches_numpy(client: dmlrpc.Client, axis: int, index_dtype: type[Any]) -> None:
    low = -4 if np.dtype(index_dtype).kind == "i" else 0
    indices = _RNG.integers(low, 6, (2, 3)).astype(index_dtype)  # some out of range: all off values
    values = np.float32([-1, 2.5])
    out = client.one_hot(indices, 4, values, axis)
    expected = _one_hot_reference(indices, 4, values, axis)
    assert out.dtype == np.float32 and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_one_hot_shapes_and_types(client: dmlrpc.Client) -> None:
    default = client.one_hot([2, 0], 3)  # int64 (0, 1), as np.eye(3, dtype=np.int64)[[2, 0]]
    assert default.dtype == np.int64
    np.testing.assert_array_equal(default, np.eye(3, dtype=np.int64)[[2, 0]])
    scalar = client.one_hot(np.int32(1), 3, np.float16([0, 1]))
    assert scalar.shape == (3,) and scalar.dtype == np.float16
    np.testing.assert_array_equal(scalar, [0, 1, 0])
    floats = client.one_hot([0], 2, (0.5, 1.5))  # Python floats: float64, which ONE_HOT takes from 4.1
    assert floats.dtype == np.float64
    np.testing.assert_array_equal(floats, [[1.5, 0.5]])
    mask = client.one_hot(np.uint64([[1], [0]]), 2, np.array([False, True]), 0)
    assert mask.dtype == np.bool_ and mask.shape == (2, 2, 1)
    np.testing.assert_array_equal(mask, [[[False], [True]], [[True], [False]]])


@pytest.mark.parametrize(
    ("shape", "start", "delta", "dtype"),
    [
        ((2, 3), 0.5, 0.25, np.float32),
        (5, 3, -2, np.int32),
        ((2, 2), 10, -2, np.uint8),  # the page's example: [[10, 8], [6, 4]]
        ((1, 4), 250, 3, np.uint8),  # wraps
        ((), 7, 1, np.int64),
        ((3,), 1.5, 0.5, np.float16),
    ],
)
def test_fill_value_sequence_matches_numpy(
    client: dmlrpc.Client, shape: Any, start: float, delta: float, dtype: type[Any]
) -> None:
    out = client.fill_value_sequence(shape, start, delta, dtype)
    sizes = (shape,) if isinstance(shape, int) else shape
    count = int(np.prod(sizes))
    if np.dtype(dtype).kind == "f":
        expected = (np.float32(start) + np.arange(count, dtype=np.float32) * np.float32(delta)).astype(dtype)
    else:
        expected = (start + delta * np.arange(count, dtype=np.int64)).astype(dtype)  # wraps, as the low bits
    assert out.dtype == np.dtype(dtype) and out.shape == sizes
    np.testing.assert_array_equal(out, expected.reshape(sizes))


def test_graph_scans_and_normalizes(client: dmlrpc.Client) -> None:
    g = dmlrpc.Graph()
    x = g.input(np.float32, (2, 3, 4))
    mean, variance = g.input(np.float32, (1, 3, 1)), g.input(np.float32, (1, 3, 1))
    summed = g.cumsum(x, -1, exclusive=True)
    product = g.cumprod(x, 1, reverse=True)
    normalized = g.mean_variance_normalization(summed, (1, 2), scale=g.constant(np.full((1, 1, 4), 2, np.float32)))
    batch = g.batch_normalization(product, mean, variance, epsilon=0)
    g.output(normalized, batch)
    data = _RNG.uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)
    m, v = _RNG.standard_normal((1, 3, 1)).astype(np.float32), _RNG.uniform(1, 2, (1, 3, 1)).astype(np.float32)
    with client.compile(g) as op:
        first, second = op(data, m, v)
    expected_sum = _scan_reference("cumsum", data, 2, False, True)
    expected_product = _scan_reference("cumprod", data, 1, True, False)
    np.testing.assert_allclose(
        first, 2 * _mvn_reference(expected_sum, (1, 2), None, None, True, 1e-5), rtol=1e-4, atol=1e-4
    )
    np.testing.assert_allclose(second, (expected_product - m) / np.sqrt(v), rtol=1e-4, atol=1e-5)
    with pytest.raises(dmlrpc.ArgumentValueError) as caught:
        g.batch_normalization(x, g.input(np.float32, (3, 1)), variance)  # an edge is not padded
    assert caught.value.argument == "mean"


def test_graph_generates_and_normalizes_along_an_axis(client: dmlrpc.Client) -> None:
    g = dmlrpc.Graph()
    indices = g.input(np.int32, (2, 1, 3))
    values = g.constant(np.float32([[[0, 1]]]))
    hot = g.one_hot(indices, 4, values, 1)
    sequence = g.fill_value_sequence((2, 4, 3), 1, 1)
    assert hot.shape == (2, 4, 3) and sequence.shape == (2, 4, 3)
    g.output(hot, g.lp_normalization(sequence, 1, p=1))
    data = _RNG.integers(-4, 4, (2, 1, 3)).astype(np.int32)
    with client.compile(g) as op:
        first, second = op(data)
    np.testing.assert_array_equal(first, _one_hot_reference(data[:, 0], 4, np.float32([0, 1]), 1))
    ramp = np.arange(1, 25, dtype=np.float64).reshape(2, 4, 3)
    np.testing.assert_allclose(second, ramp / ramp.sum(axis=1, keepdims=True), rtol=1e-6)
    with pytest.raises(dmlrpc.ArgumentValueError) as caught:
        g.one_hot(g.input(np.int32, (2, 3)), 4, values, 1)  # size 3 along the axis, not 1
    assert caught.value.argument == "indices"


def test_async_client_scans_and_normalizes(server: ServerThread) -> None:
    async def run() -> None:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as client:
            x = np.float32([[1, 2, 3], [4, 5, 6]])
            np.testing.assert_array_equal(await client.cumsum(x, 1, reverse=True), [[6, 5, 3], [15, 11, 6]])
            np.testing.assert_array_equal(await client.cumprod(x, 0, exclusive=True), [[1, 1, 1], [1, 2, 3]])
            out = await client.mean_variance_normalization(x, 1, normalize_variance=False)
            np.testing.assert_allclose(out, [[-1, 0, 1], [-1, 0, 1]])
            out = await client.batch_normalization(
                x, np.float32(1), np.float32(4), np.float32(2), np.float32(1), epsilon=0
            )
            np.testing.assert_allclose(out, x)
            np.testing.assert_allclose(await client.lp_normalization(np.float32([3, 4])), [0.6, 0.8])
            np.testing.assert_array_equal(await client.one_hot([1], 2), [[0, 1]])
            np.testing.assert_array_equal(await client.fill_value_sequence(3, 2, 2, np.int16), [2, 4, 6])

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
        _refused(dmlrpc.ArgumentValueError, "axis", lambda: client.cumsum(x, 3))
        _refused(dmlrpc.ArgumentValueError, "input", lambda: client.cumprod(np.float32(2), 0))
        error = _refused(dmlrpc.ArgumentTypeError, "input", lambda: client.cumsum(np.ones(3, np.int8), 0))
        assert "int32" in error.allowed and "int8" not in error.allowed
        _refused(dmlrpc.ArgumentTypeError, "input", lambda: client.cumprod(np.ones(3), 0))  # float64
        _refused(dmlrpc.ArgumentTypeError, "reverse", lambda: client.cumsum(x, 0, reverse=1))  # type: ignore[arg-type]
        _refused(dmlrpc.ArgumentValueError, "axes", lambda: client.mean_variance_normalization(x, (0, -3)))
        _refused(
            dmlrpc.ArgumentValueError,
            "scale",
            lambda: client.mean_variance_normalization(x, 2, scale=np.ones(3, np.float32)),
        )
        _refused(
            dmlrpc.ArgumentTypeError,
            "bias",
            lambda: client.mean_variance_normalization(x, 2, bias=np.ones(4, np.float16)),
        )
        _refused(dmlrpc.ArgumentValueError, "epsilon", lambda: client.mean_variance_normalization(x, 2, epsilon=-1))
        _refused(dmlrpc.ArgumentTypeError, "input", lambda: client.batch_normalization(np.ones(3, np.int32), 0, 1))
        _refused(
            dmlrpc.ArgumentValueError,
            "variance",
            lambda: client.batch_normalization(x, 0, np.ones((2, 1, 1, 1), np.float32)),
        )
        _refused(dmlrpc.ArgumentValueError, "p", lambda: client.lp_normalization(x, p=3))
        _refused(dmlrpc.ArgumentValueError, "axis", lambda: client.lp_normalization(x, -4))
        _refused(dmlrpc.ArgumentTypeError, "indices", lambda: client.one_hot(np.float32([1]), 3))
        _refused(dmlrpc.ArgumentValueError, "values", lambda: client.one_hot([1], 3, (0, 1, 2)))
        _refused(dmlrpc.ArgumentValueError, "depth", lambda: client.one_hot([1], 0))
        _refused(dmlrpc.ArgumentValueError, "axis", lambda: client.one_hot([1], 3, axis=2))
        _refused(dmlrpc.ArgumentTypeError, "dtype", lambda: client.fill_value_sequence(3, 0, 1, np.float64))
        _refused(dmlrpc.ArgumentTypeError, "delta", lambda: client.fill_value_sequence(3, 0, 0.5, np.int32))
        _refused(dmlrpc.ArgumentValueError, "start", lambda: client.fill_value_sequence(3, 256, 1, np.uint8))
        _refused(dmlrpc.ArgumentValueError, "shape", lambda: client.fill_value_sequence((2, 0), 0, 1))
