"""DML_ROI_ALIGN_OPERATOR_DESC, DML_ROI_ALIGN1_OPERATOR_DESC (Mask R-CNN's ROI align) and DML_ROI_ALIGN_GRAD."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np
import onnx

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument, OperatorUnavailable, ResourceExhausted
from dmlrpc_server.operators._graph import BOOL, F32, I64, Graph, Value
from dmlrpc_server.operators._support import same_type, support_from
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require
from dmlrpc_server.operators.pages import page

RoiDesc = TypeVar("RoiDesc", operators_pb2.RoiAlignOperatorDesc, operators_pb2.RoiAlign1OperatorDesc)
AnyRoiDesc = (
    operators_pb2.RoiAlignOperatorDesc | operators_pb2.RoiAlign1OperatorDesc | operators_pb2.RoiAlignGradOperatorDesc
)

_AVERAGE = operators_pb2.REDUCE_FUNCTION_AVERAGE
_MAX = operators_pb2.REDUCE_FUNCTION_MAX
_NEAREST = operators_pb2.INTERPOLATION_MODE_NEAREST_NEIGHBOR
_LINEAR = operators_pb2.INTERPOLATION_MODE_LINEAR


@dataclass(frozen=True)
class _Attributes:
    scale_x: float
    scale_y: float
    input_offset: float
    output_offset: float
    out_of_bounds: float
    minimum: int
    maximum: int
    align_corners: bool
    nearest: bool
    average: bool


@dataclass(frozen=True)
class _Axis:
    """One spatial axis of one region's sampling, per output position along it.

    ``weights[o]`` sums the interpolation weights over the input positions of output position o's in-bounds
    samples (``slots[o, k]`` holds sample k's alone, for MAX); ``inside[o]`` counts those samples, ``count`` is the
    number of samples per output position (in bounds or not).
    """

    weights: np.ndarray
    slots: np.ndarray
    used: np.ndarray
    inside: np.ndarray
    count: int


def _axis(start: float, size: float, out: int, extent: int, slots: int, attrs: _Attributes, with_slots: bool) -> _Axis:
    """The sampling of one axis of one region (``start``, ``size``: its scaled corner and signed size)."""
    ratio = math.ceil(size / out) if size > 0 else 0
    count = min(max(ratio, attrs.minimum), attrs.maximum)
    samples = out * count
    # Corner alignment spreads the samples over the region's ends (a lone sample sits on its start).
    divisor = samples - 1 if attrs.align_corners else samples
    step = size / divisor if divisor > 0 else 0.0
    weights = np.zeros((out, extent), np.float64)
    slot_weights = np.zeros((out, slots if with_slots else 0, extent), np.float64)
    used = np.zeros((out, slots if with_slots else 0), np.bool_)
    inside = np.zeros(out, np.int64)
    for o in range(out):
        base = (o * count - attrs.output_offset) * step + start - attrs.input_offset
        if step == 0:
            candidates = np.arange(min(count, 1))
        else:
            # The samples i in [0, count) whose coordinate base + i*step lies in [-1, extent]: a range of i found
            # arithmetically (a region can ask for billions of samples), widened by one and checked one by one.
            low, high = sorted(((-1 - base) / step, (extent - base) / step))
            first = max(0, math.floor(low) - 1)
            last = min(count - 1, math.ceil(high) + 1)
            candidates = np.arange(first, last + 1) if last >= first else np.arange(0)
        coords = (o * count + candidates - attrs.output_offset) * step + start - attrs.input_offset
        keep = (coords >= -1) & (coords <= extent)
        coords = coords[keep]
        # A zero step puts every sample on one coordinate: one evaluated sample stands for all of them.
        inside[o] = count if step == 0 and coords.size else coords.size
        clamped = np.clip(coords, 0, extent - 1)
        if attrs.nearest:
            low_index = np.minimum(np.floor(clamped + 0.5).astype(np.int64), extent - 1)
            rows = [(low_index, np.ones_like(clamped))]
        else:
            low_index = np.floor(clamped).astype(np.int64)
            high_index = np.minimum(low_index + 1, extent - 1)
            fraction = clamped - low_index
            rows = [(low_index, 1 - fraction), (high_index, fraction)]
        for index, weight in rows:
            np.add.at(weights[o], index, weight * (count if step == 0 else 1))
            if with_slots:
                np.add.at(slot_weights[o], (np.arange(index.size), index), weight)
        if with_slots:
            used[o, : coords.size] = True
    return _Axis(weights, slot_weights, used, inside, count)


@dataclass(frozen=True)
class Regions:
    """The checked region geometry of one desc: NumROIs, the input and output planes, the sample slots."""

    count: int
    batches: int
    height: int
    width: int
    out_h: int
    out_w: int
    #: Per axis, the most in-bounds samples one output position can take (MAX evaluates each slot).
    slots_y: int
    slots_x: int
    with_slots: bool

    @property
    def rows_y(self) -> int:
        return self.out_h * self.slots_y if self.with_slots else self.out_h

    @property
    def rows_x(self) -> int:
        return self.out_w * self.slots_x if self.with_slots else self.out_w


@dataclass(frozen=True)
class Tables:
    """The per-request weights of every region (see ``_RoiAlign``): batch ids, Wy, Wx, the MAX slot mask and the
    out-of-bounds share (AVERAGE, float) or flag (MAX, bool) per output element."""

    batch: np.ndarray
    wy: np.ndarray
    wx: np.ndarray
    mask: np.ndarray
    outside: np.ndarray


def check_regions(tensors: Tensors, output_name: str, source: tuple[int, int, int, int], attrs: _Attributes) -> Regions:
    """Check ROITensor, BatchIndicesTensor and the {NumROIs, ChannelCount, OutputHeight, OutputWidth} tensor
    ``output_name`` against the input sizes ``source``; also the limits on the weight tables."""
    rois, batch_indices, output = tensors["roi_tensor"], tensors["batch_indices_tensor"], tensors[output_name]
    count = rois.sizes[-2] if len(rois.sizes) >= 2 else 0
    require(
        rois.sizes[-1] == 4 and all(size == 1 for size in rois.sizes[:-2]),
        f"{tensors.field('roi_tensor')}.buffer.sizes",
        f"sizes {list(rois.sizes)} must be {{NumROIs, 4}}, {{1, NumROIs, 4}} or {{1, 1, NumROIs, 4}}",
    )
    require(
        batch_indices.sizes[-1] == count and all(size == 1 for size in batch_indices.sizes[:-1]),
        f"{tensors.field('batch_indices_tensor')}.buffer.sizes",
        f"sizes {list(batch_indices.sizes)} must be {{NumROIs}} with leading 1s (NumROIs = {count})",
    )
    batches, channels, height, width = source
    out_h, out_w = output.sizes[2], output.sizes[3]
    expected = [count, channels, out_h, out_w]
    require(
        list(output.sizes[:2]) == expected[:2],
        f"{tensors.field(output_name)}.buffer.sizes",
        f"sizes {list(output.sizes)} must be {{NumROIs, ChannelCount, OutputHeight, OutputWidth}} = "
        f"[{count}, {channels}, OutputHeight, OutputWidth]",
    )
    # The most in-bounds samples one output position can take along an axis: the clamped count, or (when
    # the count follows the region's size) samples spaced over half an element apart in [-1, size].
    slots_y = min(attrs.maximum, max(attrs.minimum, 2 * height + 4))
    slots_x = min(attrs.maximum, max(attrs.minimum, 2 * width + 4))
    with_slots = not attrs.average
    evaluated = count * channels * out_h * out_w * ((slots_y * slots_x) if with_slots else 1)
    table = count * (out_h * (slots_y if with_slots else 1) * height + out_w * (slots_x if with_slots else 1) * width)
    limits = tensors.limits
    if limits is not None and (
        4 * max(evaluated, table) > limits.max_tensor_bytes or evaluated * max(height, width) > limits.max_work
    ):
        raise ResourceExhausted(
            f"{tensors.path}: ROI align evaluates {evaluated:,} samples from weight tables of {table:,} entries, "
            f"over the limit of {limits.max_tensor_bytes:,} bytes per tensor (--max-tensor-bytes) or the work "
            f"limit of {limits.max_work:,} (--max-work); split the call or raise the limit"
        )
    return Regions(count, batches, height, width, out_h, out_w, slots_y, slots_x, with_slots)


def region_tables(
    regions: Regions, attrs: _Attributes, roi_values: np.ndarray, index_values: np.ndarray, bindings: tuple[int, int]
) -> Tables:
    """Every region's weights from the bound ROIs and batch indices (``bindings``: their input positions, for the
    field paths of data errors)."""
    count, rows_y, rows_x = regions.count, regions.rows_y, regions.rows_x
    slots_y, slots_x, with_slots = regions.slots_y, regions.slots_x, regions.with_slots
    corners = np.asarray(roi_values, np.float64).reshape(count, 4)
    ids = np.asarray(index_values).reshape(count).astype(np.int64)
    for r in range(count):
        if ids[r] >= regions.batches:
            raise InvalidArgument(
                f"inputs[{bindings[1]}].buffer.data",
                f"ROI {r}: batch index {ids[r]} is not in [0, {regions.batches})",
            )
        if not np.isfinite(corners[r]).all():
            raise InvalidArgument(
                f"inputs[{bindings[0]}].buffer.data", f"ROI {r}: corners {corners[r].tolist()} must be finite"
            )
    wy_all = np.zeros((count, rows_y, regions.height), np.float32)
    wx_all = np.zeros((count, rows_x, regions.width), np.float32)
    out_h, out_w = regions.out_h, regions.out_w
    mask_all = np.zeros((count, 1, out_h, slots_y if with_slots else 0, out_w, slots_x if with_slots else 0), bool)
    outside_all: np.ndarray = np.zeros((count, 1, out_h, out_w), np.float32 if attrs.average else np.bool_)
    for r in range(count):
        x1, y1, x2, y2 = corners[r]
        sx, sy = x1 * attrs.scale_x, y1 * attrs.scale_y
        ax = _axis(sx, x2 * attrs.scale_x - sx, out_w, regions.width, slots_x, attrs, with_slots)
        ay = _axis(sy, y2 * attrs.scale_y - sy, out_h, regions.height, slots_y, attrs, with_slots)
        total = ay.count * ax.count
        if attrs.average:
            wy_all[r] = ay.weights / ay.count
            wx_all[r] = ax.weights / ax.count
            outside_all[r, 0] = 1 - np.outer(ay.inside, ax.inside) / total
        else:
            wy_all[r] = ay.slots.reshape(rows_y, regions.height)
            wx_all[r] = ax.slots.reshape(rows_x, regions.width)
            mask_all[r, 0] = ay.used[:, :, None, None] & ax.used[None, None, :, :]
            outside_all[r, 0] = np.outer(ay.inside, ax.inside) < total
    return Tables(ids, wy_all, wx_all, mask_all, outside_all)


def region_attributes(
    desc: AnyRoiDesc, tensors: Tensors, input_offset: float, output_offset: float, out_of_bounds: float
) -> _Attributes:
    """The checked sampling attributes every ROI align desc (and ROI_ALIGN_GRAD's) shares."""
    require(
        desc.reduction_function in (_AVERAGE, _MAX),
        tensors.field("reduction_function"),
        f"{desc.reduction_function}; must be REDUCE_FUNCTION_AVERAGE or REDUCE_FUNCTION_MAX",
    )
    require(
        desc.interpolation_mode in (_NEAREST, _LINEAR),
        tensors.field("interpolation_mode"),
        f"{desc.interpolation_mode}; must be INTERPOLATION_MODE_NEAREST_NEIGHBOR or INTERPOLATION_MODE_LINEAR",
    )
    for name in ("spatial_scale_x", "spatial_scale_y"):
        value = getattr(desc, name)
        require(math.isfinite(value), tensors.field(name), f"{value}; must be finite")
    # No samples would leave an average undefined.
    require(
        desc.minimum_samples_per_output >= 1,
        tensors.field("minimum_samples_per_output"),
        f"{desc.minimum_samples_per_output}; must be at least 1",
    )
    require(
        desc.maximum_samples_per_output >= desc.minimum_samples_per_output,
        tensors.field("maximum_samples_per_output"),
        f"{desc.maximum_samples_per_output}; must be at least minimum_samples_per_output "
        f"({desc.minimum_samples_per_output})",
    )
    return _Attributes(
        scale_x=desc.spatial_scale_x,
        scale_y=desc.spatial_scale_y,
        input_offset=input_offset,
        output_offset=output_offset,
        out_of_bounds=out_of_bounds,
        minimum=desc.minimum_samples_per_output,
        maximum=desc.maximum_samples_per_output,
        align_corners=False,
        nearest=desc.interpolation_mode == _NEAREST,
        average=desc.reduction_function == _AVERAGE,
    )


class _RoiAlign(Operator[RoiDesc]):
    """ROI align as matrix products: per region, each output row (column) is a weighted sum of input rows
    (columns), so out[r, c] = Wy[r] @ X[batch[r], c] @ Wx[r]^T.

    The sampling geometry depends on the ROI values (they decide how many samples each output element takes), so
    the weights are computed per request from the ROIs in float64, and the model applies them with Gather and
    MatMul in FLOAT32. AVERAGE is separable: Wy and Wx hold the summed weights of the in-bounds samples, and the
    out-of-bounds samples add OutOfBoundsInputValue times their share. MAX is not: every in-bounds sample pair is
    evaluated (one weight row per sample slot) and masked, then OutOfBoundsInputValue joins the maximum wherever a
    sample lies out of bounds. How the page's pseudo-code is read (integer sample counts, the half-open sample
    loop, ONNX RoiAlign's [-1, size] bounds with edge clamping) is in the page notes.
    """

    def attributes(self, desc: RoiDesc, tensors: Tensors) -> _Attributes:
        raise NotImplementedError  # pragma: no cover - each operator reads its own fields

    def common(self, desc: RoiDesc, tensors: Tensors, input_offset: float, output_offset: float) -> _Attributes:
        return region_attributes(desc, tensors, input_offset, output_offset, desc.out_of_bounds_input_value)

    def lower(self, desc: RoiDesc, tensors: Tensors) -> Plan:
        source, rois, batch_indices = tensors["input_tensor"], tensors["roi_tensor"], tensors["batch_indices_tensor"]
        output = tensors["output_tensor"]
        attrs = self.attributes(desc, tensors)
        same_type(tensors, ("roi_tensor", "output_tensor"))
        batches, channels, height, width = source.sizes
        regions = check_regions(tensors, "output_tensor", (batches, channels, height, width), attrs)
        count, out_h, out_w = regions.count, regions.out_h, regions.out_w
        slots_y, slots_x, with_slots = regions.slots_y, regions.slots_x, regions.with_slots
        graph = Graph()
        x = graph.cast(graph.input("input", source.dtype, source.sizes), F32)
        batch = graph.input("batch", I64, (count,))
        picked = graph.op("Gather", x, batch, axis=0)  # (R, C, H, W)
        one = graph.const([1], I64)
        rows_y = out_h * slots_y if with_slots else out_h
        rows_x = out_w * slots_x if with_slots else out_w
        wy = graph.op("Unsqueeze", graph.input("wy", F32, (count, rows_y, height)), one)
        wx = graph.op("Unsqueeze", graph.input("wx", F32, (count, rows_x, width)), one)
        # (R, 1, rows_y, H) @ (R, C, H, W) @ (R, 1, W, rows_x) -> (R, C, rows_y, rows_x)
        product = graph.op("MatMul", graph.op("MatMul", wy, picked), graph.op("Transpose", wx, perm=[0, 1, 3, 2]))
        oob = graph.const(np.float32(attrs.out_of_bounds), F32)
        if attrs.average:
            share = graph.input("outside", F32, (count, 1, out_h, out_w))
            # Where keeps an infinite OutOfBoundsInputValue out of elements without out-of-bounds samples.
            extra = graph.op(
                "Where",
                graph.op("Greater", share, graph.const(np.float32(0), F32), dtype=BOOL),
                graph.op("Mul", share, oob),
                graph.const(np.float32(0), F32),
            )
            result: Value = graph.op("Add", product, extra)
        else:
            shaped = graph.op("Reshape", product, graph.const([count, channels, out_h, slots_y, out_w, slots_x], I64))
            mask = graph.input("mask", BOOL, (count, 1, out_h, slots_y, out_w, slots_x))
            masked = graph.op("Where", mask, shaped, graph.const(np.float32(-np.inf), F32))
            best = graph.op("ReduceMax", masked, axes=[3, 5], keepdims=0)
            outside = graph.input("outside", BOOL, (count, 1, out_h, out_w))
            result = graph.op("Where", outside, graph.op("Max", best, oob), best)
        graph.output(graph.cast(result, output.dtype), "output", output.sizes)

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            data, roi_values, index_values = arrays
            assert data is not None and roi_values is not None and index_values is not None
            tables = region_tables(regions, attrs, roi_values, index_values, (1, 2))
            feeds = {
                "input": np.ascontiguousarray(data),
                "batch": tables.batch,
                "wy": tables.wy,
                "wx": tables.wx,
                "outside": tables.outside,
            }
            if with_slots:
                feeds["mask"] = tables.mask
            return feeds

        return Plan((source, rois, batch_indices), (output,), graph.model(), prepare)


class RoiAlign(_RoiAlign[operators_pb2.RoiAlignOperatorDesc]):
    case: ClassVar[str] = "roi_align"
    support = support_from(page("ROI_ALIGN"))

    def attributes(self, desc: operators_pb2.RoiAlignOperatorDesc, tensors: Tensors) -> _Attributes:
        # ROI_ALIGN1's page: offsets 0.5 / -0.5 and no corner alignment are ROI_ALIGN's behaviour.
        return self.common(desc, tensors, 0.5, -0.5)


class RoiAlign1(_RoiAlign[operators_pb2.RoiAlign1OperatorDesc]):
    case: ClassVar[str] = "roi_align1"
    support = support_from(page("ROI_ALIGN1"))

    def attributes(self, desc: operators_pb2.RoiAlign1OperatorDesc, tensors: Tensors) -> _Attributes:
        for name in ("input_pixel_offset", "output_pixel_offset"):
            value = getattr(desc, name)
            require(math.isfinite(value), tensors.field(name), f"{value}; must be finite")
        attrs = self.common(desc, tensors, desc.input_pixel_offset, desc.output_pixel_offset)
        return dataclasses.replace(attrs, align_corners=desc.align_regions_to_corners)


class RoiAlignGrad(Operator[operators_pb2.RoiAlignGradOperatorDesc]):
    """ROI_ALIGN(1)'s backward pass as the transpose of the forward's per-region weights.

    The forward reads out[r, c] = Wy[r] @ X[batch[r], c] @ Wx[r]^T, so for AVERAGE the gradient of region r is
    Wy[r]^T @ dY[r, c] @ Wx[r], added into batch[r]'s plane (ScatterND 'add': regions may share a batch and
    overlap). Out-of-bounds samples read a constant, so their share of dY reaches no input element. For MAX the
    forward is re-evaluated from InputTensor (one weight row per sample slot, as ROI_ALIGN computes it) and each
    output element's dY goes, through its interpolation weights, to its largest in-bounds sample only (the first
    in row-major sample order on ties). The desc has no OutOfBoundsInputValue, so out-of-bounds samples never win
    the maximum; an element without in-bounds samples passes no gradient. The weights are computed per request
    from the ROIs exactly as ROI_ALIGN1's (same sampling, offsets, corner alignment and rounding).

    OutputROIGradientTensor is refused with UNIMPLEMENTED: the page defines it only by pseudo-code for one sample
    per output element whose terms (the input and gradient coordinates, inputWidth/inputHeight) it leaves
    undefined, so no exact reading exists to lower.
    """

    case: ClassVar[str] = "roi_align_grad"
    support = support_from(page("ROI_ALIGN_GRAD"))

    def lower(self, desc: operators_pb2.RoiAlignGradOperatorDesc, tensors: Tensors) -> Plan:
        source = tensors.layouts["input_tensor"]
        gradient, rois, batch_indices = (
            tensors["input_gradient_tensor"],
            tensors["roi_tensor"],
            tensors["batch_indices_tensor"],
        )
        output = tensors.layouts["output_gradient_tensor"]
        roi_output = tensors.layouts["output_roi_gradient_tensor"]
        require(
            output is not None or roi_output is not None,
            tensors.field("output_gradient_tensor"),
            "at least one of output_gradient_tensor and output_roi_gradient_tensor must be set",
        )
        for name in ("input_tensor", "roi_tensor", "output_gradient_tensor", "output_roi_gradient_tensor"):
            layout = tensors.layouts[name]
            require(
                layout is None or layout.data_type == gradient.data_type,
                f"{tensors.field(name)}.buffer.data_type",
                "must equal input_gradient_tensor's data type",
            )
        for name in ("input_pixel_offset", "output_pixel_offset"):
            value = getattr(desc, name)
            require(math.isfinite(value), tensors.field(name), f"{value}; must be finite")
        attrs = dataclasses.replace(
            region_attributes(desc, tensors, desc.input_pixel_offset, desc.output_pixel_offset, 0.0),
            align_corners=desc.align_regions_to_corners,
        )
        if roi_output is not None:
            require(
                source is not None,
                tensors.field("input_tensor"),
                "must be set when output_roi_gradient_tensor is set",
            )
            require(
                list(roi_output.sizes) == list(rois.sizes),
                f"{tensors.field('output_roi_gradient_tensor')}.buffer.sizes",
                f"sizes {list(roi_output.sizes)} must equal roi_tensor's {list(rois.sizes)}",
            )
        require(
            attrs.average or source is not None,
            tensors.field("input_tensor"),
            "must be set when reduction_function is REDUCE_FUNCTION_MAX",
        )
        if roi_output is not None:
            raise OperatorUnavailable(
                f"{tensors.field('output_roi_gradient_tensor')}: the gradient with respect to the ROIs is not "
                "executable by this server (the page defines it only for one sample per output element, with "
                "undefined terms); leave it unset to compute output_gradient_tensor"
            )
        assert output is not None
        if source is not None:
            require(
                list(source.sizes) == list(output.sizes),
                f"{tensors.field('output_gradient_tensor')}.buffer.sizes",
                f"sizes {list(output.sizes)} must equal input_tensor's {list(source.sizes)}",
            )
        batches, channels, height, width = output.sizes
        regions = check_regions(tensors, "input_gradient_tensor", (batches, channels, height, width), attrs)
        count, out_h, out_w = regions.count, regions.out_h, regions.out_w
        slots_y, slots_x = regions.slots_y, regions.slots_x
        graph = Graph()
        dy = graph.cast(graph.input("gradient", gradient.dtype, gradient.sizes), F32)
        batch = graph.input("batch", I64, (count,))
        one = graph.const([1], I64)
        wy = graph.op("Unsqueeze", graph.input("wy", F32, (count, regions.rows_y, height)), one)
        wx = graph.op("Unsqueeze", graph.input("wx", F32, (count, regions.rows_x, width)), one)
        if attrs.average:
            spread: Value = dy
        else:
            assert source is not None
            x = graph.cast(graph.input("input", source.dtype, source.sizes), F32)
            picked = graph.op("Gather", x, batch, axis=0)
            product = graph.op("MatMul", graph.op("MatMul", wy, picked), graph.op("Transpose", wx, perm=[0, 1, 3, 2]))
            slots = slots_y * slots_x
            # (R, C, oh, sy, ow, sx) -> (R, C, oh, ow, sy * sx): each output element's samples in one row.
            shaped = graph.op("Reshape", product, graph.const([count, channels, out_h, slots_y, out_w, slots_x], I64))
            rows = graph.const([count, channels, out_h, out_w, slots], I64)
            samples = graph.op("Reshape", graph.op("Transpose", shaped, perm=[0, 1, 2, 4, 3, 5]), rows)
            mask = graph.input("mask", BOOL, (count, 1, out_h, slots_y, out_w, slots_x))
            mask_rows = graph.op(
                "Reshape",
                graph.op("Transpose", mask, perm=[0, 1, 2, 4, 3, 5]),
                graph.const([count, 1, out_h, out_w, slots], I64),
            )
            masked = graph.op("Where", mask_rows, samples, graph.const(np.float32(-np.inf), F32))
            best = graph.op("ArgMax", masked, axis=4, keepdims=1)  # the first maximum
            chosen = graph.op(
                "And",
                graph.op("Equal", graph.const(np.arange(slots), I64), best, dtype=BOOL),
                mask_rows,
            )
            dy_rows = graph.op("Unsqueeze", dy, graph.const([4], I64))
            routed = graph.op("Where", chosen, dy_rows, graph.const(np.float32(0), F32))
            back = graph.op(
                "Transpose",
                graph.op("Reshape", routed, graph.const([count, channels, out_h, out_w, slots_y, slots_x], I64)),
                perm=[0, 1, 2, 4, 3, 5],
            )
            spread = graph.op("Reshape", back, graph.const([count, channels, regions.rows_y, regions.rows_x], I64))
        # (R, 1, H, rows_y) @ (R, C, rows_y, rows_x) @ (R, 1, rows_x, W) -> (R, C, H, W)
        planes = graph.op("MatMul", graph.op("MatMul", graph.op("Transpose", wy, perm=[0, 1, 3, 2]), spread), wx)
        zero = onnx.numpy_helper.from_array(np.zeros(1, np.float32))
        zeros = graph.op("ConstantOfShape", graph.const(list(output.sizes), I64), dtype=F32, value=zero)
        targets = graph.op("Unsqueeze", batch, graph.const([1], I64))
        summed = graph.op("ScatterND", zeros, targets, planes, reduction="add", opset=16)
        graph.output(graph.cast(summed, output.dtype), "output", output.sizes)

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            data, dy_values, roi_values, index_values = arrays
            assert dy_values is not None and roi_values is not None and index_values is not None
            tables = region_tables(regions, attrs, roi_values, index_values, (2, 3))
            feeds = {
                "gradient": np.ascontiguousarray(dy_values),
                "batch": tables.batch,
                "wy": tables.wy,
                "wx": tables.wx,
            }
            if not attrs.average:
                assert data is not None
                feeds["input"] = np.ascontiguousarray(data)
                feeds["mask"] = tables.mask
            return feeds

        def finish(outputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
            return [outputs[0], None]

        return Plan((source, gradient, rois, batch_indices), (output, None), graph.model(), prepare, finish)


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (RoiAlign(), RoiAlign1(), RoiAlignGrad())
