"""ROI_ALIGN(1) and ROI_ALIGN_GRAD regions: checked sampling attributes, rows and columns, interpolation tables."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument, ResourceExhausted
from dmlrpc_server.operators.base import Tensors, require

AnyRoiDesc = (
    operators_pb2.RoiAlignOperatorDesc | operators_pb2.RoiAlign1OperatorDesc | operators_pb2.RoiAlignGradOperatorDesc
)

_AVERAGE = operators_pb2.REDUCE_FUNCTION_AVERAGE
_MAX = operators_pb2.REDUCE_FUNCTION_MAX
_NEAREST = operators_pb2.INTERPOLATION_MODE_NEAREST_NEIGHBOR
_LINEAR = operators_pb2.INTERPOLATION_MODE_LINEAR


@dataclass(frozen=True)
class SamplingAttributes:
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


def _axis(
    start: float, size: float, out: int, extent: int, slots: int, attrs: SamplingAttributes, with_slots: bool
) -> _Axis:
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

    def sampling(self) -> dict[str, np.ndarray]:
        """The feeds that pick and weigh each region's samples, the forward's and the gradient's alike: "batch",
        "wy" and "wx"."""
        return {"batch": self.batch, "wy": self.wy, "wx": self.wx}


def check_regions(
    tensors: Tensors, output_name: str, source: tuple[int, int, int, int], attrs: SamplingAttributes
) -> Regions:
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
    regions: Regions,
    attrs: SamplingAttributes,
    roi_values: np.ndarray,
    index_values: np.ndarray,
    bindings: tuple[int, int],
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
) -> SamplingAttributes:
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
    return SamplingAttributes(
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
