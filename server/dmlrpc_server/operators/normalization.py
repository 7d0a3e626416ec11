"""Normalisations: DML_BATCH, MEAN_VARIANCE(1/2), LP and LOCAL_RESPONSE_NORMALIZATION."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._elementwise import Context
from dmlrpc_server.operators._graph import F16, F32, Graph, Value
from dmlrpc_server.operators.activation import apply_fused, check_fused
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

FL = operators_pb2.FeatureLevel
I64 = np.int64


def check_epsilon(value: float, field: str) -> None:
    """Epsilon: a finite value >= 0."""
    # The pages are silent on Epsilon's range. It guards a division: a negative one can turn sqrt(variance +
    # epsilon) into NaN and NaN or infinity poison every output, so only finite values >= 0 are taken.
    require(math.isfinite(value) and value >= 0, field, f"{value} must be a finite value >= 0")


def check_broadcast(tensors: Tensors, names: Sequence[str]) -> None:
    """Each set tensor of ``names`` has input_tensor's dimension count and, per dimension, size 1 (broadcast) or
    input_tensor's size."""
    full = list(tensors["input_tensor"].sizes)
    for name in names:
        layout = tensors.layouts[name]
        if layout is None:
            continue
        sizes = list(layout.sizes)
        path = f"{tensors.field(name)}.buffer.sizes"
        require(
            len(sizes) == len(full),
            path,
            f"has {len(sizes)} dimensions; it must have input_tensor's dimension count {len(full)}",
        )
        for dim, (size, whole) in enumerate(zip(sizes, full, strict=True)):
            require(
                size in (1, whole),
                path,
                f"size {size} of dimension {dim} must be 1 (broadcast) or input_tensor's size {whole}",
            )


def _check_axes(desc: Any, tensors: Tensors) -> list[int]:
    """Axes/AxisCount: the count equals the array's length, at least one axis, each below the rank, no repeats."""
    rank = len(tensors["input_tensor"].sizes)
    axes = [int(a) for a in desc.axes]
    require(desc.axis_count == len(axes), tensors.field("axis_count"), f"{desc.axis_count} != len(axes) = {len(axes)}")
    # The page states no rule; DirectML's validator refuses an empty Axes array (a null pointer), and an
    # empty reduction would normalise every element against itself.
    require(len(axes) >= 1, tensors.field("axes"), "at least one axis is required")
    for index, axis in enumerate(axes):
        require(
            axis < rank, f"{tensors.field('axes')}[{index}]", f"axis {axis} is not less than the dimension count {rank}"
        )
    require(len(set(axes)) == len(axes), tensors.field("axes"), f"axes {axes} repeat a dimension")
    return sorted(axes)


def check_local_response(desc: Any, tensors: Tensors) -> None:
    """LocalSize, Alpha, Beta and Bias of LOCAL_RESPONSE_NORMALIZATION and its gradient."""
    require(desc.local_size >= 1, tensors.field("local_size"), f"local_size = {desc.local_size}; it must be >= 1")
    # The pages set no range on Alpha, Beta and Bias; NaN or infinity would make every output NaN or 0.
    for name in ("alpha", "beta", "bias"):
        value = getattr(desc, name)
        require(math.isfinite(value), tensors.field(name), f"{value} must be finite")


def lrn_window(local_size: int, transposed: bool = False) -> tuple[int, int]:
    """The positions a window reaches before and after its centre: [i - floor((LocalSize - 1) / 2),
    i + ceil((LocalSize - 1) / 2)]. Transposed: the centres whose windows reach i (the sides swapped)."""
    before = (local_size - 1) // 2
    after = local_size - 1 - before
    return (after, before) if transposed else (before, after)


def lrn_sums(graph: Graph, values: Value, desc: Any, sizes: Sequence[int], transposed: bool = False) -> Value:
    """Sums of ``values`` (N, C, H, W) over each position's LRN window (``lrn_window``), positions outside the
    tensor adding 0: LocalSize channels with CrossChannel, else LocalSize x LocalSize of H and W."""
    n, c, h, w = (int(s) for s in sizes)
    before, after = lrn_window(int(desc.local_size), transposed)

    def window_sum(planes: Value, extent: int, axis: int) -> Value:
        """Sums of ``planes`` (N, 1, A, B) over the window along A (axis 2) or B (axis 3): a Conv with a ones
        kernel; one axis at a time, so the kernel stays as small as the tensor's extents."""
        # Beyond extent - 1 positions a window side adds only padding: clipping it keeps the sums exact and the
        # kernel small whatever LocalSize is.
        low, high = min(before, extent - 1), min(after, extent - 1)
        length = low + high + 1
        kernel = [1, 1, length, 1] if axis == 2 else [1, 1, 1, length]
        pads = [low, 0, high, 0] if axis == 2 else [0, low, 0, high]
        ones = graph.const(np.ones(kernel), values.dtype)
        return graph.op("Conv", planes, ones, kernel_shape=kernel[2:], pads=pads)

    if desc.cross_channel:
        planes = graph.op("Reshape", values, graph.const([n, 1, c, h * w], I64))
        sums = window_sum(planes, c, 2)
    else:
        planes = graph.op("Reshape", values, graph.const([n * c, 1, h, w], I64))
        sums = window_sum(window_sum(planes, h, 2), w, 3)
    return graph.op("Reshape", sums, graph.const([n, c, h, w], I64))


def lrn_base(graph: Graph, x: Value, desc: Any, tensors: Tensors) -> Value:
    """Bias + Alpha / LocalSize * (the sum of Input^2 over each position's window): what LRN raises to Beta."""
    total = lrn_sums(graph, graph.op("Mul", x, x), desc, tensors["input_tensor"].sizes)
    scaled = graph.op("Mul", total, graph.const(float(desc.alpha) / int(desc.local_size), x.dtype))
    return graph.op("Add", scaled, graph.const(desc.bias, x.dtype))


class _Normalization(Operator[Any]):
    """The shared flow: output sizes and data type equal the input's, parameter tensors broadcast to the input's
    sizes per dimension (each size 1 or equal), FLOAT16 computes in FLOAT32, an optional fused activation last."""

    #: DirectML's operator type name (the page key).
    #: Input tensors (besides input_tensor) that broadcast to the input per dimension.
    parameters: ClassVar[tuple[str, ...]] = ()
    #: Whether ScaleTensor and BiasTensor are optional and must come together below feature level 5.2.
    paired_scale_bias: ClassVar[bool] = False
    #: Whether the desc has a FusedActivation.
    fused: ClassVar[bool] = True

    def check(self, desc: Any, tensors: Tensors) -> None:
        """The operator's own attribute rules."""

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> Value:
        """The operator's math on FLOAT32 (or FLOAT64) values keyed by field name; absent optional ones missing."""
        raise NotImplementedError

    def lower(self, desc: Any, tensors: Tensors) -> Plan:
        source = tensors["input_tensor"]
        output = tensors["output_tensor"]
        require(
            list(output.sizes) == list(source.sizes),
            f"{tensors.field('output_tensor')}.buffer.sizes",
            f"sizes {list(output.sizes)} must equal input_tensor's sizes {list(source.sizes)}",
        )
        for field in (*self.inputs, *self.outputs):
            layout = tensors.layouts[field.name]
            require(
                layout is None or layout.data_type == source.data_type,
                f"{tensors.field(field.name)}.buffer.data_type",
                "must equal input_tensor's data type",
            )
        check_broadcast(tensors, self.parameters)
        if self.paired_scale_bias and tensors.feature_level < FL.FEATURE_LEVEL_5_2:
            has_scale = tensors.layouts["scale_tensor"] is not None
            has_bias = tensors.layouts["bias_tensor"] is not None
            missing = "bias_tensor" if has_scale else "scale_tensor"
            require(
                has_scale == has_bias,
                tensors.field(missing),
                "scale_tensor and bias_tensor must both be set or both unset below feature level 5.2",
            )
        self.check(desc, tensors)
        context = Context(desc, tensors, output.dtype, tensors.feature_level, tensors.path)
        if self.fused:
            check_fused(desc, context)

        graph = Graph()
        values, feeds = graph.field_inputs(self.inputs, tensors)
        # FLOAT16 computes in FLOAT32, as DirectML's shaders do.
        values = {name: graph.cast(value, F32) if value.dtype == F16 else value for name, value in values.items()}
        result = self.compute(graph, desc, values, tensors)
        if self.fused:
            result = apply_fused(graph, result, context)
        graph.output(graph.cast(result, output.dtype), "output", output.sizes)

        inputs = tuple(tensors.layouts[field.name] for field in self.inputs)
        return Plan(inputs, (output,), graph.model(), direct_inputs=feeds, direct_outputs=True)


def _scale_bias(graph: Graph, value: Value, values: dict[str, Value]) -> Value:
    """``Scale * value + Bias``; an absent Scale acts as 1 and an absent Bias as 0."""
    if "scale_tensor" in values:
        value = graph.op("Mul", values["scale_tensor"], value)
    if "bias_tensor" in values:
        value = graph.op("Add", value, values["bias_tensor"])
    return value


def _mean_variance(
    graph: Graph, x: Value, axes: Sequence[int], use_mean: bool, use_variance: bool, epsilon: float
) -> Value:
    """(x - mean) / sqrt(variance + epsilon) over ``axes`` with the population variance (divided by the element
    count, not count - 1) of x about the mean used (0 without UseMean)."""
    centred = x
    if use_mean:
        centred = graph.op("Sub", x, graph.op("ReduceMean", x, axes=list(axes), keepdims=1))
    if not use_variance:
        return centred
    variance = graph.op("ReduceMean", graph.op("Mul", centred, centred), axes=list(axes), keepdims=1)
    deviation = graph.op("Sqrt", graph.op("Add", variance, graph.const(epsilon, variance.dtype)))
    return graph.op("Div", centred, deviation)


class BatchNormalization(_Normalization):
    case: ClassVar[str] = "batch_normalization"
    parameters = ("mean_tensor", "variance_tensor", "scale_tensor", "bias_tensor")

    def check(self, desc: Any, tensors: Tensors) -> None:
        check_epsilon(desc.epsilon, tensors.field("epsilon"))
        if desc.spatial or tensors.feature_level >= FL.FEATURE_LEVEL_4_0:
            return  # Spatial is deprecated from 4.0 and has no effect there.
        # Spatial = FALSE (per-activation statistics) forbids broadcasting Mean and Variance over the spatial
        # dimensions (those after N and C).
        full = list(tensors["input_tensor"].sizes)
        for name in ("mean_tensor", "variance_tensor"):
            sizes = list(tensors[name].sizes)
            require(
                sizes[2:] == full[2:],
                f"{tensors.field(name)}.buffer.sizes",
                f"with spatial FALSE the spatial sizes {sizes[2:]} must equal input_tensor's {full[2:]}",
            )

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> Value:
        x = values["input_tensor"]
        variance = graph.op("Add", values["variance_tensor"], graph.const(desc.epsilon, x.dtype))
        normalized = graph.op("Div", graph.op("Sub", x, values["mean_tensor"]), graph.op("Sqrt", variance))
        return _scale_bias(graph, normalized, values)


class MeanVarianceNormalization(_Normalization):
    case: ClassVar[str] = "mean_variance_normalization"
    parameters = ("scale_tensor", "bias_tensor")
    paired_scale_bias = True

    def check(self, desc: Any, tensors: Tensors) -> None:
        check_epsilon(desc.epsilon, tensors.field("epsilon"))

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> Value:
        axes = (1, 2, 3) if desc.cross_channel else (2, 3)
        normalized = _mean_variance(graph, values["input_tensor"], axes, True, desc.normalize_variance, desc.epsilon)
        return _scale_bias(graph, normalized, values)


class MeanVarianceNormalization1(_Normalization):
    case: ClassVar[str] = "mean_variance_normalization1"
    parameters = ("scale_tensor", "bias_tensor")
    paired_scale_bias = True

    def check(self, desc: Any, tensors: Tensors) -> None:
        _check_axes(desc, tensors)
        check_epsilon(desc.epsilon, tensors.field("epsilon"))
        full = list(tensors["input_tensor"].sizes)
        if tensors.feature_level >= FL.FEATURE_LEVEL_4_0 or len(full) < 2:
            return
        # Below 4.0 Scale and Bias are {N', C, H', W'}: only the channel dimension cannot broadcast.
        for name in ("scale_tensor", "bias_tensor"):
            layout = tensors.layouts[name]
            if layout is not None:
                require(
                    layout.sizes[1] == full[1],
                    f"{tensors.field(name)}.buffer.sizes",
                    f"the channel size {layout.sizes[1]} must equal input_tensor's {full[1]} below feature level 4.0",
                )

    def flags(self, desc: Any) -> tuple[bool, bool]:
        """UseMean and UseVariance."""
        return True, bool(desc.normalize_variance)

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> Value:
        use_mean, use_variance = self.flags(desc)
        axes = sorted(int(a) for a in desc.axes)
        normalized = _mean_variance(graph, values["input_tensor"], axes, use_mean, use_variance, desc.epsilon)
        return _scale_bias(graph, normalized, values)


class MeanVarianceNormalization2(MeanVarianceNormalization1):
    # UseMean and UseVariance are 'TBD' on the page. As DirectML uses them (LayerNormalization and, with UseMean
    # FALSE, SimplifiedLayerNormalization/RMS normalisation): without UseMean the mean is taken as 0 and the
    # variance is the mean of squares about 0; without UseVariance the divisor is 1 (Epsilon unused).
    case: ClassVar[str] = "mean_variance_normalization2"

    def flags(self, desc: Any) -> tuple[bool, bool]:
        return bool(desc.use_mean), bool(desc.use_variance)


class LpNormalization(_Normalization):
    case: ClassVar[str] = "lp_normalization"
    fused = False

    def check(self, desc: Any, tensors: Tensors) -> None:
        rank = len(tensors["input_tensor"].sizes)
        require(
            desc.axis < rank, tensors.field("axis"), f"axis {desc.axis} is not less than the dimension count {rank}"
        )
        check_epsilon(desc.epsilon, tensors.field("epsilon"))
        require(desc.p in (1, 2), tensors.field("p"), f"p = {desc.p}; it must be 1 or 2")

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> Value:
        # The page does not say how Epsilon enters; the divisor is max(norm, Epsilon), so a slice whose norm is at
        # least Epsilon gets exactly x / norm (ONNX LpNormalization's result) and a zero slice gives 0, not NaN.
        x = values["input_tensor"]
        norm = graph.op("ReduceL1" if desc.p == 1 else "ReduceL2", x, axes=[int(desc.axis)], keepdims=1)
        divisor = graph.op("Max", norm, graph.const(desc.epsilon, x.dtype))
        return graph.op("Div", x, divisor)


class LocalResponseNormalization(_Normalization):
    # CrossChannel TRUE sums over a window of LocalSize channels only (what ONNX LRN does, and how ONNX Runtime's
    # DirectML provider lowers ONNX LRN to this operator); FALSE sums over a LocalSize x LocalSize window of H and W
    # within each channel. Windows span [i - floor((LocalSize - 1) / 2), i + ceil((LocalSize - 1) / 2)] (ONNX's
    # alignment); positions outside the tensor add 0, and Alpha is divided by LocalSize in both modes, as the
    # page's formula says (not by the window's element count).
    case: ClassVar[str] = "local_response_normalization"
    fused = False

    def check(self, desc: Any, tensors: Tensors) -> None:
        check_local_response(desc, tensors)

    def compute(self, graph: Graph, desc: Any, values: dict[str, Value], tensors: Tensors) -> Value:
        x = values["input_tensor"]
        return graph.op("Div", x, graph.op("Pow", lrn_base(graph, x, desc, tensors), graph.const(desc.beta, x.dtype)))


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (
    BatchNormalization(),
    MeanVarianceNormalization(),
    MeanVarianceNormalization1(),
    MeanVarianceNormalization2(),
    LpNormalization(),
    LocalResponseNormalization(),
)
