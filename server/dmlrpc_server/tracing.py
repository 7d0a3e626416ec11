"""OpenTelemetry tracing (--tracing, the dmlrpc[tracing] extra): a server span per call, a child span per stage."""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import grpc
import onnxruntime as ort
from google.protobuf.message import DecodeError
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from dmlrpc_server.calls import CALL, Call
from dmlrpc_server.handlers import KINDS, HandlerWrapper
from dmlrpc_server.interceptors import code_of
from dmlrpc_server.oip.protocol import service_pb2 as oip_pb2
from dmlrpc_server.runtime.process import worker_index

if TYPE_CHECKING:
    from dmlrpc_server.service import Service

R = TypeVar("R")

#: The service.name spans carry unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) names another.
DEFAULT_SERVICE_NAME = "dmlrpc-server"
#: The calls that pass the stages of the request path (docs/architecture.md), each stage a child span.
STAGED = frozenset({"/dmlrpc.v1.DirectMLService/Execute", "/dmlrpc.v1.DirectMLService/Dispatch",
                    "/dmlrpc.v1.DirectMLService/ExecuteStream"})  # fmt: skip
#: gRPC codes that mark a server span as an error (OpenTelemetry's RPC conventions: the others are the caller's).
SERVER_ERRORS = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)
#: W3C trace context (traceparent and tracestate), read from the call's metadata.
_PROPAGATOR = TraceContextTextMapPropagator()
_MODEL_INFER = "/inference.GRPCInferenceService/ModelInfer"
#: The stage spans of the call in progress (set only for STAGED calls, only where tracing is on).
_STAGES: ContextVar[_Stages | None] = ContextVar("dmlrpc_stages", default=None)


class Tracing:
    """A server's tracer and what it traces: the wrapper that opens each call's span, and the stage functions
    wrapped (``instrument``). Built only with tracing on: off, nothing of this module runs or is even imported."""

    def __init__(self, exporter: SpanExporter, *, batch: bool = True) -> None:
        """Spans go to ``exporter`` (``batch``: in the background, OpenTelemetry's BatchSpanProcessor, configured
        by the standard OTEL_BSP_* variables; else as each ends, which tests read at once)."""
        worker = worker_index()
        # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; without a name of theirs, ours.
        resource = Resource.create({} if worker is None else {"dmlrpc.worker": worker})
        if str(resource.attributes.get(SERVICE_NAME, "unknown_service")).startswith("unknown_service"):
            resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
        self.provider = TracerProvider(resource=resource)
        self.provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
        self.tracer: Tracer = self.provider.get_tracer("dmlrpc_server")
        #: Calls waiting in a batch lane: their feeds' id -> their stages (the lane's run names the batch size).
        self.members: dict[int, _Stages] = {}

    @classmethod
    def otlp(cls) -> Tracing:
        """Spans exported over OTLP/gRPC to OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT; default
        localhost:4317), with the exporter's other standard OTEL_EXPORTER_OTLP_* variables (headers, TLS)."""
        return cls(OTLPSpanExporter())

    def wrapper(self) -> TracingInterceptor:
        return TracingInterceptor(self.tracer)

    def instrument(self, service: Service) -> None:
        """Wrap the stage functions of ``service``'s instances (its own ``execute``, its scheduler's ``now``, ``run``
        and ``place``) so that each stage of a STAGED call opens its span; the modules' code is untouched."""
        execute = service.execute
        scheduler = service.scheduler
        now = scheduler.now
        run = scheduler.run
        place = scheduler.place
        members = self.members

        async def traced_execute(call: Call) -> bytes:
            stages = _STAGES.get()
            if stages is not None and stages.name != "read":  # an ExecuteMany item
                stages = None
            if stages is not None:
                stages.set("dmlrpc.request_bytes", call.size)
                stages.next("plan")
            response = execute(call)
            if not isinstance(response, bytes):
                response = await response
            if stages is not None:
                stages.set("dmlrpc.response_bytes", len(response))
            return response

        def spanned(
            stages: _Stages, bind: Callable[[], Any] | None, encode: Callable[[Any], Any] | None, fed: list[int]
        ) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
            """``bind`` and ``encode`` opening their stages' spans; ``fed`` gets the id of each feeds made (a batch's
            members, until the call ends)."""

            def traced_bind() -> Any:
                stages.next("bind")
                assert bind is not None
                feeds = bind()
                members[id(feeds)] = stages
                fed.append(id(feeds))
                stages.next("run", {"dmlrpc.batch_size": 1})
                return feeds

            def traced_encode(results: Any) -> Any:
                stages.next("encode")
                assert encode is not None
                return encode(results)

            return traced_bind, traced_encode

        def traced_now(call: Call, compiled: Any, bind: Callable[[], Any], encode: Callable[[Any], Any]) -> Any:
            stages = _STAGES.get()
            if stages is None:
                return now(call, compiled, bind, encode)
            fed: list[int] = []
            traced_bind, traced_encode = spanned(stages, bind, encode, fed)

            def admitted_bind() -> Any:
                # Its admission only now that it runs at once: a call ``now`` leaves to ``run`` is admitted there.
                stages.set("dmlrpc.operator", call.label)
                stages.next("admit")
                return traced_bind()

            try:
                return now(call, compiled, admitted_bind, traced_encode)
            finally:
                for key in fed:
                    members.pop(key, None)

        async def traced_run(
            call: Call,
            compiled: Any,
            bind: Callable[[], Any] | None,
            encode: Callable[[Any], Any] | None,
            job: Callable[[ort.RunOptions], Any] | None = None,
            host_bytes: int = 0,
        ) -> Any:
            stages = _STAGES.get()
            if stages is None:
                return await run(call, compiled, bind, encode, job, host_bytes)
            stages.set("dmlrpc.operator", call.label)
            stages.next("admit")
            fed: list[int] = []
            traced_bind, traced_encode = spanned(stages, bind, encode, fed)

            def traced_job(options: ort.RunOptions | None) -> Any:
                # A resident call's job binds, runs and encodes on the device as one: one span.
                stages.next("run", {"dmlrpc.batch_size": 1})
                assert job is not None
                return job(options)

            try:
                if job is not None:
                    return await run(call, compiled, None, None, traced_job, host_bytes)
                return await run(call, compiled, traced_bind, traced_encode)
            finally:
                for key in fed:
                    members.pop(key, None)

        def traced_place(compiled: Any) -> Any:
            placement = place(compiled)
            if placement.lane is not None:
                placement.lane.policy = _Batches(placement.lane.policy, members)
            return placement

        service.execute = traced_execute  # type: ignore[method-assign]
        scheduler.now = traced_now  # type: ignore[method-assign]
        scheduler.run = traced_run  # type: ignore[method-assign]
        scheduler.place = traced_place  # type: ignore[method-assign]

    def shutdown(self) -> None:
        """Export the spans still buffered and stop the exporter (the server is stopping)."""
        self.provider.shutdown()


class _Stages:
    """One call's stage spans, one open at a time (the stages follow each other): each stage ends the one before.
    Stages may move on a worker thread (a call placed there binds, runs and encodes on it) while the call ends on
    the loop (cancelled, or its deadline passed): a lock keeps each span ended once, and none started after."""

    __slots__ = ("_lock", "_parent", "_span", "_tracer", "closed", "name")

    def __init__(self, tracer: Tracer, call_span: Span) -> None:
        self._tracer = tracer
        self._lock = threading.Lock()
        self._parent = trace.set_span_in_context(call_span)
        self.name = "read"
        self._span = tracer.start_span("read", self._parent)
        self.closed = False

    def next(self, name: str, attributes: dict[str, int] | None = None) -> None:
        """End the stage in progress and start ``name`` (nothing once the call has ended)."""
        with self._lock:
            if self.closed:
                return
            self._span.end()
            self.name = name
            self._span = self._tracer.start_span(name, self._parent, attributes=attributes)

    def set(self, key: str, value: str | int) -> None:
        """An attribute of the stage in progress."""
        with self._lock:
            if not self.closed:
                self._span.set_attribute(key, value)

    def end(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                self._span.end()


class _Batches(Generic[R]):
    """A batch lane's policy (``batching.Policy``) that names each member's batch size on its run span."""

    def __init__(self, policy: Any, members: dict[int, _Stages]) -> None:
        self._policy = policy
        self._members = members
        self.slots: int = policy.slots
        self.full: int = policy.full

    def take(self, queue: deque[Any], now_ns: int) -> int | float:
        result: int | float = self._policy.take(queue, now_ns)
        return result

    def inline(self, batch: list[Any]) -> bool:
        return bool(self._policy.inline(batch))

    def run(self, batch: list[Any]) -> list[R]:
        size = len(batch)
        for member in batch:
            stages = self._members.get(id(member.feeds))
            if stages is not None:
                stages.set("dmlrpc.batch_size", size)
        results: list[R] = self._policy.run(batch)
        return results

    def ran(self, batch: list[Any], started_ns: int, results: list[R] | None, error: BaseException | None) -> None:
        self._policy.ran(batch, started_ns, results, error)


class TracingInterceptor(HandlerWrapper):
    """The outermost handler wrapper with tracing on: each call's server span, a child of the caller's W3C
    ``traceparent`` (and ``tracestate``) when it sends one, else a root; RPC attributes as OpenTelemetry's
    conventions name them; the stage spans of STAGED calls."""

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        if method.startswith("/grpc."):
            return handler  # health probes and reflection: no traces of their own
        streams_in, streams_out = bool(handler.request_streaming), bool(handler.response_streaming)
        inner = handler.unary_unary or handler.stream_stream or handler.stream_unary or handler.unary_stream
        service, _, name = method.lstrip("/").rpartition("/")
        span_name = f"{service}/{name}"
        attributes = {"rpc.system": "grpc", "rpc.service": service, "rpc.method": name}
        staged = method in STAGED
        tracer = self._tracer

        def start(context: grpc.aio.ServicerContext[Any, Any]) -> Span:
            carrier = {key: value for key, value in context.invocation_metadata() or () if isinstance(value, str)}
            parent = _PROPAGATOR.extract(carrier)
            return tracer.start_span(span_name, parent, kind=SpanKind.SERVER, attributes=attributes)

        async def returned(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            span = start(context)
            # A call the sampler left out (OTEL_TRACES_SAMPLER) gets no stage spans either.
            stages = _Stages(tracer, span) if staged and span.is_recording() else None
            mark = _STAGES.set(stages)
            attached = otel_context.attach(trace.set_span_in_context(span))
            code = grpc.StatusCode.OK
            try:
                response = await inner(request, context)
                if isinstance(response, bytes):
                    span.set_attribute("dmlrpc.response_bytes", len(response))
                return response
            except BaseException as error:
                code = _code(error, context)
                raise
            finally:
                otel_context.detach(attached)
                _STAGES.reset(mark)
                if stages is not None:
                    stages.end()
                _describe(span, request, method)
                _finish(span, code)

        async def streamed(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            span = start(context)
            stages = _Stages(tracer, span) if staged and span.is_recording() else None
            mark = _STAGES.set(stages)
            code = grpc.StatusCode.OK
            try:
                async for response in inner(request, context):
                    yield response
            except BaseException as error:
                code = _code(error, context)
                raise
            finally:
                # NOTE: a stream closed from elsewhere (its generator collected) is in another context.
                with contextlib.suppress(ValueError):
                    _STAGES.reset(mark)
                if stages is not None:
                    stages.end()
                if not streams_in:
                    _describe(span, request, method)
                _finish(span, code)

        return KINDS[streams_in, streams_out](
            streamed if streams_out else returned,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


def _code(error: BaseException, context: grpc.aio.ServicerContext[Any, Any]) -> grpc.StatusCode:
    """The status a call ends with when its handler raised ``error`` (the error interceptor within has aborted it
    with its status, or it was cancelled)."""
    if isinstance(error, grpc.aio.AbortError):
        return code_of(context)
    if isinstance(error, Exception):
        return grpc.StatusCode.UNKNOWN
    return grpc.StatusCode.CANCELLED


def _describe(span: Span, request: Any, method: str) -> None:
    """The call's operator (its desc's case, as the metrics label it) or model, and its request's bytes."""
    call = CALL.get()
    operator = "" if call is None else call.label
    if operator:
        span.set_attribute("dmlrpc.operator", operator)
    if isinstance(request, bytes):
        span.set_attribute("dmlrpc.request_bytes", len(request))
        # NOTE: ModelInfer's request travels as its bytes too (the codec reads its common form from them): its model
        # is read here, only when tracing.
        if method == _MODEL_INFER:
            with contextlib.suppress(DecodeError):
                request = oip_pb2.ModelInferRequest.FromString(request)
    model = getattr(request, "model_name", None)
    if isinstance(model, str) and model:
        span.set_attribute("dmlrpc.model", model)


def _finish(span: Span, code: grpc.StatusCode) -> None:
    span.set_attribute("rpc.grpc.status_code", code.value[0])
    if code in SERVER_ERRORS:
        span.set_status(Status(StatusCode.ERROR, code.name))
    span.end()
