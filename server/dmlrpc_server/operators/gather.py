"""DML_GATHER*_OPERATOR_DESC: gather by index along an axis, by element and by index tuple."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
import onnx

from dmlrpc.codec import TensorLayout
from dmlrpc.v1 import operators_pb2
from dmlrpc_server.operators._indices import checked_indices
from dmlrpc_server.operators._support import elements_axis, same_rank, same_type
from dmlrpc_server.operators.base import Operator, Plan, Tensors, make_model, require, value_info

#: Where a gather's index values are bound in a request.
INDICES_DATA = "inputs[1].buffer.data"

# Data types: a gather only moves elements, and ONNX Runtime's CPU Gather, GatherElements and GatherND kernels take
# every DirectML data type (FLOAT16 and the unsigned types included), so the data reaches the model in its own type
# and the results are bit-exact. Index values are range-checked and normalised to non-negative INT64 on the host.


def check_common(tensors: Tensors) -> tuple[TensorLayout, TensorLayout, TensorLayout]:
    """The rules every gather shares: one DimensionCount for all three tensors, output typed as the input."""
    source, indices, output = tensors["input_tensor"], tensors["indices_tensor"], tensors["output_tensor"]
    same_rank(tensors, ("indices_tensor", "output_tensor"))
    same_type(tensors, ("output_tensor",))
    return source, indices, output


def check_meaningful(tensors: Tensors, name: str, count: int, count_field: str) -> tuple[int, ...]:
    """The last ``count`` sizes of a tensor (``count`` in [1, DimensionCount]); the dimensions before them must be 1."""
    sizes = tensors[name].sizes
    rank = len(sizes)
    require(
        1 <= count <= rank,
        tensors.field(count_field),
        f"{count} is out of range: 1 <= count <= {rank} (the dimension count)",
    )
    require(
        all(size == 1 for size in sizes[: rank - count]),
        f"{tensors.field(name)}.buffer.sizes",
        f"sizes {list(sizes)}: the {rank - count} dimensions before the last {count} meaningful ones must be 1",
    )
    return sizes[rank - count :]


def require_output_sizes(tensors: Tensors, shape: tuple[int, ...], rule: str) -> None:
    """The output sizes must be ``shape`` right-aligned to the DimensionCount (padded with leading 1s)."""
    output = tensors["output_tensor"]
    rank = len(output.sizes)
    field = f"{tensors.field('output_tensor')}.buffer.sizes"
    require(
        len(shape) <= rank,
        field,
        f"these tensors give an output of {len(shape)} dimensions {list(shape)}, more than the {rank} it has",
    )
    expected = (1,) * (rank - len(shape)) + shape
    require(output.sizes == expected, field, f"sizes {list(output.sizes)} must be {list(expected)} ({rule})")


def contiguous(values: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """A decoded input as a C-contiguous array of the model's shape."""
    return np.ascontiguousarray(values).reshape(tuple(shape))


def gather_plan(
    tensors: Tensors,
    node: onnx.NodeProto,
    data_shape: tuple[int, ...],
    indices_shape: tuple[int, ...],
    result_shape: tuple[int, ...],
    check: Callable[[np.ndarray], np.ndarray],
) -> Plan:
    """A one-node model fed the data (``data_shape``) and the checked INT64 indices (``indices_shape``); its
    ``result_shape`` output reshaped to the output sizes; ``check`` range-checks and normalises the indices."""
    source, indices, output = tensors["input_tensor"], tensors["indices_tensor"], tensors["output_tensor"]
    model = make_model(
        [node],
        [
            value_info("input", source.dtype, data_shape),
            value_info("indices", np.dtype(np.int64), indices_shape),
        ],
        [value_info("output", source.dtype, result_shape)],
    )

    def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
        data, index_values = arrays
        assert index_values is not None
        feeds = {"indices": check(index_values).reshape(indices_shape)}
        # The data may be absent here: bound in device memory as it is (``direct_inputs``).
        if data is not None:
            feeds["input"] = contiguous(data, data_shape)
        return feeds

    def finish(outputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
        return [outputs[0].reshape(output.sizes)]

    same_result = tuple(result_shape) == tuple(output.sizes)
    return Plan(
        (source, indices),
        (output,),
        model,
        prepare,
        finish,
        direct_inputs=("input" if tuple(data_shape) == tuple(source.sizes) else None, None),
        direct_outputs=same_result,
    )


class Gather(Operator[operators_pb2.GatherOperatorDesc]):
    case: ClassVar[str] = "gather"

    def lower(self, desc: operators_pb2.GatherOperatorDesc, tensors: Tensors) -> Plan:
        source, indices, _ = check_common(tensors)
        rank = len(source.sizes)
        axis, index_dimensions = desc.axis, desc.index_dimensions
        require(axis < rank, tensors.field("axis"), f"axis {axis} is not less than the dimension count {rank}")
        # The page states [0, IndicesTensor.DimensionCount), but its own first example (1-D indices {5} with
        # IndexDimensions 1) needs the bound inclusive, as GATHER_ND's counts are: accept [0, DimensionCount].
        require(
            index_dimensions <= rank,
            tensors.field("index_dimensions"),
            f"{index_dimensions} is out of range: 0 <= index_dimensions <= {rank} (the dimension count)",
        )
        require(
            all(size == 1 for size in indices.sizes[: rank - index_dimensions]),
            f"{tensors.field('indices_tensor')}.buffer.sizes",
            f"sizes {list(indices.sizes)}: the {rank - index_dimensions} dimensions before the last "
            f"{index_dimensions} meaningful ones must be 1",
        )
        indices_shape = indices.sizes[rank - index_dimensions :]
        # ONNX Gather's output: input sizes before the axis, the meaningful indices sizes, input sizes after it.
        # DirectML right-aligns that to the DimensionCount: IndexDimensions - 1 leading sizes are cropped (they must
        # be 1: else the relevant output rank, input rank + IndexDimensions - 1, exceeds the DimensionCount), or one
        # leading 1 is added for IndexDimensions 0 (a single index removes the axis).
        result_shape = source.sizes[:axis] + indices_shape + source.sizes[axis + 1 :]
        excess = len(result_shape) - rank
        require(
            all(size == 1 for size in result_shape[: max(excess, 0)]),
            tensors.field("index_dimensions"),
            f"{index_dimensions} index dimensions along axis {axis} give an output of sizes {list(result_shape)}, "
            f"which does not fit {rank} dimensions (the relevant output rank exceeds the dimension count)",
        )
        require_output_sizes(
            tensors,
            result_shape[max(excess, 0) :],
            f"input sizes before axis {axis}, the last {index_dimensions} indices sizes, then the input sizes after "
            "the axis, right-aligned",
        )
        bound = np.asarray(source.sizes[axis], dtype=np.int64)
        node = onnx.helper.make_node("Gather", ["input", "indices"], ["output"], axis=int(axis))

        def check(values: np.ndarray) -> np.ndarray:
            return checked_indices(values, bound, field=INDICES_DATA, axis=axis)

        return gather_plan(tensors, node, source.sizes, indices_shape, result_shape, check)


class GatherElements(Operator[operators_pb2.GatherElementsOperatorDesc]):
    case: ClassVar[str] = "gather_elements"

    def lower(self, desc: operators_pb2.GatherElementsOperatorDesc, tensors: Tensors) -> Plan:
        source, indices, _ = check_common(tensors)
        axis = desc.axis
        elements_axis(tensors, axis, "output_tensor")
        bound = np.asarray(source.sizes[axis], dtype=np.int64)
        node = onnx.helper.make_node("GatherElements", ["input", "indices"], ["output"], axis=int(axis))

        def check(values: np.ndarray) -> np.ndarray:
            return checked_indices(values, bound, field=INDICES_DATA, axis=axis)

        return gather_plan(tensors, node, source.sizes, indices.sizes, indices.sizes, check)


def lower_nd(tensors: Tensors, input_count: int, indices_count: int, batch_count: int, batch_field: str | None) -> Plan:
    """GATHER_ND and GATHER_ND1 (``batch_field`` None: GATHER_ND, whose batch count is 0)."""
    source, indices, _ = check_common(tensors)
    rank = len(source.sizes)
    data_shape = check_meaningful(tensors, "input_tensor", input_count, "input_dimension_count")
    indices_shape = check_meaningful(tensors, "indices_tensor", indices_count, "indices_dimension_count")
    tuple_size = indices.sizes[-1]
    tuple_field = f"{tensors.field('indices_tensor')}.buffer.sizes[{rank - 1}]"
    require(
        tuple_size <= input_count,
        tuple_field,
        f"index tuple size {tuple_size} exceeds input_dimension_count {input_count}",
    )
    if batch_field is not None:
        require(
            batch_count < rank,
            tensors.field(batch_field),
            f"{batch_count} is out of range: 0 <= batch_dimension_count < {rank} (the dimension count)",
        )
        # The batch dimensions are the first meaningful ones of every tensor: the indices need one more meaningful
        # dimension for the tuples, and the input room for the batches and the tuple's dimensions after them.
        require(
            batch_count < indices_count,
            tensors.field(batch_field),
            f"{batch_count} batch dimensions leave no index tuple dimension among indices_dimension_count "
            f"{indices_count}",
        )
        require(
            batch_count + tuple_size <= input_count,
            tensors.field(batch_field),
            f"{batch_count} batch dimensions and index tuples of {tuple_size} exceed input_dimension_count "
            f"{input_count}",
        )
        for d in range(batch_count):
            position = rank - indices_count + d
            require(
                indices_shape[d] == data_shape[d],
                f"{tensors.field('indices_tensor')}.buffer.sizes[{position}]",
                f"batch dimension {d}: {indices_shape[d]} must equal input_tensor's size {data_shape[d]} "
                f"(sizes[{rank - input_count + d}])",
            )
    # The page's literal formula takes the input's last indexTupleSize sizes; its examples (and ONNX GatherND) take
    # the meaningful input sizes after the batch dimensions and the tuple's ones: the examples are authoritative.
    result_shape = indices_shape[:-1] + data_shape[batch_count + tuple_size :]
    require_output_sizes(
        tensors,
        result_shape,
        "the meaningful indices sizes without the tuple dimension, then the meaningful input sizes after the batch "
        f"dimensions and the first {tuple_size} indexed ones, right-aligned",
    )
    bounds = np.array(data_shape[batch_count : batch_count + tuple_size], dtype=np.int64)
    first_dimension = rank - input_count + batch_count
    node = onnx.helper.make_node("GatherND", ["input", "indices"], ["output"], batch_dims=int(batch_count))

    def check(values: np.ndarray) -> np.ndarray:
        return checked_indices(values, bounds, field=INDICES_DATA, dimension_offset=first_dimension, tuple_axis=True)

    return gather_plan(tensors, node, data_shape, indices_shape, result_shape, check)


class GatherNd(Operator[operators_pb2.GatherNdOperatorDesc]):
    case: ClassVar[str] = "gather_nd"

    def lower(self, desc: operators_pb2.GatherNdOperatorDesc, tensors: Tensors) -> Plan:
        return lower_nd(tensors, desc.input_dimension_count, desc.indices_dimension_count, 0, None)


class GatherNd1(Operator[operators_pb2.GatherNd1OperatorDesc]):
    case: ClassVar[str] = "gather_nd1"

    def lower(self, desc: operators_pb2.GatherNd1OperatorDesc, tensors: Tensors) -> Plan:
        return lower_nd(
            tensors,
            desc.input_dimension_count,
            desc.indices_dimension_count,
            desc.batch_dimension_count,
            "batch_dimension_count",
        )


#: This module's operators, for the registry.
OPERATORS: tuple[Operator[Any], ...] = (Gather(), GatherElements(), GatherNd(), GatherNd1())
