"""The SDK against the real server: async client, injected channels, the compile cache, raw-proto callers."""

from __future__ import annotations

import asyncio

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import operators_pb2, service_pb2, service_pb2_grpc
from tests.conftest import ServerThread


def test_async_client_runs_every_typed_call(server: ServerThread) -> None:
    async def run() -> None:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as client:
            values, indices = await client.top_k(np.array([[5, 1, 4]], np.int8), 2)
            np.testing.assert_array_equal(values, [[5, 4]])
            np.testing.assert_array_equal(indices, [[0, 2]])
            out = await client.scatter_nd(np.zeros(4, np.uint8), np.array([[2]]), np.array([9], np.uint8))
            np.testing.assert_array_equal(out, [0, 0, 9, 0])
            out = await client.scatter_elements(np.zeros(3, np.float64), np.array([1]), np.array([2.5]))
            np.testing.assert_array_equal(out, [0, 2.5, 0])
            caps = await client.get_capabilities()
            assert caps.execution_provider == "CPUExecutionProvider"
            with pytest.raises(dmlrpc.InvalidArgumentError) as caught:
                await client.top_k(np.zeros(3, np.float32), 4)
            assert caught.value.field_violations[0].field == "operator_desc.top_k1.k"

    asyncio.run(run())


def test_client_uses_an_injected_channel_and_leaves_it_open(server: ServerThread) -> None:
    channel = grpc.insecure_channel(server.address)
    with dmlrpc.Client(channel=channel) as client:
        client.top_k(np.arange(3, dtype=np.float32), 1)
    # Still usable: the client did not close a channel it did not create.
    service_pb2_grpc.DirectMLServiceStub(channel).GetCapabilities(service_pb2.GetCapabilitiesRequest(), timeout=10)
    channel.close()


def test_same_desc_compiles_once(server: ServerThread, client: dmlrpc.Client) -> None:
    cache = server.built.catalog.cache
    x = np.random.default_rng(3).standard_normal((3, 7, 5)).astype(np.float32)
    client.top_k(x, 3, 1)
    misses = cache.stats.misses
    for _ in range(5):
        client.top_k(x + 1, 3, 1)
    assert cache.stats.misses == misses
    client.top_k(x, 2, 1)
    assert cache.stats.misses == misses + 1


def test_raw_proto_call_without_the_sdk(server: ServerThread) -> None:
    # What a caller in another language does: fill the descs, send little-endian bytes, read bytes back.
    x = np.array([[0, 1, 10, 11], [3, 2, 9, 8]], "<f4")
    desc = operators_pb2.TopK1OperatorDesc(
        input_tensor=tensor_desc(x),
        output_value_tensor=tensor_desc((np.float32, (2, 1))),
        # Strided output: element [i, 0] at element offset 2*i, so the buffer has gaps.
        output_index_tensor=tensor_desc((np.uint32, (2, 1)), strides=[2, 1]),
        axis=1,
        k=1,
        axis_direction=1,  # type: ignore[arg-type]
    )
    request = service_pb2.ExecuteRequest(
        operator_desc=operators_pb2.OperatorDesc(top_k1=desc),
        inputs=[service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=x.tobytes()))],
    )
    with grpc.insecure_channel(server.address) as channel:
        response = service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=10)
    values, indices = (binding.buffer.data for binding in response.outputs)
    assert np.frombuffer(values, "<f4").tolist() == [11, 9]
    assert len(indices) == desc.output_index_tensor.buffer.total_tensor_size_in_bytes == 12
    assert np.frombuffer(indices, "<u4").tolist() == [3, 0, 2]  # the gap is zero


def test_concurrent_requests_with_different_descs_never_mix(client: dmlrpc.Client) -> None:
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(11)
    inputs = [rng.standard_normal((n, 6)).astype(np.float32) for n in range(1, 17)]

    def call(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return client.top_k(x, 2, 1)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(call, inputs * 4))
    for x, (values, _) in zip(inputs * 4, results, strict=True):
        np.testing.assert_array_equal(values, -np.sort(-x, axis=1)[:, :2])


def test_version_is_the_installed_distributions() -> None:
    from importlib import metadata

    assert dmlrpc.__version__ == metadata.version("dmlrpc")
    assert dmlrpc.__version__.count(".") >= 2
