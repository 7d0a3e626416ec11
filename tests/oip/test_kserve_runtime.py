"""deploy/kserve/servingruntime.yaml carries what KServe needs to select and run it (field list of KServe's API)."""

from __future__ import annotations

import pathlib

import yaml

from dmlrpc_server.settings import ServerSettings

RUNTIME = pathlib.Path(__file__).resolve().parents[2] / "deploy" / "kserve" / "servingruntime.yaml"


def test_serving_runtime_fields() -> None:
    runtime = yaml.safe_load(RUNTIME.read_text())
    assert (runtime["apiVersion"], runtime["kind"]) == ("serving.kserve.io/v1alpha1", "ServingRuntime")
    spec = runtime["spec"]
    assert set(spec["protocolVersions"]) == {"v2", "grpc-v2"}
    assert {"name": "onnx", "version": "1", "autoSelect": True, "priority": 1} in spec["supportedModelFormats"]
    (container,) = spec["containers"]
    assert container["name"] == "kserve-container"
    assert "--model-repository=/mnt/models" in container["args"]
    (port,) = container["ports"]
    assert port["name"] == "h2c" and container["readinessProbe"]["grpc"]["port"] == port["containerPort"]
    assert f"--port={port['containerPort']}" in container["args"]
    # The args are the server's own flags: every one parses.
    flags = dict(arg.removeprefix("--").split("=", 1) for arg in container["args"])
    settings = ServerSettings(**{key.replace("-", "_"): value for key, value in flags.items()})
    assert str(settings.model_repository) == "/mnt/models" and settings.port == port["containerPort"]
