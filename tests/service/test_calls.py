"""Stage 1 on the wire: ``calls.read_execute`` reads what protobuf reads, or leaves the request to protobuf."""

from __future__ import annotations

import grpc
import numpy as np
import pytest
from google.protobuf.message import DecodeError
from hypothesis import given
from hypothesis import strategies as st

import dmlrpc
from dmlrpc import ops
from dmlrpc.v1 import operators_pb2, service_pb2
from dmlrpc.wire import varint
from dmlrpc_server.calls import read_execute
from tests.conftest import ServerThread

_binding = st.one_of(
    st.just(service_pb2.BindingDesc()),
    st.binary(max_size=300).map(lambda data: service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=data))),
)


@given(desc=st.binary(max_size=200), bindings=st.lists(_binding, max_size=5))
def test_the_common_form_reads_as_protobuf_reads_it(desc: bytes, bindings: list[service_pb2.BindingDesc]) -> None:
    request = service_pb2.ExecuteRequest(inputs=bindings)
    raw = request.SerializeToString()
    # The desc field is opaque here: put arbitrary bytes in as field 1 (protobuf would parse them later).
    raw = b"\x0a" + varint(len(desc)) + desc + raw
    call = read_execute(raw)
    assert call is not None
    assert call.desc == desc and call.size == len(raw)
    expected = [None if b.WhichOneof("binding") is None else b.buffer.data for b in bindings]
    assert [None if view is None else bytes(view) for view in call.buffers] == expected


@given(raw=st.binary(max_size=400))
def test_garbage_is_left_to_protobuf_or_read_consistently(raw: bytes) -> None:
    call = read_execute(raw)
    if call is None:
        return
    try:
        parsed = service_pb2.ExecuteRequest.FromString(raw)
    except DecodeError:
        # Only the desc's own bytes can be invalid: the server then refuses the desc as protobuf would.
        with pytest.raises(DecodeError):
            operators_pb2.OperatorDesc.FromString(call.desc)
        return
    assert len(parsed.inputs) == len(call.buffers)
    for binding, view in zip(parsed.inputs, call.buffers, strict=True):
        assert (view is None) == (binding.WhichOneof("binding") is None)
        if view is not None:
            assert bytes(view) == binding.buffer.data


def test_uncommon_forms_go_to_protobuf() -> None:
    x = np.arange(4, dtype=np.float32)
    call = ops.top_k(x, 2, 0)
    base = service_pb2.ExecuteRequest(operator_desc=call.operator_desc)
    kept = service_pb2.ExecuteRequest()
    kept.CopyFrom(base)
    kept.keep_outputs.append(0)
    resident = service_pb2.ExecuteRequest()
    resident.CopyFrom(base)
    resident.inputs.add().resident.handle = "abc"
    array = service_pb2.ExecuteRequest()
    array.CopyFrom(base)
    array.inputs.add().buffer_array.binding_count = 0
    for request in (kept, resident, array):
        assert read_execute(request.SerializeToString()) is None
    assert read_execute(service_pb2.ExecuteRequest().SerializeToString()) is None  # no desc


def test_fields_in_any_order_give_the_same_answer(server: ServerThread) -> None:
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.float32)
    call = ops.top_k(x, 3, 0)
    request = service_pb2.ExecuteRequest(
        operator_desc=call.operator_desc,
        inputs=[service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=x.tobytes()))],
    )
    inputs_first = b"".join(
        [b"\x12" + varint(b.ByteSize()) + b.SerializeToString() for b in request.inputs]
        + [b"\x0a" + varint(request.operator_desc.ByteSize()) + request.operator_desc.SerializeToString()]
    )
    with grpc.insecure_channel(server.address) as channel:
        execute = channel.unary_unary("/dmlrpc.v1.DirectMLService/Execute")
        first = service_pb2.ExecuteResponse.FromString(execute(request.SerializeToString(), timeout=10))
        second = service_pb2.ExecuteResponse.FromString(execute(inputs_first, timeout=10))
    assert first == second
    np.testing.assert_array_equal(np.frombuffer(first.outputs[0].buffer.data, np.float32), [9, 6, 5])
    with dmlrpc.Client(server.address) as client:
        values, _ = client.top_k(x, 3, 0)
    np.testing.assert_array_equal(values, [9, 6, 5])
