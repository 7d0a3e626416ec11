"""Windows-side checks on the real DirectML provider: placement, CPU agreement and the docs' open questions."""

# Runs the server's own lowering and execution code (Catalog and binding: validate, lower, compile, run) on
# DmlExecutionProvider with ONNX Runtime profiling on, and the same descs on the CPU provider. Prints one JSON
# document after PROBE_MARKER; the Linux-side tests (tests/dml) assert on it. Usage: run.sh -m dml_wine_probe.

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import dml_wine_shim
import numpy as np

dml_wine_shim.apply()  # before anything creates a DirectML device

import dml_wine_directml  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402

from dmlrpc import ops  # noqa: E402
from dmlrpc._base import prepare_execute  # noqa: E402
from dmlrpc.v1 import operators_pb2  # noqa: E402
from dmlrpc_server.binding import encode_outputs, feeds, unary_buffers  # noqa: E402
from dmlrpc_server.catalog import Catalog  # noqa: E402
from dmlrpc_server.feature_levels import LATEST  # noqa: E402
from dmlrpc_server.operators.base import Limits  # noqa: E402
from dmlrpc_server.runtime.buffers import BufferPool  # noqa: E402
from dmlrpc_server.runtime.providers import Provider, choose_provider  # noqa: E402

PROBE_MARKER = "DMLRPC-PROBE-JSON "
# Every data type of the operators' support tables at feature level 6.4.
TOP_K_DTYPES = ["float32", "float16", "int32", "int16", "int8", "uint32", "uint16", "uint8", "int64", "uint64"]
SCATTER_DTYPES = [*TOP_K_DTYPES, "float64"]
DUPLICATE_TRIALS = 20

_profile_dir = Path(tempfile.mkdtemp(prefix="dmlrpc-prof-"))


@dataclasses.dataclass(frozen=True)
class ProfiledProvider(Provider):
    """The server's provider with ONNX Runtime profiling on, so each session reports where its nodes ran."""

    def session_options(self) -> ort.SessionOptions:
        options = super().session_options()
        options.enable_profiling = True
        options.profile_file_prefix = str(_profile_dir / "session")
        return options


def catalog(provider: Provider) -> Catalog:
    """The server's compiled descs on ``provider``, with limits far above what the probe sends."""
    limits = Limits(max_tensor_bytes=1 << 28, max_request_bytes=1 << 30, max_message_bytes=1 << 29)
    return Catalog(provider, feature_level=LATEST, limits=limits, cache_capacity=1024)


def node_placement(session: ort.InferenceSession) -> list[list[str]]:
    """[op type, provider] of every node that ran, from the session's profile (ends profiling)."""
    events = json.loads(Path(session.end_profiling()).read_text())
    seen: dict[str, list[str]] = {}
    for event in events:
        args = event.get("args", {})
        if event.get("cat") == "Node" and "provider" in args and event.get("name", "").endswith("_kernel_time"):
            seen.setdefault(event["name"], [args.get("op_name", "?"), args["provider"]])
    return sorted(seen.values())


def run_call(engine: Catalog, call: ops.Call) -> list[np.ndarray | None]:
    """A unary call's plan, binding, run and encoding, as the server's stages run them: each output's bytes."""
    prepared = prepare_execute(call.operator_desc, call.inputs)
    compiled = engine.compiled(call.operator_desc)
    results = compiled.run(feeds(compiled, unary_buffers(prepared.request.inputs, compiled.plan)))
    arrays: list[np.ndarray | None] = []
    for data in encode_outputs(compiled, BufferPool(0), list, results):
        assert not isinstance(data, list), "the probe's operators have no tensor-array fields"
        arrays.append(None if data is None else np.frombuffer(data, np.uint8))
    return arrays


def sample(rng: np.random.Generator, dtype: str, shape: Sequence[int]) -> np.ndarray:
    kind = np.dtype(dtype)
    if kind.kind == "f":
        return rng.standard_normal(shape).round(1).astype(kind)
    info = np.iinfo(kind)
    values = rng.integers(info.min, info.max, size=shape, dtype=kind, endpoint=True)
    values.flat[0], values.flat[-1] = info.min, info.max  # the extremes, where a narrowing path would show
    return values


def placement_cases(operator: str, rng: np.random.Generator) -> list[tuple[str, ops.Call]]:
    """(label, call) for one executable operator over every data type its support table lists."""
    cases: list[tuple[str, ops.Call]] = []
    if operator == "TOP_K1":
        for dtype in TOP_K_DTYPES:
            cases.append((dtype, ops.top_k(sample(rng, dtype, (2, 3, 7)), 4, axis=2, direction="increasing")))
    elif operator == "TOP_K":  # type 71 (always decreasing), and UINT64 indices, on a few data types
        for dtype in ("float32", "int8", "uint64"):
            top_k1 = ops.top_k(sample(rng, dtype, (2, 3, 7)), 2, axis=0).operator_desc.top_k1
            top_k = operators_pb2.TopKOperatorDesc(
                input_tensor=top_k1.input_tensor,
                output_value_tensor=top_k1.output_value_tensor,
                output_index_tensor=top_k1.output_index_tensor,
                axis=0,
                k=2,
            )
            x = sample(rng, dtype, (2, 3, 7))
            cases.append((dtype, ops.Call(operators_pb2.OperatorDesc(top_k=top_k), (x,))))
            cases.append((f"{dtype}/uint64 indices", ops.top_k(x, 3, axis=1, index_dtype=np.uint64)))
    elif operator == "SCATTER_ELEMENTS":
        for dtype in SCATTER_DTYPES:
            x = sample(rng, dtype, (3, 4, 5))
            indices = np.argsort(rng.random((3, 4, 5)), axis=1)[:, :2, :]  # distinct targets per column
            cases.append((dtype, ops.scatter_elements(x, indices, sample(rng, dtype, (3, 2, 5)), 1)))
    elif operator == "SCATTER_ND":
        for dtype in SCATTER_DTYPES:
            x = sample(rng, dtype, (3, 4, 5))
            tuples = np.array([[2, 1], [0, 3], [1, 0]], np.int64)
            cases.append((dtype, ops.scatter_nd(x, tuples, sample(rng, dtype, (3, 5)))))
    return cases


def check_placement(operator: str, dml: Catalog, cpu: Catalog) -> list[dict[str, Any]]:
    results = []
    for label, call in placement_cases(operator, np.random.default_rng(20)):
        started = time.perf_counter()
        entry: dict[str, Any] = {"operator": operator, "case": label}
        try:
            got = run_call(dml, call)
            compiled = dml.compiled(call.operator_desc)
            entry["providers"] = compiled.session.get_providers()
            entry["nodes"] = node_placement(compiled.session)
        except Exception as error:  # a refusal on DirectML is a finding, not a crash of the probe
            entry["error"] = f"{type(error).__name__}: {error}"[:600]
        else:
            try:
                want = run_call(cpu, call)
            except Exception as error:  # this ONNX Runtime's CPU provider lacks some TopK types
                entry["cpu_error"] = f"{type(error).__name__}: {error}"[:600]
            else:
                entry["equal_to_cpu"] = all(
                    (a is None and b is None) or (a is not None and b is not None and a.tobytes() == b.tobytes())
                    for a, b in zip(got, want, strict=True)
                )
        entry["seconds"] = round(time.perf_counter() - started, 3)
        results.append(entry)
    return results


def _jsonable(array: np.ndarray) -> list[Any]:
    return [v if np.isfinite(v) else repr(v) for v in array.astype(np.float64).tolist()]


def _top_k_session(provider: Provider, dtype: str, shape: Sequence[int], k: int, largest: bool) -> ort.InferenceSession:
    """A one-node TopK model (int64 indices, no casts): what the DirectML provider runs for DML_TOP_K1."""
    elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    out = [*shape[:-1], k]
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=-1, largest=int(largest), sorted=1)],
        "top_k",
        [onnx.helper.make_tensor_value_info("x", elem, list(shape))],
        [
            onnx.helper.make_tensor_value_info("values", elem, out),
            onnx.helper.make_tensor_value_info("indices", onnx.TensorProto.INT64, out),
        ],
        [onnx.numpy_helper.from_array(np.array([k], np.int64), "k")],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    model.ir_version = 8
    return ort.InferenceSession(
        model.SerializeToString(), sess_options=provider.session_options(), providers=provider.providers()
    )


NAN_SEQUENCES = [
    [1.0, np.nan, 3.0, -2.0, np.nan, 0.5],
    [np.nan, 2.0, -np.inf, np.inf, 0.0, np.nan],
    [np.nan, np.nan, np.nan, 1.0, np.nan, -1.0],
    [-0.0, 0.0, np.nan, -0.0, 0.0, 5.0],
]


def check_nan(dml: Provider, cpu: Provider) -> list[dict[str, Any]]:
    """TopK over sequences holding NaN, both directions, float32 and float16: DirectML's answer next to CPU's."""
    results = []
    for dtype in ("float32", "float16"):
        x = np.array(NAN_SEQUENCES, dtype)
        for largest in (True, False):
            entry: dict[str, Any] = {"dtype": dtype, "largest": largest, "inputs": [_jsonable(r) for r in x]}
            for name, provider in (("dml", dml), ("cpu", cpu)):
                session = _top_k_session(provider, dtype, x.shape, x.shape[1], largest)
                values, indices = session.run(None, {"x": x})
                entry[name] = {
                    "provider": session.get_providers()[0],
                    "values": [_jsonable(r) for r in values],
                    "indices": indices.tolist(),
                }
            results.append(entry)
    return results


def _raw_session(engine: Catalog, call: ops.Call) -> tuple[Callable[[dict[str, np.ndarray]], list[np.ndarray]], str]:
    compiled = engine.compiled(call.operator_desc)
    return compiled.run, compiled.session.get_providers()[0]


def check_duplicates(dml: Catalog, cpu: Catalog) -> list[dict[str, Any]]:
    """Scatter with several updates aimed at one target: the server refuses such requests, so this feeds the
    server's lowered model directly (bypassing its overlap check) and records which update lands."""
    results = []
    rng = np.random.default_rng(5)
    for dtype in ("float32", "int32", "int64", "float64"):
        for operator in ("SCATTER_ELEMENTS", "SCATTER_ND"):
            size = writes = 64
            x = np.zeros(size, dtype)
            updates = np.arange(1, writes + 1).astype(dtype)
            if operator == "SCATTER_ELEMENTS":
                call = ops.scatter_elements(x, np.zeros(writes, np.int64), updates, 0)
            else:
                call = ops.scatter_nd(x, np.zeros((writes, 1), np.int64), updates)
            entry: dict[str, Any] = {"operator": operator, "dtype": dtype, "writes": writes}
            for name, engine in (("dml", dml), ("cpu", cpu)):
                run, provider = _raw_session(engine, call)
                winners: dict[str, int] = {}
                for _ in range(DUPLICATE_TRIALS):
                    # Every update targets element 0 in a random order, so "last in index order" is detectable.
                    order = rng.permutation(writes)
                    shaped = updates[order]
                    if operator == "SCATTER_ELEMENTS":
                        feeds = {"input": x, "indices": np.zeros(writes, np.int64), "updates": shaped}
                    else:
                        feeds = {"input": x, "indices": np.zeros((writes, 1), np.int64), "updates": shaped}
                    out = run(feeds)[0]
                    landed = int(out[0])
                    position = int(np.nonzero(shaped == landed)[0][0]) if landed in shaped else -1
                    label = "last" if position == writes - 1 else "first" if position == 0 else f"other({position})"
                    winners[label] = winners.get(label, 0) + 1
                    if np.any(out[1:] != 0):
                        winners["untargeted element changed"] = winners.get("untargeted element changed", 0) + 1
                entry[name] = {"provider": provider, "winners": winners}
            results.append(entry)
    return results


def check_k_equal_axis(dml: Provider, cpu: Provider) -> list[dict[str, Any]]:
    """TopK with K equal to the axis size (a full sort), including a 1-element axis."""
    results = []
    rng = np.random.default_rng(9)
    for dtype, size in (("float32", 1), ("float32", 7), ("float32", 64), ("int32", 7), ("float16", 33)):
        x = sample(rng, dtype, (3, size))
        x[1] = x[1, :1]  # a row of ties
        for largest in (True, False):
            entry: dict[str, Any] = {"dtype": dtype, "size": size, "largest": largest}
            try:
                got = _top_k_session(dml, dtype, x.shape, size, largest)
                want = _top_k_session(cpu, dtype, x.shape, size, largest)
                entry["provider"] = got.get_providers()[0]
                a, b = got.run(None, {"x": x}), want.run(None, {"x": x})
                entry["equal_to_cpu"] = all(p.tobytes() == q.tobytes() for p, q in zip(a, b, strict=True))
            except Exception as error:
                entry["error"] = f"{type(error).__name__}: {error}"[:600]
            results.append(entry)
    return results


#: 64-bit values whose high 32-bit words tie while the low words straddle 2**31 (and the extremes).
INT64_ORDER_VALUES = [
    0,
    2**31 - 1,
    2**31,
    2**32 - 1,
    5,
    -1,
    -(2**31) - 1,
    2**40 + 7,
    2**40 + 2**31,
    -(2**63),
    2**63 - 1,
]


def check_int64_order(dml: Provider) -> list[dict[str, Any]]:
    """TopK on INT64 values that only the low 32-bit word tells apart, both directions."""
    x = np.array([INT64_ORDER_VALUES], np.int64)
    results = []
    for largest in (True, False):
        session = _top_k_session(dml, "int64", x.shape, x.shape[1], largest)
        values, indices = session.run(None, {"x": x})
        results.append(
            {
                "largest": largest,
                "provider": session.get_providers()[0],
                "input": x[0].tolist(),
                "values": values[0].tolist(),
                "indices": indices[0].tolist(),
            }
        )
    return results


SECTIONS = [
    "directml",
    "TOP_K1",
    "TOP_K",
    "SCATTER_ELEMENTS",
    "SCATTER_ND",
    "k_equal_axis",
    "nan",
    "int64_order",
    "duplicates",
]


def main(argv: Sequence[str]) -> int:
    """Run the named sections (default: all; each DirectML session holds memory, so callers run a few at a time)."""
    sections = list(argv) or SECTIONS
    started = time.perf_counter()
    dml_provider = choose_provider("directml", device_id=0)
    profiled = ProfiledProvider(**dataclasses.asdict(dml_provider))
    cpu_provider = choose_provider("cpu")
    report: dict[str, Any] = {
        "onnxruntime": ort.__version__,
        "available_providers": ort.get_available_providers(),
        "provider_options": dml_provider.options,
    }
    for section in sections:
        if section == "directml":
            report[section] = dml_wine_directml.probe()
        elif section in ("TOP_K1", "TOP_K", "SCATTER_ELEMENTS", "SCATTER_ND"):
            report.setdefault("placement", []).extend(
                check_placement(section, catalog(profiled), catalog(cpu_provider))
            )
        elif section == "k_equal_axis":
            report[section] = check_k_equal_axis(dml_provider, cpu_provider)
        elif section == "nan":
            report[section] = check_nan(dml_provider, cpu_provider)
        elif section == "int64_order":
            report[section] = check_int64_order(dml_provider)
        elif section == "duplicates":
            report[section] = check_duplicates(catalog(dml_provider), catalog(cpu_provider))
        else:
            raise SystemExit(f"unknown section {section!r}; choose from {', '.join(SECTIONS)}")
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(PROBE_MARKER + json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
