"""JOIN and SPLIT over the wire: tensor arrays bound as DML_BINDING_TYPE_BUFFER_ARRAY, the page examples, properties
against NumPy, and the validation and binding rules."""

from __future__ import annotations

from typing import Any

import grpc
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, tensor_desc
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc
from dmlrpc_server.operators import REGISTRY
from tests.strategies import arrays, broadcast_values, layouts

LATEST = operators_pb2.FEATURE_LEVEL_6_4
A = np.array([[1, 2], [3, 4]], np.float32).reshape(1, 1, 2, 2)
B, C = A + 4, A + 8


def join_desc(pieces: list[Any], output: Any, axis: int, count: int | None = None) -> operators_pb2.OperatorDesc:
    return operators_pb2.OperatorDesc(
        join=operators_pb2.JoinOperatorDesc(
            input_count=len(pieces) if count is None else count,
            input_tensors=[tensor_desc(p) for p in pieces],
            output_tensor=tensor_desc(output),
            axis=axis,
        )
    )


def split_desc(source: Any, pieces: list[Any], axis: int, count: int | None = None) -> operators_pb2.OperatorDesc:
    return operators_pb2.OperatorDesc(
        split=operators_pb2.SplitOperatorDesc(
            input_tensor=tensor_desc(source),
            output_count=len(pieces) if count is None else count,
            output_tensors=[tensor_desc(p) for p in pieces],
            axis=axis,
        )
    )


@pytest.mark.parametrize("axis", [1, 2, 3])
def test_join_page_example_2(client: dmlrpc.Client, axis: int) -> None:
    expected = np.concatenate([A, B, C], axis)
    (joined,) = client.execute(join_desc([A, B, C], expected, axis), [[A, B, C]])
    np.testing.assert_array_equal(joined, expected)


def test_join_page_example_1(client: dmlrpc.Client) -> None:
    first = np.array([[1, 2, 3], [4, 5, 6]], np.float32).reshape(1, 1, 2, 3)
    second = np.array([[7, 8, 9, 10], [11, 12, 13, 14]], np.float32).reshape(1, 1, 2, 4)
    expected = np.array([[1, 2, 3, 7, 8, 9, 10], [4, 5, 6, 11, 12, 13, 14]], np.float32).reshape(1, 1, 2, 7)
    (joined,) = client.execute(join_desc([first, second], expected, 3), [[first, second]])
    np.testing.assert_array_equal(joined, expected)


def test_split_page_examples(client: dmlrpc.Client) -> None:
    x = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 6, 2)
    shapes = [(1, 1, 2, 2), (1, 1, 1, 2), (1, 1, 3, 2)]
    outputs = client.execute(split_desc(x, [(np.float32, s) for s in shapes], 2), [x])
    assert [np.asarray(o).tolist() for o in outputs] == [
        [[[[1, 2], [3, 4]]]],
        [[[[5, 6]]]],
        [[[[7, 8], [9, 10], [11, 12]]]],
    ]
    left, right = client.execute(split_desc(x, [(np.float32, (1, 1, 6, 1))] * 2, 3), [x])
    np.testing.assert_array_equal(np.asarray(left).reshape(-1), [1, 3, 5, 7, 9, 11])
    np.testing.assert_array_equal(np.asarray(right).reshape(-1), [2, 4, 6, 8, 10, 12])


def test_join_and_split_over_execute_stream(client: dmlrpc.Client) -> None:
    expected = np.concatenate([A, B, C], 2)
    (joined,) = client.execute(join_desc([A, B, C], expected, 2), [[A, B, C]], stream=True)
    np.testing.assert_array_equal(joined, expected)
    pieces = client.execute(split_desc(expected, [A, B, C], 2), [expected], stream=True)
    for got, want in zip(pieces, [A, B, C], strict=True):
        np.testing.assert_array_equal(got, want)


def _types(case: str) -> list[np.dtype[Any]]:
    table = REGISTRY[case].support_at(LATEST)
    assert table is not None
    return [DTYPE_BY_DATA_TYPE[t] for t in sorted(next(iter(table.values())).data_types)]


@st.composite
def _pieces(draw: st.DrawFn, case: str) -> tuple[np.dtype[Any], tuple[int, ...], int, list[int]]:
    dtype = draw(st.sampled_from(_types(case)), label="dtype")
    rank = draw(st.integers(1, 8), label="rank")
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank), label="shape"))
    axis = draw(st.integers(0, rank - 1), label="axis")
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=5), label="axis sizes")
    return dtype, shape, axis, sizes


def _with_axis(shape: tuple[int, ...], axis: int, size: int) -> tuple[int, ...]:
    return shape[:axis] + (size,) + shape[axis + 1 :]


@settings(max_examples=25)
@given(data=st.data())
def test_join_matches_numpy(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype, shape, axis, sizes = data.draw(_pieces("join"))
    values, descs = [], []
    for i, size in enumerate(sizes):
        piece_shape = _with_axis(shape, axis, size)
        layout = data.draw(layouts(piece_shape, allow_broadcast=True), label=f"layout {i}")
        values.append(broadcast_values(data.draw(arrays(dtype.type, piece_shape), label=f"piece {i}"), layout))
        descs.append(tensor_desc((dtype, piece_shape), layout.strides))
    expected = np.concatenate(values, axis)
    out_layout = data.draw(layouts(expected.shape, allow_broadcast=False), label="output layout")
    desc = operators_pb2.OperatorDesc(
        join=operators_pb2.JoinOperatorDesc(
            input_count=len(descs),
            input_tensors=descs,
            output_tensor=tensor_desc((dtype, expected.shape), out_layout.strides),
            axis=axis,
        )
    )
    (joined,) = client.execute(desc, [values])
    assert joined is not None and joined.dtype == dtype
    np.testing.assert_array_equal(joined, expected)


@settings(max_examples=25)
@given(data=st.data())
def test_split_matches_numpy(client: dmlrpc.Client, data: st.DataObject) -> None:
    dtype, shape, axis, sizes = data.draw(_pieces("split"))
    whole_shape = _with_axis(shape, axis, sum(sizes))
    layout = data.draw(layouts(whole_shape, allow_broadcast=True), label="input layout")
    x = broadcast_values(data.draw(arrays(dtype.type, whole_shape), label="x"), layout)
    descs = []
    for i, size in enumerate(sizes):
        piece_shape = _with_axis(shape, axis, size)
        piece_layout = data.draw(layouts(piece_shape, allow_broadcast=False), label=f"output layout {i}")
        descs.append(tensor_desc((dtype, piece_shape), piece_layout.strides))
    desc = operators_pb2.OperatorDesc(
        split=operators_pb2.SplitOperatorDesc(
            input_tensor=tensor_desc((dtype, whole_shape), layout.strides),
            output_count=len(descs),
            output_tensors=descs,
            axis=axis,
        )
    )
    outputs = client.execute(desc, [x])
    expected = np.split(x, np.cumsum(sizes)[:-1], axis)
    assert len(outputs) == len(sizes)
    for got, want in zip(outputs, expected, strict=True):
        assert got is not None and got.dtype == dtype
        np.testing.assert_array_equal(got, want)


def _violation(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, inputs: list[Any]) -> str:
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    return caught.value.field_violations[0].field


D = (np.float32, (1, 1, 2, 2))
W = (np.float32, (1, 1, 4, 2))


@pytest.mark.parametrize(
    ("desc", "field"),
    [
        (join_desc([D, D], (np.float32, (1, 1, 4, 2)), 2, count=3), "operator_desc.join.input_count"),
        (join_desc([D, D], (np.float32, (1, 1, 4, 2)), 4), "operator_desc.join.axis"),
        (join_desc([D, (np.int32, (1, 1, 2, 2))], (np.float32, (1, 1, 4, 2)), 2), "input_tensors[1].buffer.data_type"),
        (join_desc([D, (np.float32, (1, 2, 2))], (np.float32, (1, 1, 4, 2)), 2), "input_tensors[1].buffer.sizes"),
        (join_desc([D, (np.float32, (1, 1, 2, 3))], (np.float32, (1, 1, 4, 2)), 2), "input_tensors[1].buffer.sizes"),
        (join_desc([D, D], (np.float32, (1, 1, 5, 2)), 2), "output_tensor.buffer.sizes[2]"),
        (split_desc(W, [D, D], 2, count=1), "operator_desc.split.output_count"),
        (split_desc(W, [D, D], 7), "operator_desc.split.axis"),
        (
            split_desc(W, [D, (np.uint8, (1, 1, 2, 2))], 2),
            "output_tensors[1].buffer.data_type",
        ),
        (split_desc(W, [D, (np.float32, (1, 1, 1, 2))], 2), "input_tensor.buffer.sizes[2]"),
    ],
)
def test_rules(client: dmlrpc.Client, desc: operators_pb2.OperatorDesc, field: str) -> None:
    case = desc.WhichOneof("desc")
    assert case is not None
    zeros = bytes(256)  # raw bytes: the desc is refused before any buffer is read
    inputs: list[Any] = [[zeros] * len(desc.join.input_tensors)] if case == "join" else [zeros]
    with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
        client.execute(desc, inputs)
    assert caught.value.field_violations[0].field.endswith(field)


def test_an_empty_array_is_refused(client: dmlrpc.Client) -> None:
    desc = split_desc(W, [], 2)
    assert _violation(client, desc, [np.zeros((1, 1, 4, 2), np.float32)]) == "operator_desc.split.output_tensors"


# The binding rules, sent as raw requests (the SDK always binds arrays correctly).
_JOIN = join_desc([D, D], (np.float32, (1, 1, 4, 2)), 2)
_PIECE = np.ones((1, 1, 2, 2), np.float32).tobytes()


def _raw(server_address: str, inputs: list[service_pb2.BindingDesc], **fields: Any) -> dmlrpc.DmlRpcError:
    with grpc.insecure_channel(server_address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.Execute(service_pb2.ExecuteRequest(operator_desc=_JOIN, inputs=inputs, **fields))
    return dmlrpc.errors.from_rpc_error(caught.value)


def _array(*parts: bytes, count: int | None = None) -> service_pb2.BindingDesc:
    return service_pb2.BindingDesc(
        buffer_array=service_pb2.BufferArrayBinding(
            binding_count=len(parts) if count is None else count,
            bindings=[service_pb2.BufferBinding(data=p) for p in parts],
        )
    )


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ([service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=_PIECE))], "inputs[0]"),
        ([_array(_PIECE, _PIECE, count=3)], "inputs[0].buffer_array.binding_count"),
        ([_array(_PIECE)], "inputs[0].buffer_array.bindings"),
        ([_array(_PIECE, _PIECE[:-4])], "inputs[0].buffer_array.bindings[1].data"),
        ([_array(_PIECE, _PIECE), _array(_PIECE, _PIECE)], "inputs"),
    ],
)
def test_buffer_array_binding_rules(server: Any, inputs: list[service_pb2.BindingDesc], field: str) -> None:
    error = _raw(server.address, inputs)
    assert isinstance(error, dmlrpc.InvalidArgumentError)
    assert error.field_violations[0].field == field


def test_a_buffer_array_for_a_single_tensor_is_refused(server: Any) -> None:
    desc = operators_pb2.OperatorDesc(
        element_wise_identity=operators_pb2.ElementWiseIdentityOperatorDesc(
            input_tensor=tensor_desc(D), output_tensor=tensor_desc(D)
        )
    )
    with grpc.insecure_channel(server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.Execute(service_pb2.ExecuteRequest(operator_desc=desc, inputs=[_array(_PIECE)]))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_tensor_arrays_cannot_be_kept(server: Any) -> None:
    error = _raw(server.address, [_array(_PIECE, _PIECE)], keep_outputs=[0])
    assert isinstance(error, dmlrpc.InvalidArgumentError)


def test_split_returns_a_buffer_array_binding(server: Any) -> None:
    x = np.arange(8, dtype=np.float32).reshape(1, 1, 4, 2)
    desc = split_desc(x, [D, D], 2)
    with grpc.insecure_channel(server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        response = stub.Execute(
            service_pb2.ExecuteRequest(
                operator_desc=desc, inputs=[service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=x.tobytes()))]
            )
        )
    (binding,) = response.outputs
    assert binding.WhichOneof("binding") == "buffer_array"
    assert binding.buffer_array.binding_count == 2
    assert [np.frombuffer(b.data, np.float32).tolist() for b in binding.buffer_array.bindings] == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
    ]


def test_sdk_wants_a_list_for_a_tensor_array(client: dmlrpc.Client) -> None:
    desc = join_desc([A, B], np.concatenate([A, B], 1), 1)
    with pytest.raises(ValueError, match="tensor array of 2"):
        client.execute(desc, [A])
    with pytest.raises(ValueError, match="tensor array of 2"):
        client.execute(desc, [[A]])
    with pytest.raises(ValueError, match="cannot be kept"):
        client.execute(desc, [[A, B]], keep=True)
