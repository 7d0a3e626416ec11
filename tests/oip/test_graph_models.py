"""DirectML graphs as models: `model.dmlgraph` files built with the SDK's Graph, served over the Open Inference
Protocol to the unmodified tritonclient, answering as CompileGraph + Dispatch answer; bad graph files reported."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tritonclient.utils import InferenceServerException

import dmlrpc
from dmlrpc.codec import tensor_desc
from dmlrpc.v1 import service_pb2
from tests.conftest import ServerThread, start_server
from tests.doc_blocks import block


def relu_add_graph() -> dmlrpc.Graph:
    """FP32 INPUT0, INPUT1 [2,8] -> OUTPUT0 = relu(a + b), OUTPUT1 = a * b (element-wise: the graph batches)."""
    g = dmlrpc.Graph()
    a = g.input(np.float32, (2, 8))
    b = g.input(np.float32, (2, 8))
    g.output(g.activation("relu", g.element_wise("add", a, b)), g.element_wise("multiply", a, b))
    return g


def top_k_graph() -> dmlrpc.Graph:
    """FP32 INPUT0 [3,6] -> OUTPUT0 values, OUTPUT1 UINT32 indices of the 2 largest of each row of 2 * x."""
    g = dmlrpc.Graph()
    x = g.input(np.float32, (3, 6))
    values, indices = g.top_k(g.element_wise("add", x, x), 2)
    g.output(values, indices)
    return g


def gather_graph() -> dmlrpc.Graph:
    """INT32 INPUT0 [4,3] and INPUT1 INT32 indices [1,2] -> OUTPUT0 rows gathered (indices checked per request)."""
    g = dmlrpc.Graph()
    data = g.input(np.int32, (4, 3))
    indices = g.input(np.int32, (1, 2))
    g.output(g.gather(g.element_wise("identity", data), indices, axis=0))
    return g


def graph_file(graph: dmlrpc.Graph) -> bytes:
    """The model.dmlgraph format: a serialized CompileGraphRequest."""
    return service_pb2.CompileGraphRequest(graph_desc=graph.desc()).SerializeToString()


def _write(root: Path, name: str, data: bytes, config: str | None = None, version: int = 1) -> None:
    directory = root / name / str(version)
    directory.mkdir(parents=True)
    (directory / "model.dmlgraph").write_bytes(data)
    if config is not None:
        (root / name / "config.pbtxt").write_text(config)


@pytest.fixture(scope="module")
def graph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    root = tmp_path_factory.mktemp("graphs")
    _write(root, "relu_add", graph_file(relu_add_graph()), "dynamic_batching { max_queue_delay_microseconds: 200000 }")
    _write(root, "top_k", graph_file(top_k_graph()))
    _write(
        root,
        "top_k_fixed",
        graph_file(top_k_graph()),
        'max_batch_size: 0\ninput [ { name: "INPUT0" '
        'data_type: TYPE_FP32 dims: [ 3, 6 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 3, 2 ] '
        '}, { name: "OUTPUT1" data_type: TYPE_UINT32 dims: [ 3, 2 ] } ]\n',
    )
    _write(root, "gather", graph_file(gather_graph()), "max_batch_size: 0\n")
    _write(root, "not_a_graph", b"\xff\xff\xff not protobuf")
    bad = dmlrpc.Graph()
    x = bad.input(np.float32, (2, 2))
    bad.output(bad.element_wise("add", x, x))
    desc = bad.desc()
    desc.input_count = 3  # the count must equal the inputs the edges use
    _write(root, "bad_graph", service_pb2.CompileGraphRequest(graph_desc=desc).SerializeToString())
    _write(
        root, "wrong_dims", graph_file(top_k_graph()), 'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 6 ] } ]'
    )
    running = start_server(model_repository=root, model_control_mode="explicit", load_model=["*"])
    yield running
    running.stop()


@pytest.fixture
def triton(graph_server: ServerThread) -> Iterator[Any]:
    client = grpcclient.InferenceServerClient(graph_server.address)
    yield client
    client.close()


@pytest.fixture(scope="module")
def sdk(graph_server: ServerThread) -> Iterator[dmlrpc.Client]:
    with dmlrpc.Client(graph_server.address) as client:
        yield client


def _infer(triton: Any, model: str, arrays: dict[str, np.ndarray], datatypes: dict[str, str]) -> Any:
    inputs = []
    for name, array in arrays.items():
        tensor = grpcclient.InferInput(name, list(array.shape), datatypes[name])
        tensor.set_data_from_numpy(array)
        inputs.append(tensor)
    return triton.infer(model, inputs)


def test_metadata_and_config_come_from_the_descs(triton: Any) -> None:
    metadata = triton.get_model_metadata("relu_add")
    assert metadata.platform == "directml_graph" and list(metadata.versions) == ["1"]
    assert [(t.name, t.datatype, list(t.shape)) for t in metadata.inputs] == [
        ("INPUT0", "FP32", [-1, 2, 8]),
        ("INPUT1", "FP32", [-1, 2, 8]),
    ]
    assert [t.name for t in metadata.outputs] == ["OUTPUT0", "OUTPUT1"]
    config = triton.get_model_config("relu_add").config
    assert config.max_batch_size == 4 and config.HasField("dynamic_batching") and config.backend == "dmlrpc"
    assert list(config.input[0].dims) == [2, 8]
    top_k = triton.get_model_metadata("top_k")
    assert [(t.name, t.datatype, list(t.shape)) for t in top_k.outputs] == [
        ("OUTPUT0", "FP32", [-1, 3, 2]),
        ("OUTPUT1", "UINT32", [-1, 3, 2]),
    ]
    fixed = triton.get_model_metadata("top_k_fixed")
    assert [list(t.shape) for t in fixed.inputs] == [[3, 6]]
    assert triton.is_model_ready("gather")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_graph_model_equals_compile_graph_and_dispatch(triton: Any, sdk: dmlrpc.Client, batch: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((batch, 2, 8)).astype(np.float32)
    b = rng.standard_normal((batch, 2, 8)).astype(np.float32)
    result = _infer(triton, "relu_add", {"INPUT0": a, "INPUT1": b}, {"INPUT0": "FP32", "INPUT1": "FP32"})
    with sdk.compile(relu_add_graph()) as op:
        expected = [op(a[i], b[i]) for i in range(batch)]
    for k, name in enumerate(("OUTPUT0", "OUTPUT1")):
        np.testing.assert_array_equal(result.as_numpy(name), np.stack([e[k] for e in expected]))
    # And the NumPy reference of what the graph computes.
    np.testing.assert_allclose(result.as_numpy("OUTPUT0"), np.maximum(a + b, 0), rtol=1e-6)
    np.testing.assert_allclose(result.as_numpy("OUTPUT1"), a * b, rtol=1e-6)


def test_top_k_graph_batched_and_fixed(triton: Any, sdk: dmlrpc.Client) -> None:
    x = np.random.default_rng(3).permutation(18).reshape(1, 3, 6).astype(np.float32)
    with sdk.compile(top_k_graph()) as op:
        values, indices = op(x[0])
    batched = _infer(triton, "top_k", {"INPUT0": np.concatenate([x, x])}, {"INPUT0": "FP32"})
    np.testing.assert_array_equal(batched.as_numpy("OUTPUT0"), np.stack([values, values]))
    np.testing.assert_array_equal(batched.as_numpy("OUTPUT1"), np.stack([indices, indices]))
    assert batched.as_numpy("OUTPUT1").dtype == np.uint32
    fixed = _infer(triton, "top_k_fixed", {"INPUT0": x[0]}, {"INPUT0": "FP32"})
    np.testing.assert_array_equal(fixed.as_numpy("OUTPUT0"), values)
    np.testing.assert_array_equal(np.sort(x[0] * 2, axis=1)[:, ::-1][:, :2], values)


def test_dynamic_batching_and_statistics_of_a_graph(graph_server: ServerThread) -> None:
    with grpcclient.InferenceServerClient(graph_server.address) as client:
        (before,) = client.get_inference_statistics("relu_add").model_stats

        def one(i: int) -> None:
            with grpcclient.InferenceServerClient(graph_server.address) as own:
                a = np.full((1, 2, 8), float(i), np.float32)
                out = _infer(own, "relu_add", {"INPUT0": a, "INPUT1": a}, {"INPUT0": "FP32", "INPUT1": "FP32"})
                np.testing.assert_array_equal(out.as_numpy("OUTPUT0"), 2 * a)

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(one, range(8)))
        (after,) = client.get_inference_statistics("relu_add").model_stats
    assert after.inference_count - before.inference_count == 8
    assert 1 <= after.execution_count - before.execution_count < 8
    assert after.inference_stats.queue.count - before.inference_stats.queue.count == 8


def test_data_dependent_checks_fail_that_request_only(triton: Any) -> None:
    data = np.arange(12, dtype=np.int32).reshape(4, 3)
    types = {"INPUT0": "INT32", "INPUT1": "INT32"}
    good = _infer(triton, "gather", {"INPUT0": data, "INPUT1": np.array([[3, 0]], np.int32)}, types)
    np.testing.assert_array_equal(good.as_numpy("OUTPUT0").reshape(2, 3), data[[3, 0]])
    with pytest.raises(InferenceServerException) as error:
        _infer(triton, "gather", {"INPUT0": data, "INPUT1": np.array([[4, 0]], np.int32)}, types)
    assert error.value.status() == "StatusCode.INVALID_ARGUMENT"
    assert triton.is_server_live() and triton.is_model_ready("gather")


def test_bad_requests_to_a_graph(triton: Any) -> None:
    a = np.zeros((1, 2, 7), np.float32)
    for arrays, datatype in (
        ({"INPUT0": a, "INPUT1": a}, "FP32"),  # a shape that is not the desc's sizes
        ({"INPUT0": np.zeros((5, 2, 8), np.float32), "INPUT1": np.zeros((5, 2, 8), np.float32)}, "FP32"),  # batch 5
        ({"INPUT0": np.zeros((1, 2, 8), np.float64), "INPUT1": np.zeros((1, 2, 8), np.float64)}, "FP64"),
    ):
        with pytest.raises(InferenceServerException) as error:
            _infer(triton, "relu_add", arrays, dict.fromkeys(arrays, datatype))
        assert error.value.status() == "StatusCode.INVALID_ARGUMENT"


def test_bad_graph_files_are_reported_not_fatal(triton: Any) -> None:
    index: dict[tuple[str, str], str] = {}
    for m in triton.get_model_repository_index().models:  # a model's entry, and one per version that failed
        index[m.name, m.state] = index.get((m.name, m.state), "") + m.reason
    assert "not a serialized dmlrpc.v1.CompileGraphRequest" in index[("not_a_graph", "UNAVAILABLE")]
    assert "graph_desc" in index[("bad_graph", "UNAVAILABLE")]
    assert "dims" in index[("wrong_dims", "UNAVAILABLE")]
    assert ("relu_add", "READY") in index
    for name in ("not_a_graph", "bad_graph"):
        assert not triton.is_model_ready(name)
        with pytest.raises(InferenceServerException) as error:
            _infer(triton, name, {"INPUT0": np.zeros((1, 2, 2), np.float32)}, {"INPUT0": "FP32"})
        assert error.value.status() == "StatusCode.NOT_FOUND"
    assert triton.is_server_ready()


def test_owned_inputs_stay_bound(tmp_path: Path) -> None:
    # A graph input flagged DML_TENSOR_FLAG_OWNED_BY_DML is bound from the file's owned_inputs, not a model input.
    g = dmlrpc.Graph()
    x = g.input(np.float32, (4,))
    w = g.input(np.float32, (4,))
    g.output(g.element_wise("multiply", x, w))
    desc = g.desc()
    owned_desc = tensor_desc((np.float32, (4,)))
    owned_desc.buffer.flags = 1  # DML_TENSOR_FLAG_OWNED_BY_DML
    for edge in desc.input_edges:
        if edge.input.graph_input_index == 1:
            node = desc.nodes[edge.input.to_node_index].operator.operator
            getattr(node, node.WhichOneof("desc")).b_tensor.CopyFrom(owned_desc)
    weights = np.array([1, 2, 3, 4], np.float32)
    request = service_pb2.CompileGraphRequest(
        graph_desc=desc,
        owned_inputs=[service_pb2.BindingDesc(), service_pb2.BindingDesc(buffer={"data": weights.tobytes()})],
    )
    _write(tmp_path, "scaled", request.SerializeToString())
    running = start_server(model_repository=tmp_path)
    try:
        with grpcclient.InferenceServerClient(running.address) as client:
            assert [t.name for t in client.get_model_metadata("scaled").inputs] == ["INPUT0"]
            x_array = np.array([[1, 1, 1, 1], [2, 2, 2, 2]], np.float32)
            out = _infer(client, "scaled", {"INPUT0": x_array}, {"INPUT0": "FP32"})
            np.testing.assert_array_equal(out.as_numpy("OUTPUT0"), x_array * weights)
    finally:
        running.stop()


def test_the_documented_graph_file_is_served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # docs/protocol.md's snippet, run as written in a scratch directory, writes a model the server then serves.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "relu_add" / "1").mkdir(parents=True)
    exec(compile(block("docs/protocol.md", "python", "dmlgraph").text, "docs/protocol.md", "exec"), {})
    running = start_server(model_repository=tmp_path / "models")
    try:
        client = grpcclient.InferenceServerClient(running.address)
        a = np.arange(32, dtype=np.float32).reshape(2, 2, 8) - 16
        b = np.ones((2, 2, 8), np.float32)
        result = _infer(client, "relu_add", {"INPUT0": a, "INPUT1": b}, {"INPUT0": "FP32", "INPUT1": "FP32"})
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), np.maximum(a + b, 0))
        client.close()
    finally:
        running.stop()
