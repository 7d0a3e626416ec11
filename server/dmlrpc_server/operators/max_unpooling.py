"""DML_MAX_UNPOOLING_OPERATOR_DESC: each input value written at its flat output index, zeros elsewhere."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._graph import F32, I64, Graph
from dmlrpc_server.operators._indices import checked_indices, reject_overlaps
from dmlrpc_server.operators.base import Operator, Plan, Tensors, require


class MaxUnpooling(Operator[operators_pb2.MaxUnpoolingOperatorDesc]):
    """Zeros of the output's sizes with each input value written at its flat output index (ScatterElements)."""

    case: ClassVar[str] = "max_unpooling"

    def lower(self, desc: operators_pb2.MaxUnpoolingOperatorDesc, tensors: Tensors) -> Plan:
        source, indices, output = tensors["input_tensor"], tensors["indices_tensor"], tensors["output_tensor"]
        require(
            output.data_type == source.data_type,
            f"{tensors.field('output_tensor')}.buffer.data_type",
            "must equal input_tensor's data type",
        )
        require(
            indices.sizes == source.sizes,
            f"{tensors.field('indices_tensor')}.buffer.sizes",
            f"sizes {list(indices.sizes)} must equal input_tensor's {list(source.sizes)}",
        )
        count = int(np.prod(source.sizes, dtype=np.int64))
        total = int(np.prod(output.sizes, dtype=np.int64))
        graph = Graph()
        values = graph.input("input", source.dtype, (count,))
        targets = graph.input("indices", I64, (count,))
        zeros = graph.cast(graph.op("ConstantOfShape", graph.const([total], I64), dtype=F32), source.dtype)
        scattered = graph.op("ScatterElements", zeros, targets, values, axis=0)
        graph.output(graph.op("Reshape", scattered, graph.const(list(output.sizes), I64)), "output", output.sizes)
        bounds = np.array(total, np.int64)

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            data, index_values = arrays
            assert data is not None and index_values is not None
            targets = checked_indices(index_values, bounds, field="inputs[1].buffer.data", axis=0)
            # The page leaves duplicate targets undefined (which value lands is up to the hardware): refused.
            reject_overlaps(targets, field="inputs[1].buffer.data", what="indices_tensor positions")
            return {"input": np.ascontiguousarray(data).reshape(-1), "indices": targets.reshape(-1)}

        return Plan((source, indices), (output,), graph.model(), prepare)


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (MaxUnpooling(),)
