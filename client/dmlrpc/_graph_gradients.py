"""Graph nodes of the training, spatial-gradient and FOLD/UNFOLD operators: each is its ``dmlrpc.ops`` builder over
placeholders, its tensors entering as they are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from dmlrpc import ops
from dmlrpc._graph_tensors import GraphTensor, NodeBuilders, _placeholder, _tensors
from dmlrpc.ops.base import _window

__all__ = ["GradientNodes"]

_Spatial = int | Sequence[int] | None


class GradientNodes(NodeBuilders):
    """``Graph``'s nodes of these families; like ``FamilyNodes``', each tensor has the shape DirectML's desc gives it
    (a statistic is (1, C, 1, 1)), and a node whose builder would reshape a tensor refuses it, naming it."""

    def batch_normalization_grad(
        self,
        input: GraphTensor,
        input_gradient: GraphTensor,
        mean: GraphTensor,
        variance: GraphTensor,
        scale: GraphTensor,
        *,
        epsilon: float = 1e-5,
    ) -> tuple[GraphTensor, GraphTensor, GraphTensor]:
        """A DML_BATCH_NORMALIZATION_GRAD node (as ``dmlrpc.ops.batch_normalization_grad``); the statistics have
        the input's dimension count."""
        tensors = {"input": input, "input_gradient": input_gradient, "mean": mean, "variance": variance, "scale": scale}
        dx, dscale, dbias = self._built(
            "Graph.batch_normalization_grad", ops.batch_normalization_grad, dict(tensors), 5, epsilon=epsilon
        )
        return dx, dscale, dbias

    def batch_normalization_training_grad(
        self,
        input: GraphTensor,
        input_gradient: GraphTensor,
        mean: GraphTensor,
        variance: GraphTensor,
        scale: GraphTensor,
        *,
        epsilon: float = 1e-5,
    ) -> tuple[GraphTensor, GraphTensor, GraphTensor]:
        """A DML_BATCH_NORMALIZATION_TRAINING_GRAD node (as ``dmlrpc.ops.batch_normalization_training_grad``)."""
        tensors = {"input": input, "input_gradient": input_gradient, "mean": mean, "variance": variance, "scale": scale}
        where = "Graph.batch_normalization_training_grad"
        dx, dscale, dbias = self._built(where, ops.batch_normalization_training_grad, dict(tensors), 5, epsilon=epsilon)
        return dx, dscale, dbias

    def batch_normalization_training(
        self,
        input: GraphTensor,
        scale: GraphTensor,
        bias: GraphTensor,
        fused_add: GraphTensor | None = None,
        *,
        epsilon: float = 1e-5,
        fused_activation: ops.Activation | None = None,
    ) -> tuple[GraphTensor, GraphTensor, GraphTensor]:
        """A DML_BATCH_NORMALIZATION_TRAINING node (as ``dmlrpc.ops.batch_normalization_training``): (output,
        mean, variance); ``scale`` and ``bias`` have the input's dimension count."""
        output, mean, variance = self._built(
            "Graph.batch_normalization_training",
            ops.batch_normalization_training,
            {"input": input, "scale": scale, "bias": bias, "fused_add": fused_add},
            3,
            epsilon=epsilon,
            fused_activation=fused_activation,
        )
        return output, mean, variance

    def local_response_normalization_grad(
        self,
        input: GraphTensor,
        input_gradient: GraphTensor,
        *,
        cross_channel: bool = True,
        local_size: int = 5,
        alpha: float = 1e-4,
        beta: float = 0.75,
        bias: float = 1.0,
    ) -> GraphTensor:
        """A DML_LOCAL_RESPONSE_NORMALIZATION_GRAD node (as ``dmlrpc.ops.local_response_normalization_grad``)."""
        return self._built(
            "Graph.local_response_normalization_grad",
            ops.local_response_normalization_grad,
            {"input": input, "input_gradient": input_gradient},
            2,
            cross_channel=cross_channel,
            local_size=local_size,
            alpha=alpha,
            beta=beta,
            bias=bias,
        )[0]

    def adam_optimizer(
        self,
        parameters: GraphTensor,
        first_moment: GraphTensor,
        second_moment: GraphTensor,
        gradient: GraphTensor,
        training_step: GraphTensor,
        *,
        learning_rate: float = 1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
    ) -> tuple[GraphTensor, GraphTensor, GraphTensor]:
        """A DML_ADAM_OPTIMIZER node (as ``dmlrpc.ops.adam_optimizer``): 4-D tensors, ``training_step``
        {1, 1, 1, 1} (uint32 or the parameters' dtype)."""
        where = "Graph.adam_optimizer"
        tensors = {
            "parameters": parameters, "first_moment": first_moment, "second_moment": second_moment,
            "gradient": gradient, "training_step": training_step,
        }  # fmt: skip
        _tensors(where, list(tensors.values()))
        step: Any = _placeholder(training_step)
        if training_step.dtype == np.uint32:
            step = 1  # a Python int travels as UINT32; the value is the graph's input
        call = ops.adam_optimizer(
            _placeholder(parameters),
            _placeholder(first_moment),
            _placeholder(second_moment),
            _placeholder(gradient),
            step,
            learning_rate=learning_rate,
            beta1=beta1,
            beta2=beta2,
            epsilon=epsilon,
        )
        updated, first, second = self._exact_node(where, call, dict(tensors))
        return updated, first, second

    def average_pooling_grad(
        self,
        input_gradient: GraphTensor,
        input_shape: Sequence[int],
        window_size: int | Sequence[int],
        *,
        strides: _Spatial = None,
        start_padding: _Spatial = None,
        end_padding: _Spatial = None,
        include_padding: bool = False,
    ) -> GraphTensor:
        """A DML_AVERAGE_POOLING_GRAD node (as ``dmlrpc.ops.average_pooling_grad``) over 4-D or 5-D tensors."""
        return self._built(
            "Graph.average_pooling_grad",
            ops.average_pooling_grad,
            {"input_gradient": input_gradient},
            1,
            input_shape=input_shape,
            window_size=window_size,
            strides=strides,
            start_padding=start_padding,
            end_padding=end_padding,
            include_padding=include_padding,
        )[0]

    def max_pooling_grad(
        self,
        input: GraphTensor,
        input_gradient: GraphTensor,
        window_size: int | Sequence[int],
        *,
        strides: _Spatial = None,
        start_padding: _Spatial = None,
        end_padding: _Spatial = None,
        dilations: _Spatial = None,
    ) -> GraphTensor:
        """A DML_MAX_POOLING_GRAD node (as ``dmlrpc.ops.max_pooling_grad``) over 4-D or 5-D tensors."""
        return self._built(
            "Graph.max_pooling_grad",
            ops.max_pooling_grad,
            {"input": input, "input_gradient": input_gradient},
            2,
            window_size=window_size,
            **_window(strides, start_padding, end_padding, dilations),
        )[0]

    def resample_grad(
        self,
        input_gradient: GraphTensor,
        input_shape: Sequence[int],
        *,
        mode: Literal["nearest", "linear"] = "nearest",
        scales: float | Sequence[float] | None = None,
        input_pixel_offsets: float | Sequence[float] | None = None,
        output_pixel_offsets: float | Sequence[float] | None = None,
        rounding_direction: Literal["increasing", "decreasing"] | None = None,
    ) -> GraphTensor:
        """A DML_RESAMPLE_GRAD(1) node (as ``dmlrpc.ops.resample_grad``)."""
        return self._built(
            "Graph.resample_grad",
            ops.resample_grad,
            {"input_gradient": input_gradient},
            1,
            input_shape=input_shape,
            mode=mode,
            scales=scales,
            input_pixel_offsets=input_pixel_offsets,
            output_pixel_offsets=output_pixel_offsets,
            rounding_direction=rounding_direction,
        )[0]

    def slice_grad(
        self,
        input_gradient: GraphTensor,
        input_shape: Sequence[int],
        offsets: Sequence[int],
        sizes: Sequence[int],
        strides: Sequence[int] | None = None,
    ) -> GraphTensor:
        """A DML_SLICE_GRAD node (as ``dmlrpc.ops.slice_grad``)."""
        return self._built(
            "Graph.slice_grad",
            ops.slice_grad,
            {"input_gradient": input_gradient},
            1,
            input_shape=input_shape,
            offsets=offsets,
            sizes=sizes,
            strides=strides,
        )[0]

    def fold(
        self,
        input: GraphTensor,
        output_size: Sequence[int],
        window_size: int | Sequence[int],
        *,
        strides: _Spatial = None,
        dilations: _Spatial = None,
        start_padding: _Spatial = None,
        end_padding: _Spatial = None,
    ) -> GraphTensor:
        """A DML_FOLD node (as ``dmlrpc.ops.fold``)."""
        return self._built(
            "Graph.fold",
            ops.fold,
            {"input": input},
            1,
            output_size=output_size,
            window_size=window_size,
            **_window(strides, start_padding, end_padding, dilations),
        )[0]

    def unfold(
        self,
        input: GraphTensor,
        window_size: int | Sequence[int],
        *,
        strides: _Spatial = None,
        dilations: _Spatial = None,
        start_padding: _Spatial = None,
        end_padding: _Spatial = None,
    ) -> GraphTensor:
        """A DML_UNFOLD node (as ``dmlrpc.ops.unfold``)."""
        return self._built(
            "Graph.unfold",
            ops.unfold,
            {"input": input},
            1,
            window_size=window_size,
            **_window(strides, start_padding, end_padding, dilations),
        )[0]
