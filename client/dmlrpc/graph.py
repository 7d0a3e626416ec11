"""A small DML_GRAPH_DESC builder: graph inputs, constants and operator nodes wired by the tensors they return."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc._graph_operators import GraphOperations
from dmlrpc._graph_tensors import GraphTensor
from dmlrpc.codec import DTYPE_BY_DATA_TYPE, TensorLayout, encode, tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import OPERATORS, Operator, TensorArrays
from dmlrpc.schema import check_input_count, desc_case, tensor_fields
from dmlrpc.v1 import graph_pb2, operators_pb2, tensor_pb2

__all__ = ["Graph", "GraphTensor"]

#: Per array argument of a builder, its graph tensors, each with the name an error gives it.
_Tensors = dict[str, list[tuple[str, GraphTensor | None]]]
#: Where ``_Tensors`` holds a variadic argument's tensors (no argument is named so).
_VARIADIC = "*"


class Graph(GraphOperations):
    """Build a graph, then compile it once with ``client.compile(graph)`` and call the result many times::

        g = dmlrpc.Graph()
        x = g.input(np.float32, (4, 8))
        y = g.activation("relu", g.element_wise("add", x, x))
        values, indices = g.top_k(y, 3)
        g.output(values, indices)
        op = client.compile(g)
        values, indices = op(x_array)

    Node inputs connect by the tensors earlier calls returned; every output of every node must reach a graph
    output or another node (DirectML's rule), and tensors joined by an edge must have the same type and shape.
    Each operator method is its ``dmlrpc.ops`` builder traced over graph tensors, so every tensor has the shape
    DirectML's desc gives it (4-D where the desc is 4-D: a matrix is (1, 1, M, K), a statistic (1, C, 1, 1)), and
    a node whose builder would reshape, broadcast or convert a tensor refuses it, naming it.
    """

    def __init__(self) -> None:
        self._inputs: list[tensor_pb2.TensorDesc] = []
        self._nodes: list[graph_pb2.GraphNodeDesc] = []
        self._input_edges: list[graph_pb2.GraphEdgeDesc] = []
        self._intermediate_edges: list[graph_pb2.GraphEdgeDesc] = []
        self._outputs: list[GraphTensor] = []

    def input(self, dtype: npt.DTypeLike, shape: Sequence[int]) -> GraphTensor:
        """A new graph input (dispatches bind one array per input, in the order they were added)."""
        desc = tensor_desc((dtype, tuple(shape)))
        self._inputs.append(desc)
        return GraphTensor("input", len(self._inputs) - 1, 0, desc)

    def constant(self, array: npt.ArrayLike) -> GraphTensor:
        """A constant-data node holding ``array`` (compiled into the graph, sent once)."""
        data = np.asarray(array)
        data = data.reshape(1) if data.ndim == 0 else data
        raw = encode(data, TensorLayout.of(tensor_desc(data).buffer))
        node = graph_pb2.GraphNodeDesc(constant_data=graph_pb2.ConstantDataGraphNodeDesc(data=raw, data_size=len(raw)))
        self._nodes.append(node)
        return GraphTensor("constant", len(self._nodes) - 1, 0, tensor_desc(data))

    def node(
        self, operator_desc: operators_pb2.OperatorDesc, inputs: Sequence[GraphTensor | None]
    ) -> list[GraphTensor]:
        """An operator node: ``inputs`` feed the desc's input tensor fields in binding order (``None`` for an unset
        optional one); returns one tensor per output tensor field."""
        if not isinstance(operator_desc, operators_pb2.OperatorDesc):
            raise ArgumentTypeError(
                "operator_desc", f"Graph.node: operator_desc is a {type(operator_desc).__name__}, not an OperatorDesc"
            )
        if operator_desc.WhichOneof("desc") is None:
            raise ArgumentValueError("operator_desc", "Graph.node: the OperatorDesc has no operator desc set")
        case = desc_case(operator_desc)
        input_fields, output_fields = tensor_fields(getattr(operator_desc, case).DESCRIPTOR)
        if any(f.array for f in (*input_fields, *output_fields)):
            raise ArgumentValueError(
                "operator_desc", f"Graph.node: {case} has tensor arrays; Graph.node takes operators without them"
            )
        check_input_count(case, input_fields, len(inputs), "Graph.node: ")
        for i, tensor in enumerate(inputs):
            _tensor("Graph.node", f"inputs[{i}]", tensor, optional=True)
        return self._add(operator_desc, list(inputs))

    def output(self, *tensors: GraphTensor) -> None:
        """Make ``tensors`` the next graph outputs (dispatches return them in this order)."""
        for i, tensor in enumerate(tensors):
            _tensor("Graph.output", f"tensors[{i}]", tensor)
            if tensor.kind != "node":
                raise ArgumentValueError(
                    "tensors", f"Graph.output: a graph output is a node's output, not a graph {tensor.kind}"
                )
            self._outputs.append(tensor)

    def desc(self) -> graph_pb2.GraphDesc:
        """The DML_GRAPH_DESC."""
        if not self._outputs:
            raise ArgumentValueError("graph", "the graph has no outputs: call Graph.output() first")
        output_edges = [
            graph_pb2.GraphEdgeDesc(
                output=graph_pb2.OutputGraphEdgeDesc(
                    from_node_index=t.index, from_node_output_index=t.output, graph_output_index=g
                )
            )
            for g, t in enumerate(self._outputs)
        ]
        return graph_pb2.GraphDesc(
            input_count=len(self._inputs),
            output_count=len(self._outputs),
            node_count=len(self._nodes),
            nodes=self._nodes,
            input_edge_count=len(self._input_edges),
            input_edges=self._input_edges,
            output_edge_count=len(output_edges),
            output_edges=output_edges,
            intermediate_edge_count=len(self._intermediate_edges),
            intermediate_edges=self._intermediate_edges,
        )

    def _trace(self, name: str, *args: Any, **kwargs: Any) -> list[GraphTensor]:
        """The node of the SDK function ``name``: its builder called with the graph tensors in place of arrays (as
        its declaration's ``GraphFace`` says), each tensor feeding the desc field its argument fills."""
        declared = OPERATORS[name]
        where = f"Graph.{name}"
        bound = declared.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = bound.arguments
        face = declared.graph
        arguments.update(face.fixed)
        _tensors(where, declared, arguments)
        stand_ins = face.prepare(self, where, arguments) if face.prepare is not None else {}
        tensors = _tensors(where, declared, arguments)  # again: prepare may add graph constants
        arguments.update(stand_ins)
        call = face.trace(**arguments) if face.trace else declared.builder(*bound.args, **bound.kwargs)
        return self._traced(where, call.operator_desc, tensors, face.arrays)

    def _traced(
        self, where: str, operator_desc: operators_pb2.OperatorDesc, tensors: _Tensors, arrays: TensorArrays
    ) -> list[GraphTensor]:
        """A traced desc's node. An input field takes the tensors of the argument named as it is (``rois`` fills
        ``roi_tensor``, ``parameters`` fills ``input_parameters_tensor``, a tensor-array field those its declaration
        names), else the next tensor of a variadic argument; an edge keeps its tensor's shape and type, so a desc
        that would pad, broadcast, reshape or convert one is refused, naming the argument."""
        desc = getattr(operator_desc, desc_case(operator_desc))
        input_fields, _ = tensor_fields(desc.DESCRIPTOR)
        variadic = list(tensors.get(_VARIADIC, []))
        slots: list[GraphTensor | None] = []
        for tensor_field in input_fields:
            stem = tensor_field.name.removesuffix("_tensors").removesuffix("_tensor")
            if stem in arrays:
                feeding = [item for name in arrays[stem] for item in tensors[name] if item[1] is not None]
            else:
                source = next((n for n in (stem, f"{stem}s", stem.removeprefix("input_")) if n in tensors), None)
                feeding = tensors[source] if source else [variadic.pop(0) if variadic else ("", None)]
            if not tensor_field.array:
                slots_of_field = [getattr(desc, tensor_field.name)]
            else:
                slots_of_field = list(getattr(desc, tensor_field.name))
                if len(slots_of_field) != len(feeding):
                    raise ArgumentValueError(
                        stem, f"{where}: {tensor_field.name} has {len(slots_of_field)} tensors; {len(feeding)} given"
                    )
            for slot, (argument, tensor) in zip(slots_of_field, feeding, strict=True):
                if tensor is not None:
                    _enters_as_it_is(where, argument, tensor, slot)
                slots.append(tensor)
        return self._add(operator_desc, slots)

    def _add(
        self, operator_desc: operators_pb2.OperatorDesc, inputs: Sequence[GraphTensor | None]
    ) -> list[GraphTensor]:
        """Append the node, its edges from ``inputs`` (one per input slot: a tensor-array field has one per element,
        the binding order flattened), each graph input's layout copied into the slot it feeds; its outputs."""
        operator_desc = operators_pb2.OperatorDesc.FromString(operator_desc.SerializeToString())  # a copy we may edit
        desc = getattr(operator_desc, desc_case(operator_desc))
        input_fields, output_fields = tensor_fields(desc.DESCRIPTOR)
        slots: list[tensor_pb2.TensorDesc] = []
        for tensor_field in input_fields:
            slots.extend(getattr(desc, tensor_field.name) if tensor_field.array else [getattr(desc, tensor_field.name)])
        index = len(self._nodes)
        for k, (slot, tensor) in enumerate(zip(slots, inputs, strict=True)):
            if tensor is None:
                continue
            if tensor.kind == "input":
                # The node's desc says how the graph input's buffer is laid out.
                slot.CopyFrom(tensor.desc)
                edge = graph_pb2.InputGraphEdgeDesc(
                    graph_input_index=tensor.index, to_node_index=index, to_node_input_index=k
                )
                self._input_edges.append(graph_pb2.GraphEdgeDesc(input=edge))
            else:
                middle = graph_pb2.IntermediateGraphEdgeDesc(
                    from_node_index=tensor.index,
                    from_node_output_index=tensor.output,
                    to_node_index=index,
                    to_node_input_index=k,
                )
                self._intermediate_edges.append(graph_pb2.GraphEdgeDesc(intermediate=middle))
        self._nodes.append(graph_pb2.GraphNodeDesc(operator=graph_pb2.OperatorGraphNodeDesc(operator=operator_desc)))
        outputs: list[GraphTensor] = []
        j = 0
        for tensor_field in output_fields:
            if tensor_field.array:
                for element in getattr(desc, tensor_field.name):
                    outputs.append(GraphTensor("node", index, j, element))
                    j += 1
                continue
            if desc.HasField(tensor_field.name):
                outputs.append(GraphTensor("node", index, j, getattr(desc, tensor_field.name)))
            j += 1
        return outputs


def _tensors(where: str, declared: Operator, arguments: dict[str, Any]) -> _Tensors:
    """The graph tensors of the builder's array arguments, each checked to be one (or ``None`` where the argument
    is optional): per argument, its tensors with the name an error gives each (``inputs[1]`` of a sequence); a
    variadic argument's under ``_VARIADIC``, as they fill the desc's fields in order."""
    tensors: _Tensors = {}
    for parameter in declared.tensors:
        value = arguments[parameter.name]
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            tensors[_VARIADIC] = [(f"inputs[{i}]", _tensor(where, f"inputs[{i}]", t)) for i, t in enumerate(value)]
        elif str(parameter.annotation).startswith("Sequence["):
            labels = [f"{parameter.name}[{i}]" for i in range(len(value))]
            tensors[parameter.name] = [
                (label, _tensor(where, label, t)) for label, t in zip(labels, value, strict=True)
            ]
        else:
            optional = parameter.default is None
            tensors[parameter.name] = [(parameter.name, _tensor(where, parameter.name, value, optional=optional))]
    return tensors


def _tensor(where: str, argument: str, value: object, *, optional: bool = False) -> Any:
    """``value``, which must be a graph tensor (or ``None`` where ``optional``)."""
    if not isinstance(value, GraphTensor) and not (optional and value is None):
        raise ArgumentTypeError(
            argument,
            f"{where}: {argument} is a {type(value).__name__}, not a GraphTensor (an array enters a graph through "
            "Graph.input or Graph.constant)",
        )
    return value


def _enters_as_it_is(where: str, argument: str, tensor: GraphTensor, slot: tensor_pb2.TensorDesc) -> None:
    """An edge keeps its tensor's shape and type: refuse a slot the builder described otherwise."""
    buffer = slot.buffer
    broadcast = any(stride == 0 for stride in buffer.strides)
    if tuple(buffer.sizes) != tensor.shape or broadcast:
        raise ArgumentValueError(
            argument,
            f"{where}: {argument} has shape {tensor.shape}, which the node would take as {tuple(buffer.sizes)}"
            f"{' broadcast' if broadcast else ''}; edges do not broadcast or reshape: give the graph tensor that shape",
        )
    if buffer.data_type != tensor.desc.buffer.data_type:
        wanted = DTYPE_BY_DATA_TYPE[buffer.data_type].name
        raise ArgumentTypeError(
            argument,
            f"{where}: {argument} has dtype {tensor.dtype}; in a graph it is {wanted} (edges do not convert: "
            "Graph.cast one)",
            allowed=(wanted,),
        )
