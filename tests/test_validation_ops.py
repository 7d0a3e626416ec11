"""Operator rules of TOP_K / TOP_K1, SCATTER_ELEMENTS and SCATTER_ND (operators.proto), over the real server."""

from __future__ import annotations

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2, tensor_pb2
from tests.conftest import ServerThread
from tests.test_validation import (
    as_case,
    assert_violation,
    expected_top_k,
    raw_desc_refusal,
    sdk_refusal,
    top_k_call,
)

DT = tensor_pb2.TensorDataType


# --- TOP_K (71) and TOP_K1 (112) -------------------------------------------------------------------------------


TOP_K_CASES = pytest.mark.parametrize("case", ["top_k", "top_k1"])


@TOP_K_CASES
@pytest.mark.parametrize("axis", [2, 3, 2**32 - 1])
def test_top_k_axis_not_below_rank(client: dmlrpc.Client, case: str, axis: int) -> None:
    call = top_k_call()
    operator_desc = as_case(call, case)
    getattr(operator_desc, case).axis = axis
    refusal = sdk_refusal(client, operator_desc, call.inputs)
    assert_violation(refusal, f"operator_desc.{case}.axis", f"axis {axis} is not less than the dimension count 2")


@TOP_K_CASES
@pytest.mark.parametrize(("k", "built_k"), [(0, 1), (4, 3), (2**32 - 1, 3)])
def test_top_k_k_out_of_range(client: dmlrpc.Client, case: str, k: int, built_k: int) -> None:
    call = top_k_call(k=built_k)  # outputs stay valid for built_k; only k is broken
    operator_desc = as_case(call, case)
    getattr(operator_desc, case).k = k
    refusal = sdk_refusal(client, operator_desc, call.inputs)
    assert_violation(refusal, f"operator_desc.{case}.k", f"k = {k} is out of range: 1 <= k <= 3")


@TOP_K_CASES
@pytest.mark.parametrize("axis", [0, 1])
def test_top_k_k_equal_to_the_axis_size_is_a_full_sort(client: dmlrpc.Client, case: str, axis: int) -> None:
    call = top_k_call(k=(2, 3)[axis], axis=axis)
    values, indices = client.execute(as_case(call, case), call.inputs)
    expected_values, expected_indices = expected_top_k(call.inputs[0], (2, 3)[axis], axis)  # type: ignore[arg-type]
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_array_equal(np.sort(values, axis=axis), np.sort(call.inputs[0], axis=axis))  # type: ignore[arg-type]


def test_top_k1_increasing_full_sort(client: dmlrpc.Client) -> None:
    data = np.array([[3, 1, 2], [0, 5, -4]], np.int32)
    values, indices = client.top_k(data, 3, direction="increasing")
    np.testing.assert_array_equal(values, np.sort(data, axis=1))
    np.testing.assert_array_equal(indices, np.argsort(data, axis=1, kind="stable"))


@TOP_K_CASES
@pytest.mark.parametrize(
    ("tensor", "sizes"),
    [
        ("output_value_tensor", (2, 3)),
        ("output_value_tensor", (1, 2)),
        ("output_value_tensor", (2, 2, 1)),
        ("output_index_tensor", (2, 1)),
        ("output_index_tensor", (3, 2)),
    ],
)
def test_top_k_output_sizes_mismatch(client: dmlrpc.Client, case: str, tensor: str, sizes: tuple[int, ...]) -> None:
    call = top_k_call(k=2)
    operator_desc = as_case(call, case)
    output = getattr(getattr(operator_desc, case), tensor)
    output.CopyFrom(tensor_desc((np.float32 if tensor == "output_value_tensor" else np.uint32, sizes)))
    refusal = sdk_refusal(client, operator_desc, call.inputs)
    assert_violation(refusal, f"operator_desc.{case}.{tensor}.buffer.sizes", f"{list(sizes)}", "[2, 2]")


@TOP_K_CASES
@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.uint32])
def test_top_k_value_data_type_differs_from_input(client: dmlrpc.Client, case: str, dtype: type) -> None:
    call = top_k_call(k=2)
    operator_desc = as_case(call, case)
    getattr(operator_desc, case).output_value_tensor.CopyFrom(tensor_desc((dtype, (2, 2))))
    refusal = sdk_refusal(client, operator_desc, call.inputs)
    assert_violation(
        refusal, f"operator_desc.{case}.output_value_tensor.buffer.data_type", "must equal input_tensor's data type"
    )


@TOP_K_CASES
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint16, np.uint8, np.float32])
def test_top_k_index_data_type_must_be_uint32_or_uint64(client: dmlrpc.Client, case: str, index_dtype: type) -> None:
    call = top_k_call(k=2, index_dtype=index_dtype)
    refusal = sdk_refusal(client, as_case(call, case), call.inputs)
    assert_violation(refusal, f"operator_desc.{case}.output_index_tensor.buffer.data_type", "supported: UINT32, UINT64")


@pytest.mark.parametrize("index_dtype", [np.uint32, np.uint64])
def test_top_k_index_data_types_uint32_and_uint64_work(client: dmlrpc.Client, index_dtype: type) -> None:
    values, indices = client.top_k(np.array([[1, 9, 5]], np.float32), 2, index_dtype=index_dtype)
    assert indices.dtype == np.dtype(index_dtype)
    np.testing.assert_array_equal(indices, [[1, 2]])
    np.testing.assert_array_equal(values, [[9, 5]])


@pytest.mark.parametrize("direction", [2, 7, 2**31 - 1])
def test_top_k1_unknown_axis_direction(client: dmlrpc.Client, direction: int) -> None:
    call = top_k_call(direction=direction)
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, "operator_desc.top_k1.axis_direction", f"{direction} is not a DML_AXIS_DIRECTION")


# --- SCATTER_ELEMENTS (94) ------------------------------------------------------------------------------------

SE = "operator_desc.scatter_elements"
DATA = np.arange(12, dtype=np.float32).reshape(3, 4)


def _scatter_elements(indices: object, axis: int = 0, dtype: str = "int64") -> ops.Call:
    index_array = np.asarray(indices, dtype=dtype)
    updates = -1 - np.arange(index_array.size, dtype=np.float32).reshape(index_array.shape)
    return ops.scatter_elements(DATA, index_array, updates, axis)


def _expected_scatter_elements(indices: object, axis: int = 0) -> np.ndarray:
    index_array = np.asarray(indices, dtype=np.int64)
    index_array = np.where(index_array < 0, index_array + DATA.shape[axis], index_array)
    expected = DATA.copy()
    np.put_along_axis(expected, index_array, -1 - np.arange(index_array.size).reshape(index_array.shape), axis)
    return expected


@pytest.mark.parametrize("axis", [2, 9])
def test_scatter_elements_axis_not_below_rank(client: dmlrpc.Client, axis: int) -> None:
    call = _scatter_elements([[2, 0, 1, 0]])
    call.operator_desc.scatter_elements.axis = axis
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, f"{SE}.axis", f"axis {axis} is not less than the dimension count 2")


@pytest.mark.parametrize(
    ("indices_shape", "updates_shape", "field"),
    [((4,), (4,), "indices_tensor"), ((1, 1, 4), (1, 1, 4), "indices_tensor"), ((1, 4), (1, 1, 4), "updates_tensor")],
)
def test_scatter_elements_dimension_counts_differ(
    client: dmlrpc.Client, indices_shape: tuple[int, ...], updates_shape: tuple[int, ...], field: str
) -> None:
    call = ops.scatter_elements(DATA, np.zeros(indices_shape, np.int64), np.ones(updates_shape, np.float32))
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, f"{SE}.{field}.buffer.sizes", "dimensions; must equal input_tensor's 2")


@pytest.mark.parametrize(("axis", "indices_shape", "dimension"), [(0, (1, 3), 1), (0, (2, 5), 1), (1, (2, 2), 0)])
def test_scatter_elements_indices_size_mismatch_off_axis(
    client: dmlrpc.Client, axis: int, indices_shape: tuple[int, int], dimension: int
) -> None:
    call = ops.scatter_elements(DATA, np.zeros(indices_shape, np.int64), np.ones(indices_shape, np.float32), axis)
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, f"{SE}.indices_tensor.buffer.sizes[{dimension}]", "only the axis dimension may differ")


def test_scatter_elements_updates_sizes_differ_from_indices(client: dmlrpc.Client) -> None:
    call = ops.scatter_elements(DATA, np.array([[2, 0, 1, 0]]), np.ones((2, 4), np.float32))
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, f"{SE}.updates_tensor.buffer.sizes", "[2, 4] must equal indices_tensor's [1, 4]")


@pytest.mark.parametrize(
    ("tensor", "spec", "field", "fragment"),
    [
        ("output_tensor", (np.float32, (3, 5)), "sizes", "must equal input_tensor's [3, 4]"),
        ("output_tensor", (np.float32, (4, 3)), "sizes", "must equal input_tensor's [3, 4]"),
        ("output_tensor", (np.float16, (3, 4)), "data_type", "must equal input_tensor's data type"),
        ("updates_tensor", (np.int32, (1, 4)), "data_type", "must equal input_tensor's data type"),
    ],
)
def test_scatter_elements_output_and_updates_must_match_input(
    client: dmlrpc.Client, tensor: str, spec: tuple[type, tuple[int, int]], field: str, fragment: str
) -> None:
    call = _scatter_elements([[2, 0, 1, 0]])
    getattr(call.operator_desc.scatter_elements, tensor).CopyFrom(tensor_desc(spec))
    inputs = list(call.inputs)
    if tensor == "updates_tensor":
        inputs[2] = np.ones(spec[1], spec[0])
    refusal = sdk_refusal(client, call.operator_desc, inputs)
    assert_violation(refusal, f"{SE}.{tensor}.buffer.{field}", fragment)


@pytest.mark.parametrize(
    ("indices", "dtype", "fragment"),
    [
        ([[2, 0, 3, 0]], "int64", "index value 3 at indices_tensor position [0, 2] is out of range [-3, 3)"),
        ([[2, 0, 1, -4]], "int32", "index value -4 at indices_tensor position [0, 3] is out of range [-3, 3)"),
        ([[0, 1, 2, 0], [1, 2, 0, 7]], "int32", "index value 7 at indices_tensor position [1, 3]"),
        ([[0, 1, 2, 3]], "uint32", "index value 3 at indices_tensor position [0, 3] is out of range [0, 3)"),
        ([[0, 2**64 - 1, 2, 1]], "uint64", f"index value {2**64 - 1} at indices_tensor position [0, 1]"),
        ([[-(2**63), 0, 2, 1]], "int64", f"index value {-(2**63)} at indices_tensor position [0, 0]"),
    ],
)
def test_scatter_elements_index_out_of_range(client: dmlrpc.Client, indices: object, dtype: str, fragment: str) -> None:
    call = _scatter_elements(indices, dtype=dtype)
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, "inputs[1].buffer.data", fragment, "input_tensor dimension 0")


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(("indices", "axis"), [([[-1, 0, -3, 2]], 0), ([[-4], [3], [-2]], 1), ([[-3, -2, -1, 0]], 0)])
def test_scatter_elements_negative_indices_of_a_signed_type(
    client: dmlrpc.Client, dtype: str, indices: object, axis: int
) -> None:
    call = _scatter_elements(indices, axis=axis, dtype=dtype)
    (output,) = client.execute(call.operator_desc, call.inputs)
    np.testing.assert_array_equal(output, _expected_scatter_elements(indices, axis))


@pytest.mark.parametrize(
    ("indices", "dtype", "fragment"),
    [
        ([[0, 1, 2, 0], [0, 2, 1, 1]], "uint32", "positions [0, 0] and [1, 0] write the same output element"),
        ([[2, 1, 0, 0], [-1, 0, 1, 2]], "int32", "positions [0, 0] and [1, 0] write the same output element"),
        ([[0, 1, 2, 0], [1, 2, 0, 1], [2, 0, 2, 2]], "int64", "positions [0, 2] and [2, 2]"),
    ],
)
def test_scatter_elements_duplicate_targets(client: dmlrpc.Client, indices: object, dtype: str, fragment: str) -> None:
    call = _scatter_elements(indices, dtype=dtype)
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, "inputs[1].buffer.data", fragment, "overlapping scatter targets invalid")


@pytest.mark.parametrize("dtype", ["uint32", "uint64", "int32", "int64"])
@pytest.mark.parametrize(("indices", "axis"), [([[2, 0, 1, 0], [1, 2, 0, 2]], 0), ([[3, 0], [1, 2], [0, 3]], 1)])
def test_scatter_elements_index_types(client: dmlrpc.Client, dtype: str, indices: object, axis: int) -> None:
    call = _scatter_elements(indices, axis=axis, dtype=dtype)
    assert call.operator_desc.scatter_elements.indices_tensor.buffer.data_type == DT.Value(
        f"TENSOR_DATA_TYPE_{dtype.upper()}"
    )
    (output,) = client.execute(call.operator_desc, call.inputs)
    np.testing.assert_array_equal(output, _expected_scatter_elements(indices, axis))


# --- SCATTER_ND (109) -----------------------------------------------------------------------------------------

SND = "operator_desc.scatter_nd"
DOC_INPUT = np.arange(1, 9, dtype=np.float32)  # DirectML's example: [1, 2, 3, 4, 5, 6, 7, 8]
DOC_UPDATES = np.array([9, 10, 11, 12], np.float32)


def _doc_example(indices: object = ((4,), (3,), (1,), (7,)), dtype: str = "uint32") -> ops.Call:
    """DirectML's example in its valid form: input {1,8} (count 1), indices {4,1} (count 2), updates {1,4}."""
    return ops.scatter_nd(DOC_INPUT, np.array(indices, dtype=dtype), DOC_UPDATES)


def test_scatter_nd_doc_example_valid_form(client: dmlrpc.Client) -> None:
    call = _doc_example()
    desc = call.operator_desc.scatter_nd
    assert (list(desc.input_tensor.buffer.sizes), list(desc.updates_tensor.buffer.sizes)) == ([1, 8], [1, 4])
    assert (desc.input_dimension_count, desc.indices_dimension_count) == (1, 2)
    (output,) = client.execute(call.operator_desc, call.inputs)
    np.testing.assert_array_equal(output, [[1, 11, 3, 10, 9, 6, 7, 12]])


@pytest.mark.parametrize(
    ("indices_type", "field", "fragments"),
    [
        (DT.TENSOR_DATA_TYPE_FLOAT32, "indices_tensor.buffer.data_type", ("FLOAT32 is not supported", "INT32")),
        (DT.TENSOR_DATA_TYPE_UINT32, "indices_tensor.buffer.sizes", ("2 dimensions; must equal input_tensor's 1",)),
    ],
)
def test_scatter_nd_doc_example_literal_form_is_refused(
    server: ServerThread, indices_type: int, field: str, fragments: tuple[str, ...]
) -> None:
    # The example exactly as DirectML's page prints it: a 1-D input with 2-D FLOAT32 indices.
    def buffer(data_type: int, sizes: list[int]) -> tensor_pb2.TensorDesc:
        return tensor_pb2.TensorDesc(
            buffer=tensor_pb2.BufferTensorDesc(
                data_type=data_type,  # type: ignore[arg-type]
                sizes=sizes,
                total_tensor_size_in_bytes=4 * int(np.prod(sizes)),
            )
        )

    desc = operators_pb2.ScatterNdOperatorDesc(
        input_tensor=buffer(DT.TENSOR_DATA_TYPE_FLOAT32, [8]),
        indices_tensor=buffer(indices_type, [4, 1]),
        updates_tensor=buffer(DT.TENSOR_DATA_TYPE_FLOAT32, [4]),
        output_tensor=buffer(DT.TENSOR_DATA_TYPE_FLOAT32, [8]),
        input_dimension_count=1,
        indices_dimension_count=2,
    )
    indices = np.array([4, 3, 1, 7], np.float32 if indices_type == DT.TENSOR_DATA_TYPE_FLOAT32 else np.uint32)
    buffers = [DOC_INPUT.tobytes(), indices.tobytes(), DOC_UPDATES.tobytes()]
    refusal = raw_desc_refusal(server.address, operators_pb2.OperatorDesc(scatter_nd=desc), buffers)
    assert_violation(refusal, f"{SND}.{field}", *fragments)


@pytest.mark.parametrize("name", ["input_dimension_count", "indices_dimension_count"])
@pytest.mark.parametrize("count", [0, 3, 2**32 - 1])
def test_scatter_nd_dimension_count_out_of_range(client: dmlrpc.Client, name: str, count: int) -> None:
    call = _doc_example()
    setattr(call.operator_desc.scatter_nd, name, count)
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, f"{SND}.{name}", f"{count} is out of range: 1 <= count <= 2")


@pytest.mark.parametrize(
    ("data_shape", "indices", "updates_shape", "counts", "field", "fragment"),
    [
        ((2, 4), [[1]], (1, 4), (1, 2), "input_tensor", "sizes [2, 4]: the 1 dimensions before the last 1"),
        ((1, 8), [[4], [3]], (1, 2), (1, 1), "indices_tensor", "sizes [2, 1]: the 1 dimensions before the last 1"),
        ((1, 3, 4), [[[1]], [[2]]], (1, 1, 4), (2, 2), "indices_tensor", "sizes [2, 1, 1]: the 1 dimensions"),
    ],
)
def test_scatter_nd_leading_dimensions_must_be_1(
    client: dmlrpc.Client,
    data_shape: tuple[int, ...],
    indices: object,
    updates_shape: tuple[int, ...],
    counts: tuple[int, int],
    field: str,
    fragment: str,
) -> None:
    index_array = np.array(indices, np.int32)
    if index_array.ndim < len(data_shape):
        index_array = index_array.reshape((1,) * (len(data_shape) - index_array.ndim) + index_array.shape)
    call = ops.scatter_nd(
        np.zeros(data_shape, np.float32),
        index_array,
        np.ones(updates_shape, np.float32),
        input_dimension_count=counts[0],
        indices_dimension_count=counts[1],
    )
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, f"{SND}.{field}.buffer.sizes", fragment, "must be 1")


def test_scatter_nd_tuple_size_over_input_dimension_count(client: dmlrpc.Client) -> None:
    call = ops.scatter_nd(DOC_INPUT, np.array([[0, 4]], np.uint32), np.ones((1,), np.float32))
    call.operator_desc.scatter_nd.input_dimension_count = 1
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, f"{SND}.indices_tensor.buffer.sizes[1]", "tuple size 2 exceeds input_dimension_count 1")


@pytest.mark.parametrize(
    ("data_shape", "indices_shape", "updates_shape", "counts", "fragment"),
    [
        (
            (1, 8),
            (4, 1),
            (1, 3),
            (1, 2),
            "sizes [1, 3] must be [1, 4]: updates of shape [4] (the meaningful indices "
            "sizes [4, 1] without the tuple dimension, then the meaningful input sizes [8] after the first 1)",
        ),
        ((1, 8), (4, 1), (4, 1), (1, 2), "sizes [4, 1] must be [1, 4]"),
        ((3, 4), (2, 1), (2, 3), (2, 2), "sizes [2, 3] must be [2, 4]"),
        ((3, 4), (2, 2), (2, 1), (2, 2), "sizes [2, 1] must be [1, 2]"),
        ((1, 3, 4), (1, 2, 1), (1, 1, 4), (2, 2), "sizes [1, 1, 4] must be [1, 2, 4]"),
        ((2, 3, 4), (2, 2, 1), (1, 2, 2), (3, 3), "need updates of 4 dimensions [2, 2, 3, 4], more than 3"),
    ],
)
def test_scatter_nd_updates_sizes(
    client: dmlrpc.Client,
    data_shape: tuple[int, ...],
    indices_shape: tuple[int, ...],
    updates_shape: tuple[int, ...],
    counts: tuple[int, int],
    fragment: str,
) -> None:
    call = ops.scatter_nd(
        np.zeros(data_shape, np.float32),
        np.zeros(indices_shape, np.int64),
        np.ones(updates_shape, np.float32),
        input_dimension_count=counts[0],
        indices_dimension_count=counts[1],
    )
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, f"{SND}.updates_tensor.buffer.sizes", fragment)


@pytest.mark.parametrize(
    ("indices", "dtype", "fragment"),
    [
        ([[4], [8], [1], [7]], "uint32", "index value 8 at indices_tensor position [1, 0] is out of range [0, 8)"),
        ([[4], [3], [-9], [7]], "int64", "index value -9 at indices_tensor position [2, 0] is out of range [-8, 8)"),
        ([[4], [3], [1], [2**32 - 1]], "uint32", f"index value {2**32 - 1} at indices_tensor position [3, 0]"),
    ],
)
def test_scatter_nd_index_out_of_range(client: dmlrpc.Client, indices: object, dtype: str, fragment: str) -> None:
    call = _doc_example(indices, dtype)
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, "inputs[1].buffer.data", fragment, "input_tensor dimension 1")


def test_scatter_nd_index_out_of_range_names_the_tuple_component(client: dmlrpc.Client) -> None:
    call = ops.scatter_nd(np.zeros((3, 4), np.float32), np.array([[1, 2], [2, 4]], np.int32), np.ones(2, np.float32))
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(
        refusal, "inputs[1].buffer.data", "index value 4 at indices_tensor position [1, 1]", "[-4, 4)", "dimension 1"
    )


@pytest.mark.parametrize(
    ("indices", "dtype", "fragment"),
    [
        ([[4], [3], [4], [7]], "uint64", "positions [0] and [2] write the same output element"),
        ([[4], [-1], [1], [7]], "int32", "positions [1] and [3] write the same output element"),
    ],
)
def test_scatter_nd_duplicate_tuples(client: dmlrpc.Client, indices: object, dtype: str, fragment: str) -> None:
    call = _doc_example(indices, dtype)
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, "inputs[1].buffer.data", "index tuples at indices_tensor", fragment)


def test_scatter_nd_duplicate_slices(client: dmlrpc.Client) -> None:
    call = ops.scatter_nd(
        np.zeros((3, 4), np.float32), np.array([[2], [0], [2]], np.int32), np.ones((3, 4), np.float32)
    )
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, "inputs[1].buffer.data", "positions [0] and [2] write the same output element")


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64"])
def test_scatter_nd_index_types(client: dmlrpc.Client, dtype: str) -> None:
    indices = [[4], [3], [1], [7]] if dtype.startswith("u") else [[-4], [3], [-7], [-1]]
    call = _doc_example(indices, dtype)
    (output,) = client.execute(call.operator_desc, call.inputs)
    np.testing.assert_array_equal(output, [[1, 11, 3, 10, 9, 6, 7, 12]])
