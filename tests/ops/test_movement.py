"""SLICE(1), PADDING(1), TILE, SPACE_TO_DEPTH(1), DEPTH_TO_SPACE(1) and REVERSE_SUBSEQUENCES over the wire: the
pages' examples, validation, and properties against the NumPy references."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators import REGISTRY
from dmlrpc_server.operators.base import Limits
from tests.references import movement as ref
from tests.strategies import arrays, broadcast_values, layouts, shapes

FL = operators_pb2.FeatureLevel
FL_6_4 = FL.FEATURE_LEVEL_6_4
DT = tensor_pb2.TensorDataType
LIMITS = Limits(max_tensor_bytes=1 << 20, max_request_bytes=1 << 22, max_message_bytes=1 << 22)
X44 = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
PAD_INPUT = np.array([[[[1, 2, 3, 4], [5, 6, 7, 8], [1, 2, 3, 4], [5, 6, 7, 8]]]], np.float32)
# The depth-space pages' depth-side example: channel k holds [[0, 1, 2], [3, 4, 5]] + 9k.
DEPTH = (np.arange(8, dtype=np.uint32)[:, None, None] * 9 + np.arange(6, dtype=np.uint32).reshape(2, 3))[None]
SPACE_DCR = np.array(
    [
        [
            [[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56], [3, 21, 4, 22, 5, 23], [39, 57, 40, 58, 41, 59]],
            [[9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65], [12, 30, 13, 31, 14, 32], [48, 66, 49, 67, 50, 68]],
        ]
    ],
    np.uint32,
)
SPACE_CRD = np.array(
    [
        [
            [[0, 9, 1, 10, 2, 11], [18, 27, 19, 28, 20, 29], [3, 12, 4, 13, 5, 14], [21, 30, 22, 31, 23, 32]],
            [[36, 45, 37, 46, 38, 47], [54, 63, 55, 64, 56, 65], [39, 48, 40, 49, 41, 50], [57, 66, 58, 67, 59, 68]],
        ]
    ],
    np.uint32,
)
DCR, CRD = operators_pb2.DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW, operators_pb2.DEPTH_SPACE_ORDER_COLUMN_ROW_DEPTH
CONSTANT, EDGE, REFLECTION, SYMMETRIC, WRAP = range(5)
#: DML_SCALAR_UNION member holding each type (FLOAT16 travels as float32).
MEMBERS = {
    "int8": "int8",
    "uint8": "uint8",
    "int16": "int16",
    "uint16": "uint16",
    "int32": "int32",
    "uint32": "uint32",
    "int64": "int64",
    "uint64": "uint64",
    "float16": "float32",
    "float32": "float32",
    "float64": "float64",
}


def dtypes_of(case: str, field: str = "input_tensor") -> list[Any]:
    """The data types of a field in an operator's support table at feature level 6.4."""
    table = REGISTRY[case].support_at(FL_6_4)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table[field].data_types), key=str)


def op_desc(case: str, x: Any, output: Any, layout: dict[str, Any] | None = None, **fields: Any) -> Any:
    """An OperatorDesc of ``case`` with input/output tensors (arrays or (dtype, shape) pairs, element strides in
    ``layout``) and attributes."""
    strides = layout or {}
    message = type(getattr(operators_pb2.OperatorDesc(), case))
    inner = message(
        input_tensor=tensor_desc(x, strides.get("input")),
        output_tensor=tensor_desc(output, strides.get("output")),
        **fields,
    )
    return operators_pb2.OperatorDesc(**{case: inner})


def expect_invalid(client: dmlrpc.Client, desc: Any, inputs: list[Any], field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field == field


def run_one(client: dmlrpc.Client, desc: Any, inputs: list[Any]) -> np.ndarray:
    (out,) = client.execute(desc, inputs)
    assert isinstance(out, np.ndarray)
    return out


@st.composite
def laid_out(draw: st.DrawFn, dtype: Any, shape: tuple[int, ...]) -> tuple[np.ndarray, Any, Any]:
    """An input array of ``shape`` with a drawn layout (its logical values, its strides, and a spare slot)."""
    x = draw(arrays(dtype, shape), label="x")
    layout = draw(layouts(shape, allow_broadcast=True), label="input layout")
    return broadcast_values(x, layout), layout.strides, None


# --- SLICE, SLICE1 ---------------------------------------------------------------------------------------------------


def slice_desc(x: Any, out: Any, offsets: Any, sizes: Any, strides: Any, layout: Any = None, count: Any = None) -> Any:
    return op_desc(
        "slice",
        x,
        out,
        layout,
        dimension_count=len(offsets) if count is None else count,
        offsets=offsets,
        sizes=sizes,
        strides=strides,
    )


def slice1_desc(x: Any, out: Any, offsets: Any, sizes: Any, strides: Any, layout: Any = None) -> Any:
    return op_desc(
        "slice1",
        x,
        out,
        layout,
        dimension_count=len(offsets),
        input_window_offsets=offsets,
        input_window_sizes=sizes,
        input_window_strides=strides,
    )


def test_slice_examples(client: dmlrpc.Client) -> None:
    out = run_one(client, slice_desc(X44, (np.float32, (1, 1, 3, 2)), [0, 0, 1, 2], [1, 1, 3, 2], [1, 1, 1, 1]), [X44])
    np.testing.assert_array_equal(out, [[[[7, 8], [11, 12], [15, 16]]]])
    out = run_one(client, slice_desc(X44, (np.float32, (1, 1, 2, 2)), [0, 0, 1, 0], [1, 1, 2, 2], [1, 1, 2, 3]), [X44])
    np.testing.assert_array_equal(out, [[[[5, 8], [13, 16]]]])


def test_slice1_examples(client: dmlrpc.Client) -> None:
    offsets, sizes = [0, 0, 0, 1], [1, 1, 4, 3]
    out = run_one(client, slice1_desc(X44, (np.float32, (1, 1, 2, 2)), offsets, sizes, [1, 1, 2, 2]), [X44])
    np.testing.assert_array_equal(out, [[[[2, 4], [10, 12]]]])
    out = run_one(client, slice1_desc(X44, (np.float32, (1, 1, 2, 2)), offsets, sizes, [1, 1, -2, 2]), [X44])
    np.testing.assert_array_equal(out, [[[[14, 16], [6, 8]]]])


@st.composite
def slice1_cases(draw: st.DrawFn, negative: bool) -> tuple[Any, ...]:
    shape = draw(shapes(), label="shape")
    offsets, sizes, strides, out_sizes = [], [], [], []
    for n in shape:
        stride = draw(st.integers(-3, 3).filter(lambda s: s != 0) if negative else st.integers(1, 3))
        if negative:
            offset = draw(st.integers(0, n - 1))
            size = draw(st.integers(1, n - offset))
            out = draw(st.integers(1, 1 + (size - 1) // abs(stride)))
        else:
            out = size = draw(st.integers(1, 1 + (n - 1) // stride))
            offset = draw(st.integers(0, n - 1 - stride * (size - 1)))
        offsets.append(offset)
        sizes.append(size)
        strides.append(stride)
        out_sizes.append(out)
    return shape, offsets, sizes, strides, tuple(out_sizes)


@settings(max_examples=25)
@given(case=slice1_cases(negative=False), data=st.data())
def test_slice_matches_reference(client: dmlrpc.Client, case: Any, data: st.DataObject) -> None:
    shape, offsets, sizes, strides, out_sizes = case
    dtype = data.draw(st.sampled_from(dtypes_of("slice")), label="dtype")
    x, in_strides, _ = data.draw(laid_out(dtype, shape))
    out_layout = data.draw(layouts(out_sizes, allow_broadcast=False), label="output layout")
    desc = slice_desc(
        x, (dtype, out_sizes), offsets, sizes, strides, {"input": in_strides, "output": out_layout.strides}
    )
    out = run_one(client, desc, [x])
    assert out.dtype == np.dtype(dtype) and out.shape == out_sizes
    np.testing.assert_array_equal(out, ref.slice1(x, offsets, sizes, strides, out_sizes))


@settings(max_examples=25)
@given(case=slice1_cases(negative=True), data=st.data())
def test_slice1_matches_reference(client: dmlrpc.Client, case: Any, data: st.DataObject) -> None:
    shape, offsets, sizes, strides, out_sizes = case
    dtype = data.draw(st.sampled_from(dtypes_of("slice1")), label="dtype")
    x, in_strides, _ = data.draw(laid_out(dtype, shape))
    out_layout = data.draw(layouts(out_sizes, allow_broadcast=False), label="output layout")
    desc = slice1_desc(
        x, (dtype, out_sizes), offsets, sizes, strides, {"input": in_strides, "output": out_layout.strides}
    )
    out = run_one(client, desc, [x])
    assert out.dtype == np.dtype(dtype) and out.shape == out_sizes
    np.testing.assert_array_equal(out, ref.slice1(x, offsets, sizes, strides, out_sizes))


@pytest.mark.parametrize(
    ("out", "offsets", "sizes", "strides", "count", "field"),
    [
        ((np.int32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 1, 1], None, "output_tensor.buffer.data_type"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 1, 1], 3, "dimension_count"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0], [1, 1, 2, 2], [1, 1, 1, 1], 4, "offsets"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2], [1, 1, 1, 1], 4, "sizes"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 1], 4, "strides"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 0, 1], None, "strides[2]"),
        ((np.float32, (1, 1, 2, 3)), [0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 1, 1], None, "output_tensor.buffer.sizes"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 4, 0], [1, 1, 2, 2], [1, 1, 1, 1], None, "offsets[2]"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0, 3], [1, 1, 2, 2], [1, 1, 1, 1], None, "offsets[3]"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 4, 1], None, "strides[2]"),
    ],
)
def test_slice_validation(
    client: dmlrpc.Client, out: Any, offsets: Any, sizes: Any, strides: Any, count: Any, field: str
) -> None:
    desc = slice_desc(X44, out, offsets, sizes, strides, count=count)
    expect_invalid(client, desc, [X44], f"operator_desc.slice.{field}")


@pytest.mark.parametrize(
    ("out", "offsets", "sizes", "strides", "field"),
    [
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 0, 1], "input_window_strides[2]"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 0, 2], [1, 1, 1, 1], "input_window_sizes[2]"),
        ((np.float32, (1, 1, 1, 2)), [0, 0, 4, 0], [1, 1, 1, 2], [1, 1, 1, 1], "input_window_offsets[2]"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 3, 0], [1, 1, 2, 2], [1, 1, 1, 1], "input_window_sizes[2]"),
        ((np.float32, (1, 1, 3, 2)), [0, 0, 0, 0], [1, 1, 4, 2], [1, 1, -2, 1], "output_tensor.buffer.sizes"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0], [1, 1, 2, 2], [1, 1, 1, 1], "input_window_offsets"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2], [1, 1, 1, 1], "input_window_sizes"),
        ((np.float32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 1], "input_window_strides"),
        ((np.uint32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 1, 1], "output_tensor.buffer.data_type"),
    ],
)
def test_slice1_validation(client: dmlrpc.Client, out: Any, offsets: Any, sizes: Any, strides: Any, field: str) -> None:
    desc = operators_pb2.OperatorDesc(
        slice1=operators_pb2.Slice1OperatorDesc(
            input_tensor=tensor_desc(X44),
            output_tensor=tensor_desc(out),
            dimension_count=4,
            input_window_offsets=offsets,
            input_window_sizes=sizes,
            input_window_strides=strides,
        )
    )
    expect_invalid(client, desc, [X44], f"operator_desc.slice1.{field}")


def test_slice1_dimension_count_must_match(client: dmlrpc.Client) -> None:
    desc = slice1_desc(X44, (np.float32, (1, 1, 2, 2)), [0, 0, 0, 0], [1, 1, 2, 2], [1, 1, 1, 1])
    desc.slice1.dimension_count = 5
    expect_invalid(client, desc, [X44], "operator_desc.slice1.dimension_count")


# --- PADDING, PADDING1 -----------------------------------------------------------------------------------------------


def padding_desc(x: Any, out: Any, mode: int, start: Any, end: Any, layout: Any = None, **fields: Any) -> Any:
    return op_desc(
        "padding",
        x,
        out,
        layout,
        padding_mode=mode,
        dimension_count=len(start),
        start_padding=start,
        end_padding=end,
        **fields,
    )


def scalar(dtype: Any, value: Any) -> operators_pb2.ScalarUnion:
    member = MEMBERS[np.dtype(dtype).name]
    return operators_pb2.ScalarUnion(**{member: value.item() if isinstance(value, np.generic) else value})


def padding1_desc(x: Any, out: Any, mode: int, start: Any, end: Any, value: Any, layout: Any = None) -> Any:
    dtype = np.dtype(out[0] if isinstance(out, tuple) else out.dtype)
    data_type = next(t for t, d in DTYPE_BY_DATA_TYPE.items() if d == dtype)
    return op_desc(
        "padding1",
        x,
        out,
        layout,
        padding_mode=mode,
        padding_value_data_type=data_type,
        padding_value=scalar(dtype, value),
        dimension_count=len(start),
        start_padding=start,
        end_padding=end,
    )


PAGE_PADDING = {
    CONSTANT: np.pad(PAD_INPUT, [(0, 0), (0, 0), (1, 3), (2, 4)], constant_values=9),
    EDGE: np.array(
        [[1, 1, 1, 2, 3, 4, 4, 4, 4, 4]] * 2
        + [[5, 5, 5, 6, 7, 8, 8, 8, 8, 8], [1, 1, 1, 2, 3, 4, 4, 4, 4, 4]]
        + [[5, 5, 5, 6, 7, 8, 8, 8, 8, 8]] * 4,
        np.float32,
    ),
    REFLECTION: np.array([[7, 6, 5, 6, 7, 8, 7, 6, 5, 6], [3, 2, 1, 2, 3, 4, 3, 2, 1, 2]] * 4, np.float32),
    SYMMETRIC: np.array(
        [[2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5]]
        + [[2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5]]
        + [[2, 1, 1, 2, 3, 4, 4, 3, 2, 1], [6, 5, 5, 6, 7, 8, 8, 7, 6, 5]],
        np.float32,
    ),
}


@pytest.mark.parametrize("mode", [CONSTANT, EDGE, REFLECTION, SYMMETRIC])
def test_padding_examples(client: dmlrpc.Client, mode: int) -> None:
    expected = PAGE_PADDING[mode].reshape(1, 1, 8, 10)
    out_spec = (np.float32, (1, 1, 8, 10))
    start, end = [0, 0, 1, 2], [0, 0, 3, 4]
    out = run_one(client, padding_desc(PAD_INPUT, out_spec, mode, start, end, padding_value=9.0), [PAD_INPUT])
    np.testing.assert_array_equal(out, expected)
    out = run_one(client, padding1_desc(PAD_INPUT, out_spec, mode, start, end, 9.0), [PAD_INPUT])
    np.testing.assert_array_equal(out, expected)


def test_padding_value_truncates_for_integers(client: dmlrpc.Client) -> None:
    # The page: a FLOAT PaddingValue may be truncated for integer tensors (10.6 -> 10); beyond the range it
    # saturates (chosen here), NaN gives 0.
    x = np.array([[[[1, 2]]]], np.int8)
    for value, fill in ((10.6, 10), (-10.6, -10), (1000.0, 127), (-1e9, -128), (math.nan, 0)):
        out = run_one(
            client,
            padding_desc(x, (np.int8, (1, 1, 1, 4)), CONSTANT, [0, 0, 0, 1], [0, 0, 0, 1], padding_value=value),
            [x],
        )
        np.testing.assert_array_equal(out, [[[[fill, 1, 2, fill]]]])


def test_padding_value_overflows_float16_to_infinity(client: dmlrpc.Client) -> None:
    # A FLOAT PaddingValue beyond FLOAT16's range rounds to infinity (chosen here, as a float32 -> float16 cast does);
    # just below 65520 (halfway to the next power of two) it still rounds to the largest finite value, 65504.
    x = np.array([[[[1, 2]]]], np.float16)
    for value, fill in ((65520.0, np.inf), (-1e5, -np.inf), (65519.99, 65504.0)):
        out = run_one(
            client,
            padding_desc(x, (np.float16, (1, 1, 1, 4)), CONSTANT, [0, 0, 0, 1], [0, 0, 0, 1], padding_value=value),
            [x],
        )
        np.testing.assert_array_equal(out, np.array([[[[fill, 1, 2, fill]]]], np.float16))


def float_to(value: float, dtype: Any) -> Any:
    """PADDING's FLOAT pad value in an integer or float type: toward zero, saturated (the choice documented)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        with np.errstate(over="ignore"):  # beyond FLOAT16's range: infinity (the choice documented)
            return np.float32(value).astype(dtype)
    info = np.iinfo(dtype)
    return dtype.type(min(max(math.trunc(value), int(info.min)), int(info.max)))


@st.composite
def padding_cases(draw: st.DrawFn) -> tuple[Any, ...]:
    rank = draw(st.integers(1, 5), label="rank")
    shape, start, end = [], [], []
    budget = 256
    for _ in range(rank):
        n = draw(st.integers(1, min(4, budget)))
        s = draw(st.integers(0, min(6, budget - n)))
        e = draw(st.integers(0, min(6, budget - n - s)))
        budget //= n + s + e
        shape.append(n)
        start.append(s)
        end.append(e)
    mode = draw(st.sampled_from([CONSTANT, EDGE, REFLECTION, SYMMETRIC, WRAP]), label="mode")
    return tuple(shape), start, end, mode


@settings(max_examples=30)
@given(case=padding_cases(), version=st.sampled_from(["padding", "padding1"]), data=st.data())
def test_padding_matches_reference(client: dmlrpc.Client, case: Any, version: str, data: st.DataObject) -> None:
    shape, start, end, mode = case
    dtype = data.draw(st.sampled_from(dtypes_of(version)), label="dtype")
    x, in_strides, _ = data.draw(laid_out(dtype, shape))
    out_sizes = tuple(n + s + e for n, s, e in zip(shape, start, end, strict=True))
    out_layout = data.draw(layouts(out_sizes, allow_broadcast=False), label="output layout")
    strides = {"input": in_strides, "output": out_layout.strides}
    if version == "padding":
        raw = data.draw(st.floats(-1e5, 1e5, width=32), label="padding value")
        value = float_to(raw, dtype)
        desc = padding_desc(x, (dtype, out_sizes), mode, start, end, strides, padding_value=raw)
    else:
        value = data.draw(arrays(dtype, (1,)), label="padding value")[0]
        desc = padding1_desc(x, (dtype, out_sizes), mode, start, end, value, strides)
    out = run_one(client, desc, [x])
    assert out.dtype == np.dtype(dtype) and out.shape == out_sizes
    np.testing.assert_array_equal(out, ref.padding(x, mode, value, start, end))


def test_padding_large_reflection_folds_periodically(client: dmlrpc.Client) -> None:
    # Padding beyond the input size re-folds over earlier padding (the page), as numpy.pad does.
    x = np.array([1, 2, 3], np.float32)
    for mode in (REFLECTION, SYMMETRIC, WRAP):
        out = run_one(client, padding_desc(x, (np.float32, (17,)), mode, [7], [7]), [x])
        np.testing.assert_array_equal(out, ref.padding(x, mode, 0, [7], [7]))


def plan(case: str, desc: Any, feature_level: int) -> None:
    REGISTRY[case].plan(getattr(desc, case), feature_level=feature_level, limits=LIMITS)


def test_padding_symmetric_needs_feature_level_3_0() -> None:
    desc = padding_desc(PAD_INPUT, (np.float32, (1, 1, 5, 5)), SYMMETRIC, [0, 0, 1, 1], [0, 0, 0, 0])
    plan("padding", desc, FL.FEATURE_LEVEL_3_0)
    with pytest.raises(InvalidArgument) as caught:
        plan("padding", desc, FL.FEATURE_LEVEL_2_1)
    assert caught.value.field == "operator_desc.padding.padding_mode"


@pytest.mark.parametrize("case", ["padding", "padding1"])
def test_padding_wrap_needs_feature_level_6_4(case: str) -> None:
    out = (np.float32, (1, 1, 5, 5))
    if case == "padding":
        desc = padding_desc(PAD_INPUT, out, WRAP, [0, 0, 1, 1], [0, 0, 0, 0])
    else:
        desc = padding1_desc(PAD_INPUT, out, WRAP, [0, 0, 1, 1], [0, 0, 0, 0], 0.0)
    plan(case, desc, FL.FEATURE_LEVEL_6_4)
    with pytest.raises(InvalidArgument) as caught:
        plan(case, desc, FL.FEATURE_LEVEL_6_3)
    assert caught.value.field == f"operator_desc.{case}.padding_mode"


@pytest.mark.parametrize(
    ("out", "mode", "start", "end", "count", "field"),
    [
        ((np.float32, (1, 1, 5, 5)), 5, [0, 0, 1, 1], [0, 0, 0, 0], 4, "padding_mode"),
        ((np.float32, (1, 1, 5, 6)), CONSTANT, [0, 0, 1, 1], [0, 0, 0, 0], 4, "output_tensor.buffer.sizes"),
        ((np.float32, (1, 1, 5, 5)), CONSTANT, [0, 0, 1], [0, 0, 0, 0], 4, "start_padding"),
        ((np.float32, (1, 1, 5, 5)), CONSTANT, [0, 0, 1, 1], [0, 0, 0], 4, "end_padding"),
        ((np.float32, (1, 1, 5, 5)), CONSTANT, [0, 0, 1, 1], [0, 0, 0, 0], 3, "dimension_count"),
        ((np.float16, (1, 1, 5, 5)), EDGE, [0, 0, 1, 1], [0, 0, 0, 0], 4, "output_tensor.buffer.data_type"),
    ],
)
@pytest.mark.parametrize("case", ["padding", "padding1"])
def test_padding_validation(
    client: dmlrpc.Client, case: str, out: Any, mode: int, start: Any, end: Any, count: int, field: str
) -> None:
    if case == "padding":
        desc = padding_desc(PAD_INPUT, out, mode, start, end)
    else:
        desc = padding1_desc(PAD_INPUT, (np.float32, out[1]), mode, start, end, 0.0)
        desc.padding1.output_tensor.CopyFrom(tensor_desc(out))
    getattr(desc, case).dimension_count = count
    expect_invalid(client, desc, [PAD_INPUT], f"operator_desc.{case}.{field}")


def test_padding1_value_type_must_be_the_output_type(client: dmlrpc.Client) -> None:
    desc = padding1_desc(PAD_INPUT, (np.float32, (1, 1, 5, 5)), EDGE, [0, 0, 1, 1], [0, 0, 0, 0], 0.0)
    desc.padding1.padding_value_data_type = DT.TENSOR_DATA_TYPE_INT32
    expect_invalid(client, desc, [PAD_INPUT], "operator_desc.padding1.padding_value_data_type")


def test_padding1_value_member_must_match_its_type(client: dmlrpc.Client) -> None:
    desc = padding1_desc(PAD_INPUT, (np.float32, (1, 1, 5, 5)), CONSTANT, [0, 0, 1, 1], [0, 0, 0, 0], 0.0)
    desc.padding1.padding_value.CopyFrom(operators_pb2.ScalarUnion(int32=3))
    expect_invalid(client, desc, [PAD_INPUT], "operator_desc.padding1.padding_value")


def test_padding1_takes_exact_64_bit_values(client: dmlrpc.Client) -> None:
    x = np.array([[1, 2]], np.uint64)
    big = np.uint64((1 << 64) - 3)
    out = run_one(client, padding1_desc(x, (np.uint64, (2, 3)), CONSTANT, [1, 0], [0, 1], big), [x])
    np.testing.assert_array_equal(out, np.array([[big, big, big], [1, 2, big]], np.uint64))


# --- TILE ------------------------------------------------------------------------------------------------------------


def tile_desc(x: Any, out: Any, repeats: Any, layout: Any = None, count: Any = None) -> Any:
    return op_desc("tile", x, out, layout, repeats_count=len(repeats) if count is None else count, repeats=repeats)


def test_tile_example(client: dmlrpc.Client) -> None:
    x = np.array([[[[1, 2, 3], [4, 5, 6]]]], np.float32)
    out = run_one(client, tile_desc(x, (np.float32, (1, 1, 6, 9)), [1, 1, 3, 3]), [x])
    np.testing.assert_array_equal(out[0, 0], [[1, 2, 3] * 3, [4, 5, 6] * 3] * 3)


@st.composite
def tile_cases(draw: st.DrawFn) -> tuple[tuple[int, ...], list[int]]:
    shape = draw(shapes(max_side=4), label="shape")
    budget = max(1, 256 // math.prod(shape))
    repeats = []
    for _ in shape:
        repeat = draw(st.integers(1, min(3, budget)))
        budget //= repeat
        repeats.append(repeat)
    return shape, repeats


@settings(max_examples=25)
@given(case=tile_cases(), data=st.data())
def test_tile_matches_reference(client: dmlrpc.Client, case: Any, data: st.DataObject) -> None:
    shape, repeats = case
    dtype = data.draw(st.sampled_from(dtypes_of("tile")), label="dtype")
    x, in_strides, _ = data.draw(laid_out(dtype, shape))
    out_sizes = tuple(n * r for n, r in zip(shape, repeats, strict=True))
    out_layout = data.draw(layouts(out_sizes, allow_broadcast=False), label="output layout")
    desc = tile_desc(x, (dtype, out_sizes), repeats, {"input": in_strides, "output": out_layout.strides})
    out = run_one(client, desc, [x])
    assert out.dtype == np.dtype(dtype) and out.shape == out_sizes
    np.testing.assert_array_equal(out, ref.tile(x, repeats))


@pytest.mark.parametrize(
    ("out", "repeats", "count", "field"),
    [
        ((np.float32, (1, 1, 8, 4)), [1, 1, 2, 1], 3, "repeats_count"),
        ((np.float32, (1, 1, 8, 4)), [1, 1, 2], 4, "repeats"),
        ((np.float32, (1, 1, 8, 4)), [1, 1, 2, 0], 4, "repeats[3]"),
        ((np.float32, (1, 1, 8, 8)), [1, 1, 2, 1], 4, "output_tensor.buffer.sizes"),
        ((np.float16, (1, 1, 8, 4)), [1, 1, 2, 1], 4, "output_tensor.buffer.data_type"),
    ],
)
def test_tile_validation(client: dmlrpc.Client, out: Any, repeats: Any, count: int, field: str) -> None:
    expect_invalid(client, tile_desc(X44, out, repeats, count=count), [X44], f"operator_desc.tile.{field}")


# --- SPACE_TO_DEPTH(1), DEPTH_TO_SPACE(1) ------------------------------------------------------------------------


def depth_space_desc(case: str, x: Any, out: Any, block: int, order: int | None, layout: Any = None) -> Any:
    fields: dict[str, Any] = {"block_size": block}
    if order is not None:
        fields["order"] = order
    return op_desc(case, x, out, layout, **fields)


@pytest.mark.parametrize(
    ("case", "order", "space"),
    [("depth_to_space", None, SPACE_DCR), ("depth_to_space1", DCR, SPACE_DCR), ("depth_to_space1", CRD, SPACE_CRD)],
)
def test_depth_to_space_examples(client: dmlrpc.Client, case: str, order: int | None, space: np.ndarray) -> None:
    out = run_one(client, depth_space_desc(case, DEPTH, (np.uint32, (1, 2, 4, 6)), 2, order), [DEPTH])
    np.testing.assert_array_equal(out, space)


@pytest.mark.parametrize(
    ("case", "order", "space"),
    [("space_to_depth", None, SPACE_DCR), ("space_to_depth1", DCR, SPACE_DCR), ("space_to_depth1", CRD, SPACE_CRD)],
)
def test_space_to_depth_examples(client: dmlrpc.Client, case: str, order: int | None, space: np.ndarray) -> None:
    out = run_one(client, depth_space_desc(case, space, (np.uint32, (1, 8, 2, 3)), 2, order), [space])
    np.testing.assert_array_equal(out, DEPTH)


@settings(max_examples=30)
@given(
    case=st.sampled_from(["space_to_depth", "space_to_depth1", "depth_to_space", "depth_to_space1"]),
    block=st.integers(1, 3),
    sides=st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 2), st.integers(1, 3)),
    data=st.data(),
)
def test_depth_space_matches_reference(
    client: dmlrpc.Client, case: str, block: int, sides: tuple[int, int, int, int], data: st.DataObject
) -> None:
    n, c, h, w = sides
    to_depth = case.startswith("space")
    shape = (n, c, h * block, w * block) if to_depth else (n, c * block * block, h, w)
    assume(math.prod(shape) <= 256)
    order = data.draw(st.sampled_from([DCR, CRD]), label="order") if case.endswith("1") else None
    dtype = data.draw(st.sampled_from(dtypes_of(case)), label="dtype")
    x, in_strides, _ = data.draw(laid_out(dtype, shape))
    out_sizes = (n, c * block * block, h, w) if to_depth else (n, c, h * block, w * block)
    out_layout = data.draw(layouts(out_sizes, allow_broadcast=False), label="output layout")
    desc = depth_space_desc(
        case, x, (dtype, out_sizes), block, order, {"input": in_strides, "output": out_layout.strides}
    )
    out = run_one(client, desc, [x])
    assert out.dtype == np.dtype(dtype) and out.shape == out_sizes
    dcr = order != CRD
    expected = ref.space_to_depth(x, block, dcr) if to_depth else ref.depth_to_space(x, block, dcr)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    ("case", "x_shape", "out", "block", "order", "field"),
    [
        ("space_to_depth", (1, 1, 4, 6), (np.uint32, (1, 4, 2, 3)), 0, None, "block_size"),
        ("space_to_depth", (1, 1, 4, 5), (np.uint32, (1, 4, 2, 2)), 2, None, "input_tensor.buffer.sizes"),
        ("space_to_depth", (1, 1, 4, 6), (np.uint32, (1, 1, 8, 12)), 2, None, "output_tensor.buffer.sizes"),
        ("space_to_depth", (1, 1, 4, 6), (np.int32, (1, 4, 2, 3)), 2, None, "output_tensor.buffer.data_type"),
        ("space_to_depth1", (1, 1, 4, 6), (np.uint32, (1, 4, 2, 3)), 2, 2, "order"),
        ("space_to_depth1", (1, 1, 3, 6), (np.uint32, (1, 4, 1, 3)), 2, CRD, "input_tensor.buffer.sizes"),
        ("depth_to_space", (1, 8, 2, 3), (np.uint32, (1, 2, 4, 6)), 0, None, "block_size"),
        ("depth_to_space", (1, 6, 2, 3), (np.uint32, (1, 1, 4, 6)), 2, None, "input_tensor.buffer.sizes"),
        ("depth_to_space", (1, 8, 2, 3), (np.uint32, (1, 8, 2, 3)), 2, None, "output_tensor.buffer.sizes"),
        ("depth_to_space1", (1, 8, 2, 3), (np.uint32, (1, 2, 4, 6)), 2, 7, "order"),
        ("depth_to_space1", (1, 8, 2, 3), (np.uint32, (1, 2, 4, 5)), 2, CRD, "output_tensor.buffer.sizes"),
    ],
)
def test_depth_space_validation(
    client: dmlrpc.Client, case: str, x_shape: Any, out: Any, block: int, order: Any, field: str
) -> None:
    x = np.zeros(x_shape, np.uint32)
    expect_invalid(client, depth_space_desc(case, x, out, block, order), [x], f"operator_desc.{case}.{field}")


# --- REVERSE_SUBSEQUENCES ----------------------------------------------------------------------------------------


def reverse_desc(x: Any, lengths: Any, out: Any, axis: int, layout: Any = None) -> Any:
    layout = layout or {}
    return operators_pb2.OperatorDesc(
        reverse_subsequences=operators_pb2.ReverseSubsequencesOperatorDesc(
            input_tensor=tensor_desc(x, layout.get("input")),
            sequence_lengths_tensor=tensor_desc(lengths, layout.get("lengths")),
            output_tensor=tensor_desc(out, layout.get("output")),
            axis=axis,
        )
    )


RS_INPUT = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4)


def test_reverse_subsequences_examples(client: dmlrpc.Client) -> None:
    lengths = np.array([2, 4, 3], np.uint32).reshape(1, 1, 3, 1)
    out = run_one(client, reverse_desc(RS_INPUT, lengths, RS_INPUT, 3), [RS_INPUT, lengths])
    np.testing.assert_array_equal(out[0, 0], [[2, 1, 3, 4], [8, 7, 6, 5], [11, 10, 9, 12]])
    lengths = np.array([2, 3, 1, 0], np.uint32).reshape(1, 1, 1, 4)
    out = run_one(client, reverse_desc(RS_INPUT, lengths, RS_INPUT, 2), [RS_INPUT, lengths])
    np.testing.assert_array_equal(out[0, 0], [[5, 10, 3, 4], [1, 6, 7, 8], [9, 2, 11, 12]])


@settings(max_examples=25)
@given(shape=shapes(), data=st.data())
def test_reverse_subsequences_matches_reference(
    client: dmlrpc.Client, shape: tuple[int, ...], data: st.DataObject
) -> None:
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    dtype = data.draw(st.sampled_from(dtypes_of("reverse_subsequences")), label="dtype")
    length_dtype = data.draw(
        st.sampled_from(dtypes_of("reverse_subsequences", "sequence_lengths_tensor")), label="length dtype"
    )
    x, in_strides, _ = data.draw(laid_out(dtype, shape))
    length_shape = tuple(1 if d == axis else n for d, n in enumerate(shape))
    lengths = np.array(
        data.draw(
            st.lists(st.integers(0, shape[axis]), min_size=math.prod(length_shape), max_size=math.prod(length_shape)),
            label="lengths",
        ),
        dtype=length_dtype,
    ).reshape(length_shape)
    length_layout = data.draw(layouts(length_shape, allow_broadcast=True), label="lengths layout")
    lengths = broadcast_values(lengths, length_layout)
    out_layout = data.draw(layouts(shape, allow_broadcast=False), label="output layout")
    strides = {"input": in_strides, "lengths": length_layout.strides, "output": out_layout.strides}
    out = run_one(client, reverse_desc(x, lengths, (dtype, shape), axis, strides), [x, lengths])
    assert out.dtype == np.dtype(dtype) and out.shape == shape
    np.testing.assert_array_equal(out, ref.reverse_subsequences(x, lengths, axis))


@pytest.mark.parametrize(
    ("lengths_shape", "out", "axis", "field"),
    [
        ((1, 1, 3, 1), (np.float32, (1, 1, 3, 4)), 4, "axis"),
        ((1, 1, 3, 2), (np.float32, (1, 1, 3, 4)), 3, "sequence_lengths_tensor.buffer.sizes"),
        ((1, 1, 3, 1), (np.float32, (1, 1, 3, 5)), 3, "output_tensor.buffer.sizes"),
        ((1, 1, 3, 1), (np.float16, (1, 1, 3, 4)), 3, "output_tensor.buffer.data_type"),
    ],
)
def test_reverse_subsequences_validation(
    client: dmlrpc.Client, lengths_shape: Any, out: Any, axis: int, field: str
) -> None:
    lengths = np.ones(lengths_shape, np.uint32)
    desc = reverse_desc(RS_INPUT, lengths, out, axis)
    expect_invalid(client, desc, [RS_INPUT, lengths], f"operator_desc.reverse_subsequences.{field}")


@pytest.mark.parametrize("length_dtype", [np.uint32, np.uint64])
def test_reverse_subsequences_length_beyond_the_axis_is_refused(client: dmlrpc.Client, length_dtype: Any) -> None:
    lengths = np.array([2, 5, 3], length_dtype).reshape(1, 1, 3, 1)
    desc = reverse_desc(RS_INPUT, lengths, RS_INPUT, 3)
    expect_invalid(client, desc, [RS_INPUT, lengths], "inputs[1].buffer.data")


def test_padding1_value_is_not_read_outside_constant_mode(client: dmlrpc.Client) -> None:
    # The page: PaddingValue is ignored outside CONSTANT mode, so an unset union is accepted there.
    desc = padding1_desc(PAD_INPUT, (np.float32, (1, 1, 5, 5)), EDGE, [0, 0, 1, 1], [0, 0, 0, 0], 0.0)
    desc.padding1.ClearField("padding_value")
    out = run_one(client, desc, [PAD_INPUT])
    np.testing.assert_array_equal(out, np.pad(PAD_INPUT, [(0, 0), (0, 0), (1, 0), (1, 0)], mode="edge"))
