"""The README's Python examples run against a real server and print what the README says."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re

from tests.conftest import ServerThread

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_examples_run(server: ServerThread) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2
    for block in blocks:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(block.replace("localhost:50051", server.address), {})  # our own README
        assert printed.getvalue().strip()
    assert "[11. 10.  9.  8.  7.  6.]" in printed.getvalue()


def test_readme_grpcurl_execute_json_is_what_the_server_answers(server: ServerThread) -> None:
    """The JSON body of the README's grpcurl Execute call, parsed as grpcurl does (protobuf JSON) and sent."""
    import base64

    import grpc
    import numpy as np
    from google.protobuf import json_format

    from dmlrpc.v1 import service_pb2, service_pb2_grpc

    (body,) = re.findall(r"grpcurl -plaintext -d '(\{\"operator_desc\".*?)' \\", README.read_text(), re.S)
    request = json_format.Parse(body, service_pb2.ExecuteRequest())
    with grpc.insecure_channel(server.address) as channel:
        response = service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=30)
    printed = json_format.MessageToDict(response)
    values, indices = (base64.b64decode(output["buffer"]["data"]) for output in printed["outputs"])
    assert np.frombuffer(values, "<f4").tolist() == [9.0, 7.0]
    assert np.frombuffer(indices, "<u4").tolist() == [1, 3]
    assert '"AAAQQQAA4EA=" (9, 7)' in README.read_text() and '"AQAAAAMAAAA=" (1, 3)' in README.read_text()
