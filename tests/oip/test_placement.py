"""Where a model's batches run: on the event loop when its estimated work is tiny, else on worker threads."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from dmlrpc_server.oip.models import ModelVersion
from tests.conftest import ServerThread, start_server
from tests.oip.repository import identity, model, write

LOOP_THREAD = "dmlrpc-test-server"  # tests/conftest.py's server loop
WORKER_PREFIX = "dmlrpc-op"  # the scheduler's operator threads


def _doubled(shape: list[int]) -> object:
    return model(
        [helper.make_node("Add", ["X", "X"], ["Y"])],
        [("X", TensorProto.FLOAT, shape)],
        [("Y", TensorProto.FLOAT, shape)],
    )


@pytest.fixture(scope="module")
def placed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    root: Path = tmp_path_factory.mktemp("placed")
    write(root, "tiny", _doubled(["N", 16]), config="max_batch_size: 8\ndynamic_batching { }\n")
    write(root, "large", _doubled([1, 1 << 19]), config="max_batch_size: 0\n")
    write(root, "unknown", identity(TensorProto.FLOAT), config="max_batch_size: 8\n")  # [N, D]: D unknown
    running = start_server(model_repository=root, model_control_mode="explicit", load_model=["*"])
    yield running
    running.stop()


def _threads_of(server: ServerThread, name: str) -> list[str]:
    """Record the thread each run of ``name``'s version takes (instrumenting its runner; the session still runs)."""
    assert server.built.inference is not None
    version: ModelVersion = server.built.inference.repository.get(name, "")
    seen: list[str] = []
    run = version._run

    def recorded(feeds: dict[str, np.ndarray], options: object) -> dict[str, np.ndarray]:
        seen.append(threading.current_thread().name)
        return run(feeds, options)  # type: ignore[arg-type]

    version._run = recorded  # type: ignore[assignment]
    return seen


@pytest.mark.parametrize(
    ("name", "shape", "on_loop"),
    [("tiny", [2, 16], True), ("large", [1, 1 << 19], False), ("unknown", [2, 5], False)],
)
def test_a_models_batches_run_where_their_work_puts_them(
    placed: ServerThread, name: str, shape: list[int], on_loop: bool
) -> None:
    import tritonclient.grpc as grpcclient

    seen = _threads_of(placed, name)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    first = "X" if name != "unknown" else "INPUT0"
    request = grpcclient.InferInput(first, shape, "FP32")
    request.set_data_from_numpy(x)
    client = grpcclient.InferenceServerClient(placed.address)
    try:
        result = client.infer(name, [request])
    finally:
        client.close()
    output = result.as_numpy("Y" if name != "unknown" else "OUTPUT0")
    np.testing.assert_array_equal(output, x + x if name != "unknown" else x)
    assert len(seen) == 1
    if on_loop:
        assert seen == [LOOP_THREAD]
    else:
        assert seen[0].startswith(WORKER_PREFIX), seen
