"""Training operators: BATCH_NORMALIZATION_GRAD, BATCH_NORMALIZATION_TRAINING(_GRAD), LRN_GRAD and ADAM_OPTIMIZER."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from dmlrpc_server.operators._batching import BatchRule
from dmlrpc_server.operators._elementwise import Context
from dmlrpc_server.operators._graph import F16, F32, F64, Graph, Value
from dmlrpc_server.operators._support import same_type
from dmlrpc_server.operators.activation import apply_fused, check_fused
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require
from dmlrpc_server.operators.normalization import (
    check_broadcast,
    check_epsilon,
    check_local_response,
    lrn_base,
    lrn_sums,
)

I64 = np.int64


def _same_sizes(tensors: Tensors, names: Sequence[str], reference: str) -> None:
    """Every set tensor of ``names`` has ``reference``'s sizes (so also its dimension count)."""
    sizes = list(tensors[reference].sizes)
    for name in names:
        layout = tensors.layouts[name]
        require(
            layout is None or list(layout.sizes) == sizes,
            f"{tensors.field(name)}.buffer.sizes",
            f"sizes {None if layout is None else list(layout.sizes)} must equal {reference}'s sizes {sizes}",
        )


def _reduced_axes(tensors: Tensors, statistics: str) -> list[int]:
    """The dimensions the statistics are taken over: those where the statistics tensor has size 1."""
    return [dim for dim, size in enumerate(tensors[statistics].sizes) if size == 1]


def _reduce(graph: Graph, op_type: str, value: Value, axes: Sequence[int]) -> Value:
    """ReduceMean or ReduceSum over ``axes``, dimensions kept. No axes: the value itself (an ONNX reduction with no
    axes would reduce every dimension; DirectML's statistics tensor then has the input's sizes, one element each)."""
    if not axes:
        return value
    if op_type == "ReduceSum":  # axes became an input in opset 13
        return graph.op(op_type, value, graph.const(list(axes), I64), keepdims=1)
    return graph.op(op_type, value, axes=list(axes), keepdims=1)


class _Training(Operator[Any]):
    """The shared flow: the operator's own rules, FLOAT16 computed in FLOAT32 (as DirectML's shaders do), one
    ONNX output per output tensor in binding order, each cast back to its tensor's data type."""

    #: DirectML's operator type name (the page key).

    def check(self, desc: Any, tensors: Tensors) -> None:
        """The operator's own rules."""
        raise NotImplementedError

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> dict[str, Value]:
        """The operator's math on FLOAT32 values keyed by input field (absent optional ones missing): each output
        field's value."""
        raise NotImplementedError

    def lower(self, desc: Any, tensors: Tensors) -> Plan:
        self.check(desc, tensors)
        graph = Graph()
        values, feeds = graph.field_inputs(self.inputs, tensors)
        values = {name: graph.cast(value, F32) if value.dtype == F16 else value for name, value in values.items()}
        results = self.compute(graph, desc, values, tensors)
        outputs = tuple(tensors[field.name] for field in self.outputs)
        for index, (field, layout) in enumerate(zip(self.outputs, outputs, strict=True)):
            graph.output(graph.cast(results[field.name], layout.dtype), f"output{index}", layout.sizes)

        inputs = tuple(tensors.layouts[field.name] for field in self.inputs)
        return Plan(inputs, outputs, graph.model(), direct_inputs=feeds, direct_outputs=True)


class _BatchNormalizationGradient(_Training):
    """BATCH_NORMALIZATION_GRAD and BATCH_NORMALIZATION_TRAINING_GRAD: the same tensors and rules; the scale and
    bias gradients are sums over the dimensions where Mean/Variance/Scale have size 1."""

    def check(self, desc: Any, tensors: Tensors) -> None:
        names = [field.name for field in (*self.inputs, *self.outputs)]
        same_type(tensors, names)
        _same_sizes(tensors, ("input_gradient_tensor", "output_gradient_tensor"), "input_tensor")
        # Mean carries the dimension-count and broadcast rules; the other statistics tensors must equal it.
        check_broadcast(tensors, ("mean_tensor",))
        _same_sizes(
            tensors,
            ("variance_tensor", "scale_tensor", "output_scale_gradient_tensor", "output_bias_gradient_tensor"),
            "mean_tensor",
        )
        check_epsilon(desc.epsilon, tensors.field("epsilon"))

    def gradient(
        self, graph: Graph, values: dict[str, Value], variance: Value, axes: Sequence[int], deviation: Value
    ) -> Value:
        """OutputGradient; ``variance`` is Variance + Epsilon and ``deviation`` its square root."""
        raise NotImplementedError

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> dict[str, Value]:
        x, dy = values["input_tensor"], values["input_gradient_tensor"]
        axes = _reduced_axes(tensors, "mean_tensor")
        variance = graph.op("Add", values["variance_tensor"], graph.const(desc.epsilon, F32))
        deviation = graph.op("Sqrt", variance)
        normalized = graph.op("Div", graph.op("Sub", x, values["mean_tensor"]), deviation)
        return {
            "output_gradient_tensor": self.gradient(graph, values, variance, axes, deviation),
            "output_scale_gradient_tensor": _reduce(graph, "ReduceSum", graph.op("Mul", dy, normalized), axes),
            "output_bias_gradient_tensor": _reduce(graph, "ReduceSum", dy, axes),
        }


class BatchNormalizationGrad(_BatchNormalizationGradient):
    # The gradient of inference batch normalization: Mean and Variance are given constants, so OutputGradient is
    # only InputGradient * Scale / sqrt(Variance + Epsilon), with no terms through the statistics.
    case: ClassVar[str] = "batch_normalization_grad"

    def gradient(
        self, graph: Graph, values: dict[str, Value], variance: Value, axes: Sequence[int], deviation: Value
    ) -> Value:
        scaled = graph.op("Div", values["scale_tensor"], deviation)
        return graph.op("Mul", values["input_gradient_tensor"], scaled)


class BatchNormalizationTrainingGrad(_BatchNormalizationGradient):
    # As the page writes it: OutputGradient centres Input on its own mean over the reduced dimensions (mean(Input),
    # computed here) and takes the variance from VarianceTensor, while OutputScaleGradient centres on MeanTensor.
    # The page's 'InputCentered = InputCentered - mean(InputCentered)' is read as Input - mean(Input).
    case: ClassVar[str] = "batch_normalization_training_grad"

    def gradient(
        self, graph: Graph, values: dict[str, Value], variance: Value, axes: Sequence[int], deviation: Value
    ) -> Value:
        x, dy = values["input_tensor"], values["input_gradient_tensor"]
        centred = graph.op("Sub", x, _reduce(graph, "ReduceMean", x, axes))
        coef1 = graph.op("Mul", dy, centred)
        gradient_centred = graph.op("Sub", dy, _reduce(graph, "ReduceMean", dy, axes))
        correction = graph.op("Div", graph.op("Mul", centred, _reduce(graph, "ReduceMean", coef1, axes)), variance)
        inner = graph.op("Sub", gradient_centred, correction)
        return graph.op("Mul", graph.op("Div", values["scale_tensor"], deviation), inner)


class BatchNormalizationTraining(_Training):
    # Mean and Variance are taken over the dimensions where Scale and Bias have size 1; the page does not say which
    # variance: the population variance (divided by the element count, not count - 1) normalizes the input, as in
    # every batch-normalization training pass, and is what OutputVarianceTensor receives.
    case: ClassVar[str] = "batch_normalization_training"

    def check(self, desc: Any, tensors: Tensors) -> None:
        names = [field.name for field in (*self.inputs, *self.outputs)]
        same_type(tensors, names)
        _same_sizes(tensors, ("fused_add_tensor", "output_tensor"), "input_tensor")
        check_broadcast(tensors, ("scale_tensor",))
        _same_sizes(tensors, ("bias_tensor", "output_mean_tensor", "output_variance_tensor"), "scale_tensor")
        check_epsilon(desc.epsilon, tensors.field("epsilon"))
        check_fused(desc, self._context(desc, tensors))

    def _context(self, desc: Any, tensors: Tensors) -> Context:
        return Context(desc, tensors, tensors["output_tensor"].dtype, tensors.feature_level, tensors.path)

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> dict[str, Value]:
        x = values["input_tensor"]
        axes = _reduced_axes(tensors, "scale_tensor")
        mean = _reduce(graph, "ReduceMean", x, axes)
        centred = graph.op("Sub", x, mean)
        variance = _reduce(graph, "ReduceMean", graph.op("Mul", centred, centred), axes)
        deviation = graph.op("Sqrt", graph.op("Add", variance, graph.const(desc.epsilon, F32)))
        normalized = graph.op("Div", centred, deviation)
        result = graph.op("Add", graph.op("Mul", values["scale_tensor"], normalized), values["bias_tensor"])
        if "fused_add_tensor" in values:
            result = graph.op("Add", result, values["fused_add_tensor"])
        result = apply_fused(graph, result, self._context(desc, tensors))
        return {"output_tensor": result, "output_mean_tensor": mean, "output_variance_tensor": variance}


class LocalResponseNormalizationGrad(_Training):
    # The page gives no formula: this is the exact gradient of LOCAL_RESPONSE_NORMALIZATION as this server runs it
    # (the same windows, clipped to the tensor). With D = Bias + Alpha / LocalSize * S, S the windowed sum of
    # squares and Y = X * D^-Beta:
    #   dX[m] = dY[m] * D[m]^-Beta - 2 * Alpha * Beta / LocalSize * X[m] * sum(dY[i] * X[i] * D[i]^(-Beta - 1))
    # over the centres i whose window holds m: the window with its two sides swapped (they differ for an even
    # LocalSize), so the second sum is the forward's Conv with its pads exchanged.
    case: ClassVar[str] = "local_response_normalization_grad"

    def check(self, desc: Any, tensors: Tensors) -> None:
        names = ("input_gradient_tensor", "output_gradient_tensor")
        same_type(tensors, names)
        _same_sizes(tensors, names, "input_tensor")
        check_local_response(desc, tensors)

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> dict[str, Value]:
        x, dy = values["input_tensor"], values["input_gradient_tensor"]
        base = lrn_base(graph, x, desc, tensors)
        direct = graph.op("Mul", dy, graph.op("Pow", base, graph.const(-desc.beta, F32)))
        through = graph.op("Mul", graph.op("Mul", dy, x), graph.op("Pow", base, graph.const(-desc.beta - 1.0, F32)))
        spread = lrn_sums(graph, through, desc, tensors["input_tensor"].sizes, transposed=True)
        factor = graph.const(2.0 * desc.alpha * desc.beta / int(desc.local_size), F32)
        return {"output_gradient_tensor": graph.op("Sub", direct, graph.op("Mul", graph.op("Mul", x, spread), factor))}


class AdamOptimizer(_Training):
    # The page's formula as written. The page gives TrainingStep two types (its field description: UINT32; its
    # table and constraints: the parameters' FLOAT32/FLOAT16): both are taken. T is used as given: at T = 0 the
    # bias correction sqrt(1 - Beta2^0) / (1 - Beta1^0) is 0 / 0 and every parameter becomes NaN, as the formula
    # says. The correction is computed in FLOAT64 (T exactly, Beta^T without float32 rounding) and applied in
    # FLOAT32. Element-wise with a scalar step: requests stack on a leading axis.
    case: ClassVar[str] = "adam_optimizer"
    batching: ClassVar[BatchRule | None] = BatchRule()

    def check(self, desc: Any, tensors: Tensors) -> None:
        names = [field.name for field in (*self.inputs, *self.outputs) if field.name != "training_step_tensor"]
        same_type(tensors, names, "input_parameters_tensor")
        _same_sizes(tensors, names, "input_parameters_tensor")
        step_type = tensors["training_step_tensor"].dtype
        require(
            step_type.kind == "u" or step_type == tensors["input_parameters_tensor"].dtype,
            f"{tensors.field('training_step_tensor')}.buffer.data_type",
            "must be UINT32 or input_parameters_tensor's data type",
        )
        step = list(tensors["training_step_tensor"].sizes)
        require(
            all(size == 1 for size in step),
            f"{tensors.field('training_step_tensor')}.buffer.sizes",
            f"sizes {step} must all be 1 (a scalar)",
        )
        require(
            math.isfinite(desc.learning_rate),
            tensors.field("learning_rate"),
            f"{desc.learning_rate} must be finite",
        )
        # The page: 'should be between 0.0 and 1.0'; outside it the moments are no longer averages and NaN or
        # infinity poison every output.
        for name in ("beta1", "beta2"):
            value = getattr(desc, name)
            require(0.0 <= value <= 1.0, tensors.field(name), f"{value} must be between 0.0 and 1.0")
        check_epsilon(desc.epsilon, tensors.field("epsilon"))

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> dict[str, Value]:
        x = values["input_parameters_tensor"]
        m = values["input_first_moment_tensor"]
        v = values["input_second_moment_tensor"]
        g = values["gradient_tensor"]
        beta1, beta2 = float(desc.beta1), float(desc.beta2)
        step = graph.cast(values["training_step_tensor"], F64)
        one = graph.const(1.0, F64)
        power1 = graph.op("Pow", graph.const(beta1, F64), step)
        power2 = graph.op("Pow", graph.const(beta2, F64), step)
        correction = graph.op("Div", graph.op("Sqrt", graph.op("Sub", one, power2)), graph.op("Sub", one, power1))
        alpha = graph.cast(correction, F32)
        first = graph.op(
            "Add", graph.op("Mul", m, graph.const(beta1, F32)), graph.op("Mul", g, graph.const(1.0 - beta1, F32))
        )
        square = graph.op("Mul", g, g)
        second = graph.op(
            "Add", graph.op("Mul", v, graph.const(beta2, F32)), graph.op("Mul", square, graph.const(1.0 - beta2, F32))
        )
        step_size = graph.op("Mul", alpha, graph.const(desc.learning_rate, F32))
        denominator = graph.op("Add", graph.op("Sqrt", second), graph.const(desc.epsilon, F32))
        update = graph.op("Div", graph.op("Mul", step_size, first), denominator)
        return {
            "output_parameters_tensor": graph.op("Sub", x, update),
            "output_first_moment_tensor": first,
            "output_second_moment_tensor": second,
        }


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (
    AdamOptimizer(),
    LocalResponseNormalizationGrad(),
    BatchNormalizationGrad(),
    BatchNormalizationTraining(),
    BatchNormalizationTrainingGrad(),
)
