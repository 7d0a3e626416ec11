"""CONVOLUTION and CONVOLUTION_INTEGER over the wire: properties against loop references, and every documented rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators import REGISTRY
from tests.references import convolution as reference
from tests.strategies import arrays, broadcast_values, layouts

FL_6_4 = operators_pb2.FEATURE_LEVEL_6_4
CONVOLUTION, CROSS = operators_pb2.CONVOLUTION_MODE_CONVOLUTION, operators_pb2.CONVOLUTION_MODE_CROSS_CORRELATION
FORWARD, BACKWARD = operators_pb2.CONVOLUTION_DIRECTION_FORWARD, operators_pb2.CONVOLUTION_DIRECTION_BACKWARD
CONV = "operator_desc.convolution"
CONV_INT = "operator_desc.convolution_integer"


def _dtypes(case: str, field: str) -> list[Any]:
    table = REGISTRY[case].support_at(FL_6_4)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table[field].data_types), key=str)


def _invalid(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[Any], field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field == field


def conv_desc(
    x: Any,
    w: Any,
    bias: Any,
    out: Any,
    *,
    mode: int = CROSS,
    direction: int = FORWARD,
    strides: Any = None,
    dilations: Any = None,
    start: Any = None,
    end: Any = None,
    output_padding: Any = None,
    groups: int = 1,
    dimension_count: int | None = None,
    fused: operators_pb2.OperatorDesc | None = None,
    layout: dict[str, Any] | None = None,
) -> operators_pb2.OperatorDesc:
    layout = layout or {}
    spatial = len(x.shape if hasattr(x, "shape") else x[1]) - 2
    ones, zeros = [1] * spatial, [0] * spatial
    return operators_pb2.OperatorDesc(
        convolution=operators_pb2.ConvolutionOperatorDesc(
            input_tensor=tensor_desc(x, layout.get("x")),
            filter_tensor=tensor_desc(w, layout.get("w")),
            bias_tensor=None if bias is None else tensor_desc(bias, layout.get("bias")),
            output_tensor=tensor_desc(out, layout.get("out")),
            mode=mode,  # type: ignore[arg-type]
            direction=direction,  # type: ignore[arg-type]
            dimension_count=spatial if dimension_count is None else dimension_count,
            strides=ones if strides is None else strides,
            dilations=ones if dilations is None else dilations,
            start_padding=zeros if start is None else start,
            end_padding=zeros if end is None else end,
            output_padding=zeros if output_padding is None else output_padding,
            group_count=groups,
            fused_activation=fused,
        )
    )


def _output_sizes(
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    backward: bool,
    groups: int,
    strides: list[int],
    dilations: list[int],
    start: list[int],
    end: list[int],
    output_padding: list[int],
) -> tuple[int, ...]:
    sizes = [x_shape[0], w_shape[1] * groups if backward else w_shape[0]]
    for d in range(len(x_shape) - 2):
        extent = (w_shape[2 + d] - 1) * dilations[d] + 1
        if backward:
            sizes.append((x_shape[2 + d] - 1) * strides[d] + extent - start[d] - end[d] + output_padding[d])
        else:
            sizes.append((x_shape[2 + d] + start[d] + end[d] - extent) // strides[d] + 1 + output_padding[d])
    return tuple(sizes)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_convolution_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(_dtypes("convolution", "output_tensor")), label="dtype")
    spatial = data.draw(st.integers(1, 3), label="spatial dimensions")
    backward = data.draw(st.booleans(), label="backward")
    flip = data.draw(st.booleans(), label="mode CONVOLUTION")
    groups = data.draw(st.integers(1, 2), label="groups")
    batch = data.draw(st.integers(1, 2), label="batch")
    per_in, per_out = (
        data.draw(st.integers(1, 2), label="in / group"),
        data.draw(st.integers(1, 2), label="out / group"),
    )
    top = 5 if spatial == 1 else 4 if spatial == 2 else 3
    x_spatial = [data.draw(st.integers(1, top), label="input size") for _ in range(spatial)]
    kernel = [data.draw(st.integers(1, 3), label="kernel") for _ in range(spatial)]
    strides = [data.draw(st.integers(1, 3), label="stride") for _ in range(spatial)]
    dilations = [data.draw(st.integers(1, 2), label="dilation") for _ in range(spatial)]
    start = [data.draw(st.integers(0, 2), label="start padding") for _ in range(spatial)]
    end = [data.draw(st.integers(0, 2), label="end padding") for _ in range(spatial)]
    output_padding = [data.draw(st.integers(0, 2), label="output padding") for _ in range(spatial)]
    x_shape = (batch, groups * per_in, *x_spatial)
    w_shape = (groups * per_in, per_out, *kernel) if backward else (groups * per_out, per_in, *kernel)
    out_shape = _output_sizes(x_shape, w_shape, backward, groups, strides, dilations, start, end, output_padding)
    assume(all(size >= 1 for size in out_shape))
    assume(
        backward or all(x_spatial[d] + start[d] + end[d] >= (kernel[d] - 1) * dilations[d] + 1 for d in range(spatial))
    )
    assume(int(np.prod(out_shape)) <= 256)
    with_bias = data.draw(st.booleans(), label="bias")
    bias_shape = (1, out_shape[1], *([1] * spatial))
    activation = data.draw(st.sampled_from(["none", "relu", "leaky_relu"]), label="fused activation")
    layout = {
        "x": data.draw(layouts(x_shape, allow_broadcast=True), label="x layout"),
        "w": data.draw(layouts(w_shape, allow_broadcast=True), label="w layout"),
        "bias": data.draw(layouts(bias_shape, allow_broadcast=True), label="bias layout"),
        "out": data.draw(layouts(out_shape, allow_broadcast=False), label="out layout"),
    }
    x = broadcast_values(data.draw(arrays(dtype, x_shape), label="x"), layout["x"])
    w = broadcast_values(data.draw(arrays(dtype, w_shape), label="w"), layout["w"])
    bias = broadcast_values(data.draw(arrays(dtype, bias_shape), label="bias"), layout["bias"]) if with_bias else None
    fused = {
        "none": None,
        "relu": operators_pb2.OperatorDesc(activation_relu=operators_pb2.ActivationReluOperatorDesc()),
        "leaky_relu": operators_pb2.OperatorDesc(
            activation_leaky_relu=operators_pb2.ActivationLeakyReluOperatorDesc(alpha=0.25)
        ),
    }[activation]
    desc = conv_desc(
        x,
        w,
        bias,
        (dtype, out_shape),
        mode=CONVOLUTION if flip else CROSS,
        direction=BACKWARD if backward else FORWARD,
        strides=strides,
        dilations=dilations,
        start=start,
        end=end,
        output_padding=output_padding,
        groups=groups,
        fused=fused,
        layout={name: value.strides for name, value in layout.items()},
    )
    (got,) = client.execute(desc, [x, w, bias])
    expected = reference.convolution(
        x,
        w,
        bias,
        flip=flip,
        backward_direction=backward,
        strides=strides,
        dilations=dilations,
        start=start,
        end=end,
        output_padding=output_padding,
        groups=groups,
    )
    if activation == "relu":
        expected = np.maximum(expected, 0)
    elif activation == "leaky_relu":
        expected = np.where(expected < 0, 0.25 * expected, expected)
    assert isinstance(got, np.ndarray) and got.dtype == dtype and got.shape == out_shape
    tolerance = 2e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tolerance, atol=tolerance * 10)


def test_modes_of_a_one_dimensional_filter(client: dmlrpc.Client) -> None:
    x = np.array([[[1, 2, 3, 4]]], np.float32)
    w = np.array([[[1, 0, -1]]], np.float32)
    out = (np.float32, (1, 1, 2))
    (cross,) = client.execute(conv_desc(x, w, None, out, mode=CROSS), [x, w, None])
    (true,) = client.execute(conv_desc(x, w, None, out, mode=CONVOLUTION), [x, w, None])
    np.testing.assert_array_equal(cross, [[[-2, -2]]])
    np.testing.assert_array_equal(true, [[[2, 2]]])


def test_backward_scatters_the_filter(client: dmlrpc.Client) -> None:
    x = np.array([[[1, 2]]], np.float32)
    w = np.array([[[1, 2, 3]]], np.float32)
    (full,) = client.execute(conv_desc(x, w, None, (np.float32, (1, 1, 4)), direction=BACKWARD), [x, w, None])
    np.testing.assert_array_equal(full, [[[1, 4, 7, 6]]])
    desc = conv_desc(x, w, None, (np.float32, (1, 1, 3)), direction=BACKWARD, start=[1], end=[1], output_padding=[1])
    (cropped,) = client.execute(desc, [x, w, None])
    # Output padding re-extends what the end padding cropped: those positions keep their contributions.
    np.testing.assert_array_equal(cropped, [[[4, 7, 6]]])
    desc = conv_desc(x, w, None, (np.float32, (1, 1, 5)), direction=BACKWARD, output_padding=[1])
    (extended,) = client.execute(desc, [x, w, None])
    np.testing.assert_array_equal(extended, [[[1, 4, 7, 6, 0]]])


def test_backward_cropped_past_every_contribution_is_the_bias(client: dmlrpc.Client) -> None:
    x = np.array([[[1, 2]]], np.float32)
    w = np.array([[[3]]], np.float32)
    bias = np.array([[[0.5]]], np.float32)
    desc = conv_desc(x, w, bias, (np.float32, (1, 1, 2)), direction=BACKWARD, start=[2], output_padding=[2])
    (got,) = client.execute(desc, [x, w, bias])
    np.testing.assert_array_equal(got, [[[0.5, 0.5]]])


def test_backward_output_padding_beyond_the_stride(client: dmlrpc.Client) -> None:
    x = np.array([[[1, 2]]], np.float32)
    w = np.array([[[1, 1]]], np.float32)
    desc = conv_desc(x, w, None, (np.float32, (1, 1, 8)), direction=BACKWARD, strides=[2], output_padding=[4])
    (got,) = client.execute(desc, [x, w, None])
    np.testing.assert_array_equal(got, [[[1, 1, 2, 2, 0, 0, 0, 0]]])


def test_backward_is_the_adjoint_of_forward(client: dmlrpc.Client) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 4, (1, 2, 5, 4)).astype(np.float32)
    w = rng.integers(-3, 4, (4, 1, 2, 3)).astype(np.float32)
    options: dict[str, Any] = {"strides": [2, 1], "dilations": [1, 2], "start": [1, 0], "end": [0, 2], "groups": 2}
    (y,) = client.execute(conv_desc(x, w, None, (np.float32, (1, 4, 3, 2)), **options), [x, w, None])
    g = rng.integers(-3, 4, (1, 4, 3, 2)).astype(np.float32)
    (back,) = client.execute(conv_desc(g, w, None, (np.float32, x.shape), direction=BACKWARD, **options), [g, w, None])
    assert isinstance(y, np.ndarray) and isinstance(back, np.ndarray)
    assert float(np.sum(y * g)) == float(np.sum(x * back))


X = np.zeros((1, 2, 3, 3), np.float32)
W = np.zeros((2, 2, 2, 2), np.float32)
B = np.zeros((1, 2, 1, 1), np.float32)
OUT = (np.float32, (1, 2, 2, 2))


@pytest.mark.parametrize(
    ("x", "w", "bias", "out", "options", "field"),
    [
        (X, W.astype(np.float16), None, OUT, {}, f"{CONV}.filter_tensor.buffer.data_type"),
        (X, W, B.astype(np.float16), OUT, {}, f"{CONV}.bias_tensor.buffer.data_type"),
        (X, W, None, (np.float16, OUT[1]), {}, f"{CONV}.output_tensor.buffer.data_type"),
        (X, np.zeros((2, 2, 2), np.float32), None, OUT, {}, f"{CONV}.filter_tensor.buffer.sizes"),
        (X, W, np.zeros((1, 2, 1), np.float32), OUT, {}, f"{CONV}.bias_tensor.buffer.sizes"),
        (X, W, None, (np.float32, (1, 2, 2)), {}, f"{CONV}.output_tensor.buffer.sizes"),
        (X, W, None, OUT, {"mode": 2}, f"{CONV}.mode"),
        (X, W, None, OUT, {"direction": 2}, f"{CONV}.direction"),
        (X, W, None, OUT, {"dimension_count": 3}, f"{CONV}.dimension_count"),
        (X, W, None, OUT, {"strides": [1]}, f"{CONV}.strides"),
        (X, W, None, OUT, {"dilations": [1, 1, 1]}, f"{CONV}.dilations"),
        (X, W, None, OUT, {"start": [0]}, f"{CONV}.start_padding"),
        (X, W, None, OUT, {"end": [0, 0, 0]}, f"{CONV}.end_padding"),
        (X, W, None, OUT, {"output_padding": [0]}, f"{CONV}.output_padding"),
        (X, W, None, OUT, {"strides": [0, 1]}, f"{CONV}.strides[0]"),
        (X, W, None, OUT, {"dilations": [1, 0]}, f"{CONV}.dilations[1]"),
        (X, W, None, OUT, {"groups": 0}, f"{CONV}.group_count"),
        (np.zeros((1, 3, 3, 3), np.float32), W, None, OUT, {"groups": 2}, f"{CONV}.group_count"),
        (X, np.zeros((2, 1, 2, 2), np.float32), None, OUT, {}, f"{CONV}.filter_tensor.buffer.sizes"),
        (
            X,
            np.zeros((3, 1, 2, 2), np.float32),
            None,
            (np.float32, (1, 3, 2, 2)),
            {"groups": 2},
            f"{CONV}.filter_tensor.buffer.sizes",
        ),
        (X, np.zeros((2, 2, 4, 2), np.float32), None, OUT, {}, f"{CONV}.filter_tensor.buffer.sizes"),
        (X, W, None, (np.float32, (2, 2, 2, 2)), {}, f"{CONV}.output_tensor.buffer.sizes"),
        (X, W, None, (np.float32, (1, 3, 2, 2)), {}, f"{CONV}.output_tensor.buffer.sizes"),
        (X, W, None, (np.float32, (1, 2, 3, 2)), {}, f"{CONV}.output_tensor.buffer.sizes"),
        (X, W, None, (np.float32, (1, 2, 3, 3)), {"output_padding": [1, 0]}, f"{CONV}.output_tensor.buffer.sizes"),
        (X, W, np.zeros((1, 3, 1, 1), np.float32), OUT, {}, f"{CONV}.bias_tensor.buffer.sizes"),
        (
            X,
            np.zeros((3, 2, 2, 2), np.float32),
            None,
            (np.float32, (1, 4, 4, 4)),
            {"direction": BACKWARD},
            f"{CONV}.filter_tensor.buffer.sizes",
        ),
        (X, W, None, (np.float32, (1, 2, 4, 3)), {"direction": BACKWARD}, f"{CONV}.output_tensor.buffer.sizes"),
        (
            np.zeros((1, 2, 1, 1), np.float32),
            np.zeros((2, 2, 1, 1), np.float32),
            None,
            OUT,
            {"direction": BACKWARD, "start": [1, 0]},
            f"{CONV}.end_padding",
        ),
        (X.astype(np.int32), W.astype(np.int32), None, (np.int32, OUT[1]), {}, f"{CONV}.input_tensor.buffer.data_type"),
        (
            np.zeros((1, 1, 2, 2, 2, 2), np.float32),
            np.zeros((1, 1, 1, 1, 1, 1), np.float32),
            None,
            (np.float32, (1, 1, 2, 2, 2, 2)),
            {},
            f"{CONV}.input_tensor.buffer.sizes",
        ),
    ],
)
def test_convolution_rules(
    client: dmlrpc.Client, x: Any, w: Any, bias: Any, out: Any, options: Any, field: str
) -> None:
    _invalid(client, conv_desc(x, w, bias, out, **options), [x, w, bias], field)


def test_convolution_fused_activation_rules(client: dmlrpc.Client) -> None:
    with_tensor = operators_pb2.OperatorDesc(
        activation_relu=operators_pb2.ActivationReluOperatorDesc(input_tensor=tensor_desc(X))
    )
    desc = conv_desc(X, W, None, OUT, fused=with_tensor)
    _invalid(client, desc, [X, W, None], f"{CONV}.fused_activation.activation_relu.input_tensor")


def int_desc(
    x: Any,
    xz: Any,
    w: Any,
    wz: Any,
    out: Any,
    *,
    strides: Any = None,
    dilations: Any = None,
    start: Any = None,
    end: Any = None,
    groups: int = 1,
    dimension_count: int | None = None,
    layout: dict[str, Any] | None = None,
) -> operators_pb2.OperatorDesc:
    layout = layout or {}
    spatial = len(x.shape) - 2
    ones, zeros = [1] * spatial, [0] * spatial
    return operators_pb2.OperatorDesc(
        convolution_integer=operators_pb2.ConvolutionIntegerOperatorDesc(
            input_tensor=tensor_desc(x, layout.get("x")),
            input_zero_point_tensor=None if xz is None else tensor_desc(xz),
            filter_tensor=tensor_desc(w, layout.get("w")),
            filter_zero_point_tensor=None if wz is None else tensor_desc(wz),
            output_tensor=tensor_desc(out, layout.get("out")),
            dimension_count=spatial if dimension_count is None else dimension_count,
            strides=ones if strides is None else strides,
            dilations=ones if dilations is None else dilations,
            start_padding=zeros if start is None else start,
            end_padding=zeros if end is None else end,
            group_count=groups,
        )
    )


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_convolution_integer_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    x_type = data.draw(st.sampled_from(_dtypes("convolution_integer", "input_tensor")), label="input dtype")
    w_type = data.draw(st.sampled_from(_dtypes("convolution_integer", "filter_tensor")), label="filter dtype")
    spatial = data.draw(st.integers(1, 2), label="spatial dimensions")
    groups = data.draw(st.integers(1, 2), label="groups")
    batch = data.draw(st.integers(1, 2), label="batch")
    per_in, per_out = (
        data.draw(st.integers(1, 2), label="in / group"),
        data.draw(st.integers(1, 2), label="out / group"),
    )
    x_spatial = [data.draw(st.integers(1, 5), label="input size") for _ in range(spatial)]
    kernel = [data.draw(st.integers(1, 3), label="kernel") for _ in range(spatial)]
    strides = [data.draw(st.integers(1, 3), label="stride") for _ in range(spatial)]
    dilations = [data.draw(st.integers(1, 2), label="dilation") for _ in range(spatial)]
    start = [data.draw(st.integers(0, 2), label="start padding") for _ in range(spatial)]
    end = [data.draw(st.integers(0, 2), label="end padding") for _ in range(spatial)]
    assume(all(x_spatial[d] + start[d] + end[d] >= (kernel[d] - 1) * dilations[d] + 1 for d in range(spatial)))
    channels = groups * per_out
    x_shape = (batch, groups * per_in, *x_spatial)
    w_shape = (channels, per_in, *kernel)
    zeros = [0] * spatial
    out_shape = _output_sizes(x_shape, w_shape, False, groups, strides, dilations, start, end, zeros)
    zero_rank = data.draw(st.integers(1, 4), label="zero point dimension count")
    x_zero_shape = data.draw(st.sampled_from([None, (1,) * zero_rank]), label="input zero point shape")
    per_channel = (channels,) if zero_rank == 1 else (1, channels, *([1] * (zero_rank - 2)))
    w_zero_shape = data.draw(st.sampled_from([None, (1,) * zero_rank, per_channel]), label="filter zero point shape")
    layout = {
        "x": data.draw(layouts(x_shape, allow_broadcast=True), label="x layout"),
        "w": data.draw(layouts(w_shape, allow_broadcast=True), label="w layout"),
        "out": data.draw(layouts(out_shape, allow_broadcast=False), label="out layout"),
    }
    x = broadcast_values(data.draw(arrays(x_type, x_shape), label="x"), layout["x"])
    w = broadcast_values(data.draw(arrays(w_type, w_shape), label="w"), layout["w"])
    xz = None if x_zero_shape is None else data.draw(arrays(x_type, x_zero_shape), label="input zero point")
    wz = None if w_zero_shape is None else data.draw(arrays(w_type, w_zero_shape), label="filter zero point")
    desc = int_desc(
        x,
        xz,
        w,
        wz,
        (np.int32, out_shape),
        strides=strides,
        dilations=dilations,
        start=start,
        end=end,
        groups=groups,
        layout={name: value.strides for name, value in layout.items()},
    )
    (got,) = client.execute(desc, [x, xz, w, wz])
    expected = reference.convolution_integer(
        x, xz, w, wz, strides=strides, dilations=dilations, start=start, end=end, groups=groups
    )
    assert isinstance(got, np.ndarray) and got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


def test_convolution_integer_padding_contributes_nothing(client: dmlrpc.Client) -> None:
    x = np.full((1, 1, 2, 2), 10, np.uint8)
    xz = np.full((1, 1, 1, 1), 10, np.uint8)
    w = np.full((1, 1, 3, 3), -1, np.int8)
    (got,) = client.execute(
        int_desc(x, xz, w, None, (np.int32, (1, 1, 2, 2)), start=[1, 1], end=[1, 1]), [x, xz, w, None]
    )
    np.testing.assert_array_equal(got, np.zeros((1, 1, 2, 2)))


XI = np.zeros((1, 2, 3, 3), np.uint8)
WI = np.zeros((2, 2, 2, 2), np.int8)
OI = (np.int32, (1, 2, 2, 2))
Z1 = np.zeros((1, 1, 1, 1), np.uint8)


@pytest.mark.parametrize(
    ("x", "xz", "w", "wz", "out", "options", "field"),
    [
        (XI, np.zeros((1, 1, 1, 1), np.int8), WI, None, OI, {}, f"{CONV_INT}.input_zero_point_tensor.buffer.data_type"),
        (XI, None, WI, Z1, OI, {}, f"{CONV_INT}.filter_zero_point_tensor.buffer.data_type"),
        (XI, Z1, WI, np.zeros((1, 1), np.int8), OI, {}, f"{CONV_INT}.filter_zero_point_tensor.buffer.sizes"),
        (XI, None, np.zeros((2, 2, 2), np.int8), None, OI, {}, f"{CONV_INT}.filter_tensor.buffer.sizes"),
        (XI, None, WI, None, (np.int32, (1, 2, 2)), {}, f"{CONV_INT}.output_tensor.buffer.sizes"),
        (XI, None, WI, None, (np.float32, OI[1]), {}, f"{CONV_INT}.output_tensor.buffer.data_type"),
        (XI, None, WI, None, (np.uint8, OI[1]), {}, f"{CONV_INT}.output_tensor.buffer.data_type"),
        (XI, None, WI, None, OI, {"dimension_count": 3}, f"{CONV_INT}.dimension_count"),
        (XI, np.zeros((1, 2, 1, 1), np.uint8), WI, None, OI, {}, f"{CONV_INT}.input_zero_point_tensor.buffer.sizes"),
        (XI, None, WI, np.zeros((1, 3, 1, 1), np.int8), OI, {}, f"{CONV_INT}.filter_zero_point_tensor.buffer.sizes"),
        (XI, None, WI, np.zeros((2, 1, 1, 1), np.int8), OI, {}, f"{CONV_INT}.filter_zero_point_tensor.buffer.sizes"),
        (XI, None, WI, None, OI, {"strides": [1]}, f"{CONV_INT}.strides"),
        (XI, None, WI, None, OI, {"dilations": [1]}, f"{CONV_INT}.dilations"),
        (XI, None, WI, None, OI, {"start": [0, 0, 0]}, f"{CONV_INT}.start_padding"),
        (XI, None, WI, None, OI, {"end": [0]}, f"{CONV_INT}.end_padding"),
        (XI, None, WI, None, OI, {"strides": [1, 0]}, f"{CONV_INT}.strides[1]"),
        (XI, None, WI, None, OI, {"dilations": [0, 1]}, f"{CONV_INT}.dilations[0]"),
        (XI, None, WI, None, OI, {"groups": 0}, f"{CONV_INT}.group_count"),
        (np.zeros((1, 3, 3, 3), np.uint8), None, WI, None, OI, {"groups": 2}, f"{CONV_INT}.group_count"),
        (XI, None, np.zeros((2, 1, 2, 2), np.int8), None, OI, {}, f"{CONV_INT}.filter_tensor.buffer.sizes"),
        (XI, None, np.zeros((2, 2, 4, 4), np.int8), None, OI, {}, f"{CONV_INT}.filter_tensor.buffer.sizes"),
        (XI, None, WI, None, (np.int32, (1, 2, 2, 1)), {}, f"{CONV_INT}.output_tensor.buffer.sizes"),
        (
            XI,
            None,
            WI,
            None,
            (np.int32, (1, 2, 3, 3)),
            {"start": [1, 1], "strides": [2, 2]},
            f"{CONV_INT}.output_tensor.buffer.sizes",
        ),
        (
            np.zeros((1, 2, 3, 3, 3), np.uint8),
            None,
            np.zeros((2, 2, 2, 2, 2), np.int8),
            None,
            (np.int32, (1, 2, 2, 2, 2)),
            {},
            f"{CONV_INT}.input_tensor.buffer.sizes",
        ),
        (XI.astype(np.int16), None, WI, None, OI, {}, f"{CONV_INT}.input_tensor.buffer.data_type"),
    ],
)
def test_convolution_integer_rules(
    client: dmlrpc.Client, x: Any, xz: Any, w: Any, wz: Any, out: Any, options: Any, field: str
) -> None:
    _invalid(client, int_desc(x, xz, w, wz, out, **options), [x, xz, w, wz], field)


def test_zero_points_share_a_dimension_count(client: dmlrpc.Client) -> None:
    xz = np.zeros((1, 1), np.uint8)
    wz = np.zeros((1, 1, 1, 1), np.int8)
    desc = int_desc(XI, xz, WI, wz, OI)
    _invalid(client, desc, [XI, xz, WI, wz], f"{CONV_INT}.filter_zero_point_tensor.buffer.sizes")
