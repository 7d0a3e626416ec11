"""A small DML_GRAPH_DESC builder: graph inputs, constants and operator nodes wired by the tensors they return."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from dmlrpc import ops
from dmlrpc._graph_families import FamilyNodes
from dmlrpc._graph_gradients import GradientNodes
from dmlrpc._graph_ops import GraphOperators
from dmlrpc._graph_tensors import GraphTensor, _one_shape, _placeholder, _pooled_tensor, _tensors
from dmlrpc.codec import TensorLayout, encode, tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops.base import _axis, _window
from dmlrpc.ops.gather import _gather
from dmlrpc.ops.matrix import _gemm, _matrix_multiply_integer
from dmlrpc.schema import desc_case, tensor_fields
from dmlrpc.v1 import graph_pb2, operators_pb2, tensor_pb2

if TYPE_CHECKING:
    from dmlrpc.ops import Direction

__all__ = ["Graph", "GraphTensor"]


class Graph(GraphOperators, FamilyNodes, GradientNodes):
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
        operator_desc = operators_pb2.OperatorDesc.FromString(operator_desc.SerializeToString())  # a copy we may edit
        case = desc_case(operator_desc)
        desc = getattr(operator_desc, case)
        input_fields, output_fields = tensor_fields(desc.DESCRIPTOR)
        if any(f.array for f in (*input_fields, *output_fields)):
            raise ArgumentValueError(
                "operator_desc", f"Graph.node: {case} has tensor arrays; Graph.node takes operators without them"
            )
        if len(inputs) != len(input_fields):
            names = ", ".join(f.name for f in input_fields)
            raise ArgumentValueError(
                "inputs",
                f"Graph.node: {case} takes {len(input_fields)} inputs ({names}); got {len(inputs)}",
                allowed=(str(len(input_fields)),),
            )
        _tensors("Graph.node", inputs, optional=True)
        index = len(self._nodes)
        self._nodes.append(graph_pb2.GraphNodeDesc(operator=graph_pb2.OperatorGraphNodeDesc(operator=operator_desc)))
        for k, (tensor_field, tensor) in enumerate(zip(input_fields, inputs, strict=True)):
            if tensor is None:
                continue
            if tensor.kind == "input":
                self._input_edges.append(
                    graph_pb2.GraphEdgeDesc(
                        input=graph_pb2.InputGraphEdgeDesc(
                            graph_input_index=tensor.index, to_node_index=index, to_node_input_index=k
                        )
                    )
                )
                # The node's desc says how the graph input's buffer is laid out.
                getattr(desc, tensor_field.name).CopyFrom(tensor.desc)
            else:
                self._intermediate_edges.append(
                    graph_pb2.GraphEdgeDesc(
                        intermediate=graph_pb2.IntermediateGraphEdgeDesc(
                            from_node_index=tensor.index,
                            from_node_output_index=tensor.output,
                            to_node_index=index,
                            to_node_input_index=k,
                        )
                    )
                )
        self._nodes[index].operator.operator.CopyFrom(operator_desc)  # with the graph inputs' layouts
        return [
            GraphTensor("node", index, j, getattr(desc, f.name))
            for j, f in enumerate(output_fields)
            if desc.HasField(f.name)
        ]

    def element_wise(self, name: str, *inputs: GraphTensor, **attributes: Any) -> GraphTensor:
        """A DML_ELEMENT_WISE_* node (as ``dmlrpc.ops.element_wise``); the inputs have one shape."""
        _one_shape(f"Graph.element_wise({name!r})", inputs)
        call = ops.element_wise(name, *(_placeholder(t) for t in inputs), **attributes)
        return self.node(call.operator_desc, list(inputs))[0]

    def activation(self, name: str, *inputs: GraphTensor, **attributes: Any) -> GraphTensor:
        """A DML_ACTIVATION_* node (as ``dmlrpc.ops.activation``); the inputs have one shape."""
        _one_shape(f"Graph.activation({name!r})", inputs)
        call = ops.activation(name, *(_placeholder(t) for t in inputs), **attributes)
        return self.node(call.operator_desc, list(inputs))[0]

    def top_k(
        self,
        input: GraphTensor,
        k: int,
        axis: int = -1,
        *,
        direction: Direction = "decreasing",
        index_dtype: npt.DTypeLike = np.uint32,
        version: int | None = None,
    ) -> tuple[GraphTensor, GraphTensor]:
        """A DML_TOP_K1 (TOP_K with ``version=0``) node (as ``dmlrpc.ops.top_k``): its values and indices."""
        _tensors("Graph.top_k", [input])
        call = ops.top_k(_placeholder(input), k, axis, direction=direction, index_dtype=index_dtype, version=version)
        values, indices = self.node(call.operator_desc, [input])
        return values, indices

    def gemm(
        self,
        a: GraphTensor,
        b: GraphTensor,
        c: GraphTensor | None = None,
        *,
        trans_a: bool = False,
        trans_b: bool = False,
        alpha: float = 1.0,
        beta: float = 1.0,
    ) -> GraphTensor:
        """A DML_GEMM node (as ``dmlrpc.ops.gemm``). Edges neither broadcast nor pad: ``a``, ``b`` and ``c`` have
        one dimension count (2 to 4) and the same leading (batch) sizes, and ``c`` the result's shape."""
        where = "Graph.gemm"
        _tensors(where, [a, b])
        _tensors(where, [c], optional=True)
        call = _gemm(
            _placeholder(a),
            _placeholder(b),
            None if c is None else _placeholder(c),
            trans_a=trans_a,
            trans_b=trans_b,
            alpha=alpha,
            beta=beta,
            where=where,
            rank=None,
        )
        return self._exact_node(where, call, {"a": a, "b": b, "c": c})[0]

    def convolution(
        self,
        input: GraphTensor,
        filter: GraphTensor,
        bias: GraphTensor | None = None,
        *,
        strides: int | Sequence[int] | None = None,
        dilations: int | Sequence[int] | None = None,
        start_padding: int | Sequence[int] | None = None,
        end_padding: int | Sequence[int] | None = None,
        output_padding: int | Sequence[int] | None = None,
        group_count: int = 1,
        mode: Literal["cross_correlation", "convolution"] = "cross_correlation",
        direction: Literal["forward", "backward"] = "forward",
    ) -> GraphTensor:
        """A DML_CONVOLUTION node (as ``dmlrpc.ops.convolution``); ``bias``, if any, is {1, output channels, 1..}
        (an edge does not reshape)."""
        where = "Graph.convolution"
        _tensors(where, [input, filter])
        _tensors(where, [bias], optional=True)
        call = ops.convolution(
            _placeholder(input),
            _placeholder(filter),
            None if bias is None else _placeholder(bias),
            **_window(strides, start_padding, end_padding, dilations),
            output_padding=output_padding,
            group_count=group_count,
            mode=mode,
            direction=direction,
        )
        return self._exact_node(where, call, {"input": input, "filter": filter, "bias": bias})[0]

    def matrix_multiply_integer(
        self,
        a: GraphTensor,
        b: GraphTensor,
        *,
        a_zero_point: GraphTensor | None = None,
        b_zero_point: GraphTensor | None = None,
    ) -> GraphTensor:
        """A DML_MATRIX_MULTIPLY_INTEGER node (as ``dmlrpc.ops.matrix_multiply_integer``). Edges neither broadcast
        nor pad: ``a`` and ``b`` have one dimension count and the same batch sizes; a zero point has theirs too,
        {1.., M or 1, 1} for A and {1.., 1, N or 1} for B."""
        where = "Graph.matrix_multiply_integer"
        _tensors(where, [a, b])
        _tensors(where, [a_zero_point, b_zero_point], optional=True)
        call = _matrix_multiply_integer(
            _placeholder(a),
            _placeholder(b),
            a_zero_point=None if a_zero_point is None else _placeholder(a_zero_point),
            b_zero_point=None if b_zero_point is None else _placeholder(b_zero_point),
            where=where,
            rank=None,
        )
        inputs = {"a": a, "a_zero_point": a_zero_point, "b": b, "b_zero_point": b_zero_point}
        return self._exact_node(where, call, inputs)[0]

    def _exact_node(self, where: str, call: ops.Call, inputs: dict[str, GraphTensor | None]) -> list[GraphTensor]:
        """``call``'s node, where every input tensor enters as it is: an edge keeps its tensor's shape, so a desc that
        would pad, broadcast or reshape one is refused, naming it."""
        desc = getattr(call.operator_desc, desc_case(call.operator_desc))
        input_fields, _ = tensor_fields(desc.DESCRIPTOR)
        for (argument, tensor), tensor_field in zip(inputs.items(), input_fields, strict=True):
            if tensor is None:
                continue
            buffer = getattr(desc, tensor_field.name).buffer
            if tuple(buffer.sizes) != tensor.shape or any(stride == 0 for stride in buffer.strides):
                raise ArgumentValueError(
                    argument,
                    f"{where}: {argument} has shape {tensor.shape}, which the node would take as "
                    f"{tuple(buffer.sizes)}{' broadcast' if any(s == 0 for s in buffer.strides) else ''}; edges do "
                    "not broadcast or reshape: give the graph tensor that shape",
                )
        return self.node(call.operator_desc, list(inputs.values()))

    def reduce(
        self,
        function: str,
        input: GraphTensor,
        axes: int | Sequence[int] | None = None,
        *,
        index_dtype: npt.DTypeLike = np.int64,
    ) -> GraphTensor:
        """A DML_REDUCE node (as ``dmlrpc.ops.reduce``). Its output keeps the input's rank with the reduced axes of
        size 1 (DirectML's shape, ``keepdims=True``): a graph's tensors have their descs' shapes."""
        _tensors(f"Graph.reduce({function!r})", [input])
        call = ops.reduce(function, _placeholder(input), axes, keepdims=True, index_dtype=index_dtype)
        return self.node(call.operator_desc, [input])[0]

    def cast(self, input: GraphTensor, dtype: npt.DTypeLike) -> GraphTensor:
        """A DML_CAST node (as ``dmlrpc.ops.cast``): ``input`` converted to ``dtype``."""
        _tensors("Graph.cast", [input])
        call = ops.cast(_placeholder(input), dtype)
        return self.node(call.operator_desc, [input])[0]

    def gather(self, input: GraphTensor, indices: GraphTensor, axis: int = 0) -> GraphTensor:
        """A DML_GATHER node (as ``dmlrpc.ops.gather``). Edges do not pad: ``input`` and ``indices`` have one
        dimension count, which the output has too (DirectML's right-aligned sizes); the indices' leading 1s are not
        meaningful, so ``indices`` of shape (1, 3) pick 3 positions and the result of a (4, 6) input along axis 0
        is (3, 6)."""
        where = "Graph.gather"
        _tensors(where, [input, indices])
        call = _gather(_placeholder(input), _placeholder(indices), axis, where=where, padded=False)
        return self._exact_node(where, call, {"input": input, "indices": indices})[0]

    def slice(
        self,
        input: GraphTensor,
        offsets: Sequence[int],
        sizes: Sequence[int],
        strides: Sequence[int] | None = None,
        *,
        version: int | None = None,
    ) -> GraphTensor:
        """A DML_SLICE1 (SLICE with ``version=0``) node (as ``dmlrpc.ops.slice``)."""
        _tensors("Graph.slice", [input])
        call = ops.slice(_placeholder(input), offsets, sizes, strides, version=version)
        return self.node(call.operator_desc, [input])[0]

    def pad(
        self,
        input: GraphTensor,
        start_padding: int | Sequence[int],
        end_padding: int | Sequence[int],
        mode: str = "constant",
        value: float = 0,
        *,
        version: int | None = None,
    ) -> GraphTensor:
        """A DML_PADDING1 (PADDING with ``version=0``) node (as ``dmlrpc.ops.pad``)."""
        _tensors("Graph.pad", [input])
        call = ops.pad(_placeholder(input), start_padding, end_padding, mode, value, version=version)
        return self.node(call.operator_desc, [input])[0]

    def tile(self, input: GraphTensor, repetitions: int | Sequence[int]) -> GraphTensor:
        """A DML_TILE node (as ``dmlrpc.ops.tile``). Edges do not pad: give one repetition per dimension of
        ``input`` (or fewer, which count from the last)."""
        where = "Graph.tile"
        _tensors(where, [input])
        call = ops.tile(_placeholder(input), repetitions)
        return self._exact_node(where, call, {"input": input})[0]

    def average_pooling(
        self,
        input: GraphTensor,
        window_size: int | Sequence[int],
        *,
        strides: int | Sequence[int] | None = None,
        start_padding: int | Sequence[int] | None = None,
        end_padding: int | Sequence[int] | None = None,
        include_padding: bool = False,
        dilations: int | Sequence[int] | None = None,
    ) -> GraphTensor:
        """A DML_AVERAGE_POOLING node (as ``dmlrpc.ops.average_pooling``) over a 4-D or 5-D input (a graph's
        tensors keep their shapes, so a 3-D one is refused: make the graph input (N, C, 1, W))."""
        _pooled_tensor("Graph.average_pooling", input)
        call = ops.average_pooling(
            _placeholder(input),
            window_size,
            **_window(strides, start_padding, end_padding, dilations),
            include_padding=include_padding,
        )
        return self.node(call.operator_desc, [input])[0]

    def max_pooling(
        self,
        input: GraphTensor,
        window_size: int | Sequence[int],
        *,
        strides: int | Sequence[int] | None = None,
        start_padding: int | Sequence[int] | None = None,
        end_padding: int | Sequence[int] | None = None,
        dilations: int | Sequence[int] | None = None,
    ) -> GraphTensor:
        """A DML_MAX_POOLING (MAX_POOLING2 with ``dilations``) node (as ``dmlrpc.ops.max_pooling``) over a 4-D or
        5-D input."""
        _pooled_tensor("Graph.max_pooling", input)
        call = ops.max_pooling(
            _placeholder(input),
            window_size,
            **_window(strides, start_padding, end_padding, dilations),
        )
        return self.node(call.operator_desc, [input])[0]

    def output(self, *tensors: GraphTensor) -> None:
        """Make ``tensors`` the next graph outputs (dispatches return them in this order)."""
        for tensor in tensors:
            _tensors("Graph.output", [tensor])
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

    def cumsum(self, input: GraphTensor, axis: int, *, reverse: bool = False, exclusive: bool = False) -> GraphTensor:
        """A DML_CUMULATIVE_SUMMATION node (as ``dmlrpc.ops.cumsum``): running sums along ``axis``."""
        _tensors("Graph.cumsum", [input])
        call = ops.cumsum(_placeholder(input), axis, reverse=reverse, exclusive=exclusive)
        return self.node(call.operator_desc, [input])[0]

    def cumprod(self, input: GraphTensor, axis: int, *, reverse: bool = False, exclusive: bool = False) -> GraphTensor:
        """A DML_CUMULATIVE_PRODUCT node (as ``dmlrpc.ops.cumprod``): running products along ``axis``."""
        _tensors("Graph.cumprod", [input])
        call = ops.cumprod(_placeholder(input), axis, reverse=reverse, exclusive=exclusive)
        return self.node(call.operator_desc, [input])[0]

    def mean_variance_normalization(
        self,
        input: GraphTensor,
        axes: int | Sequence[int] | None,
        *,
        scale: GraphTensor | None = None,
        bias: GraphTensor | None = None,
        normalize_variance: bool = True,
        epsilon: float = 1e-5,
        version: int | None = None,
    ) -> GraphTensor:
        """A DML_MEAN_VARIANCE_NORMALIZATION2 node (as ``dmlrpc.ops.mean_variance_normalization``). Edges do not
        pad: ``scale`` and ``bias`` have the input's dimension count, each size 1 or the input's."""
        where = "Graph.mean_variance_normalization"
        _tensors(where, [input])
        _tensors(where, [scale, bias], optional=True)
        call = ops.mean_variance_normalization(
            _placeholder(input),
            axes,
            scale=None if scale is None else _placeholder(scale),
            bias=None if bias is None else _placeholder(bias),
            normalize_variance=normalize_variance,
            epsilon=epsilon,
            version=version,
        )
        return self._exact_node(where, call, {"input": input, "scale": scale, "bias": bias})[0]

    def batch_normalization(
        self,
        input: GraphTensor,
        mean: GraphTensor,
        variance: GraphTensor,
        scale: GraphTensor | None = None,
        bias: GraphTensor | None = None,
        *,
        epsilon: float = 1e-5,
    ) -> GraphTensor:
        """A DML_BATCH_NORMALIZATION node (as ``dmlrpc.ops.batch_normalization``). Edges do not pad: ``mean``,
        ``variance``, ``scale`` and ``bias`` have the input's dimension count, each size 1 or the input's; an absent
        ``scale`` or ``bias`` becomes a graph constant of 1s or 0s (DirectML requires both)."""
        where = "Graph.batch_normalization"
        _tensors(where, [input, mean, variance])
        _tensors(where, [scale, bias], optional=True)
        ones = (1,) * len(input.shape)
        if scale is None:
            scale = self.constant(np.ones(ones, input.dtype))
        if bias is None:
            bias = self.constant(np.zeros(ones, input.dtype))
        tensors = {"input": input, "mean": mean, "variance": variance, "scale": scale, "bias": bias}
        call = ops.batch_normalization(*(_placeholder(t) for t in tensors.values()), epsilon=epsilon)
        return self._exact_node(where, call, dict(tensors))[0]

    def lp_normalization(self, input: GraphTensor, axis: int = -1, *, p: int = 2, epsilon: float = 1e-5) -> GraphTensor:
        """A DML_LP_NORMALIZATION node (as ``dmlrpc.ops.lp_normalization``)."""
        _tensors("Graph.lp_normalization", [input])
        call = ops.lp_normalization(_placeholder(input), axis, p=p, epsilon=epsilon)
        return self.node(call.operator_desc, [input])[0]

    def one_hot(self, indices: GraphTensor, depth: int, values: GraphTensor, axis: int = -1) -> GraphTensor:
        """A DML_ONE_HOT node (as ``dmlrpc.ops.one_hot``). Edges do not reshape, so the tensors have the output's
        dimension count: ``indices`` with size 1 along ``axis`` (which the output has ``depth`` along), ``values``
        {1, .., 1, 2} holding (off value, on value)."""
        where = "Graph.one_hot"
        _tensors(where, [indices, values])
        rank = len(indices.shape)
        position = _axis(axis, rank, where)
        if indices.shape[position] != 1:
            raise ArgumentValueError(
                "indices",
                f"{where}: indices has shape {indices.shape}; in a graph it has the output's dimension count, with "
                f"size 1 along axis {axis}",
            )
        call = ops.one_hot(_placeholder(indices).squeeze(position), depth, _placeholder(values), position)
        return self._exact_node(where, call, {"indices": indices, "values": values})[0]

    def fill_value_sequence(
        self, shape: Sequence[int], start: float, delta: float, dtype: npt.DTypeLike = np.float32
    ) -> GraphTensor:
        """A DML_FILL_VALUE_SEQUENCE node (as ``dmlrpc.ops.fill_value_sequence``), of at least 1 dimension."""
        call = ops.fill_value_sequence(shape, start, delta, dtype)
        if not call.output_shapes[0]:
            raise ArgumentValueError("shape", "Graph.fill_value_sequence: shape is empty; a graph tensor has sizes")
        return self.node(call.operator_desc, [])[0]
