"""DML_SCATTER_OPERATOR_DESC (SCATTER_ELEMENTS): validation, output rules and ONNX lowering."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import onnx

from dmlrpc.codec import packed_strides
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._batching import BatchRule
from dmlrpc_server.operators._indices import checked_indices, reject_overlaps
from dmlrpc_server.operators._support import elements_axis, same_rank, same_type
from dmlrpc_server.operators.base import Operator, Plan, Tensors, make_model, require, value_info

FL = operators_pb2.FeatureLevel


def check_same_dimension_count_and_type(tensors: Tensors) -> None:
    """All four scatter tensors have one dimension count; input, updates and output share a data type."""
    source = tensors["input_tensor"]
    same_rank(tensors, ("indices_tensor", "updates_tensor", "output_tensor"))
    same_type(tensors, ("updates_tensor", "output_tensor"))
    require(
        tensors["output_tensor"].sizes == source.sizes,
        f"{tensors.field('output_tensor')}.buffer.sizes",
        f"sizes {list(tensors['output_tensor'].sizes)} must equal input_tensor's {list(source.sizes)}",
    )


class ScatterElements(Operator[operators_pb2.ScatterElementsOperatorDesc]):
    case: ClassVar[str] = "scatter_elements"
    # Indices address positions along the axis within their own slice: ScatterElements along axis + 1.
    batching = BatchRule("ScatterElements")

    def lower(self, desc: operators_pb2.ScatterElementsOperatorDesc, tensors: Tensors) -> Plan:
        check_same_dimension_count_and_type(tensors)
        source, indices, updates = tensors["input_tensor"], tensors["indices_tensor"], tensors["updates_tensor"]
        output = tensors["output_tensor"]
        rank = len(source.sizes)
        axis = desc.axis
        elements_axis(tensors, axis, "updates_tensor")
        node = onnx.helper.make_node("ScatterElements", ["input", "indices", "updates"], ["output"], axis=int(axis))
        model = make_model(
            [node],
            [
                value_info("input", source.dtype, source.sizes),
                value_info("indices", np.dtype(np.int64), indices.sizes),
                value_info("updates", source.dtype, indices.sizes),
            ],
            [value_info("output", source.dtype, source.sizes)],
        )
        out_strides = packed_strides(source.sizes)
        # The flat output position each indices element writes, less its own contribution along the axis.
        base = np.zeros((1,) * rank, dtype=np.int64)
        for d in range(rank):
            if d != axis:
                shape = [1] * rank
                shape[d] = indices.sizes[d]
                base = base + (np.arange(indices.sizes[d], dtype=np.int64) * out_strides[d]).reshape(shape)
        bound = np.int64(source.sizes[axis])

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            data, index_values, update_values = arrays
            assert data is not None and index_values is not None and update_values is not None
            normalised = checked_indices(index_values, np.asarray(bound), field="inputs[1].buffer.data", axis=axis)
            reject_overlaps(
                base + normalised * out_strides[axis],
                field="inputs[1].buffer.data",
                what="indices_tensor positions",
            )
            return {
                "input": np.ascontiguousarray(data),
                "indices": normalised,
                "updates": np.ascontiguousarray(update_values),
            }

        return Plan((source, indices, updates), (output,), model, prepare)
