"""DML_BATCH_NORMALIZATION_GRAD, BATCH_NORMALIZATION_TRAINING(_GRAD), LOCAL_RESPONSE_NORMALIZATION_GRAD and
ADAM_OPTIMIZER as NumPy-style builders."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import TRIPLE, GraphFace, operator
from dmlrpc.ops.activation import activation
from dmlrpc.ops.base import Call, _count, _flag, _float_operand, _scalar, _wrap
from dmlrpc.ops.normalization import _epsilon, _parameter
from dmlrpc.ops.random_generator import unsigned_words
from dmlrpc.v1 import operators_pb2

__all__ = [
    "Activation",
    "adam_optimizer",
    "batch_normalization_grad",
    "batch_normalization_training",
    "batch_normalization_training_grad",
    "local_response_normalization_grad",
]

#: What an activation argument may be: a name (``"relu"``), or a desc such as
#: ``dmlrpc.ops.activation("leaky_relu", alpha=0.1).operator_desc``.
Activation = str | operators_pb2.OperatorDesc


def activation_desc(value: object, argument: str, where: str) -> operators_pb2.OperatorDesc:
    """An ACTIVATION_* desc with its tensors unset, as DirectML's fused activations and recurrent networks take."""
    if isinstance(value, operators_pb2.OperatorDesc):
        case = value.WhichOneof("desc")
        if case is None or not case.startswith("activation_"):
            raise ArgumentValueError(argument, f"{where}: {argument} is an OperatorDesc of {case}, not an activation")
        return value
    if not isinstance(value, str):
        raise ArgumentTypeError(
            argument,
            f"{where}: {argument} must be an activation's name or its OperatorDesc; got {type(value).__name__}",
        )
    try:
        return activation(value).operator_desc
    except ArgumentValueError as error:
        raise ArgumentValueError(
            argument, f"{where}: {argument}: no activation named {value!r}", allowed=error.allowed
        ) from None


def _same(data: np.ndarray, like: np.ndarray, argument: str, reference: str, where: str) -> None:
    if data.shape != like.shape:
        raise ArgumentValueError(
            argument, f"{where}: {argument} has shape {data.shape} and {reference} {like.shape}: they must be equal"
        )


def _gradient_call(
    case: str,
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    mean: npt.ArrayLike,
    variance: npt.ArrayLike,
    scale: npt.ArrayLike,
    epsilon: float,
) -> Call:
    where = case
    x = _float_operand(input, "input", case, where)
    if not 1 <= x.ndim <= 8:
        raise ArgumentValueError("input", f"{where}: input has shape {x.shape}; it takes 1 to 8 dimensions")
    dy = _float_operand(input_gradient, "input_gradient", case, where, x)
    _same(dy, x, "input_gradient", "input", where)
    statistics = [_parameter(value, name, case, where, x) for name, value in (("mean", mean), ("variance", variance))]
    statistics.append(_parameter(scale, "scale", case, where, x))
    for name, data in zip(("variance", "scale"), statistics[1:], strict=True):
        _same(data, statistics[0], name, "mean", where)
    stats = statistics[0].shape
    message: Any = {
        "batch_normalization_grad": operators_pb2.BatchNormalizationGradOperatorDesc,
        "batch_normalization_training_grad": operators_pb2.BatchNormalizationTrainingGradOperatorDesc,
    }[case](
        input_tensor=tensor_desc(x),
        input_gradient_tensor=tensor_desc(dy),
        mean_tensor=tensor_desc(statistics[0]),
        variance_tensor=tensor_desc(statistics[1]),
        scale_tensor=tensor_desc(statistics[2]),
        output_gradient_tensor=tensor_desc(x),
        output_scale_gradient_tensor=tensor_desc((x.dtype, stats)),
        output_bias_gradient_tensor=tensor_desc((x.dtype, stats)),
        epsilon=_epsilon(epsilon, where),
    )
    return Call(_wrap(case, message), (x, dy, *statistics))


@operator(sends=("batch_normalization_grad",), result=TRIPLE)
def batch_normalization_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    mean: npt.ArrayLike,
    variance: npt.ArrayLike,
    scale: npt.ArrayLike,
    *,
    epsilon: float = 1e-5,
) -> Call:
    """DML_BATCH_NORMALIZATION_GRAD_OPERATOR_DESC: the gradients of inference batch normalization (statistics
    given, as ``batch_normalization``): (input gradient, scale gradient, bias gradient).

    ``input_gradient * scale / sqrt(variance + epsilon)``; the scale gradient sums ``input_gradient * (input -
    mean) / sqrt(variance + epsilon)`` and the bias gradient ``input_gradient`` over the dimensions where ``mean``
    has size 1; both have ``mean``'s shape (padded to the input's rank).

    DirectML's rules: every tensor one data type, FLOAT32 or FLOAT16, and the input's dimension count (1 to 8);
    InputGradient has the input's sizes; Mean, Variance and Scale one shape, each dimension 1 or the input's. Here
    they broadcast by NumPy's rule (per channel of (N, C, H, W): shape (C, 1, 1)) and travel padded with 1s.

    Raises:
        ArgumentValueError, ArgumentTypeError: shapes that differ or do not broadcast, dtypes other than
            float32/float16 or unlike, a negative or non-finite epsilon.
    """
    return _gradient_call("batch_normalization_grad", input, input_gradient, mean, variance, scale, epsilon)


@operator(sends=("batch_normalization_training_grad",), result=TRIPLE)
def batch_normalization_training_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    mean: npt.ArrayLike,
    variance: npt.ArrayLike,
    scale: npt.ArrayLike,
    *,
    epsilon: float = 1e-5,
) -> Call:
    """DML_BATCH_NORMALIZATION_TRAINING_GRAD_OPERATOR_DESC: the gradients of training batch normalization (the
    statistics taken from the input over the dimensions where ``mean`` has size 1): (input gradient, scale gradient,
    bias gradient), the input gradient with the terms through the batch's own mean and variance.

    Rules, shapes and errors as ``batch_normalization_grad``'s.
    """
    return _gradient_call("batch_normalization_training_grad", input, input_gradient, mean, variance, scale, epsilon)


@operator(sends=("batch_normalization_training",), result=TRIPLE)
def batch_normalization_training(
    input: npt.ArrayLike,
    scale: npt.ArrayLike,
    bias: npt.ArrayLike,
    fused_add: npt.ArrayLike | None = None,
    *,
    epsilon: float = 1e-5,
    fused_activation: Activation | None = None,
) -> Call:
    """DML_BATCH_NORMALIZATION_TRAINING_OPERATOR_DESC: batch normalization with the batch's own statistics:
    (output, mean, variance), mean and population variance taken over the dimensions where ``scale`` has size 1.

    ``output = activation(scale * (input - mean) / sqrt(variance + epsilon) + bias + fused_add)``, where
    ``fused_activation`` names an activation (``"relu"``) or is its desc
    (``dmlrpc.ops.activation("leaky_relu", alpha=0.1).operator_desc``).

    DirectML's rules: every tensor one data type, FLOAT32 or FLOAT16, and the input's dimension count (1 to 8);
    Scale, Bias, OutputMean and OutputVariance one shape, each dimension 1 or the input's; FusedAdd the input's
    sizes. ``scale`` and ``bias`` broadcast by NumPy's rule (per channel of (N, C, H, W): shape (C, 1, 1)).

    Raises:
        ArgumentValueError, ArgumentTypeError: shapes that differ or do not broadcast, dtypes other than
            float32/float16 or unlike, a bad epsilon, an unknown activation.
    """
    where = case = "batch_normalization_training"
    x = _float_operand(input, "input", case, where)
    if not 1 <= x.ndim <= 8:
        raise ArgumentValueError("input", f"{where}: input has shape {x.shape}; it takes 1 to 8 dimensions")
    scale_data = _parameter(scale, "scale", case, where, x)
    bias_data = _parameter(bias, "bias", case, where, x)
    _same(bias_data, scale_data, "bias", "scale", where)
    statistics = tensor_desc(scale_data)  # scale, and the mean and variance outputs: one desc (bias has its shape)
    desc = operators_pb2.BatchNormalizationTrainingOperatorDesc(
        input_tensor=tensor_desc(x),
        scale_tensor=statistics,
        bias_tensor=tensor_desc(bias_data),
        output_tensor=tensor_desc(x),
        output_mean_tensor=statistics,
        output_variance_tensor=statistics,
        epsilon=_epsilon(epsilon, where),
    )
    added = None
    if fused_add is not None:
        added = _float_operand(fused_add, "fused_add", case, where, x)
        _same(added, x, "fused_add", "input", where)
        desc.fused_add_tensor.CopyFrom(tensor_desc(added))
    if fused_activation is not None:
        desc.fused_activation.CopyFrom(activation_desc(fused_activation, "fused_activation", where))
    return Call(_wrap(case, desc), (x, scale_data, bias_data, added))


@operator(sends=("local_response_normalization_grad",))
def local_response_normalization_grad(
    input: npt.ArrayLike,
    input_gradient: npt.ArrayLike,
    *,
    cross_channel: bool = True,
    local_size: int = 5,
    alpha: float = 1e-4,
    beta: float = 0.75,
    bias: float = 1.0,
) -> Call:
    """DML_LOCAL_RESPONSE_NORMALIZATION_GRAD_OPERATOR_DESC: the gradient of LRN, ``x / (bias + alpha / local_size
    * sum(x**2 over the window))**beta``, with respect to an (N, C, H, W) ``input``.

    The window is ``local_size`` channels (``cross_channel``) or ``local_size`` x ``local_size`` of H and W,
    from ``i - (local_size - 1) // 2``, clipped to the tensor. Defaults are ONNX LRN's.

    DirectML's rules: Input, InputGradient and OutputGradient 4-D, one shape and data type, FLOAT32 or FLOAT16;
    LocalSize at least 1; Alpha, Beta and Bias finite.

    Raises:
        ArgumentValueError, ArgumentTypeError: an input that is not 4-D, shapes or dtypes that differ, a dtype
            other than float32/float16, a local size below 1, non-finite numbers.
    """
    where = case = "local_response_normalization_grad"
    x = _float_operand(input, "input", case, where)
    if x.ndim != 4:
        raise ArgumentValueError("input", f"{where}: input has shape {x.shape}; it takes (N, C, H, W)")
    dy = _float_operand(input_gradient, "input_gradient", case, where, x)
    _same(dy, x, "input_gradient", "input", where)
    numbers = {name: _scalar(value, name, where) for name, value in (("alpha", alpha), ("beta", beta), ("bias", bias))}
    for name, number in numbers.items():
        if not np.isfinite(number):
            raise ArgumentValueError(name, f"{where}: {name} = {number} must be finite")
    desc = operators_pb2.LocalResponseNormalizationGradOperatorDesc(
        input_tensor=tensor_desc(x),
        input_gradient_tensor=tensor_desc(dy),
        output_gradient_tensor=tensor_desc(x),
        cross_channel=_flag(cross_channel, "cross_channel", where),
        local_size=_count(local_size, "local_size", where, 1),
        **numbers,
    )
    return Call(_wrap(case, desc), (x, dy))


def _step_input(graph: Any, where: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A uint32 training step enters the builder as a Python int (which travels as UINT32); its value is the
    graph's."""
    return {"training_step": 1} if arguments["training_step"].dtype == np.uint32 else {}


@operator(sends=("adam_optimizer",), result=TRIPLE, graph=GraphFace(prepare=_step_input))
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
) -> Call:
    """DML_ADAM_OPTIMIZER_OPERATOR_DESC: one Adam step: (parameters, first moment, second moment) updated.

    ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g**2``, then ``x -= learning_rate *
    sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + epsilon)`` with ``t`` = ``training_step`` (a Python int
    travels as UINT32, a float in the parameters' dtype). Defaults are Adam's paper's.

    DirectML's rules: the four tensors one shape (4-D: 1 to 4 dimensions travel with leading 1s and come back as
    given) and data type, FLOAT32 or FLOAT16; TrainingStep a scalar, UINT32 or the parameters' type; Beta1 and
    Beta2 in [0, 1]; LearningRate finite; Epsilon finite and >= 0.

    Raises:
        ArgumentValueError, ArgumentTypeError: shapes or dtypes that differ, more than 4 dimensions, a step that is
            not a scalar, betas outside [0, 1], non-finite numbers.
    """
    where = case = "adam_optimizer"
    x = _float_operand(parameters, "parameters", case, where)
    if not 1 <= x.ndim <= 4:
        raise ArgumentValueError("parameters", f"{where}: parameters has shape {x.shape}; it takes 1 to 4 dimensions")
    others = []
    for name, value in (("first_moment", first_moment), ("second_moment", second_moment), ("gradient", gradient)):
        data = _float_operand(value, name, case, where, x)
        _same(data, x, name, "parameters", where)
        others.append(data)
    if isinstance(training_step, int | np.integer) and not isinstance(training_step, bool):
        step = unsigned_words(training_step, "training_step", where, 1)
    else:
        step = _float_operand(training_step, "training_step", case, where, x)
        if step.size != 1:
            raise ArgumentValueError(
                "training_step", f"{where}: training_step has shape {step.shape}; it is one value (a scalar)"
            )
    numbers = {}
    for name, value in (("learning_rate", learning_rate), ("beta1", beta1), ("beta2", beta2)):
        numbers[name] = _scalar(value, name, where)
        if not np.isfinite(numbers[name]) or (name != "learning_rate" and not 0 <= numbers[name] <= 1):
            bound = "finite" if name == "learning_rate" else "between 0 and 1"
            raise ArgumentValueError(name, f"{where}: {name} = {numbers[name]} must be {bound}")
    wire = (1,) * (4 - x.ndim) + x.shape
    arrays = [x.reshape(wire), *(data.reshape(wire) for data in others), step.reshape(1, 1, 1, 1)]
    desc = operators_pb2.AdamOptimizerOperatorDesc(
        input_parameters_tensor=tensor_desc(arrays[0]),
        input_first_moment_tensor=tensor_desc(arrays[1]),
        input_second_moment_tensor=tensor_desc(arrays[2]),
        gradient_tensor=tensor_desc(arrays[3]),
        training_step_tensor=tensor_desc(arrays[4]),
        output_parameters_tensor=tensor_desc(arrays[0]),
        output_first_moment_tensor=tensor_desc(arrays[0]),
        output_second_moment_tensor=tensor_desc(arrays[0]),
        epsilon=_epsilon(epsilon, where),
        **numbers,
    )
    return Call(_wrap(case, desc), tuple(arrays), (x.shape,) * 3)
