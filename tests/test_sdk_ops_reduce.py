"""The SDK's REDUCE, CAST, AVERAGE_POOLING and MAX_POOLING functions against NumPy references on the real server."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import dmlrpc
from tests.conftest import ServerThread

_RNG = np.random.default_rng(7)


def _reduce_reference(function: str, x: np.ndarray, axes: Sequence[int] | None, keepdims: bool) -> np.ndarray:
    axis = tuple(range(x.ndim)) if axes is None else tuple(a % x.ndim for a in axes)
    if function in ("argmax", "argmin"):
        kept = [d for d in range(x.ndim) if d not in axis]
        flat = np.transpose(x, kept + sorted(axis)).reshape([x.shape[d] for d in kept] + [-1])
        index = (np.argmax if function == "argmax" else np.argmin)(flat, axis=-1)
        shape = [1 if d in axis else x.shape[d] for d in range(x.ndim)] if keepdims else index.shape
        return np.asarray(index).reshape(shape)
    wide = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    results = {
        "sum": lambda: np.sum(wide, axis=axis, keepdims=keepdims),
        "average": lambda: np.mean(wide, axis=axis, keepdims=keepdims),
        "max": lambda: np.max(wide, axis=axis, keepdims=keepdims),
        "min": lambda: np.min(wide, axis=axis, keepdims=keepdims),
        "multiply": lambda: np.prod(wide, axis=axis, keepdims=keepdims),
        "l1": lambda: np.sum(np.abs(wide), axis=axis, keepdims=keepdims),
        "l2": lambda: np.sqrt(np.sum(wide * wide, axis=axis, keepdims=keepdims)),
        "sum_square": lambda: np.sum(wide * wide, axis=axis, keepdims=keepdims),
        "log_sum": lambda: np.log(np.sum(wide, axis=axis, keepdims=keepdims)),
        "log_sum_exp": lambda: np.log(np.sum(np.exp(wide), axis=axis, keepdims=keepdims)),
    }
    return np.asarray(results[function]()).astype(x.dtype)  # integers wrap, as DirectML's arithmetic


_FUNCTIONS = (
    "sum",
    "average",
    "max",
    "min",
    "multiply",
    "l1",
    "l2",
    "sum_square",
    "log_sum",
    "log_sum_exp",
    "argmax",
    "argmin",
)


@pytest.mark.parametrize("function", _FUNCTIONS)
@pytest.mark.parametrize(
    ("shape", "axes", "keepdims"),
    [((2, 3, 4), (1,), False), ((2, 3, 4), (0, -1), True), ((5,), None, False), ((2, 1, 3, 2), (3, 0), False)],
)
def test_reduce_float32_matches_numpy(
    client: dmlrpc.Client, function: str, shape: tuple[int, ...], axes: tuple[int, ...] | None, keepdims: bool
) -> None:
    x = _RNG.uniform(0.5, 2.0, shape).astype(np.float32)  # positive: LOG_SUM is defined
    out = client.reduce(function, x, axes, keepdims=keepdims)
    expected = _reduce_reference(function, x, axes, keepdims)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-5)


@pytest.mark.parametrize(
    ("function", "dtype"),
    [
        ("sum", np.int32),
        ("multiply", np.int64),
        ("max", np.int8),
        ("min", np.uint16),
        ("argmax", np.uint8),
        ("l1", np.int32),
        ("sum_square", np.uint32),
        ("mean", np.float16),
        ("prod", np.float16),
    ],
)
def test_reduce_other_types_match_numpy(client: dmlrpc.Client, function: str, dtype: type[Any]) -> None:
    info = np.finfo(dtype) if np.dtype(dtype).kind == "f" else np.iinfo(dtype)
    low, high = (0.5, 1.5) if info.dtype.kind == "f" else (max(int(info.min), -50), min(int(info.max), 50))
    x = _RNG.uniform(low, high, (3, 4, 2)).astype(dtype)
    name = {"mean": "average", "prod": "multiply"}.get(function, function)
    out = client.reduce(function, x, (0, 2))
    expected = _reduce_reference(name, x, (0, 2), False)
    assert out.shape == (4,) and out.dtype == expected.dtype
    np.testing.assert_allclose(out.astype(np.float64), expected.astype(np.float64), rtol=2e-3)


def test_reduce_shapes_and_index_types(client: dmlrpc.Client) -> None:
    x = np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], np.float32)  # the page's example
    assert client.reduce("sum", x, 0, keepdims=True).tolist() == [[6, 6, 9]]
    total = client.reduce("sum", x)
    assert total.shape == () and total == 21
    scalar = client.reduce("max", np.float32(3.5))
    assert scalar.shape == () and scalar == 3.5
    index = client.reduce("argmax", x, (0, 1), index_dtype=np.uint32)
    assert index.dtype == np.uint32 and index == 5  # the first of the two 4s, row-major over both axes


@pytest.mark.parametrize(
    ("values", "dtype"),
    [
        (np.array([[1.7, -2.5], [300.0, np.nan]], np.float32), np.uint8),  # truncation, saturation, NaN -> 0
        (np.array([1.5, -2.25, 1e6], np.float32), np.float16),
        (np.array([-1, 0, 200], np.int32), np.int8),  # wraps, as NumPy
        (np.array([True, False, True]), np.float32),
        (np.arange(24, dtype=np.uint16).reshape(2, 3, 4), np.int64),
        (np.array([0.1, -3.9], np.float64), np.int32),
        (np.float32(2.5), np.float64),
    ],
)
def test_cast_matches_numpy(client: dmlrpc.Client, values: np.ndarray, dtype: type[Any]) -> None:
    out = client.cast(values, dtype)
    if values.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        expected = np.clip(np.nan_to_num(np.trunc(values.astype(np.float64))), info.min, info.max).astype(dtype)
    else:
        with np.errstate(over="ignore"):
            expected = np.asarray(values).astype(dtype)
    assert out.shape == np.shape(values) and out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, expected)


def _pool_reference(
    kind: str,
    x: np.ndarray,
    window: Sequence[int],
    strides: Sequence[int],
    start: Sequence[int],
    end: Sequence[int],
    include_padding: bool = False,
) -> np.ndarray:
    """Pooling by its definition: NaN padding, each window in turn."""
    spatial = x.ndim - 2
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *zip(start, end, strict=True)], constant_values=np.nan)
    out_sizes = [(padded.shape[2 + i] - window[i]) // strides[i] + 1 for i in range(spatial)]
    out: np.ndarray = np.zeros(x.shape[:2] + tuple(out_sizes))
    for position in itertools.product(*(range(n) for n in out_sizes)):
        spans: tuple[Any, ...] = tuple(
            slice(p * s, p * s + w) for p, s, w in zip(position, strides, window, strict=True)
        )
        flat = padded[(slice(None), slice(None), *spans)].reshape(x.shape[0], x.shape[1], -1)
        at: tuple[Any, ...] = (slice(None), slice(None), *position)
        if kind == "max":
            out[at] = np.nanmax(flat, axis=-1)
        else:
            count = np.prod(window) if include_padding else np.sum(~np.isnan(flat), axis=-1)
            out[at] = np.nansum(flat, axis=-1) / count
    return out.astype(x.dtype)


@pytest.mark.parametrize("kind", ["max", "average"])
@pytest.mark.parametrize(
    ("shape", "window", "strides", "start", "end", "include_padding"),
    [
        ((2, 3, 7), (3,), (2,), (1,), (1,), False),
        ((1, 2, 5, 6), (2, 3), (2, 1), (0, 1), (1, 1), False),
        ((1, 2, 5, 6), (3, 3), (1, 1), (1, 1), (1, 1), True),
        ((1, 1, 3, 4, 5), (2, 2, 3), (1, 2, 2), (0, 0, 1), (0, 1, 1), False),
    ],
)
def test_pooling_float32_matches_numpy(
    client: dmlrpc.Client,
    kind: str,
    shape: tuple[int, ...],
    window: tuple[int, ...],
    strides: tuple[int, ...],
    start: tuple[int, ...],
    end: tuple[int, ...],
    include_padding: bool,
) -> None:
    x = _RNG.standard_normal(shape).astype(np.float32)
    if kind == "max":
        out = client.max_pooling(x, window, strides=strides, start_padding=start, end_padding=end)
    else:
        out = client.average_pooling(
            x, window, strides=strides, start_padding=start, end_padding=end, include_padding=include_padding
        )
    expected = _pool_reference(kind, x, window, strides, start, end, include_padding)
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.float16])
def test_max_pooling_other_types(client: dmlrpc.Client, dtype: type[Any]) -> None:
    x = _RNG.integers(-100 if np.dtype(dtype).kind != "u" else 0, 100, (2, 2, 4, 4)).astype(dtype)
    out = client.max_pooling(x, 2, strides=2)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, _pool_reference("max", x, (2, 2), (2, 2), (0, 0), (0, 0)))


def test_graph_pools_reduces_and_casts(client: dmlrpc.Client) -> None:
    g = dmlrpc.Graph()
    x = g.input(np.float32, (2, 3, 4, 4))
    pooled = g.max_pooling(x, 2, strides=2)
    mean = g.reduce("mean", pooled, (2, 3))
    indices = g.reduce("argmax", pooled, -1, index_dtype=np.uint32)
    assert mean.shape == (2, 3, 1, 1) and indices.shape == (2, 3, 2, 1) and indices.dtype == np.uint32
    g.output(g.cast(mean, np.float16), indices)
    data = _RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    expected_pool = _pool_reference("max", data, (2, 2), (2, 2), (0, 0), (0, 0))
    with client.compile(g) as op:
        half, index = op(data)
    assert isinstance(half, np.ndarray) and isinstance(index, np.ndarray)
    assert half.dtype == np.float16 and half.shape == (2, 3, 1, 1)
    np.testing.assert_allclose(half, expected_pool.mean(axis=(2, 3), keepdims=True), rtol=1e-3)
    np.testing.assert_array_equal(index, np.argmax(expected_pool, axis=-1)[..., None])
    with pytest.raises(dmlrpc.ArgumentValueError) as caught:
        g.average_pooling(g.input(np.float32, (1, 2, 5)), 2)
    assert caught.value.argument == "input"


def test_async_client_reduces_casts_and_pools(server: ServerThread) -> None:
    async def run() -> None:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as client:
            x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
            np.testing.assert_array_equal(await client.reduce("sum", x, (2, 3)), [[66]])
            np.testing.assert_array_equal(await client.cast(np.array([2.9, -1.2], np.float32), np.int16), [2, -1])
            np.testing.assert_array_equal(await client.max_pooling(x, 2, strides=2), [[[[5, 7]]]])
            np.testing.assert_array_equal(await client.average_pooling(x, (3, 4)), [[[[5.5]]]])

    asyncio.run(run())


def _refused(kind: type[dmlrpc.ArgumentError], argument: str, call: Callable[[], Any]) -> dmlrpc.ArgumentError:
    with pytest.raises(kind) as caught:
        call()
    assert caught.value.argument == argument and caught.value.request_id is None
    return caught.value


def test_argument_errors_come_before_any_request() -> None:
    # Port 1 has no server: a request would fail UNAVAILABLE, so each argument error shows none was tried.
    x = np.zeros((1, 2, 4, 4), np.float32)
    with dmlrpc.Client("127.0.0.1:1", timeout=5, retry=None) as client:
        error = _refused(dmlrpc.ArgumentValueError, "function", lambda: client.reduce("average_pool", x))
        assert {"sum", "average", "mean", "argmax", "log_sum_exp", "sum_square"} <= set(error.allowed)
        _refused(dmlrpc.ArgumentTypeError, "function", lambda: client.reduce(3, x))  # type: ignore[arg-type]
        _refused(dmlrpc.ArgumentValueError, "axes", lambda: client.reduce("sum", x, 4))
        _refused(dmlrpc.ArgumentValueError, "axes", lambda: client.reduce("sum", x, (1, -3)))
        _refused(dmlrpc.ArgumentValueError, "axes", lambda: client.reduce("sum", x, ()))
        _refused(dmlrpc.ArgumentTypeError, "axes", lambda: client.reduce("sum", x, 1.0))  # type: ignore[arg-type]
        _refused(dmlrpc.ArgumentTypeError, "input", lambda: client.reduce("sum", x.astype(np.float64)))
        _refused(dmlrpc.ArgumentTypeError, "input", lambda: client.reduce("mean", np.arange(4)))
        _refused(dmlrpc.ArgumentTypeError, "input", lambda: client.reduce("max", np.ones(3, bool)))
        _refused(dmlrpc.ArgumentTypeError, "keepdims", lambda: client.reduce("sum", x, keepdims=1))  # type: ignore[arg-type]
        error = _refused(dmlrpc.ArgumentTypeError, "index_dtype", lambda: client.reduce("argmin", x, index_dtype="?!"))
        assert "int64" in error.allowed
        _refused(dmlrpc.ArgumentTypeError, "dtype", lambda: client.cast(x, np.complex64))
        _refused(dmlrpc.ArgumentTypeError, "dtype", lambda: client.cast(x, bool))
        _refused(dmlrpc.ArgumentTypeError, "dtype", lambda: client.cast(x, "no-such-type"))
        _refused(dmlrpc.ArgumentValueError, "input", lambda: client.max_pooling(x[0, 0], 2))
        _refused(dmlrpc.ArgumentValueError, "window_size", lambda: client.max_pooling(x, (2, 2, 2)))
        _refused(dmlrpc.ArgumentValueError, "window_size", lambda: client.max_pooling(x, 0))
        _refused(dmlrpc.ArgumentValueError, "window_size", lambda: client.max_pooling(x, 5))
        _refused(dmlrpc.ArgumentValueError, "strides", lambda: client.average_pooling(x, 2, strides=(1, 0)))
        _refused(dmlrpc.ArgumentValueError, "start_padding", lambda: client.max_pooling(x, 2, start_padding=-1))
        _refused(dmlrpc.ArgumentTypeError, "end_padding", lambda: client.max_pooling(x, 2, end_padding=1.5))  # type: ignore[arg-type]
        # A window wholly in the padding has no max (nor an average without the padding in its divisor).
        _refused(dmlrpc.ArgumentValueError, "start_padding", lambda: client.max_pooling(x, 2, start_padding=2))
        _refused(dmlrpc.ArgumentValueError, "end_padding", lambda: client.average_pooling(x, 1, end_padding=1))
        _refused(dmlrpc.ArgumentTypeError, "input", lambda: client.average_pooling(x.astype(np.int32), 2))
        _refused(dmlrpc.ArgumentTypeError, "input", lambda: client.max_pooling(x.astype(np.float64), 2))
        _refused(
            dmlrpc.ArgumentTypeError,
            "include_padding",
            lambda: client.average_pooling(x, 2, include_padding=None),  # type: ignore[arg-type]
        )
