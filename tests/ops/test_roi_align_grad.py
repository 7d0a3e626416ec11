"""ROI_ALIGN_GRAD over the wire: properties against the NumPy reference, the page's example, validation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2
from tests.references import roi_align as forward_ref
from tests.references import roi_align_grad as ref
from tests.strategies import arrays, layouts

AVERAGE, MAX = operators_pb2.REDUCE_FUNCTION_AVERAGE, operators_pb2.REDUCE_FUNCTION_MAX
NEAREST, LINEAR = operators_pb2.INTERPOLATION_MODE_NEAREST_NEIGHBOR, operators_pb2.INTERPOLATION_MODE_LINEAR
PATH = "operator_desc.roi_align_grad"
DEFAULTS: dict[str, Any] = {
    "reduction_function": AVERAGE,
    "interpolation_mode": LINEAR,
    "spatial_scale_x": 1.0,
    "spatial_scale_y": 1.0,
    "minimum_samples_per_output": 1,
    "maximum_samples_per_output": 2**32 - 1,
}


def make_desc(  # type: ignore[no-untyped-def]
    x, dy, rois, ids, out, attrs: dict[str, Any], dy_strides=None, roi_out=None
) -> operators_pb2.OperatorDesc:
    fields: dict[str, Any] = {
        "input_gradient_tensor": tensor_desc(dy, dy_strides),
        "roi_tensor": tensor_desc(rois),
        "batch_indices_tensor": tensor_desc(ids),
        **DEFAULTS,
        **attrs,
    }
    if x is not None:
        fields["input_tensor"] = tensor_desc(x)
    if out is not None:
        fields["output_gradient_tensor"] = tensor_desc(out)
    if roi_out is not None:
        fields["output_roi_gradient_tensor"] = tensor_desc(roi_out)
    return operators_pb2.OperatorDesc(roi_align_grad=operators_pb2.RoiAlignGradOperatorDesc(**fields))


def execute(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray | None]) -> np.ndarray:
    out, roi_out = client.execute(desc, inputs)
    assert isinstance(out, np.ndarray) and roi_out is None
    return out


@settings(max_examples=30)
@given(data=st.data())
def test_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from([np.float32, np.float16]), label="dtype")
    shape = (
        data.draw(st.integers(1, 2)),
        data.draw(st.integers(1, 2)),
        data.draw(st.integers(1, 5)),
        data.draw(st.integers(1, 5)),
    )
    count = data.draw(st.integers(1, 3), label="NumROIs")
    coordinate = st.integers(-8, 24).map(lambda v: v / 4)
    rois = np.array(data.draw(st.lists(coordinate, min_size=4 * count, max_size=4 * count)), dtype).reshape(count, 4)
    rois = rois.reshape(data.draw(st.sampled_from([(count, 4), (1, count, 4), (1, 1, count, 4)])))
    ids = np.array(data.draw(st.lists(st.integers(0, shape[0] - 1), min_size=count, max_size=count)), np.uint32)
    out_size = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    average = data.draw(st.booleans(), label="average")
    nearest = data.draw(st.booleans(), label="nearest")
    scale = (data.draw(st.sampled_from([1.0, 0.5, 2.0])), data.draw(st.sampled_from([1.0, 0.5, 2.0])))
    low = data.draw(st.integers(1, 3), label="minimum samples")
    high = low + data.draw(st.sampled_from([0, 1, 2**31]), label="extra samples")
    offsets = (data.draw(st.sampled_from([0.0, 0.5])), data.draw(st.sampled_from([0.0, -0.5])))
    align = data.draw(st.booleans(), label="align corners")
    attrs: dict[str, Any] = {
        "reduction_function": AVERAGE if average else MAX,
        "interpolation_mode": NEAREST if nearest else LINEAR,
        "spatial_scale_x": scale[0],
        "spatial_scale_y": scale[1],
        "minimum_samples_per_output": low,
        "maximum_samples_per_output": high,
        "input_pixel_offset": offsets[0],
        "output_pixel_offset": offsets[1],
        "align_regions_to_corners": align,
    }
    dy_shape = (count, shape[1], *out_size)
    dy = data.draw(arrays(dtype, dy_shape), label="dy")
    layout = data.draw(layouts(dy_shape, allow_broadcast=False), label="dy layout")
    # MAX picks one sample: distinct input values keep float32 and float64 from choosing differently.
    x = None
    if not average or data.draw(st.booleans(), label="with input"):
        unique = st.floats(-8, 8, width=16 if dtype == np.float16 else 32)
        x = data.draw(hnp.arrays(dtype, shape, elements=unique, unique=True), label="x")
    desc = make_desc(x, dy, rois, ids, (dtype, shape), attrs, layout.strides)
    out = execute(client, desc, [x, dy, rois, ids])
    expected = ref.roi_align_grad(
        dy,
        rois,
        ids,
        shape,
        average=average,
        nearest=nearest,
        x=x,
        scale=scale,
        offsets=offsets,
        samples=(low, high),
        align_corners=align,
    )
    assert out.dtype == dtype and out.shape == shape
    tolerance = 3e-2 if dtype == np.float16 else 1e-4
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tolerance, atol=tolerance)


@settings(max_examples=10)
@given(data=st.data())
def test_average_is_the_forward_transpose(client: dmlrpc.Client, data: st.DataObject) -> None:
    # <ROI_ALIGN1(x), dy> == <x, ROI_ALIGN_GRAD(dy)> with OutOfBoundsInputValue 0 (the forward is then linear).
    shape = (2, 1, data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
    rois = np.array([data.draw(st.lists(st.integers(-4, 20).map(lambda v: v / 4), min_size=4, max_size=4))])
    rois = rois.astype(np.float32)
    ids = np.array([data.draw(st.integers(0, 1))], np.uint32)
    x = np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal(shape).astype(np.float32)
    dy = np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal((1, 1, 2, 3)).astype(np.float32)
    y = forward_ref.roi_align(x, rois, ids, (2, 3), average=True, nearest=False, offsets=(0.5, -0.5))
    dx = execute(
        client,
        make_desc(None, dy, rois, ids, (np.float32, shape), {"input_pixel_offset": 0.5, "output_pixel_offset": -0.5}),
        [None, dy, rois, ids],
    )
    np.testing.assert_allclose(float((dx * x).sum()), float((y * dy).sum()), rtol=1e-4, atol=1e-4)


def test_page_example(client: dmlrpc.Client) -> None:
    # Four 2x2 regions of a 4x4 input to 1x3 outputs, one nearest sample each: the samples read columns 0, 0, 1
    # of each region's first row. The page omits its offsets; an InputPixelOffset of 0.25 puts the sample
    # coordinates (-0.25, 0.42, 1.08; row -0.25) off the .5 ties where rounding conventions differ.
    rois = np.array([[0, 0, 2, 2], [2, 0, 4, 2], [0, 2, 2, 4], [2, 2, 4, 4]], np.float32)
    ids = np.zeros(4, np.uint32)
    dy = np.arange(1, 13, dtype=np.float32).reshape(4, 1, 1, 3)
    attrs = {
        "interpolation_mode": NEAREST,
        "minimum_samples_per_output": 1,
        "maximum_samples_per_output": 1,
        "input_pixel_offset": 0.25,
    }
    out = execute(client, make_desc(None, dy, rois, ids, (np.float32, (1, 1, 4, 4)), attrs), [None, dy, rois, ids])
    expected = [[3, 3, 9, 6], [0, 0, 0, 0], [15, 9, 21, 12], [0, 0, 0, 0]]
    np.testing.assert_array_equal(out.reshape(4, 4), expected)


def test_max_routes_to_the_largest_sample(client: dmlrpc.Client) -> None:
    x = np.array([[[[1, 5], [3, 2]]]], np.float32)
    rois = np.array([[0, 0, 2, 2]], np.float32)
    ids = np.zeros(1, np.uint32)
    dy = np.array([[[[7]]]], np.float32)
    attrs = {"reduction_function": MAX, "interpolation_mode": NEAREST}
    out = execute(client, make_desc(x, dy, rois, ids, (np.float32, x.shape), attrs), [x, dy, rois, ids])
    np.testing.assert_array_equal(out.reshape(2, 2), [[0, 7], [0, 0]])
    # A region wholly outside the input passes no gradient.
    far = np.array([[10, 10, 12, 12]], np.float32)
    out = execute(client, make_desc(x, dy, far, ids, (np.float32, x.shape), attrs), [x, dy, far, ids])
    np.testing.assert_array_equal(out, 0)


X = np.zeros((2, 1, 4, 4), np.float32)
DY = np.zeros((1, 1, 2, 2), np.float32)
ROIS = np.array([[0, 0, 2, 2]], np.float32)
IDS = np.zeros(1, np.uint32)
OUT = (np.float32, (2, 1, 4, 4))


def expect_invalid(
    client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray | None], field: str
) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field == field


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"reduction_function": operators_pb2.REDUCE_FUNCTION_SUM}, "reduction_function"),
        ({"interpolation_mode": 2}, "interpolation_mode"),
        ({"spatial_scale_x": float("nan")}, "spatial_scale_x"),
        ({"minimum_samples_per_output": 0}, "minimum_samples_per_output"),
        ({"minimum_samples_per_output": 3, "maximum_samples_per_output": 2}, "maximum_samples_per_output"),
        ({"input_pixel_offset": float("nan")}, "input_pixel_offset"),
        ({"output_pixel_offset": float("inf")}, "output_pixel_offset"),
    ],
)
def test_attribute_rules(client: dmlrpc.Client, change: dict[str, Any], field: str) -> None:
    expect_invalid(client, make_desc(X, DY, ROIS, IDS, OUT, change), [X, DY, ROIS, IDS], f"{PATH}.{field}")


def test_tensor_rules(client: dmlrpc.Client) -> None:
    expect_invalid(client, make_desc(X, DY, ROIS, IDS, None, {}), [X, DY, ROIS, IDS], f"{PATH}.output_gradient_tensor")
    expect_invalid(
        client,
        make_desc(None, DY, ROIS, IDS, OUT, {"reduction_function": MAX}),
        [None, DY, ROIS, IDS],
        f"{PATH}.input_tensor",
    )
    expect_invalid(
        client,
        make_desc(None, DY, ROIS, IDS, OUT, {}, roi_out=(np.float32, (1, 4))),
        [None, DY, ROIS, IDS],
        f"{PATH}.input_tensor",
    )
    expect_invalid(
        client,
        make_desc(X, DY, ROIS, IDS, OUT, {}, roi_out=(np.float32, (2, 4))),
        [X, DY, ROIS, IDS],
        f"{PATH}.output_roi_gradient_tensor.buffer.sizes",
    )
    half = ROIS.astype(np.float16)
    expect_invalid(
        client, make_desc(X, DY, half, IDS, OUT, {}), [X, DY, half, IDS], f"{PATH}.roi_tensor.buffer.data_type"
    )
    expect_invalid(
        client,
        make_desc(X, DY, ROIS, IDS, (np.float16, X.shape), {}),
        [X, DY, ROIS, IDS],
        f"{PATH}.output_gradient_tensor.buffer.data_type",
    )
    expect_invalid(
        client,
        make_desc(X, DY, ROIS, IDS, (np.float32, (1, 1, 4, 4)), {}),
        [X, DY, ROIS, IDS],
        f"{PATH}.output_gradient_tensor.buffer.sizes",
    )
    wide = np.zeros((2, 1, 2, 2), np.float32)
    expect_invalid(
        client,
        make_desc(X, wide, ROIS, IDS, OUT, {}),
        [X, wide, ROIS, IDS],
        f"{PATH}.input_gradient_tensor.buffer.sizes",
    )
    two = np.zeros(2, np.uint32)
    expect_invalid(
        client, make_desc(X, DY, ROIS, two, OUT, {}), [X, DY, ROIS, two], f"{PATH}.batch_indices_tensor.buffer.sizes"
    )


def test_data_rules(client: dmlrpc.Client) -> None:
    far = np.array([2], np.uint32)
    expect_invalid(client, make_desc(None, DY, ROIS, far, OUT, {}), [None, DY, ROIS, far], "inputs[3].buffer.data")
    bad = np.array([[0, np.nan, 2, 2]], np.float32)
    expect_invalid(client, make_desc(None, DY, bad, IDS, OUT, {}), [None, DY, bad, IDS], "inputs[2].buffer.data")


def test_roi_gradient_is_refused(client: dmlrpc.Client) -> None:
    desc = make_desc(X, DY, ROIS, IDS, OUT, {}, roi_out=(np.float32, (1, 4)))
    with pytest.raises(dmlrpc.UnimplementedError, match="output_roi_gradient_tensor"):
        client.execute(desc, [X, DY, ROIS, IDS])
