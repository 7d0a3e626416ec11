"""DML_TOP_K_OPERATOR_DESC and DML_TOP_K1_OPERATOR_DESC: validation, output rules and ONNX lowering."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
import onnx

from dmlrpc.v1 import operators_pb2, tensor_pb2
from dmlrpc_server.operators._batching import BatchRule
from dmlrpc_server.operators._support import axis_direction
from dmlrpc_server.operators.base import Operator, Plan, Tensors, make_model, require, same_outputs, value_info

FL = operators_pb2.FeatureLevel
_UINT64_FLIP = np.uint64(1 << 63)
# ONNX Runtime's CPU TopK kernel lacks unsigned types above 8 bits; on it these widen exactly to a signed type, and
# UINT64, with no wider type, is mapped order-preservingly onto INT64 on the host (CUDA's kernel, with CPU behind
# it, gets the same). DirectML takes them natively.
_WIDENED: dict[np.dtype[Any], np.dtype[Any]] = {np.dtype("<u2"): np.dtype("<i4"), np.dtype("<u4"): np.dtype("<i8")}


TopKDesc = TypeVar("TopKDesc", operators_pb2.TopKOperatorDesc, operators_pb2.TopK1OperatorDesc)


class _TopKBase(Operator[TopKDesc]):
    # Rows of a stacked batch are independent: TopK along axis + 1.
    batching = BatchRule("TopK")

    def direction(self, desc: TopKDesc, tensors: Tensors) -> int:
        return tensor_pb2.AXIS_DIRECTION_DECREASING

    def lower(self, desc: TopKDesc, tensors: Tensors) -> Plan:
        source = tensors["input_tensor"]
        values = tensors["output_value_tensor"]
        indices = tensors["output_index_tensor"]
        rank = len(source.sizes)
        require(
            desc.axis < rank, tensors.field("axis"), f"axis {desc.axis} is not less than the dimension count {rank}"
        )
        axis_size = source.sizes[desc.axis]
        require(
            1 <= desc.k <= axis_size,
            tensors.field("k"),
            f"k = {desc.k} is out of range: 1 <= k <= {axis_size} (the input size along axis {desc.axis})",
        )
        expected = list(source.sizes)
        expected[desc.axis] = desc.k
        for name, layout in (("output_value_tensor", values), ("output_index_tensor", indices)):
            require(
                list(layout.sizes) == expected,
                f"{tensors.field(name)}.buffer.sizes",
                f"sizes {list(layout.sizes)} must equal the input sizes with sizes[axis] = k: {expected}",
            )
        require(
            values.data_type == source.data_type,
            f"{tensors.field('output_value_tensor')}.buffer.data_type",
            "must equal input_tensor's data type",
        )

        direction = self.direction(desc, tensors)
        native = tensors.on_directml  # DirectML sorts every integer width itself
        mapped_uint64 = source.dtype == np.dtype("<u8") and not native
        feed_dtype = np.dtype("<i8") if mapped_uint64 else source.dtype
        compute_dtype = feed_dtype if native else _WIDENED.get(source.dtype, feed_dtype)
        # On DirectML the graph is one TopK node and the index cast runs on the host, because Cast nodes on 64-bit
        # integers need 64-bit shader operations that some DirectML devices lack (their sessions fail to build).
        # Elsewhere the cast is in the graph, so that outputs can stay in device memory.
        k = onnx.numpy_helper.from_array(np.array([desc.k], dtype=np.int64), "k")
        top_k_indices = "indices" if native else "top_k_indices"
        nodes = [
            onnx.helper.make_node(
                "TopK",
                ["input", "k"],
                ["values", top_k_indices],
                axis=int(desc.axis),
                largest=int(direction == tensor_pb2.AXIS_DIRECTION_DECREASING),
                sorted=1,
            )
        ]
        index_dtype = np.dtype("<i8") if native else indices.dtype
        if not native:
            to = onnx.helper.np_dtype_to_tensor_dtype(indices.dtype)
            nodes.append(onnx.helper.make_node("Cast", [top_k_indices], ["indices"], to=to))
        model = make_model(
            nodes,
            [value_info("input", compute_dtype, source.sizes)],
            [value_info("values", compute_dtype, expected), value_info("indices", index_dtype, expected)],
            [k],
        )

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            data = arrays[0]
            assert data is not None, "a bridged input is never bound in device memory"
            if mapped_uint64:
                # Flipping the top bit maps unsigned order onto signed order exactly.
                return {"input": (data ^ _UINT64_FLIP).view(np.int64)}
            return {"input": np.ascontiguousarray(data, dtype=compute_dtype)}

        widened = compute_dtype != feed_dtype
        index_type = indices.dtype

        def finish(outputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
            top_values, top_indices = outputs
            if mapped_uint64:
                top_values = top_values.view(np.uint64) ^ _UINT64_FLIP
            elif widened:
                top_values = top_values.astype(feed_dtype)
            return [top_values, top_indices.astype(index_type, copy=False)]

        if not mapped_uint64 and compute_dtype == feed_dtype:
            # The input is fed as it is (the default bridge), so it may stay in device memory; so may the outputs
            # where the index cast is in the graph (they are then the output tensors as they are: the default too).
            return Plan(
                (source,),
                (values, indices),
                model,
                finish=finish if native else same_outputs,
                direct_inputs=("input",),
                direct_outputs=not native,
            )
        return Plan((source,), (values, indices), model, prepare, finish, direct_inputs=(None,))


class TopK(_TopKBase[operators_pb2.TopKOperatorDesc]):
    case: ClassVar[str] = "top_k"


class TopK1(_TopKBase[operators_pb2.TopK1OperatorDesc]):
    case: ClassVar[str] = "top_k1"

    def direction(self, desc: operators_pb2.TopK1OperatorDesc, tensors: Tensors) -> int:
        return axis_direction(desc.axis_direction, tensors)
