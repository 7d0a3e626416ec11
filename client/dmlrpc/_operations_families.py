"""NumPy-style operator calls (as ``_operations``) of the recurrent, training, spatial-gradient, FOLD/UNFOLD,
ROI_ALIGN(_GRAD), RANDOM_GENERATOR and MULTIHEAD_ATTENTION operators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dmlrpc import ops
from dmlrpc._calls import Call
from dmlrpc._operations import _first, _present, _single, _triple, _with_optional, operation
from dmlrpc.ops.base import _window

__all__: list[str] = []


def rnn(
    input: npt.ArrayLike,
    weight: npt.ArrayLike,
    recurrence: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    hidden_init: npt.ArrayLike | None = None,
    sequence_lengths: npt.ArrayLike | None = None,
    direction: Literal["forward", "backward", "bidirectional"] = "forward",
    activations: Sequence[ops.Activation] | None = None,
    outputs: Sequence[Literal["sequence", "single"]] = ("sequence", "single"),
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, ...]]:
    """DML_RNN with ONNX's layouts: the ``outputs`` asked for, in order (see ``dmlrpc.ops.rnn``)."""
    built = ops.rnn(
        input,
        weight,
        recurrence,
        bias,
        hidden_init=hidden_init,
        sequence_lengths=sequence_lengths,
        direction=direction,
        activations=activations,
        outputs=outputs,
    )
    return operation(built, timeout, _present)


def lstm(
    input: npt.ArrayLike,
    weight: npt.ArrayLike,
    recurrence: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    hidden_init: npt.ArrayLike | None = None,
    cell_mem_init: npt.ArrayLike | None = None,
    sequence_lengths: npt.ArrayLike | None = None,
    peephole: npt.ArrayLike | None = None,
    direction: Literal["forward", "backward", "bidirectional"] = "forward",
    activations: Sequence[ops.Activation] | None = None,
    clip_threshold: float | None = None,
    couple_input_forget: bool = False,
    outputs: Sequence[Literal["sequence", "single", "cell_single"]] = ("sequence", "single", "cell_single"),
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, ...]]:
    """DML_LSTM with ONNX's layouts: the ``outputs`` asked for, in order (see ``dmlrpc.ops.lstm``)."""
    built = ops.lstm(
        input,
        weight,
        recurrence,
        bias,
        hidden_init=hidden_init,
        cell_mem_init=cell_mem_init,
        sequence_lengths=sequence_lengths,
        peephole=peephole,
        direction=direction,
        activations=activations,
        clip_threshold=clip_threshold,
        couple_input_forget=couple_input_forget,
        outputs=outputs,
    )
    return operation(built, timeout, _present)


def gru(
    input: npt.ArrayLike,
    weight: npt.ArrayLike,
    recurrence: npt.ArrayLike,
    bias: npt.ArrayLike | None = None,
    *,
    hidden_init: npt.ArrayLike | None = None,
    sequence_lengths: npt.ArrayLike | None = None,
    direction: Literal["forward", "backward", "bidirectional"] = "forward",
    activations: Sequence[ops.Activation] | None = None,
    linear_before_reset: bool = False,
    outputs: Sequence[Literal["sequence", "single"]] = ("sequence", "single"),
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, ...]]:
    """DML_GRU with ONNX's layouts: the ``outputs`` asked for, in order (see ``dmlrpc.ops.gru``)."""
    built = ops.gru(
        input,
        weight,
        recurrence,
        bias,
        hidden_init=hidden_init,
        sequence_lengths=sequence_lengths,
        direction=direction,
        activations=activations,
        linear_before_reset=linear_before_reset,
        outputs=outputs,
    )
    return operation(built, timeout, _present)


def batch_normalization_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    mean: npt.ArrayLike,
    variance: npt.ArrayLike,
    scale: npt.ArrayLike,
    *,
    epsilon: float = 1e-5,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_BATCH_NORMALIZATION_GRAD: (input gradient, scale gradient, bias gradient) (see
    ``dmlrpc.ops.batch_normalization_grad``)."""
    built = ops.batch_normalization_grad(input, input_gradient, mean, variance, scale, epsilon=epsilon)
    return operation(built, timeout, _triple)


def batch_normalization_training_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    mean: npt.ArrayLike,
    variance: npt.ArrayLike,
    scale: npt.ArrayLike,
    *,
    epsilon: float = 1e-5,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_BATCH_NORMALIZATION_TRAINING_GRAD: (input gradient, scale gradient, bias gradient) (see
    ``dmlrpc.ops.batch_normalization_training_grad``)."""
    built = ops.batch_normalization_training_grad(input, input_gradient, mean, variance, scale, epsilon=epsilon)
    return operation(built, timeout, _triple)


def batch_normalization_training(
    input: npt.ArrayLike,
    scale: npt.ArrayLike,
    bias: npt.ArrayLike,
    fused_add: npt.ArrayLike | None = None,
    *,
    epsilon: float = 1e-5,
    fused_activation: ops.Activation | None = None,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_BATCH_NORMALIZATION_TRAINING: (output, mean, variance) with the batch's statistics (see
    ``dmlrpc.ops.batch_normalization_training``)."""
    built = ops.batch_normalization_training(
        input, scale, bias, fused_add, epsilon=epsilon, fused_activation=fused_activation
    )
    return operation(built, timeout, _triple)


def local_response_normalization_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    *,
    cross_channel: bool = True,
    local_size: int = 5,
    alpha: float = 1e-4,
    beta: float = 0.75,
    bias: float = 1.0,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_LOCAL_RESPONSE_NORMALIZATION_GRAD over (N, C, H, W) (see
    ``dmlrpc.ops.local_response_normalization_grad``)."""
    built = ops.local_response_normalization_grad(
        input, input_gradient, cross_channel=cross_channel, local_size=local_size, alpha=alpha, beta=beta, bias=bias
    )
    return operation(built, timeout, _single)


def adam_optimizer(
    parameters: npt.ArrayLike,
    first_moment: npt.ArrayLike,
    second_moment: npt.ArrayLike,
    gradient: npt.ArrayLike,
    training_step: int | float | npt.ArrayLike,
    *,
    learning_rate: float = 1e-3,
    beta1: float = 0.9,
    beta2: float = 0.999,
    epsilon: float = 1e-8,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_ADAM_OPTIMIZER: one Adam step, (parameters, first moment, second moment) (see
    ``dmlrpc.ops.adam_optimizer``)."""
    built = ops.adam_optimizer(
        parameters,
        first_moment,
        second_moment,
        gradient,
        training_step,
        learning_rate=learning_rate,
        beta1=beta1,
        beta2=beta2,
        epsilon=epsilon,
    )
    return operation(built, timeout, _triple)


def average_pooling_grad(
    input_gradient: npt.ArrayLike,
    input_shape: Sequence[int],
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    include_padding: bool = False,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_AVERAGE_POOLING_GRAD: the gradient of ``average_pooling`` for an input of ``input_shape`` (see
    ``dmlrpc.ops.average_pooling_grad``)."""
    built = ops.average_pooling_grad(
        input_gradient,
        input_shape,
        window_size,
        strides=strides,
        start_padding=start_padding,
        end_padding=end_padding,
        include_padding=include_padding,
    )
    return operation(built, timeout, _single)


def max_pooling_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_MAX_POOLING_GRAD: each window's gradient to its maximum (see ``dmlrpc.ops.max_pooling_grad``)."""
    built = ops.max_pooling_grad(
        input,
        input_gradient,
        window_size,
        **_window(strides, start_padding, end_padding, dilations),
    )
    return operation(built, timeout, _single)


def resample_grad(
    input_gradient: npt.ArrayLike,
    input_shape: Sequence[int],
    *,
    mode: Literal["nearest", "linear"] = "nearest",
    scales: float | Sequence[float] | None = None,
    input_pixel_offsets: float | Sequence[float] | None = None,
    output_pixel_offsets: float | Sequence[float] | None = None,
    rounding_direction: Literal["increasing", "decreasing"] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_RESAMPLE_GRAD(1): the gradient of a resample from ``input_shape`` (see ``dmlrpc.ops.resample_grad``)."""
    built = ops.resample_grad(
        input_gradient,
        input_shape,
        mode=mode,
        scales=scales,
        input_pixel_offsets=input_pixel_offsets,
        output_pixel_offsets=output_pixel_offsets,
        rounding_direction=rounding_direction,
    )
    return operation(built, timeout, _single)


def slice_grad(
    input_gradient: npt.ArrayLike,
    input_shape: Sequence[int],
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int] | None = None,
    *,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_SLICE_GRAD: zeros of ``input_shape`` with the gradient where the slice read (see
    ``dmlrpc.ops.slice_grad``)."""
    return operation(ops.slice_grad(input_gradient, input_shape, offsets, sizes, strides), timeout, _single)


def fold(
    input: npt.ArrayLike,
    output_size: Sequence[int],
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_FOLD (col2im): columns summed back into an image (see ``dmlrpc.ops.fold``)."""
    built = ops.fold(
        input,
        output_size,
        window_size,
        **_window(strides, start_padding, end_padding, dilations),
    )
    return operation(built, timeout, _single)


def unfold(
    input: npt.ArrayLike,
    window_size: int | Sequence[int],
    *,
    strides: int | Sequence[int] | None = None,
    dilations: int | Sequence[int] | None = None,
    start_padding: int | Sequence[int] | None = None,
    end_padding: int | Sequence[int] | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_UNFOLD (im2col): every sliding window as a column (see ``dmlrpc.ops.unfold``)."""
    built = ops.unfold(
        input, window_size, strides=strides, dilations=dilations, start_padding=start_padding, end_padding=end_padding
    )
    return operation(built, timeout, _single)


def roi_align(
    input: npt.ArrayLike,
    rois: npt.ArrayLike,
    batch_indices: npt.ArrayLike,
    output_size: Sequence[int],
    *,
    reduction: Literal["average", "max"] = "average",
    mode: Literal["nearest", "linear"] = "linear",
    spatial_scale: float | tuple[float, float] = 1.0,
    input_pixel_offset: float = 0.5,
    output_pixel_offset: float = -0.5,
    out_of_bounds_value: float = 0.0,
    minimum_samples: int = 1,
    maximum_samples: int = 2**32 - 1,
    align_regions_to_corners: bool = False,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_ROI_ALIGN(1): each region of interest resized to ``output_size`` (see ``dmlrpc.ops.roi_align``)."""
    built = ops.roi_align(
        input,
        rois,
        batch_indices,
        output_size,
        reduction=reduction,
        mode=mode,
        spatial_scale=spatial_scale,
        input_pixel_offset=input_pixel_offset,
        output_pixel_offset=output_pixel_offset,
        out_of_bounds_value=out_of_bounds_value,
        minimum_samples=minimum_samples,
        maximum_samples=maximum_samples,
        align_regions_to_corners=align_regions_to_corners,
    )
    return operation(built, timeout, _single)


def random_generator(
    input_state: npt.ArrayLike,
    shape: int | Sequence[int],
    *,
    next_state: bool = True,
    timeout: float | None = None,
) -> Call[tuple[np.ndarray, np.ndarray | None]]:
    """DML_RANDOM_GENERATOR: (uint32 values of ``shape``, the next state or ``None``) (see
    ``dmlrpc.ops.random_generator``)."""
    return operation(ops.random_generator(input_state, shape, next_state=next_state), timeout, _with_optional)


def _attention(outputs: list[Any]) -> np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The output alone, or with the present key and value where the call asked for them."""
    if outputs[1] is None:
        return _first(outputs)
    output, key, value = outputs
    assert isinstance(output, np.ndarray) and isinstance(key, np.ndarray) and isinstance(value, np.ndarray)
    return output, key, value


def multihead_attention(
    query: npt.ArrayLike | None = None,
    key: npt.ArrayLike | None = None,
    value: npt.ArrayLike | None = None,
    *,
    head_count: int,
    key_value_head_count: int | None = None,
    stacked_query_key: npt.ArrayLike | None = None,
    stacked_key_value: npt.ArrayLike | None = None,
    stacked_query_key_value: npt.ArrayLike | None = None,
    bias: npt.ArrayLike | None = None,
    mask: npt.ArrayLike | None = None,
    mask_type: ops.MaskType | None = None,
    relative_position_bias: npt.ArrayLike | None = None,
    past_key: npt.ArrayLike | None = None,
    past_value: npt.ArrayLike | None = None,
    scale: float | None = None,
    mask_filter_value: float = -10000.0,
    present: bool = False,
    version: int | None = None,
    timeout: float | None = None,
) -> Call[np.ndarray | tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DML_MULTIHEAD_ATTENTION(1): scaled dot-product attention over ``head_count`` heads, the output (batch,
    sequence, head_count * value head size), or (output, present key, present value) with ``present`` (see
    ``dmlrpc.ops.multihead_attention``)."""
    built = ops.multihead_attention(
        query,
        key,
        value,
        head_count=head_count,
        key_value_head_count=key_value_head_count,
        stacked_query_key=stacked_query_key,
        stacked_key_value=stacked_key_value,
        stacked_query_key_value=stacked_query_key_value,
        bias=bias,
        mask=mask,
        mask_type=mask_type,
        relative_position_bias=relative_position_bias,
        past_key=past_key,
        past_value=past_value,
        scale=scale,
        mask_filter_value=mask_filter_value,
        present=present,
        version=version,
    )
    return operation(built, timeout, _attention)


def roi_align_grad(
    input_gradient: npt.ArrayLike,
    rois: npt.ArrayLike,
    batch_indices: npt.ArrayLike,
    input_shape: Sequence[int] | None = None,
    *,
    input: npt.ArrayLike | None = None,
    reduction: Literal["average", "max"] = "average",
    mode: Literal["nearest", "linear"] = "linear",
    spatial_scale: float | tuple[float, float] = 1.0,
    input_pixel_offset: float = 0.5,
    output_pixel_offset: float = -0.5,
    minimum_samples: int = 1,
    maximum_samples: int = 2**32 - 1,
    align_regions_to_corners: bool = False,
    timeout: float | None = None,
) -> Call[np.ndarray]:
    """DML_ROI_ALIGN_GRAD: the gradient of ``roi_align`` with respect to its input (see
    ``dmlrpc.ops.roi_align_grad``)."""
    built = ops.roi_align_grad(
        input_gradient,
        rois,
        batch_indices,
        input_shape,
        input=input,
        reduction=reduction,
        mode=mode,
        spatial_scale=spatial_scale,
        input_pixel_offset=input_pixel_offset,
        output_pixel_offset=output_pixel_offset,
        minimum_samples=minimum_samples,
        maximum_samples=maximum_samples,
        align_regions_to_corners=align_regions_to_corners,
    )
    return operation(built, timeout, _first)
