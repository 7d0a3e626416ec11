"""DML_ROI_ALIGN and DML_ROI_ALIGN1 as one NumPy-style builder, and DML_ROI_ALIGN_GRAD."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dmlrpc.codec import tensor_desc
from dmlrpc.errors import ArgumentValueError
from dmlrpc.ops._registry import FIRST, operator
from dmlrpc.ops.base import Call, _count, _flag, _float_operand, _scalar, _wrap
from dmlrpc.ops.convolution import _choice
from dmlrpc.ops.random_generator import unsigned_words
from dmlrpc.ops.spatial_grad import _INTERPOLATION_MODES, _shape
from dmlrpc.v1 import operators_pb2

__all__ = ["roi_align", "roi_align_grad"]

_REDUCTIONS = {"average": operators_pb2.REDUCE_FUNCTION_AVERAGE, "max": operators_pb2.REDUCE_FUNCTION_MAX}
#: ROI_ALIGN's own pixel offsets (ROI_ALIGN1's page): with these and no corner alignment the older desc is sent.
_OFFSETS = (0.5, -0.5)
_UNBOUNDED = 2**32 - 1


def _finite(value: object, argument: str, where: str) -> float:
    number = _scalar(value, argument, where)
    if not np.isfinite(number):
        raise ArgumentValueError(argument, f"{where}: {argument} = {number} must be finite")
    return number


@operator(sends=("roi_align", "roi_align1"))
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
    maximum_samples: int = _UNBOUNDED,
    align_regions_to_corners: bool = False,
) -> Call:
    """DML_ROI_ALIGN_OPERATOR_DESC, or DML_ROI_ALIGN1_OPERATOR_DESC where the pixel offsets differ from 0.5 and
    -0.5 or ``align_regions_to_corners``: each region of interest of an (N, C, H, W) ``input`` cropped and
    resized to ``output_size`` (height, width), every output element the ``reduction`` of the samples it covers.

    ``rois`` is (NumROIs, 4) of (x1, y1, x2, y2) in the input's coordinates times ``spatial_scale`` (one factor,
    or (x, y)); ``batch_indices`` (NumROIs,) picks each region's image. Per output element a region of size s over
    o outputs takes ``ceil(s / o)`` samples per axis, clamped to [``minimum_samples``, ``maximum_samples``], each
    interpolated (``mode``) at ``(sample - output_pixel_offset) * step + start - input_pixel_offset``; samples
    outside the input read ``out_of_bounds_value``.

    DirectML's rules: InputTensor and OutputTensor 4-D, ROITensor {NumROIs, 4} (with leading 1s up to 4-D), one
    data type, FLOAT32 or FLOAT16; BatchIndicesTensor UINT32 {NumROIs}; OutputTensor {NumROIs, C, height, width};
    MinimumSamplesPerOutput at least 1 and at most MaximumSamplesPerOutput; the scales and offsets finite.

    Raises:
        ArgumentValueError, ArgumentTypeError: an input that is not 4-D, ``rois`` not (NumROIs, 4), batch indices
            not one per region or not unsigned 32-bit, an ``output_size`` not (height, width), sample counts out of
            order, an unknown reduction or mode, non-finite numbers, dtypes other than float32/float16 or unlike.
    """
    where = "roi_align"
    x = _float_operand(input, "input", where, where)
    if x.ndim != 4:
        raise ArgumentValueError("input", f"{where}: input has shape {x.shape}; it takes (N, C, H, W)")
    boxes, indices, shared = _regions(
        x, rois, batch_indices, where, reduction, mode, spatial_scale, minimum_samples, maximum_samples
    )
    count = boxes.shape[0]
    height, width = _shape(output_size, "output_size", where, (2,))
    offsets, corners = _alignment(input_pixel_offset, output_pixel_offset, align_regions_to_corners, where)
    common: dict[str, Any] = {
        "input_tensor": tensor_desc(x),
        "roi_tensor": tensor_desc(boxes),
        "batch_indices_tensor": tensor_desc(indices),
        "output_tensor": tensor_desc((x.dtype, (count, x.shape[1], height, width))),
        "out_of_bounds_input_value": _finite(out_of_bounds_value, "out_of_bounds_value", where),
        **shared,
    }
    arrays = (x, boxes, indices)
    if offsets == _OFFSETS and not corners:
        return Call(_wrap("roi_align", operators_pb2.RoiAlignOperatorDesc(**common)), arrays)
    desc = operators_pb2.RoiAlign1OperatorDesc(
        **common,
        input_pixel_offset=offsets[0],
        output_pixel_offset=offsets[1],
        align_regions_to_corners=corners,
    )
    return Call(_wrap("roi_align1", desc), arrays)


def _regions(
    like: np.ndarray,
    rois: npt.ArrayLike,
    batch_indices: npt.ArrayLike,
    where: str,
    reduction: object,
    mode: object,
    spatial_scale: float | tuple[float, float],
    minimum_samples: int,
    maximum_samples: int,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The regions (NumROIs, 4), their batch indices (NumROIs,) and the sampling attributes ROI_ALIGN and
    ROI_ALIGN_GRAD share."""
    boxes = _float_operand(rois, "rois", where, where, like)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ArgumentValueError("rois", f"{where}: rois has shape {boxes.shape}; it takes (NumROIs, 4)")
    count = boxes.shape[0]
    indices = unsigned_words(batch_indices, "batch_indices", where, count)
    scales = spatial_scale if isinstance(spatial_scale, tuple) else (spatial_scale, spatial_scale)
    if len(scales) != 2:
        raise ArgumentValueError("spatial_scale", f"{where}: spatial_scale takes one number or (x, y)")
    least = _count(minimum_samples, "minimum_samples", where, 1)
    most = _count(maximum_samples, "maximum_samples", where, least)
    if most > _UNBOUNDED:
        raise ArgumentValueError("maximum_samples", f"{where}: maximum_samples = {most} must fit 32 bits")
    attributes = {
        "reduction_function": _choice(reduction, "reduction", where, _REDUCTIONS),
        "interpolation_mode": _choice(mode, "mode", where, _INTERPOLATION_MODES),
        "spatial_scale_x": _finite(scales[0], "spatial_scale", where),
        "spatial_scale_y": _finite(scales[1], "spatial_scale", where),
        "minimum_samples_per_output": least,
        "maximum_samples_per_output": most,
    }
    return boxes, indices.reshape(count), attributes


def _alignment(
    input_pixel_offset: float, output_pixel_offset: float, align_regions_to_corners: bool, where: str
) -> tuple[tuple[float, float], bool]:
    offsets = (
        _finite(input_pixel_offset, "input_pixel_offset", where),
        _finite(output_pixel_offset, "output_pixel_offset", where),
    )
    return offsets, _flag(align_regions_to_corners, "align_regions_to_corners", where)


@operator(sends=("roi_align_grad",), result=FIRST)
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
    maximum_samples: int = _UNBOUNDED,
    align_regions_to_corners: bool = False,
) -> Call:
    """DML_ROI_ALIGN_GRAD_OPERATOR_DESC: the gradient of ``roi_align`` (ROI_ALIGN1, the same attributes and
    sampling) with respect to its (N, C, H, W) input.

    Each element of image ``batch_indices[r]`` receives ``input_gradient[r, c, y, x]`` times the weight with which
    it entered output element (y, x), summed over regions and elements ("average": every in-bounds sample's
    interpolation weights over the sample count; "max": only the largest in-bounds sample's, the first on ties,
    which needs the forward ``input``). ``input_shape`` is the forward input's (N, C, H, W) (``input``'s shape if
    it is given). The gradient of the regions (OutputROIGradientTensor) is not offered: its page defines it only by
    incomplete pseudo-code.

    DirectML's rules: InputGradientTensor {NumROIs, C, OutputHeight, OutputWidth}; ROITensor {NumROIs, 4} and
    BatchIndicesTensor UINT32 {NumROIs}, each index below N (checked by the server); InputTensor, optional (required
    for MAX), and OutputGradientTensor {N, C, H, W}; every tensor but the batch indices one data type, FLOAT32 or
    FLOAT16; MinimumSamplesPerOutput at least 1 and at most MaximumSamplesPerOutput; the scales and offsets finite.

    Raises:
        ArgumentValueError, ArgumentTypeError: an input gradient that is not 4-D or whose regions or channels differ
            from ``rois`` and the input shape's (both shapes quoted), no input shape, an input unlike it, "max"
            without ``input``, batch indices not one per region, sample counts out of order, an unknown reduction
            or mode, non-finite numbers, dtypes other than float32/float16 or unlike.
    """
    where = "roi_align_grad"
    dy = _float_operand(input_gradient, "input_gradient", where, where)
    x = None if input is None else _float_operand(input, "input", where, where, dy)
    given = input_shape if input_shape is not None else None if x is None else x.shape
    if given is None:
        raise ArgumentValueError("input_shape", f"{where}: give input_shape (N, C, H, W) or the forward input")
    shape = _shape(given, "input_shape", where, (4,))
    if x is not None and x.shape != shape:
        raise ArgumentValueError("input", f"{where}: input has shape {x.shape} and input_shape is {shape}")
    boxes, indices, shared = _regions(
        dy, rois, batch_indices, where, reduction, mode, spatial_scale, minimum_samples, maximum_samples
    )
    if dy.ndim != 4 or dy.shape[:2] != (boxes.shape[0], shape[1]):
        raise ArgumentValueError(
            "input_gradient",
            f"{where}: input_gradient has shape {dy.shape}; with rois {boxes.shape} and input shape {shape} it takes "
            f"({boxes.shape[0]}, {shape[1]}, output height, output width)",
        )
    if reduction == "max" and x is None:
        raise ArgumentValueError("input", f"{where}: reduction 'max' needs the forward input")
    offsets, corners = _alignment(input_pixel_offset, output_pixel_offset, align_regions_to_corners, where)
    desc = operators_pb2.RoiAlignGradOperatorDesc(
        input_tensor=None if x is None else tensor_desc(x),
        input_gradient_tensor=tensor_desc(dy),
        roi_tensor=tensor_desc(boxes),
        batch_indices_tensor=tensor_desc(indices),
        output_gradient_tensor=tensor_desc((dy.dtype, shape)),
        input_pixel_offset=offsets[0],
        output_pixel_offset=offsets[1],
        align_regions_to_corners=corners,
        **shared,
    )
    return Call(_wrap("roi_align_grad", desc), (x, dy, boxes, indices), (), ())
