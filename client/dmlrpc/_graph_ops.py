"""The ``Graph`` builders of the resample, data-movement, gather, generator, pooling, integer-convolution, arg-reduce
and local-response operators, and of JOIN and SPLIT (whose tensor arrays take one edge per element)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from dmlrpc import ops
from dmlrpc._graph_tensors import GraphTensor, _placeholder, _pooled_tensor, _tensors
from dmlrpc.errors import ArgumentValueError
from dmlrpc.ops.base import _window
from dmlrpc.ops.gather import _gather_nd
from dmlrpc.schema import desc_case, tensor_fields
from dmlrpc.v1 import graph_pb2, operators_pb2, tensor_pb2

__all__: list[str] = []


class GraphOperators:
    """Builders mixed into ``Graph``; each makes one node from the ``dmlrpc.ops`` builder of the same name."""

    _nodes: list[graph_pb2.GraphNodeDesc]
    _input_edges: list[graph_pb2.GraphEdgeDesc]
    _intermediate_edges: list[graph_pb2.GraphEdgeDesc]

    def node(
        self, operator_desc: operators_pb2.OperatorDesc, inputs: Sequence[GraphTensor | None]
    ) -> list[GraphTensor]:
        raise NotImplementedError  # Graph's

    def _exact_node(self, where: str, call: ops.Call, inputs: dict[str, GraphTensor | None]) -> list[GraphTensor]:
        raise NotImplementedError  # Graph's

    def value_scale_2d(
        self, input: GraphTensor, scale: float = 1.0, bias: float | Sequence[float] = 0.0
    ) -> GraphTensor:
        """A DML_VALUE_SCALE_2D node (as ``dmlrpc.ops.value_scale_2d``)."""
        _tensors("Graph.value_scale_2d", [input])
        return self.node(ops.value_scale_2d(_placeholder(input), scale, bias).operator_desc, [input])[0]

    def upsample_2d(self, input: GraphTensor, scale: int | Sequence[int], mode: str = "nearest") -> GraphTensor:
        """A DML_UPSAMPLE_2D node (as ``dmlrpc.ops.upsample_2d``)."""
        _tensors("Graph.upsample_2d", [input])
        return self.node(ops.upsample_2d(_placeholder(input), scale, mode).operator_desc, [input])[0]

    def resample(
        self,
        input: GraphTensor,
        scales: float | Sequence[float],
        *,
        mode: str = "nearest",
        output_shape: Sequence[int] | None = None,
        input_pixel_offsets: float | Sequence[float] | None = None,
        output_pixel_offsets: float | Sequence[float] | None = None,
        rounding: str | None = None,
        antialiased: bool = False,
    ) -> GraphTensor:
        """A DML_RESAMPLE(1/2/3) node (as ``dmlrpc.ops.resample``)."""
        _tensors("Graph.resample", [input])
        call = ops.resample(
            _placeholder(input),
            scales,
            mode=mode,
            output_shape=output_shape,
            input_pixel_offsets=input_pixel_offsets,
            output_pixel_offsets=output_pixel_offsets,
            rounding=rounding,
            antialiased=antialiased,
        )
        return self.node(call.operator_desc, [input])[0]

    def space_to_depth(self, input: GraphTensor, block_size: int, order: str | None = None) -> GraphTensor:
        """A DML_SPACE_TO_DEPTH(1) node (as ``dmlrpc.ops.space_to_depth``)."""
        _tensors("Graph.space_to_depth", [input])
        return self.node(ops.space_to_depth(_placeholder(input), block_size, order).operator_desc, [input])[0]

    def depth_to_space(self, input: GraphTensor, block_size: int, order: str | None = None) -> GraphTensor:
        """A DML_DEPTH_TO_SPACE(1) node (as ``dmlrpc.ops.depth_to_space``)."""
        _tensors("Graph.depth_to_space", [input])
        return self.node(ops.depth_to_space(_placeholder(input), block_size, order).operator_desc, [input])[0]

    def reverse_subsequences(self, input: GraphTensor, sequence_lengths: GraphTensor, axis: int = 0) -> GraphTensor:
        """A DML_REVERSE_SUBSEQUENCES node (as ``dmlrpc.ops.reverse_subsequences``). Edges do not reshape:
        ``sequence_lengths`` has the input's shape with 1 along ``axis``. Its values are checked by the server."""
        where = "Graph.reverse_subsequences"
        _tensors(where, [input, sequence_lengths])
        lengths = np.zeros(sequence_lengths.shape, sequence_lengths.dtype)
        call = ops.reverse_subsequences(_placeholder(input), lengths, axis)
        return self._exact_node(where, call, {"input": input, "sequence_lengths": sequence_lengths})[0]

    def fill_value_constant(self, shape: Sequence[int], value: float, dtype: npt.DTypeLike = np.float32) -> GraphTensor:
        """A DML_FILL_VALUE_CONSTANT node (as ``dmlrpc.ops.fill_value_constant``), of at least 1 dimension."""
        call = ops.fill_value_constant(shape, value, dtype)
        if not call.output_shapes[0]:
            raise ArgumentValueError("shape", "Graph.fill_value_constant: shape is empty; a graph tensor has sizes")
        return self.node(call.operator_desc, [])[0]

    def diagonal_matrix(
        self,
        shape: Sequence[int] | None,
        offset: int = 0,
        value: float = 1,
        dtype: npt.DTypeLike = np.float32,
        *,
        fill_end: int | None = None,
        input: GraphTensor | None = None,
    ) -> GraphTensor:
        """A DML_DIAGONAL_MATRIX(1) node (as ``dmlrpc.ops.diagonal_matrix``)."""
        where = "Graph.diagonal_matrix"
        _tensors(where, [input], optional=True)
        source = None if input is None else _placeholder(input)
        call = ops.diagonal_matrix(shape, offset, value, dtype, fill_end=fill_end, input=source)
        if desc_case(call.operator_desc) == "diagonal_matrix":
            return self.node(call.operator_desc, [])[0]
        return self._exact_node(where, call, {"input": input})[0]

    def nonzero_coordinates(self, input: GraphTensor) -> tuple[GraphTensor, GraphTensor]:
        """A DML_NONZERO_COORDINATES node (as ``dmlrpc.ops.nonzero_coordinates``): the count {1} and the
        coordinates {input's element count, dimension count}, whose rows past the count are unspecified."""
        _tensors("Graph.nonzero_coordinates", [input])
        count, coordinates = self.node(ops.nonzero_coordinates(_placeholder(input)).operator_desc, [input])
        return count, coordinates

    def lp_pooling(
        self,
        input: GraphTensor,
        window_size: int | Sequence[int],
        *,
        p: int = 2,
        strides: int | Sequence[int] | None = None,
        start_padding: int | Sequence[int] | None = None,
        end_padding: int | Sequence[int] | None = None,
        dilations: int | Sequence[int] | None = None,
    ) -> GraphTensor:
        """A DML_LP_POOLING(1) node (as ``dmlrpc.ops.lp_pooling``) over a 4-D or 5-D input."""
        _pooled_tensor("Graph.lp_pooling", input)
        call = ops.lp_pooling(
            _placeholder(input),
            window_size,
            p=p,
            **_window(strides, start_padding, end_padding, dilations),
        )
        return self.node(call.operator_desc, [input])[0]

    def max_pooling_with_indices(
        self,
        input: GraphTensor,
        window_size: int | Sequence[int],
        *,
        strides: int | Sequence[int] | None = None,
        start_padding: int | Sequence[int] | None = None,
        end_padding: int | Sequence[int] | None = None,
        dilations: int | Sequence[int] | None = None,
        index_dtype: npt.DTypeLike = np.uint32,
    ) -> tuple[GraphTensor, GraphTensor]:
        """A DML_MAX_POOLING1/2 node (as ``dmlrpc.ops.max_pooling_with_indices``) over a 4-D or 5-D input: its
        maxima and their flat indices."""
        _pooled_tensor("Graph.max_pooling_with_indices", input)
        call = ops.max_pooling_with_indices(
            _placeholder(input),
            window_size,
            **_window(strides, start_padding, end_padding, dilations),
            index_dtype=index_dtype,
        )
        values, indices = self.node(call.operator_desc, [input])
        return values, indices

    def max_unpooling(self, input: GraphTensor, indices: GraphTensor, output_shape: Sequence[int]) -> GraphTensor:
        """A DML_MAX_UNPOOLING node (as ``dmlrpc.ops.max_unpooling``); the indices' values are checked by the
        server."""
        where = "Graph.max_unpooling"
        _tensors(where, [input, indices])
        # Distinct in-range stand-ins: the builder checks values, which a graph knows only when it runs.
        positions = np.arange(int(np.prod(indices.shape)), dtype=indices.dtype).reshape(indices.shape)
        call = ops.max_unpooling(_placeholder(input), positions, output_shape)
        return self._exact_node(where, call, {"input": input, "indices": indices})[0]

    def roi_pooling(
        self, input: GraphTensor, rois: GraphTensor, pooled_size: int | Sequence[int], spatial_scale: float = 1.0
    ) -> GraphTensor:
        """A DML_ROI_POOLING node (as ``dmlrpc.ops.roi_pooling``). Edges do not reshape: ``rois`` is {1, 1,
        regions, 5}."""
        where = "Graph.roi_pooling"
        _tensors(where, [input, rois])
        call = ops.roi_pooling(_placeholder(input), _placeholder(rois), pooled_size, spatial_scale)
        return self._exact_node(where, call, {"input": input, "rois": rois})[0]

    def convolution_integer(
        self,
        input: GraphTensor,
        filter: GraphTensor,
        *,
        input_zero_point: GraphTensor | None = None,
        filter_zero_point: GraphTensor | None = None,
        strides: int | Sequence[int] | None = None,
        dilations: int | Sequence[int] | None = None,
        start_padding: int | Sequence[int] | None = None,
        end_padding: int | Sequence[int] | None = None,
        group_count: int = 1,
    ) -> GraphTensor:
        """A DML_CONVOLUTION_INTEGER node (as ``dmlrpc.ops.convolution_integer``). Edges do not reshape: a zero
        point has the input's dimension count, all 1s (or {1, output channels, 1..} for the filter's)."""
        where = "Graph.convolution_integer"
        _tensors(where, [input, filter])
        _tensors(where, [input_zero_point, filter_zero_point], optional=True)
        call = ops.convolution_integer(
            _placeholder(input),
            _placeholder(filter),
            input_zero_point=None if input_zero_point is None else _placeholder(input_zero_point),
            filter_zero_point=None if filter_zero_point is None else _placeholder(filter_zero_point),
            **_window(strides, start_padding, end_padding, dilations),
            group_count=group_count,
        )
        inputs = {
            "input": input,
            "input_zero_point": input_zero_point,
            "filter": filter,
            "filter_zero_point": filter_zero_point,
        }
        return self._exact_node(where, call, inputs)[0]

    def argmax(
        self,
        input: GraphTensor,
        axes: int | Sequence[int] | None = None,
        *,
        select_last_index: bool = False,
        index_dtype: npt.DTypeLike = np.int64,
    ) -> GraphTensor:
        """A DML_ARGMAX node (as ``dmlrpc.ops.argmax``); its output keeps the input's rank (``keepdims=True``)."""
        _tensors("Graph.argmax", [input])
        call = ops.argmax(
            _placeholder(input), axes, keepdims=True, select_last_index=select_last_index, index_dtype=index_dtype
        )
        return self.node(call.operator_desc, [input])[0]

    def argmin(
        self,
        input: GraphTensor,
        axes: int | Sequence[int] | None = None,
        *,
        select_last_index: bool = False,
        index_dtype: npt.DTypeLike = np.int64,
    ) -> GraphTensor:
        """A DML_ARGMIN node (as ``dmlrpc.ops.argmin``); its output keeps the input's rank (``keepdims=True``)."""
        _tensors("Graph.argmin", [input])
        call = ops.argmin(
            _placeholder(input), axes, keepdims=True, select_last_index=select_last_index, index_dtype=index_dtype
        )
        return self.node(call.operator_desc, [input])[0]

    def local_response_normalization(
        self,
        input: GraphTensor,
        local_size: int,
        *,
        alpha: float = 1e-4,
        beta: float = 0.75,
        bias: float = 1.0,
        cross_channel: bool = True,
    ) -> GraphTensor:
        """A DML_LOCAL_RESPONSE_NORMALIZATION node (as ``dmlrpc.ops.local_response_normalization``)."""
        _tensors("Graph.local_response_normalization", [input])
        call = ops.local_response_normalization(
            _placeholder(input), local_size, alpha=alpha, beta=beta, bias=bias, cross_channel=cross_channel
        )
        return self.node(call.operator_desc, [input])[0]

    def scatter_elements(
        self, input: GraphTensor, indices: GraphTensor, updates: GraphTensor, axis: int = 0
    ) -> GraphTensor:
        """A DML_SCATTER_ELEMENTS node (as ``dmlrpc.ops.scatter_elements``). Edges do not reshape: the tensors
        have one dimension count; the indices' values are checked by the server."""
        where = "Graph.scatter_elements"
        _tensors(where, [input, indices, updates])
        call = ops.scatter_elements(_placeholder(input), _placeholder(indices), _placeholder(updates), axis)
        return self._exact_node(where, call, {"input": input, "indices": indices, "updates": updates})[0]

    def scatter_nd(self, input: GraphTensor, indices: GraphTensor, updates: GraphTensor) -> GraphTensor:
        """A DML_SCATTER_ND node (as ``dmlrpc.ops.scatter_nd``). Edges do not pad: the tensors have one dimension
        count (their leading 1s padding, as DirectML's InputDimensionCount and IndicesDimensionCount say)."""
        where = "Graph.scatter_nd"
        _tensors(where, [input, indices, updates])
        call = ops.scatter_nd(_placeholder(input), _placeholder(indices), _placeholder(updates))
        return self._exact_node(where, call, {"input": input, "indices": indices, "updates": updates})[0]

    def gather_elements(self, input: GraphTensor, indices: GraphTensor, axis: int = 0) -> GraphTensor:
        """A DML_GATHER_ELEMENTS node (as ``dmlrpc.ops.gather_elements``); the indices' values are checked by the
        server."""
        where = "Graph.gather_elements"
        _tensors(where, [input, indices])
        call = ops.gather_elements(_placeholder(input), _placeholder(indices), axis)
        return self._exact_node(where, call, {"input": input, "indices": indices})[0]

    def gather_nd(
        self, input: GraphTensor, indices: GraphTensor, batch_dimension_count: int = 0, *, version: int | None = None
    ) -> GraphTensor:
        """A DML_GATHER_ND(1) node (as ``dmlrpc.ops.gather_nd``). Edges do not pad: ``input`` and ``indices`` have
        one dimension count, all of it meaningful, and the output that count too (the result right-aligned with
        leading 1s)."""
        where = "Graph.gather_nd"
        _tensors(where, [input, indices])
        call = _gather_nd(
            _placeholder(input), _placeholder(indices), batch_dimension_count, version, where=where, padded=False
        )
        return self._exact_node(where, call, {"input": input, "indices": indices})[0]

    def join(self, inputs: Sequence[GraphTensor], axis: int = 0) -> GraphTensor:
        """A DML_JOIN node (as ``dmlrpc.ops.join``): ``inputs`` of one dimension count and dtype, concatenated
        along ``axis`` (an edge per input)."""
        where = "Graph.join"
        _tensors(where, list(inputs))
        call = ops.join([_placeholder(t) for t in inputs], axis)
        return self._array_node(call.operator_desc, list(inputs))[0]

    def split(self, input: GraphTensor, sizes: int | Sequence[int], axis: int = 0) -> list[GraphTensor]:
        """A DML_SPLIT node (as ``dmlrpc.ops.split``): one tensor per piece; each must reach a graph output or
        another node."""
        _tensors("Graph.split", [input])
        call = ops.split(_placeholder(input), sizes, axis)
        return self._array_node(call.operator_desc, [input])

    def _array_node(
        self, operator_desc: operators_pb2.OperatorDesc, inputs: Sequence[GraphTensor]
    ) -> list[GraphTensor]:
        """A node of an operator with tensor arrays: node input and output indices count the array's elements (the
        flattened binding order), and each graph input's layout is copied into the element it feeds."""
        operator_desc = operators_pb2.OperatorDesc.FromString(operator_desc.SerializeToString())
        desc = getattr(operator_desc, desc_case(operator_desc))
        input_fields, output_fields = tensor_fields(desc.DESCRIPTOR)
        slots: list[tensor_pb2.TensorDesc] = []
        for field in input_fields:
            slots.extend(getattr(desc, field.name) if field.array else [getattr(desc, field.name)])
        index = len(self._nodes)
        for k, (slot, tensor) in enumerate(zip(slots, inputs, strict=True)):
            if tensor.kind == "input":
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
        outputs: list[tensor_pb2.TensorDesc] = []
        for field in output_fields:
            outputs.extend(getattr(desc, field.name) if field.array else [getattr(desc, field.name)])
        return [GraphTensor("node", index, j, output) for j, output in enumerate(outputs)]
