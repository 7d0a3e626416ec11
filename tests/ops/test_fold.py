"""FOLD and UNFOLD over the wire: properties against the NumPy references, the page examples, validation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators import REGISTRY
from tests.references import fold as ref
from tests.strategies import arrays, broadcast_values, layouts

FL64 = operators_pb2.FEATURE_LEVEL_6_4
MESSAGES: dict[str, Any] = {"fold": operators_pb2.FoldOperatorDesc, "unfold": operators_pb2.UnfoldOperatorDesc}


def dtypes(case: str) -> list[np.dtype[Any]]:
    table = REGISTRY[case].support_at(FL64)
    assert table is not None
    return sorted((np.dtype(DTYPE_BY_DATA_TYPE[t]) for t in table["input_tensor"].data_types), key=str)


def make_desc(case: str, x, out, attrs: dict[str, Any], strides=(None, None)) -> operators_pb2.OperatorDesc:  # type: ignore[no-untyped-def]
    fields = {"input_tensor": tensor_desc(x, strides[0]), "output_tensor": tensor_desc(out, strides[1]), **attrs}
    return operators_pb2.OperatorDesc(**{case: MESSAGES[case](**fields)})


def attributes(w: list[int], s: list[int], d: list[int], a: list[int], b: list[int]) -> dict[str, Any]:
    return {
        "dimension_count": len(w),
        "window_sizes": w,
        "strides": s,
        "dilations": d,
        "start_padding": a,
        "end_padding": b,
    }


@st.composite
def block_cases(draw: st.DrawFn):  # type: ignore[no-untyped-def]
    """An image shape {N, C, spatial...} (1-3 spatial dimensions) and valid window attributes."""
    count = draw(st.integers(1, 3), label="dimension_count")
    side = {1: 7, 2: 5, 3: 3}[count]
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *(draw(st.integers(1, side)) for _ in range(count)))
    w, s, d, a, b = [], [], [], [], []
    for i in range(count):
        win, dil = draw(st.integers(1, 3)), draw(st.integers(1, 2))
        start, end = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        extent = (win - 1) * dil + 1
        end += max(0, extent - (shape[2 + i] + start + end))
        w.append(win)
        s.append(draw(st.integers(1, 3)))
        d.append(dil)
        a.append(start)
        b.append(end)
    return shape, w, s, d, a, b


def check(out: np.ndarray, expected: np.ndarray, dtype: np.dtype[Any]) -> None:
    assert out.dtype == dtype and out.shape == expected.shape
    tolerance = 2e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tolerance, atol=tolerance)


@settings(max_examples=30)
@given(data=st.data())
def test_unfold_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    shape, w, s, d, a, b = data.draw(block_cases())
    dtype = data.draw(st.sampled_from(dtypes("unfold")), label="dtype")
    x = data.draw(arrays(dtype.type, shape))
    x_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    x = broadcast_values(x, x_layout)
    expected = ref.unfold(x, w, s, d, a, b)
    out_layout = data.draw(layouts(expected.shape, allow_broadcast=False), label="output layout")
    desc = make_desc(
        "unfold", x, (dtype, expected.shape), attributes(w, s, d, a, b), (x_layout.strides, out_layout.strides)
    )
    (out,) = client.execute(desc, [x])
    assert isinstance(out, np.ndarray)
    # Pure data movement: exact.
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.astype(np.float64), expected)


@settings(max_examples=30)
@given(data=st.data())
def test_fold_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    shape, w, s, d, a, b = data.draw(block_cases())
    dtype = data.draw(st.sampled_from(dtypes("fold")), label="dtype")
    blocks = ref.blocks_per_dimension(shape[2:], w, s, d, a, b)
    columns = (shape[0], shape[1] * int(np.prod(w)), int(np.prod(blocks)))
    x = data.draw(arrays(dtype.type, columns))
    x_layout = data.draw(layouts(columns, allow_broadcast=True), label="input layout")
    x = broadcast_values(x, x_layout)
    out_layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    desc = make_desc("fold", x, (dtype, shape), attributes(w, s, d, a, b), (x_layout.strides, out_layout.strides))
    (out,) = client.execute(desc, [x])
    assert isinstance(out, np.ndarray)
    check(out, ref.fold(x, shape[2:], w, s, d, a, b), dtype)


@settings(max_examples=15)
@given(data=st.data())
def test_fold_of_unfold_counts_each_position_per_window(client: dmlrpc.Client, data: st.DataObject) -> None:
    # Folding ones counts how many blocks read each position: the two operators agree on positions.
    shape, w, s, d, a, b = data.draw(block_cases())
    x = np.ones(shape, np.float32)
    columns = ref.unfold(x, w, s, d, a, b).shape
    attrs = attributes(w, s, d, a, b)
    (unfolded,) = client.execute(make_desc("unfold", x, (np.float32, columns), attrs), [x])
    assert isinstance(unfolded, np.ndarray)
    (folded,) = client.execute(make_desc("fold", unfolded, (np.float32, shape), attrs), [unfolded])
    assert isinstance(folded, np.ndarray)
    np.testing.assert_array_equal(folded, ref.fold(ref.unfold(x, w, s, d, a, b), shape[2:], w, s, d, a, b))


def test_fold_page_examples(client: dmlrpc.Client) -> None:
    attrs = attributes([3, 3], [1, 1], [1, 1], [0, 0], [0, 0])
    x = np.arange(36, dtype=np.float32).reshape(1, 9, 4)
    (out,) = client.execute(make_desc("fold", x, (np.float32, (1, 1, 4, 4)), attrs), [x])
    expected = [[0, 5, 13, 9], [14, 38, 54, 32], [38, 86, 102, 56], [26, 57, 65, 35]]
    np.testing.assert_array_equal(out, np.array([[expected]], np.float32))
    attrs = attributes([3, 3], [1, 1], [1, 1], [1, 0], [1, 0])
    x = np.arange(72, dtype=np.float32).reshape(1, 9, 8)
    (out,) = client.execute(make_desc("fold", x, (np.float32, (1, 1, 4, 4)), attrs), [x])
    channel0 = [[26, 70, 102, 60], [78, 183, 231, 129], [84, 195, 243, 135], [82, 182, 214, 116]]
    np.testing.assert_array_equal(out, np.array([[channel0]], np.float32))
    x = np.arange(144, dtype=np.float32).reshape(1, 18, 8)
    (out,) = client.execute(make_desc("fold", x, (np.float32, (1, 2, 4, 4)), attrs), [x])
    channel1 = [[170, 358, 390, 204], [294, 615, 663, 345], [300, 627, 675, 351], [226, 470, 502, 260]]
    np.testing.assert_array_equal(out, np.array([[channel0, channel1]], np.float32))


def test_unfold_page_examples(client: dmlrpc.Client) -> None:
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    attrs = attributes([3, 3], [1, 1], [1, 1], [0, 0], [0, 0])
    (out,) = client.execute(make_desc("unfold", x, (np.float32, (1, 9, 9)), attrs), [x])
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out[0, 0], [0, 1, 2, 5, 6, 7, 10, 11, 12])
    np.testing.assert_array_equal(out[0, 8], [12, 13, 14, 17, 18, 19, 22, 23, 24])
    attrs = attributes([3, 3], [1, 1], [1, 1], [1, 0], [1, 0])
    (out,) = client.execute(make_desc("unfold", x, (np.float32, (1, 9, 15)), attrs), [x])
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out[0, 0], [0, 0, 0, 0, 1, 2, 5, 6, 7, 10, 11, 12, 15, 16, 17])
    np.testing.assert_array_equal(out[0, 3], [0, 1, 2, 5, 6, 7, 10, 11, 12, 15, 16, 17, 20, 21, 22])
    np.testing.assert_array_equal(out[0, 8], [7, 8, 9, 12, 13, 14, 17, 18, 19, 22, 23, 24, 0, 0, 0])


# Validation: one broken rule each.
IMAGE = np.zeros((1, 2, 4, 4), np.float32)
COLUMNS = np.zeros((1, 8, 9), np.float32)
GOOD = attributes([2, 2], [1, 1], [1, 1], [0, 0], [0, 0])


def expect_invalid(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, x: np.ndarray, field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, [x])
    assert caught.value.field_violations[0].field == field


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"dimension_count": 0}, "dimension_count"),
        ({"dimension_count": 7}, "dimension_count"),
        ({"dimension_count": 3}, "input_tensor.buffer.sizes"),
        ({"window_sizes": [2]}, "window_sizes"),
        ({"strides": [1, 1, 1]}, "strides"),
        ({"dilations": []}, "dilations"),
        ({"start_padding": [0]}, "start_padding"),
        ({"end_padding": [0]}, "end_padding"),
        ({"window_sizes": [2, 0]}, "window_sizes[1]"),
        ({"strides": [0, 1]}, "strides[0]"),
        ({"dilations": [1, 0]}, "dilations[1]"),
        ({"window_sizes": [5, 2]}, "window_sizes[0]"),
    ],
)
def test_unfold_attribute_rules(client: dmlrpc.Client, change: dict[str, Any], field: str) -> None:
    desc = make_desc("unfold", IMAGE, (np.float32, (1, 8, 9)), GOOD | change)
    expect_invalid(client, desc, IMAGE, f"operator_desc.unfold.{field}")


def test_unfold_output_rules(client: dmlrpc.Client) -> None:
    path = "operator_desc.unfold.output_tensor.buffer"
    expect_invalid(client, make_desc("unfold", IMAGE, (np.float32, (1, 8, 8)), GOOD), IMAGE, f"{path}.sizes")
    expect_invalid(client, make_desc("unfold", IMAGE, (np.float32, (1, 8, 9, 1)), GOOD), IMAGE, f"{path}.sizes")
    expect_invalid(client, make_desc("unfold", IMAGE, (np.float16, (1, 8, 9)), GOOD), IMAGE, f"{path}.data_type")


def test_fold_rules(client: dmlrpc.Client) -> None:
    path = "operator_desc.fold"
    (out,) = client.execute(make_desc("fold", COLUMNS, (np.float32, (1, 2, 4, 4)), GOOD), [COLUMNS])
    assert isinstance(out, np.ndarray) and out.shape == (1, 2, 4, 4)
    # BlockCount of a 4x5 output is 12, channels 8 / 4 = 2 need sizes [1, 8, 12].
    expect_invalid(
        client,
        make_desc("fold", COLUMNS, (np.float32, (1, 2, 4, 5)), GOOD),
        COLUMNS,
        f"{path}.input_tensor.buffer.sizes",
    )
    expect_invalid(
        client,
        make_desc("fold", COLUMNS, (np.float32, (1, 3, 4, 4)), GOOD),
        COLUMNS,
        f"{path}.input_tensor.buffer.sizes",
    )
    expect_invalid(
        client,
        make_desc("fold", COLUMNS, (np.float32, (1, 2, 16)), GOOD),
        COLUMNS,
        f"{path}.output_tensor.buffer.sizes",
    )
    expect_invalid(
        client,
        make_desc("fold", COLUMNS, (np.float16, (1, 2, 4, 4)), GOOD),
        COLUMNS,
        f"{path}.output_tensor.buffer.data_type",
    )
    four = COLUMNS.reshape(1, 8, 9, 1)
    expect_invalid(
        client, make_desc("fold", four, (np.float32, (1, 2, 4, 4)), GOOD), four, f"{path}.input_tensor.buffer.sizes"
    )
    expect_invalid(
        client,
        make_desc("fold", COLUMNS, (np.float32, (1, 2, 4, 4)), GOOD | {"window_sizes": [6, 2]}),
        COLUMNS,
        f"{path}.window_sizes[0]",
    )
