"""Structured logs: one debug line per call with its fields, request ids shared with the client, JSON lines."""

from __future__ import annotations

import json
import logging
import time

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc._base import prepare_execute
from dmlrpc.v1 import service_pb2_grpc
from dmlrpc_server.logs import JsonFormatter
from tests.conftest import ServerThread


def _call_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "duration_ms", None) is not None]


def test_one_debug_line_per_call_and_errors_with_request_ids(
    server: ServerThread, client: dmlrpc.Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="dmlrpc_server.interceptors"):
        client.top_k(np.arange(5, dtype=np.float32), 2)
        call = ops.top_k(np.arange(5, dtype=np.float32), 2)
        call.operator_desc.top_k1.axis = 3
        with pytest.raises(dmlrpc.InvalidArgumentError) as info:
            client.execute(call.operator_desc, call.inputs)
        # The server logs a call as its handler returns, which can be just after the client has its answer.
        deadline = time.monotonic() + 10
        while len(_call_lines(caplog)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    calls = _call_lines(caplog)
    assert [(r.method, r.operator, r.code) for r in calls] == [  # type: ignore[attr-defined]
        ("/dmlrpc.v1.DirectMLService/Execute", "top_k1", "OK"),
        ("/dmlrpc.v1.DirectMLService/Execute", "top_k1", "INVALID_ARGUMENT"),
    ]
    failures = [r for r in caplog.records if r.levelno == logging.INFO and "failed" in r.getMessage()]
    assert len(failures) == 1
    assert failures[0].request_id == info.value.request_id == calls[1].request_id  # type: ignore[attr-defined]


def test_the_clients_request_id_is_kept(server: ServerThread) -> None:
    call = ops.top_k(np.arange(5, dtype=np.float32), 9)
    request = prepare_execute(call.operator_desc, call.inputs).request
    with grpc.insecure_channel(server.address) as channel, pytest.raises(grpc.RpcError) as info:
        service_pb2_grpc.DirectMLServiceStub(channel).Execute(
            request, metadata=(("dmlrpc-request-id", "job-42.step-7"),), timeout=30
        )
    assert ("dmlrpc-request-id", "job-42.step-7") in info.value.trailing_metadata()  # type: ignore[attr-defined]


def test_json_lines_carry_the_call_fields() -> None:
    record = logging.LogRecord("dmlrpc_server.interceptors", logging.INFO, __file__, 1, "%s failed", ("x",), None)
    record.request_id, record.code = "abc", "INVALID_ARGUMENT"
    entry = json.loads(JsonFormatter().format(record))
    assert entry["message"] == "x failed"
    assert (entry["level"], entry["request_id"], entry["code"]) == ("INFO", "abc", "INVALID_ARGUMENT")
    assert "operator" not in entry
