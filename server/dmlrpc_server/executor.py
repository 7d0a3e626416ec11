"""The domain layer: run one operator desc over bound buffers, and describe what the server supports."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np
from google.protobuf import unknown_fields
from google.protobuf.message import DecodeError

from dmlrpc.codec import TensorLayout, data_type_name, decode, encode_into
from dmlrpc.schema import tensor_descs
from dmlrpc.v1 import graph_pb2, operators_pb2, service_pb2
from dmlrpc_server.bindings import unary_buffers
from dmlrpc_server.errors import InvalidArgument, OperatorUnavailable, ResourceExhausted
from dmlrpc_server.graph_models import Stage, composed_plan, graph_batching, staged_run
from dmlrpc_server.graphs import GraphLowering, lower_graph
from dmlrpc_server.operators import REGISTRY, Operator
from dmlrpc_server.operators.base import BatchRule, Limits, Plan, make_model
from dmlrpc_server.runtime.buffers import Buffer, BufferPool
from dmlrpc_server.runtime.cache import CompileCache
from dmlrpc_server.runtime.compiler import (
    NODES_FALLBACK,
    SESSION_FALLBACK,
    Compiled,
    StagedCompiled,
    compile_plan,
)
from dmlrpc_server.runtime.cost import ModelCost, check_cost, model_cost
from dmlrpc_server.runtime.providers import Provider
from dmlrpc_server.runtime.resident import Resident, ResidentStore, device_of
from dmlrpc_server.settings import DEFAULTS

_log = logging.getLogger(__name__)

_OPERATOR_TYPES = operators_pb2.OperatorType


def _operator_type_name(value: int) -> str:
    try:
        return f"DML_OPERATOR_{_OPERATOR_TYPES.Name(value).removeprefix('OPERATOR_TYPE_')}"  # type: ignore[arg-type]
    except ValueError:
        return f"operator type {value}"


#: DML_EXECUTION_FLAGS bits the server knows (every ``ExecutionFlags`` value).
_KNOWN_FLAGS = sum(service_pb2.ExecutionFlags.values())
HALF_PRECISION = service_pb2.EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION


def compile_flags(flags: int, field: str = "execution_flags") -> int:
    """The DML_EXECUTION_FLAGS bits of a request that change how it compiles (only ALLOW_HALF_PRECISION_COMPUTATION:
    the others change nothing here); INVALID_ARGUMENT naming ``field`` for a bit DirectML does not define."""
    if flags & ~_KNOWN_FLAGS:
        raise InvalidArgument(
            field, f"{flags:#x} sets bits DML_EXECUTION_FLAGS does not define (known: {_KNOWN_FLAGS:#x})"
        )
    return flags & HALF_PRECISION


def cache_key(desc: bytes, flags: int) -> bytes:
    """The compile cache's key of canonical desc bytes compiled with ``compile_flags`` bits ``flags``: the bytes
    themselves without flags, else behind a zero byte, which no serialized OperatorDesc starts with (field 0)."""
    return desc if not flags else b"\x00" + bytes([flags]) + desc


class Executor:
    """Validates, compiles (once per distinct desc) and runs operator descs on one execution provider."""

    def __init__(
        self,
        provider: Provider,
        *,
        feature_level: int,
        limits: Limits,
        cache_capacity: int,
        cache_bytes: int | None = None,
        pool: BufferPool | None = None,
        resident: ResidentStore | None = None,
    ) -> None:
        """The server passes every part built from its settings; what is left out (an Executor in a test or a
        benchmark) takes the settings' defaults: the compile cache's bytes and resident quotas as a lone server's,
        no pooled buffers kept, resident bytes bounded by one request's."""
        self.provider = provider
        self._half_precision = provider.allowing_half_precision()
        self.feature_level = feature_level
        self.limits = limits
        self.pool = pool or BufferPool(0)
        if cache_bytes is None:
            cache_bytes = DEFAULTS.budgets(1).compile_cache
        self.cache = CompileCache(cache_capacity, cache_bytes)
        self.resident = resident or ResidentStore(
            tensors_per_owner=DEFAULTS.resident_tensors_per_caller,
            bytes_per_owner=limits.max_request_bytes,
            bytes_total=limits.max_request_bytes,
            tensors_total=DEFAULTS.resident_tensors_total,
            idle_seconds=DEFAULTS.resident_idle_seconds,
            device=device_of(provider),
        )

    def operator_for(self, operator_desc: operators_pb2.OperatorDesc) -> tuple[Operator[Any], Any]:
        """The registered operator for a desc's case, or the right error for an unset or unknown case."""
        case = operator_desc.WhichOneof("desc")
        if case is None:
            # A client built from a newer proto may send a case this server's proto does not know.
            numbers = sorted({field.field_number for field in unknown_fields.UnknownFieldSet(operator_desc)})  # type: ignore[attr-defined]
            if numbers:
                raise OperatorUnavailable(
                    f"{_operator_type_name(numbers[0])} is not executable by this server (unknown OperatorDesc case "
                    f"{numbers[0]}); see GetCapabilities"
                )
            raise InvalidArgument("operator_desc.desc", "no operator desc is set")
        operator = REGISTRY.get(case)
        type_value = operators_pb2.OperatorDesc.DESCRIPTOR.fields_by_name[case].number
        if operator is None:
            raise OperatorUnavailable(f"{_operator_type_name(type_value)} is not executable by this server yet")
        if operator.support_at(self.feature_level) is None:
            raise OperatorUnavailable(
                f"{_operator_type_name(type_value)} needs a newer feature level than this server applies"
            )
        return operator, getattr(operator_desc, case)

    def cached_bytes(self, desc: bytes) -> Compiled | None:
        """The compiled desc for desc bytes as a client sent them, when cached (one dictionary lookup)."""
        return self.cache.peek_alias(desc)

    def compiled_bytes(self, desc: bytes) -> Compiled:
        """``compiled`` for desc bytes as a client sent them; later calls find it with ``cached_bytes``."""
        try:
            operator_desc = operators_pb2.OperatorDesc.FromString(desc)
        except DecodeError as error:
            raise InvalidArgument("operator_desc", f"not a valid OperatorDesc: {error}") from None
        compiled = self.compiled(operator_desc)
        self.cache.alias(desc, operator_desc.SerializeToString(deterministic=True))
        return compiled

    @staticmethod
    def case_of(desc: bytes) -> str:
        """The operator case of desc bytes (``"unset"`` when none or unreadable): a metrics label."""
        try:
            return operators_pb2.OperatorDesc.FromString(desc).WhichOneof("desc") or "unset"
        except DecodeError:
            return "unset"

    def provider_for(self, flags: int) -> Provider:
        """The provider as a request's ``compile_flags`` bits compile for."""
        return self._half_precision if flags & HALF_PRECISION else self.provider

    def cached(self, operator_desc: operators_pb2.OperatorDesc, flags: int = 0) -> Compiled | None:
        """The compiled desc when the cache holds it (one lookup by its bytes), else ``None``: nothing is built."""
        return self.cache.peek(cache_key(operator_desc.SerializeToString(deterministic=True), flags))

    def compiled(self, operator_desc: operators_pb2.OperatorDesc, flags: int = 0) -> Compiled:
        """Validate and compile a desc with ``compile_flags`` bits ``flags``, or take it from the cache (keyed by
        its canonical bytes and those bits)."""
        key = cache_key(operator_desc.SerializeToString(deterministic=True), flags)
        provider = self.provider_for(flags)

        def build() -> Compiled:
            operator, desc = self.operator_for(operator_desc)
            plan = operator.plan(
                desc, feature_level=self.feature_level, limits=self.limits, provider=self.provider.name
            )
            return compile_plan(
                plan, provider, operator.batching, operator.case, self.budget(f"operator_desc.{operator.case}")
            )

        return self.cache.get(key, build)

    def budget(self, field: str) -> Callable[[ModelCost], None]:
        """The check a model's cost passes before its session is made: the work and size limits, errors naming
        ``field``."""
        return functools.partial(check_cost, limits=self.limits, field=field)

    def plan_node(self, operator_desc: operators_pb2.OperatorDesc, path: str) -> tuple[Plan, BatchRule | None]:
        """Validate and lower one graph node's desc (with its operator's batch rule); errors name fields under
        ``path``."""
        try:
            operator, desc = self.operator_for(operator_desc)
            plan = operator.plan(
                desc, feature_level=self.feature_level, limits=self.limits, provider=self.provider.name
            )
            return plan, operator.batching
        except InvalidArgument as error:
            raise InvalidArgument(path + error.field.removeprefix("operator_desc"), error.description) from None
        except ResourceExhausted as error:
            if error.message.startswith("operator_desc"):
                raise ResourceExhausted(path + error.message.removeprefix("operator_desc")) from None
            raise

    def compile_graph(
        self,
        graph: graph_pb2.GraphDesc,
        *,
        max_nodes: int,
        admit_constants: Callable[[int], None] | None = None,
        flags: int = 0,
    ) -> tuple[Compiled, GraphLowering]:
        """Validate a DML_GRAPH_DESC and compile it: one session when every intermediate edge passes its tensor
        unchanged between the nodes' models, else one session per node run in order (still on the server).
        ``admit_constants`` may refuse the constants' materialised bytes before they are made; ``flags`` are the
        request's ``compile_flags`` bits."""
        provider = self.provider_for(flags)
        lowering = lower_graph(
            graph,
            self.plan_node,
            max_nodes=max_nodes,
            constants_allowed=self.feature_level >= operators_pb2.FEATURE_LEVEL_6_2,
            path="graph_desc",
            max_constant_bytes=self.limits.max_tensor_bytes,
            admit_constants=admit_constants,
        )
        if lowering.composable():
            # A graph of operators that all batch on a new leading axis batches the same way as a whole.
            plan = composed_plan(lowering)
            compiled = compile_plan(plan, provider, graph_batching(lowering), "graph", self.budget("graph_desc"))
            return compiled, lowering
        costs = [model_cost(node.plan.model) for node in lowering.nodes]
        # The nodes run one after another, each within the limits; together their work is the graph's.
        check_cost(
            ModelCost(sum(cost.work for cost in costs), None, max(cost.peak_bytes for cost in costs)),
            self.limits,
            "graph_desc",
        )
        sessions = [
            compile_plan(node.plan, provider, check=self.budget(f"graph_desc.nodes[{node.index}]"))
            for node in lowering.nodes
        ]
        run = staged_run(lowering, [Stage(node, c.run) for node, c in zip(lowering.nodes, sessions, strict=True)])
        names = [f"input{i}" for i in range(len(lowering.input_layouts))]

        def prepare(arrays: Sequence[np.ndarray | None]) -> dict[str, np.ndarray]:
            return {name: array for name, array in zip(names, arrays, strict=True) if array is not None}

        def finish(results: Sequence[np.ndarray]) -> list[np.ndarray | None]:
            return list(results)

        plan = Plan(
            tuple(lowering.input_layouts), tuple(lowering.output_layouts), make_model([], [], []), prepare, finish
        )
        first = sessions[0]
        work = sum(stage.work for stage in sessions)
        held = sum(stage.held_bytes for stage in sessions)
        staged = StagedCompiled(
            plan, first.session, first.output_names, run=run, names=names, work=work, held_bytes=held
        )
        # The nodes' tensors live until the last node has run: their memory adds up.
        staged.memory = sum(stage.memory for stage in sessions) + plan.response_bytes
        fallbacks = {stage.fallback for stage in sessions}
        staged.provider = provider
        staged.fallback = (
            SESSION_FALLBACK if fallbacks == {SESSION_FALLBACK} else NODES_FALLBACK if any(fallbacks) else ""
        )
        return staged, lowering

    def unary_compiled(self, operator_desc: operators_pb2.OperatorDesc, flags: int = 0) -> Compiled:
        """``compiled``, for a unary call: its outputs must also fit in one response message."""
        compiled = self.compiled(operator_desc, flags)
        self.check_response_fits(compiled)
        return compiled

    def check_response_fits(self, compiled: Compiled) -> None:
        """Refuse (RESOURCE_EXHAUSTED) a unary call whose outputs cannot fit in one response message."""
        plan = compiled.plan
        # Each output binding adds at most 22 bytes of protobuf framing (two tags, two 10-byte lengths).
        if plan.response_bytes + 32 * len(plan.outputs) > self.limits.max_message_bytes:
            raise ResourceExhausted(
                f"the outputs total {plan.response_bytes} bytes, over the message limit of "
                f"{self.limits.max_message_bytes} (the server's --max-message-bytes); use ExecuteStream (the SDK does "
                "above its stream threshold)"
            )

    def execute(
        self, operator_desc: operators_pb2.OperatorDesc, bindings: Sequence[service_pb2.BindingDesc]
    ) -> list[Encoded]:
        """Run one unary request: returns each output buffer's bytes in binding order (``None`` when absent)."""
        compiled = self.unary_compiled(operator_desc)
        feeds = self.feeds(compiled, unary_buffers(bindings, compiled.plan))
        return self.encode_outputs(compiled, compiled.run(feeds))

    def feeds(
        self,
        compiled: Compiled,
        buffers: Sequence[Buffer | Resident | None],
        path: str = "inputs",
        skip: Collection[int] = (),
    ) -> dict[str, np.ndarray]:
        """Check buffer lengths, view them as arrays and run the operator's data-dependent checks: the model's feeds.

        Raises:
            InvalidArgument: a buffer is missing, unexpected or short, or a value in it breaks a rule.
        """
        plan = compiled.plan
        if len(buffers) != len(plan.inputs):
            raise InvalidArgument(
                path, f"{len(buffers)} bindings for {len(plan.inputs)} input tensor fields; bind each in order"
            )
        arrays: list[np.ndarray | None] = []
        for i, (data, layout) in enumerate(zip(buffers, plan.inputs, strict=True)):
            if layout is None:
                if data is not None:
                    raise InvalidArgument(f"{path}[{i}]", "the tensor desc is unset, so its binding must be unset too")
                arrays.append(None)
                continue
            if data is None:
                raise InvalidArgument(f"{path}[{i}]", "a buffer binding is required for this tensor")
            if isinstance(data, Resident):
                # Bound by handle: either fed to the model in device memory (``skip``) or read on the host.
                arrays.append(None if i in skip else self.resident.device.download(data.value))
                continue
            if len(data) < layout.total_bytes:
                raise InvalidArgument(
                    f"{path}[{i}].buffer.data",
                    f"{len(data)} bytes is shorter than the tensor's total_tensor_size_in_bytes ({layout.total_bytes})",
                )
            arrays.append(decode(data, layout))
        return compiled.plan.prepare(arrays)

    def resolve(
        self, owner: str, compiled: Compiled, bindings: Sequence[service_pb2.BindingDesc]
    ) -> list[Buffer | Resident | None]:
        """The bytes or the resident tensor of each unary binding; a resident one must match its tensor desc."""
        layouts = compiled.plan.inputs
        items: list[Buffer | Resident | None] = []
        for index, binding in enumerate(bindings):
            kind = binding.WhichOneof("binding")
            if kind is None:
                items.append(None)
            elif kind == "buffer":
                items.append(binding.buffer.data)  # NOTE: upb copies a bytes field on every access: read it once
            elif kind != "resident":
                raise InvalidArgument(f"inputs[{index}]", "a buffer or resident binding is required for this tensor")
            else:
                path = f"inputs[{index}].resident"
                tensor = self.resident.get(owner, binding.resident.handle, f"{path}.handle")
                layout = layouts[index] if index < len(layouts) else None
                if layout is not None and not tensor.matches(layout):
                    held = f"{data_type_name(tensor.layout.data_type)} {list(tensor.layout.sizes)}"
                    wanted = f"{data_type_name(layout.data_type)} {list(layout.sizes)}"
                    raise InvalidArgument(path, f"the resident tensor is {held}, the bound tensor desc {wanted}")
                items.append(tensor)
        return items

    def execute_resident(
        self,
        owner: str,
        compiled: Compiled,
        request: service_pb2.ExecuteRequest | service_pb2.DispatchRequest,
        *,
        output_descs: list[bytes] | None = None,
        bind: Callable[[list[Any]], list[Any]] | None = None,
    ) -> list[bytes | Resident | None]:
        """Execute ``request`` (compiled as ``compiled``) with resident inputs and/or outputs kept resident
        (``request.keep_outputs``).

        Resident inputs that the plan feeds unchanged are bound in device memory (IOBinding) and kept outputs stay
        there, so a chain of such calls never copies to the host; anything else is read back to the host, run, and
        uploaded again. The kept outputs' quota is reserved before anything runs.
        """
        plan = compiled.plan
        if plan.input_arrays or plan.output_arrays:
            raise InvalidArgument(
                "inputs", "operators with tensor-array fields bind buffers only: no resident tensors or kept outputs"
            )
        keep = self._kept(plan, request.keep_outputs)
        sent = sum(layout.total_bytes for i, layout in enumerate(plan.outputs) if layout is not None and i not in keep)
        if sent + 32 * len(plan.outputs) > self.limits.max_message_bytes:
            raise ResourceExhausted(
                f"the outputs sent back total {sent} bytes, over the message limit of {self.limits.max_message_bytes} "
                "(the server's --max-message-bytes); keep some outputs on the server or raise the limit"
            )
        items = self.resolve(owner, compiled, request.inputs)
        if bind is not None:
            items = bind(items)  # a compiled handle's owned inputs
        device = self.resident.device
        kept_bytes = sum(layout.packed_bytes for i in keep if (layout := plan.outputs[i]) is not None)
        with self.resident.reserve(owner, kept_bytes, len(keep)) as reservation:
            on_device = {
                i: item
                for i, item in enumerate(items)
                if compiled.on_device
                and isinstance(item, Resident)
                and not isinstance(item.value, np.ndarray)
                and i < len(plan.direct_inputs)
                and plan.direct_inputs[i] is not None
            }
            device_keep = keep if plan.direct_outputs and compiled.on_device and not device.on_host else set()
            if on_device or device_keep:
                feeds = self.feeds(compiled, items, skip=on_device.keys())
                bound = {plan.direct_inputs[i]: item.value for i, item in on_device.items()}
                results: list[Any] = compiled.run_bound(feeds, bound, device_keep, device)  # type: ignore[arg-type]
                finished: list[Any] = results if plan.direct_outputs else plan.finish(results)
            else:
                finished = plan.finish(compiled.run(self.feeds(compiled, items)))
            if not keep:
                descs: list[bytes] = []
            elif output_descs is not None:
                descs = output_descs
            else:
                assert isinstance(request, service_pb2.ExecuteRequest)
                descs = [d.SerializeToString() for d in tensor_descs(request.operator_desc, output=True)]
            outputs: list[bytes | Resident | None] = []
            for index, (result, layout) in enumerate(zip(finished, plan.outputs, strict=True)):
                if layout is None or result is None:
                    outputs.append(None)
                elif index in keep:
                    value = result if index in device_keep else device.upload(np.ascontiguousarray(result))
                    outputs.append(reservation.add(layout, descs[index], value))
                else:
                    staged: list[np.ndarray] = []
                    outputs.append(bytes(self._output_view(result, layout, staged)))
                    for buffer in staged:
                        self.pool.release(buffer)
        return outputs

    @staticmethod
    def _kept(plan: Plan, keep_outputs: Sequence[int]) -> set[int]:
        keep: set[int] = set()
        for position, index in enumerate(keep_outputs):
            if index >= len(plan.outputs) or plan.outputs[index] is None:
                raise InvalidArgument(
                    f"keep_outputs[{position}]", f"{index} is not a set output (the desc has {len(plan.outputs)})"
                )
            keep.add(index)
        return keep

    def encode_outputs(self, compiled: Compiled, results: Sequence[np.ndarray]) -> list[Encoded]:
        """The output buffers' bytes per output field, laid out per the output descs (one copy from
        ``output_views``); a list of them for a tensor-array field."""
        views, staged = self.output_views(compiled, results)
        try:
            return compiled.plan.group_outputs([None if view is None else bytes(view) for view in views])
        finally:
            for buffer in staged:
                self.pool.release(buffer)

    def output_views(
        self, compiled: Compiled, results: Sequence[np.ndarray]
    ) -> tuple[list[memoryview | None], list[np.ndarray]]:
        """The output buffers as byte views, without the copy ``bytes`` would cost (for streaming them out).

        Packed outputs view the arrays ONNX Runtime returned; strided ones are laid out in pooled buffers, returned
        second: release them to the pool once the views are sent.
        """
        views: list[memoryview | None] = []
        staged: list[np.ndarray] = []
        for result, layout in zip(compiled.plan.finish(results), compiled.plan.outputs, strict=True):
            views.append(None if layout is None or result is None else self._output_view(result, layout, staged))
        return views, staged

    def _output_view(self, result: np.ndarray, layout: TensorLayout, staged: list[np.ndarray]) -> memoryview:
        """One output's bytes: a view of ``result`` when it already is the layout, else laid out in a pooled
        buffer appended to ``staged``."""
        data = np.ascontiguousarray(result)
        if layout.is_packed and data.dtype == layout.dtype and data.nbytes == layout.total_bytes:
            return data.reshape(-1).view(np.uint8).data
        staging = self.pool.acquire(layout.total_bytes)
        encode_into(result, layout, staging)  # writes every byte: gaps and padding are zeroed
        staged.append(staging)
        return staging.data


#: One output field's encoded bytes: a buffer, the buffers of a tensor array, or ``None`` when unset.
Encoded = bytes | list[bytes | None] | None
