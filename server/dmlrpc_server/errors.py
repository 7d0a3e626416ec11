"""The server's error hierarchy; each class carries the gRPC status code it maps to.

    ServiceError
    ├── InvalidArgument      INVALID_ARGUMENT, with google.rpc.BadRequest field violations
    ├── OperatorUnavailable  UNIMPLEMENTED, naming the operator type
    ├── NotFound             NOT_FOUND (a resident tensor handle that is unknown, released, expired or another's)
    ├── AlreadyExists        ALREADY_EXISTS (a shared memory region name that is registered already)
    ├── Unimplemented        UNIMPLEMENTED (a protocol feature this server does not serve)
    ├── FailedPrecondition   FAILED_PRECONDITION (a handle made by another worker process of the same server)
    ├── ResourceExhausted    RESOURCE_EXHAUSTED (size limits checked before allocation; the queue bound; quotas)
    ├── DeadlineExceeded     DEADLINE_EXCEEDED (the call's deadline passed before its work started)
    ├── Unauthenticated      UNAUTHENTICATED (no valid bearer token)
    ├── Unavailable          UNAVAILABLE (the device or runtime cannot serve now)
    ├── Cancelled            CANCELLED (the caller went away; its work was stopped)
    └── Internal             INTERNAL (an ExecuteMany item that hit a server fault; unary calls raise as they are)

Anything else raised while handling a request is a server fault: INTERNAL with a generic message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import grpc


@dataclass(frozen=True)
class FieldViolation:
    """One google.rpc.BadRequest.FieldViolation: a field path in the request and what is wrong with it."""

    field: str
    description: str


class ServiceError(Exception):
    """Base of every error the server reports to a client on purpose; each subclass names its status code in its
    class statement (``class NotFound(ServiceError, code=grpc.StatusCode.NOT_FOUND)``)."""

    code: ClassVar[grpc.StatusCode] = grpc.StatusCode.UNKNOWN

    def __init_subclass__(cls, code: grpc.StatusCode | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def violations(self) -> tuple[FieldViolation, ...]:
        return ()


class InvalidArgument(ServiceError, code=grpc.StatusCode.INVALID_ARGUMENT):
    """The request breaks a documented rule; ``field`` is its path in the request message."""

    def __init__(self, field: str, description: str) -> None:
        super().__init__(f"{field}: {description}")
        self.field = field
        self.description = description

    @property
    def violations(self) -> tuple[FieldViolation, ...]:
        return (FieldViolation(self.field, self.description),)


class OperatorUnavailable(ServiceError, code=grpc.StatusCode.UNIMPLEMENTED):
    """The operator type is known but this server cannot execute it."""


class NotFound(ServiceError, code=grpc.StatusCode.NOT_FOUND):
    """A named entity (a resident tensor handle) does not exist for this caller."""


class AlreadyExists(ServiceError, code=grpc.StatusCode.ALREADY_EXISTS):
    """What the request would create exists already (an Open Inference Protocol shared memory region name)."""


class Unimplemented(ServiceError, code=grpc.StatusCode.UNIMPLEMENTED):
    """A protocol feature this server does not serve (client shared memory when not allowed, CUDA regions)."""


class FailedPrecondition(ServiceError, code=grpc.StatusCode.FAILED_PRECONDITION):
    """The request is well formed but cannot run in this state (a handle that lives in another worker process)."""


class ResourceExhausted(ServiceError, code=grpc.StatusCode.RESOURCE_EXHAUSTED):
    """The request exceeds a configured size limit."""


class DeadlineExceeded(ServiceError, code=grpc.StatusCode.DEADLINE_EXCEEDED):
    """The call's deadline passed while it waited; its work was skipped."""


class Unauthenticated(ServiceError, code=grpc.StatusCode.UNAUTHENTICATED):
    """The call carried no accepted credentials; nothing was done."""


class Unavailable(ServiceError, code=grpc.StatusCode.UNAVAILABLE):
    """The server cannot serve the request now (for example while it shuts down)."""


class Cancelled(ServiceError, code=grpc.StatusCode.CANCELLED):
    """The call's work was stopped because its caller went away."""


class Internal(ServiceError, code=grpc.StatusCode.INTERNAL):
    """A server fault reported for one ExecuteMany item (unary calls let the fault reach the interceptor)."""
