"""VALUE_SCALE_2D, UPSAMPLE_2D and RESAMPLE(1/2/3) over the wire: hand-worked cases, properties against the NumPy
reference, and every documented rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.operators import REGISTRY
from tests.references import resample as ref
from tests.strategies import arrays, broadcast_values, layouts

NEAREST = operators_pb2.INTERPOLATION_MODE_NEAREST_NEIGHBOR
LINEAR = operators_pb2.INTERPOLATION_MODE_LINEAR
INC, DEC = tensor_pb2.AXIS_DIRECTION_INCREASING, tensor_pb2.AXIS_DIRECTION_DECREASING
FL_6_4 = operators_pb2.FEATURE_LEVEL_6_4
DT_NAMES = {
    np.dtype(np.float32): "FLOAT32",
    np.dtype(np.float16): "FLOAT16",
    np.dtype(np.int8): "INT8",
    np.dtype(np.uint8): "UINT8",
}


def dtypes_of(case: str) -> list[Any]:
    """The data types the operator's support table allows at feature level 6.4 (input tensor)."""
    table = REGISTRY[case].support_at(FL_6_4)
    assert table is not None
    rule = table["input_tensor"]
    return [
        dtype
        for dtype, name in DT_NAMES.items()
        if tensor_pb2.TensorDataType.Value(f"TENSOR_DATA_TYPE_{name}") in rule.data_types
    ]


def resample_desc(case: str, x: Any, out_shape: Any, mode: int, scales: Any, **fields: Any) -> Any:
    """An OperatorDesc of one of the RESAMPLE family; ``fields`` are extra desc fields (offsets, counts, ...)."""
    strides = fields.pop("strides", {})
    dtype, shape = (x.dtype, x.shape) if isinstance(x, np.ndarray) else x
    out_dtype = fields.pop("out_dtype", dtype)
    common: dict[str, Any] = {
        "input_tensor": tensor_desc((dtype, shape), strides.get("input")),
        "output_tensor": tensor_desc((out_dtype, out_shape), strides.get("output")),
        "interpolation_mode": mode,
        "scales": scales,
    }
    if case == "resample":
        common["scale_count"] = fields.pop("scale_count", len(scales))
    else:
        common["dimension_count"] = fields.pop("dimension_count", len(scales))
        common["input_pixel_offsets"] = fields.pop("input_pixel_offsets", [0.5] * len(scales))
        common["output_pixel_offsets"] = fields.pop("output_pixel_offsets", [-0.5] * len(scales))
    message = {
        "resample": operators_pb2.ResampleOperatorDesc,
        "resample1": operators_pb2.Resample1OperatorDesc,
        "resample2": operators_pb2.Resample2OperatorDesc,
        "resample3": operators_pb2.Resample3OperatorDesc,
    }[case]
    return operators_pb2.OperatorDesc(**{case: message(**common, **fields)})


def value_scale_desc(x: Any, scale: float, bias: Any, **fields: Any) -> Any:
    strides = fields.pop("strides", {})
    out_shape = fields.pop("out_shape", x.shape)
    out_dtype = fields.pop("out_dtype", x.dtype)
    return operators_pb2.OperatorDesc(
        value_scale_2d=operators_pb2.ValueScale2dOperatorDesc(
            input_tensor=tensor_desc(x, strides.get("input")),
            output_tensor=tensor_desc((out_dtype, out_shape), strides.get("output")),
            scale=scale,
            channel_count=fields.pop("channel_count", len(bias)),
            bias=bias,
        )
    )


def upsample_desc(x: Any, height: int, width: int, mode: int, **fields: Any) -> Any:
    strides = fields.pop("strides", {})
    dtype, shape = (x.dtype, x.shape) if isinstance(x, np.ndarray) else x
    out_shape = fields.pop("out_shape", (*shape[:-2], shape[-2] * height, shape[-1] * width))
    return operators_pb2.OperatorDesc(
        upsample_2d=operators_pb2.Upsample2dOperatorDesc(
            input_tensor=tensor_desc((dtype, shape), strides.get("input")),
            output_tensor=tensor_desc((fields.pop("out_dtype", dtype), out_shape), strides.get("output")),
            scale_size=operators_pb2.Size2D(height=height, width=width),
            interpolation_mode=fields.pop("mode", mode),
        )
    )


def assert_matches(got: Any, real: np.ndarray, dtype: np.dtype, *, interpolated: bool) -> None:
    """Exact for moved elements; integers from interpolation round half to even (a result within 1e-3 of a
    half may round either way, as FLOAT32 sums can land on either side); floats within a tolerance."""
    assert got is not None and got.dtype == dtype and got.shape == real.shape
    if not interpolated:
        np.testing.assert_array_equal(got, ref.to_dtype(real, dtype))
        return
    if dtype.kind in "iu":
        near_half = np.abs(np.abs(real - np.floor(real)) - 0.5) < 1e-3
        expected = ref.to_dtype(real, dtype)
        np.testing.assert_array_equal(got[~near_half], expected[~near_half])
        assert np.all(np.abs(got[near_half].astype(np.float64) - real[near_half]) <= 0.5 + 1e-3)
        return
    tolerance = 1e-5 if dtype == np.float32 else 2e-3
    np.testing.assert_allclose(got.astype(np.float64), real, rtol=tolerance, atol=tolerance * 8)


def run(client: dmlrpc.Client, desc: Any, x: np.ndarray) -> np.ndarray:
    """The one output array of an operator."""
    (out,) = client.execute(desc, [x])
    assert isinstance(out, np.ndarray)
    return out


def assert_invalid(client: dmlrpc.Client, desc: Any, inputs: list[Any], field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field == field


# --- Hand-worked cases (the pages give no examples) ---------------------------------------------------------------


def test_resample_nearest_doubles_each_element(client: dmlrpc.Client) -> None:
    x = np.array([[1, 2], [3, 4]], np.float32)
    (out,) = client.execute(resample_desc("resample", x, (4, 4), NEAREST, [2.0, 2.0]), [x])
    np.testing.assert_array_equal(out, [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])


def test_resample_linear_maps_pixel_centres(client: dmlrpc.Client) -> None:
    # inX = (outX + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25; the edges clamp.
    x = np.array([0, 4], np.float32)
    (out,) = client.execute(resample_desc("resample", x, (4,), LINEAR, [2.0]), [x])
    np.testing.assert_array_equal(out, [0, 1, 3, 4])


def test_resample_output_sizes_are_not_derived_from_scales(client: dmlrpc.Client) -> None:
    # Scale 2 with a 3-element output: the scaled input (4 elements) is cropped.
    x = np.array([0, 4], np.float32)
    (out,) = client.execute(resample_desc("resample", x, (3,), LINEAR, [2.0]), [x])
    np.testing.assert_array_equal(out, [0, 1, 3])
    # Scale 1 with a 4-element output: the missing outputs clamp at the edge.
    (out,) = client.execute(resample_desc("resample", x, (4,), LINEAR, [1.0]), [x])
    np.testing.assert_array_equal(out, [0, 4, 4, 4])


def test_resample1_with_resample_offsets_equals_resample(client: dmlrpc.Client) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (a,) = client.execute(resample_desc("resample", x, (5, 3), LINEAR, [1.7, 0.8]), [x])
    (b,) = client.execute(resample_desc("resample1", x, (5, 3), LINEAR, [1.7, 0.8]), [x])
    np.testing.assert_array_equal(a, b)


def test_resample2_rounding_directions(client: dmlrpc.Client) -> None:
    # Offsets 0: inX = outX / 2 = 0, 0.5, 1, 1.5 -> floor 0 0 1 1, ceil 0 1 1 2 (clamped to 1).
    x = np.array([10, 20], np.int8)
    zero = {"input_pixel_offsets": [0.0], "output_pixel_offsets": [0.0]}
    (down,) = client.execute(resample_desc("resample2", x, (4,), NEAREST, [2.0], rounding_direction=DEC, **zero), [x])
    (up,) = client.execute(resample_desc("resample2", x, (4,), NEAREST, [2.0], rounding_direction=INC, **zero), [x])
    np.testing.assert_array_equal(down, [10, 10, 20, 20])
    np.testing.assert_array_equal(up, [10, 20, 20, 20])
    # RESAMPLE1 picks the nearest element, halfway going to the higher index.
    (nearest,) = client.execute(resample_desc("resample1", x, (4,), NEAREST, [2.0], **zero), [x])
    np.testing.assert_array_equal(nearest, [10, 20, 20, 20])


def test_resample3_antialiased_downscale(client: dmlrpc.Client) -> None:
    # Scale 1/4: output 0 centres at inX = 1.5 and its tent of half-width 4 covers -2..5 with weights
    # 1/8, 3/8, 5/8, 7/8, 7/8, 5/8, 3/8, 1/8 (sum 4); the taps left of 0 read element 0. Result 6.625 / 4.
    x = np.arange(8, dtype=np.float32)
    desc = resample_desc("resample3", x, (2,), LINEAR, [0.25], rounding_direction=DEC, antialiased=True)
    out = run(client, desc, x)
    assert out[0] == pytest.approx(6.625 / 4, abs=1e-6)
    # Without antialiasing, the 2-tap filter reads inX = 1.5 and 5.5.
    plain = resample_desc("resample3", x, (2,), LINEAR, [0.25], rounding_direction=DEC, antialiased=False)
    np.testing.assert_allclose(run(client, plain, x), np.array([1.5, 5.5]))


def test_resample3_antialiasing_needs_a_scale_below_one_half(client: dmlrpc.Client) -> None:
    # The page applies antialiasing only where 1 / scale > 2.
    x = np.arange(8, dtype=np.float32)
    on = resample_desc("resample3", x, (4,), LINEAR, [0.5], rounding_direction=DEC, antialiased=True)
    off = resample_desc("resample3", x, (4,), LINEAR, [0.5], rounding_direction=DEC, antialiased=False)
    np.testing.assert_array_equal(client.execute(on, [x])[0], client.execute(off, [x])[0])


def test_resample_integer_linear_rounds_half_to_even(client: dmlrpc.Client) -> None:
    x = np.array([1, 2, 3, 4], np.uint8)
    # Scale 1, offsets shifting by half an element: every output is the mean of two neighbours.
    desc = resample_desc("resample1", x, (4,), LINEAR, [1.0], input_pixel_offsets=[0.0], output_pixel_offsets=[-0.5])
    (out,) = client.execute(desc, [x])
    np.testing.assert_array_equal(out, [2, 2, 4, 4])  # 1.5, 2.5, 3.5, 4 (clamped)


def test_upsample_2d_bilinear(client: dmlrpc.Client) -> None:
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    out = run(client, upsample_desc(x, 2, 2, LINEAR), x)
    expected = [[1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5], [2.5, 2.75, 3.25, 3.5], [3, 3.25, 3.75, 4]]
    np.testing.assert_allclose(out, np.array([[expected]]))


def test_value_scale_2d_per_channel_bias(client: dmlrpc.Client) -> None:
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2)
    (out,) = client.execute(value_scale_desc(x, 2.0, [1.0, -1.0, 0.5]), [x])
    np.testing.assert_array_equal(out, 2 * x + np.array([1.0, -1.0, 0.5], np.float32).reshape(1, 3, 1, 1))


# --- Properties against the reference -----------------------------------------------------------------------------


@st.composite
def small_shape(draw: st.DrawFn, rank: int, max_side: int = 5, budget: int = 256) -> tuple[int, ...]:
    sizes = []
    for _ in range(rank):
        side = draw(st.integers(1, max(1, min(max_side, budget))))
        sizes.append(side)
        budget //= side
    return tuple(sizes)


SCALES = st.one_of(st.sampled_from([0.2, 0.25, 0.4, 0.5, 2 / 3, 1.0, 1.5, 2.0, 3.0]), st.floats(0.125, 4.0, width=32))
OFFSETS = st.one_of(st.sampled_from([-0.5, 0.0, 0.25, 0.5]), st.floats(-1.5, 1.5, width=32))


@pytest.mark.parametrize("case", ["resample", "resample1", "resample2", "resample3"])
@settings(max_examples=20)
@given(data=st.data())
def test_resample_family_matches_reference(client: dmlrpc.Client, case: str, data: st.DataObject) -> None:
    dtype = np.dtype(data.draw(st.sampled_from(dtypes_of(case)), label="dtype"))
    rank = data.draw(st.integers(1, 4), label="rank")
    shape = data.draw(small_shape(rank), label="input shape")
    out_shape = data.draw(small_shape(rank, max_side=6), label="output shape")
    mode = data.draw(st.sampled_from([NEAREST, LINEAR]), label="mode")
    scales = [float(np.float32(s)) for s in data.draw(st.lists(SCALES, min_size=rank, max_size=rank), label="scales")]
    fields: dict[str, Any] = {}
    in_offsets, out_offsets = [0.5] * rank, [-0.5] * rank
    rounding = "nearest"
    if case != "resample":
        in_offsets = data.draw(st.lists(OFFSETS, min_size=rank, max_size=rank), label="input offsets")
        out_offsets = data.draw(st.lists(OFFSETS, min_size=rank, max_size=rank), label="output offsets")
        fields.update(input_pixel_offsets=in_offsets, output_pixel_offsets=out_offsets)
    if case in ("resample2", "resample3"):
        direction = data.draw(st.sampled_from([INC, DEC]), label="rounding direction")
        fields["rounding_direction"] = direction
        rounding = "ceil" if direction == INC else "floor"
    antialiased = case == "resample3" and data.draw(st.booleans(), label="antialiased")
    if case == "resample3":
        fields["antialiased"] = antialiased
    in_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    out_layout = data.draw(layouts(out_shape, allow_broadcast=False), label="output layout")
    x = broadcast_values(data.draw(arrays(dtype.type, shape), label="x"), in_layout)
    fields["strides"] = {"input": in_layout.strides, "output": out_layout.strides}

    (out,) = client.execute(resample_desc(case, x, out_shape, mode, scales, **fields), [x])

    real = ref.resample(
        x,
        out_shape,
        scales,
        in_offsets,
        out_offsets,
        linear=mode == LINEAR,
        rounding=rounding,
        antialiased=antialiased,
    )
    assert_matches(out, real, dtype, interpolated=mode == LINEAR)


@settings(max_examples=20)
@given(data=st.data())
def test_upsample_2d_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = np.dtype(data.draw(st.sampled_from(dtypes_of("upsample_2d")), label="dtype"))
    rank = data.draw(st.integers(4, 5), label="rank")
    shape = data.draw(small_shape(rank, max_side=3, budget=64), label="input shape")
    height, width = data.draw(st.integers(1, 3), label="height"), data.draw(st.integers(1, 3), label="width")
    mode = data.draw(st.sampled_from([NEAREST, LINEAR]), label="mode")
    out_shape = (*shape[:-2], shape[-2] * height, shape[-1] * width)
    in_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    out_layout = data.draw(layouts(out_shape, allow_broadcast=False), label="output layout")
    x = broadcast_values(data.draw(arrays(dtype.type, shape), label="x"), in_layout)
    strides = {"input": in_layout.strides, "output": out_layout.strides}

    (out,) = client.execute(upsample_desc(x, height, width, mode, strides=strides), [x])

    if mode == NEAREST:
        real = ref.upsample_2d_nearest(x.astype(np.float64), height, width)
    else:
        unit = [1.0] * (rank - 2)
        scales = [*unit, float(height), float(width)]
        real = ref.resample(x, out_shape, scales, [0.5] * rank, [-0.5] * rank, linear=True)
    assert_matches(out, real, dtype, interpolated=mode == LINEAR)


@settings(max_examples=20)
@given(data=st.data())
def test_value_scale_2d_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = np.dtype(data.draw(st.sampled_from(dtypes_of("value_scale_2d")), label="dtype"))
    channels = data.draw(st.sampled_from([1, 3]), label="channels")
    n, h, w = (data.draw(st.integers(1, 4), label=name) for name in "nhw")
    shape = (n, channels, h, w)
    scale = float(np.float32(data.draw(st.floats(-4, 4, width=32), label="scale")))
    bias = [
        float(np.float32(b))
        for b in data.draw(st.lists(st.floats(-4, 4, width=32), min_size=channels, max_size=channels), label="bias")
    ]
    in_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    out_layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    x = broadcast_values(data.draw(arrays(dtype.type, shape), label="x"), in_layout)
    strides = {"input": in_layout.strides, "output": out_layout.strides}

    (out,) = client.execute(value_scale_desc(x, scale, bias, strides=strides), [x])

    assert_matches(out, ref.value_scale_2d(x, scale, bias), dtype, interpolated=True)


# --- Validation ---------------------------------------------------------------------------------------------------

X4 = np.zeros((1, 3, 2, 2), np.float32)
VS = "operator_desc.value_scale_2d"
UP = "operator_desc.upsample_2d"


def test_value_scale_2d_output_type_must_match(client: dmlrpc.Client) -> None:
    assert_invalid(
        client, value_scale_desc(X4, 1, [0, 0, 0], out_dtype=np.float16), [X4], f"{VS}.output_tensor.buffer.data_type"
    )


def test_value_scale_2d_output_sizes_must_match(client: dmlrpc.Client) -> None:
    desc = value_scale_desc(X4, 1, [0, 0, 0], out_shape=(1, 3, 2, 3))
    assert_invalid(client, desc, [X4], f"{VS}.output_tensor.buffer.sizes")


def test_value_scale_2d_channel_count_is_1_or_3(client: dmlrpc.Client) -> None:
    x = np.zeros((1, 2, 2, 2), np.float32)
    assert_invalid(client, value_scale_desc(x, 1, [0, 0]), [x], f"{VS}.channel_count")


def test_value_scale_2d_channel_count_is_the_channel_size(client: dmlrpc.Client) -> None:
    assert_invalid(client, value_scale_desc(X4, 1, [0], channel_count=1), [X4], f"{VS}.channel_count")


def test_value_scale_2d_bias_has_channel_count_entries(client: dmlrpc.Client) -> None:
    assert_invalid(client, value_scale_desc(X4, 1, [0, 0], channel_count=3), [X4], f"{VS}.bias")


def test_value_scale_2d_is_4d_float(client: dmlrpc.Client) -> None:
    x3 = np.zeros((3, 2, 2), np.float32)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(value_scale_desc(x3, 1, [0, 0, 0]), [x3])
    assert caught.value.field_violations[0].field.startswith(f"{VS}.input_tensor")
    xi = np.zeros((1, 3, 2, 2), np.int8)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(value_scale_desc(xi, 1, [0, 0, 0]), [xi])
    assert caught.value.field_violations[0].field.startswith(f"{VS}.input_tensor")


def test_upsample_2d_output_type_and_rank(client: dmlrpc.Client) -> None:
    x = np.zeros((1, 1, 2, 2), np.float32)
    assert_invalid(
        client, upsample_desc(x, 2, 2, NEAREST, out_dtype=np.float16), [x], f"{UP}.output_tensor.buffer.data_type"
    )
    desc = upsample_desc(x, 2, 2, NEAREST, out_shape=(1, 1, 1, 4, 4))
    assert_invalid(client, desc, [x], f"{UP}.output_tensor.buffer.sizes")


def test_upsample_2d_output_sizes_are_scaled_input_sizes(client: dmlrpc.Client) -> None:
    x = np.zeros((1, 1, 2, 2), np.float32)
    assert_invalid(
        client, upsample_desc(x, 2, 2, LINEAR, out_shape=(1, 1, 4, 5)), [x], f"{UP}.output_tensor.buffer.sizes"
    )
    assert_invalid(
        client, upsample_desc(x, 2, 2, LINEAR, out_shape=(1, 2, 4, 4)), [x], f"{UP}.output_tensor.buffer.sizes"
    )


@pytest.mark.parametrize(
    ("height", "width", "name"), [(0, 1, "height"), (1, 0, "width"), (2**31, 1, "height"), (1, 2**31, "width")]
)
def test_upsample_2d_scale_range(client: dmlrpc.Client, height: int, width: int, name: str) -> None:
    x = np.zeros((1, 1, 2, 2), np.float32)
    desc = upsample_desc(x, height, width, NEAREST, out_shape=(1, 1, 2, 2))
    assert_invalid(client, desc, [x], f"{UP}.scale_size.{name}")


def test_upsample_2d_interpolation_mode_in_range(client: dmlrpc.Client) -> None:
    x = np.zeros((1, 1, 2, 2), np.float32)
    assert_invalid(client, upsample_desc(x, 2, 2, 7), [x], f"{UP}.interpolation_mode")


def test_upsample_2d_dimension_counts_and_types(client: dmlrpc.Client) -> None:
    x = np.zeros((2, 2, 2), np.float32)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(upsample_desc(x, 2, 2, NEAREST), [x])
    assert caught.value.field_violations[0].field.startswith(f"{UP}.input_tensor")
    xi = np.zeros((1, 1, 2, 2), np.uint8)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(upsample_desc(xi, 2, 2, NEAREST), [xi])
    assert caught.value.field_violations[0].field.startswith(f"{UP}.input_tensor")


FAMILY = ["resample", "resample1", "resample2", "resample3"]
X2 = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize("case", FAMILY)
def test_resample_output_type_and_rank_match(client: dmlrpc.Client, case: str) -> None:
    desc = resample_desc(case, X2, (2, 3), NEAREST, [1.0, 1.0], out_dtype=np.float16)
    assert_invalid(client, desc, [X2], f"operator_desc.{case}.output_tensor.buffer.data_type")
    desc = resample_desc(case, X2, (1, 2, 3), NEAREST, [1.0, 1.0])
    assert_invalid(client, desc, [X2], f"operator_desc.{case}.output_tensor.buffer.sizes")


@pytest.mark.parametrize("case", FAMILY)
def test_resample_count_equals_dimension_count(client: dmlrpc.Client, case: str) -> None:
    count = "scale_count" if case == "resample" else "dimension_count"
    desc = resample_desc(case, X2, (2, 3), NEAREST, [1.0, 1.0], **{count: 3})
    assert_invalid(client, desc, [X2], f"operator_desc.{case}.{count}")


@pytest.mark.parametrize("case", FAMILY)
def test_resample_scales_length_equals_count(client: dmlrpc.Client, case: str) -> None:
    count = "scale_count" if case == "resample" else "dimension_count"
    desc = resample_desc(case, X2, (2, 3), NEAREST, [1.0, 1.0, 1.0], **{count: 2})
    assert_invalid(client, desc, [X2], f"operator_desc.{case}.scales")


@pytest.mark.parametrize("case", FAMILY)
@pytest.mark.parametrize("bad", [0.0, -1.0, float("inf"), float("nan")])
def test_resample_scales_positive_and_finite(client: dmlrpc.Client, case: str, bad: float) -> None:
    desc = resample_desc(case, X2, (2, 3), LINEAR, [1.0, bad])
    assert_invalid(client, desc, [X2], f"operator_desc.{case}.scales[1]")


@pytest.mark.parametrize("case", FAMILY)
def test_resample_interpolation_mode_in_range(client: dmlrpc.Client, case: str) -> None:
    assert_invalid(
        client, resample_desc(case, X2, (2, 3), 2, [1.0, 1.0]), [X2], f"operator_desc.{case}.interpolation_mode"
    )


@pytest.mark.parametrize("case", FAMILY[1:])
@pytest.mark.parametrize("name", ["input_pixel_offsets", "output_pixel_offsets"])
def test_resample_offsets_length_and_finite(client: dmlrpc.Client, case: str, name: str) -> None:
    desc = resample_desc(case, X2, (2, 3), LINEAR, [1.0, 1.0], **{name: [0.5]})
    assert_invalid(client, desc, [X2], f"operator_desc.{case}.{name}")
    desc = resample_desc(case, X2, (2, 3), LINEAR, [1.0, 1.0], **{name: [0.5, float("nan")]})
    assert_invalid(client, desc, [X2], f"operator_desc.{case}.{name}[1]")


@pytest.mark.parametrize("case", FAMILY[2:])
def test_resample_rounding_direction_in_range(client: dmlrpc.Client, case: str) -> None:
    desc = resample_desc(case, X2, (2, 3), NEAREST, [1.0, 1.0], rounding_direction=2)
    assert_invalid(client, desc, [X2], f"operator_desc.{case}.rounding_direction")


@pytest.mark.parametrize("case", FAMILY)
def test_resample_support_table(client: dmlrpc.Client, case: str) -> None:
    x5 = np.zeros((1, 1, 1, 2, 2), np.float32)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(resample_desc(case, x5, x5.shape, NEAREST, [1.0] * 5), [x5])
    assert caught.value.field_violations[0].field.startswith(f"operator_desc.{case}.input_tensor")
    xi = np.zeros((2, 3), np.int32)
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(resample_desc(case, xi, xi.shape, NEAREST, [1.0, 1.0]), [xi])
    assert caught.value.field_violations[0].field.startswith(f"operator_desc.{case}.input_tensor")


def test_resample3_refuses_an_unbounded_antialiasing_filter(client: dmlrpc.Client) -> None:
    x = np.zeros((5000,), np.float32)
    desc = resample_desc("resample3", x, (5000,), LINEAR, [1e-4], rounding_direction=DEC, antialiased=True)
    with pytest.raises(dmlrpc.ResourceExhaustedError):
        client.execute(desc, [x])


@pytest.mark.parametrize("mode", [NEAREST, LINEAR])
def test_resample_extreme_scales_clamp_to_the_edges(client: dmlrpc.Client, mode: int) -> None:
    # A huge scale maps every output near input 0; a tiny one overflows FLOAT32 coordinates to the far edge.
    x = np.array([1, 2, 3], np.float32)
    np.testing.assert_array_equal(run(client, resample_desc("resample1", x, (4,), mode, [3e38]), x), [1, 1, 1, 1])
    np.testing.assert_array_equal(run(client, resample_desc("resample1", x, (4,), mode, [1e-38]), x), [3, 3, 3, 3])
    tiny = resample_desc("resample3", x, (4,), mode, [1e-38], rounding_direction=DEC, antialiased=True)
    if mode == NEAREST:  # antialiasing is for LINEAR only
        np.testing.assert_array_equal(run(client, tiny, x), [3, 3, 3, 3])
    else:
        with pytest.raises(dmlrpc.ResourceExhaustedError):
            client.execute(tiny, [x])
