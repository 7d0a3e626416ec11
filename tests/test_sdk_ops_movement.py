"""The SDK's GATHER, SLICE1, PADDING1 and TILE functions against NumPy references on the real server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from tests.conftest import ServerThread

_RNG = np.random.default_rng(11)


def _refused(kind: type[dmlrpc.ArgumentError], argument: str, call: Callable[[], Any]) -> dmlrpc.ArgumentError:
    with pytest.raises(kind) as caught:
        call()
    assert caught.value.argument == argument and caught.value.request_id is None
    return caught.value


@pytest.mark.parametrize(
    ("shape", "index_shape", "axis", "index_dtype"),
    [
        ((5,), (3,), 0, np.uint32),
        ((4, 6), (2, 3), 1, np.int64),
        ((4, 6), (), 0, np.int32),  # a single index removes the axis, as np.take
        ((2, 3, 4), (5,), -1, np.uint64),
        ((3, 4, 2), (2, 2, 2), 1, np.int32),
    ],
)
def test_gather_matches_np_take(
    client: dmlrpc.Client, shape: tuple[int, ...], index_shape: tuple[int, ...], axis: int, index_dtype: Any
) -> None:
    x = _RNG.standard_normal(shape).astype(np.float32)
    indices = _RNG.integers(0, shape[axis], index_shape).astype(index_dtype)
    out = client.gather(x, indices, axis)
    expected = np.take(x, indices, axis)
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_array_equal(out, expected)


def test_gather_negative_indices_and_other_dtypes(client: dmlrpc.Client) -> None:
    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    np.testing.assert_array_equal(client.gather(x, np.array([-1, 0], np.int32), 1), np.take(x, [-1, 0], 1))
    wide = np.arange(6, dtype=np.float64)
    np.testing.assert_array_equal(client.gather(wide, [5, 1], 0), wide[[5, 1]])


def test_gather_argument_errors() -> None:
    _refused(dmlrpc.ArgumentTypeError, "indices", lambda: ops.gather(np.zeros(3, np.float32), [0.5], 0))
    _refused(dmlrpc.ArgumentValueError, "axis", lambda: ops.gather(np.zeros((2, 3), np.float32), [0], 2))
    _refused(dmlrpc.ArgumentValueError, "indices", lambda: ops.gather(np.zeros((1,) * 5), np.zeros((1,) * 5, int)))


@pytest.mark.parametrize(
    ("shape", "offsets", "sizes", "strides"),
    [
        ((7,), (1,), (5,), None),
        ((4, 6), (1, 0), (3, 6), (2, 3)),
        ((4, 6), (0, 1), (4, 5), (-1, -2)),
        ((2, 3, 5), (1, 0, 2), (1, 3, 3), (1, -1, 2)),
    ],
)
def test_slice_matches_numpy_indexing(
    client: dmlrpc.Client,
    shape: tuple[int, ...],
    offsets: tuple[int, ...],
    sizes: tuple[int, ...],
    strides: tuple[int, ...] | None,
) -> None:
    x = _RNG.integers(-50, 50, shape).astype(np.int32)
    steps = strides or (1,) * len(shape)
    index = tuple(
        slice(o, o + n, s) if s > 0 else slice(o + n - 1, o - 1 if o else None, s)
        for o, n, s in zip(offsets, sizes, steps, strict=True)
    )
    out = client.slice(x, offsets, sizes, strides)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, x[index])


def test_slice_argument_errors() -> None:
    x = np.zeros((4, 5), np.float32)
    _refused(dmlrpc.ArgumentValueError, "sizes", lambda: ops.slice(x, (2, 0), (3, 5)))
    _refused(dmlrpc.ArgumentValueError, "strides", lambda: ops.slice(x, (0, 0), (4, 5), (1, 0)))
    _refused(dmlrpc.ArgumentValueError, "offsets", lambda: ops.slice(x, (0,), (4,)))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
def test_pad_matches_np_pad(client: dmlrpc.Client, mode: str) -> None:
    x = _RNG.standard_normal((3, 4)).astype(np.float32)
    start, end = (2, 1), (1, 5)  # wider than the input along the last axis: NumPy folds again
    out = client.pad(x, start, end, mode)
    width = list(zip(start, end, strict=True))
    np.testing.assert_array_equal(out, np.pad(x, width, mode))  # type: ignore[call-overload]


@pytest.mark.parametrize(("dtype", "value"), [(np.int64, -7), (np.uint8, 200), (np.float16, 1.5)])
def test_pad_constant_value_in_the_input_dtype(client: dmlrpc.Client, dtype: Any, value: float) -> None:
    x = np.arange(6).astype(dtype).reshape(1, 2, 3)
    out = client.pad(x, 1, (0, 2, 1), value=value)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, np.pad(x, [(1, 0), (1, 2), (1, 1)], constant_values=value))


def test_pad_argument_errors() -> None:
    x = np.zeros((2, 3), np.float32)
    _refused(dmlrpc.ArgumentValueError, "mode", lambda: ops.pad(x, 1, 1, "mirror"))
    _refused(dmlrpc.ArgumentValueError, "start_padding", lambda: ops.pad(x, (1, -1), 0))
    _refused(dmlrpc.ArgumentValueError, "value", lambda: ops.pad(np.zeros(2, np.uint8), 1, 1, value=300))


@pytest.mark.parametrize(
    ("shape", "repetitions"),
    [((3,), 2), ((2, 3), (2, 1)), ((2, 3), (3,)), ((2,), (2, 1, 3)), ((), (2, 2))],
)
def test_tile_matches_np_tile(client: dmlrpc.Client, shape: tuple[int, ...], repetitions: Any) -> None:
    x = _RNG.integers(0, 100, shape).astype(np.uint16)
    out = client.tile(x, repetitions)
    expected = np.tile(x, repetitions)
    assert out.shape == expected.shape and out.dtype == np.uint16
    np.testing.assert_array_equal(out, expected)


def test_tile_argument_errors() -> None:
    _refused(dmlrpc.ArgumentValueError, "repetitions", lambda: ops.tile(np.zeros(3, np.float32), (2, 0)))
    _refused(dmlrpc.ArgumentTypeError, "input", lambda: ops.tile(np.zeros(3), 2))  # float64: DirectML has none


def test_bool_arrays_come_back_bool(client: dmlrpc.Client) -> None:
    x = np.array([[True, False, True], [False, False, True]])
    for out, expected in [
        (client.gather(x, [2, 0], 1), np.take(x, [2, 0], 1)),
        (client.slice(x, (0, 0), (2, 3), (1, -1)), x[:, ::-1]),
        (client.pad(x, 1, 0, value=True), np.pad(x, [(1, 0), (1, 0)], constant_values=True)),
        (client.tile(x, (1, 2)), np.tile(x, (1, 2))),
    ]:
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(out, expected)


def test_graph_gathers_slices_pads_and_tiles(client: dmlrpc.Client) -> None:
    g = dmlrpc.Graph()
    x = g.input(np.float32, (4, 6))
    indices = g.input(np.int32, (1, 3))
    gathered = g.gather(x, indices, 0)  # the indices' leading 1 is not meaningful: 3 rows of 6
    assert gathered.shape == (3, 6)
    sliced = g.slice(g.tile(gathered, (2, 1)), (1, 0), (4, 6), (2, -1))
    assert sliced.shape == (2, 6)
    g.output(g.pad(sliced, (1, 0), (0, 2), "edge"))
    data = _RNG.standard_normal((4, 6)).astype(np.float32)
    rows = np.array([[3, 0, 2]], np.int32)
    with client.compile(g) as op:
        (out,) = op(data, rows)
    step = np.tile(np.take(data, rows[0], 0), (2, 1))[1:5:2, ::-1]
    np.testing.assert_array_equal(out, np.pad(step, [(1, 0), (0, 2)], "edge"))
    _refused(dmlrpc.ArgumentValueError, "indices", lambda: g.gather(x, g.input(np.int32, (3,)), 0))
    _refused(dmlrpc.ArgumentValueError, "input", lambda: g.tile(x, (2, 1, 1)))


def test_async_client_gathers_slices_pads_and_tiles(server: ServerThread) -> None:
    async def run() -> None:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as client:
            x = np.arange(6, dtype=np.float32).reshape(2, 3)
            np.testing.assert_array_equal(await client.gather(x, [2, 0], 1), x[:, [2, 0]])
            np.testing.assert_array_equal(await client.slice(x, (0, 0), (2, 3), (-1, 2)), x[::-1, ::2])
            np.testing.assert_array_equal(
                await client.pad(x, 1, 0, value=9), np.pad(x, [(1, 0)] * 2, constant_values=9)
            )
            np.testing.assert_array_equal(await client.tile(x, 2), np.tile(x, 2))

    asyncio.run(run())


@pytest.mark.parametrize(
    ("shapes", "axis", "dtype"),
    [
        ([(3,), (1,), (4,)], 0, np.float32),
        ([(2, 3), (2, 1)], 1, np.int8),
        ([(1, 2, 3), (2, 2, 3), (1, 2, 3)], -3, np.float64),
        ([(2, 2)], 0, np.uint64),
    ],
)
def test_join_matches_np_concatenate(
    client: dmlrpc.Client, shapes: list[tuple[int, ...]], axis: int, dtype: Any
) -> None:
    pieces = [_RNG.integers(0, 100, shape).astype(dtype) for shape in shapes]
    out = client.join(pieces, axis)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, np.concatenate(pieces, axis))


def test_join_argument_errors() -> None:
    a = np.zeros((2, 3), np.float32)
    _refused(dmlrpc.ArgumentTypeError, "inputs[1]", lambda: ops.join([a, a.astype(np.int32)], 0))
    _refused(dmlrpc.ArgumentValueError, "inputs[1]", lambda: ops.join([a, np.zeros((3, 3), np.float32)], 1))
    _refused(dmlrpc.ArgumentValueError, "inputs", lambda: ops.join([], 0))


@pytest.mark.parametrize(
    ("shape", "sizes", "axis"),
    [((7,), (2, 5), 0), ((2, 6, 3), 3, 1), ((4, 5), (1, 1, 3), -1), ((3, 2), [3], 0)],
)
def test_split_matches_np_split(client: dmlrpc.Client, shape: tuple[int, ...], sizes: Any, axis: int) -> None:
    x = _RNG.standard_normal(shape).astype(np.float16)
    outs = client.split(x, sizes, axis)
    points = sizes if isinstance(sizes, int) else np.cumsum(sizes)[:-1]
    expected = np.split(x, points, axis)
    assert len(outs) == len(expected)
    for out, piece in zip(outs, expected, strict=True):
        assert out.dtype == np.float16
        np.testing.assert_array_equal(out, piece)


def test_split_argument_errors() -> None:
    x = np.zeros((4, 6), np.float32)
    _refused(dmlrpc.ArgumentValueError, "sizes", lambda: ops.split(x, (2, 3), 1))
    _refused(dmlrpc.ArgumentValueError, "sizes", lambda: ops.split(x, 4, 1))
    _refused(dmlrpc.ArgumentValueError, "sizes", lambda: ops.split(x, (0, 4), 0))


def test_async_client_joins_and_splits(server: ServerThread) -> None:
    async def run() -> None:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as client:
            x = np.arange(6, dtype=np.int32).reshape(2, 3)
            np.testing.assert_array_equal(await client.join([x, x], 1), np.concatenate([x, x], 1))
            left, right = await client.split(x, (1, 2), 1)
            np.testing.assert_array_equal(left, x[:, :1])
            np.testing.assert_array_equal(right, x[:, 1:])

    asyncio.run(run())
