"""DML_SCATTER_ND_OPERATOR_DESC: validation, output rules and ONNX lowering."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import onnx

from dmlrpc.codec import packed_strides
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._batching import IndexTupleBatchRule
from dmlrpc_server.operators._indices import checked_indices, reject_overlaps
from dmlrpc_server.operators.base import Operator, Plan, Tensors, make_model, require, value_info
from dmlrpc_server.operators.scatter_elements import check_same_dimension_count_and_type

FL = operators_pb2.FeatureLevel


class ScatterNd(Operator[operators_pb2.ScatterNdOperatorDesc]):
    case: ClassVar[str] = "scatter_nd"
    # Each index tuple gets its request's batch coordinate prepended.
    batching = IndexTupleBatchRule()

    def lower(self, desc: operators_pb2.ScatterNdOperatorDesc, tensors: Tensors) -> Plan:
        check_same_dimension_count_and_type(tensors)
        source, indices, updates = tensors["input_tensor"], tensors["indices_tensor"], tensors["updates_tensor"]
        output = tensors["output_tensor"]
        rank = len(source.sizes)
        input_count, indices_count = desc.input_dimension_count, desc.indices_dimension_count
        for name, count in (("input_dimension_count", input_count), ("indices_dimension_count", indices_count)):
            require(
                1 <= count <= rank,
                tensors.field(name),
                f"{count} is out of range: 1 <= count <= {rank} (the dimension count)",
            )
        for name, layout, count in (("input_tensor", source, input_count), ("indices_tensor", indices, indices_count)):
            require(
                all(size == 1 for size in layout.sizes[: rank - count]),
                f"{tensors.field(name)}.buffer.sizes",
                f"sizes {list(layout.sizes)}: the {rank - count} dimensions before the last {count} meaningful "
                "ones must be 1",
            )
        tuple_size = indices.sizes[-1]
        require(
            tuple_size <= input_count,
            f"{tensors.field('indices_tensor')}.buffer.sizes[{rank - 1}]",
            f"index tuple size {tuple_size} exceeds input_dimension_count {input_count}",
        )
        data_shape = source.sizes[rank - input_count :]
        indices_shape = indices.sizes[rank - indices_count :]
        updates_shape = indices_shape[:-1] + data_shape[tuple_size:]
        require(
            len(updates_shape) <= rank,
            f"{tensors.field('updates_tensor')}.buffer.sizes",
            f"these indices and input need updates of {len(updates_shape)} dimensions {list(updates_shape)}, "
            f"more than {rank}",
        )
        expected = (1,) * (rank - len(updates_shape)) + updates_shape
        require(
            updates.sizes == expected,
            f"{tensors.field('updates_tensor')}.buffer.sizes",
            f"sizes {list(updates.sizes)} must be {list(expected)}: updates of shape {list(updates_shape)} (the "
            f"meaningful indices sizes {list(indices_shape)} without the tuple dimension, then the meaningful input "
            f"sizes {list(data_shape)} after the first {tuple_size}), padded with leading 1s to {rank} dimensions",
        )
        node = onnx.helper.make_node("ScatterND", ["input", "indices", "updates"], ["output"])
        model = make_model(
            [node],
            [
                value_info("input", source.dtype, data_shape),
                value_info("indices", np.dtype(np.int64), indices_shape),
                value_info("updates", source.dtype, updates_shape),
            ],
            [value_info("output", source.dtype, data_shape)],
        )
        bounds = np.array(data_shape[:tuple_size], dtype=np.int64)
        tuple_strides = np.array(packed_strides(data_shape)[:tuple_size], dtype=np.int64)
        first_dimension = rank - input_count

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            data, index_values, update_values = arrays
            assert index_values is not None
            normalised = checked_indices(
                index_values, bounds, field="inputs[1].buffer.data", dimension_offset=first_dimension, tuple_axis=True
            )
            reject_overlaps(
                (normalised * tuple_strides).sum(axis=-1),
                field="inputs[1].buffer.data",
                what="index tuples at indices_tensor positions",
            )
            feeds = {"indices": normalised.reshape(indices_shape)}
            # Data and updates may be absent here: bound in device memory as they are (``direct_inputs``).
            if data is not None:
                feeds["input"] = np.ascontiguousarray(data).reshape(data_shape)
            if update_values is not None:
                feeds["updates"] = np.ascontiguousarray(update_values).reshape(updates_shape)
            return feeds

        def finish(outputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
            return [outputs[0].reshape(source.sizes)]

        # Without leading 1s to drop, the data, the updates and the output reach the model unchanged.
        whole_data = tuple(data_shape) == tuple(source.sizes)
        return Plan(
            (source, indices, updates),
            (output,),
            model,
            prepare,
            finish,
            direct_inputs=(
                "input" if whole_data else None,
                None,
                "updates" if updates_shape == updates.sizes else None,
            ),
            direct_outputs=whole_data,
        )
