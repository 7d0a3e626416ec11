"""TOP_K and TOP_K1 over the wire: DirectML's examples exactly, and properties against the NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2, tensor_pb2
from tests.references import dml
from tests.strategies import TOP_K_DTYPES, arrays, broadcast_values, layouts, shapes

DEC, INC = tensor_pb2.AXIS_DIRECTION_DECREASING, tensor_pb2.AXIS_DIRECTION_INCREASING
EXAMPLE_A = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], np.float32)
EXAMPLE_B = np.array([[[[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]]]], np.float32)

# The four examples of the DML_TOP_K1_OPERATOR_DESC page: input, axis, k, direction, values, indices.
DOC_EXAMPLES = [
    (EXAMPLE_A, 3, 2, DEC, [[[[11, 10], [9, 8], [7, 6]]]], [[[[3, 2], [2, 3], [3, 2]]]]),
    (EXAMPLE_A, 2, 2, DEC, [[[[4, 5, 10, 11], [3, 2, 9, 8]]]], [[[[2, 2, 0, 0], [1, 1, 1, 1]]]]),
    (EXAMPLE_B, 3, 3, DEC, [[[[3, 2, 2], [5, 5, 4], [6, 6, 6]]]], [[[[3, 1, 2], [2, 3, 1], [0, 1, 2]]]]),
    (EXAMPLE_B, 3, 3, INC, [[[[1, 2, 2], [3, 4, 5], [6, 6, 6]]]], [[[[0, 1, 2], [0, 1, 2], [0, 1, 2]]]]),
]


def top_k1_desc(x: np.ndarray, axis: int, k: int, direction: int, **layouts: object) -> operators_pb2.OperatorDesc:
    out_shape = list(x.shape)
    out_shape[axis] = k
    return operators_pb2.OperatorDesc(
        top_k1=operators_pb2.TopK1OperatorDesc(
            input_tensor=tensor_desc(x, layouts.get("input")),  # type: ignore[arg-type]
            output_value_tensor=tensor_desc((x.dtype, out_shape), layouts.get("values")),  # type: ignore[arg-type]
            output_index_tensor=tensor_desc(
                (layouts.get("index_dtype", np.uint32), out_shape),
                layouts.get("indices"),  # type: ignore[arg-type]
            ),
            axis=axis,
            k=k,
            axis_direction=direction,  # type: ignore[arg-type]
        )
    )


@pytest.mark.parametrize(("x", "axis", "k", "direction", "values", "indices"), DOC_EXAMPLES)
def test_doc_examples(client: dmlrpc.Client, x, axis, k, direction, values, indices) -> None:  # type: ignore[no-untyped-def]
    got_values, got_indices = client.execute(top_k1_desc(x, axis, k, direction), [x])
    assert got_values is not None and got_indices is not None
    assert got_values.dtype == np.float32 and got_indices.dtype == np.uint32
    np.testing.assert_array_equal(got_values, np.array(values, np.float32))
    np.testing.assert_array_equal(got_indices, np.array(indices, np.uint32))


@pytest.mark.parametrize(("x", "axis", "k", "direction", "values", "indices"), DOC_EXAMPLES)
def test_doc_examples_through_typed_call(client: dmlrpc.Client, x, axis, k, direction, values, indices) -> None:  # type: ignore[no-untyped-def]
    got_values, got_indices = client.top_k(x, k, axis, direction="decreasing" if direction == DEC else "increasing")
    np.testing.assert_array_equal(got_values, values)
    np.testing.assert_array_equal(got_indices, indices)


def test_top_k_type_71_is_top_k1_decreasing(client: dmlrpc.Client) -> None:
    desc = top_k1_desc(EXAMPLE_B, 3, 3, DEC).top_k1
    top_k = operators_pb2.TopKOperatorDesc(
        input_tensor=desc.input_tensor,
        output_value_tensor=desc.output_value_tensor,
        output_index_tensor=desc.output_index_tensor,
        axis=3,
        k=3,
    )
    values, indices = client.execute(operators_pb2.OperatorDesc(top_k=top_k), [EXAMPLE_B])
    np.testing.assert_array_equal(values, DOC_EXAMPLES[2][4])
    np.testing.assert_array_equal(indices, DOC_EXAMPLES[2][5])


def test_k_equal_to_axis_size_is_a_full_sort(client: dmlrpc.Client) -> None:
    x = np.array([3, 1, 2, 1], np.int32)
    values, indices = client.top_k(x, 4, direction="increasing")
    np.testing.assert_array_equal(values, [1, 1, 2, 3])
    np.testing.assert_array_equal(indices, [1, 3, 2, 0])


def test_uint64_extremes_keep_their_order(client: dmlrpc.Client) -> None:
    x = np.array([0, 2**64 - 1, 2**63, 2**63 - 1, 1], np.uint64)
    values, indices = client.top_k(x, 5, index_dtype=np.uint64)
    np.testing.assert_array_equal(values, np.array([2**64 - 1, 2**63, 2**63 - 1, 1, 0], np.uint64))
    np.testing.assert_array_equal(indices, np.array([1, 2, 3, 4, 0], np.uint64))
    assert indices.dtype == np.uint64


@given(data=st.data())
def test_matches_reference(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(TOP_K_DTYPES), label="dtype")
    shape = data.draw(shapes(), label="shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    k = data.draw(st.integers(1, shape[axis]), label="k")
    direction = data.draw(st.sampled_from([DEC, INC]), label="direction")
    index_dtype = data.draw(st.sampled_from([np.uint32, np.uint64]), label="index_dtype")
    out_shape = list(shape)
    out_shape[axis] = k
    input_layout = data.draw(layouts(shape, allow_broadcast=True), label="input layout")
    value_layout = data.draw(layouts(tuple(out_shape), allow_broadcast=False), label="value layout")
    index_layout = data.draw(layouts(tuple(out_shape), allow_broadcast=False), label="index layout")
    x = broadcast_values(data.draw(arrays(dtype, shape), label="x"), input_layout)

    desc = top_k1_desc(
        x,
        axis,
        k,
        direction,
        input=input_layout.strides,
        values=value_layout.strides,
        indices=index_layout.strides,
        index_dtype=index_dtype,
    )
    values, indices = client.execute(desc, [x])

    expected_values, expected_indices = dml.top_k(x, axis, k, decreasing=direction == DEC)
    assert values is not None and indices is not None
    assert values.dtype == x.dtype and indices.dtype == index_dtype
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(indices, expected_indices)
