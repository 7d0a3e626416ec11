"""DML_JOIN and DML_SPLIT_OPERATOR_DESC: tensor arrays joined along or split across an axis."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import onnx

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators.base import Operator, Plan, Tensors, make_model, require, value_info


def _check_pieces(
    tensors: Tensors,
    whole: TensorLayout,
    whole_field: str,
    pieces: tuple[TensorLayout, ...],
    pieces_field: str,
    count_field: str,
    count: int,
    axis: int,
) -> None:
    """The rules JOIN and SPLIT share: the count, the axis, one type and rank, sizes equal off the axis and summing
    to the whole's along it."""
    require(
        count == len(pieces),
        tensors.field(count_field),
        f"{count} differs from the {len(pieces)} tensor descs of {pieces_field}",
    )
    rank = len(whole.sizes)
    require(axis < rank, tensors.field("axis"), f"axis {axis} is not less than the dimension count {rank}")
    for i, piece in enumerate(pieces):
        path = f"{tensors.field(pieces_field)}[{i}].buffer"
        require(piece.data_type == whole.data_type, f"{path}.data_type", f"must equal {whole_field}'s data type")
        require(
            len(piece.sizes) == rank,
            f"{path}.sizes",
            f"{len(piece.sizes)} dimensions; {whole_field} has {rank} and every tensor must have as many",
        )
        others = [size for d, size in enumerate(piece.sizes) if d != axis]
        expected = [size for d, size in enumerate(whole.sizes) if d != axis]
        require(
            others == expected,
            f"{path}.sizes",
            f"sizes {list(piece.sizes)} must equal {whole_field}'s {list(whole.sizes)} in every dimension but the "
            f"axis ({axis})",
        )
    total = sum(piece.sizes[axis] for piece in pieces)
    require(
        total == whole.sizes[axis],
        f"{tensors.field(whole_field)}.buffer.sizes[{axis}]",
        f"{whole.sizes[axis]} differs from the sum of {pieces_field}' sizes along the axis ({total})",
    )


class Join(Operator[operators_pb2.JoinOperatorDesc]):
    case: ClassVar[str] = "join"

    def lower(self, desc: operators_pb2.JoinOperatorDesc, tensors: Tensors) -> Plan:
        pieces = tensors.arrays["input_tensors"]
        output = tensors["output_tensor"]
        _check_pieces(
            tensors, output, "output_tensor", pieces, "input_tensors", "input_count", desc.input_count, desc.axis
        )
        names = [f"input{i}" for i in range(len(pieces))]
        node = onnx.helper.make_node("Concat", names, ["output"], axis=int(desc.axis))
        model = make_model(
            [node],
            [value_info(name, piece.dtype, piece.sizes) for name, piece in zip(names, pieces, strict=True)],
            [value_info("output", output.dtype, output.sizes)],
        )

        return Plan(pieces, (output,), model, input_arrays=(len(pieces),))


class Split(Operator[operators_pb2.SplitOperatorDesc]):
    case: ClassVar[str] = "split"

    def lower(self, desc: operators_pb2.SplitOperatorDesc, tensors: Tensors) -> Plan:
        source = tensors["input_tensor"]
        pieces = tensors.arrays["output_tensors"]
        _check_pieces(
            tensors, source, "input_tensor", pieces, "output_tensors", "output_count", desc.output_count, desc.axis
        )
        names = [f"output{i}" for i in range(len(pieces))]
        split = onnx.numpy_helper.from_array(np.array([p.sizes[desc.axis] for p in pieces], np.int64), "split")
        node = onnx.helper.make_node("Split", ["input", "split"], names, axis=int(desc.axis))
        model = make_model(
            [node],
            [value_info("input", source.dtype, source.sizes)],
            [value_info(name, piece.dtype, piece.sizes) for name, piece in zip(names, pieces, strict=True)],
            [split],
        )

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            (data,) = arrays
            assert data is not None
            return {"input": np.ascontiguousarray(data)}

        return Plan((source,), pieces, model, prepare, output_arrays=(len(pieces),))


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (Join(), Split())
