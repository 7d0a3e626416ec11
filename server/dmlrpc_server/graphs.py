"""DML_GRAPH_DESC: validated as DirectML does (every error naming its node or edge), resolved into ordered nodes."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx

from dmlrpc.codec import TensorLayout, data_type_name, decode
from dmlrpc.schema import tensor_descs
from dmlrpc.v1 import graph_pb2, operators_pb2, tensor_pb2
from dmlrpc_server.errors import InvalidArgument, ResourceExhausted
from dmlrpc_server.operators._batching import BatchRule
from dmlrpc_server.operators.base import Plan

#: Plans one node's operator desc; errors name fields under the given path prefix.
PlanNode = Callable[[operators_pb2.OperatorDesc, str], tuple[Plan, BatchRule | None]]

_OWNED = tensor_pb2.TENSOR_FLAG_OWNED_BY_DML
_BINDING = re.compile(r"^inputs\[(\d+)\]")


@dataclass(frozen=True)
class Source:
    """Where a node input's value comes from: a graph input, a constant, or another node's output."""

    kind: str  # "graph", "constant" or "node"
    index: int
    output: int = 0
    #: The request path of the edge that brings it (for errors about its data).
    edge: str = ""


@dataclass
class Node:
    """An operator node: its plan and where each of its inputs (``plan.inputs`` order) comes from."""

    index: int
    plan: Plan
    sources: list[Source | None]
    #: Constant arrays bound to inputs, decoded per the consuming input's tensor desc.
    constants: dict[int, np.ndarray] = field(default_factory=dict)
    #: How the node's own operator batches (None: it does not).
    batching: BatchRule | None = None

    def prepare(self, arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
        """The node's own ``prepare``, its errors about bound data re-rooted at what feeds that input: the
        dispatch's binding for a graph input, else the constant node or the intermediate edge."""
        try:
            return self.plan.prepare(arrays)
        except InvalidArgument as error:
            raise self._rerooted(error) from None

    def _rerooted(self, error: InvalidArgument) -> InvalidArgument:
        match = _BINDING.match(error.field)
        source = self.sources[int(match.group(1))] if match and int(match.group(1)) < len(self.sources) else None
        if match is None or source is None:
            return error
        if source.kind == "graph":
            return InvalidArgument(f"inputs[{source.index}]{error.field[match.end() :]}", error.description)
        where = f"node {self.index} input {match.group(1)}"
        return InvalidArgument(source.edge, f"{error.description} (the value reaching {where})")


@dataclass
class GraphLowering:
    """A validated graph: operator nodes in topological order, the layouts of its inputs and outputs."""

    nodes: list[Node]
    input_layouts: list[TensorLayout]
    input_descs: list[tensor_pb2.TensorDesc]
    output_layouts: list[TensorLayout]
    output_descs: list[tensor_pb2.TensorDesc]
    #: Per graph output: (node index, node output index).
    outputs: list[tuple[int, int]]
    #: Graph inputs flagged DML_TENSOR_FLAG_OWNED_BY_DML (bound at compile time).
    owned: set[int]

    @property
    def constant_bytes(self) -> int:
        """The bytes the graph's constants hold, materialised as their nodes read them."""
        return sum(array.nbytes for node in self.nodes for array in node.constants.values())

    def composable(self) -> bool:
        """Whether every intermediate edge joins a node output ``finish`` passes through unchanged to a node input
        ``prepare`` feeds unchanged: then the whole graph is one ONNX model."""
        for node in self.nodes:
            plan = node.plan
            if any(_has_subgraph(n) for n in plan.model.graph.node):
                return False
            for k, source in enumerate(node.sources):
                if source is not None and source.kind == "node":
                    producer = self._node(source.index).plan
                    if not producer.direct_outputs or len(producer.model.graph.output) != len(producer.outputs):
                        return False
                    if k >= len(plan.direct_inputs) or plan.direct_inputs[k] is None:
                        return False
        return True

    def _node(self, index: int) -> Node:
        return next(node for node in self.nodes if node.index == index)


def _has_subgraph(node: onnx.NodeProto) -> bool:
    return any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)


def strip_owned(operator_desc: operators_pb2.OperatorDesc, path: str) -> tuple[operators_pb2.OperatorDesc, set[int]]:
    """``operator_desc`` without its OWNED_BY_DML flags, and the flagged input indices (binding order).

    Raises:
        InvalidArgument: an output tensor carries the flag (only inputs are bound at initialisation).
    """
    if operator_desc.WhichOneof("desc") is None:
        return operator_desc, set()
    for position, item in enumerate(tensor_descs(operator_desc, output=True)):
        if item.WhichOneof("desc") == "buffer" and item.buffer.flags & _OWNED:
            raise InvalidArgument(path, f"output {position} has DML_TENSOR_FLAG_OWNED_BY_DML; only inputs may")
    copy = operators_pb2.OperatorDesc()
    copy.CopyFrom(operator_desc)
    owned: set[int] = set()
    for position, item in enumerate(tensor_descs(copy, output=False)):
        if item.WhichOneof("desc") == "buffer" and item.buffer.flags & _OWNED:
            owned.add(position)
            item.buffer.flags &= ~_OWNED
    return copy, owned


def _count(graph: graph_pb2.GraphDesc, name: str, array: str, path: str) -> None:
    given, length = getattr(graph, name), len(getattr(graph, array))
    if given != length:
        raise InvalidArgument(f"{path}.{name}", f"{given} differs from the {length} entries of {array}")


def lower_graph(
    graph: graph_pb2.GraphDesc,
    plan_node: PlanNode,
    *,
    max_nodes: int,
    constants_allowed: bool,
    path: str,
    max_constant_bytes: int = 1 << 62,
    admit_constants: Callable[[int], None] | None = None,
) -> GraphLowering:
    """Validate a DML_GRAPH_DESC (every rule naming its node or edge) and resolve it into ordered nodes.

    Raises:
        InvalidArgument: a rule is broken.
        ResourceExhausted: the constants, materialised as their nodes read them, exceed ``max_constant_bytes``, or
            ``admit_constants`` (called with their running total before each is materialised) refuses them.
    """
    for name, array in (
        ("node_count", "nodes"),
        ("input_edge_count", "input_edges"),
        ("output_edge_count", "output_edges"),
        ("intermediate_edge_count", "intermediate_edges"),
    ):
        _count(graph, name, array, path)
    if not 1 <= len(graph.nodes) <= max_nodes:
        raise InvalidArgument(f"{path}.nodes", f"{len(graph.nodes)} nodes; a graph has 1 to {max_nodes}")
    if graph.output_count < 1:
        raise InvalidArgument(f"{path}.output_count", "a graph needs at least one output")

    plans: dict[int, Plan] = {}
    rules: dict[int, BatchRule | None] = {}
    constants: dict[int, bytes] = {}
    owned_inputs: dict[int, set[int]] = {}
    input_descs: dict[int, list[tensor_pb2.TensorDesc]] = {}
    output_descs: dict[int, list[tensor_pb2.TensorDesc]] = {}
    for i, node_desc in enumerate(graph.nodes):
        node_path = f"{path}.nodes[{i}]"
        kind = node_desc.WhichOneof("desc")
        if kind is None:
            raise InvalidArgument(node_path, "node type is not set (DML_GRAPH_NODE_TYPE_INVALID)")
        if kind == "constant_data":
            constant = node_desc.constant_data
            if not constants_allowed:
                raise InvalidArgument(f"{node_path}.constant_data", "constant nodes need DML_FEATURE_LEVEL_6_2")
            if constant.data_size != len(constant.data):
                raise InvalidArgument(
                    f"{node_path}.constant_data.data_size",
                    f"{constant.data_size} differs from the {len(constant.data)} bytes of data",
                )
            constants[i] = constant.data
            continue
        operator_path = f"{node_path}.operator.operator"
        if not node_desc.operator.HasField("operator"):
            raise InvalidArgument(operator_path, "no operator desc is set")
        stripped, owned = strip_owned(node_desc.operator.operator, operator_path)
        plans[i], rules[i] = plan_node(stripped, operator_path)
        owned_inputs[i] = owned
        input_descs[i] = tensor_descs(stripped, output=False)
        output_descs[i] = tensor_descs(stripped, output=True)

    sources: dict[int, list[Source | None]] = {i: [None] * len(p.inputs) for i, p in plans.items()}
    fed_by: dict[tuple[int, int], str] = {}
    used_outputs: set[tuple[int, int]] = set()
    graph_inputs: dict[int, list[tuple[int, int, str]]] = {}
    graph_outputs: dict[int, tuple[int, int]] = {}
    successors: dict[int, list[tuple[int, str]]] = {i: [] for i in range(len(graph.nodes))}

    def operator_node(index: int, edge_path: str, field_name: str) -> Plan:
        if index >= len(graph.nodes):
            raise InvalidArgument(
                f"{edge_path}.{field_name}", f"node {index} is out of range: the graph has {len(graph.nodes)}"
            )
        if index not in plans:
            raise InvalidArgument(f"{edge_path}.{field_name}", f"node {index} is a constant node, which has no inputs")
        return plans[index]

    def feed(node: int, input_index: int, edge_path: str, field_name: str, source: Source) -> None:
        plan = operator_node(node, edge_path, field_name)
        if input_index >= len(plan.inputs):
            raise InvalidArgument(
                f"{edge_path}.to_node_input_index",
                f"input {input_index} is out of range: node {node} has {len(plan.inputs)} inputs",
            )
        if plan.inputs[input_index] is None:
            raise InvalidArgument(edge_path, f"input {input_index} of node {node} is an unset optional tensor")
        if (node, input_index) in fed_by:
            raise InvalidArgument(
                edge_path, f"input {input_index} of node {node} is already fed by {fed_by[node, input_index]}"
            )
        fed_by[node, input_index] = edge_path
        sources[node][input_index] = source

    def produce(node: int, output_index: int, edge_path: str) -> None:
        if node >= len(graph.nodes):
            raise InvalidArgument(
                f"{edge_path}.from_node_index", f"node {node} is out of range: the graph has {len(graph.nodes)}"
            )
        if node in constants:
            if output_index != 0:
                raise InvalidArgument(f"{edge_path}.from_node_output_index", "a constant node has one output, 0")
        elif output_index >= len(plans[node].outputs) or plans[node].outputs[output_index] is None:
            count = len(plans[node].outputs)
            raise InvalidArgument(
                f"{edge_path}.from_node_output_index",
                f"output {output_index} of node {node} is not a set output ({count})",
            )
        used_outputs.add((node, output_index))

    for e, edge in enumerate(graph.input_edges):
        edge_path = f"{path}.input_edges[{e}]"
        if edge.WhichOneof("desc") != "input":
            raise InvalidArgument(edge_path, "input_edges hold edges of type DML_GRAPH_EDGE_TYPE_INPUT only")
        input_edge = edge.input
        if input_edge.graph_input_index >= graph.input_count:
            raise InvalidArgument(
                f"{edge_path}.input.graph_input_index",
                f"{input_edge.graph_input_index} is out of range: input_count is {graph.input_count}",
            )
        feed(
            input_edge.to_node_index,
            input_edge.to_node_input_index,
            f"{edge_path}.input",
            "to_node_index",
            Source("graph", input_edge.graph_input_index, edge=edge_path),
        )
        graph_inputs.setdefault(input_edge.graph_input_index, []).append(
            (input_edge.to_node_index, input_edge.to_node_input_index, edge_path)
        )
    for e, edge in enumerate(graph.output_edges):
        edge_path = f"{path}.output_edges[{e}]"
        if edge.WhichOneof("desc") != "output":
            raise InvalidArgument(edge_path, "output_edges hold edges of type DML_GRAPH_EDGE_TYPE_OUTPUT only")
        output_edge = edge.output
        produce(output_edge.from_node_index, output_edge.from_node_output_index, f"{edge_path}.output")
        if output_edge.from_node_index in constants:
            raise InvalidArgument(f"{edge_path}.output.from_node_index", "a constant node cannot be a graph output")
        if output_edge.graph_output_index >= graph.output_count:
            raise InvalidArgument(
                f"{edge_path}.output.graph_output_index",
                f"{output_edge.graph_output_index} is out of range: output_count is {graph.output_count}",
            )
        if output_edge.graph_output_index in graph_outputs:
            raise InvalidArgument(
                edge_path, f"graph output {output_edge.graph_output_index} already has an output edge"
            )
        graph_outputs[output_edge.graph_output_index] = (
            output_edge.from_node_index,
            output_edge.from_node_output_index,
        )
    for e, edge in enumerate(graph.intermediate_edges):
        edge_path = f"{path}.intermediate_edges[{e}]"
        if edge.WhichOneof("desc") != "intermediate":
            raise InvalidArgument(
                edge_path, "intermediate_edges hold edges of type DML_GRAPH_EDGE_TYPE_INTERMEDIATE only"
            )
        middle = edge.intermediate
        produce(middle.from_node_index, middle.from_node_output_index, f"{edge_path}.intermediate")
        source_kind = "constant" if middle.from_node_index in constants else "node"
        edge_source = Source(source_kind, middle.from_node_index, middle.from_node_output_index, edge_path)
        feed(
            middle.to_node_index, middle.to_node_input_index, f"{edge_path}.intermediate", "to_node_index", edge_source
        )
        successors[middle.from_node_index].append((middle.to_node_index, edge_path))
        _check_edge_descs(graph, middle, plans, constants, edge_path)

    # Every set input fed exactly once (twice was refused above), every set output used, every graph input and
    # output connected.
    for i, plan in plans.items():
        for k, layout in enumerate(plan.inputs):
            if layout is not None and (i, k) not in fed_by:
                raise InvalidArgument(
                    f"{path}.nodes[{i}]", f"input {k} is not connected to an input or intermediate edge"
                )
        for j, layout in enumerate(plan.outputs):
            if layout is not None and (i, j) not in used_outputs:
                raise InvalidArgument(
                    f"{path}.nodes[{i}]", f"output {j} is not connected to an output or intermediate edge"
                )
    for i in constants:
        if not successors[i]:
            raise InvalidArgument(f"{path}.nodes[{i}]", "the constant node feeds no operator")
    for g in range(graph.input_count):
        if g not in graph_inputs:
            raise InvalidArgument(f"{path}.input_count", f"graph input {g} feeds no node (no input edge names it)")
    for g in range(graph.output_count):
        if g not in graph_outputs:
            raise InvalidArgument(f"{path}.output_count", f"graph output {g} has no output edge")

    # One desc per graph input: every node input it feeds must declare the same layout.
    layouts: list[TensorLayout] = []
    descs: list[tensor_pb2.TensorDesc] = []
    owned_graph_inputs: set[int] = set()
    for g in range(graph.input_count):
        (first_node, first_input, _), *others = graph_inputs[g]
        first_desc = input_descs[first_node][first_input]
        flagged = [first_input in owned_inputs[first_node]]
        for node_index, input_index, edge_path in others:
            # One layout (type, sizes, strides, buffer size): explicit packed strides equal unset ones.
            if plans[node_index].inputs[input_index] != plans[first_node].inputs[first_input]:
                raise InvalidArgument(
                    edge_path,
                    f"node {node_index} input {input_index} declares another tensor desc than node {first_node} "
                    f"input {first_input} for graph input {g}; a graph input has one layout",
                )
            flagged.append(input_index in owned_inputs[node_index])
        if any(flagged) and not all(flagged):
            raise InvalidArgument(
                graph_inputs[g][flagged.index(not flagged[0])][2],
                f"graph input {g} is DML_TENSOR_FLAG_OWNED_BY_DML on some of the node inputs it feeds but not all",
            )
        if flagged[0]:
            owned_graph_inputs.add(g)
        layout = plans[first_node].inputs[first_input]
        assert layout is not None
        layouts.append(layout)
        tensor = tensor_pb2.TensorDesc()
        tensor.CopyFrom(first_desc)
        if flagged[0]:
            tensor.buffer.flags |= _OWNED
        descs.append(tensor)
    for i, owned_set in owned_inputs.items():
        for k in owned_set:
            feeder = sources[i][k]
            if feeder is None or feeder.kind != "graph":
                raise InvalidArgument(
                    f"{path}.nodes[{i}]", f"input {k} has DML_TENSOR_FLAG_OWNED_BY_DML but is not fed by a graph input"
                )

    order = _topological(graph, plans, constants, successors, path)
    nodes = []
    held = 0
    for i in order:
        resolved = Node(i, plans[i], sources[i], batching=rules[i])
        for k, feeder in enumerate(sources[i]):
            if feeder is not None and feeder.kind == "constant":
                layout = plans[i].inputs[k]
                assert layout is not None
                # NOTE: the constant is materialised at the logical size its node reads (a broadcast desc over a
                # few bytes becomes the whole tensor): that size is what the graph holds, and what is limited.
                materialised = layout.element_count * layout.dtype.itemsize
                held += materialised
                if materialised > max_constant_bytes or held > max_constant_bytes:
                    raise ResourceExhausted(
                        f"{path}.nodes[{feeder.index}].constant_data: the constants node {i} reads materialise "
                        f"{held:,} bytes (broadcast descs count at their logical size), over the limit of "
                        f"{max_constant_bytes:,} (--max-tensor-bytes)"
                    )
                if admit_constants is not None:
                    admit_constants(held)
                resolved.constants[k] = np.array(decode(np.frombuffer(constants[feeder.index], np.uint8), layout))
        nodes.append(resolved)
    outputs = [graph_outputs[g] for g in range(graph.output_count)]
    output_layouts = []
    for node_index, j in outputs:
        layout = plans[node_index].outputs[j]
        assert layout is not None
        output_layouts.append(layout)
    return GraphLowering(
        nodes,
        layouts,
        descs,
        output_layouts,
        [output_descs[n][j] for n, j in outputs],
        outputs,
        owned_graph_inputs,
    )


def _check_edge_descs(
    graph: graph_pb2.GraphDesc,
    desc: graph_pb2.IntermediateGraphEdgeDesc,
    plans: dict[int, Plan],
    constants: dict[int, bytes],
    edge_path: str,
) -> None:
    target = plans[desc.to_node_index].inputs[desc.to_node_input_index]
    assert target is not None
    if desc.from_node_index in constants:
        size = len(constants[desc.from_node_index])
        if size < target.total_bytes:
            raise InvalidArgument(
                edge_path,
                f"constant node {desc.from_node_index} holds {size} bytes, less than the {target.total_bytes} "
                f"(total_tensor_size_in_bytes) of node {desc.to_node_index} input {desc.to_node_input_index}",
            )
        return
    source = plans[desc.from_node_index].outputs[desc.from_node_output_index]
    assert source is not None
    if source.data_type != target.data_type or tuple(source.sizes) != tuple(target.sizes):
        raise InvalidArgument(
            edge_path,
            f"the tensor descs disagree: node {desc.from_node_index} output {desc.from_node_output_index} is "
            f"{data_type_name(source.data_type)} {list(source.sizes)}, node {desc.to_node_index} input "
            f"{desc.to_node_input_index} {data_type_name(target.data_type)} {list(target.sizes)}",
        )


def _topological(
    graph: graph_pb2.GraphDesc,
    plans: dict[int, Plan],
    constants: dict[int, bytes],
    successors: dict[int, list[tuple[int, str]]],
    path: str,
) -> list[int]:
    """Operator nodes in an order where every node follows its producers (Kahn); a cycle names one of its edges."""
    pending = {i: 0 for i in range(len(graph.nodes))}
    for targets in successors.values():
        for target, _ in targets:
            pending[target] += 1
    ready = [i for i, count in pending.items() if count == 0]
    order: list[int] = []
    while ready:
        node = ready.pop(0)
        order.append(node)
        for target, _ in successors[node]:
            pending[target] -= 1
            if pending[target] == 0:
                ready.append(target)
    if len(order) < len(graph.nodes):
        stuck = {i for i, count in pending.items() if count > 0}
        edge = next(edge for node in sorted(stuck) for target, edge in successors[node] if target in stuck)
        raise InvalidArgument(edge, f"the graph has a cycle through nodes {sorted(stuck)}; a graph must be acyclic")
    return [i for i in order if i in plans]
