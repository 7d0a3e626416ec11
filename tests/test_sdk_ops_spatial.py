"""The SDK's resample, data-movement, generator, pooling, integer-convolution, arg-reduce and local-response
functions (and the older desc versions they send) against NumPy references on the real server, eager and in a
Graph."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from tests.conftest import ServerThread
from tests.references import convolution as conv_ref
from tests.references import generators as gen_ref
from tests.references import movement as move_ref
from tests.references import normalization as norm_ref
from tests.references import pooling as pool_ref
from tests.references import reduce as reduce_ref
from tests.references import resample as resample_ref

_RNG = np.random.default_rng(23)


def _refused(kind: type[dmlrpc.ArgumentError], argument: str, call: Callable[[], Any]) -> dmlrpc.ArgumentError:
    with pytest.raises(kind) as caught:
        call()
    assert caught.value.argument == argument and caught.value.request_id is None
    return caught.value


def _case(call: ops.Call) -> str:
    case = call.operator_desc.WhichOneof("desc")
    assert case is not None
    return case


def _normal(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape).astype(np.float32)


# --- resample -------------------------------------------------------------------------------------------------------


def test_value_scale_2d_and_upsample_2d(client: dmlrpc.Client) -> None:
    x = _normal(2, 3, 2, 3)
    out = client.value_scale_2d(x, 2.0, [1.0, -1.0, 0.5])
    np.testing.assert_allclose(out, resample_ref.value_scale_2d(x, 2.0, [1.0, -1.0, 0.5]), rtol=1e-6)
    up = client.upsample_2d(x, (2, 3))
    np.testing.assert_array_equal(up, resample_ref.upsample_2d_nearest(x, 2, 3))
    linear = client.upsample_2d(x, 2, "linear")
    assert linear.shape == (2, 3, 4, 6)
    expected = resample_ref.resample(x, linear.shape, [1, 1, 2, 2], [0.5] * 4, [-0.5] * 4, linear=True)
    np.testing.assert_allclose(linear, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("arguments", "case"),
    [
        ({}, "resample"),
        ({"input_pixel_offsets": 0.0, "output_pixel_offsets": 0.0}, "resample1"),
        ({"rounding": "ceil"}, "resample2"),
        ({"mode": "linear", "antialiased": True}, "resample3"),
    ],
)
def test_resample_sends_the_oldest_version_that_expresses_it(
    client: dmlrpc.Client, arguments: dict[str, Any], case: str
) -> None:
    x = _normal(1, 2, 4, 6)
    scales = [1.0, 1.0, 0.5, 1.5]
    assert _case(ops.resample(x, scales, **arguments)) == case
    out = client.resample(x, scales, **arguments)
    assert out.shape == (1, 2, 2, 9)
    rounding = {"ceil": "ceil", "floor": "floor"}.get(arguments.get("rounding", ""), "nearest")
    if case == "resample3":
        rounding = "floor"
    expected = resample_ref.resample(
        x,
        out.shape,
        scales,
        [arguments.get("input_pixel_offsets", 0.5)] * 4,
        [arguments.get("output_pixel_offsets", -0.5)] * 4,
        linear=arguments.get("mode") == "linear",
        rounding=rounding,
        antialiased=arguments.get("antialiased", False),
    )
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_resample_argument_errors() -> None:
    x = _normal(2, 3)
    _refused(dmlrpc.ArgumentValueError, "scales", lambda: ops.resample(x, [1.0]))
    _refused(dmlrpc.ArgumentValueError, "scales", lambda: ops.resample(x, [1.0, 0.0]))
    _refused(dmlrpc.ArgumentValueError, "mode", lambda: ops.resample(x, 2.0, mode="cubic"))
    _refused(dmlrpc.ArgumentValueError, "rounding", lambda: ops.resample(x, 2.0, rounding="up"))
    _refused(dmlrpc.ArgumentTypeError, "input", lambda: ops.resample(x.astype(np.int32), 2.0))
    error = _refused(dmlrpc.ArgumentValueError, "input", lambda: ops.value_scale_2d(_normal(1, 2, 2, 2)))
    assert "(1, 2, 2, 2)" in str(error)
    _refused(dmlrpc.ArgumentValueError, "bias", lambda: ops.value_scale_2d(_normal(1, 3, 2, 2), 1.0, [1.0]))
    _refused(dmlrpc.ArgumentValueError, "scale", lambda: ops.upsample_2d(_normal(1, 1, 2, 2), 0))


# --- movement -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", [None, "depth_column_row", "column_row_depth"])
def test_space_to_depth_and_back(client: dmlrpc.Client, order: str | None) -> None:
    x = np.arange(2 * 3 * 4 * 6, dtype=np.int16).reshape(2, 3, 4, 6)
    dcr = order != "column_row_depth"
    assert _case(ops.space_to_depth(x, 2, order)) == ("space_to_depth" if order is None else "space_to_depth1")
    deep = client.space_to_depth(x, 2, order)
    np.testing.assert_array_equal(deep, move_ref.space_to_depth(x, 2, dcr))
    back = client.depth_to_space(deep, 2, order)
    np.testing.assert_array_equal(back, move_ref.depth_to_space(deep, 2, dcr))
    np.testing.assert_array_equal(back, x)


def test_reverse_subsequences(client: dmlrpc.Client) -> None:
    x = _normal(5, 3)
    lengths = np.array([5, 0, 2], np.uint32)
    out = client.reverse_subsequences(x, lengths, 0)  # lengths without the axis: inserted
    np.testing.assert_array_equal(out, move_ref.reverse_subsequences(x, lengths.reshape(1, 3), 0))
    y = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    many = np.array([[[4], [1], [3]], [[2], [0], [4]]], np.uint64)
    np.testing.assert_array_equal(client.reverse_subsequences(y, many, -1), move_ref.reverse_subsequences(y, many, 2))


def test_slice_and_pad_version_0(client: dmlrpc.Client) -> None:
    x = np.arange(30, dtype=np.int32).reshape(5, 6)
    call = ops.slice(x, [1, 0], [4, 5], [2, 2], version=0)
    assert _case(call) == "slice"
    np.testing.assert_array_equal(client.slice(x, [1, 0], [4, 5], [2, 2], version=0), x[1:5:2, 0:5:2])
    assert _case(ops.pad(x, 1, 2, "reflect", version=0)) == "padding"
    np.testing.assert_array_equal(client.pad(x, 1, 2, "reflect", version=0), np.pad(x, [(1, 2)] * 2, "reflect"))
    np.testing.assert_array_equal(
        client.pad(x, [0, 1], [2, 0], value=7.9, version=0), np.pad(x, [(0, 2), (1, 0)], constant_values=7)
    )
    _refused(dmlrpc.ArgumentValueError, "strides", lambda: ops.slice(x, [0, 0], [5, 6], [-1, 1], version=0))
    _refused(dmlrpc.ArgumentValueError, "version", lambda: ops.slice(x, [0, 0], [5, 6], version=2))


def test_movement_argument_errors() -> None:
    x = np.zeros((1, 2, 3, 4), np.float32)
    error = _refused(dmlrpc.ArgumentValueError, "block_size", lambda: ops.space_to_depth(x, 2))
    assert "(1, 2, 3, 4)" in str(error)
    _refused(dmlrpc.ArgumentValueError, "block_size", lambda: ops.depth_to_space(x, 2))
    _refused(dmlrpc.ArgumentValueError, "order", lambda: ops.depth_to_space(x, 1, "dcr"))
    _refused(dmlrpc.ArgumentValueError, "input", lambda: ops.space_to_depth(x[0], 1))
    _refused(dmlrpc.ArgumentTypeError, "sequence_lengths", lambda: ops.reverse_subsequences(x, np.zeros((2, 3, 4))))
    _refused(
        dmlrpc.ArgumentValueError,
        "sequence_lengths",
        lambda: ops.reverse_subsequences(x[0, 0], np.full(3, 5, np.uint32), 1),
    )
    _refused(
        dmlrpc.ArgumentValueError, "sequence_lengths", lambda: ops.reverse_subsequences(x[0], np.ones(5, np.uint32))
    )


# --- generators -----------------------------------------------------------------------------------------------------


def test_fill_value_constant(client: dmlrpc.Client) -> None:
    np.testing.assert_array_equal(client.fill_value_constant((2, 3), 2.5), np.full((2, 3), 2.5, np.float32))
    np.testing.assert_array_equal(client.fill_value_constant(4, -3, np.int64), np.full(4, -3, np.int64))
    np.testing.assert_array_equal(client.fill_value_constant((), 1.5, np.float64), np.full((), 1.5))
    _refused(dmlrpc.ArgumentValueError, "value", lambda: ops.fill_value_constant(2, 300, np.uint8))
    _refused(dmlrpc.ArgumentTypeError, "dtype", lambda: ops.fill_value_constant(2, 1, np.bool_))
    _refused(dmlrpc.ArgumentValueError, "shape", lambda: ops.fill_value_constant((2, 0), 1))


def test_diagonal_matrix_versions(client: dmlrpc.Client) -> None:
    assert _case(ops.diagonal_matrix((3, 4), 1, 2.0)) == "diagonal_matrix"
    np.testing.assert_array_equal(client.diagonal_matrix((3, 4), 1, 2.0), 2 * np.eye(3, 4, 1, dtype=np.float32))
    np.testing.assert_array_equal(
        client.diagonal_matrix((2, 3, 3), -1, 5, np.int32), gen_ref.diagonal_matrix((2, 3, 3), -1, 5, np.int32)
    )
    big = 2**40 + 1
    assert _case(ops.diagonal_matrix((2, 2), 0, big, np.int64)) == "diagonal_matrix1"
    np.testing.assert_array_equal(client.diagonal_matrix((2, 2), 0, big, np.int64), big * np.eye(2, dtype=np.int64))
    band = client.diagonal_matrix((4, 5), -1, 9, np.int16, fill_end=2)
    np.testing.assert_array_equal(band, gen_ref.diagonal_matrix1((4, 5), -1, 2, 9, np.int16))
    x = _normal(3, 3)
    over = client.diagonal_matrix(None, 0, 0.0, input=x)
    np.testing.assert_array_equal(over, gen_ref.diagonal_matrix1((3, 3), 0, 1, 0.0, np.float32, x))
    _refused(dmlrpc.ArgumentValueError, "shape", lambda: ops.diagonal_matrix((5,)))
    _refused(dmlrpc.ArgumentValueError, "shape", lambda: ops.diagonal_matrix((2, 2), input=x))


def test_nonzero_coordinates(client: dmlrpc.Client) -> None:
    x = np.array([[0, 1.5, 0], [-0.0, 0, 2], [3, 0, 0]], np.float32)
    out = client.nonzero_coordinates(x)
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out, np.argwhere(x))
    count, rows = gen_ref.nonzero_coordinates(x, 2)
    np.testing.assert_array_equal(out, rows[:count])
    flags = np.array([True, False, True])
    np.testing.assert_array_equal(client.nonzero_coordinates(flags), np.argwhere(flags))
    assert client.nonzero_coordinates(np.zeros((2, 2), np.int8)).shape == (0, 2)
    _refused(dmlrpc.ArgumentTypeError, "input", lambda: ops.nonzero_coordinates(np.ones(3, np.int64)))


# --- pooling --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dilations", [None, 2])
def test_lp_pooling(client: dmlrpc.Client, dilations: int | None) -> None:
    x = _normal(1, 2, 6, 7)
    call = ops.lp_pooling(x, 2, p=3, strides=(1, 2), start_padding=1, dilations=dilations)
    assert _case(call) == ("lp_pooling" if dilations is None else "lp_pooling1")
    out = client.lp_pooling(x, 2, p=3, strides=(1, 2), start_padding=1, dilations=dilations)
    spread = [dilations or 1] * 2
    expected = pool_ref.lp_pooling(x, [1, 2], [2, 2], [1, 1], [0, 0], 3, spread)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("dilations", "case"), [(None, "max_pooling1"), ((1, 2), "max_pooling2")])
def test_max_pooling_with_indices_and_unpooling(client: dmlrpc.Client, dilations: Any, case: str) -> None:
    x = _normal(2, 3, 5, 6)
    assert _case(ops.max_pooling_with_indices(x, 2, strides=2, dilations=dilations)) == case
    values, indices = client.max_pooling_with_indices(x, 2, strides=2, dilations=dilations)
    expected_values, expected_indices = pool_ref.max_pooling(
        x, [2, 2], [2, 2], [0, 0], [0, 0], list(dilations or [1, 1])
    )
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(indices, expected_indices)
    assert indices.dtype == np.uint32
    if dilations is None:  # disjoint windows: every index is distinct, as MAX_UNPOOLING needs
        restored = client.max_unpooling(values, indices, x.shape)
        np.testing.assert_array_equal(restored, pool_ref.max_unpooling(values, indices, x.shape))
    else:
        assert _case(ops.max_pooling(x, 2, dilations=dilations)) == "max_pooling2"
        np.testing.assert_array_equal(client.max_pooling(x, 2, strides=2, dilations=dilations), expected_values)


def test_average_pooling1(client: dmlrpc.Client) -> None:
    x = _normal(1, 1, 7, 7)
    assert _case(ops.average_pooling(x, 3, dilations=2)) == "average_pooling1"
    out = client.average_pooling(x, 3, dilations=2, start_padding=1, include_padding=True)
    expected = pool_ref.average_pooling(x, [1, 1], [3, 3], [1, 1], [0, 0], True, [2, 2])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_roi_pooling(client: dmlrpc.Client) -> None:
    x = _normal(2, 3, 6, 8)
    rois = np.array([[0, 0, 0, 7, 5], [1, 2, 1, 5, 4], [0, 1, 1, 2, 2]], np.float32)
    out = client.roi_pooling(x, rois, (2, 3), 1.0)
    np.testing.assert_array_equal(out, pool_ref.roi_pooling(x, rois, 1.0, 2, 3))
    _refused(dmlrpc.ArgumentValueError, "rois", lambda: ops.roi_pooling(x, rois[:, :4], 2))
    _refused(dmlrpc.ArgumentTypeError, "rois", lambda: ops.roi_pooling(x, rois.astype(np.float16), 2))


def test_pooling_argument_errors() -> None:
    x = _normal(1, 1, 4, 4)
    _refused(dmlrpc.ArgumentValueError, "p", lambda: ops.lp_pooling(x, 2, p=0))
    error = _refused(dmlrpc.ArgumentValueError, "window_size", lambda: ops.lp_pooling(x, 3, dilations=2))
    assert "(1, 1, 4, 4)" in str(error)
    _refused(dmlrpc.ArgumentTypeError, "index_dtype", lambda: ops.max_pooling_with_indices(x, 2, index_dtype=np.int32))
    indices = np.arange(16, dtype=np.uint32).reshape(1, 1, 4, 4)
    _refused(dmlrpc.ArgumentValueError, "indices", lambda: ops.max_unpooling(x, indices, (1, 1, 2, 2)))
    _refused(dmlrpc.ArgumentValueError, "indices", lambda: ops.max_unpooling(x, indices * 0, (1, 1, 4, 4)))
    _refused(dmlrpc.ArgumentTypeError, "indices", lambda: ops.max_unpooling(x, indices.astype(np.int64), (1, 1, 4, 4)))


# --- convolution_integer, argmin/argmax, normalizations -------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "per_channel"), [(np.uint8, False), (np.int8, True)])
def test_convolution_integer(client: dmlrpc.Client, dtype: Any, per_channel: bool) -> None:
    info = np.iinfo(dtype)
    x = _RNG.integers(info.min, info.max, (2, 4, 5, 5), endpoint=True).astype(dtype)
    w = _RNG.integers(info.min, info.max, (6, 2, 3, 2), endpoint=True).astype(dtype)
    x_zero = np.array(3, dtype)
    w_zero = np.arange(6).astype(dtype) if per_channel else np.array(1, dtype)
    out = client.convolution_integer(
        x, w, input_zero_point=x_zero, filter_zero_point=w_zero, strides=(1, 2), start_padding=1, group_count=2
    )
    assert out.dtype == np.int32
    expected = conv_ref.convolution_integer(
        x, x_zero, w, w_zero, strides=(1, 2), dilations=(1, 1), start=(1, 1), end=(0, 0), groups=2
    )
    np.testing.assert_array_equal(out, expected)
    plain = client.convolution_integer(x[:, :2, :, 0], w[:2, :, :, 0])  # 1 spatial dimension, no zero points
    expected = conv_ref.convolution_integer(
        x[:, :2, :, 0], None, w[:2, :, :, 0], None, strides=(1,), dilations=(1,), start=(0,), end=(0,), groups=1
    )
    np.testing.assert_array_equal(plain, expected)
    _refused(dmlrpc.ArgumentTypeError, "filter", lambda: ops.convolution_integer(x, w.astype(np.int32)))
    four = np.zeros(4, dtype)
    _refused(
        dmlrpc.ArgumentValueError,
        "filter_zero_point",
        lambda: ops.convolution_integer(x, w, filter_zero_point=four, group_count=2),
    )
    _refused(dmlrpc.ArgumentValueError, "filter", lambda: ops.convolution_integer(x, w[:, :3]))


@pytest.mark.parametrize(
    ("shape", "axes", "dtype"),
    [((4, 5), 1, np.float32), ((3, 4, 2), (0, 2), np.int16), ((2, 3), None, np.uint8), ((6,), -1, np.float16)],
)
def test_argmax_argmin_match_numpy(client: dmlrpc.Client, shape: Any, axes: Any, dtype: Any) -> None:
    x = _RNG.integers(0, 4, shape).astype(dtype)  # ties, so first and last differ
    reduced = list(range(len(shape))) if axes is None else sorted(np.atleast_1d(axes) % len(shape))
    for name, largest in (("argmax", True), ("argmin", False)):
        for last in (False, True):
            assert _case(getattr(ops, name)(x, axes)) == name
            out = getattr(client, name)(x, axes, keepdims=True, select_last_index=last)
            np.testing.assert_array_equal(out, reduce_ref.arg_extreme(x, reduced, largest, last))
        if axes is None or isinstance(axes, int):
            np.testing.assert_array_equal(getattr(client, name)(x, axes), getattr(np, name)(x, axes))
    _refused(dmlrpc.ArgumentTypeError, "index_dtype", lambda: ops.argmax(x, index_dtype=np.int16))
    _refused(dmlrpc.ArgumentValueError, "axes", lambda: ops.argmin(x, len(shape)))


@pytest.mark.parametrize("cross_channel", [True, False])
def test_local_response_normalization(client: dmlrpc.Client, cross_channel: bool) -> None:
    x = _normal(2, 5, 3, 4)
    out = client.local_response_normalization(x, 3, alpha=0.5, beta=0.6, bias=2.0, cross_channel=cross_channel)
    expected = norm_ref.local_response_normalization(
        x, cross_channel=cross_channel, local_size=3, alpha=0.5, beta=0.6, bias=2.0
    )
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    _refused(dmlrpc.ArgumentValueError, "local_size", lambda: ops.local_response_normalization(x, 0))
    _refused(dmlrpc.ArgumentValueError, "input", lambda: ops.local_response_normalization(x[0], 1))


@pytest.mark.parametrize(("version", "axes"), [(0, (2, 3)), (0, (1, 2, 3)), (1, (0, 2))])
def test_mean_variance_normalization_versions(client: dmlrpc.Client, version: int, axes: Any) -> None:
    x = _normal(2, 3, 4, 5)
    scale, bias = _normal(1, 3, 1, 1), _normal(1, 3, 1, 1)
    call = ops.mean_variance_normalization(x, axes, scale=scale, bias=bias, version=version)
    assert _case(call) == ("mean_variance_normalization" if version == 0 else "mean_variance_normalization1")
    out = client.mean_variance_normalization(x, axes, scale=scale, bias=bias, version=version)
    expected = norm_ref.mean_variance_normalization(x, axes, epsilon=1e-5, scale=scale, bias=bias)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    _refused(dmlrpc.ArgumentValueError, "axes", lambda: ops.mean_variance_normalization(x, 1, version=0))
    _refused(dmlrpc.ArgumentValueError, "version", lambda: ops.mean_variance_normalization(x, 1, version=3))


# --- Graph and AsyncClient ------------------------------------------------------------------------------------------


def test_graph_builders(client: dmlrpc.Client) -> None:
    g = dmlrpc.Graph()
    x = g.input(np.float32, (1, 4, 4, 6))
    lengths = g.input(np.uint32, (1, 4, 4, 1))
    deep = g.space_to_depth(x, 2)
    back = g.depth_to_space(deep, 2, "column_row_depth")
    pooled, where = g.max_pooling_with_indices(x, 2, strides=2)
    unpooled = g.max_unpooling(pooled, where, (1, 4, 4, 6))
    lp = g.lp_pooling(x, 2, strides=2, p=1)
    resized = g.resample(lp, (1, 1, 2, 2))
    arg = g.argmax(x, 3)
    lrn = g.local_response_normalization(x, 3)
    reversed_ = g.reverse_subsequences(x, lengths, 3)
    first, second = g.split(x, 2, 1)
    joined = g.join([second, first], 1)
    diagonal = g.diagonal_matrix((3, 3), 0, 2.0)
    filled = g.fill_value_constant((2,), 7, np.int32)
    count, coordinates = g.nonzero_coordinates(diagonal)
    g.output(back, unpooled, resized, arg, lrn, reversed_, joined, diagonal, filled, count, coordinates)
    data = _normal(1, 4, 4, 6)
    steps = _RNG.integers(0, 7, (1, 4, 4, 1)).astype(np.uint32)
    with client.compile(g) as op:
        outputs = op(data, steps)
    np.testing.assert_array_equal(outputs[0], move_ref.depth_to_space(move_ref.space_to_depth(data, 2, True), 2, False))
    values, indices = pool_ref.max_pooling(data, [2, 2], [2, 2], [0, 0], [0, 0])
    np.testing.assert_array_equal(outputs[1], pool_ref.max_unpooling(values, indices, data.shape))
    np.testing.assert_allclose(
        outputs[2],
        np.repeat(np.repeat(pool_ref.lp_pooling(data, [2, 2], [2, 2], [0, 0], [0, 0], 1), 2, 2), 2, 3),
        rtol=1e-5,
    )
    np.testing.assert_array_equal(outputs[3], data.argmax(3)[..., None])
    np.testing.assert_allclose(
        outputs[4],
        norm_ref.local_response_normalization(data, cross_channel=True, local_size=3, alpha=1e-4, beta=0.75, bias=1.0),
        rtol=1e-5,
    )
    np.testing.assert_array_equal(outputs[5], move_ref.reverse_subsequences(data, steps, 3))
    np.testing.assert_array_equal(outputs[6], np.concatenate([data[:, 2:], data[:, :2]], 1))
    np.testing.assert_array_equal(outputs[7], 2 * np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(outputs[8], [7, 7])
    assert int(outputs[9].reshape(-1)[0]) == 3
    np.testing.assert_array_equal(outputs[10][:3], np.argwhere(np.eye(3)))


def test_graph_builders_of_two_input_operators(client: dmlrpc.Client) -> None:
    g = dmlrpc.Graph()
    x = g.input(np.uint8, (1, 2, 4, 4))
    w = g.input(np.uint8, (3, 2, 2, 2))
    zero = g.input(np.uint8, (1, 1, 1, 1))
    images = g.input(np.float32, (1, 2, 5, 5))
    rois = g.input(np.float32, (1, 1, 2, 5))
    where = g.input(np.int64, (1, 2, 1, 5))
    g.output(
        g.convolution_integer(x, w, input_zero_point=zero),
        g.roi_pooling(images, rois, 2),
        g.argmin(images, (2, 3), select_last_index=True),
        g.scatter_elements(images, where, g.constant(np.ones((1, 2, 1, 5), np.float32)), 2),
    )
    xs = _RNG.integers(0, 255, (1, 2, 4, 4)).astype(np.uint8)
    ws = _RNG.integers(0, 255, (3, 2, 2, 2)).astype(np.uint8)
    zs = np.full((1, 1, 1, 1), 9, np.uint8)
    image = _normal(1, 2, 5, 5)
    boxes = np.array([[[[0, 0, 0, 4, 4], [0, 1, 2, 3, 4]]]], np.float32)
    rows = np.array([[[[4, 0, 1, 2, 3]], [[0, 0, 0, 0, 0]]]], np.int64)[:, :, :, :5]
    rows[0, 1, 0] = [1, 2, 3, 4, 0]
    with client.compile(g) as op:
        conv, pooled, arg, scattered = op(xs, ws, zs, image, boxes, rows)
    expected_scatter = image.copy()
    np.put_along_axis(expected_scatter, rows, 1.0, 2)
    np.testing.assert_array_equal(scattered, expected_scatter)
    expected = conv_ref.convolution_integer(
        xs, zs, ws, None, strides=(1, 1), dilations=(1, 1), start=(0, 0), end=(0, 0), groups=1
    )
    np.testing.assert_array_equal(conv, expected)
    np.testing.assert_array_equal(pooled, pool_ref.roi_pooling(image, boxes, 1.0, 2, 2))
    np.testing.assert_array_equal(arg, reduce_ref.arg_extreme(image, [2, 3], False, True))


def test_async_client_runs_the_new_functions(server: ServerThread) -> None:
    async def run() -> None:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as client:
            x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
            np.testing.assert_array_equal(await client.argmax(x.reshape(-1)), 15)
            np.testing.assert_array_equal(await client.space_to_depth(x, 2), move_ref.space_to_depth(x, 2, True))
            np.testing.assert_array_equal(await client.nonzero_coordinates(x[0, 0, 0]), [[1], [2], [3]])
            np.testing.assert_array_equal(await client.fill_value_constant(2, 1.0), [1.0, 1.0])

    asyncio.run(run())
