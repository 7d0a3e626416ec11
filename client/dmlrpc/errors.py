"""Client exceptions, one per gRPC status code, carrying the server's field violations.

    DmlRpcError                     (code, message, field_violations, request_id)
    ├── InvalidArgumentError        a request broke a DirectML rule; see field_violations
    ├── UnimplementedError          the operator type is not executable on this server
    ├── ResourceExhaustedError      a size limit or queue bound was hit
    ├── UnavailableError            the server cannot be reached or is shutting down
    ├── DeadlineExceededError, CancelledError, NotFoundError, AlreadyExistsError, PermissionDeniedError,
    │   UnauthenticatedError, FailedPreconditionError, AbortedError, OutOfRangeError, DataLossError
    │   └── MalformedResponseError  the server's answer broke the protocol (also a ValueError)
    ├── InternalError, UnknownError a server fault (request_id names it in the server log)
    └── ArgumentError               the SDK refused an argument before any RPC (argument, allowed)
        ├── ArgumentValueError      also a ValueError: a value out of its allowed set or range
        └── ArgumentTypeError       also a TypeError: a value (or an array's dtype) of the wrong type

``from_rpc_error`` is the only place a ``grpc.RpcError`` becomes one of these, applied once per stub callable by
``wrap`` and ``wrap_async`` (python-api-core's ``wrap_errors``), and ``from_item_status`` the only place an
ExecuteMany item's status does.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from dmlrpc.v1 import service_pb2

__all__ = [
    "AbortedError",
    "AlreadyExistsError",
    "ArgumentError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "CancelledError",
    "DataLossError",
    "DeadlineExceededError",
    "DmlRpcError",
    "FailedPreconditionError",
    "FieldViolation",
    "InternalError",
    "InvalidArgumentError",
    "MalformedResponseError",
    "NotFoundError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownError",
    "from_item_status",
    "from_rpc_error",
    "wrap",
    "wrap_async",
]

_log = logging.getLogger(__name__)

_STATUS_DETAILS_KEY = "grpc-status-details-bin"
_REQUEST_ID_KEY = "dmlrpc-request-id"
_BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"


@dataclass(frozen=True)
class FieldViolation:
    """One google.rpc.BadRequest field violation: the request field path and what is wrong with it."""

    field: str
    description: str


class DmlRpcError(Exception):
    """Base of every error the SDK raises for a failed call."""

    grpc_status_code: ClassVar[grpc.StatusCode | None] = None
    _by_code: ClassVar[dict[grpc.StatusCode, type[DmlRpcError]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.grpc_status_code is not None:
            DmlRpcError._by_code[cls.grpc_status_code] = cls

    def __init__(
        self,
        message: str,
        *,
        code: grpc.StatusCode | None = None,
        field_violations: tuple[FieldViolation, ...] = (),
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.grpc_status_code or grpc.StatusCode.UNKNOWN
        self.field_violations = field_violations
        self.request_id = request_id

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}"


class CancelledError(DmlRpcError):
    """The call was cancelled."""

    grpc_status_code = grpc.StatusCode.CANCELLED


class UnknownError(DmlRpcError):
    """The server reported an unknown error."""

    grpc_status_code = grpc.StatusCode.UNKNOWN


class InvalidArgumentError(DmlRpcError):
    """The request broke a rule; see field_violations."""

    grpc_status_code = grpc.StatusCode.INVALID_ARGUMENT


class DeadlineExceededError(DmlRpcError):
    """The deadline passed before the call completed."""

    grpc_status_code = grpc.StatusCode.DEADLINE_EXCEEDED


class NotFoundError(DmlRpcError):
    """A named entity does not exist."""

    grpc_status_code = grpc.StatusCode.NOT_FOUND


class AlreadyExistsError(DmlRpcError):
    """The entity already exists."""

    grpc_status_code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDeniedError(DmlRpcError):
    """The caller may not do this."""

    grpc_status_code = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhaustedError(DmlRpcError):
    """A size limit, quota or queue bound was hit."""

    grpc_status_code = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPreconditionError(DmlRpcError):
    """The server is not in a state to do this."""

    grpc_status_code = grpc.StatusCode.FAILED_PRECONDITION


class AbortedError(DmlRpcError):
    """The operation was aborted."""

    grpc_status_code = grpc.StatusCode.ABORTED


class OutOfRangeError(DmlRpcError):
    """A value was out of range."""

    grpc_status_code = grpc.StatusCode.OUT_OF_RANGE


class UnimplementedError(DmlRpcError):
    """The server cannot execute this operator or method."""

    grpc_status_code = grpc.StatusCode.UNIMPLEMENTED


class InternalError(DmlRpcError):
    """A server fault; see request_id in its log."""

    grpc_status_code = grpc.StatusCode.INTERNAL


class UnavailableError(DmlRpcError):
    """The server is unreachable or shutting down."""

    grpc_status_code = grpc.StatusCode.UNAVAILABLE


class DataLossError(DmlRpcError):
    """Data was lost or corrupted."""

    grpc_status_code = grpc.StatusCode.DATA_LOSS


class MalformedResponseError(DataLossError, ValueError):
    """The server's answer broke the protocol (a stream's chunks out of order, too many or too few bytes): a
    server fault or a corrupted connection, never the caller's input. Also a ``ValueError``, as it once was."""

    grpc_status_code: ClassVar[grpc.StatusCode | None] = None  # DATA_LOSS from the server stays DataLossError

    def __init__(self, message: str) -> None:
        super().__init__(message, code=grpc.StatusCode.DATA_LOSS)


class UnauthenticatedError(DmlRpcError):
    """The call carried no valid credentials."""

    grpc_status_code = grpc.StatusCode.UNAUTHENTICATED


class ArgumentError(DmlRpcError):
    """The SDK refused an argument before sending anything: ``argument`` names it (``"direction"``,
    ``"inputs[1]"``, ``"axis"``), ``allowed`` lists the values it may take where they are few, else is empty.

    Its ``code`` is INVALID_ARGUMENT (what the server would have answered), ``request_id`` is None (no call was
    made) and ``field_violations`` holds one entry naming the argument, so handlers of server errors read it the
    same way.
    """

    def __init__(self, argument: str, message: str, *, allowed: tuple[str, ...] = ()) -> None:
        if allowed:
            message = f"{message} (allowed: {', '.join(allowed)})"
        super().__init__(
            message,
            code=grpc.StatusCode.INVALID_ARGUMENT,
            field_violations=(FieldViolation(argument, message),),
        )
        self.argument = argument
        self.allowed = allowed

    def __str__(self) -> str:
        # No status prefix: nothing reached a server, and the message already names the argument.
        return self.message


class ArgumentValueError(ArgumentError, ValueError):
    """An argument of the right type with a value the SDK cannot send: an unknown operator or direction name, an
    axis out of range, shapes that do not broadcast."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong type, or an array whose dtype DirectML (or the operator) has no data type for."""


def _status_messages() -> tuple[type[Any], type[Any]]:
    """Wire-compatible google.rpc.Status and BadRequest classes in a private descriptor pool.

    NOTE: the SDK depends only on grpcio, protobuf and numpy; googleapis-common-protos would register the same
    names in the default pool, so the SDK keeps its own copies apart from it.
    """
    pool = descriptor_pool.DescriptorPool()
    file = descriptor_pb2.FileDescriptorProto(name="dmlrpc/_rpc_status.proto", package="dmlrpc._rpc", syntax="proto3")
    f = descriptor_pb2.FieldDescriptorProto
    detail = file.message_type.add(name="Detail")
    detail.field.add(name="type_url", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    detail.field.add(name="value", number=2, type=f.TYPE_BYTES, label=f.LABEL_OPTIONAL)
    status = file.message_type.add(name="Status")
    status.field.add(name="code", number=1, type=f.TYPE_INT32, label=f.LABEL_OPTIONAL)
    status.field.add(name="message", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    status.field.add(
        name="details", number=3, type=f.TYPE_MESSAGE, label=f.LABEL_REPEATED, type_name=".dmlrpc._rpc.Detail"
    )
    violation = file.message_type.add(name="FieldViolation")
    violation.field.add(name="field", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    violation.field.add(name="description", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    bad_request = file.message_type.add(name="BadRequest")
    bad_request.field.add(
        name="field_violations",
        number=1,
        type=f.TYPE_MESSAGE,
        label=f.LABEL_REPEATED,
        type_name=".dmlrpc._rpc.FieldViolation",
    )
    pool.Add(file)
    return (
        message_factory.GetMessageClass(pool.FindMessageTypeByName("dmlrpc._rpc.Status")),
        message_factory.GetMessageClass(pool.FindMessageTypeByName("dmlrpc._rpc.BadRequest")),
    )


_Status, _BadRequest = _status_messages()


def _field_violations(metadata: Any) -> tuple[FieldViolation, ...]:
    violations: list[FieldViolation] = []
    for key, value in metadata or ():
        if key != _STATUS_DETAILS_KEY:
            continue
        try:
            status = _Status.FromString(value)
            for detail in status.details:
                if detail.type_url == _BAD_REQUEST_TYPE:
                    bad_request = _BadRequest.FromString(detail.value)
                    violations.extend(FieldViolation(v.field, v.description) for v in bad_request.field_violations)
        except DecodeError:
            # A malformed trailer must not hide the status itself: report the error without violations.
            _log.warning("ignoring malformed %s trailer", _STATUS_DETAILS_KEY)
    return tuple(violations)


def from_rpc_error(error: grpc.RpcError) -> DmlRpcError:
    """Turn a failed call into the DmlRpcError subclass for its status code, keeping its details."""
    code: grpc.StatusCode = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message: str = (error.details() if hasattr(error, "details") else None) or str(code.name)
    metadata = error.trailing_metadata() if hasattr(error, "trailing_metadata") else ()
    request_id = next((str(v) for k, v in metadata or () if k == _REQUEST_ID_KEY), None)
    cls = DmlRpcError._by_code.get(code, DmlRpcError)
    result = cls(message, code=code, field_violations=_field_violations(metadata), request_id=request_id)
    result.__cause__ = error
    return result


_CODES = {code.value[0]: code for code in grpc.StatusCode}


def from_item_status(status: service_pb2.ItemStatus) -> DmlRpcError:
    """Turn a failed ExecuteMany item into the DmlRpcError subclass the same unary call raises: its status code,
    message and field violations (the paths inside the item's call, as the unary call names them)."""
    code = _CODES.get(status.code, grpc.StatusCode.UNKNOWN)
    cls = DmlRpcError._by_code.get(code, DmlRpcError)
    violations = tuple(FieldViolation(v.field, v.description) for v in status.field_violations)
    return cls(status.message or code.name, code=code, field_violations=violations)


def wrap(callable_: Callable[..., Any], *, streaming: bool) -> Callable[..., Any]:
    """A blocking stub callable whose failures raise ``DmlRpcError``: at the call, or while its answer stream is
    read (``streaming``: a unary-stream or stream-stream method)."""

    def unary(*args: Any, **kwargs: Any) -> Any:
        try:
            return callable_(*args, **kwargs)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    def stream(*args: Any, **kwargs: Any) -> _Stream:
        return _Stream(unary(*args, **kwargs))

    return stream if streaming else unary


def wrap_async(callable_: Callable[..., Any], *, streaming: bool) -> Callable[..., Any]:
    """``wrap`` for a grpc.aio stub callable: awaiting a unary answer, reading a stream and writing to it raise
    ``DmlRpcError``."""

    async def unary(*args: Any, **kwargs: Any) -> Any:
        try:
            return await callable_(*args, **kwargs)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    def stream(*args: Any, **kwargs: Any) -> _AsyncStream:
        return _AsyncStream(callable_(*args, **kwargs))

    return stream if streaming else unary


class _Stream:
    """A blocking call's answer stream whose failures raise ``DmlRpcError``; ``cancel`` and the rest pass through."""

    def __init__(self, call: Any) -> None:
        self._call = call

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        try:
            return next(self._call)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


class _AsyncStream:
    """A grpc.aio streaming call whose reads and writes raise ``DmlRpcError``; ``cancel`` and the rest pass
    through."""

    def __init__(self, call: Any) -> None:
        self._call = call
        self._answers: AsyncIterator[Any] | None = None

    def __aiter__(self) -> AsyncIterator[Any]:
        return self

    async def __anext__(self) -> Any:
        if self._answers is None:
            self._answers = self._call.__aiter__()
        try:
            return await self._answers.__anext__()
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    async def write(self, message: Any) -> None:
        try:
            await self._call.write(message)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    async def done_writing(self) -> None:
        try:
            await self._call.done_writing()
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)
