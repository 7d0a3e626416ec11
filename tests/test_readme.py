"""The README's Python examples run against a real server and print what the README says."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re

from tests.conftest import ServerThread
from tests.doc_blocks import block, tagged

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_examples_run(server: ServerThread) -> None:
    examples = tagged("README.md", "python")
    assert len(examples) >= 2
    for example in examples:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(example.text.replace("localhost:50051", server.address), {})  # our own README
        assert printed.getvalue().strip()
    assert "[11. 10.  9.  8.  7.  6.]" in printed.getvalue()


def test_readme_grpcurl_execute_json_is_what_the_server_answers(server: ServerThread) -> None:
    """The JSON body of the README's grpcurl Execute call, parsed as grpcurl does (protobuf JSON) and sent."""
    import base64

    import grpc
    import numpy as np
    from google.protobuf import json_format

    from dmlrpc.v1 import service_pb2, service_pb2_grpc

    text = block("README.md", "sh", "grpcurl").text
    (body,) = re.findall(r"grpcurl -plaintext -d '(\{\"operator_desc\".*?)' \\", text, re.S)
    request = json_format.Parse(body, service_pb2.ExecuteRequest())
    with grpc.insecure_channel(server.address) as channel:
        response = service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=30)
    printed = json_format.MessageToDict(response)
    values, indices = (base64.b64decode(output["buffer"]["data"]) for output in printed["outputs"])
    assert np.frombuffer(values, "<f4").tolist() == [9.0, 7.0]
    assert np.frombuffer(indices, "<u4").tolist() == [1, 3]
    assert '"AAAQQQAA4EA=" (9, 7)' in README.read_text() and '"AQAAAAMAAAA=" (1, 3)' in README.read_text()


def test_configuration_sample_runs_as_written(tmp_path: pathlib.Path) -> None:
    # The README's configuration example: its command line and its TOML file, as written, but with the TLS and token
    # files made here (the sample's /etc paths) and free ports for its 50052 and 9465. Variables override the
    # file (max_queue_depth 64, not 128); the file overrides the defaults (max_tensor_bytes).
    import os
    import shlex
    import subprocess
    import sys
    import time

    import numpy as np

    import dmlrpc
    from tests.service.certificates import Authority
    from tests.test_cli import START_TIMEOUT, _free_port

    command = block("README.md", "sh", "configuration").text.strip()
    (toml,) = re.findall(r"^# dmlrpc\.toml\n(.*)", block("README.md", "toml").text, re.S)
    authority = Authority(tmp_path, "readme")
    server = authority.issue("localhost", server=True)
    (tmp_path / "tokens").write_text("readme-token\n")
    toml = toml.replace("/etc/dmlrpc/tls.crt", server.cert_file.as_posix())
    toml = toml.replace("/etc/dmlrpc/tls.key", server.key_file.as_posix())
    toml = toml.replace("/etc/dmlrpc/tokens", (tmp_path / "tokens").as_posix())
    (tmp_path / "dmlrpc.toml").write_text(toml)
    port, metrics_port = _free_port(), _free_port()
    words = shlex.split(command.replace("50052", str(port)).replace("9465", str(metrics_port)))
    environment = dict(os.environ)
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        environment[name] = value
    assert words[0] == "dmlrpc-server"
    process = subprocess.Popen(
        [sys.executable, "-m", "dmlrpc_server", *words[1:]],
        cwd=tmp_path,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        tls = dmlrpc.TLS(root_certificates=authority.pem)
        with dmlrpc.Client(f"localhost:{port}", tls=tls, token="readme-token", timeout=START_TIMEOUT) as client:
            deadline = time.monotonic() + START_TIMEOUT
            while True:  # until the server listens
                try:
                    limits = client.get_capabilities().limits
                    break
                except dmlrpc.UnavailableError:
                    assert time.monotonic() < deadline and process.poll() is None, "the server did not start"
                    time.sleep(0.2)
            values, _ = client.top_k(np.array([[3, 9, 1, 7]], np.float32), k=2, axis=1)
    finally:
        process.terminate()
        _, log = process.communicate(timeout=30)
    assert (limits.max_queue_depth, limits.max_concurrent_requests, limits.max_tensor_bytes) == (64, 32, 268435456)
    np.testing.assert_array_equal(values, [[9, 7]])
    assert process.returncode == 0, log


def test_the_options_table_lists_every_flag() -> None:
    # The README's options table is where operators look a flag up: every flag of --help is in it.
    import subprocess
    import sys

    shown = subprocess.run(
        [sys.executable, "-m", "dmlrpc_server", "--help"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    flags = set(re.findall(r"^  (--[a-z0-9-]+)", shown, re.M)) - {"--help", "--config"}
    text = README.read_text()
    table = text[text.index("| group | options") : text.index("**Limits are checked from the descs")]
    assert flags and not sorted(flag for flag in flags if f"`{flag}" not in table)
