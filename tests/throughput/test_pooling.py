"""Pooled staging buffers never leak one request's bytes into another's response."""

from __future__ import annotations

import asyncio

import grpc
import numpy as np

from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import service_pb2_grpc
from tests.conftest import ServerThread, scrape


def _strided_top_k(data: np.ndarray, k: int) -> ops.Call:
    """top_k along axis 1 whose value output rows are padded: sizes [rows, k], strides [k + 3, 1] (3-element gaps)."""
    call = ops.top_k(data, k, 1)
    rows = data.shape[0]
    call.operator_desc.top_k1.output_value_tensor.CopyFrom(tensor_desc((data.dtype, (rows, k)), [k + 3, 1]))
    return call


def test_strided_output_gaps_are_zero_whatever_ran_before(server: ServerThread) -> None:
    rng = np.random.default_rng(11)
    k, rows = 4, 64
    before = scrape(server).get(("dmlrpc_buffer_pool_hits_total", ()), 0.0)
    with grpc.insecure_channel(server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        for round_ in range(6):
            # Alternate huge and tiny values so stale bytes from the previous round would show in the gaps.
            scale = 1e30 if round_ % 2 == 0 else 1.0
            data = (rng.standard_normal((rows, 16)) * scale).astype(np.float32)
            call = _strided_top_k(data, k)
            raw = stub.Execute(prepare_execute(call.operator_desc, call.inputs).request, timeout=30).outputs[0]
            buffer = np.frombuffer(raw.buffer.data, np.float32)
            assert buffer.size == (rows - 1) * (k + 3) + k
            laid_out = np.lib.stride_tricks.as_strided(buffer, shape=(rows, k), strides=((k + 3) * 4, 4))
            np.testing.assert_array_equal(laid_out, -np.sort(-data, axis=1)[:, :k])
            gaps = np.ones(buffer.size, bool)
            for row in range(rows):
                gaps[row * (k + 3) : row * (k + 3) + k] = False
            assert not buffer[gaps].any(), f"round {round_}: stale bytes in the gaps"
    assert scrape(server)[("dmlrpc_buffer_pool_hits_total", ())] - before >= 5  # the staging buffer was reused


def test_batched_staging_never_mixes_requests(server: ServerThread) -> None:
    """Many concurrent rounds of one desc: each response equals its own request's reference."""
    import dmlrpc

    rng = np.random.default_rng(12)
    datas = [rng.standard_normal((3, 8)).astype(np.float32) for _ in range(64)]

    async def main() -> list[tuple[np.ndarray, np.ndarray]]:
        async with dmlrpc.AsyncClient(server.address, timeout=30) as client:
            return list(await asyncio.gather(*(client.top_k(x, 3) for x in datas)))

    for data, (values, indices) in zip(datas, asyncio.run(main()), strict=True):
        np.testing.assert_array_equal(values, -np.sort(-data, axis=1)[:, :3])
        np.testing.assert_array_equal(np.take_along_axis(data, indices.astype(np.int64), 1), values)
