"""Every RPC of the SDK as data: which method, the request, and how its answer becomes results; no gRPC here.

Client and AsyncClient decide nothing: each of their methods hands one of these ``Call``s to its transport, which
sends it and gives the answer to ``Call.read`` (httpx's ``BaseClient`` and its two clients, in that shape).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from dmlrpc._base import (
    InputValue,
    PreparedCall,
    Resident,
    StreamedOutputs,
    TensorReader,
    _binding,
    _input_buffer,
    create_requests,
    decode_outputs,
    flat_bindings,
    prepare_execute,
)
from dmlrpc.codec import TensorLayout, tensor_desc
from dmlrpc.errors import ArgumentValueError
from dmlrpc.graph import Graph
from dmlrpc.ops.base import Call as Built
from dmlrpc.schema import desc_case, tensor_fields
from dmlrpc.v1 import graph_pb2, operators_pb2, service_pb2, tensor_pb2

__all__ = ["SERVICE", "SERVICE_NAME", "UNARY_LIMIT_BYTES", "Call", "Handles", "Sink"]

#: The largest buffer a unary Execute carries: a larger one goes over ExecuteStream, and ``stream=False`` is refused.
#: Measured through the SDK against a local CPU server on a busy 2-core machine (docs/benchmarks.md), an identity call
#: took 0.82 s unary against 0.29 s streamed at 64 MiB and 5.3 s against 1.2 s at 256 MiB: unary time grows faster
#: than the size, a stream's does not.
UNARY_LIMIT_BYTES = 256 << 20

T = TypeVar("T")
U = TypeVar("U")

#: The service as the proto declares it: its name and its methods' streaming kinds come from here.
SERVICE = service_pb2.DESCRIPTOR.services_by_name["DirectMLService"]
SERVICE_NAME: str = SERVICE.full_name
#: The methods the SDK calls, by their names in the service (a test checks each against the descriptor).
EXECUTE = "Execute"
EXECUTE_STREAM = "ExecuteStream"
EXECUTE_MANY = "ExecuteMany"
CREATE_TENSOR = "CreateTensor"
READ_TENSOR = "ReadTensor"
RELEASE_TENSOR = "ReleaseTensor"
COMPILE_OPERATOR = "CompileOperator"
COMPILE_GRAPH = "CompileGraph"
DISPATCH = "Dispatch"
RELEASE_COMPILED_OPERATOR = "ReleaseCompiledOperator"
GET_CAPABILITIES = "GetCapabilities"
PUBLISH_MODEL = "PublishModel"

#: Items an ExecuteMany stream keeps unanswered when the server does not say (``Limits.max_stream_items_in_flight``).
DEFAULT_WINDOW = 256

#: Methods whose requests the SDK writes as wire bytes (``dmlrpc.wire`` chunks, ``dmlrpc.many`` items).
WIRE_REQUESTS = frozenset({EXECUTE_STREAM, CREATE_TENSOR, EXECUTE_MANY})
#: Methods whose answers the SDK reads as wire bytes (chunks read without protobuf copies).
WIRE_RESPONSES = frozenset({EXECUTE_STREAM, READ_TENSOR})


class Handles(Protocol):
    """What a transport hands ``Call.read``: handle objects of its own kind (blocking or awaited)."""

    def resident(self, handle: str, desc: tensor_pb2.TensorDesc) -> Any: ...

    def compiled(self, compiled: service_pb2.CompiledOperator) -> Any: ...


class Sink(Protocol):
    """What a server-streaming answer is collected into, message by message."""

    def add(self, message: bytes) -> None: ...


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One RPC: the method (its name in the service descriptor), the request (a message, or an iterator of
    wire-bytes messages for a client-streaming method), and ``read``, which turns the answer into results."""

    method: str
    request: Any
    #: The answer (a unary response, or the filled ``sink``) and the transport's handles -> the results.
    read: Callable[[Any, Handles], T]
    #: Deadline in seconds; ``None``: the client's default.
    timeout: float | None = None
    #: For a server-streaming method: a new sink for the answer messages.
    sink: Callable[[], Sink] | None = None
    #: Set when the call depends on the client's stream threshold: the transport sends ``choose(threshold)``.
    choose: Callable[[int], Call[T]] | None = None

    def then(self, finish: Callable[[T], U]) -> Call[U]:
        """The same call with ``finish`` applied to its results."""
        choose = self.choose
        return Call(
            self.method,
            self.request,
            functools.partial(_finished, self.read, finish),
            self.timeout,
            self.sink,
            None if choose is None else functools.partial(_chosen, choose, finish),
        )


def _finished(read: Callable[[Any, Handles], T], finish: Callable[[T], U], answer: Any, handles: Handles) -> U:
    return finish(read(answer, handles))


def _chosen(choose: Callable[[int], Call[T]], finish: Callable[[T], U], threshold: int) -> Call[U]:
    return choose(threshold).then(finish)


def outputs(
    layouts: Sequence[TensorLayout | None], response: service_pb2.ExecuteResponse, handles: Handles
) -> list[Any]:
    """An Execute or Dispatch response's outputs: arrays viewing its buffers, handles for the kept outputs."""
    decoded = decode_outputs(response, layouts)
    return [
        handles.resident(binding.resident.handle, binding.resident.desc)
        if binding.WhichOneof("binding") == "resident"
        else output
        for binding, output in zip(flat_bindings(response.outputs), decoded, strict=False)
    ]


def execute(
    operator_desc: operators_pb2.OperatorDesc,
    inputs: Sequence[InputValue],
    *,
    timeout: float | None = None,
    stream: bool | None = None,
    keep: bool | Sequence[int] | None = None,
    execution_flags: int = 0,
) -> Call[list[Any]]:
    """Run any operator desc.

    Args:
        operator_desc: the DML_OPERATOR_DESC; its tensor descs say how each buffer is laid out.
        inputs: one value per input tensor field in declaration order: an array (encoded per its desc), raw buffer
            ``bytes``, a resident tensor, or ``None`` for an unset optional tensor; a list of arrays for a
            tensor-array field (JOIN's ``input_tensors``).
        timeout: deadline in seconds for this call (defaults to the client's).
        stream: send over ExecuteStream (``True``), unary Execute (``False``; refused with ``ArgumentValueError``
            when a buffer exceeds ``dmlrpc.UNARY_LIMIT_BYTES``, 256 MiB), or decide by size (``None``: streamed when
            an input or output buffer exceeds the client's ``stream_threshold_bytes`` or that limit).
        keep: keep outputs on the server as resident tensors instead of sending them back: ``True`` for all, or
            output indices. Inputs may be resident tensors too (those calls use unary Execute).
        execution_flags: DML_EXECUTION_FLAGS bits (``dmlrpc.v1.service_pb2.ExecutionFlags``), e.g.
            ``EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION`` to let a GPU compute FLOAT32 in less precision.

    Returns:
        One read-only array per output tensor field (``None`` for an unset one), shaped and strided as the output
        desc says; a tensor-array field (SPLIT's ``output_tensors``) gives one per tensor, in place.
    """
    prepared = prepare_execute(operator_desc, inputs, keep, execution_flags)
    if prepared.resident:
        if stream:
            raise ArgumentValueError(
                "stream", "resident tensors travel over Execute, not ExecuteStream: leave stream unset"
            )
        return _unary(prepared, timeout)
    if stream is None:
        return Call(EXECUTE, None, _unchosen, timeout, choose=functools.partial(_by_size, prepared, timeout))
    if not stream and prepared.largest_buffer > UNARY_LIMIT_BYTES:
        raise ArgumentValueError(
            "stream",
            f"stream=False: a buffer of {prepared.largest_buffer} bytes exceeds {UNARY_LIMIT_BYTES} bytes "
            f"({UNARY_LIMIT_BYTES >> 20} MiB), the largest this SDK sends or receives in one unary Execute message "
            "(past it a unary call takes several times as long as a stream): leave stream unset or pass stream=True",
        )
    return _streamed(prepared, timeout) if stream else _unary(prepared, timeout)


def _unchosen(answer: Any, handles: Handles) -> Any:
    raise AssertionError("a call with choose is sent as the call choose returns")


def _by_size(prepared: PreparedCall, timeout: float | None, threshold: int) -> Call[list[Any]]:
    """Execute, or ExecuteStream when a buffer is over the threshold (chunks beat one large message)."""
    if prepared.largest_buffer > min(threshold, UNARY_LIMIT_BYTES):
        return _streamed(prepared, timeout)
    return _unary(prepared, timeout)


def _unary(prepared: PreparedCall, timeout: float | None) -> Call[list[Any]]:
    return Call(EXECUTE, prepared.request, functools.partial(outputs, prepared.outputs), timeout)


def _streamed(prepared: PreparedCall, timeout: float | None) -> Call[list[Any]]:
    return Call(
        EXECUTE_STREAM,
        prepared.stream_requests(),
        _streamed_outputs,
        timeout,
        sink=functools.partial(StreamedOutputs, prepared.outputs),
    )


def _streamed_outputs(sink: StreamedOutputs, handles: Handles) -> list[Any]:
    return list(sink.arrays())


def upload(array: npt.ArrayLike, *, strides: Sequence[int] | None = None, timeout: float | None = None) -> Call[Any]:
    """Keep ``array`` on the server (in device memory on a GPU server), streamed up in chunks."""
    data = np.asarray(array)
    return _create(create_requests(data, tensor_desc(data, strides)), timeout)


def allocate(dtype: npt.DTypeLike, shape: Sequence[int], *, timeout: float | None = None) -> Call[Any]:
    """A zero-filled resident tensor, allocated on the server without uploading anything."""
    return _create(create_requests(None, tensor_desc((dtype, shape))), timeout)


def _create(requests: Iterator[bytes], timeout: float | None) -> Call[Any]:
    return Call(CREATE_TENSOR, requests, _created, timeout)


def _created(tensor: service_pb2.ResidentTensor, handles: Handles) -> Any:
    return handles.resident(tensor.handle, tensor.desc)


def read_tensor(tensor: Resident, *, timeout: float | None = None) -> Call[np.ndarray]:
    """A resident tensor's contents, streamed back: an owned array."""
    request = service_pb2.ReadTensorRequest(handle=tensor.handle)
    return Call(READ_TENSOR, request, _tensor_array, timeout, sink=TensorReader)


def _tensor_array(reader: TensorReader, handles: Handles) -> np.ndarray:
    return reader.array()


def release_tensor(tensor: Resident, *, timeout: float | None = None) -> Call[None]:
    """Free a resident tensor on the server."""
    return Call(RELEASE_TENSOR, service_pb2.ReleaseTensorRequest(handle=tensor.handle), _nothing, timeout)


def _nothing(answer: Any, handles: Handles) -> None:
    return None


def compile_target(
    target: operators_pb2.OperatorDesc | Graph | graph_pb2.GraphDesc,
    *,
    owned: Sequence[npt.ArrayLike | None] | None = None,
    timeout: float | None = None,
) -> Call[Any]:
    """Compile an operator desc or a graph once (CompileOperator / CompileGraph); call the result many times.

    Args:
        target: an OperatorDesc, a ``dmlrpc.Graph`` or a GraphDesc.
        owned: for inputs flagged DML_TENSOR_FLAG_OWNED_BY_DML, their arrays, one per input (None elsewhere); they
            are bound once here and left out of every call.
        timeout: deadline in seconds for this call (defaults to the client's).
    """
    if isinstance(target, operators_pb2.OperatorDesc):
        return Call(COMPILE_OPERATOR, compile_operator_request(target, owned), _compiled, timeout)
    return Call(COMPILE_GRAPH, compile_graph_request(target, owned), _compiled, timeout)


def _compiled(compiled: service_pb2.CompiledOperator, handles: Handles) -> Any:
    return handles.compiled(compiled)


def dispatch(
    request: service_pb2.DispatchRequest, layouts: Sequence[TensorLayout | None], timeout: float | None
) -> Call[list[Any]]:
    """Run a compiled operator or graph (its DispatchRequest, and its outputs' layouts)."""
    return Call(DISPATCH, request, functools.partial(outputs, layouts), timeout)


def release_compiled(handle: str, timeout: float | None) -> Call[None]:
    """Free a compiled operator or graph on the server."""
    request = service_pb2.ReleaseCompiledOperatorRequest(handle=handle)
    return Call(RELEASE_COMPILED_OPERATOR, request, _nothing, timeout)


def publish_model(handle: str, model_name: str, max_batch_size: int, timeout: float | None) -> Call[str]:
    """Serve a compiled operator or graph as an Open Inference Protocol model; the version it is served as."""
    request = service_pb2.PublishModelRequest(handle=handle, model_name=model_name, max_batch_size=max_batch_size)
    return Call(PUBLISH_MODEL, request, _model_version, timeout)


def _model_version(answer: service_pb2.PublishModelResponse, handles: Handles) -> str:
    return answer.model_version


def get_capabilities(*, timeout: float | None = None) -> Call[service_pb2.GetCapabilitiesResponse]:
    """The server's execution provider, device, feature level, limits and per-operator support."""
    return Call(GET_CAPABILITIES, service_pb2.GetCapabilitiesRequest(), _response, timeout)


def stream_window(*, timeout: float | None = None) -> Call[int]:
    """ExecuteMany's default window: the server's ``Limits.max_stream_items_in_flight`` (or DEFAULT_WINDOW)."""
    return get_capabilities(timeout=timeout).then(_window)


def _window(response: service_pb2.GetCapabilitiesResponse) -> int:
    return response.limits.max_stream_items_in_flight or DEFAULT_WINDOW


def operate(built: Built, timeout: float | None, pick: Callable[[list[Any]], T]) -> Call[T]:
    """An SDK function's call: its builder's desc and arrays executed (unary or streamed by size, as ``execute``
    decides), its results as NumPy would give them (``dmlrpc.ops.Call.results``), then as ``pick`` picks them."""
    return execute(built.operator_desc, built.inputs, timeout=timeout).then(
        lambda outputs: pick(built.results(outputs))
    )


def execute_many(requests: Iterator[bytes] | None, timeout: float | None) -> Call[None]:
    """An ExecuteMany stream: ``dmlrpc.many`` writes its items (wire bytes) and reads its results."""
    return Call(EXECUTE_MANY, requests, _nothing, timeout)


def _response(response: T, handles: Handles) -> T:
    return response


def compile_operator_request(
    operator_desc: operators_pb2.OperatorDesc, owned: Sequence[npt.ArrayLike | None] | None
) -> service_pb2.CompileOperatorRequest:
    """The CompileOperatorRequest: the owned inputs' arrays encoded per their descs."""
    case = desc_case(operator_desc)
    desc = getattr(operator_desc, case)
    fields, _ = tensor_fields(desc.DESCRIPTOR)
    descs = [getattr(desc, f.name) if desc.HasField(f.name) else None for f in fields if not f.array]
    return service_pb2.CompileOperatorRequest(operator_desc=operator_desc, owned_inputs=_owned(descs, owned))


def compile_graph_request(
    graph: Graph | graph_pb2.GraphDesc, owned: Sequence[npt.ArrayLike | None] | None
) -> service_pb2.CompileGraphRequest:
    """The CompileGraphRequest (owned graph inputs need the node descs: pass them through ``owned`` only with a
    GraphDesc whose input edges you know; a ``Graph``'s inputs are never owned)."""
    graph_desc = graph.desc() if isinstance(graph, Graph) else graph
    if owned:
        raise ArgumentValueError("owned", "owned graph inputs: send a CompileGraphRequest with owned_inputs yourself")
    return service_pb2.CompileGraphRequest(graph_desc=graph_desc)


def _owned(
    descs: Sequence[tensor_pb2.TensorDesc | None], owned: Sequence[npt.ArrayLike | None] | None
) -> list[service_pb2.BindingDesc]:
    if not owned:
        return []
    if len(owned) != len(descs):
        raise ArgumentValueError(
            "owned", f"owned takes one entry per input ({len(descs)}); got {len(owned)}", allowed=(str(len(descs)),)
        )
    bindings = []
    for index, (tensor, value) in enumerate(zip(descs, owned, strict=True)):
        if value is None or tensor is None:
            bindings.append(service_pb2.BindingDesc())
            continue
        bindings.append(_binding(_input_buffer(value, tensor.buffer, f"owned[{index}]", f"inputs[{index}]")))
    return bindings
