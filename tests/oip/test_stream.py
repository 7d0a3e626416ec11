"""ModelStreamInfer and the asyncio client: tritonclient's streaming and grpc.aio clients against the real server."""

from __future__ import annotations

import asyncio
import queue
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.grpc.aio as aioclient
from tritonclient.utils import InferenceServerException

from tests.oip.repository import run_in_process


def _input(data: np.ndarray, module: Any = grpcclient) -> Any:
    tensor = module.InferInput("INPUT0", list(data.shape), "FP32")
    tensor.set_data_from_numpy(data)
    return tensor


def test_stream_answers_in_order_and_survives_a_bad_request(oip_server: Any, repository: Path) -> None:
    results: queue.Queue[tuple[Any, Any]] = queue.Queue()
    client = grpcclient.InferenceServerClient(oip_server.address)
    client.start_stream(callback=lambda result, error: results.put((result, error)))
    rng = np.random.default_rng(1)
    sent = []
    for i in range(8):
        data = rng.standard_normal((1 + i % 3, 16)).astype(np.float32)
        if i == 3:  # a bad request in the middle: wrong shape
            client.async_stream_infer("m", [_input(np.zeros((1, 15), np.float32))], request_id=str(i))
        else:
            client.async_stream_infer("m", [_input(data)], request_id=str(i))
        sent.append(data)
    client.stop_stream()  # half-closes: every pending response is drained first, then the call ends OK
    client.close()
    model = repository / "m" / "1" / "model.onnx"
    received = [results.get(timeout=10) for _ in range(8)]
    assert results.empty()
    for i, (result, error) in enumerate(received):
        if i == 3:
            assert result is None and isinstance(error, InferenceServerException)
            assert "does not match" in str(error)
            continue
        assert error is None, error
        response = result.get_response()
        assert response.id == str(i)
        assert response.parameters["triton_final_response"].bool_param
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), run_in_process(model, {"INPUT0": sent[i]})["OUTPUT0"])


def test_stream_errors_keep_the_stream_open_for_unknown_models(oip_server: Any) -> None:
    results: queue.Queue[tuple[Any, Any]] = queue.Queue()
    with grpcclient.InferenceServerClient(oip_server.address) as client:
        client.start_stream(callback=lambda result, error: results.put((result, error)))
        client.async_stream_infer("nope", [_input(np.zeros((1, 16), np.float32))], request_id="a")
        client.async_stream_infer("m", [_input(np.zeros((1, 16), np.float32))], request_id="b")
        client.stop_stream()
    (first, first_error), (second, second_error) = results.get(timeout=10), results.get(timeout=10)
    assert first is None and "unknown model" in str(first_error)
    assert second_error is None and second.get_response().id == "b"


def test_aio_client_infers_concurrently(oip_server: Any, repository: Path) -> None:
    model = repository / "simple" / "1" / "model.onnx"

    async def main() -> None:
        async with aioclient.InferenceServerClient(oip_server.address) as client:
            assert await client.is_server_ready()
            assert (await client.get_model_metadata("simple")).name == "simple"

            async def one(i: int) -> None:
                a = np.full((1, 16), i, np.int32)
                b = np.arange(16, dtype=np.int32).reshape(1, 16)
                inputs = [
                    aioclient.InferInput("INPUT0", [1, 16], "INT32"),
                    aioclient.InferInput("INPUT1", [1, 16], "INT32"),
                ]
                inputs[0].set_data_from_numpy(a)
                inputs[1].set_data_from_numpy(b)
                result = await client.infer("simple", inputs, request_id=f"q{i}")
                expected = run_in_process(model, {"INPUT0": a, "INPUT1": b})
                np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), expected["OUTPUT0"])
                np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), expected["OUTPUT1"])
                assert result.get_response().id == f"q{i}"

            await asyncio.gather(*(one(i) for i in range(12)))

            async def requests() -> Any:
                for i in range(4):
                    yield {
                        "model_name": "m",
                        "inputs": [_input(np.full((1, 16), i, np.float32), aioclient)],
                        "request_id": str(i),
                    }

            answers = [item async for item in client.stream_infer(requests())]
            assert [result.get_response().id for result, error in answers] == ["0", "1", "2", "3"]
            assert all(error is None for _, error in answers)

    asyncio.run(main())


def test_stream_ends_at_the_first_error_when_asked(oip_server: Any) -> None:
    # Triton's opt-in: the header triton_grpc_error: true ends the stream with the status of its first error.
    results: queue.Queue[tuple[Any, Any]] = queue.Queue()
    with grpcclient.InferenceServerClient(oip_server.address) as client:
        client.start_stream(
            callback=lambda result, error: results.put((result, error)), headers={"triton_grpc_error": "true"}
        )
        client.async_stream_infer("nope", [_input(np.zeros((1, 16), np.float32))], request_id="a")
        result, error = results.get(timeout=10)
        client.stop_stream()
    assert result is None and isinstance(error, InferenceServerException)
    assert error.status() == "StatusCode.INVALID_ARGUMENT"


def test_without_a_repository_models_are_unavailable(server: Any) -> None:
    with grpcclient.InferenceServerClient(server.address) as client:
        assert client.is_server_ready() and not client.is_model_ready("m")
        with pytest.raises(InferenceServerException, match="--model-repository") as caught:
            client.get_model_metadata("m")
    assert caught.value.status() == "StatusCode.UNAVAILABLE"
