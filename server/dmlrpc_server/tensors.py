"""DML_BUFFER_TENSOR_DESC rules shared by every operator, and the tensor-support tables they check against."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from dmlrpc.codec import (
    DTYPE_BY_DATA_TYPE,
    ELEMENT_BITS,
    MAX_DIMENSION_COUNT,
    MAX_ELEMENT_COUNT,
    TensorLayout,
    calc_buffer_tensor_size,
    data_type_name,
    over_element_bound,
    over_tensor_limits,
)
from dmlrpc.v1 import tensor_pb2
from dmlrpc_server.errors import InvalidArgument, ResourceExhausted

_KNOWN_FLAGS = tensor_pb2.TENSOR_FLAG_OWNED_BY_DML


@dataclass(frozen=True)
class TensorRule:
    """One row of an operator's tensor-support table: accepted dimension counts and data types."""

    min_dimension_count: int
    max_dimension_count: int
    data_types: frozenset[int]

    @classmethod
    def of(cls, dimension_counts: tuple[int, int], data_types: Collection[int]) -> TensorRule:
        return cls(dimension_counts[0], dimension_counts[1], frozenset(data_types))


#: The rule for a tensor outside any operator (a resident tensor): every data type NumPy holds, 1-8 dimensions.
ANY_TENSOR = TensorRule(1, MAX_DIMENSION_COUNT, frozenset(DTYPE_BY_DATA_TYPE))


def validate_tensor(
    desc: tensor_pb2.TensorDesc,
    path: str,
    rule: TensorRule,
    *,
    output: bool,
    max_tensor_bytes: int,
    max_tensor_elements: int = MAX_ELEMENT_COUNT,
) -> TensorLayout:
    """Check a tensor desc against DirectML's buffer-desc rules and one support-table row.

    Args:
        desc: the DML_TENSOR_DESC to check.
        path: its field path in the request (used in error messages).
        rule: the operator's support-table row for this tensor.
        output: whether the tensor is written (outputs may not alias).
        max_tensor_bytes: the server's per-tensor size limit.
        max_tensor_elements: the server's per-tensor element limit.

    Returns:
        The tensor's layout.

    Raises:
        InvalidArgument: a rule is broken; the error names the field.
        ResourceExhausted: the tensor is larger than ``max_tensor_bytes`` or ``max_tensor_elements``.
    """
    if desc.WhichOneof("desc") != "buffer":
        raise InvalidArgument(path, "tensor desc type is not set (DML_TENSOR_TYPE_INVALID); set `buffer`")
    buffer = desc.buffer
    path = f"{path}.buffer"
    data_type = buffer.data_type
    if data_type not in ELEMENT_BITS:
        what = "UNKNOWN is never valid" if data_type == 0 else f"{data_type} is not a DML_TENSOR_DATA_TYPE"
        raise InvalidArgument(f"{path}.data_type", f"data type {what}")
    if buffer.flags & ~_KNOWN_FLAGS:
        raise InvalidArgument(f"{path}.flags", f"unknown DML_TENSOR_FLAGS bits {buffer.flags & ~_KNOWN_FLAGS:#x}")
    if buffer.flags & tensor_pb2.TENSOR_FLAG_OWNED_BY_DML:
        raise InvalidArgument(
            f"{path}.flags",
            "DML_TENSOR_FLAG_OWNED_BY_DML tensors are bound at operator initialisation, which Execute does not have",
        )
    sizes = buffer.sizes
    dimension_count = len(sizes)
    if not 1 <= dimension_count <= MAX_DIMENSION_COUNT:
        raise InvalidArgument(
            f"{path}.sizes", f"{dimension_count} dimensions; DirectML tensors have 1 to {MAX_DIMENSION_COUNT}"
        )
    element_count = 1
    for i, size in enumerate(sizes):
        if size == 0:
            raise InvalidArgument(f"{path}.sizes[{i}]", "size 0 is invalid (DirectML has no empty tensors)")
        element_count *= size
    too_many = over_element_bound(element_count)
    if too_many is not None:
        raise InvalidArgument(f"{path}.sizes", too_many)
    strides = buffer.strides
    if strides:
        if len(strides) != dimension_count:
            raise InvalidArgument(
                f"{path}.strides", f"{len(strides)} strides for {dimension_count} sizes; give one per dimension or none"
            )
        last_index = sum((size - 1) * stride for size, stride in zip(sizes, strides, strict=True))
        if last_index + 1 > MAX_ELEMENT_COUNT:
            raise InvalidArgument(f"{path}.strides", f"the last element lies at index {last_index}, beyond 2^32 - 2")
    minimum = calc_buffer_tensor_size(data_type, sizes, strides or None)
    total = buffer.total_tensor_size_in_bytes
    if total < minimum:
        raise InvalidArgument(
            f"{path}.total_tensor_size_in_bytes",
            f"{total} is less than DMLCalcBufferTensorSize = {minimum} for these sizes and strides",
        )
    alignment = buffer.guaranteed_base_offset_alignment
    element_bytes = max(1, ELEMENT_BITS[data_type] // 8)
    if alignment and (alignment & (alignment - 1) or alignment < element_bytes):
        raise InvalidArgument(
            f"{path}.guaranteed_base_offset_alignment",
            f"{alignment} must be 0 or a power of two no smaller than the element size ({element_bytes} bytes)",
        )
    if not rule.min_dimension_count <= dimension_count <= rule.max_dimension_count:
        accepted = (
            str(rule.min_dimension_count)
            if rule.min_dimension_count == rule.max_dimension_count
            else f"{rule.min_dimension_count} to {rule.max_dimension_count}"
        )
        raise InvalidArgument(f"{path}.sizes", f"{dimension_count} dimensions; this tensor supports {accepted}")
    if data_type not in rule.data_types:
        accepted = ", ".join(sorted(data_type_name(t) for t in rule.data_types))
        raise InvalidArgument(
            f"{path}.data_type", f"{data_type_name(data_type)} is not supported here; supported: {accepted}"
        )
    over = over_tensor_limits(
        path,
        total,
        element_count,
        element_bytes,
        max_tensor_bytes=max_tensor_bytes,
        max_tensor_elements=max_tensor_elements,
    )
    if over is not None:
        raise ResourceExhausted(over)
    layout = TensorLayout.of(buffer)
    if output and _may_alias(layout.sizes, layout.strides):
        raise InvalidArgument(
            f"{path}.strides",
            "output strides must not overlap: sorted by stride, each stride must exceed the span of the smaller ones",
        )
    return layout


def _may_alias(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether two distinct elements can share a position: each stride, in ascending order, must clear the
    whole extent of the smaller ones (a sufficient test; it accepts every permuted or padded layout)."""
    extent = 0
    for stride, size in sorted((stride, size) for size, stride in zip(sizes, strides, strict=True) if size > 1):
        if stride <= extent:
            return True
        extent += (size - 1) * stride
    return False
