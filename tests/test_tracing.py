"""Tracing (--tracing, the dmlrpc[tracing] extra): the caller's traceparent is the server span's parent, each stage a
child span, and off there are none; exported over OTLP/gRPC to a real receiver from a server process."""

from __future__ import annotations

import itertools
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent import futures
from typing import Any

import grpc
import numpy as np
import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc.v1 import service_pb2, service_pb2_grpc
from dmlrpc_server.settings import ServerSettings
from tests.conftest import ServerThread
from tests.test_cli import LISTENING, ROOT, ServerProcess

try:
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind, StatusCode
except ModuleNotFoundError as missing:  # pragma: no cover - the dev install has the extra
    pytest.skip(
        f"the dmlrpc[tracing] extra is not installed ({missing}): pip install -e '.[dev]'", allow_module_level=True
    )

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
PARENT_ID = 0x00F067AA0BA902B7
TRACEPARENT = f"00-{TRACE_ID:032x}-{PARENT_ID:016x}-01"
STAGES = ["read", "plan", "admit", "bind", "run", "encode"]


class _Spans(InMemorySpanExporter):
    """The in-memory exporter, whose finished spans can be waited for: a failed call's status reaches its caller
    (``context.abort``) before its span ends."""

    def __init__(self) -> None:
        super().__init__()
        self.exported = threading.Condition()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self.exported:
            result = super().export(spans)
            self.exported.notify_all()
        return result

    def wait_for(self, name: str) -> list[ReadableSpan]:
        """The finished spans named ``name``, once there is one."""
        with self.exported:
            assert self.exported.wait_for(lambda: any(s.name == name for s in self.get_finished_spans()), timeout=60)
        return [span for span in self.get_finished_spans() if span.name == name]


@pytest.fixture(scope="module")
def traced() -> Iterator[tuple[ServerThread, _Spans]]:
    exporter = _Spans()
    settings = ServerSettings(host="127.0.0.1", port=0, provider="cpu", metrics_port=0)  # type: ignore[call-arg]
    running = ServerThread(settings, span_exporter=exporter)
    yield running, exporter
    running.stop()


def _top_k_request() -> service_pb2.ExecuteRequest:
    call = ops.top_k(np.array([[[[0, 1, 10, 11], [3, 2, 9, 8]]]], np.float32), k=2, axis=3)
    return service_pb2.ExecuteRequest(
        operator_desc=call.operator_desc,
        inputs=[service_pb2.BindingDesc(buffer=service_pb2.BufferBinding(data=a.tobytes())) for a in call.inputs],  # type: ignore[union-attr]
    )


def _execute(address: str, request: service_pb2.ExecuteRequest, metadata: tuple[tuple[str, str], ...] = ()) -> Any:
    with grpc.insecure_channel(address) as channel:
        return service_pb2_grpc.DirectMLServiceStub(channel).Execute(request, timeout=60, metadata=metadata)


def _call_spans(exporter: _Spans, method: str) -> list[ReadableSpan]:
    return exporter.wait_for(f"dmlrpc.v1.DirectMLService/{method}")


def test_a_call_with_a_traceparent_is_its_child_with_one_span_per_stage(
    traced: tuple[ServerThread, _Spans],
) -> None:
    running, exporter = traced
    request = _top_k_request()
    _execute(running.address, request)  # compiles: the traced call is the common one, a hit
    exporter.clear()
    response = _execute(running.address, request, (("traceparent", TRACEPARENT), ("tracestate", "vendor=value")))
    assert len(response.outputs) == 2

    [call] = _call_spans(exporter, "Execute")
    assert call.context is not None and call.parent is not None
    assert call.context.trace_id == TRACE_ID
    assert call.parent.span_id == PARENT_ID and call.parent.is_remote
    assert call.context.trace_state.get("vendor") == "value"
    assert call.kind is SpanKind.SERVER
    assert call.attributes is not None
    assert call.attributes["rpc.system"] == "grpc"
    assert call.attributes["rpc.service"] == "dmlrpc.v1.DirectMLService"
    assert call.attributes["rpc.method"] == "Execute"
    assert call.attributes["rpc.grpc.status_code"] == 0
    assert call.attributes["dmlrpc.operator"] == "top_k1"
    assert call.attributes["dmlrpc.request_bytes"] == request.ByteSize()
    assert call.attributes["dmlrpc.response_bytes"] == response.ByteSize()

    below = [
        span for span in exporter.get_finished_spans() if span.parent and span.parent.span_id == call.context.span_id
    ]
    children = sorted(below, key=lambda span: span.start_time or 0)
    assert [span.name for span in children] == STAGES
    for before, after in itertools.pairwise(children):  # one after another, within the call
        assert before.end_time is not None and after.start_time is not None
        assert before.end_time <= after.start_time
    assert call.start_time is not None and call.end_time is not None
    assert call.start_time <= (children[0].start_time or 0) and (children[-1].end_time or 0) <= call.end_time
    stage = {span.name: dict(span.attributes or {}) for span in children}
    assert stage["read"]["dmlrpc.request_bytes"] == request.ByteSize()
    assert stage["plan"]["dmlrpc.operator"] == "top_k1"
    assert stage["run"]["dmlrpc.batch_size"] == 1
    assert stage["encode"]["dmlrpc.response_bytes"] == response.ByteSize()


def test_a_call_without_a_traceparent_is_a_root_and_a_failed_one_records_its_status(
    traced: tuple[ServerThread, _Spans],
) -> None:
    running, exporter = traced
    exporter.clear()
    _execute(running.address, _top_k_request())
    [call] = _call_spans(exporter, "Execute")
    assert call.parent is None
    assert call.context is not None and call.context.trace_id != TRACE_ID

    exporter.clear()
    with pytest.raises(grpc.RpcError) as failed:
        _execute(running.address, service_pb2.ExecuteRequest())  # no desc: INVALID_ARGUMENT
    assert failed.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    [call] = _call_spans(exporter, "Execute")
    assert call.attributes is not None
    assert call.attributes["rpc.grpc.status_code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert call.status.status_code is StatusCode.UNSET  # the caller's error, not the server's (the conventions)


def _stages_of(exporter: _Spans, method: str) -> list[str]:
    """The names of the stage spans of the one call of ``method`` exported since the last clear, in order."""
    [call] = _call_spans(exporter, method)
    assert call.context is not None
    children = [s for s in exporter.get_finished_spans() if s.parent and s.parent.span_id == call.context.span_id]
    return [span.name for span in sorted(children, key=lambda span: span.start_time or 0)]


def test_a_streamed_call_and_a_dispatch_have_their_stage_spans(traced: tuple[ServerThread, _Spans]) -> None:
    running, exporter = traced
    call = ops.top_k(np.array([[[[0, 1, 10, 11], [3, 2, 9, 8]]]], np.float32), k=2, axis=3)
    with dmlrpc.Client(running.address, timeout=60) as client:
        client.execute(call.operator_desc, call.inputs, stream=True)
        exporter.clear()
        values, _ = client.execute(call.operator_desc, call.inputs, stream=True)
        np.testing.assert_array_equal(values, [[[[11, 10], [9, 8]]]])
        # ExecuteStream reads its start message, plans and receives its chunks in ``read``.
        assert _stages_of(exporter, "ExecuteStream") == [name for name in STAGES if name != "plan"]
        with client.compile(call.operator_desc) as compiled:
            exporter.clear()
            values, _ = compiled(*call.inputs)
            np.testing.assert_array_equal(values, [[[[11, 10], [9, 8]]]])
            assert _stages_of(exporter, "Dispatch") == STAGES


def test_an_inference_call_is_a_server_span_naming_its_model(traced: tuple[ServerThread, _Spans]) -> None:
    from tritonclient.grpc import service_pb2 as inference
    from tritonclient.grpc import service_pb2_grpc as inference_grpc

    running, exporter = traced
    x = np.array([[3, 9, 1, 7]], np.float32)
    with dmlrpc.Client(running.address, timeout=60) as client, client.compile(ops.top_k(x, 2).operator_desc) as op:
        op.publish("top_k_traced")
        request = inference.ModelInferRequest(model_name="top_k_traced")
        request.inputs.add(name="input_tensor", datatype="FP32", shape=list(x.shape))
        request.raw_input_contents.append(x.tobytes())
        exporter.clear()
        with grpc.insecure_channel(running.address) as channel:
            stub = inference_grpc.GRPCInferenceServiceStub(channel)
            response = stub.ModelInfer(request, timeout=60, metadata=(("traceparent", TRACEPARENT),))
        np.testing.assert_array_equal(np.frombuffer(response.raw_output_contents[0], "<f4"), [9, 7])
        [call] = exporter.wait_for("inference.GRPCInferenceService/ModelInfer")
    assert call.context is not None and call.context.trace_id == TRACE_ID
    assert call.parent is not None and call.parent.span_id == PARENT_ID
    assert call.attributes is not None
    assert call.attributes["rpc.service"] == "inference.GRPCInferenceService"
    assert call.attributes["rpc.method"] == "ModelInfer"
    assert call.attributes["dmlrpc.model"] == "top_k_traced"
    assert call.attributes["rpc.grpc.status_code"] == 0


def test_batched_calls_name_their_batch_size() -> None:
    # A lone request waits up to a second for company: 32 calls at once run in batches of several.
    exporter = _Spans()
    settings = ServerSettings(host="127.0.0.1", port=0, provider="cpu", metrics_port=0, max_batch_delay_us=1_000_000)  # type: ignore[call-arg]
    running = ServerThread(settings, span_exporter=exporter)
    try:
        request = _top_k_request()
        _execute(running.address, request)
        exporter.clear()
        with grpc.insecure_channel(running.address) as channel:
            stub = service_pb2_grpc.DirectMLServiceStub(channel)
            calls = [stub.Execute.future(request, timeout=60) for _ in range(32)]
            for call in calls:
                assert len(call.result().outputs) == 2
        runs = [span for span in exporter.get_finished_spans() if span.name == "run"]
    finally:
        running.stop()
    assert len(runs) == 32
    sizes = [dict(span.attributes or {})["dmlrpc.batch_size"] for span in runs]
    assert all(isinstance(size, int) for size in sizes)
    assert max(sizes) > 1, sizes  # type: ignore[operator]
    # Each member of a batch of k names k: k calls name it (or a multiple of k, for several such batches).
    assert all(sizes.count(size) % size == 0 for size in set(sizes)), sizes  # type: ignore[operator]


def test_off_there_are_no_spans(server: ServerThread, traced: tuple[ServerThread, _Spans]) -> None:
    _, exporter = traced
    exporter.clear()
    _execute(server.address, _top_k_request(), (("traceparent", TRACEPARENT),))  # the suite's server: tracing off
    assert exporter.get_finished_spans() == ()
    assert server.built.tracing is None
    assert server.built.settings.tracing == "off"
    # Nothing of the request path is wrapped: the stage functions are the classes' own.
    service = server.built.service
    assert not {"execute"} & vars(service).keys()
    assert not {"run", "place"} & vars(service.scheduler).keys()
    traced_service = traced[0].built.service
    assert {"execute"} <= vars(traced_service).keys() and {"run", "place"} <= vars(traced_service.scheduler).keys()


class _Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP/gRPC trace endpoint (OpenTelemetry's own TraceService): what it receives, in a queue."""

    def __init__(self) -> None:
        self.received: queue.Queue[trace_service_pb2.ExportTraceServiceRequest] = queue.Queue()

    def Export(  # noqa: N802 - the gRPC method's name
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: grpc.ServicerContext
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        self.received.put(request)
        return trace_service_pb2.ExportTraceServiceResponse()


@pytest.fixture
def receiver() -> Iterator[tuple[_Receiver, int]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = _Receiver()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, port
    server.stop(None)


def test_a_server_process_exports_its_spans_over_otlp(
    receiver: tuple[_Receiver, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    servicer, port = receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "dmlrpc-under-test")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    # Two workers (separate processes): each sets up its own tracer provider and exporter.
    process = ServerProcess(
        "--port", "0", "--provider", "cpu", "--metrics-port", "0", "--workers", "2", "--tracing", "otlp"
    )
    try:
        match = process.wait_for(LISTENING)
        assert match is not None, process.log()
        _execute(f"127.0.0.1:{match.group(1)}", _top_k_request(), (("traceparent", TRACEPARENT),))
        names: set[str] = set()
        services: set[str] = set()
        workers: set[int] = set()
        while not {"dmlrpc.v1.DirectMLService/Execute", *STAGES} <= names:
            export = servicer.received.get(timeout=60)  # the batch processor sends within its delay
            for resource_spans in export.resource_spans:
                resource = resource_spans.resource.attributes
                services |= {a.value.string_value for a in resource if a.key == "service.name"}
                workers |= {a.value.int_value for a in resource if a.key == "dmlrpc.worker"}
                for scope in resource_spans.scope_spans:
                    names |= {span.name for span in scope.spans if span.trace_id == TRACE_ID.to_bytes(16, "big")}
        assert services == {"dmlrpc-under-test"}
        assert workers and workers <= {0, 1}  # each worker process exports as itself
    finally:
        process.close()


#: Python that runs with OpenTelemetry unimportable (None in sys.modules: import raises ModuleNotFoundError), as
#: where the extra is not installed.
HIDDEN = "import sys; sys.modules['opentelemetry'] = None; "


def test_without_the_extra_the_server_serves_with_tracing_off() -> None:
    script = HIDDEN + (
        "import numpy as np, dmlrpc; from tests.conftest import start_server; running = start_server(); "
        "client = dmlrpc.Client(running.address, timeout=60); "
        "print(client.top_k(np.array([[3, 9, 1, 7]], np.float32), 2)[0].tolist()); client.close(); running.stop()"
    )
    ended = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert ended.returncode == 0, ended.stderr
    assert ended.stdout.strip() == "[[9.0, 7.0]]"


def test_tracing_without_the_extra_is_a_clear_start_error() -> None:
    hidden = HIDDEN + "from dmlrpc_server.__main__ import main; sys.exit(main())"
    ended = subprocess.run(
        [sys.executable, "-c", hidden, "--port", "0", "--provider", "cpu", "--tracing", "otlp"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ended.returncode == 2, ended.stderr
    assert "pip install 'dmlrpc[tracing]'" in ended.stderr
    assert "--tracing" in ended.stderr or "DMLRPC_TRACING" in ended.stderr
