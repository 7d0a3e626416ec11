"""SCATTER_ND over the wire: DirectML's example (valid form), and properties against the NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2
from tests.references import dml
from tests.strategies import INDEX_DTYPES, SCATTER_DTYPES, arrays, broadcast_values, layouts


def scatter_nd_desc(x, indices, updates, input_count, indices_count, strides=None):  # type: ignore[no-untyped-def]
    strides = strides or {}
    return operators_pb2.OperatorDesc(
        scatter_nd=operators_pb2.ScatterNdOperatorDesc(
            input_tensor=tensor_desc(x, strides.get("input")),
            indices_tensor=tensor_desc(indices, strides.get("indices")),
            updates_tensor=tensor_desc(updates, strides.get("updates")),
            output_tensor=tensor_desc(x, strides.get("output")),
            input_dimension_count=input_count,
            indices_dimension_count=indices_count,
        )
    )


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_doc_example_in_valid_form(client: dmlrpc.Client, index_dtype: type) -> None:
    # The page's example with every tensor 2-D (DimensionCount must match) and integer indices.
    x = np.array([[1, 2, 3, 4, 5, 6, 7, 8]], np.float32)
    indices = np.array([[4], [3], [1], [7]], index_dtype)
    updates = np.array([[9, 10, 11, 12]], np.float32)
    (out,) = client.execute(scatter_nd_desc(x, indices, updates, 1, 2), [x, indices, updates])
    np.testing.assert_array_equal(out, [[1, 11, 3, 10, 9, 6, 7, 12]])


def test_doc_example_through_typed_call(client: dmlrpc.Client) -> None:
    x = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.float32)
    out = client.scatter_nd(x, np.array([[4], [3], [1], [7]]), np.array([9, 10, 11, 12], np.float32))
    assert out.shape == (8,)
    np.testing.assert_array_equal(out, [1, 11, 3, 10, 9, 6, 7, 12])


def test_updates_sizes_example_from_the_page(client: dmlrpc.Client) -> None:
    # Input {3,4,5,6,7} (count 5), indices {1,1,1,2,3} (count 3) -> updates {1,1,2,6,7}.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 5, 6, 7)).astype(np.float32)
    indices = np.array([[[[[0, 1, 2], [2, 3, -1]]]]], np.int32)
    updates = rng.standard_normal((1, 1, 2, 6, 7)).astype(np.float32)
    (out,) = client.execute(scatter_nd_desc(x, indices, updates, 5, 3), [x, indices, updates])
    expected = x.copy()
    expected[0, 1, 2] = updates[0, 0, 0]
    expected[2, 3, 4] = updates[0, 0, 1]
    np.testing.assert_array_equal(out, expected)


@st.composite
def scatter_nd_cases(draw: st.DrawFn):  # type: ignore[no-untyped-def]
    rank = draw(st.integers(1, 8), label="D")
    input_count = draw(st.integers(1, rank), label="input_dimension_count")
    tuple_size = draw(st.integers(1, input_count), label="tuple size")
    indices_count = draw(st.integers(1, rank - input_count + tuple_size), label="indices_dimension_count")
    data_shape = tuple(draw(st.lists(st.integers(1, 4), min_size=input_count, max_size=input_count)))
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=indices_count - 1, max_size=indices_count - 1)))
    updates_shape = lead + data_shape[tuple_size:]
    pad = lambda shape: (1,) * (rank - len(shape)) + shape  # noqa: E731
    dtype = draw(st.sampled_from(SCATTER_DTYPES), label="dtype")
    index_dtype = draw(st.sampled_from(INDEX_DTYPES), label="index dtype")
    signed = np.dtype(index_dtype).kind == "i"
    components = [
        st.integers(-s if signed else 0, s - 1)
        if draw(st.integers(0, 9))
        else st.integers(-s - 2, s + 2).filter(lambda v: signed or v >= 0)
        for s in data_shape[:tuple_size]
    ]
    tuples = draw(
        st.lists(
            st.tuples(*components),
            min_size=int(np.prod(lead, dtype=np.int64)),
            max_size=int(np.prod(lead, dtype=np.int64)),
        )
    )
    indices = np.array(tuples, dtype=index_dtype).reshape(pad(lead + (tuple_size,)))
    x = draw(arrays(dtype, pad(data_shape)))
    updates = draw(arrays(dtype, pad(updates_shape)))
    return x, indices, updates, input_count, indices_count


@given(case=scatter_nd_cases(), data=st.data())
def test_matches_reference(client: dmlrpc.Client, case, data: st.DataObject) -> None:  # type: ignore[no-untyped-def]
    x, indices, updates, input_count, indices_count = case
    strides = {}
    for name, value, broadcast in (
        ("input", x, True),
        ("indices", indices, True),
        ("updates", updates, True),
        ("output", x, False),
    ):
        layout = data.draw(layouts(value.shape, allow_broadcast=broadcast), label=f"{name} layout")
        strides[name] = layout.strides
        if name == "input":
            x = broadcast_values(x, layout)
        elif name == "indices":
            indices = broadcast_values(indices, layout)
        elif name == "updates":
            updates = broadcast_values(updates, layout)
    expected = dml.scatter_nd(x, indices, updates, input_count, indices_count)
    desc = scatter_nd_desc(x, indices, updates, input_count, indices_count, strides)
    if isinstance(expected, str):
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            client.execute(desc, [x, indices, updates])
        assert caught.value.field_violations[0].field == "inputs[1].buffer.data"
        assert ("out of range" in caught.value.message) == (expected == "out of range")
        return
    (out,) = client.execute(desc, [x, indices, updates])
    assert out is not None and out.dtype == x.dtype and out.shape == x.shape
    np.testing.assert_array_equal(out, expected)
