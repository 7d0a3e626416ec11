"""DML_ROI_ALIGN_OPERATOR_DESC, DML_ROI_ALIGN1_OPERATOR_DESC (Mask R-CNN's ROI align) and DML_ROI_ALIGN_GRAD."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
import onnx

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import OperatorUnavailable
from dmlrpc_server.operators._graph import BOOL, F32, I64, Graph, Value
from dmlrpc_server.operators._regions import SamplingAttributes, check_regions, region_attributes, region_tables
from dmlrpc_server.operators._support import same_type
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require

RoiDesc = TypeVar("RoiDesc", operators_pb2.RoiAlignOperatorDesc, operators_pb2.RoiAlign1OperatorDesc)


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

    def attributes(self, desc: RoiDesc, tensors: Tensors) -> SamplingAttributes:
        raise NotImplementedError  # pragma: no cover - each operator reads its own fields

    def common(self, desc: RoiDesc, tensors: Tensors, input_offset: float, output_offset: float) -> SamplingAttributes:
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

    def attributes(self, desc: operators_pb2.RoiAlignOperatorDesc, tensors: Tensors) -> SamplingAttributes:
        # ROI_ALIGN1's page: offsets 0.5 / -0.5 and no corner alignment are ROI_ALIGN's behaviour.
        return self.common(desc, tensors, 0.5, -0.5)


class RoiAlign1(_RoiAlign[operators_pb2.RoiAlign1OperatorDesc]):
    case: ClassVar[str] = "roi_align1"

    def attributes(self, desc: operators_pb2.RoiAlign1OperatorDesc, tensors: Tensors) -> SamplingAttributes:
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
