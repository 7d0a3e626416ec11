"""The SDK's module graph, read from its source: no import cycle, no gRPC in the pure core, names from the proto."""

from __future__ import annotations

import ast
from pathlib import Path

import dmlrpc
from dmlrpc import _calls
from dmlrpc.v1 import service_pb2

PACKAGE = Path(dmlrpc.__file__).parent
#: Modules that decide everything and send nothing: requests, answers, descs, arrays.
PURE = (
    "dmlrpc._base",
    "dmlrpc._calls",
    "dmlrpc._graph_operators",
    "dmlrpc.graph",
    "dmlrpc.ops._registry",
    "dmlrpc.codec",
    "dmlrpc.schema",
    "dmlrpc.wire",
)


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Every hand-written module of the package and the modules it imports, wherever the import statement is
    (module level, functions, ``if TYPE_CHECKING:``): a type-only cycle is a cycle too."""
    sources = {_module(path): path for path in PACKAGE.rglob("*.py") if "v1" not in path.relative_to(PACKAGE).parts}
    graph: dict[str, set[str]] = {}
    for name, path in sources.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
                # ``from dmlrpc import ops`` imports the module dmlrpc.ops (its package only as every import does).
                submodules = {f"{base}.{alias.name}" for alias in node.names} & sources.keys()
                targets |= submodules if len(submodules) == len(node.names) else {base, *submodules}
        graph[name] = targets - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle among the package's modules, or [] (depth-first search, colouring visited modules)."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str]:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done or module not in graph:
            return []
        path.append(module)
        for target in sorted(graph[module]):
            found = visit(target)
            if found:
                return found
        path.pop()
        done.add(module)
        return []

    for module in sorted(graph):
        found = visit(module)
        if found:
            return found
    return []


def test_the_sdk_has_no_import_cycle() -> None:
    graph = _imports()
    assert {"dmlrpc.client", "dmlrpc.aio", "dmlrpc.handles", "dmlrpc.ops.base"} <= graph.keys()
    assert _cycle(graph) == []


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def test_the_pure_core_imports_no_grpc_and_no_driver() -> None:
    graph = _imports()
    drivers = {"dmlrpc.client", "dmlrpc.aio", "dmlrpc._transport", "dmlrpc._surface", "dmlrpc.many"}
    for module in PURE:
        assert not {target for target in graph[module] if target.split(".")[0] == "grpc"}, module
        assert not graph[module] & drivers, module


def test_handles_hold_a_transport_and_import_no_client() -> None:
    assert not _imports()["dmlrpc.handles"] & {"dmlrpc.client", "dmlrpc.aio", "dmlrpc._surface"}


def test_the_service_and_its_methods_come_from_the_descriptor() -> None:
    service = service_pb2.DESCRIPTOR.services_by_name["DirectMLService"]
    assert service.full_name == _calls.SERVICE_NAME
    sent = {getattr(_calls, name) for name in dir(_calls) if name.isupper() and isinstance(getattr(_calls, name), str)}
    assert sent - {_calls.SERVICE_NAME} <= {method.name for method in service.methods}
    source = "\n".join(path.read_text() for path in PACKAGE.glob("*.py"))
    assert f"/{service.full_name}/" not in source  # no hand-written method path
