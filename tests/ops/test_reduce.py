"""REDUCE, ARGMIN and ARGMAX over the wire: the pages' examples exactly, and properties against the NumPy reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.operators import REGISTRY
from tests.references import reduce as ref
from tests.strategies import arrays, broadcast_values, layouts, shapes

FL64 = operators_pb2.FEATURE_LEVEL_6_4
RF = operators_pb2.ReduceFunction
INC, DEC = tensor_pb2.AXIS_DIRECTION_INCREASING, tensor_pb2.AXIS_DIRECTION_DECREASING
INDEX_DTYPES = [np.int32, np.int64, np.uint32, np.uint64]

# REDUCE's per-function input types at feature level 6.4, transcribed from the page's tables by function group.
_F = [np.float32, np.float16]
_INT_ARITH = [*_F, np.int64, np.int32, np.uint64, np.uint32]
_ALL10 = [*_F, np.int64, np.int32, np.int16, np.int8, np.uint64, np.uint32, np.uint16, np.uint8]
REDUCE_TYPES: dict[str, list[Any]] = {
    "ARGMAX": _ALL10,
    "ARGMIN": _ALL10,
    "AVERAGE": _F,
    "L2": _F,
    "LOG_SUM": _F,
    "LOG_SUM_EXP": _F,
    "L1": _INT_ARITH,
    "SUM_SQUARE": _INT_ARITH,
    "MIN": _ALL10,
    "MAX": _ALL10,
    "MULTIPLY": _INT_ARITH,
    "SUM": _INT_ARITH,
}

PAGE_X = np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], np.float32)
ARG_X = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32)


def run(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The outputs of one execution, as host arrays."""
    outputs = client.execute(desc, inputs)
    assert all(isinstance(out, np.ndarray) for out in outputs)
    return [out for out in outputs if isinstance(out, np.ndarray)]


def _dtypes(case: str, field: str) -> list[Any]:
    table = REGISTRY[case].support_at(FL64)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table[field].data_types), key=str)


def reduce_desc(
    x: np.ndarray,
    function: int,
    axes: list[int],
    *,
    out_dtype: Any = None,
    out_shape: tuple[int, ...] | None = None,
    axis_count: int | None = None,
    strides: dict[str, tuple[int, ...] | None] | None = None,
) -> operators_pb2.OperatorDesc:
    strides = strides or {}
    if out_dtype is None:
        out_dtype = np.uint32 if function in (RF.REDUCE_FUNCTION_ARGMAX, RF.REDUCE_FUNCTION_ARGMIN) else x.dtype
    if out_shape is None:
        out_shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape))
    return operators_pb2.OperatorDesc(
        reduce=operators_pb2.ReduceOperatorDesc(
            function=function,  # type: ignore[arg-type]
            input_tensor=tensor_desc(x, strides.get("input")),
            output_tensor=tensor_desc((out_dtype, out_shape), strides.get("output")),
            axis_count=len(axes) if axis_count is None else axis_count,
            axes=axes,
        )
    )


def arg_desc(
    case: str,
    x: np.ndarray,
    axes: list[int],
    direction: int,
    *,
    out_dtype: Any = np.uint32,
    out_shape: tuple[int, ...] | None = None,
    strides: dict[str, tuple[int, ...] | None] | None = None,
) -> operators_pb2.OperatorDesc:
    strides = strides or {}
    if out_shape is None:
        out_shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape))
    message = operators_pb2.ArgminOperatorDesc if case == "argmin" else operators_pb2.ArgmaxOperatorDesc
    inner = message(
        input_tensor=tensor_desc(x, strides.get("input")),
        output_tensor=tensor_desc((out_dtype, out_shape), strides.get("output")),
        axis_count=len(axes),
        axes=axes,
        axis_direction=direction,  # type: ignore[arg-type]
    )
    desc = operators_pb2.OperatorDesc()
    getattr(desc, case).CopyFrom(inner)
    return desc


@pytest.mark.parametrize(
    ("axes", "expected"),
    [([0], [[6, 6, 9]]), ([1], [[6], [7], [8]]), ([0, 1], [[21]])],
)
def test_reduce_sum_page_examples(client: dmlrpc.Client, axes: list[int], expected: list[list[int]]) -> None:
    (out,) = run(client, reduce_desc(PAGE_X, RF.REDUCE_FUNCTION_SUM, axes), [PAGE_X])
    assert out is not None and out.dtype == np.float32
    np.testing.assert_array_equal(out, np.array(expected, np.float32))


ARG_EXAMPLES = [
    ("argmin", [0], [[0, 1, 2]]),
    ("argmin", [1], [[0], [1], [0]]),
    ("argmin", [0, 1], [[4]]),
    ("argmax", [0], [[1, 2, 1]]),
    ("argmax", [1], [[2], [2], [1]]),
    ("argmax", [0, 1], [[7]]),
]


@pytest.mark.parametrize(("case", "axes", "expected"), ARG_EXAMPLES)
def test_arg_page_examples(client: dmlrpc.Client, case: str, axes: list[int], expected: list[list[int]]) -> None:
    (out,) = run(client, arg_desc(case, ARG_X, axes, INC), [ARG_X])
    assert out is not None and out.dtype == np.uint32
    np.testing.assert_array_equal(out, np.array(expected, np.uint32))
    # With INCREASING, ARGMIN/ARGMAX equal REDUCE's ARGMIN/ARGMAX.
    function = RF.REDUCE_FUNCTION_ARGMIN if case == "argmin" else RF.REDUCE_FUNCTION_ARGMAX
    (same,) = run(client, reduce_desc(ARG_X, function, axes), [ARG_X])
    np.testing.assert_array_equal(same, out)


@pytest.mark.parametrize(("case", "x"), [("argmin", [1, 2, 3, 2, 1]), ("argmax", [3, 2, 1, 2, 3])])
def test_arg_direction_page_examples(client: dmlrpc.Client, case: str, x: list[int]) -> None:
    values = np.array(x, np.float32)
    (first,) = run(client, arg_desc(case, values, [0], INC), [values])
    (last,) = run(client, arg_desc(case, values, [0], DEC), [values])
    assert first is not None and last is not None
    assert first.tolist() == [0] and last.tolist() == [4]


def test_integer_sums_wrap_and_stay_exact(client: dmlrpc.Client) -> None:
    x = np.array([2**53, 1, 1, 1, 2**62, 2**62], np.int64)
    (out,) = run(client, reduce_desc(x, RF.REDUCE_FUNCTION_SUM, [0]), [x])
    np.testing.assert_array_equal(out, ref.reduce(x, [0], "SUM"))
    y = np.array([2**32 - 1, 2, 3], np.uint32)
    (prod,) = run(client, reduce_desc(y, RF.REDUCE_FUNCTION_MULTIPLY, [0]), [y])
    assert prod is not None and prod.tolist() == [((2**32 - 1) * 6) % 2**32]


def test_uint64_extremes(client: dmlrpc.Client) -> None:
    x = np.array([[0, 2**64 - 1, 2**63, 2**63 - 1, 1]], np.uint64)
    (high,) = run(client, reduce_desc(x, RF.REDUCE_FUNCTION_MAX, [1]), [x])
    (low,) = run(client, reduce_desc(x, RF.REDUCE_FUNCTION_MIN, [1]), [x])
    (where,) = run(client, arg_desc("argmax", x, [1], INC, out_dtype=np.uint64), [x])
    assert high is not None and low is not None and where is not None
    assert high.tolist() == [[2**64 - 1]] and low.tolist() == [[0]] and where.tolist() == [[1]]


def test_64_bit_max_and_min_are_exact(client: dmlrpc.Client) -> None:
    # Past 2**53 a floating-point accumulator rounds (CUDA's ReduceMax of INT64 did; UINT64's order mapping put even
    # small values there: MAX of [2, 4, 0] came back 0).
    big = np.array([[2**62 + 1, 2**62 + 3, 2**62 + 2]], np.int64)
    small = np.array([[2, 4, 0, 2, 3]], np.uint64)
    for x in (big, small, -big):
        (high,) = run(client, reduce_desc(x, RF.REDUCE_FUNCTION_MAX, [0, 1]), [x])
        (low,) = run(client, reduce_desc(x, RF.REDUCE_FUNCTION_MIN, [0, 1]), [x])
        assert high is not None and low is not None
        assert high.tolist() == [[int(x.max())]] and low.tolist() == [[int(x.min())]]


def _values(data: st.DataObject, dtype: Any, shape: tuple[int, ...], function: str) -> np.ndarray:
    x = data.draw(arrays(dtype, shape), label="x")
    if function == "LOG_SUM":
        x = np.abs(x)  # log of a sum near 0 is ill-conditioned; DirectML gives NaN for negative sums
    return x


def _compare(got: np.ndarray, expected: np.ndarray) -> None:
    if got.dtype.kind == "f":
        tolerance = 4e-3 if got.dtype == np.float16 else 1e-4
        np.testing.assert_allclose(
            got.astype(np.float64), expected.astype(np.float64), rtol=tolerance, atol=tolerance, equal_nan=True
        )
    else:
        np.testing.assert_array_equal(got, expected)


@st.composite
def _reduction(draw: st.DrawFn) -> tuple[tuple[int, ...], list[int]]:
    shape = draw(shapes())
    axes = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True))
    return shape, axes


@settings(max_examples=30)
@given(data=st.data())
def test_reduce_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(ref.FUNCTIONS), label="function")
    union = _dtypes("reduce", "input_tensor")
    dtype = data.draw(st.sampled_from([t for t in REDUCE_TYPES[name] if np.dtype(t) in union]), label="dtype")
    shape, axes = data.draw(_reduction(), label="shape, axes")
    arg = name in ("ARGMAX", "ARGMIN")
    out_dtype = data.draw(st.sampled_from(INDEX_DTYPES), label="index dtype") if arg else dtype
    out_shape = tuple(1 if d in axes else s for d, s in enumerate(shape))
    input_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    output_layout = data.draw(layouts(out_shape, allow_broadcast=False), label="output layout")
    x = broadcast_values(_values(data, dtype, shape, name), input_layout)
    desc = reduce_desc(
        x,
        RF.Value(f"REDUCE_FUNCTION_{name}"),
        axes,
        out_dtype=out_dtype,
        strides={"input": input_layout.strides, "output": output_layout.strides},
    )
    (out,) = run(client, desc, [x])
    assert out is not None and out.dtype == np.dtype(out_dtype) and out.shape == out_shape
    _compare(out, ref.reduce(x, axes, name).astype(out_dtype))


@settings(max_examples=30)
@given(data=st.data())
def test_arg_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    case = data.draw(st.sampled_from(["argmin", "argmax"]), label="case")
    dtype = data.draw(st.sampled_from(_dtypes(case, "input_tensor")), label="dtype")
    out_dtype = data.draw(st.sampled_from(_dtypes(case, "output_tensor")), label="index dtype")
    shape, axes = data.draw(_reduction(), label="shape, axes")
    direction = data.draw(st.sampled_from([INC, DEC]), label="direction")
    out_shape = tuple(1 if d in axes else s for d, s in enumerate(shape))
    input_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    output_layout = data.draw(layouts(out_shape, allow_broadcast=False), label="output layout")
    x = broadcast_values(data.draw(arrays(dtype, shape), label="x"), input_layout)
    desc = arg_desc(
        case,
        x,
        axes,
        direction,
        out_dtype=out_dtype,
        strides={"input": input_layout.strides, "output": output_layout.strides},
    )
    (out,) = run(client, desc, [x])
    assert out is not None and out.dtype == out_dtype and out.shape == out_shape
    expected = ref.arg_extreme(x, axes, largest=case == "argmax", last=direction == DEC)
    np.testing.assert_array_equal(out, expected.astype(out_dtype))


def _rejects(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, x: np.ndarray, field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, [x])
    assert caught.value.field_violations[0].field == field


X = np.arange(6, dtype=np.float32).reshape(2, 3)
SUM = RF.REDUCE_FUNCTION_SUM
P = "operator_desc.reduce"


@pytest.mark.parametrize(
    ("desc", "x", "field"),
    [
        (reduce_desc(X, 12, [0]), X, f"{P}.function"),
        (
            reduce_desc(X.astype(np.int32), RF.REDUCE_FUNCTION_AVERAGE, [0]),
            X.astype(np.int32),
            f"{P}.input_tensor.buffer.data_type",
        ),
        (reduce_desc(X.astype(np.int8), SUM, [0]), X.astype(np.int8), f"{P}.input_tensor.buffer.data_type"),
        (reduce_desc(X, SUM, [0], out_dtype=np.float16), X, f"{P}.output_tensor.buffer.data_type"),
        (
            reduce_desc(X, RF.REDUCE_FUNCTION_ARGMAX, [0], out_dtype=np.float32),
            X,
            f"{P}.output_tensor.buffer.data_type",
        ),
        (reduce_desc(X, SUM, [0], axis_count=2), X, f"{P}.axis_count"),
        (reduce_desc(X, SUM, [2], out_shape=(2, 3)), X, f"{P}.axes[0]"),
        (reduce_desc(X, SUM, [1, 1], out_shape=(2, 1)), X, f"{P}.axes"),
        (reduce_desc(X, SUM, [], out_shape=(2, 3)), X, f"{P}.axes"),
        (reduce_desc(X, SUM, [0], out_shape=(2, 3)), X, f"{P}.output_tensor.buffer.sizes"),
        (reduce_desc(X, SUM, [0], out_shape=(3,)), X, f"{P}.output_tensor.buffer.dimension_count"),
    ],
)
def test_reduce_rejects(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, x: np.ndarray, field: str) -> None:
    _rejects(client, desc, x, field)


@pytest.mark.parametrize("case", ["argmin", "argmax"])
def test_arg_rejects(client: dmlrpc.Client, case: str) -> None:
    p = f"operator_desc.{case}"
    _rejects(client, arg_desc(case, X, [0], 2), X, f"{p}.axis_direction")
    _rejects(client, arg_desc(case, X, [0], INC, out_dtype=np.float32), X, f"{p}.output_tensor.buffer.data_type")
    _rejects(client, arg_desc(case, X, [0], INC, out_shape=(1, 1)), X, f"{p}.output_tensor.buffer.sizes")
    _rejects(client, arg_desc(case, X, [0], INC, out_shape=(3,)), X, f"{p}.output_tensor.buffer.dimension_count")
    _rejects(client, arg_desc(case, X, [5], INC, out_shape=(2, 3)), X, f"{p}.axes[0]")
    _rejects(client, arg_desc(case, X, [0, 0], INC, out_shape=(1, 3)), X, f"{p}.axes")
    bad = arg_desc(case, X, [0], INC)
    getattr(bad, case).axis_count = 2
    _rejects(client, bad, X, f"{p}.axis_count")
    x64 = X.astype(np.float64)
    _rejects(client, arg_desc(case, x64, [0], INC), x64, f"{p}.input_tensor.buffer.data_type")
