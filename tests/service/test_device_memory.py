"""--device-memory-bytes: a desc whose device session and run would not fit is refused naming the flag, and the
compile cache keeps its sessions' estimated device bytes within the budget. The accounting runs here on the CPU
provider given a budget (the CUDA provider's is the same code); the CUDA options are read as ONNX Runtime gets them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dmlrpc import ops
from dmlrpc_server.catalog import Catalog
from dmlrpc_server.errors import ResourceExhausted
from dmlrpc_server.operators.base import Limits
from dmlrpc_server.runtime.compiler import DEVICE_SESSION_BYTES
from dmlrpc_server.runtime.providers import choose_provider, device_options
from dmlrpc_server.settings import DEFAULTS, MiB, load_settings


def _catalog(budget: int) -> Catalog:
    provider = replace(choose_provider("cpu"), device_memory_bytes=budget)
    limits = Limits(max_tensor_bytes=512 * MiB, max_request_bytes=1 << 30, max_message_bytes=512 * MiB)
    return Catalog(provider, feature_level=DEFAULTS.feature_level, limits=limits, cache_capacity=1000)


def test_the_flag_limits_each_cuda_arena_and_is_no_cpu_option() -> None:
    settings = load_settings(["--provider", "cpu", "--device-memory-bytes", str(8 << 30)], environ={})
    assert settings.device_memory_bytes == 8 << 30
    assert device_options("cuda", 1, 8 << 30) == {
        "device_id": "1",
        "use_tf32": "0",
        "gpu_mem_limit": str(8 << 30),
        "arena_extend_strategy": "kSameAsRequested",
    }
    assert device_options("cuda", 0) == {"device_id": "0", "use_tf32": "0"}  # no budget: ONNX Runtime's defaults
    assert choose_provider("cpu", device_memory_bytes=8 << 30).device_memory_bytes is None


def test_cached_sessions_stay_within_the_device_budget() -> None:
    budget = 4 * DEVICE_SESSION_BYTES + 64 * MiB
    catalog = _catalog(budget)
    charges = []
    for k in range(1, 13):  # twelve distinct descs
        charges.append(catalog.compiled(ops.top_k(np.arange(32, dtype=np.float32), k).operator_desc).device_bytes)
        assert 0 < catalog.cache.device_bytes <= budget
    # A batching operator is charged for its batched session too: two fixed costs and its (small) tensors.
    assert all(2 * DEVICE_SESSION_BYTES < charge < 2 * DEVICE_SESSION_BYTES + MiB for charge in charges)
    assert len(catalog.cache) == 2  # what fits: the newest ones
    assert catalog.cache.stats.evictions == 10


def test_a_desc_over_the_device_budget_is_refused_naming_the_flag() -> None:
    catalog = _catalog(DEVICE_SESSION_BYTES + 16 * MiB)
    x = np.zeros((1 << 22,), np.float32)  # 16 MiB in, 16 MiB out: more than the budget leaves beside a session
    with pytest.raises(ResourceExhausted, match=r"operator_desc\.element_wise_identity: .*--device-memory-bytes"):
        catalog.compiled(ops.element_wise("identity", x).operator_desc)
    assert len(catalog.cache) == 0 and catalog.cache.device_bytes == 0
