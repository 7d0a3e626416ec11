"""ONE_HOT, FILL_VALUE_CONSTANT/SEQUENCE, DIAGONAL_MATRIX(1) and NONZERO_COORDINATES over the wire: the pages'
examples exactly, properties against the NumPy references, and every documented rule refused by field."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DATA_TYPE_BY_DTYPE, DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.operators import REGISTRY
from tests.references import generators as ref
from tests.strategies import arrays, broadcast_values, layouts, shapes

FL_6_4 = operators_pb2.FEATURE_LEVEL_6_4
OD = operators_pb2.OperatorDesc

_MEMBER = {
    np.dtype("i1"): "int8",
    np.dtype("u1"): "uint8",
    np.dtype("<i2"): "int16",
    np.dtype("<u2"): "uint16",
    np.dtype("<i4"): "int32",
    np.dtype("<u4"): "uint32",
    np.dtype("<i8"): "int64",
    np.dtype("<u8"): "uint64",
    np.dtype("<f4"): "float32",
    np.dtype("<f8"): "float64",
    np.dtype("<f2"): "float32",  # DML_SCALAR_UNION has no FLOAT16 member: it travels as Float32
}


def dtypes(case: str, field: str) -> list[np.dtype[Any]]:
    """The data types the operator's support table accepts for ``field`` at feature level 6.4, in a fixed order."""
    table = REGISTRY[case].support_at(FL_6_4)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table[field].data_types), key=str)


def dims(case: str, field: str) -> tuple[int, int]:
    table = REGISTRY[case].support_at(FL_6_4)
    assert table is not None
    return table[field].min_dimension_count, table[field].max_dimension_count


def data_type(dtype: Any) -> Any:
    return DATA_TYPE_BY_DTYPE[np.dtype(dtype)]


def scalar(value: Any, dtype: Any) -> operators_pb2.ScalarUnion:
    member = _MEMBER[np.dtype(dtype)]
    union = operators_pb2.ScalarUnion()
    setattr(union, member, float(value) if member.startswith("float") else int(value))
    return union


def out(dtype: Any, shape: Sequence[int], strides: Sequence[int] | None = None) -> Any:
    return tensor_desc((dtype, tuple(shape)), strides)


def one_hot_desc(
    indices: np.ndarray, values: np.ndarray, axis: int, depth: int, strides: dict[str, Any] | None = None
) -> OD:
    strides = strides or {}
    shape = list(indices.shape)
    shape[axis] = depth
    return OD(
        one_hot=operators_pb2.OneHotOperatorDesc(
            indices_tensor=tensor_desc(indices, strides.get("indices")),
            values_tensor=tensor_desc(values, strides.get("values")),
            output_tensor=out(values.dtype, shape, strides.get("output")),
            axis=axis,
        )
    )


def fill_constant_desc(dtype: Any, shape: Sequence[int], value: Any, strides: Sequence[int] | None = None) -> OD:
    return OD(
        fill_value_constant=operators_pb2.FillValueConstantOperatorDesc(
            output_tensor=out(dtype, shape, strides), value_data_type=data_type(dtype), value=scalar(value, dtype)
        )
    )


def fill_sequence_desc(
    dtype: Any, shape: Sequence[int], start: Any, delta: Any, strides: Sequence[int] | None = None
) -> OD:
    return OD(
        fill_value_sequence=operators_pb2.FillValueSequenceOperatorDesc(
            output_tensor=out(dtype, shape, strides),
            value_data_type=data_type(dtype),
            value_start=scalar(start, dtype),
            value_delta=scalar(delta, dtype),
        )
    )


def diagonal_desc(dtype: Any, shape: Sequence[int], offset: int, value: float, strides: Any = None) -> OD:
    return OD(
        diagonal_matrix=operators_pb2.DiagonalMatrixOperatorDesc(
            output_tensor=out(dtype, shape, strides), offset=offset, value=value
        )
    )


def diagonal1_desc(
    dtype: Any,
    shape: Sequence[int],
    begin: int,
    end: int,
    value: Any,
    x: np.ndarray | None = None,
    strides: dict[str, Any] | None = None,
) -> OD:
    strides = strides or {}
    desc = operators_pb2.DiagonalMatrix1OperatorDesc(
        output_tensor=out(dtype, shape, strides.get("output")),
        value_data_type=data_type(dtype),
        value=scalar(value, dtype),
        diagonal_fill_begin=begin,
        diagonal_fill_end=end,
    )
    if x is not None:
        desc.input_tensor.CopyFrom(tensor_desc(x, strides.get("input")))
    return OD(diagonal_matrix1=desc)


def nonzero_desc(
    x: np.ndarray, columns: int, count_rank: int | None = None, strides: dict[str, Any] | None = None
) -> OD:
    strides = strides or {}
    rank = x.ndim if count_rank is None else count_rank
    coordinates_shape = (1,) * max(0, x.ndim - 2) + (x.size, columns)
    return OD(
        nonzero_coordinates=operators_pb2.NonzeroCoordinatesOperatorDesc(
            input_tensor=tensor_desc(x, strides.get("input")),
            output_count_tensor=out(np.uint32, (1,) * rank, strides.get("count")),
            output_coordinates_tensor=out(np.uint32, coordinates_shape, strides.get("coordinates")),
        )
    )


def refused(client: dmlrpc.Client, desc: OD, inputs: Sequence[Any], field: str) -> None:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, list(inputs))
    assert caught.value.field_violations[0].field == field, caught.value.message


# ---------------------------------------------------------------------------------------------------------------
# The pages' worked examples.

F = np.float32
VALUES_01 = np.array([0, 1], F).reshape(1, 1, 1, 2)

ONE_HOT_EXAMPLES = [
    (
        np.array([0, 3, 2], np.uint32).reshape(1, 1, 3, 1),
        VALUES_01,
        3,
        [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]],
    ),
    (
        np.array([0, 2, 1, 0], np.uint32).reshape(1, 1, 1, 4),
        VALUES_01,
        2,
        [[1, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0]],
    ),
    (
        np.array([0, 3, 2], np.uint32).reshape(1, 1, 3, 1),
        np.array([4, 2, 9], F).reshape(1, 1, 3, 1),
        3,
        [[2, 4, 4, 4], [4, 4, 4, 2], [4, 4, 2, 4]],
    ),
    (
        np.array([-3, 100, 3], np.int32).reshape(1, 1, 3, 1),
        VALUES_01,
        3,
        [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]],
    ),
]


@pytest.mark.parametrize(("indices", "values", "axis", "expected"), ONE_HOT_EXAMPLES)
def test_one_hot_examples(
    client: dmlrpc.Client, indices: np.ndarray, values: np.ndarray, axis: int, expected: list[list[int]]
) -> None:
    (result,) = client.execute(one_hot_desc(indices, values, axis, 4 if axis == 3 else 3), [indices, values])
    assert isinstance(result, np.ndarray) and result.dtype == F
    np.testing.assert_array_equal(result, np.array(expected, F).reshape(1, 1, 3, 4))


def test_fill_value_constant_example(client: dmlrpc.Client) -> None:
    (result,) = client.execute(fill_constant_desc(F, (1, 1, 2, 4), 13.0), [])
    assert isinstance(result, np.ndarray) and result.dtype == F
    np.testing.assert_array_equal(result, np.full((1, 1, 2, 4), 13.0, F))


def test_a_float16_value_beyond_its_range_fills_infinity(client: dmlrpc.Client) -> None:
    # A FLOAT16 scalar travels in the union's FLOAT32 member; beyond FLOAT16's range it rounds to +-inf, as
    # PADDING's value does (before: an overflow warning, which failed the call wherever warnings are errors).
    (result,) = client.execute(fill_constant_desc(np.float16, (1, 1, 1, 2), 1e5), [])
    np.testing.assert_array_equal(result, np.full((1, 1, 1, 2), np.inf, np.float16))
    (result,) = client.execute(fill_constant_desc(np.float16, (1, 1, 1, 2), -65519.99), [])
    np.testing.assert_array_equal(result, np.full((1, 1, 1, 2), -65504, np.float16))


def test_fill_value_sequence_examples(client: dmlrpc.Client) -> None:
    (first,) = client.execute(fill_sequence_desc(F, (1, 1, 1, 3), 3, 2), [])
    np.testing.assert_array_equal(first, np.array([3, 5, 7], F).reshape(1, 1, 1, 3))
    # ValueDelta -2 of the UINT8 example: the union's Uint8 member holds 254, its two's complement.
    (second,) = client.execute(fill_sequence_desc(np.uint8, (1, 1, 2, 2), 10, 254), [])
    assert isinstance(second, np.ndarray) and second.dtype == np.uint8
    np.testing.assert_array_equal(second, np.array([[10, 8], [6, 4]], np.uint8).reshape(1, 1, 2, 2))


def test_fill_value_sequence_delta_as_raw_bytes(client: dmlrpc.Client) -> None:
    desc = fill_sequence_desc(np.uint8, (1, 1, 2, 2), 10, 0)
    desc.fill_value_sequence.value_delta.CopyFrom(operators_pb2.ScalarUnion(bytes=bytes([0xFE] + [0xFF] * 7)))
    (result,) = client.execute(desc, [])
    np.testing.assert_array_equal(result, np.array([[10, 8], [6, 4]], np.uint8).reshape(1, 1, 2, 2))


DIAGONAL_EXAMPLES = [
    (0, (1, 1, 3, 3), [[1, 0, 0], [0, 1, 0], [0, 0, 1]]),
    (1, (1, 1, 3, 3), [[0, 1, 0], [0, 0, 1], [0, 0, 0]]),
    (-1, (1, 1, 3, 2), [[0, 0], [1, 0], [0, 1]]),
    (-3, (1, 1, 3, 2), [[0, 0], [0, 0], [0, 0]]),
]


@pytest.mark.parametrize(("offset", "shape", "expected"), DIAGONAL_EXAMPLES)
def test_diagonal_matrix_examples(
    client: dmlrpc.Client, offset: int, shape: tuple[int, ...], expected: list[list[int]]
) -> None:
    (result,) = client.execute(diagonal_desc(F, shape, offset, 1.0), [])
    np.testing.assert_array_equal(result, np.array(expected, F).reshape(shape))


def test_diagonal_matrix_truncates_value_for_integers(client: dmlrpc.Client) -> None:
    (result,) = client.execute(diagonal_desc(np.int32, (2, 2), 0, 10.6), [])
    np.testing.assert_array_equal(result, np.array([[10, 0], [0, 10]], np.int32))
    (negative,) = client.execute(diagonal_desc(np.int8, (2, 2), 0, -10.6), [])
    np.testing.assert_array_equal(negative, np.array([[-10, 0], [0, -10]], np.int8))


X_4X5 = np.array([[4, 7, 3, 7, 9], [1, 2, 8, 6, 9], [9, 4, 1, 8, 7], [4, 3, 4, 2, 4]], F)
INT32_MIN = -(2**31)

DIAGONAL1_EXAMPLES = [
    # The page draws 1s for its first example although Value is 7; its pseudocode writes Value, as we do.
    (None, 7, 0, 1, [[7, 0, 0, 0, 0], [0, 7, 0, 0, 0], [0, 0, 7, 0, 0], [0, 0, 0, 7, 0]]),
    (None, 7, 0, 3, [[7, 7, 7, 0, 0], [0, 7, 7, 7, 0], [0, 0, 7, 7, 7], [0, 0, 0, 7, 7]]),
    (X_4X5, 0, INT32_MIN, 1, [[0, 7, 3, 7, 9], [0, 0, 8, 6, 9], [0, 0, 0, 8, 7], [0, 0, 0, 0, 4]]),
    (X_4X5, 0, 1, 0, [[4, 0, 0, 0, 0], [0, 2, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 2, 0]]),
]


@pytest.mark.parametrize(("x", "value", "begin", "end", "expected"), DIAGONAL1_EXAMPLES)
def test_diagonal_matrix1_examples(
    client: dmlrpc.Client, x: np.ndarray | None, value: int, begin: int, end: int, expected: list[list[int]]
) -> None:
    (result,) = client.execute(diagonal1_desc(F, (4, 5), begin, end, value, x), [x])
    np.testing.assert_array_equal(result, np.array(expected, F))


def test_diagonal_matrix1_is_diagonal_matrix_with_a_one_wide_range(client: dmlrpc.Client) -> None:
    for offset in (-2, 0, 3):
        (one,) = client.execute(diagonal1_desc(F, (2, 3, 4), offset, offset + 1, 2.5), [None])
        (zero,) = client.execute(diagonal_desc(F, (2, 3, 4), offset, 2.5), [])
        np.testing.assert_array_equal(one, zero)


def test_nonzero_coordinates_example(client: dmlrpc.Client) -> None:
    x = np.array([[1.0, 0.0, 0.0, 2.0], [-0.0, 3.5, 0.0, -5.2]], F).reshape(1, 1, 2, 4)
    count, coordinates = client.execute(nonzero_desc(x, 3), [x])
    assert isinstance(count, np.ndarray) and isinstance(coordinates, np.ndarray)
    assert count.dtype == np.uint32 and coordinates.dtype == np.uint32
    np.testing.assert_array_equal(count, np.array([4], np.uint32).reshape(1, 1, 1, 1))
    assert coordinates.shape == (1, 1, 8, 3)
    np.testing.assert_array_equal(coordinates[0, 0, :4], [[0, 0, 0], [0, 0, 3], [0, 1, 1], [0, 1, 3]])
    # The page leaves the other rows undefined; the service writes zeros.
    np.testing.assert_array_equal(coordinates[0, 0, 4:], np.zeros((4, 3), np.uint32))


def test_nonzero_coordinates_all_zero_and_ascending_order(client: dmlrpc.Client) -> None:
    x = np.zeros((2, 6), np.int16)
    count, coordinates = client.execute(nonzero_desc(x, 2), [x])
    assert count is not None and int(np.asarray(count).reshape(-1)[0]) == 0
    np.testing.assert_array_equal(coordinates, np.zeros((12, 2), np.uint32))
    x[1, 0] = x[1, 2] = x[0, 5] = 3
    count, coordinates = client.execute(nonzero_desc(x, 2), [x])
    assert count is not None and int(np.asarray(count).reshape(-1)[0]) == 3
    np.testing.assert_array_equal(np.asarray(coordinates)[:3], [[0, 5], [1, 0], [1, 2]])


# ---------------------------------------------------------------------------------------------------------------
# Properties against the references.


def integer_scalars(dtype: np.dtype[Any]) -> st.SearchStrategy[int]:
    info = np.iinfo(dtype)
    return st.one_of(
        st.integers(max(int(info.min), -5), min(int(info.max), 5)), st.integers(int(info.min), int(info.max))
    )


def float_scalars() -> st.SearchStrategy[float]:
    """Values FLOAT16 holds exactly (the union carries FLOAT16 values in its Float32 member)."""
    return st.floats(-100, 100, width=16).map(float)


@settings(max_examples=25)
@given(data=st.data())
def test_one_hot_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes("one_hot", "output_tensor")), label="dtype")
    index_dtype = data.draw(st.sampled_from(dtypes("one_hot", "indices_tensor")), label="index dtype")
    low, high = dims("one_hot", "output_tensor")
    shape = data.draw(shapes(min_dims=low, max_dims=high), label="output shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    depth = shape[axis]
    index_shape = list(shape)
    index_shape[axis] = 1
    signed = np.dtype(index_dtype).kind == "i"
    info = np.iinfo(index_dtype)
    values_in_range = st.integers(-depth if signed else 0, depth - 1)
    wild = st.integers(int(info.min), int(info.max))
    indices = data.draw(
        st.lists(
            st.one_of(values_in_range, values_in_range, wild),
            min_size=math.prod(index_shape),
            max_size=math.prod(index_shape),
        ),
        label="indices",
    )
    index_array = np.array(indices, index_dtype).reshape(index_shape)
    value_shape = data.draw(
        shapes(min_dims=len(shape), max_dims=len(shape), max_side=3).filter(lambda s: math.prod(s) >= 2),
        label="values shape",
    )
    values = data.draw(arrays(dtype, value_shape), label="values")
    strides: dict[str, Any] = {}
    for name, value_shape_, broadcast in (
        ("indices", tuple(index_shape), True),
        ("values", value_shape, True),
        ("output", shape, False),
    ):
        layout = data.draw(layouts(tuple(value_shape_), allow_broadcast=broadcast), label=f"{name} layout")
        strides[name] = layout.strides
        if name == "indices":
            index_array = broadcast_values(index_array, layout)
        elif name == "values":
            values = broadcast_values(values, layout)
    (result,) = client.execute(one_hot_desc(index_array, values, axis, depth, strides), [index_array, values])
    assert isinstance(result, np.ndarray) and result.dtype == dtype and result.shape == shape
    np.testing.assert_array_equal(result, ref.one_hot(index_array, values, axis, depth))


@settings(max_examples=20)
@given(data=st.data())
def test_fill_value_constant_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes("fill_value_constant", "output_tensor")), label="dtype")
    low, high = dims("fill_value_constant", "output_tensor")
    shape = data.draw(shapes(min_dims=low, max_dims=high), label="shape")
    value = data.draw(float_scalars() if dtype.kind == "f" else integer_scalars(dtype), label="value")
    layout = data.draw(layouts(shape, allow_broadcast=False), label="layout")
    (result,) = client.execute(fill_constant_desc(dtype, shape, value, layout.strides), [])
    expected = np.full(shape, np.float32(value) if dtype.kind == "f" else value).astype(dtype)
    assert isinstance(result, np.ndarray) and result.dtype == dtype
    np.testing.assert_array_equal(result, expected)


@settings(max_examples=25)
@given(data=st.data())
def test_fill_value_sequence_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes("fill_value_sequence", "output_tensor")), label="dtype")
    low, high = dims("fill_value_sequence", "output_tensor")
    shape = data.draw(shapes(min_dims=low, max_dims=high), label="shape")
    scalars = float_scalars() if dtype.kind == "f" else integer_scalars(dtype)
    start = data.draw(scalars, label="start")
    delta = data.draw(scalars, label="delta")
    layout = data.draw(layouts(shape, allow_broadcast=False), label="layout")
    (result,) = client.execute(fill_sequence_desc(dtype, shape, start, delta, layout.strides), [])
    assert isinstance(result, np.ndarray) and result.dtype == dtype
    expected = ref.fill_value_sequence(start, delta, shape, dtype.type)
    if dtype.kind == "f":
        np.testing.assert_allclose(result.astype(np.float64), expected.astype(np.float64), rtol=1e-3, atol=1e-2)
    else:
        np.testing.assert_array_equal(result, expected)


@settings(max_examples=25)
@given(data=st.data())
def test_diagonal_matrix_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes("diagonal_matrix", "output_tensor")), label="dtype")
    low, high = dims("diagonal_matrix", "output_tensor")
    shape = data.draw(shapes(min_dims=low, max_dims=high), label="shape")
    offset = data.draw(st.one_of(st.integers(-7, 7), st.integers(-(2**31), 2**31 - 1)), label="offset")
    if dtype.kind == "f":
        value = data.draw(st.floats(-1e4, 1e4, width=32), label="value")
    else:
        info = np.iinfo(dtype)
        value = data.draw(st.floats(max(float(info.min), -1e6), min(float(info.max), 1e6), width=32), label="value")
        value = min(max(value, float(info.min)), float(info.max))
    layout = data.draw(layouts(shape, allow_broadcast=False), label="layout")
    (result,) = client.execute(diagonal_desc(dtype, shape, offset, value, layout.strides), [])
    assert isinstance(result, np.ndarray) and result.dtype == dtype
    np.testing.assert_array_equal(result, ref.diagonal_matrix(shape, offset, value, dtype.type))


@settings(max_examples=25)
@given(data=st.data())
def test_diagonal_matrix1_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes("diagonal_matrix1", "output_tensor")), label="dtype")
    low, high = dims("diagonal_matrix1", "output_tensor")
    shape = data.draw(shapes(min_dims=low, max_dims=high), label="shape")
    bound = st.one_of(st.integers(-7, 7), st.integers(-(2**31), 2**31 - 1))
    begin = data.draw(bound, label="begin")
    end = data.draw(bound, label="end")
    value: Any = data.draw(float_scalars() if dtype.kind == "f" else integer_scalars(dtype), label="value")
    strides: dict[str, Any] = {}
    x = None
    if data.draw(st.booleans(), label="with input"):
        input_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
        strides["input"] = input_layout.strides
        x = broadcast_values(data.draw(arrays(dtype.type, shape), label="x"), input_layout)
    strides["output"] = data.draw(layouts(shape, allow_broadcast=False), label="output layout").strides
    (result,) = client.execute(diagonal1_desc(dtype, shape, begin, end, value, x, strides), [x])
    assert isinstance(result, np.ndarray) and result.dtype == dtype
    np.testing.assert_array_equal(result, ref.diagonal_matrix1(shape, begin, end, value, dtype.type, x))


@settings(max_examples=25)
@given(data=st.data())
def test_nonzero_coordinates_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(dtypes("nonzero_coordinates", "input_tensor")), label="dtype")
    low, high = dims("nonzero_coordinates", "input_tensor")
    shape = data.draw(shapes(min_dims=max(low, 2), max_dims=high), label="shape")
    rank = len(shape)
    effective = rank - next((i for i, s in enumerate(shape) if s != 1), rank)
    columns = data.draw(st.integers(max(1, effective), rank), label="columns")
    sparse = st.sampled_from([0, 0, 0, 1, -1] if dtype.kind != "u" else [0, 0, 0, 1, 2])
    x = np.array(data.draw(st.lists(sparse, min_size=math.prod(shape), max_size=math.prod(shape))), dtype).reshape(
        shape
    )
    if dtype.kind == "f":
        x[x == 0] = -0.0 if data.draw(st.booleans(), label="negative zeros") else 0.0
    input_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    x = broadcast_values(x, input_layout)
    count_rank = data.draw(st.integers(1, 8), label="count rank")
    strides = {
        "input": input_layout.strides,
        "coordinates": data.draw(layouts((1,) * max(0, rank - 2) + (x.size, columns), allow_broadcast=False)).strides,
    }
    count, coordinates = client.execute(nonzero_desc(x, columns, count_rank, strides), [x])
    expected_count, expected_rows = ref.nonzero_coordinates(x, columns)
    assert isinstance(count, np.ndarray) and isinstance(coordinates, np.ndarray)
    assert count.shape == (1,) * count_rank and count.dtype == np.uint32
    assert int(count.reshape(-1)[0]) == expected_count
    np.testing.assert_array_equal(coordinates.reshape(x.size, columns), expected_rows)


# ---------------------------------------------------------------------------------------------------------------
# Every documented rule, broken once.

IDX = np.array([0, 3, 2], np.uint32).reshape(1, 1, 3, 1)


def one_hot_raw(indices: Any, values: Any, output: Any, axis: int = 3) -> OD:
    return OD(
        one_hot=operators_pb2.OneHotOperatorDesc(
            indices_tensor=indices, values_tensor=values, output_tensor=output, axis=axis
        )
    )


ONE_HOT_BAD = [
    (  # IndicesTensor, ValuesTensor and OutputTensor: one DimensionCount
        one_hot_raw(tensor_desc(IDX.reshape(1, 3, 1)), tensor_desc(VALUES_01), out(F, (1, 1, 3, 4)), axis=2),
        IDX.reshape(1, 3, 1),
        "indices_tensor.buffer.sizes",
    ),
    (
        one_hot_raw(tensor_desc(IDX), tensor_desc(VALUES_01.reshape(1, 2)), out(F, (1, 1, 3, 4))),
        IDX,
        "values_tensor.buffer.sizes",
    ),
    (  # OutputTensor typed as ValuesTensor
        one_hot_raw(tensor_desc(IDX), tensor_desc(VALUES_01), out(np.int32, (1, 1, 3, 4))),
        IDX,
        "output_tensor.buffer.data_type",
    ),
    (  # IndicesTensor sizes = OutputTensor's with 1 along Axis
        one_hot_raw(tensor_desc(IDX), tensor_desc(VALUES_01), out(F, (1, 1, 3, 4)), axis=2),
        IDX,
        "indices_tensor.buffer.sizes",
    ),
    (
        one_hot_raw(tensor_desc(IDX), tensor_desc(VALUES_01), out(F, (1, 2, 3, 4))),
        IDX,
        "indices_tensor.buffer.sizes",
    ),
    (  # ValuesTensor holds at least two elements
        one_hot_raw(tensor_desc(IDX), tensor_desc(np.zeros((1, 1, 1, 1), F)), out(F, (1, 1, 3, 4))),
        IDX,
        "values_tensor.buffer.sizes",
    ),
    (  # Axis < DimensionCount
        one_hot_raw(tensor_desc(IDX), tensor_desc(VALUES_01), out(F, (1, 1, 3, 4)), axis=4),
        IDX,
        "axis",
    ),
    (  # index types from the support table
        one_hot_raw(tensor_desc(IDX.astype(np.int16)), tensor_desc(VALUES_01), out(F, (1, 1, 3, 4))),
        IDX.astype(np.int16),
        "indices_tensor.buffer.data_type",
    ),
]


@pytest.mark.parametrize(("desc", "indices", "field"), ONE_HOT_BAD)
def test_one_hot_rules(client: dmlrpc.Client, desc: OD, indices: np.ndarray, field: str) -> None:
    values = np.zeros(tuple(desc.one_hot.values_tensor.buffer.sizes), F)
    refused(client, desc, [indices, values], f"operator_desc.one_hot.{field}")


def test_one_hot_output_axis_size_is_any_positive_size(client: dmlrpc.Client) -> None:
    indices = np.array([5, 0], np.int64).reshape(2, 1)
    (result,) = client.execute(
        one_hot_desc(indices, np.array([[3, 8]], np.int8), 1, 7), [indices, np.array([[3, 8]], np.int8)]
    )
    np.testing.assert_array_equal(result, [[3, 3, 3, 3, 3, 8, 3], [8, 3, 3, 3, 3, 3, 3]])


def test_fill_value_rules(client: dmlrpc.Client) -> None:
    for case in ("fill_value_constant", "fill_value_sequence"):
        desc = (
            fill_constant_desc(F, (2, 2), 1) if case == "fill_value_constant" else fill_sequence_desc(F, (2, 2), 1, 1)
        )
        inner = getattr(desc, case)
        # ValueDataType must equal OutputTensor.DataType
        inner.value_data_type = tensor_pb2.TENSOR_DATA_TYPE_INT32
        refused(client, desc, [], f"operator_desc.{case}.value_data_type")
        inner.value_data_type = tensor_pb2.TENSOR_DATA_TYPE_FLOAT32
        # the union member read must be the one ValueDataType names
        for name in ("value",) if case == "fill_value_constant" else ("value_start", "value_delta"):
            saved = operators_pb2.ScalarUnion()
            saved.CopyFrom(getattr(inner, name))
            getattr(inner, name).CopyFrom(operators_pb2.ScalarUnion(int32=1))
            refused(client, desc, [], f"operator_desc.{case}.{name}")
            getattr(inner, name).CopyFrom(saved)
    # an integer out of the type's range
    desc = fill_constant_desc(np.int8, (2,), 0)
    desc.fill_value_constant.value.int8 = 200
    refused(client, desc, [], "operator_desc.fill_value_constant.value.int8")


def test_fill_value_sequence_has_no_float64(client: dmlrpc.Client) -> None:
    desc = fill_sequence_desc(np.float64, (2,), 1, 1)
    refused(client, desc, [], "operator_desc.fill_value_sequence.output_tensor.buffer.data_type")


@pytest.mark.parametrize(
    ("shape", "value", "dtype", "field"),
    [
        ((4,), 1.0, F, "output_tensor.buffer.sizes"),  # {[Batch1, Batch2,] Height, Width}: 2 to 4 dimensions
        ((1, 1, 1, 2, 2), 1.0, F, "output_tensor.buffer.sizes"),
        ((2, 2), 256.0, np.uint8, "value"),  # truncated Value must be an integer of the output type
        ((2, 2), -1.0, np.uint32, "value"),
        ((2, 2), math.nan, np.int32, "value"),
        ((2, 2), math.inf, np.int64, "value"),
    ],
)
def test_diagonal_matrix_rules(
    client: dmlrpc.Client, shape: tuple[int, ...], value: float, dtype: Any, field: str
) -> None:
    refused(client, diagonal_desc(dtype, shape, 0, value), [], f"operator_desc.diagonal_matrix.{field}")


def test_diagonal_matrix1_rules(client: dmlrpc.Client) -> None:
    path = "operator_desc.diagonal_matrix1"
    x = np.ones((2, 3), F)
    # InputTensor and OutputTensor: same DataType
    refused(
        client,
        diagonal1_desc(F, (2, 3), 0, 1, 1, x.astype(np.int32)),
        [x.astype(np.int32)],
        f"{path}.input_tensor.buffer.data_type",
    )
    # ... and DimensionCount
    refused(
        client,
        diagonal1_desc(F, (2, 3), 0, 1, 1, x.reshape(1, 2, 3)),
        [x.reshape(1, 2, 3)],
        f"{path}.input_tensor.buffer.sizes",
    )
    # ... and sizes (out[..., y, x] reads InputTensor[..., y, x])
    refused(
        client,
        diagonal1_desc(F, (2, 3), 0, 1, 1, x[:, :2].copy()),
        [x[:, :2].copy()],
        f"{path}.input_tensor.buffer.sizes",
    )
    # ValueDataType must equal OutputTensor.DataType
    desc = diagonal1_desc(F, (2, 3), 0, 1, 1)
    desc.diagonal_matrix1.value_data_type = tensor_pb2.TENSOR_DATA_TYPE_FLOAT16
    refused(client, desc, [None], f"{path}.value_data_type")
    # Value read as ValueDataType
    desc = diagonal1_desc(F, (2, 3), 0, 1, 1)
    desc.diagonal_matrix1.value.CopyFrom(operators_pb2.ScalarUnion(float64=1.0))
    refused(client, desc, [None], f"{path}.value")
    # 2 to 4 dimensions
    refused(client, diagonal1_desc(F, (6,), 0, 1, 1), [None], f"{path}.output_tensor.buffer.sizes")


def nonzero_raw(
    x: np.ndarray, count_shape: Sequence[int], coordinates_shape: Sequence[int], count_dtype: Any = np.uint32
) -> OD:
    return OD(
        nonzero_coordinates=operators_pb2.NonzeroCoordinatesOperatorDesc(
            input_tensor=tensor_desc(x),
            output_count_tensor=out(count_dtype, count_shape),
            output_coordinates_tensor=out(np.uint32, coordinates_shape),
        )
    )


X_2X3 = np.ones((1, 2, 3), np.int32)


@pytest.mark.parametrize(
    ("count_shape", "coordinates_shape", "count_dtype", "field"),
    [
        ((1, 2), (1, 6, 2), np.uint32, "output_count_tensor.buffer.sizes"),  # count: every size 1
        ((1,), (1, 6, 2), np.int32, "output_count_tensor.buffer.data_type"),  # count: UINT32
        ((1,), (2, 6, 2), np.uint32, "output_coordinates_tensor.buffer.sizes"),  # {1, ..., 1, M, N}
        ((1,), (1, 5, 2), np.uint32, "output_coordinates_tensor.buffer.sizes"),  # M = element count
        ((1,), (1, 6, 1), np.uint32, "output_coordinates_tensor.buffer.sizes"),  # N >= effective rank (2)
        ((1,), (1, 6, 4), np.uint32, "output_coordinates_tensor.buffer.sizes"),  # N <= DimensionCount (3)
        ((1,), (6,), np.uint32, "output_coordinates_tensor.buffer.sizes"),  # coordinates: 2 to 8 dimensions
    ],
)
def test_nonzero_coordinates_rules(
    client: dmlrpc.Client,
    count_shape: tuple[int, ...],
    coordinates_shape: tuple[int, ...],
    count_dtype: Any,
    field: str,
) -> None:
    desc = nonzero_raw(X_2X3, count_shape, coordinates_shape, count_dtype)
    refused(client, desc, [X_2X3], f"operator_desc.nonzero_coordinates.{field}")


def test_nonzero_coordinates_columns_from_effective_rank_to_dimension_count(client: dmlrpc.Client) -> None:
    x = np.array([0, 5, 0, 7], np.uint8).reshape(1, 1, 4)
    for columns in (1, 2, 3):
        count, coordinates = client.execute(nonzero_raw(x, (1,), (1, 4, columns)), [x])
        assert count is not None and int(np.asarray(count).reshape(-1)[0]) == 2
        full = np.array([[0, 0, 1], [0, 0, 3], [0, 0, 0], [0, 0, 0]], np.uint32)
        np.testing.assert_array_equal(np.asarray(coordinates).reshape(4, columns), full[:, 3 - columns :])
