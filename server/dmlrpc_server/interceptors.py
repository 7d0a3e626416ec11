"""The one place where calls end: ServiceError -> status with BadRequest details, request ids, logs, metrics."""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from dmlrpc.v1 import service_pb2
from dmlrpc_server.calls import EXECUTED_ON, OPERATOR, operator_case
from dmlrpc_server.errors import ServiceError
from dmlrpc_server.metrics import Metrics

_log = logging.getLogger(__name__)

#: Metadata key of the request id: sent back in the trailers of every failed call, and taken from the client's
#: request headers when it sends one (so client and server logs share it).
REQUEST_ID_KEY = "dmlrpc-request-id"
#: The trailer of a call whose operator did not run (only) on the server's execution provider: the providers that
#: ran it, e.g. "CPUExecutionProvider" or "DmlExecutionProvider,CPUExecutionProvider".
EXECUTED_ON_KEY = "dmlrpc-executed-on"
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


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


class ErrorInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc] # grpc ships no type stubs
    """Ends every unary and bidirectional call: maps ServiceError to its status, anything unexpected to INTERNAL
    (logged with a request id that also goes to the client), and records one log line and the call's metrics."""

    def __init__(self, metrics: Metrics | None = None) -> None:
        self._metrics = metrics
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]  # NOTE: wrapping costs more than a tiny operator; a method's handler rarely changes
        if handler.unary_unary is not None:
            wrapped = self._unary(handler, method)
        elif handler.stream_stream is not None:
            wrapped = self._stream(handler, method)
        elif handler.stream_unary is not None:
            wrapped = self._stream_unary(handler, method)
        elif handler.unary_stream is not None and method.startswith("/dmlrpc."):
            wrapped = self._unary_stream(handler, method)
        else:
            return handler  # other server-streaming methods (health Watch) report their own errors
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def _unary(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        inner = handler.unary_unary

        async def guarded(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = time.perf_counter()
            outcome: list[Any] = [grpc.StatusCode.OK, None]
            try:
                response = await inner(request, context)
                _trail(context)
                return response
            except BaseException as error:
                await self._failed(error, context, method, outcome)
            finally:
                seconds = time.perf_counter() - started
                self._finished(method, _operator_label(request), outcome[0], outcome[1], seconds, context)

        return grpc.unary_unary_rpc_method_handler(
            guarded,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _stream(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        inner = handler.stream_stream

        async def guarded(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = time.perf_counter()
            outcome: list[Any] = [grpc.StatusCode.OK, None]
            peek = _FirstMessage(requests)
            try:
                async for response in inner(peek, context):
                    yield response
                _trail(context)
            except BaseException as error:
                await self._failed(error, context, method, outcome)
            finally:
                seconds = time.perf_counter() - started
                start = _stream_start(peek.first) if method.endswith("/ExecuteStream") else None  # one desc
                self._finished(method, _operator_label(start), outcome[0], outcome[1], seconds, context)

        return grpc.stream_stream_rpc_method_handler(
            guarded,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _stream_unary(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        inner = handler.stream_unary

        async def guarded(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = time.perf_counter()
            outcome: list[Any] = [grpc.StatusCode.OK, None]
            try:
                return await inner(requests, context)
            except BaseException as error:
                await self._failed(error, context, method, outcome)
            finally:
                self._finished(method, "", outcome[0], outcome[1], time.perf_counter() - started, context)

        return grpc.stream_unary_rpc_method_handler(
            guarded,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    def _unary_stream(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        inner = handler.unary_stream

        async def guarded(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = time.perf_counter()
            outcome: list[Any] = [grpc.StatusCode.OK, None]
            try:
                async for response in inner(request, context):
                    yield response
            except BaseException as error:
                await self._failed(error, context, method, outcome)
            finally:
                self._finished(method, "", outcome[0], outcome[1], time.perf_counter() - started, context)

        return grpc.unary_stream_rpc_method_handler(
            guarded,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )

    async def _failed(
        self,
        error: BaseException,
        context: grpc.aio.ServicerContext[Any, Any],
        method: str,
        outcome: list[Any],
    ) -> None:
        """End the call for a handler's exception: abort with its status (which raises, as gRPC expects) or
        re-raise; ``outcome`` receives the status code and the request id first."""
        if isinstance(error, grpc.aio.AbortError):
            outcome[:] = [_code_of(context), None]
            raise error
        if isinstance(error, asyncio.CancelledError | grpc.aio.UsageError) or not isinstance(error, Exception):
            outcome[:] = [grpc.StatusCode.CANCELLED, None]
            raise error
        request_id = _request_id(context.invocation_metadata())
        if isinstance(error, ServiceError):
            outcome[:] = [error.code, request_id]
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
        outcome[:] = [grpc.StatusCode.INTERNAL, request_id]
        _log.error(
            "%s failed (request id %s)",
            method,
            request_id,
            exc_info=error,
            extra={"request_id": request_id, "method": method, "code": "INTERNAL"},
        )
        context.set_trailing_metadata(((REQUEST_ID_KEY, request_id),))
        await context.abort(grpc.StatusCode.INTERNAL, f"internal server error (request id {request_id})")

    def _finished(
        self,
        method: str,
        operator: str,
        code: grpc.StatusCode,
        request_id: str | None,
        seconds: float,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        name = method.rsplit("/", 1)[-1]
        if self._metrics is not None:
            self._metrics.requests.labels(name, operator, code.name).inc()
            self._metrics.request_duration.labels(name, operator).observe(seconds)
        if _log.isEnabledFor(logging.DEBUG):
            request_id = request_id or _request_id(context.invocation_metadata())
            _log.debug(
                "%s %s %s %.3f ms (request id %s)",
                method,
                operator or "-",
                code.name,
                seconds * 1e3,
                request_id,
                extra={
                    "request_id": request_id,
                    "method": method,
                    "operator": operator,
                    "code": code.name,
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
    executed_on = EXECUTED_ON.get()
    if executed_on:
        context.set_trailing_metadata(((EXECUTED_ON_KEY, executed_on),))


def _stream_start(first: Any) -> Any:
    """The ``start`` of a stream's first message (wire bytes for ExecuteStream), if it has one."""
    if isinstance(first, bytes):
        try:
            first = service_pb2.ExecuteStreamRequest.FromString(first)
        except DecodeError:
            return None
    return getattr(first, "start", None)


def _operator_label(request: Any) -> str:
    if isinstance(request, bytes):
        # Read from its wire bytes: the service named its operator, unless the call ended before it got there.
        return OPERATOR.get() or operator_case(request)
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


def _code_of(context: grpc.aio.ServicerContext[Any, Any]) -> grpc.StatusCode:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    for candidate in grpc.StatusCode:  # some grpc versions report the integer value
        if candidate.value[0] == code:
            return candidate
    return grpc.StatusCode.UNKNOWN


__all__ = ["EXECUTED_ON_KEY", "REQUEST_ID_KEY", "ErrorInterceptor", "to_status"]
