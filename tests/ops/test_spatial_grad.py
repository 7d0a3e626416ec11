"""Pooling, resample and slice gradients over the wire: the pages' examples, properties against the NumPy
references, and every documented rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.operators import REGISTRY
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.operators.spatial_grad import distinct_target_groups
from dmlrpc_server.settings import PROVIDERS
from tests.references import pooling as pool_ref
from tests.references import spatial_grad as ref
from tests.strategies import arrays, broadcast_values, layouts, shapes

NEAREST = operators_pb2.INTERPOLATION_MODE_NEAREST_NEIGHBOR
LINEAR = operators_pb2.INTERPOLATION_MODE_LINEAR
INC, DEC = tensor_pb2.AXIS_DIRECTION_INCREASING, tensor_pb2.AXIS_DIRECTION_DECREASING
FL64 = operators_pb2.FEATURE_LEVEL_6_4


def dtypes(case: str, field: str = "input_gradient_tensor") -> list[np.dtype[Any]]:
    table = REGISTRY[case].support_at(FL64)
    assert table is not None
    return sorted((np.dtype(DTYPE_BY_DATA_TYPE[t]) for t in table[field].data_types), key=str)


def run(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray]) -> np.ndarray:
    (out,) = client.execute(desc, inputs)
    assert isinstance(out, np.ndarray)
    return out


def expect_invalid(
    client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray], field: str
) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field == field


def close(out: np.ndarray, expected: np.ndarray, dtype: np.dtype[Any]) -> None:
    assert out.dtype == dtype and out.shape == expected.shape
    tolerance = 1e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tolerance, atol=tolerance)


def avg_desc(dy: Any, dx: Any, attrs: dict[str, Any], strides: dict[str, Any] | None = None) -> Any:
    strides = strides or {}
    return operators_pb2.OperatorDesc(
        average_pooling_grad=operators_pb2.AveragePoolingGradOperatorDesc(
            input_gradient_tensor=tensor_desc(dy, strides.get("dy")),
            output_gradient_tensor=tensor_desc(dx, strides.get("dx")),
            **attrs,
        )
    )


def max_desc(x: Any, dy: Any, dx: Any, attrs: dict[str, Any], strides: dict[str, Any] | None = None) -> Any:
    strides = strides or {}
    return operators_pb2.OperatorDesc(
        max_pooling_grad=operators_pb2.MaxPoolingGradOperatorDesc(
            input_tensor=tensor_desc(x, strides.get("x")),
            input_gradient_tensor=tensor_desc(dy, strides.get("dy")),
            output_gradient_tensor=tensor_desc(dx, strides.get("dx")),
            **attrs,
        )
    )


def resample_desc(case: str, dy: Any, dx: Any, mode: int, scales: Any, **fields: Any) -> Any:
    strides = fields.pop("strides", {})
    message = {
        "resample_grad": operators_pb2.ResampleGradOperatorDesc,
        "resample_grad1": operators_pb2.ResampleGrad1OperatorDesc,
    }
    return operators_pb2.OperatorDesc(
        **{
            case: message[case](
                input_gradient_tensor=tensor_desc(dy, strides.get("dy")),
                output_gradient_tensor=tensor_desc(dx, strides.get("dx")),
                interpolation_mode=mode,
                dimension_count=fields.pop("dimension_count", len(scales)),
                scales=scales,
                input_pixel_offsets=fields.pop("input_pixel_offsets", [0.5] * len(scales)),
                output_pixel_offsets=fields.pop("output_pixel_offsets", [-0.5] * len(scales)),
                **fields,
            )
        }
    )


def slice_desc(dy: Any, dx: Any, offsets: Any, sizes: Any, strides: Any, layout: dict[str, Any] | None = None) -> Any:
    layout = layout or {}
    return operators_pb2.OperatorDesc(
        slice_grad=operators_pb2.SliceGradOperatorDesc(
            input_gradient_tensor=tensor_desc(dy, layout.get("dy")),
            output_gradient_tensor=tensor_desc(dx, layout.get("dx")),
            dimension_count=len(offsets),
            input_window_offsets=offsets,
            input_window_sizes=sizes,
            input_window_strides=strides,
        )
    )


def pool_attrs(s: Any, w: Any, a: Any, b: Any, d: Any = None) -> dict[str, Any]:
    attrs = {"dimension_count": len(s), "strides": s, "window_size": w, "start_padding": a, "end_padding": b}
    return attrs if d is None else attrs | {"dilations": d}


# --- The pages' examples ----------------------------------------------------------------------------------------


def test_average_pooling_grad_page_example(client: dmlrpc.Client) -> None:
    dy = np.array([[[[1, 2], [3, 4]]]], np.float32)
    out = run(client, avg_desc(dy, (np.float32, (1, 1, 3, 3)), pool_attrs([1, 1], [2, 2], [0, 0], [0, 0])), [dy])
    np.testing.assert_array_equal(out, [[[[0.25, 0.75, 0.5], [1, 2.5, 1.5], [0.75, 1.75, 1]]]])


def test_max_pooling_grad_page_example(client: dmlrpc.Client) -> None:
    x = np.array([[[[1, 2, 3], [2, 4, 2], [5, 6, 7]]]], np.float32)
    dy = np.array([[[[1, 2], [4, 5]]]], np.float32)
    attrs = pool_attrs([1, 1], [2, 2], [0, 0], [0, 0], [1, 1])
    out = run(client, max_desc(x, dy, x, attrs), [x, dy])
    np.testing.assert_array_equal(out, [[[[0, 0, 0], [0, 3, 0], [0, 4, 5]]]])


@pytest.mark.parametrize(
    ("case", "fields"),
    [
        # The pages give no offsets; these reproduce their forward example ([[1, 2], [3, 4]] -> [1, 1, 2]).
        ("resample_grad", {"input_pixel_offsets": [0.5] * 4, "output_pixel_offsets": [0.0] * 4}),
        (
            "resample_grad1",
            {"input_pixel_offsets": [0.0] * 4, "output_pixel_offsets": [0.0] * 4, "rounding_direction": DEC},
        ),
    ],
)
def test_resample_grad_page_example(client: dmlrpc.Client, case: str, fields: dict[str, Any]) -> None:
    dy = np.array([[[[4, 5, 6]]]], np.float32)
    desc = resample_desc(case, dy, (np.float32, (1, 1, 2, 2)), NEAREST, [1.0, 1.0, 0.5, 1.5], **fields)
    np.testing.assert_array_equal(run(client, desc, [dy]), [[[[9, 6], [0, 0]]]])


def test_slice_grad_page_example(client: dmlrpc.Client) -> None:
    # a..p as 1..16: the slice [[a, c], [i, k]] with strides 2 from offset 0 in both dimensions.
    dy = np.array([[1, 3], [9, 11]], np.int32)
    out = run(client, slice_desc(dy, (np.int32, (4, 4)), [0, 0], [4, 4], [2, 2]), [dy])
    np.testing.assert_array_equal(out, [[1, 0, 3, 0], [0, 0, 0, 0], [9, 0, 11, 0], [0, 0, 0, 0]])


def test_slice_grad_negative_stride_walks_backward(client: dmlrpc.Client) -> None:
    # SLICE1's second page example ([[14, 16], [6, 8]] from offsets {0, 1}, sizes {4, 3}, strides {-2, 2}).
    dy = np.array([[14, 16], [6, 8]], np.float16)
    out = run(client, slice_desc(dy, (np.float16, (4, 4)), [0, 1], [4, 3], [-2, 2]), [dy])
    np.testing.assert_array_equal(out, [[0, 0, 0, 0], [0, 6, 0, 8], [0, 0, 0, 0], [0, 14, 0, 16]])


# --- Properties against the references --------------------------------------------------------------------------


@st.composite
def pool_geometry(draw: st.DrawFn, rank: int, dilated: bool) -> tuple[Any, ...]:
    spatial = rank - 2
    side = 5 if rank == 4 else 3
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) + tuple(
        draw(st.integers(1, side)) for _ in range(spatial)
    )
    s, w, a, b, d = [], [], [], [], []
    for i in range(spatial):
        dil = draw(st.integers(1, 2)) if dilated else 1
        win = draw(st.integers(1, 3))
        start, end = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        extent = (win - 1) * dil + 1
        if extent > shape[2 + i] + start + end:
            end += extent - (shape[2 + i] + start + end)
        s.append(draw(st.integers(1, 3)))
        w.append(win)
        a.append(start)
        b.append(end)
        d.append(dil)
    return shape, s, w, a, b, d


def laid_out(data: st.DataObject, values: np.ndarray, name: str) -> tuple[np.ndarray, Any]:
    layout = data.draw(layouts(values.shape, allow_broadcast=True), label=f"{name} layout")
    return broadcast_values(values, layout), layout.strides


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_average_pooling_grad_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    shape, s, w, a, b, _ = data.draw(pool_geometry(data.draw(st.sampled_from([4, 5]), label="rank"), False))
    include = data.draw(st.booleans(), label="include_padding")
    dtype = data.draw(st.sampled_from(dtypes("average_pooling_grad")), label="dtype")
    dy_shape = pool_ref.output_sizes(shape, s, w, a, b, [1] * len(s))
    dy, dy_strides = laid_out(data, data.draw(arrays(dtype.type, dy_shape)), "dy")
    dx_strides = data.draw(layouts(shape, allow_broadcast=False), label="dx layout").strides
    desc = avg_desc(
        dy, (dtype, shape), pool_attrs(s, w, a, b) | {"include_padding": include}, {"dy": dy_strides, "dx": dx_strides}
    )
    close(run(client, desc, [dy]), ref.average_pooling_grad(dy, shape, s, w, a, include), dtype)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_max_pooling_grad_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    shape, s, w, a, b, d = data.draw(pool_geometry(4, True))
    dtype = data.draw(st.sampled_from(dtypes("max_pooling_grad")), label="dtype")
    x, x_strides = laid_out(data, data.draw(arrays(dtype.type, shape)), "x")
    dy_shape = pool_ref.output_sizes(shape, s, w, a, b, d)
    dy, dy_strides = laid_out(data, data.draw(arrays(dtype.type, dy_shape)), "dy")
    dx_strides = data.draw(layouts(shape, allow_broadcast=False), label="dx layout").strides
    desc = max_desc(
        x, dy, (dtype, shape), pool_attrs(s, w, a, b, d), {"x": x_strides, "dy": dy_strides, "dx": dx_strides}
    )
    empty = any(
        not any(0 <= o * s[i] - a[i] + k * d[i] < shape[2 + i] for k in range(w[i]))
        for i in range(2)
        for o in range(dy_shape[2 + i])
    )
    if empty:
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            client.execute(desc, [x, dy])
        field = caught.value.field_violations[0].field
        assert field.rsplit(".", 1)[1].split("[")[0] in {"start_padding", "end_padding", "dilations"}
        return
    close(run(client, desc, [x, dy]), ref.max_pooling_grad(x, dy, s, w, a, d), dtype)


SCALES = st.one_of(st.sampled_from([0.25, 0.5, 2 / 3, 1.0, 1.5, 2.0, 3.0]), st.floats(0.25, 4.0, width=32))
OFFSETS = st.one_of(st.sampled_from([-0.5, 0.0, 0.25, 0.5]), st.floats(-1.5, 1.5, width=32))


@pytest.mark.parametrize("case", ["resample_grad", "resample_grad1"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_resample_grad_matches_reference(client: dmlrpc.Client, case: str, data: st.DataObject) -> None:
    rank = 4 if case == "resample_grad" else data.draw(st.integers(1, 4), label="rank")
    dx_shape = data.draw(shapes(rank, rank, max_side=4), label="dx shape")
    dy_shape = data.draw(shapes(rank, rank, max_side=4), label="dy shape")
    scales = [data.draw(SCALES, label="scale") for _ in range(rank)]
    input_offsets = [data.draw(OFFSETS, label="input offset") for _ in range(rank)]
    output_offsets = [data.draw(OFFSETS, label="output offset") for _ in range(rank)]
    mode = data.draw(st.sampled_from([NEAREST, LINEAR]), label="mode")
    fields: dict[str, Any] = {"input_pixel_offsets": input_offsets, "output_pixel_offsets": output_offsets}
    rounding = "nearest"
    if case == "resample_grad1":
        fields["rounding_direction"] = data.draw(st.sampled_from([INC, DEC]), label="rounding")
        rounding = "ceil" if fields["rounding_direction"] == INC else "floor"
    dtype = data.draw(st.sampled_from(dtypes(case)), label="dtype")
    dy, dy_strides = laid_out(data, data.draw(arrays(dtype.type, dy_shape)), "dy")
    fields["strides"] = {"dy": dy_strides, "dx": data.draw(layouts(dx_shape, allow_broadcast=False)).strides}
    desc = resample_desc(case, dy, (dtype, dx_shape), mode, scales, **fields)
    expected = ref.resample_grad(
        dy, dx_shape, scales, input_offsets, output_offsets, linear=mode == LINEAR, rounding=rounding
    )
    out = run(client, desc, [dy])
    assert out.dtype == dtype and out.shape == expected.shape
    tolerance = 1e-2 if dtype == np.float16 else 1e-4
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tolerance, atol=tolerance)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_slice_grad_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    shape = data.draw(shapes(), label="dx shape")
    offsets, sizes, strides, dy_shape = [], [], [], []
    for n in shape:
        stride = data.draw(st.integers(-3, 3).filter(lambda v: v != 0), label="stride")
        offset = data.draw(st.integers(0, n - 1), label="offset")
        size = data.draw(st.integers(1, n - offset), label="size")
        offsets.append(offset)
        sizes.append(size)
        strides.append(stride)
        dy_shape.append(data.draw(st.integers(1, 1 + (size - 1) // abs(stride)), label="count"))
    dtype = data.draw(st.sampled_from(dtypes("slice_grad")), label="dtype")
    dy, dy_strides = laid_out(data, data.draw(arrays(dtype.type, tuple(dy_shape))), "dy")
    dx_strides = data.draw(layouts(shape, allow_broadcast=False), label="dx layout").strides
    desc = slice_desc(dy, (dtype, shape), offsets, sizes, strides, {"dy": dy_strides, "dx": dx_strides})
    out = run(client, desc, [dy])
    assert out.dtype == dtype and out.shape == shape
    np.testing.assert_array_equal(out, ref.slice_grad(dy, shape, offsets, sizes, strides))


# --- Validation: one broken rule each ---------------------------------------------------------------------------

DY = np.zeros((1, 2, 3, 3), np.float32)
X4 = np.zeros((1, 2, 4, 4), np.float32)
GOOD = pool_attrs([1, 1], [2, 2], [0, 0], [0, 0])


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"dimension_count": 3}, "dimension_count"),
        ({"strides": [1]}, "strides"),
        ({"window_size": [2, 2, 2]}, "window_size"),
        ({"start_padding": [0]}, "start_padding"),
        ({"end_padding": []}, "end_padding"),
        ({"strides": [0, 1]}, "strides[0]"),
        ({"window_size": [2, 0]}, "window_size[1]"),
        ({"window_size": [5, 2]}, "window_size[0]"),
    ],
)
def test_average_pooling_grad_attribute_rules(client: dmlrpc.Client, change: dict[str, Any], field: str) -> None:
    desc = avg_desc(DY, (np.float32, X4.shape), GOOD | change)
    expect_invalid(client, desc, [DY], f"operator_desc.average_pooling_grad.{field}")


def test_average_pooling_grad_tensor_rules(client: dmlrpc.Client) -> None:
    path = "operator_desc.average_pooling_grad"
    expect_invalid(
        client, avg_desc(DY, (np.float16, X4.shape), GOOD), [DY], f"{path}.output_gradient_tensor.buffer.data_type"
    )
    # The input gradient has the pooled sizes of the output gradient: 4x4 pooled by 2x2 is 3x3.
    wrong = np.zeros((1, 2, 3, 2), np.float32)
    expect_invalid(
        client, avg_desc(wrong, (np.float32, X4.shape), GOOD), [wrong], f"{path}.input_gradient_tensor.buffer.sizes"
    )
    wrong = np.zeros((1, 1, 3, 3), np.float32)
    expect_invalid(
        client, avg_desc(wrong, (np.float32, X4.shape), GOOD), [wrong], f"{path}.input_gradient_tensor.buffer.sizes"
    )
    # Same DimensionCount: a 5-D output gradient against a 4-D input gradient.
    desc = avg_desc(
        DY,
        (np.float32, (1, 2, 4, 4, 1)),
        GOOD
        | {
            "dimension_count": 3,
            "strides": [1, 1, 1],
            "window_size": [2, 2, 1],
            "start_padding": [0, 0, 0],
            "end_padding": [0, 0, 0],
        },
    )
    expect_invalid(client, desc, [DY], f"{path}.input_gradient_tensor.buffer.sizes")
    six = np.zeros((1, 2, 3, 3, 1, 1), np.float32)
    expect_invalid(
        client,
        avg_desc(six, (np.float32, (1, 2, 4, 4, 1, 1)), GOOD),
        [six],
        f"{path}.input_gradient_tensor.buffer.sizes",
    )


def test_average_pooling_grad_window_in_padding_spreads_nothing(client: dmlrpc.Client) -> None:
    # The last window lies entirely in the end padding: its gradient reaches no element (the forward refuses it
    # without IncludePadding, its average being undefined; the gradient is defined).
    dy = np.array([[[[1, 2, 4]]]], np.float32)
    attrs = pool_attrs([1, 1], [1, 1], [0, 0], [0, 1])
    for include in (False, True):
        out = run(client, avg_desc(dy, (np.float32, (1, 1, 1, 2)), attrs | {"include_padding": include}), [dy])
        np.testing.assert_array_equal(out, [[[[1, 2]]]])


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"dimension_count": 3}, "dimension_count"),
        ({"dilations": [1]}, "dilations"),
        ({"dilations": [1, 0]}, "dilations[1]"),
        ({"window_size": [2, 5]}, "window_size[1]"),
        ({"window_size": [1, 1], "start_padding": [1, 0]}, "input_gradient_tensor.buffer.sizes"),
    ],
)
def test_max_pooling_grad_attribute_rules(client: dmlrpc.Client, change: dict[str, Any], field: str) -> None:
    desc = max_desc(X4, DY, X4, GOOD | {"dilations": [1, 1]} | change)
    expect_invalid(client, desc, [X4, DY], f"operator_desc.max_pooling_grad.{field}")


def test_max_pooling_grad_tensor_rules(client: dmlrpc.Client) -> None:
    path = "operator_desc.max_pooling_grad"
    attrs = GOOD | {"dilations": [1, 1]}
    half = DY.astype(np.float16)
    expect_invalid(client, max_desc(X4, half, X4, attrs), [X4, half], f"{path}.input_gradient_tensor.buffer.data_type")
    expect_invalid(
        client,
        max_desc(X4, DY, (np.float16, X4.shape), attrs),
        [X4, DY],
        f"{path}.output_gradient_tensor.buffer.data_type",
    )
    expect_invalid(
        client,
        max_desc(X4, DY, (np.float32, (1, 2, 4, 5)), attrs),
        [X4, DY],
        f"{path}.output_gradient_tensor.buffer.sizes",
    )
    small = np.zeros((1, 2, 2, 2), np.float32)
    expect_invalid(client, max_desc(X4, small, X4, attrs), [X4, small], f"{path}.input_gradient_tensor.buffer.sizes")
    # A window entirely in the padding has no maximum to take its gradient.
    padded = pool_attrs([1, 1], [1, 1], [1, 0], [0, 0], [1, 1])
    tall = np.zeros((1, 2, 5, 4), np.float32)
    expect_invalid(client, max_desc(X4, tall, X4, padded), [X4, tall], f"{path}.start_padding[0]")


def test_max_pooling_grad_sums_shared_winners_and_breaks_ties_first(client: dmlrpc.Client) -> None:
    # Every window of the 1x3 row [5, 5, 5] (window 2, stride 1) ties; the first element wins each window it is in.
    x = np.array([[[[5, 5, 5]]]], np.float16)
    dy = np.array([[[[1.5, 2]]]], np.float16)
    attrs = pool_attrs([1, 1], [1, 2], [0, 0], [0, 0], [1, 1])
    np.testing.assert_array_equal(run(client, max_desc(x, dy, x, attrs), [x, dy]), [[[[1.5, 2, 0]]]])


@pytest.mark.parametrize("case", ["resample_grad", "resample_grad1"])
def test_resample_grad_rules(client: dmlrpc.Client, case: str) -> None:
    dy = np.zeros((1, 1, 4, 4), np.float32)
    out = (np.float32, (1, 1, 2, 2))
    path = f"operator_desc.{case}"
    scales = [1.0, 1.0, 2.0, 2.0]
    expect_invalid(
        client,
        resample_desc(case, dy, (np.float16, (1, 1, 2, 2)), LINEAR, scales),
        [dy],
        f"{path}.output_gradient_tensor.buffer.data_type",
    )
    if case == "resample_grad1":
        expect_invalid(
            client,
            resample_desc(case, dy, (np.float32, (1, 2, 2)), LINEAR, scales),
            [dy],
            f"{path}.output_gradient_tensor.buffer.sizes",
        )
        expect_invalid(
            client,
            resample_desc(case, dy, out, LINEAR, scales, rounding_direction=2),
            [dy],
            f"{path}.rounding_direction",
        )
    expect_invalid(client, resample_desc(case, dy, out, 7, scales), [dy], f"{path}.interpolation_mode")
    expect_invalid(
        client, resample_desc(case, dy, out, LINEAR, scales, dimension_count=3), [dy], f"{path}.dimension_count"
    )
    expect_invalid(client, resample_desc(case, dy, out, LINEAR, scales[:3], dimension_count=4), [dy], f"{path}.scales")
    expect_invalid(client, resample_desc(case, dy, out, LINEAR, [1.0, 1.0, 0.0, 2.0]), [dy], f"{path}.scales[2]")
    expect_invalid(
        client, resample_desc(case, dy, out, LINEAR, [1.0, 1.0, float("inf"), 2.0]), [dy], f"{path}.scales[2]"
    )
    expect_invalid(
        client,
        resample_desc(case, dy, out, LINEAR, scales, input_pixel_offsets=[0.5] * 3),
        [dy],
        f"{path}.input_pixel_offsets",
    )
    expect_invalid(
        client,
        resample_desc(case, dy, out, LINEAR, scales, output_pixel_offsets=[0.0, 0.0, 0.0, float("nan")]),
        [dy],
        f"{path}.output_pixel_offsets[3]",
    )


def test_resample_grad_is_4d_only_before_resample_grad1(client: dmlrpc.Client) -> None:
    dy = np.zeros((4, 4), np.float32)
    desc = resample_desc("resample_grad", dy, (np.float32, (2, 2)), LINEAR, [2.0, 2.0])
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, [dy])
    assert caught.value.field_violations[0].field.startswith("operator_desc.resample_grad.input_gradient_tensor")
    (out,) = client.execute(resample_desc("resample_grad1", dy, (np.float32, (2, 2)), LINEAR, [2.0, 2.0]), [dy])
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)


def test_slice_grad_rules(client: dmlrpc.Client) -> None:
    dy = np.zeros((2, 2), np.int8)
    out = (np.int8, (4, 4))
    path = "operator_desc.slice_grad"
    expect_invalid(
        client,
        slice_desc(dy, (np.uint8, (4, 4)), [0, 0], [4, 4], [2, 2]),
        [dy],
        f"{path}.input_gradient_tensor.buffer.data_type",
    )
    expect_invalid(
        client,
        slice_desc(dy, (np.int8, (4, 4, 1)), [0, 0, 0], [4, 4, 1], [2, 2, 1]),
        [dy],
        f"{path}.input_gradient_tensor.buffer.sizes",
    )
    expect_invalid(client, slice_desc(dy, out, [0, 0, 0], [4, 4], [2, 2]), [dy], f"{path}.dimension_count")
    expect_invalid(client, slice_desc(dy, out, [0, 0], [4, 4], [2, 0]), [dy], f"{path}.input_window_strides[1]")
    expect_invalid(client, slice_desc(dy, out, [0, 0], [4, 0], [2, 2]), [dy], f"{path}.input_window_sizes[1]")
    expect_invalid(client, slice_desc(dy, out, [4, 0], [1, 4], [2, 2]), [dy], f"{path}.input_window_offsets[0]")
    expect_invalid(client, slice_desc(dy, out, [1, 0], [4, 4], [2, 2]), [dy], f"{path}.input_window_sizes[0]")
    # Two elements along a window of 3 with stride 2 fit (1 + 2 / 2 = 2); along a window of 2 they do not.
    expect_invalid(
        client, slice_desc(dy, out, [0, 0], [2, 4], [2, 2]), [dy], f"{path}.input_gradient_tensor.buffer.sizes"
    )


# --- Each gradient is the transpose of this server's forward operator: <forward(x), dy> = <x, grad(dy)> -----------


@pytest.mark.parametrize(("case", "forward"), [("resample_grad", "resample1"), ("resample_grad1", "resample2")])
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_resample_grad_is_the_forward_transposed(
    client: dmlrpc.Client, case: str, forward: str, data: st.DataObject
) -> None:
    x_shape = data.draw(shapes(4, 4, max_side=4), label="x shape")
    y_shape = data.draw(shapes(4, 4, max_side=4), label="y shape")
    fields: dict[str, Any] = {
        "interpolation_mode": data.draw(st.sampled_from([NEAREST, LINEAR]), label="mode"),
        "dimension_count": 4,
        "scales": [data.draw(SCALES, label="scale") for _ in range(4)],
        "input_pixel_offsets": [data.draw(OFFSETS, label="input offset") for _ in range(4)],
        "output_pixel_offsets": [data.draw(OFFSETS, label="output offset") for _ in range(4)],
    }
    if case == "resample_grad1":
        fields["rounding_direction"] = data.draw(st.sampled_from([INC, DEC]), label="rounding")
    x = data.draw(arrays(np.float32, x_shape), label="x")
    dy = data.draw(arrays(np.float32, y_shape), label="dy")
    message = {"resample1": operators_pb2.Resample1OperatorDesc, "resample2": operators_pb2.Resample2OperatorDesc}
    y = run(
        client,
        operators_pb2.OperatorDesc(
            **{forward: message[forward](input_tensor=tensor_desc(x), output_tensor=tensor_desc(dy), **fields)}
        ),
        [x],
    )
    fields.pop("dimension_count")
    dx = run(client, resample_desc(case, dy, x, fields.pop("interpolation_mode"), fields.pop("scales"), **fields), [dy])
    forward_pairing = float(np.sum(y.astype(np.float64) * dy))
    np.testing.assert_allclose(float(np.sum(x.astype(np.float64) * dx)), forward_pairing, rtol=1e-4, atol=1e-3)


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_average_pooling_grad_is_the_forward_transposed(client: dmlrpc.Client, data: st.DataObject) -> None:
    shape, s, w, a, b, _ = data.draw(pool_geometry(4, False))
    attrs = pool_attrs(s, w, a, b) | {"include_padding": True}
    x = data.draw(arrays(np.float32, shape), label="x")
    dy = data.draw(arrays(np.float32, pool_ref.output_sizes(shape, s, w, a, b, [1, 1])), label="dy")
    forward = operators_pb2.AveragePoolingOperatorDesc(
        input_tensor=tensor_desc(x), output_tensor=tensor_desc(dy), **attrs
    )
    y = run(client, operators_pb2.OperatorDesc(average_pooling=forward), [x])
    dx = run(client, avg_desc(dy, x, attrs), [dy])
    forward_pairing = float(np.sum(y.astype(np.float64) * dy))
    np.testing.assert_allclose(float(np.sum(x.astype(np.float64) * dx)), forward_pairing, rtol=1e-4, atol=1e-3)


def test_gradients_compose_in_a_graph(client: dmlrpc.Client) -> None:
    # A slice and its gradient, and a max pooling's gradient fed its own input and output, as one compiled graph.
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4) % 5
    attrs = pool_attrs([1, 1], [2, 2], [0, 0], [0, 0], [1, 1])
    window = ([0, 0, 0, 1], [1, 2, 4, 3], [1, 1, 2, 2])
    slice1 = operators_pb2.OperatorDesc(
        slice1=operators_pb2.Slice1OperatorDesc(
            input_tensor=tensor_desc(x),
            output_tensor=tensor_desc((np.float32, (1, 2, 2, 2))),
            dimension_count=4,
            input_window_offsets=window[0],
            input_window_sizes=window[1],
            input_window_strides=window[2],
        )
    )
    pooled = (np.float32, (1, 2, 3, 3))
    max_pooling2 = operators_pb2.OperatorDesc(
        max_pooling2=operators_pb2.MaxPooling2OperatorDesc(
            input_tensor=tensor_desc(x), output_tensor=tensor_desc(pooled), **attrs
        )
    )
    g = dmlrpc.Graph()
    source = g.input(np.float32, x.shape)
    (sliced,) = g.node(slice1, [source])
    (spread,) = g.node(slice_desc((np.float32, (1, 2, 2, 2)), x, *window), [sliced])
    (maxima,) = g.node(max_pooling2, [source])
    (routed,) = g.node(max_desc(x, pooled, x, attrs), [source, maxima])
    g.output(spread, routed)
    with client.compile(g) as op:
        got = [np.asarray(value) for value in op(x)]
    expected_slice = ref.slice_grad(run(client, slice1, [x]), x.shape, *window)
    np.testing.assert_array_equal(got[0], expected_slice)
    y = client.execute(max_pooling2, [x])[0]  # the unset optional indices come back as None
    assert isinstance(y, np.ndarray)
    np.testing.assert_array_equal(got[1], ref.max_pooling_grad(x, y, *attrs_of(attrs)))


def attrs_of(attrs: dict[str, Any]) -> tuple[Any, ...]:
    return attrs["strides"], attrs["window_size"], attrs["start_padding"], attrs["dilations"]


# --- DirectML's lowering (no ScatterND 'add' there), run on this machine's CPU ------------------------------------


def directml_lowering(desc: operators_pb2.OperatorDesc, dy: np.ndarray) -> tuple[np.ndarray, set[str]]:
    """The output of the server's DirectML lowering of ``desc`` run by ONNX Runtime's CPU provider on ``dy``
    (contiguous), and the reductions of its ScatterND nodes."""
    case = desc.WhichOneof("desc")
    assert case is not None
    limits = Limits(max_tensor_bytes=1 << 30, max_request_bytes=1 << 30, max_message_bytes=1 << 30)
    plan = REGISTRY[case].plan(getattr(desc, case), feature_level=FL64, limits=limits, provider=PROVIDERS["directml"])
    reductions = {
        next((a.s.decode() for a in node.attribute if a.name == "reduction"), "none")
        for node in plan.model.graph.node
        if node.op_type == "ScatterND"
    }
    session = ort.InferenceSession(plan.model.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {"gradient": dy})
    return out, reductions


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_directml_average_pooling_grad_sums_in_groups_of_distinct_targets(data: st.DataObject) -> None:
    shape, s, w, a, b, _ = data.draw(pool_geometry(4, False))
    include = data.draw(st.booleans(), label="include_padding")
    dy = data.draw(arrays(np.float32, pool_ref.output_sizes(shape, s, w, a, b, [1, 1])))
    desc = avg_desc(dy, (np.float32, shape), pool_attrs(s, w, a, b) | {"include_padding": include})
    out, reductions = directml_lowering(desc, dy)
    close(out, ref.average_pooling_grad(dy, shape, s, w, a, include), np.dtype(np.float32))
    assert "add" not in reductions  # windows overlap at most a few times along a dimension


@pytest.mark.parametrize("case", ["resample_grad", "resample_grad1"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_directml_resample_grad_sums_in_groups_of_distinct_targets(case: str, data: st.DataObject) -> None:
    dx_shape = data.draw(shapes(4, 4, max_side=4), label="dx shape")
    dy_shape = data.draw(shapes(4, 4, max_side=4), label="dy shape")
    scales = [data.draw(SCALES, label="scale") for _ in range(4)]
    mode = data.draw(st.sampled_from([NEAREST, LINEAR]), label="mode")
    dy = data.draw(arrays(np.float32, dy_shape))
    fields, rounding = {}, "nearest"
    if case == "resample_grad1":
        fields["rounding_direction"] = data.draw(st.sampled_from([INC, DEC]), label="rounding")
        rounding = "ceil" if fields["rounding_direction"] == INC else "floor"
    desc = resample_desc(case, dy, (np.float32, dx_shape), mode, scales, **fields)
    expected = ref.resample_grad(dy, dx_shape, scales, [0.5] * 4, [-0.5] * 4, linear=mode == LINEAR, rounding=rounding)
    out, reductions = directml_lowering(desc, dy)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    assert "add" not in reductions


def test_directml_grouped_scatter_keeps_an_infinite_gradient_to_its_own_targets() -> None:
    # Overlapping windows (stride 1, window 2): three groups' sums; an infinity reaches only its window.
    dy = np.zeros((1, 1, 3, 3), np.float32)
    dy[0, 0, 0, 0] = np.inf
    desc = avg_desc(dy, (np.float32, (1, 1, 4, 4)), pool_attrs([1, 1], [2, 2], [0, 0], [0, 0]))
    out, reductions = directml_lowering(desc, dy)
    assert reductions == {"none"}
    assert np.isinf(out[0, 0, :2, :2]).all()
    assert np.isfinite(out[0, 0]).sum() == 12 and not np.isnan(out).any()


def test_distinct_target_groups_never_repeat_a_target() -> None:
    targets = np.array([3, 1, 3, 3, 0, 1])
    groups = distinct_target_groups(targets)
    assert [list(group) for group in groups] == [[0, 1, 4], [2, 5], [3]]
    assert distinct_target_groups(np.array([], np.int64)) == []


def test_directml_resample_grad_past_the_group_limit_keeps_the_scatter_add() -> None:
    # Upsampled 20 times along one dimension: 20 forward outputs read each input element, more groups than allowed.
    dy = np.arange(40, dtype=np.float32).reshape(1, 1, 2, 20)
    desc = resample_desc("resample_grad", dy, (np.float32, (1, 1, 2, 1)), NEAREST, [1.0, 1.0, 1.0, 20.0])
    out, reductions = directml_lowering(desc, dy)
    assert "add" in reductions
    np.testing.assert_allclose(out, dy.sum(axis=3, keepdims=True))
