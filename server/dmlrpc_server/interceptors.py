"""The one place where errors become gRPC statuses: ServiceError -> its code with BadRequest details."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from dmlrpc_server.errors import ServiceError

_log = logging.getLogger(__name__)

#: Trailing metadata key carrying the id under which a server fault was logged.
REQUEST_ID_KEY = "dmlrpc-request-id"


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
    """Maps exceptions raised by unary handlers to statuses; anything unexpected is INTERNAL, logged with an id."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        inner = handler.unary_unary
        method = handler_call_details.method

        async def guarded(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            try:
                return await inner(request, context)
            except ServiceError as error:
                _log.debug("%s: %s %s", method, error.code.name, error.message)
                status = to_status(error)
                await context.abort(status.code, status.details, status.trailing_metadata)
            except (grpc.aio.AbortError, grpc.aio.UsageError):
                raise
            except Exception:
                request_id = uuid.uuid4().hex
                _log.exception("%s failed (request id %s)", method, request_id)
                context.set_trailing_metadata(((REQUEST_ID_KEY, request_id),))
                await context.abort(grpc.StatusCode.INTERNAL, f"internal server error (request id {request_id})")

        return grpc.unary_unary_rpc_method_handler(
            guarded,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


__all__ = ["REQUEST_ID_KEY", "ErrorInterceptor", "to_status"]
