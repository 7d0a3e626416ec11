"""Execution provider choice (DirectML, CUDA, CPU) and the session options each one needs."""

from __future__ import annotations

import logging
import platform
from dataclasses import dataclass, replace

import onnxruntime as ort

from dmlrpc_server.settings import DEFAULTS, PROVIDERS

_log = logging.getLogger(__name__)


class ProviderUnavailableError(RuntimeError):
    """The requested execution provider is not in this ONNX Runtime build."""


@dataclass(frozen=True)
class Provider:
    """The execution provider in use and how sessions are created for it."""

    name: str
    options: dict[str, str]
    device: str
    #: DirectML allows only one `Run` at a time per session.
    serialize_runs: bool
    intra_op_threads: int
    #: Whether a desc this provider cannot run in full runs on the CPU provider instead (False: refused).
    cpu_fallback: bool = True
    #: Device memory its sessions may hold together (--device-memory-bytes); None: unbounded, or no device.
    device_memory_bytes: int | None = None

    def session_options(self) -> ort.SessionOptions:
        options = ort.SessionOptions()
        # One-node graphs gain nothing from extended optimisation, and it doubles compile time.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        # Each cached session would otherwise own a thread pool; requests already run concurrently.
        options.intra_op_num_threads = self.intra_op_threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # NOTE: each session would otherwise own a CPU arena that keeps the peak of its largest run for as long as
        # the session is cached: ten descs with 64 MiB outputs held 2.6 GiB between calls (docs/reliability.md,
        # "Memory held between calls"). Without it, tensors come from malloc and go back once a run ends; tiny
        # runs measured no slower.
        options.enable_cpu_mem_arena = False
        if self.name == PROVIDERS["directml"]:
            # The DirectML provider supports neither memory patterns nor parallel execution.
            options.enable_mem_pattern = False
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        return options

    def allowing_half_precision(self) -> Provider:
        """This provider as DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION compiles for: on CUDA, TF32 matrix
        products and convolutions; elsewhere the same provider (DirectML's EP and the CPU have no such switch)."""
        if self.name != PROVIDERS["cuda"]:
            return self
        return replace(self, options={**self.options, "use_tf32": "1"})

    def providers(self) -> list[str | tuple[str, dict[str, str]]]:
        if self.name == PROVIDERS["cpu"]:
            return [self.name]
        # CPU stays registered behind a GPU provider so that a node it lacks still runs (on the host).
        return [(self.name, self.options), PROVIDERS["cpu"]]

    def strict_session_options(self) -> ort.SessionOptions:
        """``session_options`` that fail the session where any node would be left to the CPU provider (used with
        this provider alone: ONNX Runtime refuses the CPU provider in the list beside this setting)."""
        options = self.session_options()
        options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        return options


def device_options(key: str, device_id: int, device_memory_bytes: int | None = None) -> dict[str, str]:
    """The provider options of a device provider (``key``: directml or cuda), as requests without
    DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION compile for."""
    options = {"device_id": str(device_id)}
    if key == "cuda":
        # NOTE: ONNX Runtime's CUDA provider computes FLOAT32 matrix products in TF32 by default (about 3e-4
        # relative); DirectML computes FLOAT32 as FLOAT32 unless the caller allows half precision, and so does
        # the server (``allowing_half_precision``).
        options["use_tf32"] = "0"
        if device_memory_bytes is not None:
            # Each session's arena stays within the budget and grows by what a run asks, not by doubling chunks
            # (its default), so that what a cached session keeps is its runs' peak (``compiler.device_bytes``).
            options["gpu_mem_limit"] = str(device_memory_bytes)
            options["arena_extend_strategy"] = "kSameAsRequested"
    return options


def choose_provider(
    requested: str,
    *,
    device_id: int = DEFAULTS.device_id,
    intra_op_threads: int = DEFAULTS.intra_op_threads,
    cpu_fallback: bool = DEFAULTS.cpu_fallback,
    device_memory_bytes: int | None = None,
) -> Provider:
    """Pick the execution provider: ``auto`` = DirectML if present, else CUDA, else CPU.

    Raises:
        ProviderUnavailableError: an explicitly requested provider is missing from this ONNX Runtime build.
    """
    available = set(ort.get_available_providers())
    if requested == "auto":
        key = next(k for k, name in PROVIDERS.items() if name in available or k == "cpu")
    elif requested in PROVIDERS:
        key = requested
        if PROVIDERS[key] not in available:
            raise ProviderUnavailableError(
                f"execution provider {PROVIDERS[key]} is not available in this ONNX Runtime build "
                f"(available: {', '.join(sorted(available))}); install onnxruntime-directml (Windows) or "
                "onnxruntime-gpu (CUDA)"
            )
    else:
        raise ValueError(f"unknown provider {requested!r}; choose auto, {', '.join(PROVIDERS)}")
    name = PROVIDERS[key]
    if key == "cpu":
        return Provider(name, {}, f"CPU ({platform.machine() or 'unknown'})", False, intra_op_threads, cpu_fallback)
    budget = device_memory_bytes if key == "cuda" else None
    options = device_options(key, device_id, budget)
    device = f"{'DirectML adapter' if key == 'directml' else 'CUDA device'} {device_id}"
    _log.info("using %s on %s", name, device)
    return Provider(name, options, device, key == "directml", intra_op_threads, cpu_fallback, budget)
