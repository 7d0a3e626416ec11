"""The NumPy codec: DMLCalcBufferTensorSize, the dtype table, and array <-> buffer round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dmlrpc import codec
from dmlrpc.v1 import tensor_pb2
from tests.strategies import SCATTER_DTYPES, arrays, layouts, shapes

DT = tensor_pb2.TensorDataType


@pytest.mark.parametrize(
    ("data_type", "sizes", "strides", "expected"),
    [
        # The worked examples of DMLCalcBufferTensorSize (rounded up to a multiple of 4 bytes).
        (DT.TENSOR_DATA_TYPE_FLOAT16, [1, 3, 5], None, 32),
        (DT.TENSOR_DATA_TYPE_INT4, [3], None, 4),
        (DT.TENSOR_DATA_TYPE_FLOAT32, [2, 3], [4, 1], 28),
        (DT.TENSOR_DATA_TYPE_FLOAT32, [4, 4], [0, 1], 16),
        (DT.TENSOR_DATA_TYPE_UINT8, [1, 1, 1, 5], None, 8),
        (DT.TENSOR_DATA_TYPE_INT64, [2, 3], None, 48),
        (DT.TENSOR_DATA_TYPE_UNKNOWN, [2, 3], None, 0),
    ],
)
def test_calc_buffer_tensor_size(data_type: int, sizes: list[int], strides: list[int] | None, expected: int) -> None:
    assert codec.calc_buffer_tensor_size(data_type, sizes, strides) == expected


def test_dtype_table_covers_every_data_type_numpy_can_hold() -> None:
    every = {value for value in DT.values() if value != DT.TENSOR_DATA_TYPE_UNKNOWN}
    four_bit = {DT.TENSOR_DATA_TYPE_UINT4, DT.TENSOR_DATA_TYPE_INT4}
    assert set(codec.DTYPE_BY_DATA_TYPE) == every - four_bit
    assert set(codec.ELEMENT_BITS) == every
    for data_type, dtype in codec.DTYPE_BY_DATA_TYPE.items():
        assert dtype.itemsize * 8 == codec.ELEMENT_BITS[data_type]
        assert codec.DATA_TYPE_BY_DTYPE[dtype] == data_type
        assert dtype.byteorder in "<|="


def test_tensor_desc_fills_the_buffer_desc_like_directmlx() -> None:
    desc = codec.tensor_desc(np.zeros((2, 3), np.float16), strides=[4, 1]).buffer
    assert desc.data_type == DT.TENSOR_DATA_TYPE_FLOAT16
    assert list(desc.sizes) == [2, 3] and list(desc.strides) == [4, 1]
    assert desc.total_tensor_size_in_bytes == 16  # (1*4 + 2 + 1) * 2 = 14 -> 16
    scalar = codec.tensor_desc(np.float32(3)).buffer
    assert list(scalar.sizes) == [1]
    with pytest.raises(TypeError, match="complex128"):
        codec.tensor_desc(np.zeros(2, np.complex128))


def test_big_endian_arrays_are_sent_little_endian() -> None:
    array = np.arange(4, dtype=">i4")
    layout = codec.TensorLayout.of(codec.tensor_desc(array).buffer)
    assert codec.encode(array, layout) == np.arange(4, dtype="<i4").tobytes()


def test_packed_decode_is_a_view_without_copy() -> None:
    data = np.arange(6, dtype=np.float32).tobytes()
    layout = codec.TensorLayout.of(codec.tensor_desc((np.float32, (2, 3))).buffer)
    view = codec.decode(data, layout)
    assert not view.flags.writeable and not view.flags.owndata
    np.testing.assert_array_equal(view, np.arange(6).reshape(2, 3))


@given(data=st.data())
def test_round_trip_any_layout(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(SCATTER_DTYPES))
    shape = data.draw(shapes())
    layout_choice = data.draw(layouts(shape, allow_broadcast=False))
    array = data.draw(arrays(dtype, shape))
    layout = codec.TensorLayout.of(codec.tensor_desc(array, layout_choice.strides).buffer)
    raw = codec.encode(array, layout)
    assert len(raw) == layout.total_bytes == codec.calc_buffer_tensor_size(layout.data_type, shape, layout.strides)
    np.testing.assert_array_equal(codec.decode(raw, layout), array)
    # Bytes between strided elements are zero.
    offsets = sum(
        np.arange(size).reshape([-1 if d == axis else 1 for d in range(len(shape))]) * stride
        for axis, (size, stride) in enumerate(zip(shape, layout.byte_strides, strict=True))
    )
    used = np.zeros(layout.total_bytes, dtype=bool)
    for offset in np.ravel(offsets):
        used[offset : offset + array.itemsize] = True
    assert not np.frombuffer(raw, np.uint8)[~used].any()
