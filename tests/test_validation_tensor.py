"""DML_BUFFER_TENSOR_DESC rules (tensor.proto) as the real server enforces them, one test per rule.

Broken descs travel through the raw stub: the SDK cannot lay out a buffer for most of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import tensor_pb2
from tests.conftest import ServerThread
from tests.test_validation import (
    EXHAUSTED,
    as_case,
    assert_status,
    assert_violation,
    expected_top_k,
    raw_desc_refusal,
    raw_execute,
    sdk_refusal,
    top_k_call,
)

DT = tensor_pb2.TensorDataType
TOP_K1 = "operator_desc.top_k1"


def _buffers(call: ops.Call) -> list[bytes | None]:
    return [None if a is None else a.tobytes() for a in call.inputs]


def _mutate(buffer: tensor_pb2.BufferTensorDesc, fields: dict[str, Any]) -> None:
    for name, value in fields.items():
        if isinstance(value, list):
            buffer.ClearField(name)
            getattr(buffer, name).extend(value)
        else:
            setattr(buffer, name, value)


# (fields set on a valid FLOAT32 {2,3} buffer desc, field under `.buffer` that is named, description fragment)
BUFFER_RULES = [
    pytest.param({"data_type": 0}, "data_type", "UNKNOWN is never valid", id="data-type-unknown"),
    pytest.param({"data_type": 99}, "data_type", "99 is not a DML_TENSOR_DATA_TYPE", id="data-type-99"),
    pytest.param({"flags": 2}, "flags", "unknown DML_TENSOR_FLAGS bits 0x2", id="flags-unknown-bit"),
    pytest.param({"flags": 0x80000001}, "flags", "bits 0x80000000", id="flags-unknown-high-bit"),
    pytest.param({"flags": 1}, "flags", "DML_TENSOR_FLAG_OWNED_BY_DML", id="flags-owned-by-dml"),
    pytest.param({"sizes": []}, "sizes", "0 dimensions", id="0-dims"),
    pytest.param({"sizes": [1] * 9}, "sizes", "9 dimensions; DirectML tensors have 1 to 8", id="9-dims"),
    pytest.param({"sizes": [2, 0]}, "sizes[1]", "size 0 is invalid", id="size-0"),
    pytest.param({"sizes": [0, 3]}, "sizes[0]", "size 0 is invalid", id="size-0-first"),
    pytest.param(
        {"sizes": [65536, 65536], "strides": [0, 1], "total_tensor_size_in_bytes": 1 << 18},
        "sizes",
        "4294967296 elements",
        id="2^32-elements",
    ),
    pytest.param({"sizes": [16] * 8}, "sizes", "4294967296 elements", id="2^32-elements-8-dims"),
    pytest.param({"strides": [1]}, "strides", "1 strides for 2 sizes", id="too-few-strides"),
    pytest.param({"strides": [3, 1, 1]}, "strides", "3 strides for 2 sizes", id="too-many-strides"),
    pytest.param(
        {"sizes": [2], "strides": [2**32 - 1]}, "strides", "index 4294967295, beyond 2^32 - 2", id="last-index-2^32-1"
    ),
    pytest.param({"strides": [2**31, 2**31]}, "strides", f"index {3 * 2**31}, beyond", id="last-index-3*2^31"),
    pytest.param(
        {"total_tensor_size_in_bytes": 20}, "total_tensor_size_in_bytes", "DMLCalcBufferTensorSize = 24", id="total-20"
    ),
    pytest.param({"total_tensor_size_in_bytes": 0}, "total_tensor_size_in_bytes", "0 is less than", id="total-0"),
    pytest.param(
        {"strides": [4, 1], "total_tensor_size_in_bytes": 24},
        "total_tensor_size_in_bytes",
        "DMLCalcBufferTensorSize = 28",
        id="total-below-strided-size",
    ),
    pytest.param(
        {"data_type": DT.TENSOR_DATA_TYPE_UINT8, "strides": [3, 1], "total_tensor_size_in_bytes": 4},
        "total_tensor_size_in_bytes",
        "DMLCalcBufferTensorSize = 8",
        id="total-rounds-up-to-4",
    ),
    pytest.param(
        {"guaranteed_base_offset_alignment": 3}, "guaranteed_base_offset_alignment", "power of two", id="align-3"
    ),
    pytest.param({"guaranteed_base_offset_alignment": 12}, "guaranteed_base_offset_alignment", "power", id="align-12"),
    pytest.param(
        {"guaranteed_base_offset_alignment": 2},
        "guaranteed_base_offset_alignment",
        "(4 bytes)",
        id="align-below-element",
    ),
]


@pytest.mark.parametrize(("fields", "field", "fragment"), BUFFER_RULES)
def test_input_buffer_desc_rule(server: ServerThread, fields: dict[str, Any], field: str, fragment: str) -> None:
    call = top_k_call()
    _mutate(call.operator_desc.top_k1.input_tensor.buffer, fields)
    refusal = raw_desc_refusal(server.address, call.operator_desc, _buffers(call))
    assert_violation(refusal, f"{TOP_K1}.input_tensor.buffer.{field}", fragment)


@pytest.mark.parametrize("tensor", ["output_value_tensor", "output_index_tensor"])
@pytest.mark.parametrize(
    ("fields", "field", "fragment"),
    [
        ({"data_type": 99}, "data_type", "99 is not"),
        ({"flags": 1}, "flags", "OWNED_BY_DML"),
        ({"sizes": [2, 2, 0]}, "sizes[2]", "size 0"),
        ({"strides": [1]}, "strides", "1 strides for 2 sizes"),
        ({"total_tensor_size_in_bytes": 15}, "total_tensor_size_in_bytes", "= 16"),
        ({"guaranteed_base_offset_alignment": 5}, "guaranteed_base_offset_alignment", "power of two"),
    ],
)
def test_output_buffer_desc_rule(
    server: ServerThread, tensor: str, fields: dict[str, Any], field: str, fragment: str
) -> None:
    call = top_k_call()
    _mutate(getattr(call.operator_desc.top_k1, tensor).buffer, fields)
    refusal = raw_desc_refusal(server.address, call.operator_desc, _buffers(call))
    assert_violation(refusal, f"{TOP_K1}.{tensor}.buffer.{field}", fragment)


@pytest.mark.parametrize("tensor", ["input_tensor", "output_value_tensor", "output_index_tensor"])
def test_tensor_desc_type_unset(server: ServerThread, tensor: str) -> None:
    call = top_k_call()
    getattr(call.operator_desc.top_k1, tensor).Clear()  # present but with no `buffer`: DML_TENSOR_TYPE_INVALID
    assert call.operator_desc.top_k1.HasField(tensor)
    refusal = raw_desc_refusal(server.address, call.operator_desc, _buffers(call))
    assert_violation(refusal, f"{TOP_K1}.{tensor}", "tensor desc type is not set")


@pytest.mark.parametrize("tensor", ["input_tensor", "output_value_tensor", "output_index_tensor"])
def test_required_tensor_desc_unset(server: ServerThread, tensor: str) -> None:
    call = top_k_call()
    call.operator_desc.top_k1.ClearField(tensor)
    refusal = raw_desc_refusal(server.address, call.operator_desc, _buffers(call))
    assert_violation(refusal, f"{TOP_K1}.{tensor}", "required tensor desc is not set")


@pytest.mark.parametrize(
    ("case", "tensor", "data_type", "supported"),
    [
        ("top_k1", "input_tensor", DT.TENSOR_DATA_TYPE_FLOAT64, "FLOAT16, FLOAT32, INT16"),
        ("top_k1", "input_tensor", DT.TENSOR_DATA_TYPE_UINT4, "FLOAT16, FLOAT32, INT16"),
        ("top_k1", "output_index_tensor", DT.TENSOR_DATA_TYPE_INT32, "UINT32, UINT64"),
        ("scatter_elements", "indices_tensor", DT.TENSOR_DATA_TYPE_INT8, "INT32, INT64, UINT32, UINT64"),
        ("scatter_nd", "indices_tensor", DT.TENSOR_DATA_TYPE_INT8, "INT32, INT64, UINT32, UINT64"),
        ("scatter_nd", "indices_tensor", DT.TENSOR_DATA_TYPE_FLOAT32, "INT32, INT64, UINT32, UINT64"),
        ("scatter_elements", "input_tensor", DT.TENSOR_DATA_TYPE_INT4, "FLOAT64"),
    ],
)
def test_data_type_outside_the_support_table(
    server: ServerThread, case: str, tensor: str, data_type: int, supported: str
) -> None:
    builders: dict[str, Callable[[], ops.Call]] = {
        "top_k1": top_k_call,
        "scatter_elements": lambda: ops.scatter_elements(np.zeros((2, 3)), np.array([[1, 0, 1]]), np.ones((1, 3))),
        "scatter_nd": lambda: ops.scatter_nd(np.zeros((2, 3)), np.array([[1]]), np.ones((1, 3))),
    }
    call = builders[case]()
    buffer = getattr(getattr(call.operator_desc, case), tensor).buffer
    buffer.data_type = data_type
    buffer.total_tensor_size_in_bytes = 1 << 10  # large enough for any element size
    refusal = raw_desc_refusal(server.address, call.operator_desc, _buffers(call))
    name = DT.Name(data_type).removeprefix("TENSOR_DATA_TYPE_")
    assert_violation(refusal, f"operator_desc.{case}.{tensor}.buffer.data_type", f"{name} is not supported", supported)


def test_last_element_at_index_2_pow_32_minus_2_passes_the_rules_and_hits_the_size_limit(server: ServerThread) -> None:
    # The largest legal last index: the desc is valid, but DMLCalcBufferTensorSize is 4 GiB, over the limit.
    call = top_k_call(k=1, shape=(1, 2), dtype="uint8")
    _mutate(call.operator_desc.top_k1.input_tensor.buffer, {"strides": [1, 2**32 - 2]})
    call.operator_desc.top_k1.input_tensor.buffer.total_tensor_size_in_bytes = 2**32
    refusal = raw_desc_refusal(server.address, call.operator_desc, [b"\x00" * 4])
    assert_status(refusal, EXHAUSTED, f"{TOP_K1}.input_tensor.buffer.total_tensor_size_in_bytes = 4294967296")


@pytest.mark.parametrize("alignment", [0, 4, 8, 4096, 2**31])
def test_valid_alignments_are_accepted(client: dmlrpc.Client, alignment: int) -> None:
    call = top_k_call()
    for tensor in ("input_tensor", "output_value_tensor", "output_index_tensor"):
        getattr(call.operator_desc.top_k1, tensor).buffer.guaranteed_base_offset_alignment = alignment
    values, indices = client.execute(call.operator_desc, call.inputs)
    expected_values, expected_indices = expected_top_k(call.inputs[0], 2)  # type: ignore[arg-type]
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(indices, expected_indices)


@pytest.mark.parametrize(
    ("tensor", "strides"),
    [
        ("output_value_tensor", [0, 1]),
        ("output_value_tensor", [1, 0]),
        ("output_value_tensor", [1, 1]),  # (0, 1) and (1, 0) share position 1
        ("output_index_tensor", [0, 1]),
        ("output_index_tensor", [2, 1]),  # (0, 2) and (1, 0) share position 2
    ],
)
def test_aliasing_output_strides_are_refused(client: dmlrpc.Client, tensor: str, strides: list[int]) -> None:
    call = top_k_call(k=3, shape=(2, 3))
    output = getattr(call.operator_desc.top_k1, tensor)
    output.CopyFrom(tensor_desc((np.float32 if tensor == "output_value_tensor" else np.uint32, (2, 3)), strides))
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, f"{TOP_K1}.{tensor}.buffer.strides", "must not overlap")


@pytest.mark.parametrize(
    ("sizes", "strides"),
    [((2, 3), [1, 2]), ((2, 3), [4, 1]), ((2, 3), [8, 2]), ((2, 1), [1, 0]), ((2, 1), [1, 1])],
    ids=["column-major", "row-padded", "gaps", "stride-0-on-size-1", "size-1-overlap"],
)
def test_non_aliasing_output_strides_are_accepted_with_zero_gaps(
    server: ServerThread, sizes: tuple[int, int], strides: list[int]
) -> None:
    call = top_k_call(k=sizes[1], shape=(2, 3))
    desc = call.operator_desc.top_k1
    desc.output_value_tensor.CopyFrom(tensor_desc((np.float32, sizes), strides))
    desc.output_index_tensor.CopyFrom(tensor_desc((np.uint32, sizes), strides))
    response = raw_execute(server.address, call.operator_desc, _buffers(call))
    expected = expected_top_k(call.inputs[0], sizes[1])  # type: ignore[arg-type]
    for output, dtype, want in zip(response.outputs, ("<f4", "<u4"), expected, strict=True):
        data = output.buffer.data
        assert len(data) == desc.output_value_tensor.buffer.total_tensor_size_in_bytes
        flat = np.frombuffer(data, dtype)
        positions = np.array([[i * strides[0] + j * strides[1] for j in range(sizes[1])] for i in range(2)])
        np.testing.assert_array_equal(flat[positions], want)
        gaps = np.setdiff1d(np.arange(flat.size), positions.ravel())
        assert not flat[gaps].any(), "bytes between strided output elements must be zero"


def test_interleaved_output_strides_are_refused_by_the_documented_rule(client: dmlrpc.Client) -> None:
    # sizes {3,2}, strides {2,3}: no position is shared, but sorted by stride, 3 does not exceed the span 4 of
    # stride 2; tensor.proto documents this (sufficient) non-overlap rule, which every packed, padded or
    # permuted layout meets.
    data = np.random.default_rng(1).permutation(12).astype(np.float32).reshape(3, 4)
    call = ops.top_k(data, 2)
    call.operator_desc.top_k1.output_value_tensor.CopyFrom(tensor_desc((np.float32, (3, 2)), [2, 3]))
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(call.operator_desc, call.inputs)
    assert caught.value.field_violations[0].field == "operator_desc.top_k1.output_value_tensor.buffer.strides"


def test_output_buffer_is_exactly_total_tensor_size_when_larger_than_needed(server: ServerThread) -> None:
    call = top_k_call()
    call.operator_desc.top_k1.output_value_tensor.buffer.total_tensor_size_in_bytes = 16 + 12
    call.operator_desc.top_k1.output_index_tensor.buffer.total_tensor_size_in_bytes = 16 + 4096
    response = raw_execute(server.address, call.operator_desc, _buffers(call))
    values, indices = (output.buffer.data for output in response.outputs)
    assert (len(values), len(indices)) == (28, 4112)
    assert values[16:] == bytes(12) and indices[16:] == bytes(4096)
    np.testing.assert_array_equal(np.frombuffer(values[:16], "<f4"), expected_top_k(call.inputs[0], 2)[0].ravel())  # type: ignore[arg-type]


def test_stride_zero_input_broadcasts(client: dmlrpc.Client) -> None:
    row = np.array([5, 1, 4], np.float32)
    call = ops.top_k(np.stack([row, row]), 2)
    call.operator_desc.top_k1.input_tensor.CopyFrom(tensor_desc((np.float32, (2, 3)), [0, 1]))
    values, indices = client.execute(call.operator_desc, [row.tobytes()])
    np.testing.assert_array_equal(values, [[5, 4], [5, 4]])
    np.testing.assert_array_equal(indices, [[0, 2], [0, 2]])


def test_strided_padded_input_is_read_at_its_strides(client: dmlrpc.Client) -> None:
    buffer = np.array([[3, 9, 1, -1], [7, 2, 8, -1]], np.float32)  # the -1 column is padding
    call = ops.top_k(buffer[:, :3], 1)
    call.operator_desc.top_k1.input_tensor.CopyFrom(tensor_desc((np.float32, (2, 3)), [4, 1]))
    values, indices = client.execute(call.operator_desc, [buffer.tobytes()])
    np.testing.assert_array_equal(values, [[9], [8]])
    np.testing.assert_array_equal(indices, [[1], [2]])


def test_owned_by_dml_on_a_scatter_input(client: dmlrpc.Client) -> None:
    call = ops.scatter_nd(np.zeros((2, 3), np.float32), np.array([[1]], np.uint32), np.ones((1, 3), np.float32))
    call.operator_desc.scatter_nd.updates_tensor.buffer.flags = tensor_pb2.TENSOR_FLAG_OWNED_BY_DML
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, "operator_desc.scatter_nd.updates_tensor.buffer.flags", "OWNED_BY_DML")


def test_scatter_tensor_with_9_dimensions(client: dmlrpc.Client) -> None:
    shape = (1,) * 8 + (2,)
    call = ops.scatter_elements(np.zeros(shape, np.float32), np.zeros(shape, np.int32), np.ones(shape, np.float32))
    refusal = sdk_refusal(client, call.operator_desc, call.inputs)
    assert_violation(refusal, "operator_desc.scatter_elements.input_tensor.buffer.sizes", "9 dimensions")


def test_top_k_case_71_applies_the_same_tensor_rules(server: ServerThread) -> None:
    call = top_k_call()
    legacy = as_case(call, "top_k")
    legacy.top_k.input_tensor.buffer.sizes[0] = 0
    refusal = raw_desc_refusal(server.address, legacy, _buffers(call))
    assert_violation(refusal, "operator_desc.top_k.input_tensor.buffer.sizes[0]", "size 0")
