"""The mean-variance, batch, Lp and local response normalizations as NumPy-style builders."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.ops._registry import GraphFace, operator
from dmlrpc.ops.base import Call, _axis, _count, _flag, _float_operand, _reduce_axes, _scalar, _version, _wrap
from dmlrpc.v1 import operators_pb2

__all__ = ["batch_normalization", "local_response_normalization", "lp_normalization", "mean_variance_normalization"]


def _parameter(value: npt.ArrayLike, argument: str, case: str, where: str, data: np.ndarray) -> np.ndarray:
    """A normalization's parameter tensor in ``data``'s dtype, padded with leading 1s to its rank; each dimension 1
    (DirectML broadcasts it) or ``data``'s size: NumPy's broadcasting that leaves ``data``'s shape as it is."""
    array = _float_operand(value, argument, case, where, like=data)
    if array.ndim > data.ndim or any(
        size not in (1, full) for size, full in zip(array.shape[::-1], data.shape[::-1], strict=False)
    ):
        raise ArgumentValueError(
            argument,
            f"{where}: {argument} has shape {array.shape}, which does not broadcast to input's {data.shape} "
            f"(NumPy's rule, trailing dimensions aligned; each size 1 or input's)",
        )
    return array.reshape((1,) * (data.ndim - array.ndim) + array.shape)


@operator(sends=("mean_variance_normalization", "mean_variance_normalization1", "mean_variance_normalization2"))
def mean_variance_normalization(
    input: npt.ArrayLike,
    axes: int | Sequence[int] | None,
    *,
    scale: npt.ArrayLike | None = None,
    bias: npt.ArrayLike | None = None,
    normalize_variance: bool = True,
    epsilon: float = 1e-5,
    version: int | None = None,
) -> Call:
    """DML_MEAN_VARIANCE_NORMALIZATION2_OPERATOR_DESC: ``scale * (x - mean) / sqrt(var + epsilon) + bias``, the mean
    and (population) variance taken over ``axes``, as ``(x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes,
    keepdims=True) + epsilon)`` (ONNX MeanVarianceNormalization / LayerNormalization).

    DirectML's rules: the output has the input's dtype and shape; float32/float16 only (FLOAT16 computes in
    FLOAT32); 1 to 8 dimensions (a 0-d input travels as one element). ``scale`` and ``bias`` are optional (an
    absent scale acts as 1, bias as 0) and have the input's dtype; they broadcast to the input by NumPy's rule and
    travel padded with leading 1s to its rank, each dimension 1 or the input's size. Without
    ``normalize_variance`` (UseVariance FALSE) the result is only centred and ``epsilon`` is unused. Feature
    level 6.3 (UseMean is always TRUE here).

    Args:
        input: the array to normalise.
        axes: an axis or axes to take the statistics over, negative counting from the end, unique; ``None``: all.
        scale, bias: optional arrays broadcasting to ``input``.
        normalize_variance: divide by the standard deviation.
        epsilon: added to the variance, a finite number >= 0.
        version: the desc to send: 0 MEAN_VARIANCE_NORMALIZATION (a 4-D input, axes (2, 3), or (1, 2, 3) as its
            CrossChannel), 1 MEAN_VARIANCE_NORMALIZATION1 (feature level 2.1), 2 or ``None`` the newest, above.

    Raises:
        ArgumentValueError, ArgumentTypeError: a dtype other than float32/float16 (or differing from input's),
            axes out of range or repeated, a scale or bias that does not broadcast to input, a bad epsilon, a
            version other than 0 to 2 or axes it cannot express.
    """
    where = "mean_variance_normalization"
    chosen = _version(version, where, (0, 1, 2))
    case = f"{where}{chosen or ''}"
    data = _float_operand(input, "input", case, where)
    shape = data.shape
    data = data.reshape(1) if data.ndim == 0 else data
    reduced = _reduce_axes(axes, data.ndim, where)
    scale_data = None if scale is None else _parameter(scale, "scale", case, where, data)
    bias_data = None if bias is None else _parameter(bias, "bias", case, where, data)
    use_variance = _flag(normalize_variance, "normalize_variance", where)
    common: dict[str, Any] = {
        "input_tensor": tensor_desc(data),
        "output_tensor": tensor_desc(data),
        "epsilon": _epsilon(epsilon, where),
    }
    desc: (
        operators_pb2.MeanVarianceNormalizationOperatorDesc
        | operators_pb2.MeanVarianceNormalization1OperatorDesc
        | operators_pb2.MeanVarianceNormalization2OperatorDesc
    )
    if chosen == 0:
        if data.ndim != 4 or reduced not in ([2, 3], [1, 2, 3]):
            raise ArgumentValueError(
                "axes",
                f"{where}: input of shape {shape} with axes {reduced}: version 0 normalises a 4-D input over (2, 3) "
                "or (1, 2, 3) (CrossChannel)",
            )
        desc = operators_pb2.MeanVarianceNormalizationOperatorDesc(
            **common, cross_channel=reduced == [1, 2, 3], normalize_variance=use_variance
        )
    elif chosen == 1:
        desc = operators_pb2.MeanVarianceNormalization1OperatorDesc(
            **common, axis_count=len(reduced), axes=reduced, normalize_variance=use_variance
        )
    else:
        desc = operators_pb2.MeanVarianceNormalization2OperatorDesc(
            **common, axis_count=len(reduced), axes=reduced, use_mean=True, use_variance=use_variance
        )
    if scale_data is not None:
        desc.scale_tensor.CopyFrom(tensor_desc(scale_data))
    if bias_data is not None:
        desc.bias_tensor.CopyFrom(tensor_desc(bias_data))
    return Call(_wrap(case, desc), (data, scale_data, bias_data), (shape,))


def _epsilon(value: object, where: str) -> float:
    epsilon = _scalar(value, "epsilon", where)
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise ArgumentValueError("epsilon", f"{where}: epsilon = {epsilon} must be a finite number >= 0")
    return epsilon


def _unit_statistics(graph: Any, where: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """DirectML requires both ``scale`` and ``bias``: in a graph an absent one is a constant of 1s or 0s of the
    input's dimension count (an edge does not pad)."""
    input = arguments["input"]
    ones = (1,) * len(input.shape)
    if arguments["scale"] is None:
        arguments["scale"] = graph.constant(np.ones(ones, input.dtype))
    if arguments["bias"] is None:
        arguments["bias"] = graph.constant(np.zeros(ones, input.dtype))
    return {}


@operator(sends=("batch_normalization",), graph=GraphFace(prepare=_unit_statistics))
def batch_normalization(
    input: npt.ArrayLike,
    mean: npt.ArrayLike,
    variance: npt.ArrayLike,
    scale: npt.ArrayLike | None = None,
    bias: npt.ArrayLike | None = None,
    *,
    epsilon: float = 1e-5,
) -> Call:
    """DML_BATCH_NORMALIZATION_OPERATOR_DESC (inference): ``scale * (input - mean) / sqrt(variance + epsilon) +
    bias`` with the statistics given.

    DirectML's rules: every tensor has the input's dtype (float32/float16 only) and dimension count (1 to 8 from
    feature level 3.1, 4 before); each dimension of mean, variance, scale and bias is 1 (broadcast) or the input's.
    The arrays broadcast by NumPy's rule (trailing dimensions aligned) and travel padded with leading 1s: for
    per-channel statistics of an (N, C, H, W) input pass shape (C, 1, 1). DirectML requires Scale and Bias: an
    absent ``scale`` is sent as a {1, ..} tensor of 1s and ``bias`` of 0s. Spatial is sent TRUE (deprecated from
    feature level 4.0).

    Raises:
        ArgumentValueError, ArgumentTypeError: a dtype other than float32/float16 (or differing from input's), a
            parameter that does not broadcast to input, a bad epsilon.
    """
    where = case = "batch_normalization"
    data = _float_operand(input, "input", case, where)
    shape = data.shape
    data = data.reshape(1) if data.ndim == 0 else data
    ones = (1,) * data.ndim
    parameters = [
        _parameter(value, argument, case, where, data)
        if value is not None
        else np.full(ones, 1 if argument == "scale" else 0, data.dtype)
        for argument, value in (("mean", mean), ("variance", variance), ("scale", scale), ("bias", bias))
    ]
    mean_data, variance_data, scale_data, bias_data = parameters
    desc = operators_pb2.BatchNormalizationOperatorDesc(
        input_tensor=tensor_desc(data),
        mean_tensor=tensor_desc(mean_data),
        variance_tensor=tensor_desc(variance_data),
        scale_tensor=tensor_desc(scale_data),
        bias_tensor=tensor_desc(bias_data),
        output_tensor=tensor_desc(data),
        spatial=True,
        epsilon=_epsilon(epsilon, where),
    )
    return Call(_wrap(case, desc), (data, *parameters), (shape,))


@operator(sends=("lp_normalization",))
def lp_normalization(input: npt.ArrayLike, axis: int = -1, *, p: int = 2, epsilon: float = 1e-5) -> Call:
    """DML_LP_NORMALIZATION_OPERATOR_DESC: ``input`` divided by its L1 or L2 norm along ``axis``, as
    ``x / np.maximum(np.linalg.norm(x, ord=p, axis=axis, keepdims=True), epsilon)`` (ONNX LpNormalization).

    DirectML's rules: the output has the input's dtype and shape; float32/float16 only; 1 to 8 dimensions from
    feature level 3.1 (4 before; a 0-d input travels as one element); one axis; P is 1 or 2. The page leaves how
    Epsilon enters open: this server divides by max(norm, epsilon), so a slice of norm 0 gives 0, not NaN.

    Raises:
        ArgumentValueError, ArgumentTypeError: a dtype other than float32/float16, an axis out of range, a p
            other than 1 or 2, a bad epsilon.
    """
    where = case = "lp_normalization"
    data = _float_operand(input, "input", case, where)
    shape = data.shape
    data = data.reshape(1) if data.ndim == 0 else data
    if isinstance(p, bool) or not isinstance(p, int | np.integer):
        raise ArgumentTypeError("p", f"{where}: p must be an int; got {type(p).__name__}", allowed=("1", "2"))
    if p not in (1, 2):
        raise ArgumentValueError("p", f"{where}: p = {p}; DirectML takes the L1 or L2 norm", allowed=("1", "2"))
    desc = operators_pb2.LpNormalizationOperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc(data),
        axis=_axis(axis, data.ndim, where),
        epsilon=_epsilon(epsilon, where),
        p=int(p),
    )
    return Call(_wrap(case, desc), (data,), (shape,))


@operator(sends=("local_response_normalization",))
def local_response_normalization(
    input: npt.ArrayLike,
    local_size: int,
    *,
    alpha: float = 1e-4,
    beta: float = 0.75,
    bias: float = 1.0,
    cross_channel: bool = True,
) -> Call:
    """DML_LOCAL_RESPONSE_NORMALIZATION_OPERATOR_DESC: ``x / (bias + alpha / local_size * sum(x ** 2)) ** beta``,
    the sum over a window of ``local_size`` neighbouring channels (``cross_channel``, ONNX LRN) or, without it,
    over a ``local_size`` x ``local_size`` window of height and width within each channel; windows span ``i -
    (local_size - 1) // 2`` to ``i + ceil((local_size - 1) / 2)`` and positions outside the tensor add 0.

    DirectML's rules: an (N, C, H, W) input (4 dimensions at every feature level), the output has its shape and
    dtype, float32/float16 only; ``local_size`` at least 1; alpha, beta and bias finite (the page recommends the
    defaults).

    Raises:
        ArgumentValueError, ArgumentTypeError: a dimension count other than 4, a dtype other than float32/float16,
            a local size below 1, a non-finite alpha, beta or bias.
    """
    where = case = "local_response_normalization"
    data = _float_operand(input, "input", case, where)
    if data.ndim != 4:
        raise ArgumentValueError(
            "input", f"{where}: input has shape {data.shape}; DirectML takes (N, C, H, W)", allowed=("4",)
        )
    values: dict[str, float] = {}
    for argument, value in (("alpha", alpha), ("beta", beta), ("bias", bias)):
        number = _scalar(value, argument, where)
        if not np.isfinite(number):
            raise ArgumentValueError(argument, f"{where}: {argument} = {number} must be finite")
        values[argument] = number
    desc = operators_pb2.LocalResponseNormalizationOperatorDesc(
        input_tensor=tensor_desc(data),
        output_tensor=tensor_desc(data),
        cross_channel=_flag(cross_channel, "cross_channel", where),
        local_size=_count(local_size, "local_size", where, 1),
        **values,
    )
    return Call(_wrap(case, desc), (data,))
