"""GATHER, GATHER_ELEMENTS, GATHER_ND and GATHER_ND1 over the wire: the pages' examples, validation, and properties
against the NumPy references."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators import REGISTRY
from tests.references import gather as ref
from tests.strategies import arrays, broadcast_values, layouts

FL_6_4 = operators_pb2.FEATURE_LEVEL_6_4


def data_dtypes(case: str) -> list[Any]:
    """The input data types of an operator's support table at feature level 6.4."""
    table = REGISTRY[case].support_at(FL_6_4)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table["input_tensor"].data_types), key=str)


def index_dtypes(case: str) -> list[Any]:
    table = REGISTRY[case].support_at(FL_6_4)
    assert table is not None
    return sorted((DTYPE_BY_DATA_TYPE[t] for t in table["indices_tensor"].data_types), key=str)


def desc_of(
    case: str, x: Any, indices: Any, output: Any, strides: dict[str, Any] | None = None, /, **attrs: int
) -> Any:
    """An OperatorDesc of a gather: ``x``/``indices``/``output`` are arrays or (dtype, shape) pairs."""
    strides = strides or {}
    message = {
        "gather": operators_pb2.GatherOperatorDesc,
        "gather_elements": operators_pb2.GatherElementsOperatorDesc,
        "gather_nd": operators_pb2.GatherNdOperatorDesc,
        "gather_nd1": operators_pb2.GatherNd1OperatorDesc,
    }[case]
    inner = message(
        input_tensor=tensor_desc(x, strides.get("input")),
        indices_tensor=tensor_desc(indices, strides.get("indices")),
        output_tensor=tensor_desc(output, strides.get("output")),
        **attrs,
    )
    return operators_pb2.OperatorDesc(**{case: inner})


def run(client: dmlrpc.Client, case: str, x: np.ndarray, indices: np.ndarray, out_shape: Any, **attrs: int) -> Any:
    (out,) = client.execute(desc_of(case, x, indices, (x.dtype, tuple(out_shape)), **attrs), [x, indices])
    return out


def rejected(client: dmlrpc.Client, desc: Any, arrays_: list[np.ndarray]) -> Any:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, arrays_)
    return caught.value


# ----------------------------------------------------------------------------------------------------- examples

F = np.float32
U = np.uint32

GATHER_EXAMPLES = [
    # (1) Axis 0, IndexDimensions 1.
    (np.array([11, 12, 13, 14], F), np.array([3, 1, 3, 0, 2], U), 0, 1, [14, 12, 14, 11, 13]),
    # (2) Axis 0, IndexDimensions 1.
    (
        np.array([[1, 2], [3, 4], [5, 6]], F),
        np.array([[0, 1, 1, 2]], U),
        0,
        1,
        [[1, 2], [3, 4], [3, 4], [5, 6]],
    ),
    # (3) in the form that behaves as the page shows: IndexDimensions 1 (see test_gather_example_3_as_written).
    (np.array([[1, 2], [3, 4], [5, 6]], F), np.array([[1, 0]], U), 1, 1, [[2, 1], [4, 3], [6, 5]]),
    # (4) Axis 2, IndexDimensions 2.
    (
        np.array([[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], F),
        np.array([[[0, 2]]], U),
        2,
        2,
        [[[1, 3]], [[4, 6]], [[7, 9]]],
    ),
    # (5) Axis 1, IndexDimensions 2.
    (
        np.array([[[1, 2], [3, 4], [5, 6]]], F),
        np.array([[[0, 1], [1, 2]]], U),
        1,
        2,
        [[[1, 2], [3, 4]], [[3, 4], [5, 6]]],
    ),
]


@pytest.mark.parametrize(("x", "indices", "axis", "index_dimensions", "expected"), GATHER_EXAMPLES)
def test_gather_page_examples(client: dmlrpc.Client, x, indices, axis, index_dimensions, expected) -> None:  # type: ignore[no-untyped-def]
    expected = np.array(expected, F)
    out = run(client, "gather", x, indices, expected.shape, axis=axis, index_dimensions=index_dimensions)
    assert out.dtype == F
    np.testing.assert_array_equal(out, expected)


def test_gather_example_3_as_written_needs_three_dimensions(client: dmlrpc.Client) -> None:
    # Input rank 2 + IndexDimensions 2 - 1 = 3 relevant output dimensions do not fit a 2-D output.
    x, indices = np.array([[1, 2], [3, 4], [5, 6]], F), np.array([[1, 0]], U)
    error = rejected(client, desc_of("gather", x, indices, (F, (3, 2)), axis=1, index_dimensions=2), [x, indices])
    assert error.field_violations[0].field == "operator_desc.gather.index_dimensions"


def test_gather_negative_indices_and_single_index(client: dmlrpc.Client) -> None:
    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    out = run(client, "gather", x, np.array([[-1, 0]], np.int64), (3, 2), axis=1, index_dimensions=1)
    np.testing.assert_array_equal(out, [[3, 0], [7, 4], [11, 8]])
    # IndexDimensions 0: one index, the axis disappears and a leading 1 right-aligns the output.
    out = run(client, "gather", x, np.array([[-2]], np.int32), (1, 4), axis=0, index_dimensions=0)
    np.testing.assert_array_equal(out, [[4, 5, 6, 7]])


def test_gather_elements_page_example(client: dmlrpc.Client) -> None:
    x = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], F)
    indices = np.array([[1, 2, 0], [2, 0, 0]], U)
    out = run(client, "gather_elements", x, indices, (2, 3), axis=0)
    assert out.dtype == F
    np.testing.assert_array_equal(out, np.array([[4, 8, 3], [7, 2, 3]], F))


ND_EXAMPLE_1 = (np.array([[0, 1], [2, 3]], F), np.array([[1], [0]], U), 2, 2, [[2, 3], [0, 1]])
ND_EXAMPLE_2 = (
    np.arange(8, dtype=F).reshape(1, 2, 2, 2),
    np.array([[[[0, 1], [1, 0]]]], U),
    3,
    2,
    [[[[2, 3], [4, 5]]]],
)


@pytest.mark.parametrize("case", ["gather_nd", "gather_nd1"])
@pytest.mark.parametrize(("x", "indices", "input_count", "indices_count", "expected"), [ND_EXAMPLE_1, ND_EXAMPLE_2])
def test_gather_nd_page_examples(client: dmlrpc.Client, case, x, indices, input_count, indices_count, expected) -> None:  # type: ignore[no-untyped-def]
    # GATHER_ND1 with BatchDimensionCount 0 is GATHER_ND.
    expected = np.array(expected, F)
    out = run(
        client,
        case,
        x,
        indices,
        expected.shape,
        input_dimension_count=input_count,
        indices_dimension_count=indices_count,
    )
    assert out.dtype == F
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("case", ["gather_nd", "gather_nd1"])
def test_gather_nd_page_size_example(client: dmlrpc.Client, case: str) -> None:
    # Input {3,4,5,6,7} (count 5), indices {1,1,1,2,3} (count 3) -> output {1,1,2,6,7}.
    x = np.arange(3 * 4 * 5 * 6 * 7, dtype=np.int32).reshape(3, 4, 5, 6, 7)
    indices = np.array([[[[[0, 1, 2], [2, 3, -1]]]]], np.int64)
    out = run(client, case, x, indices, (1, 1, 2, 6, 7), input_dimension_count=5, indices_dimension_count=3)
    np.testing.assert_array_equal(out[0, 0], np.stack([x[0, 1, 2], x[2, 3, 4]]))


def test_gather_nd1_page_batch_example(client: dmlrpc.Client) -> None:
    x = np.arange(12, dtype=F).reshape(1, 3, 2, 2)
    indices = np.array([[[[0, 0], [1, 1]], [[1, 1], [0, 0]], [[0, 1], [1, 0]]]], U)
    out = run(
        client,
        "gather_nd1",
        x,
        indices,
        (1, 1, 3, 2),
        input_dimension_count=3,
        indices_dimension_count=3,
        batch_dimension_count=1,
    )
    np.testing.assert_array_equal(out, np.array([[[[0, 3], [7, 4], [9, 10]]]], F))


def test_gather_nd1_page_batch_count_example(client: dmlrpc.Client) -> None:
    # Indices {1,3,4,5,6,7} with IndicesDimensionCount 5 and BatchDimensionCount 2: batches {3,4}, indices {5,6,7};
    # here with tuples of 1 (the page's 7 would need a 9-D input) over input {1,3,4,2,1,1}.
    rng = np.random.default_rng(3)
    x = rng.integers(0, 100, (1, 3, 4, 2, 1, 1)).astype(np.uint8)
    indices = rng.integers(0, 2, (1, 3, 4, 5, 6, 1)).astype(np.int32)
    out = run(
        client,
        "gather_nd1",
        x,
        indices,
        (3, 4, 5, 6, 1, 1),
        input_dimension_count=5,
        indices_dimension_count=5,
        batch_dimension_count=2,
    )
    expected = ref.gather_nd(x, indices, 5, 5, 2)
    assert not isinstance(expected, str)
    np.testing.assert_array_equal(out, expected)
    assert out[2, 3, 4, 5, 0, 0] == x[0, 2, 3, indices[0, 2, 3, 4, 5, 0], 0, 0]


# ----------------------------------------------------------------------------------------------------- properties


def index_values(draw: Callable[..., Any], dtype: Any, bounds: list[int], count: int) -> list[int]:
    """``count`` rows of index values for dimensions of ``bounds`` sizes: mostly in range (negatives for signed
    types), now and then one out of range."""
    signed = np.dtype(dtype).kind == "i"
    rows: list[int] = []
    for _ in range(count):
        rows.extend(draw(st.integers(-b if signed else 0, b - 1)) for b in bounds)
    if rows and draw(st.integers(0, 7)) == 0:
        where = draw(st.integers(0, len(rows) - 1))
        bound = bounds[where % len(bounds)]
        big = np.iinfo(dtype).max
        rows[where] = draw(
            st.sampled_from([bound, bound + 2, int(big)] + ([-bound - 1, int(np.iinfo(dtype).min)] if signed else []))
        )
    return rows


def small_sizes(draw: Callable[..., Any], count: int, budget: int, max_side: int = 4) -> tuple[int, ...]:
    sizes = []
    for _ in range(count):
        side = draw(st.integers(1, max(1, min(max_side, budget))))
        sizes.append(side)
        budget //= side
    return tuple(sizes)


def laid_out(data: st.DataObject, name: str, value: np.ndarray, broadcast: bool) -> tuple[Any, np.ndarray]:
    layout = data.draw(layouts(value.shape, allow_broadcast=broadcast), label=f"{name} layout")
    return layout.strides, broadcast_values(value, layout)


def check_case(  # type: ignore[no-untyped-def]
    client: dmlrpc.Client, data: st.DataObject, case: str, x, indices, expected, out_shape, **attrs
) -> None:
    strides: dict[str, Any] = {}
    strides["input"], x = laid_out(data, "input", x, True)
    strides["indices"], indices = laid_out(data, "indices", indices, True)
    strides["output"], _ = laid_out(data, "output", np.zeros(out_shape, np.int8), False)
    expected = expected(x, indices)
    desc = desc_of(case, x, indices, (x.dtype, tuple(out_shape)), strides, **attrs)
    event("refused: index out of range" if isinstance(expected, str) else "gathered")
    event(f"data {x.dtype}, indices {indices.dtype}")
    if isinstance(expected, str):
        error = rejected(client, desc, [x, indices])
        assert error.field_violations[0].field == "inputs[1].buffer.data"
        assert "out of range" in error.message
        return
    (out,) = client.execute(desc, [x, indices])
    assert isinstance(out, np.ndarray)
    assert out.dtype == x.dtype and out.shape == tuple(out_shape)
    np.testing.assert_array_equal(out, expected)  # a gather moves bits: exact for every type


@settings(max_examples=30)
@given(data=st.data())
def test_gather_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    draw = data.draw
    rank = draw(st.integers(1, 8), label="D")
    input_count = draw(st.integers(1, rank), label="meaningful input dims")
    meaningful = small_sizes(draw, input_count, 64)
    sizes = (1,) * (rank - input_count) + meaningful
    # Mostly an axis among the meaningful dimensions; now and then one in the padding 1s.
    axis = draw(st.integers(rank - input_count, rank - 1) | st.integers(0, rank - 1), label="axis")
    # Relevant output rank = input_count + IndexDimensions - 1 <= D, unless the output then cannot fit (refused).
    index_dimensions = draw(
        st.integers(0, rank - input_count + 1) | st.integers(0, min(rank, rank - input_count + 2)),
        label="index_dimensions",
    )
    selector_shape = small_sizes(draw, index_dimensions, 12, 3)
    dtype = draw(st.sampled_from(data_dtypes("gather")), label="dtype")
    index_dtype = draw(st.sampled_from(index_dtypes("gather")), label="index dtype")
    count = int(np.prod(selector_shape, dtype=np.int64))
    indices: np.ndarray = np.array(index_values(draw, index_dtype, [sizes[axis]], count), dtype=index_dtype).reshape(
        (1,) * (rank - index_dimensions) + selector_shape
    )
    x = draw(arrays(dtype, sizes), label="x")
    out_shape = ref.gather_sizes(sizes, indices.shape, axis, index_dimensions)
    if out_shape is None:
        event("refused: output does not fit")
        field = violation(
            client,
            "gather",
            (dtype, sizes),
            (index_dtype, indices.shape),
            (dtype, sizes),
            axis=axis,
            index_dimensions=index_dimensions,
        )
        assert field == "operator_desc.gather.index_dimensions"
        return
    check_case(
        client,
        data,
        "gather",
        x,
        indices,
        lambda x, i: ref.gather(x, i, axis, index_dimensions),
        out_shape,
        axis=axis,
        index_dimensions=index_dimensions,
    )


@settings(max_examples=30)
@given(data=st.data())
def test_gather_elements_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    draw = data.draw
    rank = draw(st.integers(1, 8), label="D")
    sizes = small_sizes(draw, rank, 128)
    axis = draw(st.integers(0, rank - 1), label="axis")
    indices_sizes = list(sizes)
    indices_sizes[axis] = draw(st.integers(1, 4), label="indices along axis")
    dtype = draw(st.sampled_from(data_dtypes("gather_elements")), label="dtype")
    index_dtype = draw(st.sampled_from(index_dtypes("gather_elements")), label="index dtype")
    count = int(np.prod(indices_sizes, dtype=np.int64))
    indices: np.ndarray = np.array(index_values(draw, index_dtype, [sizes[axis]], count), dtype=index_dtype).reshape(
        indices_sizes
    )
    x = draw(arrays(dtype, sizes), label="x")
    check_case(
        client,
        data,
        "gather_elements",
        x,
        indices,
        lambda x, i: ref.gather_elements(x, i, axis),
        tuple(indices_sizes),
        axis=axis,
    )


@st.composite
def nd_cases(draw: st.DrawFn, batched: bool):  # type: ignore[no-untyped-def]
    rank = draw(st.integers(1, 8), label="D")
    input_count = draw(st.integers(1, rank), label="input_dimension_count")
    batch_count = draw(st.integers(0, min(input_count - 1, 2)), label="batch_dimension_count") if batched else 0
    tuple_size = draw(st.integers(1, input_count - batch_count), label="tuple size")
    data_shape = small_sizes(draw, input_count, 64)
    # Output meaningful dims: (indices_count - 1) + (input_count - batch - tuple) <= D.
    most = rank - input_count + batch_count + tuple_size
    indices_count = draw(st.integers(batch_count + 1, most), label="indices_dimension_count")
    lead = data_shape[:batch_count] + small_sizes(draw, indices_count - 1 - batch_count, 8, 3)
    bounds = list(data_shape[batch_count : batch_count + tuple_size])
    index_dtype = draw(st.sampled_from(index_dtypes("gather_nd1" if batched else "gather_nd")), label="index dtype")
    count = int(np.prod(lead, dtype=np.int64))
    tuples: np.ndarray = np.array(index_values(draw, index_dtype, bounds, count), dtype=index_dtype)
    indices = tuples.reshape((1,) * (rank - indices_count) + lead + (tuple_size,))
    return (1,) * (rank - input_count) + data_shape, indices, input_count, indices_count, batch_count


@settings(max_examples=30)
@given(case=nd_cases(batched=False), data=st.data())
def test_gather_nd_matches_reference(client: dmlrpc.Client, case, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    sizes, indices, input_count, indices_count, _ = case
    dtype = data.draw(st.sampled_from(data_dtypes("gather_nd")), label="dtype")
    x = data.draw(arrays(dtype, sizes), label="x")
    out_shape = ref.gather_nd_sizes(sizes, indices.shape, input_count, indices_count)
    check_case(
        client,
        data,
        "gather_nd",
        x,
        indices,
        lambda x, i: ref.gather_nd(x, i, input_count, indices_count),
        out_shape,
        input_dimension_count=input_count,
        indices_dimension_count=indices_count,
    )


@settings(max_examples=30)
@given(case=nd_cases(batched=True), data=st.data())
def test_gather_nd1_matches_reference(client: dmlrpc.Client, case, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    sizes, indices, input_count, indices_count, batch_count = case
    dtype = data.draw(st.sampled_from(data_dtypes("gather_nd1")), label="dtype")
    x = data.draw(arrays(dtype, sizes), label="x")
    out_shape = ref.gather_nd_sizes(sizes, indices.shape, input_count, indices_count, batch_count)
    check_case(
        client,
        data,
        "gather_nd1",
        x,
        indices,
        lambda x, i: ref.gather_nd(x, i, input_count, indices_count, batch_count),
        out_shape,
        input_dimension_count=input_count,
        indices_dimension_count=indices_count,
        batch_dimension_count=batch_count,
    )


# ----------------------------------------------------------------------------------------------------- validation


def violation(client: dmlrpc.Client, case: str, x: Any, indices: Any, output: Any, **attrs: int) -> str:
    """The field of the first violation a desc of these (dtype, shape) specs gets."""
    arrays_ = [np.zeros(spec[1], spec[0]) for spec in (x, indices)]
    return str(rejected(client, desc_of(case, x, indices, output, **attrs), arrays_).field_violations[0].field)


def index_violation(
    client: dmlrpc.Client, case: str, x: np.ndarray, indices: np.ndarray, out: Any, **attrs: int
) -> str:
    error = rejected(client, desc_of(case, x, indices, (x.dtype, out), **attrs), [x, indices])
    assert "out of range" in error.message
    return str(error.field_violations[0].field)


G = "operator_desc.gather"
GE = "operator_desc.gather_elements"


def test_gather_dimension_counts_must_match(client: dmlrpc.Client) -> None:
    assert violation(client, "gather", (F, (3, 2)), (U, (4,)), (F, (4, 2)), axis=0, index_dimensions=1) == (
        f"{G}.indices_tensor.buffer.sizes"
    )
    assert violation(client, "gather", (F, (3, 2)), (U, (1, 4)), (F, (1, 4, 2)), axis=0, index_dimensions=1) == (
        f"{G}.output_tensor.buffer.sizes"
    )


def test_gather_output_type_must_match(client: dmlrpc.Client) -> None:
    field = violation(client, "gather", (F, (3, 2)), (U, (1, 4)), (np.float16, (4, 2)), axis=0, index_dimensions=1)
    assert field == f"{G}.output_tensor.buffer.data_type"


def test_gather_axis_range(client: dmlrpc.Client) -> None:
    assert violation(client, "gather", (F, (3, 2)), (U, (1, 4)), (F, (3, 4)), axis=2, index_dimensions=1) == (
        f"{G}.axis"
    )


def test_gather_index_dimensions_range(client: dmlrpc.Client) -> None:
    assert violation(client, "gather", (F, (1, 3)), (U, (1, 2)), (F, (1, 2)), axis=1, index_dimensions=3) == (
        f"{G}.index_dimensions"
    )


def test_gather_indices_leading_sizes_must_be_1(client: dmlrpc.Client) -> None:
    # IndexDimensions 1 makes the indices' first dimension padding, which must be 1.
    assert violation(client, "gather", (F, (3, 2)), (U, (2, 2)), (F, (2, 2)), axis=0, index_dimensions=1) == (
        f"{G}.indices_tensor.buffer.sizes"
    )


def test_gather_relevant_output_rank(client: dmlrpc.Client) -> None:
    # Input rank 3 + IndexDimensions 2 - 1 = 4 > 3.
    assert violation(client, "gather", (F, (2, 3, 2)), (U, (1, 2, 2)), (F, (2, 2, 2)), axis=1, index_dimensions=2) == (
        f"{G}.index_dimensions"
    )


def test_gather_output_sizes(client: dmlrpc.Client) -> None:
    assert violation(client, "gather", (F, (3, 2)), (U, (1, 4)), (F, (3, 2)), axis=0, index_dimensions=1) == (
        f"{G}.output_tensor.buffer.sizes"
    )


def test_gather_index_out_of_range(client: dmlrpc.Client) -> None:
    x = np.zeros((3, 2), F)
    assert index_violation(client, "gather", x, np.array([[0, 3]], U), (2, 2), axis=0, index_dimensions=1) == (
        "inputs[1].buffer.data"
    )
    assert index_violation(client, "gather", x, np.array([[0, -3]], np.int32), (3, 2), axis=1, index_dimensions=1) == (
        "inputs[1].buffer.data"
    )


def test_gather_elements_dimension_counts_and_type(client: dmlrpc.Client) -> None:
    assert violation(client, "gather_elements", (F, (3, 2)), (U, (6,)), (F, (6,)), axis=0) == (
        f"{GE}.indices_tensor.buffer.sizes"
    )
    assert violation(client, "gather_elements", (F, (3, 2)), (U, (1, 2)), (F, (1, 1, 2)), axis=0) == (
        f"{GE}.output_tensor.buffer.sizes"
    )
    assert violation(client, "gather_elements", (F, (3, 2)), (U, (1, 2)), (np.int32, (1, 2)), axis=0) == (
        f"{GE}.output_tensor.buffer.data_type"
    )


def test_gather_elements_axis_range(client: dmlrpc.Client) -> None:
    assert violation(client, "gather_elements", (F, (3, 2)), (U, (3, 2)), (F, (3, 2)), axis=2) == f"{GE}.axis"


def test_gather_elements_indices_sizes_off_the_axis(client: dmlrpc.Client) -> None:
    assert violation(client, "gather_elements", (F, (3, 2)), (U, (1, 3)), (F, (1, 3)), axis=0) == (
        f"{GE}.indices_tensor.buffer.sizes[1]"
    )


def test_gather_elements_output_sizes_equal_indices(client: dmlrpc.Client) -> None:
    assert violation(client, "gather_elements", (F, (3, 2)), (U, (1, 2)), (F, (2, 1)), axis=0) == (
        f"{GE}.output_tensor.buffer.sizes"
    )


def test_gather_elements_index_out_of_range(client: dmlrpc.Client) -> None:
    x = np.zeros((3, 2), F)
    assert index_violation(client, "gather_elements", x, np.array([[0, 3]], np.uint64), (1, 2), axis=0) == (
        "inputs[1].buffer.data"
    )
    assert index_violation(client, "gather_elements", x, np.array([[-4, 0]], np.int64), (1, 2), axis=0) == (
        "inputs[1].buffer.data"
    )


ND_CASES = ["gather_nd", "gather_nd1"]


def nd_attrs(case: str, input_count: int, indices_count: int, batch: int = 0) -> dict[str, int]:
    attrs = {"input_dimension_count": input_count, "indices_dimension_count": indices_count}
    if case == "gather_nd1":
        attrs["batch_dimension_count"] = batch
    return attrs


@pytest.mark.parametrize("case", ND_CASES)
def test_gather_nd_dimension_counts_and_type(client: dmlrpc.Client, case: str) -> None:
    attrs = nd_attrs(case, 2, 2)
    assert violation(client, case, (F, (2, 2)), (U, (2,)), (F, (2, 2)), **attrs) == (
        f"operator_desc.{case}.indices_tensor.buffer.sizes"
    )
    assert violation(client, case, (F, (2, 2)), (U, (2, 1)), (F, (1, 2, 2)), **attrs) == (
        f"operator_desc.{case}.output_tensor.buffer.sizes"
    )
    assert violation(client, case, (F, (2, 2)), (U, (2, 1)), (np.uint32, (2, 2)), **attrs) == (
        f"operator_desc.{case}.output_tensor.buffer.data_type"
    )


@pytest.mark.parametrize("case", ND_CASES)
@pytest.mark.parametrize(
    ("input_count", "indices_count", "field"),
    [
        (0, 2, "input_dimension_count"),
        (3, 2, "input_dimension_count"),
        (2, 0, "indices_dimension_count"),
        (2, 3, "indices_dimension_count"),
    ],
)
def test_gather_nd_count_ranges(
    client: dmlrpc.Client, case: str, input_count: int, indices_count: int, field: str
) -> None:
    attrs = nd_attrs(case, input_count, indices_count)
    assert violation(client, case, (F, (2, 2)), (U, (2, 1)), (F, (2, 2)), **attrs) == f"operator_desc.{case}.{field}"


@pytest.mark.parametrize("case", ND_CASES)
def test_gather_nd_padding_sizes_must_be_1(client: dmlrpc.Client, case: str) -> None:
    assert violation(client, case, (F, (2, 2)), (U, (2, 1)), (F, (2, 2)), **nd_attrs(case, 1, 2)) == (
        f"operator_desc.{case}.input_tensor.buffer.sizes"
    )
    assert violation(client, case, (F, (2, 2)), (U, (2, 1)), (F, (2, 2)), **nd_attrs(case, 2, 1)) == (
        f"operator_desc.{case}.indices_tensor.buffer.sizes"
    )


@pytest.mark.parametrize("case", ND_CASES)
def test_gather_nd_tuple_size(client: dmlrpc.Client, case: str) -> None:
    # Tuples of 2 over a 1-D meaningful input.
    assert violation(client, case, (F, (1, 4)), (U, (1, 2)), (F, (1, 1)), **nd_attrs(case, 1, 2)) == (
        f"operator_desc.{case}.indices_tensor.buffer.sizes[1]"
    )


@pytest.mark.parametrize("case", ND_CASES)
def test_gather_nd_output_sizes(client: dmlrpc.Client, case: str) -> None:
    assert violation(client, case, (F, (2, 2)), (U, (2, 1)), (F, (2, 1)), **nd_attrs(case, 2, 2)) == (
        f"operator_desc.{case}.output_tensor.buffer.sizes"
    )


@pytest.mark.parametrize("case", ND_CASES)
def test_gather_nd_index_out_of_range(client: dmlrpc.Client, case: str) -> None:
    x = np.zeros((2, 3), F)
    attrs = nd_attrs(case, 2, 2)
    assert index_violation(client, case, x, np.array([[1, 3]], np.int32), (1, 1), **attrs) == "inputs[1].buffer.data"
    assert index_violation(client, case, x, np.array([[-3, 0]], np.int64), (1, 1), **attrs) == "inputs[1].buffer.data"
    big = np.array([[2**63 + 1, 0]], np.uint64)
    assert index_violation(client, case, x, big, (1, 1), **attrs) == "inputs[1].buffer.data"


B = "operator_desc.gather_nd1.batch_dimension_count"


def test_gather_nd1_batch_count_below_dimension_count(client: dmlrpc.Client) -> None:
    assert (
        violation(client, "gather_nd1", (F, (2, 2)), (U, (2, 1)), (F, (2, 2)), **nd_attrs("gather_nd1", 2, 2, 2)) == B
    )


def test_gather_nd1_batch_count_leaves_tuple_dimension(client: dmlrpc.Client) -> None:
    # Two meaningful indices dimensions: at most one batch dimension.
    field = violation(
        client, "gather_nd1", (F, (2, 2, 2)), (U, (1, 2, 1)), (F, (1, 2, 2)), **nd_attrs("gather_nd1", 3, 2, 2)
    )
    assert field == B


def test_gather_nd1_batch_and_tuple_fit_the_input(client: dmlrpc.Client) -> None:
    # One batch dimension and tuples of 2 over 2 meaningful input dimensions.
    field = violation(client, "gather_nd1", (F, (2, 2)), (U, (2, 2)), (F, (1, 2)), **nd_attrs("gather_nd1", 2, 2, 1))
    assert field == B


def test_gather_nd1_batch_sizes_must_match(client: dmlrpc.Client) -> None:
    field = violation(client, "gather_nd1", (F, (2, 3)), (U, (3, 1)), (F, (1, 3)), **nd_attrs("gather_nd1", 2, 2, 1))
    assert field == "operator_desc.gather_nd1.indices_tensor.buffer.sizes[0]"


def test_gather_nd1_batched_index_out_of_range(client: dmlrpc.Client) -> None:
    x = np.zeros((2, 3), F)
    indices = np.array([[0], [3]], U)
    assert index_violation(client, "gather_nd1", x, indices, (1, 2), **nd_attrs("gather_nd1", 2, 2, 1)) == (
        "inputs[1].buffer.data"
    )
