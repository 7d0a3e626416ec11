"""Stages 4 and 6 in process: buffers bound and results encoded by the layouts a plan resolved once, as the general
path binds and encodes them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes

from dmlrpc import ops
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import service_pb2
from dmlrpc_server.binding import encode_outputs, feeds
from dmlrpc_server.calls import write_execute
from dmlrpc_server.catalog import Catalog
from dmlrpc_server.errors import InvalidArgument
from dmlrpc_server.feature_levels import LATEST
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.compiler import Compiled
from dmlrpc_server.runtime.providers import choose_provider

DTYPES = [np.float32, np.float16, np.int8, np.uint16, np.int32, np.int64, np.float64]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    limits = Limits(max_tensor_bytes=1 << 28, max_request_bytes=1 << 30, max_message_bytes=1 << 29)
    return Catalog(choose_provider("cpu"), feature_level=LATEST, limits=limits, cache_capacity=64)


def _cast(catalog: Catalog, x: np.ndarray, to: type[np.generic]) -> Compiled:
    return catalog.compiled(ops.cast(x, to).operator_desc)


def _response(output: np.ndarray, total_bytes: int) -> bytes:
    """What protobuf writes for an output's bytes, zero-padded to its buffer's size: the response the encode stage
    must write."""
    data = output.tobytes().ljust(total_bytes, b"\0")
    binding = service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=data))
    return service_pb2.ExecuteResponse(outputs=[binding]).SerializeToString()


def _strided_copy(array: np.ndarray) -> np.ndarray:
    """The same values in an array that is not C-contiguous (every other element of a buffer twice as long)."""
    spread = np.zeros(2 * array.size, array.dtype)
    spread[::2] = array.ravel()
    return spread[::2].reshape(array.shape)


@given(
    shape=array_shapes(min_dims=1, max_dims=4, max_side=5),
    source=st.sampled_from(DTYPES),
    target=st.sampled_from(DTYPES),
    seed=st.integers(0, 2**32 - 1),
)
def test_packed_buffers_bind_and_encode_as_the_general_path_does(
    catalog: Catalog, shape: tuple[int, ...], source: type[np.generic], target: type[np.generic], seed: int
) -> None:
    x = (np.random.default_rng(seed).standard_normal(shape) * 50).astype(source)
    compiled = _cast(catalog, x, target)
    plan = compiled.plan
    assert plan.packed_inputs is not None
    (output,) = plan.outputs
    assert output is not None
    # DMLCalcBufferTensorSize rounds a buffer up to 4 bytes: a padded output is laid out, never sent as it is.
    assert (plan.packed_outputs is None) == (output.total_bytes != output.packed_bytes)
    (source_layout,) = plan.inputs
    assert source_layout is not None
    data = x.tobytes().ljust(source_layout.total_bytes, b"\0")  # as the SDK sends it: padded to 4 bytes
    # Bytes and a read-only view take the plan's layouts; a writable buffer takes the general path.
    for bound in (feeds(compiled, [data]), feeds(compiled, [memoryview(data)]), feeds(compiled, [bytearray(data)])):
        (array,) = bound.values()
        np.testing.assert_array_equal(array, x)
        assert array.shape == x.shape
        assert not array.flags.writeable  # the request's bytes are never written
    results = compiled.run(feeds(compiled, [data]))
    (result,) = plan.finish(results)
    assert result is not None and result.dtype == np.dtype(target) and result.shape == x.shape
    # A C-contiguous result is sent as it is; one that is not is laid out by the general path: the same bytes.
    sent = encode_outputs(compiled, BufferPool(0), write_execute, results)
    assert sent == _response(result, output.total_bytes)
    if result.size > 1:
        assert not _strided_copy(results[0]).flags.c_contiguous
        assert encode_outputs(compiled, BufferPool(0), write_execute, [_strided_copy(results[0])]) == sent


def test_a_short_buffer_is_refused_with_its_field_path(catalog: Catalog) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    compiled = _cast(catalog, x, np.float16)
    with pytest.raises(InvalidArgument) as raised:
        feeds(compiled, [x.tobytes()[:-1]])
    assert raised.value.field == "inputs[0].buffer.data"
    with pytest.raises(InvalidArgument) as raised:
        feeds(compiled, [])
    assert raised.value.field == "inputs"


def test_a_result_of_another_type_is_not_sent_as_it_is(catalog: Catalog) -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    compiled = _cast(catalog, x, np.int32)
    # A result whose dtype differs from its output desc's (as a bridge could leave one) is not the output's buffer,
    # even of the same size: the general path lays it out as the desc's type, never sends its own bytes.
    for result in (x, x.astype(np.int64)):
        encoded = encode_outputs(compiled, BufferPool(0), list, [result])
        assert bytes(encoded[0]) == x.astype(np.int32).tobytes()


def test_a_strided_layout_is_bound_by_the_general_path(catalog: Catalog) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    desc = ops.cast(x, np.float32).operator_desc
    # The input read with element strides (1, 3): the transpose of the packed [4, 3] buffer.
    strided = tensor_desc((np.float32, (3, 4)), strides=(1, 3))
    desc.cast.input_tensor.CopyFrom(strided)
    compiled = catalog.compiled(desc)
    assert compiled.plan.packed_inputs is None
    buffer = np.ascontiguousarray(x.T).tobytes()
    (array,) = feeds(compiled, [buffer]).values()
    np.testing.assert_array_equal(array, x)
