"""DirectML data-type groups used by the operators' tensor-support tables."""

from __future__ import annotations

from dmlrpc.v1 import tensor_pb2

DT = tensor_pb2.TensorDataType

FLOAT16_32 = frozenset({DT.TENSOR_DATA_TYPE_FLOAT32, DT.TENSOR_DATA_TYPE_FLOAT16})
#: FLOAT32, FLOAT16 and the 8-32 bit integers: the "2.1" data column of the scatter/gather/top-k pages.
UP_TO_32_BIT = FLOAT16_32 | {
    DT.TENSOR_DATA_TYPE_INT32,
    DT.TENSOR_DATA_TYPE_INT16,
    DT.TENSOR_DATA_TYPE_INT8,
    DT.TENSOR_DATA_TYPE_UINT32,
    DT.TENSOR_DATA_TYPE_UINT16,
    DT.TENSOR_DATA_TYPE_UINT8,
}
INT64_UINT64 = frozenset({DT.TENSOR_DATA_TYPE_INT64, DT.TENSOR_DATA_TYPE_UINT64})
FLOAT64 = frozenset({DT.TENSOR_DATA_TYPE_FLOAT64})
UINT32 = frozenset({DT.TENSOR_DATA_TYPE_UINT32})
UINT32_64 = frozenset({DT.TENSOR_DATA_TYPE_UINT32, DT.TENSOR_DATA_TYPE_UINT64})
#: Index tensors from feature level 3.0.
INDEX_TYPES = frozenset(
    {DT.TENSOR_DATA_TYPE_INT32, DT.TENSOR_DATA_TYPE_INT64, DT.TENSOR_DATA_TYPE_UINT32, DT.TENSOR_DATA_TYPE_UINT64}
)
