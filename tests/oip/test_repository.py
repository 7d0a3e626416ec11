"""Dynamic batching and its statistics, RepositoryIndex, explicit load and unload, and bad models reported."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from tests.conftest import start_server
from tests.oip.repository import affine, build, write


def _input(rows: int, value: float = 0.0) -> Any:
    tensor = grpcclient.InferInput("INPUT0", [rows, 16], "FP32")
    tensor.set_data_from_numpy(np.full((rows, 16), value, np.float32))
    return tensor


def _stats(client: Any, name: str) -> Any:
    (stats,) = client.get_inference_statistics(name).model_stats
    return stats


def test_dynamic_batching_counts_as_triton_does(oip_server: Any) -> None:
    # `m` waits up to 200 ms for company and batches up to 8 items: 16 concurrent single-item requests form at
    # most a few runs, each answering its own request.
    with grpcclient.InferenceServerClient(oip_server.address) as client:
        before = _stats(client, "m")

        def one(i: int) -> None:
            with grpcclient.InferenceServerClient(oip_server.address) as own:
                out = own.infer("m", [_input(1, float(i))]).as_numpy("OUTPUT0")
                np.testing.assert_array_equal(out, np.full((1, 16), 2 * i + 1, np.float32))

        with ThreadPoolExecutor(16) as pool:
            list(pool.map(one, range(16)))
        after = _stats(client, "m")
    assert after.inference_count - before.inference_count == 16
    executions = after.execution_count - before.execution_count
    assert 2 <= executions < 16
    assert after.inference_stats.queue.count - before.inference_stats.queue.count == 16
    assert after.inference_stats.success.count - before.inference_stats.success.count == 16
    assert after.last_inference > 0
    assert any(batch.batch_size > 1 for batch in after.batch_stats)


def test_statistics_of_every_model_and_unknown_ones(triton: Any) -> None:
    names = {stats.name for stats in triton.get_inference_statistics().model_stats}
    assert {"m", "simple", "fixed", "identity_fp32"} <= names and "broken" not in names
    with pytest.raises(InferenceServerException, match="unknown model"):
        triton.get_inference_statistics("nope")


def test_full_queue_is_unavailable(oip_server: Any) -> None:
    # `queued` holds at most 2 waiting requests and waits 0.5 s for company: a burst of 6 finds it full.
    import tritonclient.grpc.service_pb2 as pb
    from tritonclient.grpc import service_pb2_grpc

    request = pb.ModelInferRequest(model_name="queued", raw_input_contents=[bytes(64)])
    request.inputs.add(name="INPUT0", datatype="FP32", shape=[1, 16])
    with grpc.insecure_channel(oip_server.address) as channel:
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        futures = [stub.ModelInfer.future(request, timeout=30) for _ in range(6)]
        codes = []
        for future in futures:
            try:
                future.result()
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as error:
                codes.append(error.code())
    assert codes.count(grpc.StatusCode.UNAVAILABLE) >= 1 and codes.count(grpc.StatusCode.OK) >= 2
    assert set(codes) <= {grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE}


def test_repository_index_reports_bad_models(triton: Any, oip_server: Any) -> None:
    index = {(m.name, m.version): m for m in triton.get_model_repository_index().models}
    assert index[("m", "1")].state == "READY"
    assert index[("versioned", "1")].state == "READY" and index[("versioned", "3")].state == "READY"
    for name in ("broken", "badconfig", "cannot_batch", "noversions"):
        assert index[(name, "")].state == "UNAVAILABLE" and index[(name, "")].reason, name
    assert "ModelConfig" in index[("badconfig", "")].reason
    assert "cannot batch" in index[("cannot_batch", "")].reason
    assert "version" in index[("noversions", "")].reason
    import tritonclient.grpc.service_pb2 as pb
    from tritonclient.grpc import service_pb2_grpc

    with grpc.insecure_channel(oip_server.address) as channel:
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        ready = {m.name for m in stub.RepositoryIndex(pb.RepositoryIndexRequest(ready=True), timeout=30).models}
    assert "m" in ready and "broken" not in ready


def test_explicit_load_and_unload(tmp_path: Path) -> None:
    write(tmp_path, "a", affine())
    write(tmp_path, "b", affine())
    server = start_server(model_repository=tmp_path, model_control_mode="explicit", load_model=["a"])
    try:
        with grpcclient.InferenceServerClient(server.address) as client:
            assert client.is_model_ready("a") and not client.is_model_ready("b")
            assert {(m.name, m.state) for m in client.get_model_repository_index().models} == {
                ("a", "READY"),
                ("b", ""),
            }
            client.load_model("b")
            assert client.is_model_ready("b")
            client.unload_model("a")
            assert not client.is_model_ready("a")
            index = {m.name: m for m in client.get_model_repository_index().models}
            assert index["a"].state == "UNAVAILABLE" and index["a"].reason == "unloaded"
            with pytest.raises(InferenceServerException, match="no available versions"):
                client.infer("a", [_input(1)])
            # a config override (JSON) on load, as RepositoryModelLoad's "config" parameter
            client.load_model("a", config='{"max_batch_size": 2, "dynamic_batching": {}}')
            assert client.get_model_config("a").config.max_batch_size == 2
            with pytest.raises(InferenceServerException, match="max_batch_size"):
                client.infer("a", [_input(3)])
            # a new version directory is served after a reload
            write(tmp_path, "a", affine(), versions=(2,))
            client.load_model("a")
            assert client.get_model_metadata("a").versions == ["2"]
            shutil.rmtree(tmp_path / "b" / "1")
            (tmp_path / "b" / "1").mkdir()
            with pytest.raises(InferenceServerException, match="failed to load"):
                client.load_model("b")  # a reload that fails leaves the model reported, and the server up
            assert client.get_model_repository_index().models and client.is_server_ready()
            with pytest.raises(InferenceServerException, match="no model"):
                client.load_model("missing")
    finally:
        server.stop()


def test_control_mode_none_refuses_load(tmp_path: Path) -> None:
    build(tmp_path)
    server = start_server(model_repository=tmp_path)
    try:
        with grpcclient.InferenceServerClient(server.address) as client:
            assert client.is_model_ready("m") and not client.is_model_ready("broken")
            with pytest.raises(InferenceServerException, match="explicit"):
                client.load_model("m")
            assert client.is_server_ready()
    finally:
        server.stop()
