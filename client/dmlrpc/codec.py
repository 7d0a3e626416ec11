"""The NumPy codec shared by client and server: data types, DMLCalcBufferTensorSize, arrays <-> buffers."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final, cast

import numpy as np
import numpy.typing as npt

from dmlrpc.errors import ArgumentTypeError, ArgumentValueError
from dmlrpc.v1 import tensor_pb2

__all__ = [
    "DATA_TYPE_BY_DTYPE",
    "DTYPE_BY_DATA_TYPE",
    "DTYPE_NAMES",
    "ELEMENT_BITS",
    "MAX_DIMENSION_COUNT",
    "MAX_ELEMENT_COUNT",
    "TensorLayout",
    "calc_buffer_tensor_size",
    "data_type_name",
    "decode",
    "encode",
    "encode_into",
    "over_element_bound",
    "over_request_limits",
    "over_tensor_limits",
    "packed_bytes",
    "packed_strides",
    "tensor_desc",
]

DT = tensor_pb2.TensorDataType

#: DML_TENSOR_DIMENSION_COUNT_MAX1: the most dimensions any DirectML tensor can have.
MAX_DIMENSION_COUNT: Final = 8
#: "The total size of a buffer tensor may not exceed (2^32 - 1) elements" (DML_BUFFER_TENSOR_DESC).
MAX_ELEMENT_COUNT: Final = 2**32 - 1

#: Element size in bits of every DML_TENSOR_DATA_TYPE (DMLCalcBufferTensorSize's table).
ELEMENT_BITS: Final[dict[int, int]] = {
    DT.TENSOR_DATA_TYPE_FLOAT32: 32,
    DT.TENSOR_DATA_TYPE_FLOAT16: 16,
    DT.TENSOR_DATA_TYPE_UINT32: 32,
    DT.TENSOR_DATA_TYPE_UINT16: 16,
    DT.TENSOR_DATA_TYPE_UINT8: 8,
    DT.TENSOR_DATA_TYPE_INT32: 32,
    DT.TENSOR_DATA_TYPE_INT16: 16,
    DT.TENSOR_DATA_TYPE_INT8: 8,
    DT.TENSOR_DATA_TYPE_FLOAT64: 64,
    DT.TENSOR_DATA_TYPE_UINT64: 64,
    DT.TENSOR_DATA_TYPE_INT64: 64,
    DT.TENSOR_DATA_TYPE_UINT4: 4,
    DT.TENSOR_DATA_TYPE_INT4: 4,
}

#: The little-endian NumPy dtype of every DML data type NumPy can hold (all but the 4-bit types).
DTYPE_BY_DATA_TYPE: Final[dict[int, np.dtype[np.generic]]] = {
    DT.TENSOR_DATA_TYPE_FLOAT32: np.dtype("<f4"),
    DT.TENSOR_DATA_TYPE_FLOAT16: np.dtype("<f2"),
    DT.TENSOR_DATA_TYPE_UINT32: np.dtype("<u4"),
    DT.TENSOR_DATA_TYPE_UINT16: np.dtype("<u2"),
    DT.TENSOR_DATA_TYPE_UINT8: np.dtype("u1"),
    DT.TENSOR_DATA_TYPE_INT32: np.dtype("<i4"),
    DT.TENSOR_DATA_TYPE_INT16: np.dtype("<i2"),
    DT.TENSOR_DATA_TYPE_INT8: np.dtype("i1"),
    DT.TENSOR_DATA_TYPE_FLOAT64: np.dtype("<f8"),
    DT.TENSOR_DATA_TYPE_UINT64: np.dtype("<u8"),
    DT.TENSOR_DATA_TYPE_INT64: np.dtype("<i8"),
}

#: The DML data type of every NumPy dtype the codec accepts (any byte order; bool travels as UINT8).
DATA_TYPE_BY_DTYPE: Final[dict[np.dtype[np.generic], int]] = {
    **{dtype: data_type for data_type, dtype in DTYPE_BY_DATA_TYPE.items()},
    **{dtype.newbyteorder(">"): data_type for data_type, dtype in DTYPE_BY_DATA_TYPE.items()},
    np.dtype(np.bool_): DT.TENSOR_DATA_TYPE_UINT8,
}
#: The names of the NumPy dtypes the codec takes, for messages: "bool", "float16", ... "uint8".
DTYPE_NAMES: Final = tuple(sorted({d.newbyteorder("=").name for d in DATA_TYPE_BY_DTYPE}))


def data_type_name(data_type: int) -> str:
    """Return the DirectML-style name of a data type value (``FLOAT32``), or the number if it is unknown."""
    try:
        return DT.Name(data_type).removeprefix("TENSOR_DATA_TYPE_")  # type: ignore[arg-type]
    except ValueError:
        return str(data_type)


def packed_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Row-major element strides of a packed tensor with these sizes."""
    strides = []
    step = 1
    for size in reversed(sizes):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def calc_buffer_tensor_size(data_type: int, sizes: Sequence[int], strides: Sequence[int] | None = None) -> int:
    """DMLCalcBufferTensorSize: the minimum buffer size in bytes, rounded up to a multiple of 4.

    Computed in unbounded integers (DirectML's 32-bit accumulator would wrap; callers reject the element
    limit separately). Unknown data types give 0, as DirectML's helper does.
    """
    bits_per_element = ELEMENT_BITS.get(data_type, 0)
    if not bits_per_element:
        return 0
    if strides:
        element_count = sum((size - 1) * stride for size, stride in zip(sizes, strides, strict=True)) + 1
    else:
        element_count = 1
        for size in sizes:
            element_count *= size
    byte_count = (element_count * bits_per_element + 7) // 8
    return (byte_count + 3) & ~3


class Described:
    """A tensor known by its desc (a resident tensor, a graph's tensor): its shape and dtype as NumPy's, read from
    the desc."""

    desc: tensor_pb2.TensorDesc

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.desc.buffer.sizes)

    @property
    def dtype(self) -> np.dtype[Any]:
        return DTYPE_BY_DATA_TYPE[self.desc.buffer.data_type]


@dataclass(frozen=True)
class TensorLayout:
    """A validated buffer tensor: its NumPy dtype, shape, element strides and buffer size in bytes."""

    data_type: int
    dtype: np.dtype[np.generic]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    total_bytes: int

    @classmethod
    def of(cls, desc: tensor_pb2.BufferTensorDesc) -> TensorLayout:
        """Layout of a buffer desc whose data type NumPy can hold (the caller has validated it)."""
        sizes = tuple(desc.sizes)
        strides = tuple(desc.strides) if desc.strides else packed_strides(sizes)
        dtype = DTYPE_BY_DATA_TYPE[desc.data_type]
        return cls(desc.data_type, dtype, sizes, strides, desc.total_tensor_size_in_bytes)

    @cached_property
    def is_packed(self) -> bool:
        """Whether the elements are stored row-major without gaps (strides equal the packed strides)."""
        return all(
            size == 1 or stride == packed
            for size, stride, packed in zip(self.sizes, self.strides, packed_strides(self.sizes), strict=True)
        )

    @cached_property
    def byte_strides(self) -> tuple[int, ...]:
        return tuple(stride * self.dtype.itemsize for stride in self.strides)

    @cached_property
    def element_count(self) -> int:
        count = 1
        for size in self.sizes:
            count *= size
        return count

    @cached_property
    def packed_bytes(self) -> int:
        """Bytes of the logical tensor stored packed (a broadcast input counts every logical element)."""
        return self.element_count * self.dtype.itemsize


def tensor_desc(
    array_or_spec: npt.ArrayLike | tuple[npt.DTypeLike, Sequence[int]],
    strides: Sequence[int] | None = None,
    *,
    total_tensor_size_in_bytes: int | None = None,
    flags: int = 0,
) -> tensor_pb2.TensorDesc:
    """Build a DML_TENSOR_DESC for an array, or for a ``(dtype, shape)`` pair.

    Args:
        array_or_spec: a NumPy array (its dtype and shape are used) or a ``(dtype, shape)`` tuple.
        strides: element strides of the buffer layout; ``None`` for packed (the desc then has no strides).
        total_tensor_size_in_bytes: defaults to ``DMLCalcBufferTensorSize``.
        flags: ``DML_TENSOR_FLAGS`` bits.

    Returns:
        A ``TensorDesc`` whose buffer desc is filled the way DirectMLX fills one.
    """
    if isinstance(array_or_spec, tuple) and len(array_or_spec) == 2 and not isinstance(array_or_spec[0], int):
        try:
            dtype = np.dtype(array_or_spec[0])
        except TypeError:
            raise ArgumentTypeError(
                "array_or_spec", f"tensor_desc: {array_or_spec[0]!r} is not a NumPy dtype", allowed=DTYPE_NAMES
            ) from None
        try:
            shape = tuple(operator.index(s) for s in array_or_spec[1])
        except TypeError:
            raise ArgumentTypeError(
                "array_or_spec", f"tensor_desc: shape {array_or_spec[1]!r} is not a sequence of ints"
            ) from None
    else:
        array = np.asarray(array_or_spec)
        dtype, shape = array.dtype, array.shape
    if any(size < 0 for size in shape):
        raise ArgumentValueError("array_or_spec", f"tensor_desc: shape {shape} has a negative size")
    data_type = _data_type_of(dtype)
    sizes = shape or (1,)  # DirectML has no 0-d tensors: a scalar is a {1} tensor.
    stride_list = list(strides) if strides is not None else []
    if stride_list and len(stride_list) != len(sizes):
        raise ArgumentValueError(
            "strides",
            f"tensor_desc: strides has {len(stride_list)} entries for shape {shape}: one per dimension "
            f"({len(sizes)}), or None for packed",
        )
    if total_tensor_size_in_bytes is None:
        total_tensor_size_in_bytes = calc_buffer_tensor_size(data_type, sizes, stride_list or None)
    buffer = tensor_pb2.BufferTensorDesc(
        data_type=data_type,  # type: ignore[arg-type]
        flags=flags,
        sizes=sizes,
        strides=stride_list,
        total_tensor_size_in_bytes=total_tensor_size_in_bytes,
    )
    return tensor_pb2.TensorDesc(buffer=buffer)


# NOTE: the size rules below are worded once, for the server's refusals and the SDK's checks before it encodes
# anything: a caller sees the same message from either.


def over_element_bound(element_count: int) -> str | None:
    """What is wrong with a buffer tensor of ``element_count`` elements by DirectML's own bound (its field is the
    tensor's ``sizes``; INVALID_ARGUMENT), or None."""
    if element_count > MAX_ELEMENT_COUNT:
        return f"{element_count} elements; a buffer tensor has at most 2^32 - 1 elements"
    return None


def over_tensor_limits(
    path: str,
    total_bytes: int,
    element_count: int,
    element_bytes: int,
    *,
    max_tensor_bytes: int,
    max_tensor_elements: int,
) -> str | None:
    """The RESOURCE_EXHAUSTED message for the buffer tensor at ``path`` over a server's per-tensor limits, or None.
    A broadcast (stride 0) tensor counts at its logical size: the server materialises it."""
    if total_bytes > max_tensor_bytes:
        return (
            f"{path}.total_tensor_size_in_bytes = {total_bytes} exceeds the limit of {max_tensor_bytes} bytes "
            "per tensor (the server's --max-tensor-bytes)"
        )
    if element_count > max_tensor_elements:
        return (
            f"{path}.sizes: {element_count} elements exceed the limit of {max_tensor_elements} elements per "
            "tensor (the server's --max-tensor-elements)"
        )
    logical_bytes = element_count * element_bytes
    if logical_bytes > max_tensor_bytes:
        return (
            f"{path}.sizes: {element_count} elements ({logical_bytes} bytes once materialised) exceed the limit of "
            f"{max_tensor_bytes} bytes per tensor (the server's --max-tensor-bytes)"
        )
    return None


def over_request_limits(
    total_bytes: int, elements: int, *, max_request_bytes: int, max_request_elements: int
) -> str | None:
    """The RESOURCE_EXHAUSTED message for a request whose tensors total ``total_bytes`` and ``elements``, or None."""
    if total_bytes > max_request_bytes:
        return (
            f"the request's tensors total {total_bytes} bytes, over the limit of {max_request_bytes} "
            "(the server's --max-request-bytes)"
        )
    if elements > max_request_elements:
        return (
            f"the request's tensors total {elements} elements, over the limit of {max_request_elements} "
            "(the server's --max-request-elements)"
        )
    return None


def _data_type_of(dtype: np.dtype[np.generic]) -> int:
    try:
        return DATA_TYPE_BY_DTYPE[dtype]
    except KeyError:
        raise ArgumentTypeError(
            "dtype", f"NumPy dtype {dtype} has no DirectML tensor data type", allowed=DTYPE_NAMES
        ) from None


def encode(array: npt.ArrayLike, layout: TensorLayout) -> bytes:
    """Lay an array out in a buffer as ``layout`` says and return the buffer's bytes.

    The array must have the layout's shape (a 0-d array stands for a {1} tensor) and is converted to the
    layout's dtype only if its dtype differs. A packed layout costs one copy (``tobytes``); strided layouts
    are written into a zeroed buffer, so gaps between elements are zero.
    """
    data = np.asarray(array)
    if data.shape != layout.sizes and not (data.shape == () and layout.sizes == (1,)):
        raise ValueError(f"array of shape {data.shape} does not match tensor sizes {list(layout.sizes)}")
    if data.dtype != layout.dtype:
        data = data.astype(layout.dtype)
    if layout.is_packed:
        raw = data.tobytes()
        if len(raw) < layout.total_bytes:
            raw += bytes(layout.total_bytes - len(raw))
        return raw
    buffer = bytearray(layout.total_bytes)
    _strided_view(memoryview(buffer), layout, writeable=True)[...] = data.reshape(layout.sizes)
    return bytes(buffer)


def encode_into(array: npt.ArrayLike, layout: TensorLayout, buffer: memoryview | bytearray | np.ndarray) -> None:
    """Lay an array out in ``buffer`` (at least ``layout.total_bytes`` long) as ``layout`` says.

    Every byte of the first ``total_bytes`` is written: elements where the layout puts them, zero everywhere else
    (gaps between strided elements, padding), so a reused buffer never shows earlier contents.
    """
    data = np.asarray(array)
    if data.shape != layout.sizes and not (data.shape == () and layout.sizes == (1,)):
        raise ValueError(f"array of shape {data.shape} does not match tensor sizes {list(layout.sizes)}")
    target = memoryview(cast(Any, buffer)).cast("B")[: layout.total_bytes]  # NumPy's stubs lack __buffer__
    raw = np.frombuffer(target, np.uint8)
    if layout.is_packed:
        body = data.size * layout.dtype.itemsize
        np.copyto(raw[:body].view(layout.dtype).reshape(layout.sizes), data.reshape(layout.sizes), casting="unsafe")
        raw[body:] = 0
        return
    raw[:] = 0
    _strided_view(target, layout, writeable=True)[...] = data.reshape(layout.sizes)


def packed_bytes(array: np.ndarray, layout: TensorLayout) -> memoryview | None:
    """``array``'s own bytes, no copy, when they already are ``layout``'s buffer (a packed layout of its dtype, as
    many bytes, the array C-contiguous); else ``None``. The caller checks the shape where it matters."""
    if not (
        layout.is_packed
        and array.dtype == layout.dtype
        and array.nbytes == layout.total_bytes
        and array.flags.c_contiguous
    ):
        return None
    # NOTE: a third of the cost of reshape(-1).view(np.uint8).data; a cast refuses a shape with a zero in it, hence
    # the empty case. NumPy's stubs lack __buffer__.
    return memoryview(array).cast("B") if array.size else _EMPTY  # type: ignore[arg-type]


#: The bytes of an empty array.
_EMPTY = memoryview(b"")


def decode(data: bytes | bytearray | memoryview | np.ndarray, layout: TensorLayout) -> np.ndarray:
    """View a buffer's bytes as the array ``layout`` describes, without copying.

    The result is a read-only view; strided and broadcast (stride 0) layouts give a strided view. The caller has
    checked that ``data`` is at least ``layout.total_bytes`` long.
    """
    # NOTE: no typing.cast (a call per buffer): NumPy's stubs lack __buffer__.
    view = memoryview(data)  # type: ignore[arg-type]
    if layout.is_packed:  # NOTE: _strided_view's common case written out: the server decodes every input so
        packed = np.frombuffer(view, layout.dtype, layout.element_count).reshape(layout.sizes)
        if not view.readonly:  # a view of read-only bytes (a request's) is read-only already
            packed.flags.writeable = False
        return packed
    return _strided_view(view, layout, writeable=False)


def _strided_view(buffer: memoryview, layout: TensorLayout, *, writeable: bool) -> np.ndarray:
    if layout.is_packed:  # NOTE: reshape is several times cheaper than as_strided for the common case
        packed = np.frombuffer(buffer, dtype=layout.dtype, count=layout.element_count).reshape(layout.sizes)
        if not writeable and not buffer.readonly:  # a view of read-only bytes (a request's) is read-only already
            packed.flags.writeable = False
        return packed
    flat = np.frombuffer(buffer, dtype=layout.dtype, count=_extent(layout))
    return np.lib.stride_tricks.as_strided(flat, shape=layout.sizes, strides=layout.byte_strides, writeable=writeable)


def _extent(layout: TensorLayout) -> int:
    """Number of elements from the first to one past the last element of the layout."""
    return sum((size - 1) * stride for size, stride in zip(layout.sizes, layout.strides, strict=True)) + 1
