"""PublishModel: a caller's compiled operator or graph served as an Open Inference Protocol model to the unmodified
tritonclient while its handle is held; only its owner may publish it; names that are taken are refused."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

import dmlrpc
from dmlrpc import ops
from dmlrpc.errors import AlreadyExistsError, InvalidArgumentError, NotFoundError
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from tests.conftest import ServerThread, start_server
from tests.oip.repository import affine, write
from tests.oip.test_graph_models import relu_add_graph


@pytest.fixture(scope="module")
def publishing_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    root = tmp_path_factory.mktemp("published")
    write(root, "m", affine())
    running = start_server(model_repository=root, compiled_idle_seconds=1.0)
    yield running
    running.stop()


@pytest.fixture
def sdk(publishing_server: ServerThread) -> Iterator[dmlrpc.Client]:
    with dmlrpc.Client(publishing_server.address) as client:
        yield client


@pytest.fixture
def triton(publishing_server: ServerThread) -> Iterator[Any]:
    client = grpcclient.InferenceServerClient(publishing_server.address)
    yield client
    client.close()


def _infer(triton: Any, model: str, arrays: dict[str, np.ndarray], datatype: str = "FP32") -> Any:
    inputs = []
    for name, array in arrays.items():
        tensor = grpcclient.InferInput(name, list(array.shape), datatype)
        tensor.set_data_from_numpy(array)
        inputs.append(tensor)
    return triton.infer(model, inputs)


def _status(error: pytest.ExceptionInfo[Any]) -> str:
    return str(error.value.status())


def test_published_graph_answers_as_dispatch(sdk: dmlrpc.Client, triton: Any) -> None:
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal((3, 2, 8)).astype(np.float32) for _ in range(2))
    with sdk.compile(relu_add_graph()) as op:
        assert op.publish("relu_add_live", max_batch_size=4) == "1"
        metadata = triton.get_model_metadata("relu_add_live")
        assert metadata.platform == "directml_graph"
        assert [(t.name, list(t.shape)) for t in metadata.inputs] == [("INPUT0", [-1, 2, 8]), ("INPUT1", [-1, 2, 8])]
        assert triton.get_model_config("relu_add_live").config.HasField("dynamic_batching")
        result = _infer(triton, "relu_add_live", {"INPUT0": a, "INPUT1": b})
        expected = [op(a[i], b[i]) for i in range(3)]
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), np.stack([e[0] for e in expected]))
        np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), np.stack([e[1] for e in expected]))
        index = {m.name: (m.state, m.reason) for m in triton.get_model_repository_index().models}
        assert index["relu_add_live"] == ("READY", "published from a compiled handle")
        (stats,) = triton.get_inference_statistics("relu_add_live").model_stats
        assert stats.inference_count == 3 and stats.version == "1"
    # Released: unpublished.
    assert not triton.is_model_ready("relu_add_live")
    with pytest.raises(InferenceServerException) as error:
        _infer(triton, "relu_add_live", {"INPUT0": a, "INPUT1": b})
    assert _status(error) == "StatusCode.INVALID_ARGUMENT" and "unknown model" in str(error.value)


def test_published_operator_takes_directml_field_names(sdk: dmlrpc.Client, triton: Any) -> None:
    x = np.array([[3, 9, 1, 7], [2, 8, 6, 4]], np.float32)
    with sdk.compile(ops.top_k(x, 2).operator_desc) as op:
        op.publish("top_k_live")
        metadata = triton.get_model_metadata("top_k_live")
        assert metadata.platform == "directml_operator"
        assert [t.name for t in metadata.inputs] == ["input_tensor"]
        assert [(t.name, t.datatype) for t in metadata.outputs] == [
            ("output_value_tensor", "FP32"),
            ("output_index_tensor", "UINT32"),
        ]
        shape = list(metadata.inputs[0].shape)
        data = x.reshape(shape)
        result = _infer(triton, "top_k_live", {"input_tensor": data})
        values, indices = op(data)
        np.testing.assert_array_equal(result.as_numpy("output_value_tensor"), values)
        np.testing.assert_array_equal(result.as_numpy("output_index_tensor"), indices)
        np.testing.assert_array_equal(values.reshape(2, 2), [[9, 7], [8, 6]])


def test_only_the_owner_may_publish(publishing_server: ServerThread, sdk: dmlrpc.Client) -> None:
    with sdk.compile(relu_add_graph()) as op, grpc.insecure_channel(publishing_server.address) as channel:
        stub = service_pb2_grpc.DirectMLServiceStub(channel)
        request = service_pb2.PublishModelRequest(handle=op.handle, model_name="stolen")
        with pytest.raises(grpc.RpcError) as error:
            stub.PublishModel(request, metadata=[("dmlrpc-client-id", "someone-else")], timeout=10)
        assert error.value.code() == grpc.StatusCode.NOT_FOUND


def test_names_taken_or_malformed_and_unknown_handles(sdk: dmlrpc.Client) -> None:
    with sdk.compile(relu_add_graph()) as op:
        with pytest.raises(AlreadyExistsError, match="model of the repository"):
            op.publish("m")
        op.publish("taken")
        with pytest.raises(AlreadyExistsError, match="published already"):
            op.publish("taken")
        for bad in ("", "a/b", "x" * 129, ".."):
            with pytest.raises(InvalidArgumentError) as error:
                op.publish(bad)
            assert [v.field for v in error.value.field_violations] == ["model_name"]
        with pytest.raises(InvalidArgumentError):
            op.publish("too_many", max_batch_size=5000)
    with pytest.raises(NotFoundError):
        op.publish("after_release")


def test_expired_handles_unpublish(publishing_server: ServerThread, sdk: dmlrpc.Client, triton: Any) -> None:
    # The server expires handles idle for 1 s: a published model's inferences keep its handle in use.
    op = sdk.compile(relu_add_graph())
    op.publish("expiring")  # max_batch_size 0: requests carry exactly the graph's [2, 8] tensors
    a = np.ones((2, 8), np.float32)
    for _ in range(3):
        time.sleep(0.5)
        _infer(triton, "expiring", {"INPUT0": a, "INPUT1": a})
    time.sleep(1.5)
    assert not triton.is_model_ready("expiring")
    assert "expiring" not in {m.name for m in triton.get_model_repository_index().models}
    with pytest.raises(NotFoundError):
        op(a, a)


def test_publish_without_a_model_repository(tmp_path: Path) -> None:
    running = start_server()
    try:
        with dmlrpc.Client(running.address) as client, client.compile(relu_add_graph()) as op:
            op.publish("g", max_batch_size=2)
            with grpcclient.InferenceServerClient(running.address) as triton:
                a = np.ones((1, 2, 8), np.float32)
                out = _infer(triton, "g", {"INPUT0": a, "INPUT1": a}).as_numpy("OUTPUT0")
                np.testing.assert_array_equal(out, 2 * a)
                with pytest.raises(InferenceServerException) as error:
                    triton.load_model("g")
                assert _status(error) == "StatusCode.UNAVAILABLE"
    finally:
        running.stop()
