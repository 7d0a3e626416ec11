"""DML_ROI_POOLING_OPERATOR_DESC: max pooling over each region of interest's bins."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.operators._graph import BOOL, F32, F64, I64, Graph, Value
from dmlrpc_server.operators._support import same_type
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require


class RoiPooling(Operator[operators_pb2.RoiPoolingOperatorDesc]):
    """Max over each ROI's bins, following the page's integer bin formulas exactly.

    ONNX MaxRoiPool divides the region in floating point (floor/ceil of ph * RegionHeight / PooledHeight as a
    float), which can land one element off the page's integer division, so the bins are computed in INT64 and
    applied as masks.
    """

    case: ClassVar[str] = "roi_pooling"

    def lower(self, desc: operators_pb2.RoiPoolingOperatorDesc, tensors: Tensors) -> Plan:
        source, rois, output = tensors["input_tensor"], tensors["roi_tensor"], tensors["output_tensor"]
        same_type(tensors, ("roi_tensor", "output_tensor"))
        require(
            rois.sizes[0] == 1 and rois.sizes[1] == 1 and rois.sizes[3] == 5,
            f"{tensors.field('roi_tensor')}.buffer.sizes",
            f"sizes {list(rois.sizes)} must be [1, 1, NumROIs, 5]",
        )
        scale = desc.spatial_scale
        # The page is silent on the scale's range: a negative one would swap the corners, NaN/inf has no region.
        require(math.isfinite(scale) and scale >= 0, tensors.field("spatial_scale"), f"{scale}; must be finite, >= 0")
        pooled_h, pooled_w = desc.pooled_size.height, desc.pooled_size.width
        require(
            pooled_h >= 1 and pooled_w >= 1,
            tensors.field("pooled_size"),
            f"{pooled_w}x{pooled_h}; width and height must be at least 1",
        )
        count, channels, height, width = rois.sizes[2], source.sizes[1], source.sizes[2], source.sizes[3]
        require(
            list(output.sizes[2:]) == [pooled_h, pooled_w],
            tensors.field("pooled_size"),
            f"height {pooled_h}, width {pooled_w} must equal output_tensor's last two sizes {list(output.sizes[2:])}",
        )
        expected = [count, channels, pooled_h, pooled_w]
        require(
            list(output.sizes) == expected,
            f"{tensors.field('output_tensor')}.buffer.sizes",
            f"sizes {list(output.sizes)} must be {expected} (NumROIs, input channels, pooled height, pooled width)",
        )
        graph = Graph()
        x = graph.cast(graph.input("input", source.dtype, source.sizes), F32)
        batch = graph.input("batch", I64, (count,))
        corners = graph.cast(graph.input("corners", source.dtype, (count, 4)), F32)
        scaled = graph.cast(graph.op("Mul", corners, graph.const(np.float32(scale), F32)), F64)
        # round() half away from zero (C's round, as in Caffe's ROI pooling; ONNX Round is half to even).
        magnitude = graph.op("Floor", graph.op("Add", graph.op("Abs", scaled), graph.const(0.5, F64)))
        rounded = graph.op("Mul", graph.op("Sign", scaled), magnitude)
        limit = float(1 << 40)  # keeps absurd coordinates castable; they clamp to the input anyway
        rounded = graph.cast(graph.op("Clip", rounded, graph.const(-limit, F64), graph.const(limit, F64)), I64)

        def column(i: int) -> Value:
            return graph.op("Slice", rounded, graph.const([i], I64), graph.const([i + 1], I64), graph.const([1], I64))

        x1, y1, x2, y2 = (column(i) for i in range(4))  # each (count, 1)

        def bins(low: Value, high: Value, pooled: int, size: int) -> tuple[Value, Value]:
            """Per ROI and bin, the mask (count, pooled, size) of input positions and whether it is non-empty."""
            region = graph.op("Add", graph.op("Sub", high, low), graph.const(1, I64))
            steps = graph.const(np.arange(pooled, dtype=np.int64), I64)
            begin = graph.op("Add", graph.op("Div", graph.op("Mul", steps, region), graph.const(pooled, I64)), low)
            finish_ = graph.op(
                "Div",
                graph.op(
                    "Add",
                    graph.op("Mul", graph.op("Add", steps, graph.const(1, I64)), region),
                    graph.const(pooled - 1, I64),
                ),
                graph.const(pooled, I64),
            )
            finish_ = graph.op("Add", finish_, low)
            zero, top = graph.const(0, I64), graph.const(size, I64)
            begin = graph.op("Min", graph.op("Max", begin, zero), top)
            finish_ = graph.op("Min", graph.op("Max", finish_, zero), top)
            axes = graph.const([2], I64)
            positions = graph.const(np.arange(size, dtype=np.int64), I64)
            inside = graph.op(
                "And",
                graph.op("GreaterOrEqual", positions, graph.op("Unsqueeze", begin, axes), dtype=BOOL),
                graph.op("Less", positions, graph.op("Unsqueeze", finish_, axes), dtype=BOOL),
            )
            return inside, graph.op("Less", begin, finish_, dtype=BOOL)

        mask_h, filled_h = bins(y1, y2, pooled_h, height)  # (count, PH, H), (count, PH)
        mask_w, filled_w = bins(x1, x2, pooled_w, width)
        picked = graph.op("Gather", x, batch, axis=0)  # (count, C, H, W)
        lowest = graph.const(-np.inf, F32)
        # Over W: (count, C, H, 1, W) against (count, 1, 1, PW, W) -> (count, C, H, PW).
        spread = graph.op("Unsqueeze", picked, graph.const([3], I64))
        mask = graph.op("Unsqueeze", mask_w, graph.const([1, 2], I64))
        rows = graph.op("ReduceMax", graph.op("Where", mask, spread, lowest), axes=[4], keepdims=0)
        # Over H: (count, C, 1, H, PW) against (count, 1, PH, H, 1) -> (count, C, PH, PW).
        spread = graph.op("Unsqueeze", rows, graph.const([2], I64))
        mask = graph.op("Unsqueeze", mask_h, graph.const([1, 4], I64))
        pooled = graph.op("ReduceMax", graph.op("Where", mask, spread, lowest), axes=[3], keepdims=0)
        # An empty bin (a region clamped away) is 0, as in Caffe and ONNX MaxRoiPool; the page does not say.
        filled = graph.op(
            "And",
            graph.op("Unsqueeze", filled_h, graph.const([1, 3], I64)),
            graph.op("Unsqueeze", filled_w, graph.const([1, 2], I64)),
        )
        result = graph.op("Where", filled, pooled, graph.const(0.0, F32))
        graph.output(graph.cast(result, source.dtype), "output", output.sizes)
        batches = source.sizes[0]

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            data, roi_values = arrays
            assert data is not None and roi_values is not None
            table = np.asarray(roi_values).reshape(count, 5)
            ids = table[:, 0].astype(np.float64)
            for r in range(count):
                batch_id, rx1, ry1, rx2, ry2 = (float(v) for v in table[r])
                if not (batch_id.is_integer() and 0 <= batch_id < batches):
                    raise InvalidArgument(
                        "inputs[1].buffer.data",
                        f"ROI {r}: batch index {batch_id} is not an integer in [0, {batches})",
                    )
                if not all(math.isfinite(v) for v in (rx1, ry1, rx2, ry2)) or rx2 < rx1 or ry2 < ry1:
                    raise InvalidArgument(
                        "inputs[1].buffer.data",
                        f"ROI {r}: corners ({rx1}, {ry1}), ({rx2}, {ry2}) must be finite with x2 >= x1 and y2 >= y1",
                    )
            return {
                "input": np.ascontiguousarray(data),
                "batch": ids.astype(np.int64),
                "corners": np.ascontiguousarray(table[:, 1:]),
            }

        return Plan((source, rois), (output,), graph.model(), prepare)


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (RoiPooling(),)
