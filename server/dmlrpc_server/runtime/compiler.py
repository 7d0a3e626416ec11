"""Compiled operators: a desc's plan plus its ONNX Runtime session, cached by the desc's canonical bytes."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtNotImplemented

from dmlrpc_server.errors import OperatorUnavailable, ResourceExhausted
from dmlrpc_server.operators.base import BatchRule, Plan
from dmlrpc_server.runtime.buffers import BufferPool
from dmlrpc_server.runtime.cost import ModelCost, model_cost
from dmlrpc_server.runtime.memory import resident_bytes
from dmlrpc_server.runtime.providers import Provider
from dmlrpc_server.runtime.resident import Device
from dmlrpc_server.settings import PROVIDERS

_log = logging.getLogger(__name__)
CPU = PROVIDERS["cpu"]
#: ONNX Runtime's refusal of a session, made with ``Provider.strict_session_options``, that would leave nodes to the
#: CPU provider.
_NODES_ON_CPU = "fallback to CPU EP has been explicitly disabled"
#: ``Compiled.fallback`` values: the whole session on the CPU provider, or some of its nodes.
SESSION_FALLBACK, NODES_FALLBACK = "session", "nodes"
#: ONNX Runtime's errors of a run its provider failed (FAIL, RUNTIME_EXCEPTION, EP_FAIL), not a refusal of the feeds.
_RUN_FAILURES: tuple[type[Exception], ...] = tuple(
    getattr(ort.capi.onnxruntime_pybind11_state, name) for name in ("Fail", "RuntimeException", "EPFail")
)
#: ONNX Runtime's refusal to build a session whose graph needs a kernel its CPU provider lacks (NOT_IMPLEMENTED).
_NO_KERNEL: type[Exception] = ort.capi.onnxruntime_pybind11_state.NotImplemented
#: Held while a compiled desc moves to the CPU provider after a failed device run (``Compiled._to_host``).
_MOVING = threading.Lock()
#: The options ONNX Runtime's binding is given for a run given none (one nothing stops: on the event loop), at the
#: binding's call only (``Compiled.run``, the model runner): never handed to a caller, so nothing sets its
#: ``terminate`` (a run that can be stopped has options of its own); ONNX Runtime only reads a run's options.
#: NOTE: given ``None`` instead, the binding's run of a tiny TopK took 0.5 µs longer (of 3).
UNSTOPPED = ort.RunOptions()

#: What one cached session costs beyond its model: ONNX Runtime's graph, kernels and plan, and the Python objects
#: of the Compiled (measured: 36-55 KiB per tiny desc with the CPU arena off, docs/reliability.md).
SESSION_BYTES = 64 << 10


def session_bytes(model_bytes: int) -> int:
    """The host bytes a cached session of a model of ``model_bytes`` serialized is charged: the model proto the plan
    keeps, the session's own copy of its initializers, and ``SESSION_BYTES``."""
    return 2 * model_bytes + SESSION_BYTES


#: Host bytes a session holds per byte of its model's initializers: the model proto the plan keeps, and ONNX
#: Runtime's graph proto and initialized tensor (measured: 256 MiB of RSS per compiled graph holding a 64 MiB
#: constant, docs/reliability.md).
INITIALIZER_COPIES = 4
#: The same per byte of an initializer kept beside the model (``Plan.external``): the plan's array and ONNX
#: Runtime's initialized tensor (measured: 128 MiB of RSS per compiled graph holding a 64 MiB constant).
EXTERNAL_COPIES = 2


def _initializer_sizes(model: onnx.ModelProto) -> list[tuple[int, bool]]:
    """Each of ``model``'s initializers: its bytes, and whether its data is kept beside the model."""
    # NOTE: from the dims, never ``raw_data``: reading that field copies it (tens of ms for a 32 MiB constant),
    # and a session was already built from the model, so its data agrees with its dims.
    sizes = []
    for initializer in model.graph.initializer:
        count = 1
        for dim in initializer.dims:
            count *= dim
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(initializer.data_type).itemsize
        sizes.append((count * itemsize, initializer.data_location == onnx.TensorProto.EXTERNAL))
    return sizes


def data_bytes(model: onnx.ModelProto) -> int:
    """The host bytes ``model``'s initializers (constants, lowering tables) take once it is compiled: their size
    times ``INITIALIZER_COPIES``, or ``EXTERNAL_COPIES`` for those kept beside it. What a compiled handle is
    charged for its model (its fixed per-session cost is bounded by the handle counts instead)."""
    return sum(
        size * (EXTERNAL_COPIES if external else INITIALIZER_COPIES) for size, external in _initializer_sizes(model)
    )


#: Device bytes a CUDA session holds beyond its tensors: its cuBLAS and cuDNN handles and their workspaces, its
#: arena's first chunk (an H100 filled its 80 GB after about 500 sessions: about 160 MiB each).
DEVICE_SESSION_BYTES = 160 << 20


def device_bytes(model: onnx.ModelProto, peak_bytes: int) -> int:
    """The device bytes a cached device session of ``model`` is charged under --device-memory-bytes: its fixed cost,
    its constants, and its runs' peak tensors, which its arena keeps once a run has asked for them."""
    return DEVICE_SESSION_BYTES + sum(size for size, _ in _initializer_sizes(model)) + peak_bytes


def check_device_memory(field: str, charge: int, provider: Provider) -> None:
    """Refuse a desc whose device session and run would not fit --device-memory-bytes, before anything is made.

    Raises:
        ResourceExhausted: ``charge`` (``device_bytes``) is over the provider's device budget.
    """
    budget = provider.device_memory_bytes
    if budget is not None and charge > budget:
        raise ResourceExhausted(
            f"{field}: its session and one run hold an estimated {charge:,} bytes of device memory, over the "
            f"{budget:,} bytes the server's sessions may hold (--device-memory-bytes); split the work into smaller "
            "calls or raise --device-memory-bytes"
        )


@dataclass
class Compiled:
    """A validated plan and the session that runs its model (plus, once needed, the session of its batched model)."""

    plan: Plan
    session: ort.InferenceSession
    output_names: list[str]
    #: Held around each run where the provider runs one at a time (DirectML); None: runs overlap.
    run_lock: threading.Lock | None = None
    provider: Provider | None = None
    batching: BatchRule | None = None
    #: Whether the session runs on the provider's device (False on the CPU provider and after a host fallback):
    #: only then can device-resident tensors be bound as they are.
    on_device: bool = False
    #: The work one run causes, in element-operations (``runtime.cost.model_work``): the scheduler's measure.
    work: int = 0
    #: The memory one call adds beyond its request message (``call_memory``): reserved before it runs.
    memory: int = 0
    #: The metrics label and batch-size key: the operator's case ("graph" for a graph).
    label: str = ""
    #: How much of it left the provider for the CPU provider: "" (nothing), ``SESSION_FALLBACK`` or
    #: ``NODES_FALLBACK``.
    fallback: str = ""
    #: The bytes the compile cache charges for keeping this entry (``session_bytes`` of each session it holds or
    #: may build: the batched one too, where the operator batches).
    held_bytes: int = 0
    #: The device bytes the compile cache charges for keeping this entry under --device-memory-bytes
    #: (``device_bytes``; 0 where there is no such budget or the session runs on the host).
    device_bytes: int = 0
    #: Called once the desc has moved to the CPU provider at run time (the compile cache counts it as a fallback).
    on_move: Callable[[Compiled], None] | None = field(default=None, repr=False)
    _batched: ort.InferenceSession | None = field(default=None, repr=False)

    @property
    def executed_on(self) -> str:
        """The providers that run it, for the ``dmlrpc-executed-on`` trailer: "" when only its own provider does."""
        if not self.fallback or self.provider is None:
            return ""
        return CPU if self.fallback == SESSION_FALLBACK else f"{self.provider.name},{CPU}"

    def run(self, feeds: dict[str, np.ndarray], options: ort.RunOptions | None = None) -> list[np.ndarray]:
        # NOTE: the session's own wrapper re-validates the feeds in Python on every call; the binding it calls
        # does the same checks in C++.
        given = UNSTOPPED if options is None else options
        while True:
            session = self.session
            lock = self.run_lock
            try:
                if lock is None:  # NOTE: the common case, without a context manager's two calls
                    return session._sess.run(self.output_names, feeds, given)  # type: ignore[no-any-return]
                with lock:
                    return session._sess.run(self.output_names, feeds, given)  # type: ignore[no-any-return]
            except _RUN_FAILURES as error:
                if not self._to_host(session, error, options):
                    raise

    def _serialized(self) -> contextlib.AbstractContextManager[object]:
        """The run lock to hold around a run, where there is one."""
        return contextlib.nullcontext() if self.run_lock is None else self.run_lock

    def _to_host(self, failed: ort.InferenceSession, error: Exception, options: ort.RunOptions | None) -> bool:
        """After ``failed``, one of this desc's sessions, raised ``error`` in a run: whether the caller should run
        it again, because the desc now runs on the CPU provider.

        A device session can build and still fail at its first run: the DirectML provider compiles nodes whose
        shapes are known only at run time (after a Range or NonZero) when they first run, and a device that cannot
        compile one (a Cast of 64-bit integers without 64-bit shader operations) fails the run, not the session.
        Like a session the device cannot build, the desc then runs on the host, told to the caller.

        Raises:
            OperatorUnavailable: it would fall back and the provider's ``cpu_fallback`` is off.
        """
        provider = self.provider
        stopped = options is not None and options.terminate  # a deadline stopped the run: not the device's failure
        if provider is None or provider.name == CPU or self.fallback == SESSION_FALLBACK or stopped:
            return failed is not self.session and failed is not self._batched  # another run moved it meanwhile
        reason = _first_line(error)
        if not provider.cpu_fallback:
            raise OperatorUnavailable(
                f"{provider.name} on {provider.device} failed to run this operator's session ({reason}), and this "
                "server refuses to fall back to the CPU provider (--no-cpu-fallback)"
            ) from None
        with _MOVING:
            if self.fallback != SESSION_FALLBACK:
                _log.warning(
                    "%s failed to run this operator's session (%s); it runs on %s instead", provider.name, reason, CPU
                )
                self.session = _host_session(self.plan.model.SerializeToString(), provider, self.plan.external)
                self._batched = None
                self.fallback, self.on_device = SESSION_FALLBACK, False
                if self.on_move is not None:
                    self.on_move(self)
        return True

    def run_bound(
        self, feeds: dict[str, np.ndarray], device_inputs: dict[str, ort.OrtValue], keep: set[int], device: Device
    ) -> list[np.ndarray | ort.OrtValue]:
        """Run with IOBinding: host feeds and device-resident inputs bound as they are; the outputs in ``keep``
        (indices) are allocated in device memory and returned as OrtValues, the others copied to the host."""
        binding = self.session.io_binding()
        for name, array in feeds.items():
            binding.bind_cpu_input(name, array)
        for name, value in device_inputs.items():
            binding.bind_ortvalue_input(name, value)
        for index, name in enumerate(self.output_names):
            if index in keep:
                binding.bind_output(name, device.kind, device.device_id)
            else:
                binding.bind_output(name)
        try:
            with self._serialized():
                self.session.run_with_iobinding(binding)
        except _RUN_FAILURES as error:
            if device_inputs or keep or not self._to_host(self.session, error, None):
                raise  # NOTE: device-resident values cannot be bound to a host session
            return list(self.run(feeds))
        values = binding.get_outputs()
        return [value if index in keep else value.numpy() for index, value in enumerate(values)]

    def run_batch(
        self,
        requests: Sequence[dict[str, np.ndarray]],
        pool: BufferPool,
        run_options: ort.RunOptions | None = None,
    ) -> list[list[np.ndarray]]:
        """Run several requests' feeds as one batch (stacked on a new leading axis); each request's outputs."""
        if self.batching is None or self.provider is None:
            raise RuntimeError("this operator does not batch")
        if self._batched is None:
            # NOTE: built on first use: most descs are never batched.
            self._batched = _session(self.batching.model(self.plan.model), self.provider, self.plan.external)
        feeds, staging = self.batching.stack(requests, pool)
        try:
            batched = self._batched
            try:
                with self._serialized():
                    outputs = batched.run(self.output_names, feeds, run_options)
            except _RUN_FAILURES as error:
                if not self._to_host(batched, error, run_options):
                    raise
                return [self.run(request, run_options) for request in requests]
        finally:
            for buffer in staging:
                pool.release(buffer)
        return [[output[i] for output in outputs] for i in range(len(requests))]


class StagedCompiled(Compiled):
    """A graph whose nodes run one session each, in order: ``run`` drives them (``session`` is the first node's)."""

    def __init__(
        self,
        plan: Plan,
        session: ort.InferenceSession,
        output_names: list[str],
        *,
        run: Callable[[Sequence[np.ndarray | None], ort.RunOptions | None], list[np.ndarray]],
        names: list[str],
        work: int,
        held_bytes: int = 0,
    ) -> None:
        super().__init__(plan, session, output_names, work=work, label="graph", held_bytes=held_bytes)
        self._run_graph = run
        self._input_names = names

    def run(self, feeds: dict[str, np.ndarray], options: ort.RunOptions | None = None) -> list[np.ndarray]:
        return self._run_graph([feeds.get(name) for name in self._input_names], options)


class SessionCount:
    """The ONNX Runtime sessions this process has created for calls (cached or not; the warm-up's is not counted),
    and limits whose reaching is reported once each: a count (``--max-sessions-per-worker``) and a resident memory
    budget looked at after each new session (``--worker-memory-bytes``); the worker is then recycled."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.created = 0
        self._limit = 0
        self._reached: Callable[[int], None] | None = None
        self._budget = 0
        self._over: Callable[[int], None] | None = None

    def watch_memory(self, budget: int, over: Callable[[int], None]) -> None:
        """Call ``over(resident bytes)`` once, from the thread that made the session, when this process's resident
        memory is above ``budget`` bytes after a new session."""
        with self._lock:
            self._budget, self._over = budget, over

    def made(self) -> None:
        """A session was built (or failed to, having allocated all the same): look at the memory it left."""
        if not self._budget or self._over is None:
            return
        resident = resident_bytes()
        if resident is None or resident <= self._budget:
            return
        with self._lock:
            over, self._over = self._over, None
        if over is not None:
            over(resident)

    def watch(self, limit: int, reached: Callable[[int], None]) -> None:
        """Call ``reached(count)`` once, from the thread that creates it, when the ``limit``-th session is made."""
        with self._lock:
            self._limit, self._reached = limit, reached
            if limit and self.created >= limit:
                self._fire()

    def add(self) -> None:
        with self._lock:
            self.created += 1
            if self._limit and self.created >= self._limit:
                self._fire()

    def _fire(self) -> None:
        reached, self._reached = self._reached, None
        if reached is not None:
            reached(self.created)


# NOTE: one per process, like the worker facts in runtime/process.py: what leaks below the server (a provider's
# per-session memory) is the process's, whichever cache or handle made the session.
SESSIONS = SessionCount()


def _first_line(error: Exception) -> str:
    """ONNX Runtime's message, first line and at most 300 characters (its later lines are a stack)."""
    return str(error).splitlines()[0][:300]


def _session(model: onnx.ModelProto, provider: Provider, external: Mapping[str, np.ndarray]) -> ort.InferenceSession:
    return _session_on(model.SerializeToString(), provider, external)[0]


def _given(options: ort.SessionOptions, external: Mapping[str, np.ndarray]) -> ort.SessionOptions:
    """``options`` that give a session the data of its model's external initializers (``Plan.external``)."""
    if external:
        options.add_external_initializers(
            list(external), [ort.OrtValue.ortvalue_from_numpy(array) for array in external.values()]
        )
    return options


def _session_on(
    serialized: bytes, provider: Provider, external: Mapping[str, np.ndarray]
) -> tuple[ort.InferenceSession, str]:
    """A session of the ``serialized`` model (its ``external`` initializers beside it) on ``provider`` and how much
    of it falls back to the CPU provider (``""``, ``NODES_FALLBACK`` or ``SESSION_FALLBACK``: see
    ``Compiled.fallback``).

    Raises:
        OperatorUnavailable: it would fall back and the provider's ``cpu_fallback`` is off.
    """
    SESSIONS.add()  # counted before it exists: a session that fails to build may have allocated already
    try:
        return _build_session(serialized, provider, external)
    finally:
        SESSIONS.made()


def _build_session(
    serialized: bytes, provider: Provider, external: Mapping[str, np.ndarray]
) -> tuple[ort.InferenceSession, str]:
    if provider.name == CPU:
        try:
            session = ort.InferenceSession(
                serialized, sess_options=_given(provider.session_options(), external), providers=[CPU]
            )
        except OrtNotImplemented as error:
            # A kernel this ONNX Runtime build lacks (onnxruntime-directml's CPU provider has fewer type variants
            # than the CPU build's): the operator is unavailable here, not a failure of the server.
            raise OperatorUnavailable(f"{CPU} has no kernel for this operator ({_first_line(error)})") from error
        return session, ""
    # NOTE: ONNX Runtime places nodes per provider silently (a node the device lacks, or a whole device that failed
    # to load, lands on the CPU provider); a session that forbids that tells the two apart.
    try:
        strict = ort.InferenceSession(
            serialized,
            sess_options=_given(provider.strict_session_options(), external),
            providers=[(provider.name, provider.options)],
        )
        if provider.name in strict.get_providers():
            return strict, ""
        reason = f"{provider.name} is not loaded"
        kind = SESSION_FALLBACK
    except Exception as error:
        reason = _first_line(error)
        kind = NODES_FALLBACK if _NODES_ON_CPU in reason else SESSION_FALLBACK
    what = (
        "leaves nodes of this operator's session to"
        if kind == NODES_FALLBACK
        else "could not build this operator's session"
    )
    if not provider.cpu_fallback:
        raise OperatorUnavailable(
            f"{provider.name} on {provider.device} {what} the CPU ({reason}), and this server refuses to fall back "
            "to the CPU provider (--no-cpu-fallback)"
        )
    if kind == NODES_FALLBACK:
        try:
            session = ort.InferenceSession(
                serialized, sess_options=_given(provider.session_options(), external), providers=provider.providers()
            )
            _log.warning("%s %s %s (%s)", provider.name, what, CPU, reason)
            return session, NODES_FALLBACK
        except Exception as error:
            reason = _first_line(error)
            what = "could not build this operator's session"
    # A device that cannot compile a graph (e.g. DirectML on a device without 64-bit shader operations) fails
    # the whole session; the desc still has an answer on the host, so it runs there rather than failing.
    _log.warning("%s %s (%s); it runs on %s instead", provider.name, what, reason, CPU)
    return _host_session(serialized, provider, external, counted=True), SESSION_FALLBACK


def _host_session(
    serialized: bytes, provider: Provider, external: Mapping[str, np.ndarray], *, counted: bool = False
) -> ort.InferenceSession:
    """The CPU provider's session of a model ``provider`` could not build or run (``counted``: in ``SESSIONS``)."""
    if not counted:
        SESSIONS.add()
    fallback = Provider(CPU, {}, "CPU", False, provider.intra_op_threads)
    try:
        return ort.InferenceSession(
            serialized, sess_options=_given(fallback.session_options(), external), providers=[CPU]
        )
    except _NO_KERNEL as error:
        # NOTE: the CPU provider of the ONNX Runtime build this server runs on lacks a kernel of the lowering (the
        # Windows DirectML wheel's is older than Linux's): the desc has no answer here, which is not the caller's
        # fault nor a crash of the server.
        raise OperatorUnavailable(
            f"{provider.name} on {provider.device} could not build this operator's session, and the CPU provider "
            f"it falls back to cannot run it either ({_first_line(error)})"
        ) from None


def compile_plan(
    plan: Plan,
    provider: Provider,
    batching: BatchRule | None = None,
    label: str = "",
    check: Callable[[ModelCost], None] | None = None,
) -> Compiled:
    """Estimate what one run of a plan's model costs, let ``check`` refuse it, then create its ONNX Runtime session
    (so that a refused model never allocates anything)."""
    cost = model_cost(plan.model)
    if check is not None:
        check(cost)
    device = 0
    if provider.device_memory_bytes is not None:
        device = device_bytes(plan.model, cost.peak_bytes)
        check_device_memory(f"operator_desc.{label}" if label else "operator_desc", device, provider)
    # NOTE: serialized once, and its length is the charge: protobuf's ByteSize() serializes again, holding the GIL.
    serialized = plan.model.SerializeToString()
    session, fallback = _session_on(serialized, provider, plan.external)
    names = [output.name for output in session.get_outputs()]
    lock = threading.Lock() if provider.serialize_runs else None
    held = session_bytes(len(serialized)) * (2 if batching is not None else 1)
    return Compiled(
        plan,
        session,
        names,
        lock,
        provider,
        batching,
        on_device=provider.name != CPU and fallback != SESSION_FALLBACK,
        work=cost.work,
        memory=call_memory(plan, cost.peak_bytes),
        label=label,
        fallback=fallback,
        held_bytes=held,
        device_bytes=0 if fallback == SESSION_FALLBACK else device * (2 if batching is not None else 1),
    )


def call_memory(plan: Plan, peak_bytes: int) -> int:
    """The memory one call of ``plan`` adds beyond its request message: the run's tensors at their peak, less the
    inputs read in place from the request (a broadcast input is made whole, so it counts), plus the response."""
    received = sum(layout.total_bytes for layout in plan.inputs if layout is not None)
    return max(0, peak_bytes - received) + plan.response_bytes


def warm_up(provider: Provider) -> float:
    """Initialise the execution provider (device creation, kernel registration) with a one-node model.

    Returns the seconds it took; the first session on DirectML or CUDA pays for the device, later ones do not.
    """
    started = time.perf_counter()
    tensor = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Neg", ["x"], ["y"])],
        "warm_up",
        [tensor],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4])],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)], ir_version=8)
    session = ort.InferenceSession(
        model.SerializeToString(), sess_options=provider.session_options(), providers=provider.providers()
    )
    result = session.run(None, {"x": np.arange(4, dtype=np.float32)})[0]
    if not np.array_equal(result, -np.arange(4, dtype=np.float32)):
        raise RuntimeError(f"{provider.name} returned a wrong result while warming up: {result}")
    return time.perf_counter() - started
