"""Pooling operators over the wire: properties against the NumPy references, the page example, validation."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators import REGISTRY
from tests.references import pooling as ref
from tests.strategies import arrays, broadcast_values, layouts

FL64 = operators_pb2.FEATURE_LEVEL_6_4

MESSAGES: dict[str, Any] = {
    "average_pooling": operators_pb2.AveragePoolingOperatorDesc,
    "average_pooling1": operators_pb2.AveragePooling1OperatorDesc,
    "max_pooling": operators_pb2.MaxPoolingOperatorDesc,
    "max_pooling1": operators_pb2.MaxPooling1OperatorDesc,
    "max_pooling2": operators_pb2.MaxPooling2OperatorDesc,
    "lp_pooling": operators_pb2.LpPoolingOperatorDesc,
    "lp_pooling1": operators_pb2.LpPooling1OperatorDesc,
}
DILATED = {"average_pooling1", "max_pooling2", "lp_pooling1"}


def execute(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs, each an array (an unset optional output is None; callers do not read it)."""
    outputs = client.execute(desc, inputs)
    assert all(output is None or isinstance(output, np.ndarray) for output in outputs)
    return cast(list[np.ndarray], outputs)


def dtypes(case: str, field: str = "input_tensor") -> list[np.dtype[Any]]:
    table = REGISTRY[case].support_at(FL64)
    assert table is not None
    return sorted((np.dtype(DTYPE_BY_DATA_TYPE[t]) for t in table[field].data_types), key=str)


def pool_desc(  # type: ignore[no-untyped-def]
    case: str,
    x,
    out,
    attrs: dict[str, Any],
    indices=None,
    strides: dict[str, Any] | None = None,
) -> operators_pb2.OperatorDesc:
    strides = strides or {}
    fields: dict[str, Any] = {
        "input_tensor": tensor_desc(x, strides.get("input")),
        "output_tensor": tensor_desc(out, strides.get("output")),
        **attrs,
    }
    if indices is not None:
        fields["output_indices_tensor"] = tensor_desc(indices, strides.get("indices"))
    return operators_pb2.OperatorDesc(**{case: MESSAGES[case](**fields)})


def has_empty_window(x_shape, s, w, a, b, d) -> bool:  # type: ignore[no-untyped-def]
    out = ref.output_sizes(x_shape, s, w, a, b, d)
    for i in range(len(s)):
        for o in range(out[2 + i]):
            if not any(0 <= o * s[i] - a[i] + k * d[i] < x_shape[2 + i] for k in range(w[i])):
                return True
    return False


@st.composite
def pool_cases(draw: st.DrawFn, case: str):  # type: ignore[no-untyped-def]
    rank = draw(st.sampled_from([4, 5]), label="rank")
    spatial = rank - 2
    side = 5 if rank == 4 else 3
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3))) + tuple(
        draw(st.integers(1, side)) for _ in range(spatial)
    )
    s, w, a, b, d = [], [], [], [], []
    for i in range(spatial):
        dil = draw(st.integers(1, 2)) if case in DILATED else 1
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
    dtype = draw(st.sampled_from(dtypes(case)), label="dtype")
    x = draw(arrays(dtype.type, shape))
    return x, s, w, a, b, d


def attributes(case: str, s, w, a, b, d) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    attrs: dict[str, Any] = {
        "dimension_count": len(s),
        "strides": s,
        "window_size": w,
        "start_padding": a,
        "end_padding": b,
    }
    if case in DILATED:
        attrs["dilations"] = d
    return attrs


def draw_layouts(data: st.DataObject, x: np.ndarray, out_shape, with_indices: bool):  # type: ignore[no-untyped-def]
    in_layout = data.draw(layouts(x.shape, allow_broadcast=True), label="input layout")
    strides = {
        "input": in_layout.strides,
        "output": data.draw(layouts(out_shape, allow_broadcast=False), label="output layout").strides,
    }
    if with_indices:
        strides["indices"] = data.draw(layouts(out_shape, allow_broadcast=False), label="indices layout").strides
    return broadcast_values(x, in_layout), strides


def check_floats(out: np.ndarray, expected: np.ndarray, dtype: np.dtype[Any]) -> None:
    assert out.dtype == dtype and out.shape == expected.shape
    tolerance = 1e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("case", ["max_pooling", "max_pooling1", "max_pooling2"])
@settings(max_examples=25)
@given(data=st.data())
def test_max_matches_reference(client: dmlrpc.Client, case: str, data: st.DataObject) -> None:
    x, s, w, a, b, d = data.draw(pool_cases(case))
    out_shape = ref.output_sizes(x.shape, s, w, a, b, d)
    index_dtype = None
    if case != "max_pooling" and data.draw(st.booleans(), label="with indices"):
        index_dtype = data.draw(st.sampled_from(dtypes(case, "output_indices_tensor")), label="index dtype")
    x, strides = draw_layouts(data, x, out_shape, index_dtype is not None)
    indices_spec = (index_dtype, out_shape) if index_dtype is not None else None
    desc = pool_desc(case, x, (x.dtype, out_shape), attributes(case, s, w, a, b, d), indices_spec, strides)
    if has_empty_window(x.shape, s, w, a, b, d):
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            client.execute(desc, [x])
        assert caught.value.field_violations[0].field.rsplit(".", 1)[1].split("[")[0] in {
            "start_padding",
            "end_padding",
            "dilations",
        }
        return
    values, indices = ref.max_pooling(x, s, w, a, b, d)
    outputs = execute(client, desc, [x])
    assert outputs[0].dtype == x.dtype
    np.testing.assert_array_equal(outputs[0], values)
    if index_dtype is not None:
        assert outputs[1].dtype == index_dtype
        np.testing.assert_array_equal(outputs[1], indices)


@pytest.mark.parametrize("case", ["average_pooling", "average_pooling1"])
@settings(max_examples=25)
@given(data=st.data())
def test_average_matches_reference(client: dmlrpc.Client, case: str, data: st.DataObject) -> None:
    x, s, w, a, b, d = data.draw(pool_cases(case))
    include = data.draw(st.booleans(), label="include_padding")
    out_shape = ref.output_sizes(x.shape, s, w, a, b, d)
    x, strides = draw_layouts(data, x, out_shape, False)
    attrs = attributes(case, s, w, a, b, d) | {"include_padding": include}
    desc = pool_desc(case, x, (x.dtype, out_shape), attrs, strides=strides)
    if not include and has_empty_window(x.shape, s, w, a, b, d):
        with pytest.raises(dmlrpc.InvalidArgumentError):
            client.execute(desc, [x])
        return
    (out,) = execute(client, desc, [x])
    check_floats(out, ref.average_pooling(x, s, w, a, b, include, d), x.dtype)


@pytest.mark.parametrize("case", ["lp_pooling", "lp_pooling1"])
@settings(max_examples=25)
@given(data=st.data())
def test_lp_matches_reference(client: dmlrpc.Client, case: str, data: st.DataObject) -> None:
    x, s, w, a, b, d = data.draw(pool_cases(case))
    p = data.draw(st.integers(1, 3), label="p")
    out_shape = ref.output_sizes(x.shape, s, w, a, b, d)
    x, strides = draw_layouts(data, x, out_shape, False)
    desc = pool_desc(case, x, (x.dtype, out_shape), attributes(case, s, w, a, b, d) | {"p": p}, strides=strides)
    (out,) = execute(client, desc, [x])
    expected = ref.lp_pooling(x, s, w, a, b, p, d)
    assert out.dtype == x.dtype and out.shape == expected.shape
    tolerance = 1e-2 if x.dtype == np.float16 else 1e-4
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tolerance, atol=tolerance)


def test_max_pooling1_page_example(client: dmlrpc.Client) -> None:
    # The 2020 page's example: rows [3,5,7,1] and [9,4,2,8], a 3-wide window along rows, stride 1.
    x = np.array([[[[3, 5, 7, 1], [9, 4, 2, 8]]]], np.float32)
    attrs = {"dimension_count": 2, "strides": [1, 1], "window_size": [1, 3], "start_padding": [0, 0]}
    attrs["end_padding"] = [0, 0]
    desc = pool_desc("max_pooling1", x, (np.float32, (1, 1, 2, 2)), attrs, (np.uint32, (1, 1, 2, 2)))
    values, indices = execute(client, desc, [x])
    np.testing.assert_array_equal(values, [[[[7, 7], [9, 8]]]])
    np.testing.assert_array_equal(indices, [[[[2, 2], [4, 7]]]])


def test_max_pooling_uint64_extremes(client: dmlrpc.Client) -> None:
    x = np.array([[[[0, 2**64 - 1, 2**63, 2**63 - 1]]]], np.uint64)
    attrs = {"dimension_count": 2, "strides": [1, 1], "window_size": [1, 2], "start_padding": [0, 0]}
    attrs["end_padding"] = [0, 0]
    desc = pool_desc(
        "max_pooling2", x, (np.uint64, (1, 1, 1, 3)), attrs | {"dilations": [1, 1]}, (np.uint64, (1, 1, 1, 3))
    )
    values, indices = execute(client, desc, [x])
    np.testing.assert_array_equal(values, np.array([[[[2**64 - 1, 2**64 - 1, 2**63]]]], np.uint64))
    np.testing.assert_array_equal(indices, [[[[1, 1, 2]]]])


def test_max_pooling_ties_pick_first_in_row_major_order(client: dmlrpc.Client) -> None:
    x = np.array([[[[1, 5], [5, 5]]], [[[5, 1], [1, 1]]]], np.int8)
    attrs = {"dimension_count": 2, "strides": [1, 1], "window_size": [2, 2], "start_padding": [0, 0]}
    attrs["end_padding"] = [0, 0]
    desc = pool_desc("max_pooling1", x, (np.int8, (2, 1, 1, 1)), attrs, (np.uint32, (2, 1, 1, 1)))
    _, indices = execute(client, desc, [x])
    np.testing.assert_array_equal(indices.reshape(-1), [1, 4])


@settings(max_examples=20)
@given(data=st.data())
def test_max_unpooling_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes("max_unpooling")), label="dtype")
    index_dtype = data.draw(st.sampled_from(dtypes("max_unpooling", "indices_tensor")), label="index dtype")
    shape = tuple(data.draw(st.integers(1, 3)) for _ in range(4))
    out_shape = tuple(data.draw(st.integers(1, 4)) for _ in range(4))
    total = int(np.prod(out_shape))
    count = int(np.prod(shape))
    x = data.draw(arrays(dtype.type, shape))
    unique = data.draw(st.booleans(), label="unique targets") and count <= total
    if unique:
        targets = data.draw(st.permutations(range(total)))[:count]
    else:
        targets = data.draw(st.lists(st.integers(0, total), min_size=count, max_size=count))
    indices = np.array(targets, index_dtype).reshape(shape)
    x_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    x = broadcast_values(x, x_layout)
    desc = operators_pb2.OperatorDesc(
        max_unpooling=operators_pb2.MaxUnpoolingOperatorDesc(
            input_tensor=tensor_desc(x, x_layout.strides),
            indices_tensor=tensor_desc(indices),
            output_tensor=tensor_desc((dtype, out_shape), data.draw(layouts(out_shape, False)).strides),
        )
    )
    if max(targets) >= total or len(set(targets)) < count:
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            client.execute(desc, [x, indices])
        assert caught.value.field_violations[0].field == "inputs[1].buffer.data"
        return
    (out,) = execute(client, desc, [x, indices])
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, ref.max_unpooling(x, indices, out_shape))


def roi_desc(x, rois, out_shape, scale: float, pooled: tuple[int, int]) -> operators_pb2.OperatorDesc:  # type: ignore[no-untyped-def]
    return operators_pb2.OperatorDesc(
        roi_pooling=operators_pb2.RoiPoolingOperatorDesc(
            input_tensor=tensor_desc(x),
            roi_tensor=tensor_desc(rois),
            output_tensor=tensor_desc((x.dtype, out_shape)),
            spatial_scale=scale,
            pooled_size=operators_pb2.Size2D(height=pooled[0], width=pooled[1]),
        )
    )


@settings(max_examples=25)
@given(data=st.data())
def test_roi_pooling_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes("roi_pooling")), label="dtype")
    shape = (
        data.draw(st.integers(1, 2)),
        data.draw(st.integers(1, 3)),
        data.draw(st.integers(1, 6)),
        data.draw(st.integers(1, 6)),
    )
    count = data.draw(st.integers(1, 3))
    rows = []
    for _ in range(count):
        x1, y1 = data.draw(st.integers(-2, 7)), data.draw(st.integers(-2, 7))
        rows.append(
            [
                data.draw(st.integers(0, shape[0] - 1)),
                x1,
                y1,
                x1 + data.draw(st.integers(0, 5)),
                y1 + data.draw(st.integers(0, 5)),
            ]
        )
    scale = data.draw(st.sampled_from([1.0, 0.5, 0.25, 1.5, 0.75]))
    pooled = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    x = data.draw(arrays(dtype.type, shape))
    rois = np.array(rows, dtype).reshape(1, 1, count, 5)
    out_shape = (count, shape[1], *pooled)
    (out,) = execute(client, roi_desc(x, rois, out_shape, scale, pooled), [x, rois])
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.astype(np.float64), ref.roi_pooling(x, rois, scale, *pooled))


# Validation: one broken rule each.
X4 = np.zeros((1, 2, 4, 4), np.float32)
GOOD = {"dimension_count": 2, "strides": [1, 1], "window_size": [2, 2], "start_padding": [0, 0], "end_padding": [0, 0]}


def expect_invalid(
    client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray], field: str
) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field == field


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"dimension_count": 3}, "dimension_count"),
        ({"strides": [1]}, "strides"),
        ({"window_size": [2, 2, 2]}, "window_size"),
        ({"start_padding": [0]}, "start_padding"),
        ({"end_padding": []}, "end_padding"),
        ({"dilations": [1]}, "dilations"),
        ({"strides": [1, 0]}, "strides[1]"),
        ({"window_size": [0, 2]}, "window_size[0]"),
        ({"dilations": [1, 0]}, "dilations[1]"),
        ({"window_size": [5, 2]}, "window_size[0]"),
    ],
)
def test_attribute_rules(client: dmlrpc.Client, change: dict[str, Any], field: str) -> None:
    attrs = GOOD | {"dilations": [1, 1]} | change
    out = (np.float32, (1, 2, 3, 3))
    expect_invalid(client, pool_desc("max_pooling2", X4, out, attrs), [X4], f"operator_desc.max_pooling2.{field}")


@pytest.mark.parametrize("case", sorted(MESSAGES))
def test_output_sizes_follow_the_formula(client: dmlrpc.Client, case: str) -> None:
    attrs = GOOD | ({"dilations": [1, 1]} if case in DILATED else {}) | ({"p": 2} if "lp" in case else {})
    desc = pool_desc(case, X4, (np.float32, (1, 2, 3, 4)), attrs)
    expect_invalid(client, desc, [X4], f"operator_desc.{case}.output_tensor.buffer.sizes")


@pytest.mark.parametrize("case", sorted(MESSAGES))
def test_output_type_matches_input(client: dmlrpc.Client, case: str) -> None:
    attrs = GOOD | ({"dilations": [1, 1]} if case in DILATED else {}) | ({"p": 2} if "lp" in case else {})
    desc = pool_desc(case, X4, (np.float16, (1, 2, 3, 3)), attrs)
    expect_invalid(client, desc, [X4], f"operator_desc.{case}.output_tensor.buffer.data_type")


def test_output_rank_matches_input(client: dmlrpc.Client) -> None:
    desc = pool_desc("max_pooling", X4, (np.float32, (1, 2, 3, 3, 1)), GOOD)
    expect_invalid(client, desc, [X4], "operator_desc.max_pooling.output_tensor.buffer.sizes")


@pytest.mark.parametrize("case", ["max_pooling1", "max_pooling2"])
def test_indices_sizes_match_output(client: dmlrpc.Client, case: str) -> None:
    attrs = GOOD | ({"dilations": [1, 1]} if case in DILATED else {})
    desc = pool_desc(case, X4, (np.float32, (1, 2, 3, 3)), attrs, (np.uint32, (1, 2, 3, 2)))
    expect_invalid(client, desc, [X4], f"operator_desc.{case}.output_indices_tensor.buffer.sizes")
    desc = pool_desc(case, X4, (np.float32, (1, 2, 3, 3)), attrs, (np.uint32, (1, 2, 9)))
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, [X4])
    assert caught.value.field_violations[0].field.startswith(f"operator_desc.{case}.output_indices_tensor")


def test_lp_pooling_p_zero(client: dmlrpc.Client) -> None:
    desc = pool_desc("lp_pooling", X4, (np.float32, (1, 2, 3, 3)), GOOD | {"p": 0})
    expect_invalid(client, desc, [X4], "operator_desc.lp_pooling.p")


def test_window_only_in_padding_is_refused_for_max(client: dmlrpc.Client) -> None:
    attrs = GOOD | {"window_size": [1, 1], "start_padding": [1, 0]}
    desc = pool_desc("max_pooling", X4, (np.float32, (1, 2, 5, 4)), attrs)
    expect_invalid(client, desc, [X4], "operator_desc.max_pooling.start_padding[0]")


def test_window_only_in_padding_averages_zero_with_padding_counted(client: dmlrpc.Client) -> None:
    x = np.ones((1, 1, 1, 2), np.float32)
    attrs = GOOD | {"window_size": [1, 1], "end_padding": [0, 1], "include_padding": True}
    (out,) = execute(client, pool_desc("average_pooling", x, (np.float32, (1, 1, 1, 3)), attrs), [x])
    np.testing.assert_array_equal(out, [[[[1, 1, 0]]]])


def unpool_desc(x, indices, out_spec) -> operators_pb2.OperatorDesc:  # type: ignore[no-untyped-def]
    return operators_pb2.OperatorDesc(
        max_unpooling=operators_pb2.MaxUnpoolingOperatorDesc(
            input_tensor=tensor_desc(x), indices_tensor=tensor_desc(indices), output_tensor=tensor_desc(out_spec)
        )
    )


def test_max_unpooling_rules(client: dmlrpc.Client) -> None:
    x = np.ones((1, 1, 2, 2), np.float32)
    indices = np.array([0, 3, 5, 6], np.uint32).reshape(1, 1, 2, 2)
    path = "operator_desc.max_unpooling"
    expect_invalid(
        client,
        unpool_desc(x, indices, (np.float16, (1, 1, 3, 3))),
        [x, indices],
        f"{path}.output_tensor.buffer.data_type",
    )
    short = indices.reshape(1, 1, 4, 1)
    expect_invalid(
        client, unpool_desc(x, short, (np.float32, (1, 1, 3, 3))), [x, short], f"{path}.indices_tensor.buffer.sizes"
    )
    far = np.array([0, 3, 5, 9], np.uint32).reshape(1, 1, 2, 2)
    expect_invalid(client, unpool_desc(x, far, (np.float32, (1, 1, 3, 3))), [x, far], "inputs[1].buffer.data")
    twice = np.array([0, 3, 3, 8], np.uint32).reshape(1, 1, 2, 2)
    expect_invalid(client, unpool_desc(x, twice, (np.float32, (1, 1, 3, 3))), [x, twice], "inputs[1].buffer.data")
    (out,) = execute(client, unpool_desc(x * 2, indices, (np.float32, (1, 1, 3, 3))), [x * 2, indices])
    np.testing.assert_array_equal(out.reshape(-1), [2, 0, 0, 2, 0, 2, 2, 0, 0])


def test_roi_pooling_rules(client: dmlrpc.Client) -> None:
    x = np.zeros((2, 1, 4, 4), np.float32)
    rois = np.array([[[[0, 0, 0, 2, 2]]]], np.float32)
    path = "operator_desc.roi_pooling"
    expect_invalid(
        client,
        roi_desc(x, rois.astype(np.float16), (1, 1, 2, 2), 1.0, (2, 2)),
        [x, rois.astype(np.float16)],
        f"{path}.roi_tensor.buffer.data_type",
    )
    wide = np.zeros((1, 1, 1, 4), np.float32)
    expect_invalid(client, roi_desc(x, wide, (1, 1, 2, 2), 1.0, (2, 2)), [x, wide], f"{path}.roi_tensor.buffer.sizes")
    expect_invalid(client, roi_desc(x, rois, (1, 1, 2, 2), 1.0, (2, 3)), [x, rois], f"{path}.pooled_size")
    expect_invalid(client, roi_desc(x, rois, (1, 1, 0 + 2, 2), 1.0, (0, 2)), [x, rois], f"{path}.pooled_size")
    expect_invalid(
        client, roi_desc(x, rois, (2, 1, 2, 2), 1.0, (2, 2)), [x, rois], f"{path}.output_tensor.buffer.sizes"
    )
    expect_invalid(
        client, roi_desc(x, rois, (1, 2, 2, 2), 1.0, (2, 2)), [x, rois], f"{path}.output_tensor.buffer.sizes"
    )
    expect_invalid(client, roi_desc(x, rois, (1, 1, 2, 2), float("nan"), (2, 2)), [x, rois], f"{path}.spatial_scale")
    expect_invalid(client, roi_desc(x, rois, (1, 1, 2, 2), -1.0, (2, 2)), [x, rois], f"{path}.spatial_scale")
    out_of_range = np.array([[[[2, 0, 0, 2, 2]]]], np.float32)
    expect_invalid(
        client, roi_desc(x, out_of_range, (1, 1, 2, 2), 1.0, (2, 2)), [x, out_of_range], "inputs[1].buffer.data"
    )
    fractional = np.array([[[[0.5, 0, 0, 2, 2]]]], np.float32)
    expect_invalid(client, roi_desc(x, fractional, (1, 1, 2, 2), 1.0, (2, 2)), [x, fractional], "inputs[1].buffer.data")
    backwards = np.array([[[[0, 2, 0, 1, 2]]]], np.float32)
    expect_invalid(client, roi_desc(x, backwards, (1, 1, 2, 2), 1.0, (2, 2)), [x, backwards], "inputs[1].buffer.data")


def test_roi_pooling_rounds_half_away_from_zero(client: dmlrpc.Client) -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    # x1 = round(0.5 * 1) = 1 (half to even would give 0), y1 = round(2.5) = 3; region {3} x {1..3}.
    rois = np.array([[[[0, 0.5, 2.5, 3, 3]]]], np.float32)
    (out,) = execute(client, roi_desc(x, rois, (1, 1, 1, 1), 1.0, (1, 1)), [x, rois])
    np.testing.assert_array_equal(out, ref.roi_pooling(x, rois, 1.0, 1, 1))
    assert out.reshape(-1)[0] == 15
