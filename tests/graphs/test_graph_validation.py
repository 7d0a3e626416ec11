"""CompileGraph/CompileOperator validation over raw stubs: every graph rule, owned-input and dispatch-binding rule."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import numpy as np
import pytest

from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import graph_pb2, operators_pb2, service_pb2, service_pb2_grpc, tensor_pb2
from tests.conftest import ServerThread, start_server

OWNED = tensor_pb2.TENSOR_FLAG_OWNED_BY_DML
SHAPE = (2, 3)
F32 = tensor_desc((np.float32, SHAPE))
CONSTANT = np.arange(1, 7, dtype=np.float32).reshape(SHAPE)
A = np.arange(6, dtype=np.float32).reshape(SHAPE)
B = np.full(SHAPE, 2, np.float32)


def binary(case: str, a: tensor_pb2.TensorDesc = F32, b: tensor_pb2.TensorDesc = F32) -> graph_pb2.GraphNodeDesc:
    operator = operators_pb2.OperatorDesc()
    getattr(operator, case).CopyFrom(getattr(operator, case).__class__(a_tensor=a, b_tensor=b, output_tensor=F32))
    return graph_pb2.GraphNodeDesc(operator=graph_pb2.OperatorGraphNodeDesc(operator=operator))


def negate(desc: tensor_pb2.TensorDesc = F32, out: tensor_pb2.TensorDesc = F32) -> graph_pb2.GraphNodeDesc:
    operator = operators_pb2.OperatorDesc(
        element_wise_negate=operators_pb2.ElementWiseNegateOperatorDesc(input_tensor=desc, output_tensor=out)
    )
    return graph_pb2.GraphNodeDesc(operator=graph_pb2.OperatorGraphNodeDesc(operator=operator))


def constant(data: bytes, size: int | None = None) -> graph_pb2.GraphNodeDesc:
    return graph_pb2.GraphNodeDesc(
        constant_data=graph_pb2.ConstantDataGraphNodeDesc(data=data, data_size=len(data) if size is None else size)
    )


def input_edge(graph_input: int, node: int, index: int) -> graph_pb2.GraphEdgeDesc:
    return graph_pb2.GraphEdgeDesc(
        input=graph_pb2.InputGraphEdgeDesc(graph_input_index=graph_input, to_node_index=node, to_node_input_index=index)
    )


def output_edge(node: int, index: int, graph_output: int) -> graph_pb2.GraphEdgeDesc:
    return graph_pb2.GraphEdgeDesc(
        output=graph_pb2.OutputGraphEdgeDesc(
            from_node_index=node, from_node_output_index=index, graph_output_index=graph_output
        )
    )


def middle(node: int, output: int, to: int, index: int) -> graph_pb2.GraphEdgeDesc:
    return graph_pb2.GraphEdgeDesc(
        intermediate=graph_pb2.IntermediateGraphEdgeDesc(
            from_node_index=node, from_node_output_index=output, to_node_index=to, to_node_input_index=index
        )
    )


def counted(graph: graph_pb2.GraphDesc) -> graph_pb2.GraphDesc:
    """``graph`` with every *_count set to its array's length."""
    graph.node_count = len(graph.nodes)
    graph.input_edge_count = len(graph.input_edges)
    graph.output_edge_count = len(graph.output_edges)
    graph.intermediate_edge_count = len(graph.intermediate_edges)
    return graph


def base() -> graph_pb2.GraphDesc:
    """(in0 + in1) -> negate -> * constant -> out0: nodes 0 add, 1 negate, 2 constant, 3 multiply."""
    return counted(
        graph_pb2.GraphDesc(
            input_count=2,
            output_count=1,
            nodes=[binary("element_wise_add"), negate(), constant(CONSTANT.tobytes()), binary("element_wise_multiply")],
            input_edges=[input_edge(0, 0, 0), input_edge(1, 0, 1)],
            output_edges=[output_edge(3, 0, 0)],
            intermediate_edges=[middle(0, 0, 1, 0), middle(1, 0, 3, 0), middle(2, 0, 3, 1)],
        )
    )


@pytest.fixture(scope="module")
def stub(server: ServerThread) -> Iterator[service_pb2_grpc.DirectMLServiceStub]:
    with grpc.insecure_channel(server.address) as channel:
        yield service_pb2_grpc.DirectMLServiceStub(channel)


def refusal(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    """The status code and first field violation of a refused call."""
    from dmlrpc.errors import from_rpc_error

    with pytest.raises(grpc.RpcError) as caught:
        call()
    error = from_rpc_error(caught.value)
    fields = [v.field for v in error.field_violations]
    assert len(fields) == 1, fields
    return caught.value.code(), fields[0]


def refused(stub: service_pb2_grpc.DirectMLServiceStub, graph: graph_pb2.GraphDesc, **request: Any) -> str:
    """The field path of a CompileGraph refused with INVALID_ARGUMENT."""
    code, field = refusal(
        lambda: stub.CompileGraph(service_pb2.CompileGraphRequest(graph_desc=graph, **request), timeout=60)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    return field


def buffer(array: np.ndarray) -> service_pb2.BindingDesc:
    return service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=array.tobytes()))


def dispatch(stub: service_pb2_grpc.DirectMLServiceStub, handle: str, *inputs: service_pb2.BindingDesc) -> list[Any]:
    response = stub.Dispatch(service_pb2.DispatchRequest(handle=handle, inputs=inputs), timeout=60)
    return [np.frombuffer(o.buffer.data, np.float32).reshape(SHAPE) for o in response.outputs]


def test_the_base_graph_compiles_and_runs(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    compiled = stub.CompileGraph(service_pb2.CompileGraphRequest(graph_desc=base()), timeout=60)
    assert [tuple(d.buffer.sizes) for d in compiled.input_descs] == [SHAPE, SHAPE]
    (result,) = dispatch(stub, compiled.handle, buffer(A), buffer(B))
    np.testing.assert_array_equal(result, -(A + B) * CONSTANT)
    stub.ReleaseCompiledOperator(service_pb2.ReleaseCompiledOperatorRequest(handle=compiled.handle), timeout=60)


@pytest.mark.parametrize("name", ["node_count", "input_edge_count", "output_edge_count", "intermediate_edge_count"])
@pytest.mark.parametrize("delta", [-1, 1])
def test_each_count_must_equal_its_array(stub: service_pb2_grpc.DirectMLServiceStub, name: str, delta: int) -> None:
    graph = base()
    setattr(graph, name, getattr(graph, name) + delta)
    assert refused(stub, graph) == f"graph_desc.{name}"


def test_a_graph_needs_a_node(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    graph = counted(graph_pb2.GraphDesc(input_count=0, output_count=1))
    assert refused(stub, graph) == "graph_desc.nodes"


def test_a_graph_needs_an_output(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    graph = base()
    graph.output_count = 0
    del graph.output_edges[:]
    assert refused(stub, counted(graph)) == "graph_desc.output_count"


@pytest.fixture(scope="module")
def small() -> Iterator[ServerThread]:
    running = start_server(max_graph_nodes=4, feature_level="6.1")
    yield running
    running.stop()


def chain(nodes: int) -> graph_pb2.GraphDesc:
    return counted(
        graph_pb2.GraphDesc(
            input_count=1,
            output_count=1,
            nodes=[negate() for _ in range(nodes)],
            input_edges=[input_edge(0, 0, 0)],
            output_edges=[output_edge(nodes - 1, 0, 0)],
            intermediate_edges=[middle(i, 0, i + 1, 0) for i in range(nodes - 1)],
        )
    )


def test_max_graph_nodes(small: ServerThread) -> None:
    with grpc.insecure_channel(small.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        compiled = stub.CompileGraph(service_pb2.CompileGraphRequest(graph_desc=chain(4)), timeout=60)
        (result,) = dispatch(stub, compiled.handle, buffer(A))
        np.testing.assert_array_equal(result, A)  # four negations
        assert refused(stub, chain(5)) == "graph_desc.nodes"
        # below DML_FEATURE_LEVEL_6_2 constant nodes do not exist
        assert refused(stub, base()) == "graph_desc.nodes[2].constant_data"


def test_node_rules(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    graph = base()
    graph.nodes[1].Clear()
    assert refused(stub, graph) == "graph_desc.nodes[1]"
    graph = base()
    graph.nodes[1].operator.Clear()
    graph.nodes[1].operator.name = "no operator"
    assert refused(stub, graph) == "graph_desc.nodes[1].operator.operator"
    graph = base()
    graph.nodes[2].constant_data.data_size = 20
    assert refused(stub, graph) == "graph_desc.nodes[2].constant_data.data_size"


def test_an_invalid_operator_desc_names_its_field_inside_the_node(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    graph = base()
    graph.nodes[1].CopyFrom(negate(out=tensor_desc((np.float32, (3, 2)))))
    assert refused(stub, graph) == "graph_desc.nodes[1].operator.operator.element_wise_negate.input_tensor.buffer.sizes"
    graph = base()
    graph.nodes[3].operator.operator.element_wise_multiply.a_tensor.buffer.sizes[:] = [2, 3, 4]
    field = refused(stub, graph)
    assert field.startswith("graph_desc.nodes[3].operator.operator.element_wise_multiply.")


def test_owned_flag_on_an_output(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    graph = base()
    graph.nodes[1].operator.operator.element_wise_negate.output_tensor.buffer.flags |= OWNED
    assert refused(stub, graph) == "graph_desc.nodes[1].operator.operator"
    desc = operators_pb2.OperatorDesc()
    desc.CopyFrom(graph.nodes[1].operator.operator)
    code, field = refusal(
        lambda: stub.CompileOperator(service_pb2.CompileOperatorRequest(operator_desc=desc), timeout=60)
    )
    assert (code, field) == (grpc.StatusCode.INVALID_ARGUMENT, "operator_desc")


@pytest.mark.parametrize(
    ("array", "edge"),
    [
        ("input_edges", output_edge(3, 0, 0)),
        ("input_edges", middle(0, 0, 1, 0)),
        ("output_edges", input_edge(0, 0, 0)),
        ("output_edges", middle(0, 0, 1, 0)),
        ("intermediate_edges", input_edge(0, 0, 0)),
        ("intermediate_edges", graph_pb2.GraphEdgeDesc()),
    ],
)
def test_an_edge_of_the_wrong_type(
    stub: service_pb2_grpc.DirectMLServiceStub, array: str, edge: graph_pb2.GraphEdgeDesc
) -> None:
    graph = base()
    getattr(graph, array)[0].CopyFrom(edge)
    assert refused(stub, graph) == f"graph_desc.{array}[0]"


def _input_edge(e: int, **fields: int) -> Callable[[graph_pb2.GraphDesc], None]:
    def change(graph: graph_pb2.GraphDesc) -> None:
        for name, value in fields.items():
            setattr(graph.input_edges[e].input, name, value)

    return change


def _output_edge(e: int, **fields: int) -> Callable[[graph_pb2.GraphDesc], None]:
    def change(graph: graph_pb2.GraphDesc) -> None:
        for name, value in fields.items():
            setattr(graph.output_edges[e].output, name, value)

    return change


def _middle_edge(e: int, **fields: int) -> Callable[[graph_pb2.GraphDesc], None]:
    def change(graph: graph_pb2.GraphDesc) -> None:
        for name, value in fields.items():
            setattr(graph.intermediate_edges[e].intermediate, name, value)

    return change


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (_input_edge(1, graph_input_index=2), "graph_desc.input_edges[1].input.graph_input_index"),
        (_input_edge(0, to_node_index=4), "graph_desc.input_edges[0].input.to_node_index"),
        (_input_edge(0, to_node_index=2), "graph_desc.input_edges[0].input.to_node_index"),  # a constant node
        (_input_edge(1, to_node_input_index=2), "graph_desc.input_edges[1].input.to_node_input_index"),
        (_output_edge(0, from_node_index=4), "graph_desc.output_edges[0].output.from_node_index"),
        (_output_edge(0, from_node_output_index=1), "graph_desc.output_edges[0].output.from_node_output_index"),
        (_output_edge(0, graph_output_index=1), "graph_desc.output_edges[0].output.graph_output_index"),
        (_output_edge(0, from_node_index=2), "graph_desc.output_edges[0].output.from_node_index"),  # a constant
        (_middle_edge(0, from_node_index=7), "graph_desc.intermediate_edges[0].intermediate.from_node_index"),
        (
            _middle_edge(0, from_node_output_index=1),
            "graph_desc.intermediate_edges[0].intermediate.from_node_output_index",
        ),
        (
            _middle_edge(2, from_node_output_index=1),  # a constant node has output 0 only
            "graph_desc.intermediate_edges[2].intermediate.from_node_output_index",
        ),
        (_middle_edge(1, to_node_index=9), "graph_desc.intermediate_edges[1].intermediate.to_node_index"),
        (_middle_edge(0, to_node_index=2), "graph_desc.intermediate_edges[0].intermediate.to_node_index"),
        (_middle_edge(0, to_node_input_index=1), "graph_desc.intermediate_edges[0].intermediate.to_node_input_index"),
    ],
)
def test_edge_indices(
    stub: service_pb2_grpc.DirectMLServiceStub, change: Callable[[graph_pb2.GraphDesc], None], field: str
) -> None:
    graph = base()
    change(graph)
    assert refused(stub, graph) == field


def quantize_graph() -> graph_pb2.GraphDesc:
    """negate -> quantize_linear(x, scale, zero_point unset) -> out; nodes 0 negate, 1 constant scale, 2 quantize."""
    operator = operators_pb2.OperatorDesc(
        element_wise_quantize_linear=operators_pb2.ElementWiseQuantizeLinearOperatorDesc(
            input_tensor=F32, scale_tensor=F32, output_tensor=tensor_desc((np.uint8, SHAPE))
        )
    )
    return counted(
        graph_pb2.GraphDesc(
            input_count=1,
            output_count=1,
            nodes=[
                negate(),
                constant(np.full(SHAPE, 0.5, np.float32).tobytes()),
                graph_pb2.GraphNodeDesc(operator=graph_pb2.OperatorGraphNodeDesc(operator=operator)),
            ],
            input_edges=[input_edge(0, 0, 0)],
            output_edges=[output_edge(2, 0, 0)],
            intermediate_edges=[middle(0, 0, 2, 0), middle(1, 0, 2, 1)],
        )
    )


def test_an_unset_optional_input_takes_no_edge(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    compiled = stub.CompileGraph(service_pb2.CompileGraphRequest(graph_desc=quantize_graph()), timeout=60)
    response = stub.Dispatch(service_pb2.DispatchRequest(handle=compiled.handle, inputs=[buffer(-A)]), timeout=60)
    data = response.outputs[0].buffer.data
    assert len(data) == 8  # total_tensor_size_in_bytes: 6 bytes rounded up to a multiple of 4
    np.testing.assert_array_equal(np.frombuffer(data, np.uint8)[:6], (A * 2).ravel())
    graph = quantize_graph()
    graph.intermediate_edges.append(middle(0, 0, 2, 2))
    assert refused(stub, counted(graph)) == "graph_desc.intermediate_edges[2].intermediate"
    graph = quantize_graph()
    graph.input_edges.append(input_edge(0, 2, 2))
    assert refused(stub, counted(graph)) == "graph_desc.input_edges[1].input"


def test_an_input_fed_twice(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    graph = base()
    graph.input_edges.append(input_edge(0, 1, 0))  # node 1 input 0 is also fed by intermediate_edges[0]
    assert refused(stub, counted(graph)) == "graph_desc.intermediate_edges[0].intermediate"
    graph = base()
    graph.input_edges.append(input_edge(1, 0, 0))
    assert refused(stub, counted(graph)) == "graph_desc.input_edges[2].input"


def test_connection_rules(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    # an unconnected required input
    graph = base()
    del graph.input_edges[1]
    graph.input_count = 1
    assert refused(stub, counted(graph)) == "graph_desc.nodes[0]"
    # an unconnected required output: node 4 negates node 1's output into nothing
    graph = base()
    graph.nodes.append(negate())
    graph.intermediate_edges.append(middle(1, 0, 4, 0))
    assert refused(stub, counted(graph)) == "graph_desc.nodes[4]"
    # a constant feeding nothing
    graph = base()
    graph.nodes.append(constant(b"\0" * 24))
    assert refused(stub, counted(graph)) == "graph_desc.nodes[4]"
    # an unused graph input
    graph = base()
    graph.input_count = 3
    assert refused(stub, graph) == "graph_desc.input_count"
    # a graph output with no edge
    graph = base()
    graph.output_count = 2
    assert refused(stub, graph) == "graph_desc.output_count"
    # a graph output with two edges
    graph = base()
    graph.output_edges.append(output_edge(1, 0, 0))
    assert refused(stub, counted(graph)) == "graph_desc.output_edges[1]"


def test_tensor_descs_must_agree(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    # across an intermediate edge: node 1 takes FLOAT16
    half = tensor_desc((np.float16, SHAPE))
    graph = base()
    graph.nodes[1].CopyFrom(negate(half, half))
    assert refused(stub, graph) == "graph_desc.intermediate_edges[0]"
    # another shape with as many elements
    other = tensor_desc((np.float32, (3, 2)))
    graph = base()
    graph.nodes[1].CopyFrom(negate(other, other))
    assert refused(stub, graph) == "graph_desc.intermediate_edges[0]"
    # a constant shorter than its consumer's total_tensor_size_in_bytes
    graph = base()
    graph.nodes[2].CopyFrom(constant(CONSTANT.tobytes()[:20]))
    assert refused(stub, graph) == "graph_desc.intermediate_edges[2]"
    # one graph input feeding two node inputs with different descs (a broadcast row vs a packed tensor)
    graph = base()
    graph.input_count = 1
    graph.input_edges[1].input.graph_input_index = 0
    graph.nodes[0].CopyFrom(binary("element_wise_add", F32, tensor_desc((np.float32, SHAPE), [0, 1])))
    assert refused(stub, graph) == "graph_desc.input_edges[1]"


def test_one_graph_input_feeding_two_inputs_with_one_desc(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    graph = base()
    graph.input_count = 1
    graph.input_edges[1].input.graph_input_index = 0
    compiled = stub.CompileGraph(service_pb2.CompileGraphRequest(graph_desc=graph), timeout=60)
    assert len(compiled.input_descs) == 1
    (result,) = dispatch(stub, compiled.handle, buffer(A))
    np.testing.assert_array_equal(result, -(A + A) * CONSTANT)


def test_owned_flag_rules(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    # mixed across one graph input: flagged on node 0 input 0, not on node 0 input 1
    graph = base()
    graph.input_count = 1
    graph.input_edges[1].input.graph_input_index = 0
    graph.nodes[0].operator.operator.element_wise_add.a_tensor.buffer.flags |= OWNED
    assert refused(stub, graph) == "graph_desc.input_edges[1]"
    # on an input fed by a constant (node 3 input 1) or another node (node 1 input 0)
    graph = base()
    graph.nodes[3].operator.operator.element_wise_multiply.b_tensor.buffer.flags |= OWNED
    assert refused(stub, graph) == "graph_desc.nodes[3]"
    graph = base()
    graph.nodes[1].operator.operator.element_wise_negate.input_tensor.buffer.flags |= OWNED
    assert refused(stub, graph) == "graph_desc.nodes[1]"


def test_owned_graph_input_bindings(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    graph = base()
    graph.nodes[0].operator.operator.element_wise_add.b_tensor.buffer.flags |= OWNED
    unset = service_pb2.BindingDesc()
    assert refused(stub, graph) == "owned_inputs"
    assert refused(stub, graph, owned_inputs=[unset, buffer(B), unset]) == "owned_inputs"
    assert refused(stub, graph, owned_inputs=[buffer(A), buffer(B)]) == "owned_inputs[0]"
    assert refused(stub, graph, owned_inputs=[unset, unset]) == "owned_inputs[1]"
    assert refused(stub, graph, owned_inputs=[unset, buffer(B[:1])]) == "owned_inputs[1].buffer.data"
    compiled = stub.CompileGraph(
        service_pb2.CompileGraphRequest(graph_desc=graph, owned_inputs=[unset, buffer(B)]), timeout=60
    )
    assert [bool(d.buffer.flags & OWNED) for d in compiled.input_descs] == [False, True]
    (result,) = dispatch(stub, compiled.handle, buffer(A), unset)
    np.testing.assert_array_equal(result, -(A + B) * CONSTANT)
    code, field = refusal(lambda: dispatch(stub, compiled.handle, buffer(A), buffer(B)))
    assert (code, field) == (grpc.StatusCode.INVALID_ARGUMENT, "inputs[1]")
    # no owned inputs: bindings must be absent or all unset
    assert refused(stub, base(), owned_inputs=[buffer(A), unset]) == "owned_inputs[0]"


def test_a_cycle_names_one_of_its_edges(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    # node 0 = in0 + node 2; node 1 = -node 0; node 2 = -node 1; out0 = node 1
    graph = counted(
        graph_pb2.GraphDesc(
            input_count=1,
            output_count=1,
            nodes=[binary("element_wise_add"), negate(), negate()],
            input_edges=[input_edge(0, 0, 0)],
            output_edges=[output_edge(1, 0, 0)],
            intermediate_edges=[middle(2, 0, 0, 1), middle(0, 0, 1, 0), middle(1, 0, 2, 0)],
        )
    )
    assert refused(stub, graph) == "graph_desc.intermediate_edges[1]"
    # a node feeding itself
    loop = counted(
        graph_pb2.GraphDesc(
            input_count=1,
            output_count=1,
            nodes=[binary("element_wise_add")],
            input_edges=[input_edge(0, 0, 0)],
            output_edges=[output_edge(0, 0, 0)],
            intermediate_edges=[middle(0, 0, 0, 1)],
        )
    )
    assert refused(stub, loop) == "graph_desc.intermediate_edges[0]"


def add_desc(flags: tuple[int, int, int] = (0, 0, 0)) -> operators_pb2.OperatorDesc:
    descs = [tensor_desc((np.float32, SHAPE)) for _ in range(3)]
    for desc, flag in zip(descs, flags, strict=True):
        desc.buffer.flags |= flag
    return operators_pb2.OperatorDesc(
        element_wise_add=operators_pb2.ElementWiseAddOperatorDesc(
            a_tensor=descs[0], b_tensor=descs[1], output_tensor=descs[2]
        )
    )


def compile_operator_refused(
    stub: service_pb2_grpc.DirectMLServiceStub, desc: operators_pb2.OperatorDesc, *owned: service_pb2.BindingDesc
) -> str:
    request = service_pb2.CompileOperatorRequest(operator_desc=desc, owned_inputs=owned)
    code, field = refusal(lambda: stub.CompileOperator(request, timeout=60))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    return field


def test_compile_operator_owned_bindings(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    unset = service_pb2.BindingDesc()
    owned_a = add_desc((OWNED, 0, 0))
    assert compile_operator_refused(stub, owned_a) == "owned_inputs"
    assert compile_operator_refused(stub, owned_a, buffer(A)) == "owned_inputs"
    assert compile_operator_refused(stub, owned_a, unset, unset) == "owned_inputs[0]"
    assert compile_operator_refused(stub, owned_a, buffer(A), buffer(B)) == "owned_inputs[1]"
    assert compile_operator_refused(stub, owned_a, buffer(A[:1]), unset) == "owned_inputs[0].buffer.data"
    resident = service_pb2.BindingDesc(resident=service_pb2.ResidentTensor(handle="x"))
    assert compile_operator_refused(stub, owned_a, resident, unset) == "owned_inputs[0]"
    assert compile_operator_refused(stub, add_desc(), buffer(A), unset) == "owned_inputs[0]"
    assert compile_operator_refused(stub, add_desc((0, 0, OWNED)), buffer(A), unset) == "operator_desc"
    bad = add_desc()
    bad.element_wise_add.output_tensor.buffer.sizes[:] = [3, 2]
    assert compile_operator_refused(stub, bad).startswith("operator_desc.element_wise_add.")
    compiled = stub.CompileOperator(
        service_pb2.CompileOperatorRequest(operator_desc=owned_a, owned_inputs=[buffer(A), unset]), timeout=60
    )
    (result,) = dispatch(stub, compiled.handle, unset, buffer(B))
    np.testing.assert_array_equal(result, A + B)
    code, field = refusal(lambda: dispatch(stub, compiled.handle, buffer(A), buffer(B)))
    assert (code, field) == (grpc.StatusCode.INVALID_ARGUMENT, "inputs[0]")


def test_dispatch_binding_rules(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    compiled = stub.CompileOperator(service_pb2.CompileOperatorRequest(operator_desc=add_desc()), timeout=60)
    unset = service_pb2.BindingDesc()
    for inputs, field in (
        ((buffer(A), unset), "inputs[1]"),
        ((buffer(A),), "inputs"),
        ((buffer(A), buffer(B), buffer(B)), "inputs"),
        ((buffer(A), buffer(B[:1])), "inputs[1].buffer.data"),
    ):
        code, got = refusal(lambda inputs=inputs: dispatch(stub, compiled.handle, *inputs))  # type: ignore[misc]
        assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, field)
    code, got = refusal(
        lambda: stub.Dispatch(
            service_pb2.DispatchRequest(handle=compiled.handle, inputs=[buffer(A), buffer(B)], keep_outputs=[1]),
            timeout=60,
        )
    )
    assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, "keep_outputs[0]")
    (result,) = dispatch(stub, compiled.handle, buffer(A), buffer(B))
    np.testing.assert_array_equal(result, A + B)
    graph = stub.CompileGraph(service_pb2.CompileGraphRequest(graph_desc=base()), timeout=60)
    for inputs, field in (
        ((buffer(A),), "inputs"),
        ((unset, buffer(B)), "inputs[0]"),
        ((buffer(A), buffer(B[:1])), "inputs[1].buffer.data"),
    ):
        code, got = refusal(lambda inputs=inputs: dispatch(stub, graph.handle, *inputs))  # type: ignore[misc]
        assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, field)
    (result,) = dispatch(stub, graph.handle, buffer(A), buffer(B))
    np.testing.assert_array_equal(result, -(A + B) * CONSTANT)


def test_an_unset_optional_output_feeds_no_edge(stub: service_pb2_grpc.DirectMLServiceStub) -> None:
    x = tensor_desc((np.float32, (1, 1, 4, 4)))
    pooled = tensor_desc((np.float32, (1, 1, 2, 2)))
    pooling = operators_pb2.OperatorDesc(
        max_pooling1=operators_pb2.MaxPooling1OperatorDesc(
            input_tensor=x,
            output_tensor=pooled,
            dimension_count=2,
            strides=[2, 2],
            window_size=[2, 2],
            start_padding=[0, 0],
            end_padding=[0, 0],
        )  # output_indices_tensor (output 1) left unset
    )
    relu = operators_pb2.OperatorDesc(
        activation_relu=operators_pb2.ActivationReluOperatorDesc(input_tensor=pooled, output_tensor=pooled)
    )
    node = graph_pb2.GraphNodeDesc
    graph = counted(
        graph_pb2.GraphDesc(
            input_count=1,
            output_count=1,
            nodes=[
                node(operator=graph_pb2.OperatorGraphNodeDesc(operator=pooling)),
                node(operator=graph_pb2.OperatorGraphNodeDesc(operator=relu)),
            ],
            input_edges=[input_edge(0, 0, 0)],
            output_edges=[output_edge(1, 0, 0)],
            intermediate_edges=[middle(0, 1, 1, 0)],
        )
    )
    assert refused(stub, graph) == "graph_desc.intermediate_edges[0].intermediate.from_node_output_index"
    graph.intermediate_edges[0].intermediate.from_node_output_index = 0
    compiled = stub.CompileGraph(service_pb2.CompileGraphRequest(graph_desc=graph), timeout=60)
    x_values = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4) - 8
    response = stub.Dispatch(service_pb2.DispatchRequest(handle=compiled.handle, inputs=[buffer(x_values)]))
    got = np.frombuffer(response.outputs[0].buffer.data, np.float32)
    np.testing.assert_array_equal(got, [0, 0, 5, 7])
