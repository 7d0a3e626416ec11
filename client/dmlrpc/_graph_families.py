"""Graph nodes of the quantized, recurrent, ROI_ALIGN(_GRAD), RANDOM_GENERATOR and MULTIHEAD_ATTENTION operators."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dmlrpc import ops
from dmlrpc._graph_tensors import GraphTensor, NodeBuilders, _placeholder, _tensors
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops.base import _window

__all__ = ["FamilyNodes"]

_Spatial = int | Sequence[int] | None


def _typed(where: str, argument: str, tensor: GraphTensor | None, dtype: type[np.generic]) -> None:
    """An edge keeps its tensor's type, where the eager function would convert an array to ``dtype``."""
    if tensor is not None and tensor.dtype != dtype:
        raise ArgumentTypeError(
            argument,
            f"{where}: {argument} has dtype {tensor.dtype}; in a graph it is {np.dtype(dtype).name} (edges do not "
            "convert: Graph.cast one)",
            allowed=(np.dtype(dtype).name,),
        )


class FamilyNodes(NodeBuilders):
    """``Graph``'s nodes of these families. Edges keep their tensors' shapes, so every tensor has the shape
    DirectML's desc gives it (4-D where the desc is 4-D: a matrix is (1, 1, M, K), a statistic (1, C, 1, 1));
    a node whose builder would reshape or broadcast a tensor refuses it, naming it."""

    def dynamic_quantize_linear(
        self, input: GraphTensor, *, dtype: npt.DTypeLike = np.uint8
    ) -> tuple[GraphTensor, GraphTensor, GraphTensor]:
        """A DML_DYNAMIC_QUANTIZE_LINEAR node (as ``dmlrpc.ops.dynamic_quantize_linear``): (output, scale, zero
        point), the last two of the input's dimension count with sizes 1."""
        output, scale, zero = self._built(
            "Graph.dynamic_quantize_linear", ops.dynamic_quantize_linear, {"input": input}, 1, dtype=dtype
        )
        return output, scale, zero

    def quantized_linear_matrix_multiply(
        self,
        a: GraphTensor,
        a_scale: GraphTensor,
        b: GraphTensor,
        b_scale: GraphTensor,
        output_scale: GraphTensor,
        *,
        a_zero_point: GraphTensor | None = None,
        b_zero_point: GraphTensor | None = None,
        output_zero_point: GraphTensor | None = None,
        dtype: npt.DTypeLike | None = None,
    ) -> GraphTensor:
        """A DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY node (as ``dmlrpc.ops.quantized_linear_matrix_multiply``): 4-D
        matrices, A's and the output's parameters {1, 1, M or 1, 1}, B's {1, 1, 1, N or 1}."""
        tensors = {
            "a": a, "a_scale": a_scale, "b": b, "b_scale": b_scale, "output_scale": output_scale,
            "a_zero_point": a_zero_point, "b_zero_point": b_zero_point, "output_zero_point": output_zero_point,
        }  # fmt: skip
        where = "Graph.quantized_linear_matrix_multiply"
        _tensors(where, list(tensors.values())[:5])
        _tensors(where, list(tensors.values())[5:], optional=True)
        call = ops.quantized_linear_matrix_multiply(
            **{name: None if t is None else _placeholder(t) for name, t in tensors.items()},  # type: ignore[arg-type]
            dtype=dtype,
        )
        order = ("a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "output_scale", "output_zero_point")
        return self._exact_node(where, call, {name: tensors[name] for name in order})[0]

    def matrix_multiply_integer_to_float(
        self,
        a: GraphTensor,
        a_scale: GraphTensor,
        b: GraphTensor,
        b_scale: GraphTensor,
        bias: GraphTensor | None = None,
        *,
        a_zero_point: GraphTensor | None = None,
        b_zero_point: GraphTensor | None = None,
    ) -> GraphTensor:
        """A DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT node (as ``dmlrpc.ops.matrix_multiply_integer_to_float``): 4-D
        matrices, A's parameters {1, 1, M or 1, 1}, B's {1, 1, 1, N or 1}, the bias the output's shape."""
        where = "Graph.matrix_multiply_integer_to_float"
        tensors = {"a": a, "a_scale": a_scale, "b": b, "b_scale": b_scale}
        optional = {"bias": bias, "a_zero_point": a_zero_point, "b_zero_point": b_zero_point}
        _tensors(where, list(tensors.values()))
        _tensors(where, list(optional.values()), optional=True)
        everything = tensors | optional
        call = ops.matrix_multiply_integer_to_float(
            **{name: None if t is None else _placeholder(t) for name, t in everything.items()}  # type: ignore[arg-type]
        )
        order = ("a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "bias")
        return self._exact_node(where, call, {name: everything[name] for name in order})[0]

    def quantized_linear_convolution(
        self,
        input: GraphTensor,
        input_scale: GraphTensor,
        filter: GraphTensor,
        filter_scale: GraphTensor,
        output_scale: GraphTensor,
        bias: GraphTensor | None = None,
        *,
        input_zero_point: GraphTensor | None = None,
        filter_zero_point: GraphTensor | None = None,
        output_zero_point: GraphTensor | None = None,
        strides: _Spatial = None,
        dilations: _Spatial = None,
        start_padding: _Spatial = None,
        end_padding: _Spatial = None,
        group_count: int = 1,
        dtype: npt.DTypeLike | None = None,
    ) -> GraphTensor:
        """A DML_QUANTIZED_LINEAR_CONVOLUTION node (as ``dmlrpc.ops.quantized_linear_convolution``): parameters
        {1, 1, 1, 1}, or {1, M, 1, 1} per output channel for the filter's, the bias {1, M, 1, 1}."""
        where = "Graph.quantized_linear_convolution"
        tensors = {
            "input": input, "input_scale": input_scale, "filter": filter, "filter_scale": filter_scale,
            "output_scale": output_scale,
        }  # fmt: skip
        optional = {
            "bias": bias, "input_zero_point": input_zero_point, "filter_zero_point": filter_zero_point,
            "output_zero_point": output_zero_point,
        }  # fmt: skip
        _tensors(where, list(tensors.values()))
        _tensors(where, list(optional.values()), optional=True)
        everything = tensors | optional
        call = ops.quantized_linear_convolution(
            **{name: None if t is None else _placeholder(t) for name, t in everything.items()},  # type: ignore[arg-type]
            **_window(strides, start_padding, end_padding, dilations),
            group_count=group_count,
            dtype=dtype,
        )
        order = (
            "input", "input_scale", "input_zero_point", "filter", "filter_scale", "filter_zero_point", "bias",
            "output_scale", "output_zero_point",
        )  # fmt: skip
        return self._exact_node(where, call, {name: everything[name] for name in order})[0]

    def quantized_linear_average_pooling(
        self,
        input: GraphTensor,
        input_scale: GraphTensor,
        output_scale: GraphTensor,
        window_size: int | Sequence[int],
        *,
        input_zero_point: GraphTensor | None = None,
        output_zero_point: GraphTensor | None = None,
        strides: _Spatial = None,
        dilations: _Spatial = None,
        start_padding: _Spatial = None,
        end_padding: _Spatial = None,
        include_padding: bool = False,
    ) -> GraphTensor:
        """A DML_QUANTIZED_LINEAR_AVERAGE_POOLING node (as ``dmlrpc.ops.quantized_linear_average_pooling``):
        parameters of the input's dimension count, all 1s or {1, C, 1..}."""
        tensors = {
            "input": input, "input_scale": input_scale, "input_zero_point": input_zero_point,
            "output_scale": output_scale, "output_zero_point": output_zero_point,
        }  # fmt: skip
        where = "Graph.quantized_linear_average_pooling"
        _tensors(where, [input, input_scale, output_scale])
        _tensors(where, [input_zero_point, output_zero_point], optional=True)
        call = ops.quantized_linear_average_pooling(
            **{name: None if t is None else _placeholder(t) for name, t in tensors.items()},  # type: ignore[arg-type]
            window_size=window_size,
            **_window(strides, start_padding, end_padding, dilations),
            include_padding=include_padding,
        )
        return self._exact_node(where, call, tensors)[0]

    def _recurrent(
        self,
        kind: str,
        tensors: dict[str, GraphTensor | None],
        build: Callable[..., ops.Call],
        outputs: Sequence[str],
        **attributes: Any,
    ) -> tuple[GraphTensor, ...]:
        """A recurrent node: its tensors 4-D as DirectML's desc has them, given to the builder without their
        leading 1s (ONNX's layouts)."""
        where = f"Graph.{kind}"
        values = list(tensors.values())
        _tensors(where, values[:3])
        _tensors(where, values[3:], optional=True)
        leading = {"bias": 2, "peephole": 2, "sequence_lengths": 3}
        arrays: dict[str, Any] = {}
        for name, tensor in tensors.items():
            if tensor is None:
                arrays[name] = None
                continue
            drop = leading.get(name, 1)
            if len(tensor.shape) != 4 or any(size != 1 for size in tensor.shape[:drop]):
                raise ArgumentValueError(
                    name,
                    f"{where}: {name} has shape {tensor.shape}; in a graph it has DirectML's 4-D shape, "
                    f"{drop} leading 1s then ONNX's",
                )
            arrays[name] = _placeholder(tensor).reshape(tensor.shape[drop:])
        call = build(**arrays, outputs=outputs, **attributes)
        return tuple(self._exact_node(where, call, tensors))

    def rnn(
        self,
        input: GraphTensor,
        weight: GraphTensor,
        recurrence: GraphTensor,
        bias: GraphTensor | None = None,
        *,
        hidden_init: GraphTensor | None = None,
        sequence_lengths: GraphTensor | None = None,
        direction: Literal["forward", "backward", "bidirectional"] = "forward",
        activations: Sequence[ops.Activation] | None = None,
        outputs: Sequence[Literal["sequence", "single"]] = ("sequence", "single"),
    ) -> tuple[GraphTensor, ...]:
        """A DML_RNN node (as ``dmlrpc.ops.rnn``); its tensors have DirectML's 4-D shapes ({1, T, B, I} ...), its
        outputs too: sequence {T, D, B, H}, single {1, D, B, H}."""
        tensors = {
            "input": input, "weight": weight, "recurrence": recurrence, "bias": bias, "hidden_init": hidden_init,
            "sequence_lengths": sequence_lengths,
        }  # fmt: skip
        return self._recurrent("rnn", tensors, ops.rnn, outputs, direction=direction, activations=activations)

    def lstm(
        self,
        input: GraphTensor,
        weight: GraphTensor,
        recurrence: GraphTensor,
        bias: GraphTensor | None = None,
        *,
        hidden_init: GraphTensor | None = None,
        cell_mem_init: GraphTensor | None = None,
        sequence_lengths: GraphTensor | None = None,
        peephole: GraphTensor | None = None,
        direction: Literal["forward", "backward", "bidirectional"] = "forward",
        activations: Sequence[ops.Activation] | None = None,
        clip_threshold: float | None = None,
        couple_input_forget: bool = False,
        outputs: Sequence[Literal["sequence", "single", "cell_single"]] = ("sequence", "single", "cell_single"),
    ) -> tuple[GraphTensor, ...]:
        """A DML_LSTM node (as ``dmlrpc.ops.lstm``), its tensors of DirectML's 4-D shapes (as ``Graph.rnn``)."""
        tensors = {
            "input": input, "weight": weight, "recurrence": recurrence, "bias": bias, "hidden_init": hidden_init,
            "cell_mem_init": cell_mem_init, "sequence_lengths": sequence_lengths, "peephole": peephole,
        }  # fmt: skip
        return self._recurrent(
            "lstm",
            tensors,
            ops.lstm,
            outputs,
            direction=direction,
            activations=activations,
            clip_threshold=clip_threshold,
            couple_input_forget=couple_input_forget,
        )

    def gru(
        self,
        input: GraphTensor,
        weight: GraphTensor,
        recurrence: GraphTensor,
        bias: GraphTensor | None = None,
        *,
        hidden_init: GraphTensor | None = None,
        sequence_lengths: GraphTensor | None = None,
        direction: Literal["forward", "backward", "bidirectional"] = "forward",
        activations: Sequence[ops.Activation] | None = None,
        linear_before_reset: bool = False,
        outputs: Sequence[Literal["sequence", "single"]] = ("sequence", "single"),
    ) -> tuple[GraphTensor, ...]:
        """A DML_GRU node (as ``dmlrpc.ops.gru``), its tensors of DirectML's 4-D shapes (as ``Graph.rnn``)."""
        tensors = {
            "input": input, "weight": weight, "recurrence": recurrence, "bias": bias, "hidden_init": hidden_init,
            "sequence_lengths": sequence_lengths,
        }  # fmt: skip
        return self._recurrent(
            "gru",
            tensors,
            ops.gru,
            outputs,
            direction=direction,
            activations=activations,
            linear_before_reset=linear_before_reset,
        )

    def roi_align(
        self,
        input: GraphTensor,
        rois: GraphTensor,
        batch_indices: GraphTensor,
        output_size: Sequence[int],
        **attributes: Any,
    ) -> GraphTensor:
        """A DML_ROI_ALIGN(1) node (as ``dmlrpc.ops.roi_align``, whose keyword arguments it takes): ``rois``
        (NumROIs, 4), ``batch_indices`` (NumROIs,) uint32."""
        return self._built(
            "Graph.roi_align",
            ops.roi_align,
            {"input": input, "rois": rois, "batch_indices": batch_indices},
            3,
            output_size=output_size,
            **attributes,
        )[0]

    def random_generator(
        self, input_state: GraphTensor, shape: int | Sequence[int], *, next_state: bool = True
    ) -> tuple[GraphTensor, ...]:
        """A DML_RANDOM_GENERATOR node (as ``dmlrpc.ops.random_generator``): ``input_state`` {1, 1, 1, 6} uint32,
        the values 4-D ({1.., shape}); with ``next_state`` (values, next state), else (values,)."""
        return tuple(
            self._built(
                "Graph.random_generator",
                ops.random_generator,
                {"input_state": input_state},
                1,
                shape=(1,) * (4 - (1 if isinstance(shape, int) else len(shape)))
                + ((shape,) if isinstance(shape, int) else tuple(shape)),
                next_state=next_state,
            )
        )

    def _array_node(self, operator_desc: Any, inputs: Sequence[GraphTensor]) -> list[GraphTensor]:
        raise NotImplementedError  # GraphOperators'

    def _quantization(
        self,
        where: str,
        build: Callable[..., ops.Call],
        tensors: dict[str, GraphTensor | None],
        dtype: npt.DTypeLike | None,
    ) -> GraphTensor:
        """A QUANTIZE or DEQUANTIZE node: its quantization tensors are an array (one edge each, after the input),
        every one of the input's shape, as an edge does not broadcast."""
        input, scale, zero_point = tensors.values()
        _tensors(where, [input, scale])
        _tensors(where, [zero_point], optional=True)
        assert input is not None and scale is not None
        for argument, tensor in (("scale", scale), ("zero_point", zero_point)):
            if tensor is not None and tensor.shape != input.shape:
                raise ArgumentValueError(
                    argument,
                    f"{where}: {argument} has shape {tensor.shape} and input {input.shape}; in a graph it has the "
                    "input's shape (edges do not broadcast: a graph constant can hold a broadcast one)",
                )
        placeholders = {name: None if t is None else _placeholder(t) for name, t in tensors.items()}
        call = build(**placeholders, dtype=dtype)
        given = [t for t in (input, scale, zero_point) if t is not None]
        return self._array_node(call.operator_desc, given)[0]

    def quantize(
        self,
        input: GraphTensor,
        scale: GraphTensor,
        zero_point: GraphTensor | None = None,
        *,
        dtype: npt.DTypeLike | None = None,
    ) -> GraphTensor:
        """A DML_QUANTIZE node (as ``dmlrpc.ops.quantize``): ``scale`` and ``zero_point`` have the input's shape."""
        tensors = {"input": input, "scale": scale, "zero_point": zero_point}
        return self._quantization("Graph.quantize", ops.quantize, tensors, dtype)

    def dequantize(
        self,
        input: GraphTensor,
        scale: GraphTensor,
        zero_point: GraphTensor | None = None,
        *,
        dtype: npt.DTypeLike | None = None,
    ) -> GraphTensor:
        """A DML_DEQUANTIZE node (as ``dmlrpc.ops.dequantize``): ``scale`` and ``zero_point`` have the input's
        shape."""
        tensors = {"input": input, "scale": scale, "zero_point": zero_point}
        return self._quantization("Graph.dequantize", ops.dequantize, tensors, dtype)

    def roi_align_grad(
        self,
        input_gradient: GraphTensor,
        rois: GraphTensor,
        batch_indices: GraphTensor,
        input_shape: Sequence[int] | None = None,
        *,
        input: GraphTensor | None = None,
        **attributes: Any,
    ) -> GraphTensor:
        """A DML_ROI_ALIGN_GRAD node (as ``dmlrpc.ops.roi_align_grad``, whose keyword arguments it takes):
        ``rois`` (NumROIs, 4), ``batch_indices`` (NumROIs,) uint32, the output the input's gradient."""
        where = "Graph.roi_align_grad"
        _tensors(where, [input_gradient, rois, batch_indices])
        _tensors(where, [input], optional=True)
        _typed(where, "batch_indices", batch_indices, np.uint32)
        call = ops.roi_align_grad(
            _placeholder(input_gradient),
            _placeholder(rois),
            _placeholder(batch_indices),
            input_shape,
            input=None if input is None else _placeholder(input),
            **attributes,
        )
        tensors = {"input": input, "input_gradient": input_gradient, "rois": rois, "batch_indices": batch_indices}
        return self._exact_node(where, call, tensors)[0]

    def multihead_attention(
        self,
        query: GraphTensor | None = None,
        key: GraphTensor | None = None,
        value: GraphTensor | None = None,
        *,
        head_count: int,
        stacked_query_key: GraphTensor | None = None,
        stacked_key_value: GraphTensor | None = None,
        stacked_query_key_value: GraphTensor | None = None,
        bias: GraphTensor | None = None,
        mask: GraphTensor | None = None,
        relative_position_bias: GraphTensor | None = None,
        past_key: GraphTensor | None = None,
        past_value: GraphTensor | None = None,
        present: bool = False,
        **attributes: Any,
    ) -> GraphTensor | tuple[GraphTensor, GraphTensor, GraphTensor]:
        """A DML_MULTIHEAD_ATTENTION(1) node (as ``dmlrpc.ops.multihead_attention``, whose other keyword arguments
        it takes): the output, or (output, present key, present value) with ``present``. The tensors have the
        shapes the function sends: ``mask`` int32, a "key_sequence_length" one (1, batch)."""
        where = "Graph.multihead_attention"
        tensors = {
            "query": query, "key": key, "value": value, "stacked_query_key": stacked_query_key,
            "stacked_key_value": stacked_key_value, "stacked_query_key_value": stacked_query_key_value, "bias": bias,
            "mask": mask, "relative_position_bias": relative_position_bias, "past_key": past_key,
            "past_value": past_value,
        }  # fmt: skip
        _tensors(where, list(tensors.values()), optional=True)
        _typed(where, "mask", mask, np.int32)
        placeholders: dict[str, Any] = {name: None if t is None else _placeholder(t) for name, t in tensors.items()}
        call = ops.multihead_attention(**placeholders, head_count=head_count, present=present, **attributes)
        inputs: dict[str, GraphTensor | None] = dict(tensors)
        if call.operator_desc.WhichOneof("desc") == "multihead_attention1":
            inputs["past_sequence_lengths"] = None
        outputs = self._exact_node(where, call, inputs)
        if present:
            output, present_key, present_value = outputs
            return output, present_key, present_value
        return outputs[0]
