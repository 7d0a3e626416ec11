"""ROI_ALIGN and ROI_ALIGN1 over the wire: properties against the NumPy reference, edge cases, validation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2
from tests.references import roi_align as ref
from tests.strategies import arrays, broadcast_values, layouts

AVERAGE, MAX = operators_pb2.REDUCE_FUNCTION_AVERAGE, operators_pb2.REDUCE_FUNCTION_MAX
NEAREST, LINEAR = operators_pb2.INTERPOLATION_MODE_NEAREST_NEIGHBOR, operators_pb2.INTERPOLATION_MODE_LINEAR
MESSAGES: dict[str, Any] = {
    "roi_align": operators_pb2.RoiAlignOperatorDesc,
    "roi_align1": operators_pb2.RoiAlign1OperatorDesc,
}
DEFAULTS: dict[str, Any] = {
    "reduction_function": AVERAGE,
    "interpolation_mode": LINEAR,
    "spatial_scale_x": 1.0,
    "spatial_scale_y": 1.0,
    "minimum_samples_per_output": 1,
    "maximum_samples_per_output": 2**32 - 1,
}


def make_desc(case: str, x, rois, ids, out, attrs: dict[str, Any], x_strides=None) -> operators_pb2.OperatorDesc:  # type: ignore[no-untyped-def]
    fields = {
        "input_tensor": tensor_desc(x, x_strides),
        "roi_tensor": tensor_desc(rois),
        "batch_indices_tensor": tensor_desc(ids),
        "output_tensor": tensor_desc(out),
        **DEFAULTS,
        **attrs,
    }
    return operators_pb2.OperatorDesc(**{case: MESSAGES[case](**fields)})


def execute(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray]) -> np.ndarray:
    (out,) = client.execute(desc, inputs)
    assert isinstance(out, np.ndarray)
    return out


@pytest.mark.parametrize("case", ["roi_align", "roi_align1"])
@settings(max_examples=25)
@given(data=st.data())
def test_matches_reference(client: dmlrpc.Client, case: str, data: st.DataObject) -> None:
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
    oob = data.draw(st.sampled_from([0.0, -3.5, 100.0]), label="out of bounds value")
    attrs: dict[str, Any] = {
        "reduction_function": AVERAGE if average else MAX,
        "interpolation_mode": NEAREST if nearest else LINEAR,
        "spatial_scale_x": scale[0],
        "spatial_scale_y": scale[1],
        "out_of_bounds_input_value": oob,
        "minimum_samples_per_output": low,
        "maximum_samples_per_output": high,
    }
    offsets, align = (0.5, -0.5), False
    if case == "roi_align1":
        offsets = (data.draw(st.sampled_from([0.0, 0.5])), data.draw(st.sampled_from([0.0, -0.5])))
        align = data.draw(st.booleans(), label="align corners")
        attrs |= {
            "input_pixel_offset": offsets[0],
            "output_pixel_offset": offsets[1],
            "align_regions_to_corners": align,
        }
    x = data.draw(arrays(dtype, shape))
    layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    x = broadcast_values(x, layout)
    out_shape = (count, shape[1], *out_size)
    desc = make_desc(case, x, rois, ids, (dtype, out_shape), attrs, layout.strides)
    out = execute(client, desc, [x, rois, ids])
    expected = ref.roi_align(
        x,
        rois,
        ids,
        out_size,
        average=average,
        nearest=nearest,
        scale=scale,
        offsets=offsets,
        out_of_bounds=oob,
        samples=(low, high),
        align_corners=align,
    )
    assert out.dtype == dtype and out.shape == out_shape
    tolerance = 2e-2 if dtype == np.float16 else 1e-4
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tolerance, atol=tolerance)


def test_centred_average_matches_mask_rcnn(client: dmlrpc.Client) -> None:
    # A 4x4 ramp, the region [0, 0, 4, 4] pooled to 2x2 with 2x2 samples each: samples at 0.5 + k - 0.5 = k
    # (k = 0..3), so each output averages a 2x2 block of the input.
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    rois = np.array([[0, 0, 4, 4]], np.float32)
    ids = np.zeros(1, np.uint32)
    out = execute(client, make_desc("roi_align", x, rois, ids, (np.float32, (1, 1, 2, 2)), {}), [x, rois, ids])
    np.testing.assert_allclose(out.reshape(2, 2), [[2.5, 4.5], [10.5, 12.5]], rtol=1e-6)


def test_out_of_bounds_value_and_mirrored_regions(client: dmlrpc.Client) -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    ids = np.zeros(1, np.uint32)
    far = np.array([[10, 10, 12, 12]], np.float32)
    attrs = {"out_of_bounds_input_value": -7.0, "reduction_function": MAX}
    out = execute(client, make_desc("roi_align", x, far, ids, (np.float32, (1, 1, 1, 1)), attrs), [x, far, ids])
    assert out.reshape(-1)[0] == -7.0
    # An inverted region reads the same samples in mirrored order.
    forward = np.array([[0, 0, 4, 4]], np.float32)
    backward = np.array([[4, 4, 0, 0]], np.float32)
    attrs = {"minimum_samples_per_output": 2, "maximum_samples_per_output": 2, "interpolation_mode": NEAREST}
    one = execute(client, make_desc("roi_align", x, forward, ids, (np.float32, (1, 1, 2, 2)), attrs), [x, forward, ids])
    two = execute(
        client, make_desc("roi_align", x, backward, ids, (np.float32, (1, 1, 2, 2)), attrs), [x, backward, ids]
    )
    np.testing.assert_array_equal(two, one[:, :, ::-1, ::-1])


def test_huge_region_bounds_the_samples(client: dmlrpc.Client) -> None:
    # 1e6 samples per output element: only the ones near the input are evaluated.
    x = np.ones((1, 1, 2, 2), np.float32)
    rois = np.array([[-1e6, -1e6, 1e6, 1e6]], np.float32)
    ids = np.zeros(1, np.uint32)
    attrs = {"out_of_bounds_input_value": 3.0}
    out = execute(client, make_desc("roi_align", x, rois, ids, (np.float32, (1, 1, 2, 2)), attrs), [x, rois, ids])
    np.testing.assert_allclose(out, 3.0, rtol=1e-5)
    out = execute(
        client,
        make_desc("roi_align", x, rois, ids, (np.float32, (1, 1, 2, 2)), attrs | {"reduction_function": MAX}),
        [x, rois, ids],
    )
    np.testing.assert_array_equal(out, 3.0)


X = np.zeros((2, 1, 4, 4), np.float32)
ROIS = np.array([[0, 0, 2, 2]], np.float32)
IDS = np.zeros(1, np.uint32)


def expect_invalid(
    client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray], field: str
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
        ({"spatial_scale_y": float("inf")}, "spatial_scale_y"),
        ({"minimum_samples_per_output": 0}, "minimum_samples_per_output"),
        ({"minimum_samples_per_output": 3, "maximum_samples_per_output": 2}, "maximum_samples_per_output"),
        ({"input_pixel_offset": float("nan")}, "input_pixel_offset"),
        ({"output_pixel_offset": float("inf")}, "output_pixel_offset"),
    ],
)
def test_attribute_rules(client: dmlrpc.Client, change: dict[str, Any], field: str) -> None:
    desc = make_desc("roi_align1", X, ROIS, IDS, (np.float32, (1, 1, 2, 2)), change)
    expect_invalid(client, desc, [X, ROIS, IDS], f"operator_desc.roi_align1.{field}")


def test_tensor_rules(client: dmlrpc.Client) -> None:
    path = "operator_desc.roi_align"
    out = (np.float32, (1, 1, 2, 2))
    half = ROIS.astype(np.float16)
    expect_invalid(
        client, make_desc("roi_align", X, half, IDS, out, {}), [X, half, IDS], f"{path}.roi_tensor.buffer.data_type"
    )
    expect_invalid(
        client,
        make_desc("roi_align", X, ROIS, IDS, (np.float16, (1, 1, 2, 2)), {}),
        [X, ROIS, IDS],
        f"{path}.output_tensor.buffer.data_type",
    )
    wide = np.zeros((1, 5), np.float32)
    expect_invalid(
        client, make_desc("roi_align", X, wide, IDS, out, {}), [X, wide, IDS], f"{path}.roi_tensor.buffer.sizes"
    )
    stacked = np.zeros((2, 1, 4), np.float32)
    expect_invalid(
        client, make_desc("roi_align", X, stacked, IDS, out, {}), [X, stacked, IDS], f"{path}.roi_tensor.buffer.sizes"
    )
    two = np.zeros(2, np.uint32)
    expect_invalid(
        client,
        make_desc("roi_align", X, ROIS, two, out, {}),
        [X, ROIS, two],
        f"{path}.batch_indices_tensor.buffer.sizes",
    )
    expect_invalid(
        client,
        make_desc("roi_align", X, ROIS, IDS, (np.float32, (1, 2, 2, 2)), {}),
        [X, ROIS, IDS],
        f"{path}.output_tensor.buffer.sizes",
    )
    expect_invalid(
        client,
        make_desc("roi_align", X, ROIS, IDS, (np.float32, (2, 1, 2, 2)), {}),
        [X, ROIS, IDS],
        f"{path}.output_tensor.buffer.sizes",
    )


def test_data_rules(client: dmlrpc.Client) -> None:
    out = (np.float32, (1, 1, 2, 2))
    far = np.array([2], np.uint32)
    expect_invalid(client, make_desc("roi_align", X, ROIS, far, out, {}), [X, ROIS, far], "inputs[2].buffer.data")
    bad = np.array([[0, np.nan, 2, 2]], np.float32)
    expect_invalid(client, make_desc("roi_align", X, bad, IDS, out, {}), [X, bad, IDS], "inputs[1].buffer.data")
