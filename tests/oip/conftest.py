"""Fixtures: a real server serving the test model repository (explicit control, client shared memory allowed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ServerThread, start_server
from tests.oip.repository import build


@pytest.fixture(scope="session")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def oip_server(repository: Path) -> Iterator[ServerThread]:
    running = start_server(
        model_repository=repository, model_control_mode="explicit", load_model=["*"], allow_client_shm=True
    )
    yield running
    running.stop()


@pytest.fixture
def triton(oip_server: ServerThread) -> Iterator[object]:
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(oip_server.address)
    yield client
    client.close()
