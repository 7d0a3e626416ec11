"""The one place where calls end: ServiceError -> status with BadRequest details, request ids, logs, metrics."""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from dmlrpc.v1 import service_pb2
from dmlrpc_server.calls import CALL, Call, operator_case
from dmlrpc_server.connections import ConnectionLimitInterceptor
from dmlrpc_server.errors import ServiceError
from dmlrpc_server.handlers import KINDS, HandlerWrapper
from dmlrpc_server.metrics import Metrics

_log = logging.getLogger(__name__)

#: Metadata key of the request id: sent back in the trailers of every failed call, and taken from the client's
#: request headers when it sends one (so client and server logs share it).
REQUEST_ID_KEY = "dmlrpc-request-id"
#: The trailer of a call whose operator did not run (only) on the server's execution provider: the providers that
#: ran it, e.g. "CPUExecutionProvider" or "DmlExecutionProvider,CPUExecutionProvider".
EXECUTED_ON_KEY = "dmlrpc-executed-on"
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
#: The paths of the DirectML service's methods begin so (the other services' calls name no operator).
_DIRECTML_METHODS = "/dmlrpc."


def to_status(error: ServiceError) -> grpc.Status:
    """The gRPC status for a ServiceError, with a google.rpc.BadRequest detail when it names fields."""
    status = status_pb2.Status(code=error.code.value[0], message=error.message)
    if error.violations:
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
                for v in error.violations
            ]
        )
        detail = any_pb2.Any()
        detail.Pack(bad_request)
        status.details.append(detail)
    return rpc_status.to_status(status)


class ErrorInterceptor(HandlerWrapper):
    """Ends every unary and bidirectional call: maps ServiceError to its status, anything unexpected to INTERNAL
    (logged with a request id that also goes to the client), and records one log line and the call's metrics.

    Every call also holds one of its connection's slots (``connections``) while it runs: a call of one response
    takes it in this wrapper's own frame (the tiny calls: one coroutine less a call), unless its handler answered it
    at once (see ``ConnectionLimitInterceptor``); a streaming response, in the connection limiter's wrapper inside
    this one."""

    def __init__(self, metrics: Metrics | None, connections: ConnectionLimitInterceptor) -> None:
        self._metrics = metrics
        self._connections = connections

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        """The handler of any call kind, ended here. The DirectML service's calls of one message each way
        (Execute) or streams both ways (ExecuteMany, ExecuteStream) name an operator (their log and metrics label:
        the request's, or the first stream message's start) and get the executed-on trailer; the tensor streams
        (CreateTensor, ReadTensor) do not. Other services' server-streaming methods (health Watch) report their own
        errors: they only hold their connection's slot."""
        connections = self._connections
        streams_out = bool(handler.response_streaming)
        if streams_out:
            handler = connections.wrap(handler, method)
        if handler.unary_stream is not None and not method.startswith(_DIRECTML_METHODS):
            return handler
        streams_in = bool(handler.request_streaming)
        inner = handler.unary_unary or handler.stream_stream or handler.stream_unary or handler.unary_stream
        # NOTE: only the DirectML service's calls carry a desc; asking another service's message for one costs an
        # AttributeError a call.
        names_operator = streams_in == streams_out and method.startswith(_DIRECTML_METHODS)
        metrics = self._metrics

        def label(request: Any) -> str:
            if not names_operator:
                return ""
            if not streams_in:
                return _operator_label(request, CALL.get())
            # NOTE: only ExecuteStream is one desc; ExecuteMany's items name many, so it names none.
            return _operator_label(_stream_start(request.first) if method.endswith("/ExecuteStream") else None, None)

        name = _method_name(method)

        async def returned(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = time.perf_counter()
            try:
                work = None
                if connections.open_calls < connections.max_open:
                    # No connection is at its limit: the handler starts before its call takes a slot. A call it
                    # answers at once (the response itself) ran alone on the loop from start to end: it needs none.
                    work = inner(request, context)
                if type(work) is bytes:
                    response = work
                else:
                    peer = context.peer()
                    slot = connections.take(peer) or await connections.enter(peer)
                    try:
                        if work is None:
                            work = inner(request, context)
                        response = work if type(work) is bytes else await work
                    finally:
                        connections.leave(peer, slot)
            except BaseException as error:
                call = CALL.get()
                if call is not None and call.held:
                    _give_back_when_done(call, context)
                end = _Ending(metrics, method, context, started)
                try:
                    await end.failed(error)
                finally:
                    end.finished(label(request))
            # NOTE: the common ending, written out (unary calls are the tiny ones): no _Ending, no helper calls.
            operator = ""
            if names_operator:
                call = CALL.get()
                operator = call.label if call is not None and call.label else _operator_label(request, call)
                if call is not None:
                    if call.executed_on:
                        context.set_trailing_metadata(((EXECUTED_ON_KEY, call.executed_on),))
                    if call.held:
                        _give_back_when_done(call, context)
            seconds = time.perf_counter() - started
            if metrics is not None:
                metrics.finished(name, operator, "OK", seconds)
            if _log.isEnabledFor(logging.DEBUG):
                _debug(method, operator, "OK", seconds, context, None)
            return response

        async def streamed(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            end = _Ending(metrics, method, context, time.perf_counter())
            if streams_in and names_operator:
                request = _FirstMessage(request)
            try:
                async for response in inner(request, context):
                    yield response
                if names_operator:
                    _trail(context)
            except BaseException as error:
                await end.failed(error)
            finally:
                end.finished(label(request))

        return KINDS[streams_in, streams_out](
            streamed if streams_out else returned,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


class _Ending:
    """How one call ended: its status code and request id, one log line and its metrics."""

    __slots__ = ("code", "context", "method", "metrics", "request_id", "started")

    def __init__(
        self, metrics: Metrics | None, method: str, context: grpc.aio.ServicerContext[Any, Any], started: float
    ) -> None:
        self.metrics, self.method, self.context = metrics, method, context
        self.started = started
        self.code = grpc.StatusCode.OK
        self.request_id: str | None = None

    async def failed(self, error: BaseException) -> None:
        """End the call for a handler's exception: abort with its status (which raises, as gRPC expects) or
        re-raise; the code and the request id are recorded first."""
        context, method = self.context, self.method
        if isinstance(error, grpc.aio.AbortError):
            self.code = code_of(context)
            raise error
        if isinstance(error, asyncio.CancelledError | grpc.aio.UsageError) or not isinstance(error, Exception):
            self.code = grpc.StatusCode.CANCELLED
            raise error
        request_id = self.request_id = _request_id(context.invocation_metadata())
        if isinstance(error, ServiceError):
            self.code = error.code
            _log.info(
                "%s failed: %s %s (request id %s)",
                method,
                error.code.name,
                error.message,
                request_id,
                extra={"request_id": request_id, "method": method, "code": error.code.name},
            )
            status = to_status(error)
            trailers = (*status.trailing_metadata, (REQUEST_ID_KEY, request_id))
            await context.abort(status.code, status.details, trailers)
        self.code = grpc.StatusCode.INTERNAL
        _log.error(
            "%s failed (request id %s)",
            method,
            request_id,
            exc_info=error,
            extra={"request_id": request_id, "method": method, "code": "INTERNAL"},
        )
        context.set_trailing_metadata(((REQUEST_ID_KEY, request_id),))
        await context.abort(grpc.StatusCode.INTERNAL, f"internal server error (request id {request_id})")

    def finished(self, operator: str) -> None:
        """Count the call and, at DEBUG, log it."""
        _finished(self.metrics, self.method, operator, self.code.name, self.started, self.context, self.request_id)


def _finished(
    metrics: Metrics | None,
    method: str,
    operator: str,
    code: str,
    started: float,
    context: grpc.aio.ServicerContext[Any, Any],
    request_id: str | None,
) -> None:
    """Count a call that ended with the status code named ``code`` and, at DEBUG, log it."""
    seconds = time.perf_counter() - started
    if metrics is not None:
        metrics.finished(_method_name(method), operator, code, seconds)
    if _log.isEnabledFor(logging.DEBUG):
        _debug(method, operator, code, seconds, context, request_id)


def _method_name(method: str) -> str:
    """A method's name in its metrics: its path's last part."""
    return method[method.rfind("/") + 1 :]


def _debug(
    method: str,
    operator: str,
    code: str,
    seconds: float,
    context: grpc.aio.ServicerContext[Any, Any],
    request_id: str | None,
) -> None:
    """The DEBUG log line of a call that ended."""
    request_id = request_id or _request_id(context.invocation_metadata())
    _log.debug(
        "%s %s %s %.3f ms (request id %s)",
        method,
        operator or "-",
        code,
        seconds * 1e3,
        request_id,
        extra={
            "request_id": request_id,
            "method": method,
            "operator": operator,
            "code": code,
            "duration_ms": round(seconds * 1e3, 3),
        },
    )


class _FirstMessage:
    """Passes a request stream through, keeping its first message (for the log line and metrics labels)."""

    def __init__(self, requests: AsyncIterator[Any]) -> None:
        self._requests = requests
        self.first: Any = None

    def __aiter__(self) -> _FirstMessage:
        return self

    async def __anext__(self) -> Any:
        item = await self._requests.__anext__()
        if self.first is None:
            self.first = item
        return item


def _trail(context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """Tell the caller where its operator ran when the server's provider did not run all of it."""
    call = CALL.get()
    if call is not None and call.executed_on:
        context.set_trailing_metadata(((EXECUTED_ON_KEY, call.executed_on),))


def _give_back_when_done(call: Call, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    """Give the call memory its reply holds back once the RPC is done (read by the caller, or cut off)."""
    held, release = call.held, call.release
    if release is not None:
        context.add_done_callback(lambda _: release(held))


def _stream_start(first: Any) -> Any:
    """The ``start`` of a stream's first message (wire bytes for ExecuteStream), if it has one."""
    if isinstance(first, bytes):
        try:
            first = service_pb2.ExecuteStreamRequest.FromString(first)
        except DecodeError:
            return None
    return getattr(first, "start", None)


def _operator_label(request: Any, call: Call | None) -> str:
    """A call's operator: the one the service named for ``call`` (Execute, Dispatch), else read from the request."""
    if call is not None and call.label:
        return call.label  # the service named it
    if isinstance(request, bytes):
        # Read from its wire bytes: the call ended before the service named its operator.
        return operator_case(request)
    desc = getattr(request, "operator_desc", None)
    if desc is None:
        return ""
    return desc.WhichOneof("desc") or "unset"


def _request_id(metadata: Sequence[tuple[str, str | bytes]] | None) -> str:
    """The client's request id when it sent a well-formed one, else a new random one."""
    for key, value in metadata or ():
        if key == REQUEST_ID_KEY and isinstance(value, str) and _REQUEST_ID.fullmatch(value):
            return value
    return uuid.uuid4().hex


def code_of(context: grpc.aio.ServicerContext[Any, Any]) -> grpc.StatusCode:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    for candidate in grpc.StatusCode:  # some grpc versions report the integer value
        if candidate.value[0] == code:
            return candidate
    return grpc.StatusCode.UNKNOWN


__all__ = ["EXECUTED_ON_KEY", "REQUEST_ID_KEY", "ErrorInterceptor", "to_status"]
