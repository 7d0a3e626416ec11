"""The real server under Wine on DmlExecutionProvider, over loopback: references, CPU provider, DirectML facts."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import dmlrpc
from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.operators import REGISTRY
from tests.dml.conftest import WineServer
from tests.dml.lowering import TOP_K_BLOCKED, TOP_K_BLOCKED_REASON
from tests.ops.test_scatter_elements import scatter_elements_cases, scatter_elements_desc
from tests.ops.test_scatter_nd import scatter_nd_cases, scatter_nd_desc
from tests.ops.test_top_k import DOC_EXAMPLES, top_k1_desc
from tests.references import dml
from tests.strategies import TOP_K_DTYPES, arrays, broadcast_values, layouts, shapes

pytestmark = [pytest.mark.dml, pytest.mark.timeout(900)]

DEC, INC = tensor_pb2.AXIS_DIRECTION_DECREASING, tensor_pb2.AXIS_DIRECTION_INCREASING
#: Each new desc is a new DirectML session (about a second under lavapipe), so fewer examples than on the CPU: 10 of
#: each (30 took 70 of the lane's seconds; the probe covers every data type of these operators).
EXAMPLES = int(os.environ.get("DMLRPC_DML_EXAMPLES", "10"))
on_directml = settings(
    max_examples=EXAMPLES,
    deadline=None,
    # Shrinking replays many new descs, each a new session; the failing example is reported unshrunk.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
top_k_blocked = pytest.mark.xfail(TOP_K_BLOCKED, reason=TOP_K_BLOCKED_REASON, raises=dmlrpc.InternalError, strict=True)


def same(dml_outputs: list[np.ndarray | None], cpu_outputs: list[np.ndarray | None]) -> None:
    """Byte-equal outputs: these operators select and copy, so DirectML's tolerance is exact."""
    assert len(dml_outputs) == len(cpu_outputs)
    for got, want in zip(dml_outputs, cpu_outputs, strict=True):
        assert got is not None and want is not None
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()


def test_capabilities_name_directml(dml_server: WineServer) -> None:
    capabilities = dml_server.connected().get_capabilities()
    assert capabilities.execution_provider == "DmlExecutionProvider"
    assert capabilities.device == "DirectML adapter 0"
    executable = {entry.operator_type for entry in capabilities.operators if entry.executable}
    assert executable == {operator.operator_type for operator in REGISTRY.values()}


def test_scatter_nd_doc_example(dml_server: WineServer, client: dmlrpc.Client) -> None:
    x = np.array([[1, 2, 3, 4, 5, 6, 7, 8]], np.float32)
    indices = np.array([[4], [3], [1], [7]], np.uint32)
    updates = np.array([[9, 10, 11, 12]], np.float32)
    desc = scatter_nd_desc(x, indices, updates, 1, 2)
    (out,) = dml_server.execute(desc, [x, indices, updates])
    np.testing.assert_array_equal(out, [[1, 11, 3, 10, 9, 6, 7, 12]])
    same(dml_server.execute(desc, [x, indices, updates]), client.execute(desc, [x, indices, updates]))


def test_scatter_elements_doc_example(dml_server: WineServer) -> None:
    x = np.zeros((3, 3), np.float32)
    indices = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    updates = np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], np.float32)
    (out,) = dml_server.execute(scatter_elements_desc(x, indices, updates, 0), [x, indices, updates])
    expected = np.array([[2.0, 1.1, 0.0], [1.0, 0.0, 2.2], [0.0, 2.1, 1.2]], np.float32)
    np.testing.assert_array_equal(out, expected)


@on_directml
@given(case=scatter_elements_cases(), data=st.data())
def test_scatter_elements_matches_reference_and_cpu(  # type: ignore[no-untyped-def]
    dml_server: WineServer, client: dmlrpc.Client, case, data: st.DataObject
) -> None:
    x, indices, updates, axis = case
    strides = {}
    layout = data.draw(layouts(x.shape, allow_broadcast=True), label="input layout")
    strides["input"], x = layout.strides, broadcast_values(x, layout)
    layout = data.draw(layouts(indices.shape, allow_broadcast=True), label="indices layout")
    strides["indices"], indices = layout.strides, broadcast_values(indices, layout)
    layout = data.draw(layouts(updates.shape, allow_broadcast=True), label="updates layout")
    strides["updates"], updates = layout.strides, broadcast_values(updates, layout)
    strides["output"] = data.draw(layouts(x.shape, allow_broadcast=False), label="output layout").strides
    expected = dml.scatter_elements(x, indices, updates, axis)
    desc = scatter_elements_desc(x, indices, updates, axis, strides)
    if isinstance(expected, str):
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            dml_server.execute(desc, [x, indices, updates])
        assert caught.value.field_violations[0].field == "inputs[1].buffer.data"
        return
    outputs = dml_server.execute(desc, [x, indices, updates])
    np.testing.assert_array_equal(outputs[0], expected)
    same(outputs, client.execute(desc, [x, indices, updates]))


@on_directml
@given(case=scatter_nd_cases(), data=st.data())
def test_scatter_nd_matches_reference_and_cpu(  # type: ignore[no-untyped-def]
    dml_server: WineServer, client: dmlrpc.Client, case, data: st.DataObject
) -> None:
    x, indices, updates, input_count, indices_count = case
    strides = {}
    layout = data.draw(layouts(x.shape, allow_broadcast=True), label="input layout")
    strides["input"], x = layout.strides, broadcast_values(x, layout)
    layout = data.draw(layouts(indices.shape, allow_broadcast=True), label="indices layout")
    strides["indices"], indices = layout.strides, broadcast_values(indices, layout)
    layout = data.draw(layouts(updates.shape, allow_broadcast=True), label="updates layout")
    strides["updates"], updates = layout.strides, broadcast_values(updates, layout)
    strides["output"] = data.draw(layouts(x.shape, allow_broadcast=False), label="output layout").strides
    expected = dml.scatter_nd(x, indices, updates, input_count, indices_count)
    desc = scatter_nd_desc(x, indices, updates, input_count, indices_count, strides)
    if isinstance(expected, str):
        with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
            dml_server.execute(desc, [x, indices, updates])
        assert caught.value.field_violations[0].field == "inputs[1].buffer.data"
        return
    outputs = dml_server.execute(desc, [x, indices, updates])
    np.testing.assert_array_equal(outputs[0], expected)
    same(outputs, client.execute(desc, [x, indices, updates]))


@top_k_blocked
@pytest.mark.parametrize(("x", "axis", "k", "direction", "values", "indices"), DOC_EXAMPLES[:2])
def test_top_k1_doc_examples(dml_server: WineServer, x, axis, k, direction, values, indices) -> None:  # type: ignore[no-untyped-def]
    got_values, got_indices = dml_server.execute(top_k1_desc(x, axis, k, direction), [x])
    np.testing.assert_array_equal(got_values, np.array(values, np.float32))
    np.testing.assert_array_equal(got_indices, np.array(indices, np.uint32))


@top_k_blocked
def test_top_k_type_71_and_k_equal_to_the_axis_size(dml_server: WineServer, client: dmlrpc.Client) -> None:
    x = np.array([[[[3, 1, 2, 1], [0, 9, 9, 4]]]], np.float32)
    desc = top_k1_desc(x, 3, 4, DEC).top_k1
    top_k = operators_pb2.TopKOperatorDesc(
        input_tensor=desc.input_tensor,
        output_value_tensor=desc.output_value_tensor,
        output_index_tensor=desc.output_index_tensor,
        axis=3,
        k=4,
    )
    operator_desc = operators_pb2.OperatorDesc(top_k=top_k)
    values, indices = dml_server.execute(operator_desc, [x])
    np.testing.assert_array_equal(indices, [[[[0, 2, 1, 3], [1, 2, 3, 0]]]])
    same([values, indices], client.execute(operator_desc, [x]))


@pytest.mark.skipif(TOP_K_BLOCKED, reason=TOP_K_BLOCKED_REASON)
@on_directml
@given(data=st.data())
def test_top_k1_matches_reference_and_cpu(dml_server: WineServer, client: dmlrpc.Client, data: st.DataObject) -> None:
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
    values, indices = dml_server.execute(desc, [x])
    expected_values, expected_indices = dml.top_k(x, axis, k, decreasing=direction == DEC)
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(indices, expected_indices)
    same([values, indices], client.execute(desc, [x]))
