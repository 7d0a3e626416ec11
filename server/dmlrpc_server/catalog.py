"""Stage 2 of the request path: a call's plan, looked up by its desc's bytes, or validated and compiled once."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from google.protobuf import unknown_fields
from google.protobuf.message import DecodeError

from dmlrpc.v1 import graph_pb2, operators_pb2, service_pb2
from dmlrpc_server.calls import Call
from dmlrpc_server.errors import InvalidArgument, OperatorUnavailable, ResourceExhausted
from dmlrpc_server.graph_models import Stage, composed_plan, graph_batching, staged_run
from dmlrpc_server.graphs import GraphLowering, lower_graph
from dmlrpc_server.operators import REGISTRY, Operator
from dmlrpc_server.operators.base import BatchRule, Limits, Plan, make_model
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


class Catalog:
    """Validates and compiles operator descs and graphs (once per distinct desc) for one execution provider, and finds
    them again by the bytes a client sent."""

    def __init__(
        self,
        provider: Provider,
        *,
        feature_level: int,
        limits: Limits,
        cache_capacity: int,
        cache_bytes: int | None = None,
    ) -> None:
        """``cache_bytes`` left out (a catalog in a test or a benchmark) is a lone server's default."""
        self.provider = provider
        self._half_precision = provider.allowing_half_precision()
        self.feature_level = feature_level
        self.limits = limits
        if cache_bytes is None:
            cache_bytes = DEFAULTS.budgets(1).compile_cache
        self.cache = CompileCache(cache_capacity, cache_bytes)

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

    def lookup(self, call: Call) -> Compiled | None:
        """Stage 2 on a hit: the plan of a call's desc as its bytes were sent (one dictionary lookup, no parsing:
        equal bytes parse to an equal desc, so they are the same plan), checked to fit one response unless the call
        keeps outputs resident; ``None`` on a miss (``compile``) or for a call in its protobuf form."""
        if call.desc is None:
            request = call.request
            if not isinstance(request, service_pb2.ExecuteRequest):
                return None
            flags = compile_flags(request.execution_flags)
            compiled = self.cache.peek(cache_key(request.operator_desc.SerializeToString(deterministic=True), flags))
        else:
            compiled = self.cache.peek_alias(call.desc)
        if compiled is None:
            return None
        plan = compiled.plan
        # Each output binding adds at most 22 bytes of protobuf framing (two tags, two 10-byte lengths).
        if not call.resident and plan.response_bytes + 32 * len(plan.outputs) > self.limits.max_message_bytes:
            self.check_response_fits(compiled)
        call.label = compiled.label
        if compiled.fallback:
            call.executed_on = compiled.executed_on
        return compiled

    def compile(self, call: Call) -> Compiled:
        """Stage 2 on a miss (on a worker thread: validation and lowering take milliseconds): compile the call's desc;
        later calls with the same desc bytes find it with ``lookup``."""
        if call.desc is None:
            assert isinstance(call.request, service_pb2.ExecuteRequest)
            request = call.request
            compiled = self.compiled(request.operator_desc, compile_flags(request.execution_flags))
        else:
            compiled = self.compiled_bytes(call.desc)
        if not call.resident:
            self.check_response_fits(compiled)
        call.label = compiled.label
        if compiled.fallback:
            call.executed_on = compiled.executed_on
        return compiled
