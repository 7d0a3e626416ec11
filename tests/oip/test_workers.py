"""--workers 2: the Open Inference Protocol answers for the server, whichever worker a connection reaches
(statistics summed, loads and unloads made by every worker, a restarted worker repeating them), as real processes
over real connections."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.request import urlopen

import grpc
import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families
from tritonclient.grpc import service_pb2, service_pb2_grpc

from dmlrpc.v1 import service_pb2 as dml
from dmlrpc.v1 import service_pb2_grpc as dml_grpc
from dmlrpc.v1 import tensor_pb2
from tests.processes import kill
from tests.service.test_workers import OWN_CONNECTION, WORKER, Workers, _serving

#: Connections the tests use, half of them on each worker.
CONNECTIONS = 8


class Connection:
    """One TCP connection to the server, and the worker it reached."""

    def __init__(self, port: int) -> None:
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=OWN_CONNECTION)
        self.oip = service_pb2_grpc.GRPCInferenceServiceStub(self.channel)
        self.worker = _worker_of(self.channel)

    def infer(self, count: int) -> None:
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        request = service_pb2.ModelInferRequest(
            model_name="simple",
            inputs=[
                service_pb2.ModelInferRequest.InferInputTensor(name=name, datatype="INT32", shape=[1, 16])
                for name in ("INPUT0", "INPUT1")
            ],
            raw_input_contents=[a.tobytes(), a.tobytes()],
        )
        for _ in range(count):
            response = self.oip.ModelInfer(request, timeout=30)
            assert np.array_equal(np.frombuffer(response.raw_output_contents[0], np.int32), 2 * a.ravel())

    def statistics(self, name: str = "simple") -> service_pb2.ModelStatistics:
        (stats,) = self.oip.ModelStatistics(service_pb2.ModelStatisticsRequest(name=name), timeout=30).model_stats
        return stats

    def index(self) -> bytes:
        return self.oip.RepositoryIndex(service_pb2.RepositoryIndexRequest(), timeout=30).SerializeToString()

    def ready(self, name: str = "simple") -> bool:
        return bool(self.oip.ModelReady(service_pb2.ModelReadyRequest(name=name), timeout=30).ready)


def _worker_of(channel: grpc.Channel) -> str:
    """The worker behind a connection: its resident tensors' handles name it (w0., w1.; a restart adds r1)."""
    desc = tensor_pb2.TensorDesc(
        buffer=tensor_pb2.BufferTensorDesc(
            data_type=tensor_pb2.TENSOR_DATA_TYPE_FLOAT32, sizes=[4], total_tensor_size_in_bytes=16
        )
    )
    stub = dml_grpc.DirectMLServiceStub(channel)
    start = dml.CreateTensorRequest(start=dml.CreateTensorStart(desc=desc, uninitialized=True))
    tensor = stub.CreateTensor(iter([start]), timeout=30)
    stub.ReleaseTensor(dml.ReleaseTensorRequest(handle=tensor.handle), timeout=30)
    return tensor.handle.split(".", 1)[0].split("r", 1)[0]


@pytest.fixture(scope="module")
def server(repository: Path) -> Iterator[Workers]:
    running = Workers("--model-repository", str(repository), "--model-control-mode", "explicit", "--load-model", "*")
    yield running
    running.process.close()


def _connections(server: Workers) -> list[Connection]:
    """CONNECTIONS new connections, half of them on each worker (SO_REUSEPORT places each one, or each worker's own
    port where ports are consecutive)."""
    by_worker: dict[str, list[Connection]] = {"w0": [], "w1": []}
    for attempt in range(20 * CONNECTIONS):
        connection = Connection(server.worker_port(attempt) or server.port)
        chosen = by_worker[connection.worker]
        if len(chosen) < CONNECTIONS // 2:
            chosen.append(connection)
        else:
            connection.channel.close()
        if all(len(chosen) == CONNECTIONS // 2 for chosen in by_worker.values()):
            return by_worker["w0"] + by_worker["w1"]
    raise AssertionError(f"{20 * CONNECTIONS} connections did not reach both workers {CONNECTIONS // 2} times each")


@pytest.fixture
def connections(server: Workers) -> Iterator[list[Connection]]:
    opened = _connections(server)
    yield opened
    for connection in opened:
        connection.channel.close()


def _inferences_metric(server: Workers) -> float:
    """dmlrpc_model_inferences_total of model simple on the supervisor's /metrics (the workers' sum)."""
    with urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as response:
        families = text_string_to_metric_families(response.read().decode())
        return sum(
            sample.value
            for family in families
            for sample in family.samples
            if sample.name == "dmlrpc_model_inferences_total" and sample.labels["model"] == "simple"
        )


def test_statistics_count_every_workers_inferences_whichever_connection_asks(
    server: Workers, connections: list[Connection]
) -> None:
    before = connections[0].statistics().inference_count
    assert _inferences_metric(server) == before
    for count, connection in enumerate(connections, start=1):
        connection.infer(count)  # 1 + 2 + ... + 8 = 36 inferences, 10 on worker 0's connections, 26 on worker 1's
    answers = [connection.statistics() for connection in connections]
    assert {stats.inference_count - before for stats in answers} == {36}
    assert len({stats.SerializeToString() for stats in answers}) == 1  # the same answer on every connection
    stats = answers[0]
    assert stats.inference_stats.success.count == stats.inference_count
    assert stats.execution_count == sum(batch.compute_infer.count for batch in stats.batch_stats)
    everything = connections[-1].oip.ModelStatistics(service_pb2.ModelStatisticsRequest(), timeout=30)
    assert [s.inference_count for s in everything.model_stats if s.name == "simple"] == [stats.inference_count]
    assert _inferences_metric(server) == stats.inference_count  # Prometheus counts the same, summed by the supervisor


def test_index_readiness_load_and_unload_agree_on_every_connection(connections: list[Connection]) -> None:
    assert len({connection.index() for connection in connections}) == 1
    assert all(connection.ready() for connection in connections)
    unload = service_pb2.RepositoryModelUnloadRequest(model_name="simple")
    connections[0].oip.RepositoryModelUnload(unload, timeout=60)  # worker 0 asks
    assert not any(connection.ready() for connection in connections)
    assert len({connection.index() for connection in connections}) == 1
    load = service_pb2.RepositoryModelLoadRequest(model_name="simple")
    connections[-1].oip.RepositoryModelLoad(load, timeout=60)  # worker 1 asks
    assert all(connection.ready() for connection in connections)
    assert len({connection.index() for connection in connections}) == 1
    assert {connection.statistics().inference_count for connection in connections} == {0}  # a new load counts anew


def test_a_restarted_worker_repeats_the_loads_and_unloads_made_before(server: Workers) -> None:
    first = _connections(server)
    try:
        first[0].oip.RepositoryModelUnload(service_pb2.RepositoryModelUnloadRequest(model_name="fixed"), timeout=60)
        kill(server.pids[1])
        again = server.process.wait_for(WORKER)
        assert again is not None and again.group(1) == "1", server.process.log()
        _serving(server.port)
    finally:
        for connection in first:
            connection.channel.close()
    restarted = _connections(server)
    try:
        assert not any(connection.ready("fixed") for connection in restarted)
        assert all(connection.ready("simple") for connection in restarted)
        assert len({connection.index() for connection in restarted}) == 1
    finally:
        for connection in restarted:
            connection.channel.close()
