"""The example clients (C++, Node, Python) and docs/protocol.md's requests, run against the real server."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest
from google.protobuf import json_format

from dmlrpc.v1 import service_pb2, service_pb2_grpc
from tests.conftest import ServerThread
from tests.doc_blocks import GRPCURL_MISSING, block, grpcurl

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PROTOCOL = ROOT / "docs" / "protocol.md"
INSTALL = "tools/install-example-toolchains.sh"
#: What the C++ and Node clients print after their "server <provider> <feature level>" line.
EXPECTED_CLIENT_LINES = [
    "PASS capabilities: top_k1 scatter_nd executable",
    "PASS top_k1 example 1: values [11 10 9 8 7 6] indices [3 2 2 3 3 2]",
    "PASS top_k1 example 2: values [4 5 10 11 3 2 9 8] indices [2 2 0 0 1 1 1 1]",
    "PASS top_k1 example 3: values [3 2 2 5 5 4 6 6 6] indices [3 1 2 2 3 1 0 1 2]",
    "PASS top_k1 example 4: values [1 2 2 3 4 5 6 6 6] indices [0 1 2 0 1 2 0 1 2]",
    "PASS scatter_nd example: output [1 11 3 10 9 6 7 12]",
    "PASS invalid_argument: INVALID_ARGUMENT operator_desc.top_k1.k",
    # ExecuteMany: four tagged items over one stream, the bad one failing alone.
    "PASS execute_many tag 1: values [11 10 9 8 7 6] indices [3 2 2 3 3 2]",
    "PASS execute_many tag 2: INVALID_ARGUMENT operator_desc.top_k1.k",
    "PASS execute_many tag 3: values [1 2 2 3 4 5 6 6 6] indices [0 1 2 0 1 2 0 1 2]",
    "PASS execute_many tag 4: output [1 11 3 10 9 6 7 12]",
    "RESULT passed=11 failed=0",
]


def unavailable(reason: str) -> None:
    """Skip for a missing toolchain, except in CI, which must run every example."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI runs {INSTALL} to install it")
    pytest.skip(f"{reason} (run {INSTALL})")


def run(command: Sequence[str | Path], *, timeout: float, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def closed_port_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def assert_client_passed(result: subprocess.CompletedProcess[str]) -> None:
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, output
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"server \w+ExecutionProvider FEATURE_LEVEL_6_4", lines[0]), output
    assert lines[1:] == EXPECTED_CLIENT_LINES, output


def assert_client_failed(result: subprocess.CompletedProcess[str]) -> None:
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 1, output
    lines = result.stdout.splitlines()
    assert lines[-1] == "RESULT passed=0 failed=11", output
    assert all(line.startswith("FAIL ") for line in lines[:-1]), output
    # Nothing listens there: every check reports the status it really got, not the one it expected.
    assert all("UNAVAILABLE" in line for line in lines[:-1]), output


# ---------------------------------------------------------------------------------------------------------------
# C++


@pytest.fixture(scope="session")
def cpp_client() -> Path:
    """examples/cpp built with CMake into a per-checkout cache directory (incremental after the first build)."""
    for tool in ("cmake", "c++", "pkg-config", "protoc", "grpc_cpp_plugin"):
        if shutil.which(tool) is None:
            unavailable(f"the C++ example needs {tool}, which is not on PATH")
    if run(["pkg-config", "--exists", "grpc++", "protobuf"], timeout=30).returncode != 0:
        unavailable("the C++ example needs the grpc++ and protobuf development packages (pkg-config finds none)")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dmlrpc"
    build = cache / f"examples-cpp-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]}"
    configure = run(["cmake", "-S", EXAMPLES / "cpp", "-B", build], timeout=300)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    compile_ = run(["cmake", "--build", build, "--parallel", str(os.cpu_count() or 2)], timeout=600)
    assert compile_.returncode == 0, compile_.stdout + compile_.stderr
    return build / "dmlrpc_example"


def test_cpp_configure_without_grpc_names_the_install_script(tmp_path: Path) -> None:
    """A bare CMake failure said what was missing but not how to get it."""
    for tool in ("cmake", "c++", "pkg-config"):
        if shutil.which(tool) is None:
            unavailable(f"the C++ example needs {tool}, which is not on PATH")
    # pkg-config searching an empty directory: the grpc++ and protobuf packages look uninstalled.
    env = {**os.environ, "PKG_CONFIG_LIBDIR": str(tmp_path / "empty"), "PKG_CONFIG_PATH": ""}
    result = subprocess.run(
        ["cmake", "-S", str(EXAMPLES / "cpp"), "-B", str(tmp_path / "build")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert INSTALL in " ".join(output.split()), output  # CMake wraps its messages


def test_cpp_client_runs_the_directml_examples(cpp_client: Path, server: ServerThread) -> None:
    assert_client_passed(run([cpp_client, server.address], timeout=120))


def test_cpp_client_exits_nonzero_when_checks_fail(cpp_client: Path) -> None:
    assert_client_failed(run([cpp_client, closed_port_address()], timeout=120))


# ---------------------------------------------------------------------------------------------------------------
# Node


@pytest.fixture(scope="session")
def node_client() -> Path:
    if shutil.which("node") is None:
        unavailable("the Node example needs node, which is not on PATH")
    if not (EXAMPLES / "node" / "node_modules" / "@grpc" / "grpc-js").is_dir():
        unavailable("examples/node has no node_modules (npm ci in examples/node)")
    return EXAMPLES / "node" / "client.js"


def test_node_client_runs_the_directml_examples(node_client: Path, server: ServerThread) -> None:
    assert_client_passed(run(["node", node_client, server.address], timeout=120))


def test_node_client_exits_nonzero_when_checks_fail(node_client: Path) -> None:
    assert_client_failed(run(["node", node_client, closed_port_address()], timeout=120))


def test_readme_other_languages_run_as_written(cpp_client: Path, node_client: Path, server: ServerThread) -> None:
    """The README's "Other languages" block as written, run from the repository root: its build directory is the
    one the C++ fixture built (so CMake rebuilds nothing), its address the test server's."""
    tool = grpcurl()
    if tool is None:
        pytest.skip(GRPCURL_MISSING)
    script = block("README.md", "sh", "other-languages").text
    assert "/tmp/dmlrpc-cpp" in script and "localhost:50051" in script
    script = script.replace("/tmp/dmlrpc-cpp", str(cpp_client.parent)).replace("localhost:50051", server.address)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        env={**os.environ, "PATH": f"{Path(tool).parent}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = f"{script}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.returncode == 0, output
    # The C++ and the Node client print what the comment says, and grpcurl the capabilities.
    assert done.stdout.count("RESULT passed=11 failed=0") == 2, output
    assert re.search(r'"feature_?[lL]evel": "FEATURE_LEVEL_6_4"', done.stdout), output


# ---------------------------------------------------------------------------------------------------------------
# Python


@pytest.mark.parametrize("script", sorted((EXAMPLES / "python").glob("*.py")), ids=lambda path: path.name)
def test_python_example_runs(script: Path, server: ServerThread) -> None:
    result = run([sys.executable, script, server.address], timeout=120)
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, output
    assert "PASS" in result.stdout and "FAIL" not in result.stdout, output


def test_python_examples_cover_the_brief() -> None:
    names = {path.stem for path in (EXAMPLES / "python").glob("*.py")}
    assert {"seed_examples", "strided_input", "error_handling", "async_client"} <= names


# ---------------------------------------------------------------------------------------------------------------
# docs/protocol.md


def protocol_execute_example() -> tuple[str, dict[str, Any]]:
    """The grpcurl Execute request body in docs/protocol.md and the response the page says it prints."""
    text = PROTOCOL.read_text()
    match = re.search(
        r"grpcurl -plaintext -d @ 127\.0\.0\.1:50051 dmlrpc\.v1\.DirectMLService/Execute <<'EOF'\n(.*?)\nEOF\n"
        r"```\n.*?```json\n(.*?)```",
        text,
        re.S,
    )
    assert match, "docs/protocol.md lost its grpcurl Execute example"
    return match.group(1), json.loads(match.group(2))


def protocol_codegen_recipe() -> str:
    """The ```sh codegen block under docs/protocol.md's "Generating code"."""
    return block("docs/protocol.md", "sh", "codegen").text


def test_protocol_codegen_recipe_compiles(tmp_path: Path) -> None:
    """The documented protoc and g++ commands, run as written (the CMake build alone let a broken recipe pass)."""
    if shutil.which("protoc") is None:
        unavailable("docs/protocol.md's recipe needs protoc, which is not on PATH")
    for tool in ("grpc_cpp_plugin", "g++", "pkg-config"):
        if shutil.which(tool) is None:
            unavailable(f"docs/protocol.md's recipe needs {tool}, which is not on PATH")
    if run(["pkg-config", "--exists", "grpc++", "protobuf"], timeout=30).returncode != 0:
        unavailable("docs/protocol.md's recipe needs the grpc++ and protobuf development packages")
    # The recipe's paths are relative to the repository root; a scratch root keeps its build/ out of this checkout.
    (tmp_path / "protos").symlink_to(ROOT / "protos")
    recipe = protocol_codegen_recipe()
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", recipe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"{recipe}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    # Every .proto file, present and future, is generated and compiled, and so is the service's stub.
    names = sorted(path.stem for path in (ROOT / "protos" / "dmlrpc" / "v1").glob("*.proto"))
    assert "service" in names
    for stem in [f"{name}.pb" for name in names] + ["service.grpc.pb"]:
        assert (tmp_path / "build" / "cpp" / "gen" / "dmlrpc" / "v1" / f"{stem}.cc").is_file(), (stem, recipe)
        assert (tmp_path / "build" / "cpp" / f"{stem}.o").stat().st_size > 0, (stem, recipe)
    # Nothing lands outside build/ (which git ignores): no gen/ and no objects in the repository root.
    assert sorted(path.name for path in tmp_path.iterdir()) == ["build", "protos"], recipe


@pytest.fixture
def channel(server: ServerThread) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.address) as opened:
        yield opened


def test_protocol_execute_example_is_what_the_server_answers(channel: grpc.Channel) -> None:
    body, printed = protocol_execute_example()
    request = json_format.Parse(body, service_pb2.ExecuteRequest())
    response = service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=60)
    assert json_format.MessageToDict(response) == printed
    values, indices = (base64.b64decode(output["buffer"]["data"]) for output in printed["outputs"])
    assert np.frombuffer(values, "<f4").tolist() == [11, 10, 9, 8, 7, 6]
    assert np.frombuffer(indices, "<u4").tolist() == [3, 2, 2, 3, 3, 2]


def test_protocol_example_bytes_are_the_directml_example() -> None:
    body, _ = protocol_execute_example()
    data = base64.b64decode(json.loads(body)["inputs"][0]["buffer"]["data"])
    assert np.frombuffer(data, "<f4").tolist() == [0, 1, 10, 11, 3, 2, 9, 8, 4, 5, 6, 7]
    assert "00 00 00 00  00 00 80 3f  00 00 20 41" in PROTOCOL.read_text()
    assert data[:12].hex(" ") == "00 00 00 00 00 00 80 3f 00 00 20 41"


def test_reflection_alone_is_enough_to_call_execute(channel: grpc.Channel) -> None:
    """A generic client: every type comes from the server's reflection service, none from generated code."""
    reflection = pytest.importorskip("grpc_reflection.v1alpha.proto_reflection_descriptor_database")
    from google.protobuf import descriptor_pool, message_factory

    database = reflection.ProtoReflectionDescriptorDatabase(channel)
    try:
        services = set(database.get_services())
    except grpc.RpcError as error:
        if error.code() == grpc.StatusCode.UNIMPLEMENTED:
            pytest.skip("the server does not serve reflection")
        raise
    assert {"dmlrpc.v1.DirectMLService", "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= (
        services
    )
    pool = descriptor_pool.DescriptorPool(database)
    method = pool.FindServiceByName("dmlrpc.v1.DirectMLService").FindMethodByName("Execute")
    request_class = message_factory.GetMessageClass(method.input_type)
    response_class = message_factory.GetMessageClass(method.output_type)
    body, printed = protocol_execute_example()
    execute = channel.unary_unary(
        f"/{method.containing_service.full_name}/{method.name}",
        request_serializer=request_class.SerializeToString,
        response_deserializer=response_class.FromString,
    )
    response = execute(json_format.Parse(body, request_class()), timeout=60)
    assert json_format.MessageToDict(response) == printed
    # The binding order is readable from reflection too: the desc's fields in field-number order.
    top_k1 = pool.FindMessageTypeByName("dmlrpc.v1.TopK1OperatorDesc")
    assert [field.name for field in sorted(top_k1.fields, key=lambda f: f.number)][:3] == [
        "input_tensor",
        "output_value_tensor",
        "output_index_tensor",
    ]


@pytest.mark.parametrize("source", ["reflection", "proto files"])
def test_grpcurl_runs_the_documented_calls(source: str, server: ServerThread) -> None:
    tool = grpcurl()
    if tool is None:
        pytest.skip(GRPCURL_MISSING)
    schema = [] if source == "reflection" else ["-import-path", "protos", "-proto", "dmlrpc/v1/service.proto"]
    body, printed = protocol_execute_example()
    execute = subprocess.run(
        [tool, "-plaintext", *schema, "-d", "@", server.address, "dmlrpc.v1.DirectMLService/Execute"],
        cwd=ROOT,
        input=body,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert execute.returncode == 0, execute.stderr
    assert json.loads(execute.stdout) == printed
    capabilities = run(
        [tool, "-plaintext", *schema, "-d", "{}", server.address, "dmlrpc.v1.DirectMLService/GetCapabilities"],
        timeout=60,
    )
    assert capabilities.returncode == 0, capabilities.stderr
    answer = json.loads(capabilities.stdout)  # field names as in the proto or in JSON's lowerCamelCase by source
    assert answer.get("feature_level", answer.get("featureLevel")) == "FEATURE_LEVEL_6_4"
    if source == "reflection":
        listed = run([tool, "-plaintext", server.address, "list"], timeout=60)
        assert listed.returncode == 0, listed.stderr
        assert {"dmlrpc.v1.DirectMLService", "grpc.health.v1.Health"} <= set(listed.stdout.split())
