"""The server's module graph, read from its source: no import cycle, no import from a lower layer to a higher."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dmlrpc_server

PACKAGE = Path(dmlrpc_server.__file__).parent
NAME = PACKAGE.name

#: The layers, lowest first (docs/architecture.md, "Layers"): a module may import its own layer and those below it.
#: Each is a set of module names relative to the package; a package name covers its submodules.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundation", frozenset({"errors", "feature_levels", "tensors", "logs", "host", "settings_cli", "settings"})),
    ("operators", frozenset({"operators", "graphs", "graph_models"})),
    ("runtime", frozenset({"runtime"})),
    (
        "stages",
        frozenset({"calls", "metrics", "catalog", "batching", "scheduler", "binding", "capabilities", "streams"}),
    ),
    ("service", frozenset({"many", "service"})),
    (
        "front doors",
        frozenset({"interceptors", "connections", "security", "servicer", "oip", "reflection", "handlers", "tracing"}),
    ),
    ("process", frozenset({"", "server", "listeners", "relay", "windows_job", "supervisor", "__main__"})),
)
#: The request path's stage modules in the order a call passes them (docs/architecture.md, "One request, end to
#: end"): read, plan, admit and place, bind and encode. Each imports only those before it, so none calls back into
#: one a call came from; the recipe that runs them (service) and the front doors import them.
STAGES: tuple[str, ...] = ("calls", "catalog", "batching", "scheduler", "binding")
#: The one module of operators/ that the runtime compiles against (the operator contract).
CONTRACT = f"{NAME}.operators.base"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Every module of the package and the package's modules it imports, wherever the import statement is (module
    level, functions, ``if TYPE_CHECKING:``): a type-only or deferred import still ties the two modules together."""
    sources = {_module(path): path for path in PACKAGE.rglob("*.py")}
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
                # ``from dmlrpc_server import settings`` imports the module itself (its package only as every import
                # does).
                submodules = {f"{base}.{alias.name}" for alias in node.names} & sources.keys()
                targets |= submodules if len(submodules) == len(node.names) else {base, *submodules}
        graph[name] = (targets & sources.keys()) - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm): each is a set of modules
    that import each other, directly or round about."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def _layer(module: str) -> int:
    relative = module.removeprefix(NAME).removeprefix(".")
    for number, (_, members) in enumerate(LAYERS):
        if relative in members or any(relative.startswith(f"{member}.") for member in members if member):
            return number
    raise AssertionError(f"{module} is in no layer: add it to LAYERS and to docs/architecture.md's diagram")


def test_the_server_has_no_import_cycle() -> None:
    graph = _imports()
    assert {f"{NAME}.service", f"{NAME}.many", f"{NAME}.runtime.handles", f"{NAME}.operators.base"} <= graph.keys()
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_each_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d", "a"}, "f": {"a"}}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["d", "e"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_module_is_in_one_layer() -> None:
    for module in _imports():
        _layer(module)
    named = [member for _, members in LAYERS for member in members]
    assert len(named) == len(set(named))


def test_no_import_climbs_a_layer() -> None:
    upward = [
        f"{module} ({LAYERS[_layer(module)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for module, targets in sorted(_imports().items())
        for target in sorted(targets)
        if _layer(target) > _layer(module)
    ]
    assert upward == []


def test_the_runtime_knows_operators_only_by_their_contract() -> None:
    graph = _imports()
    runtime = {module for module in graph if module.startswith(f"{NAME}.runtime")}
    reached = {target for module in runtime for target in graph[module] if target.startswith(f"{NAME}.operators")}
    assert reached <= {CONTRACT}


def test_each_stage_imports_only_the_stages_before_it() -> None:
    graph = _imports()
    stages = [f"{NAME}.{stage}" for stage in STAGES]
    assert set(stages) <= graph.keys()
    wrong = [
        f"{module} imports {target}, a later stage"
        for position, module in enumerate(stages)
        for target in sorted(graph[module])
        if target in stages[position:]
    ]
    assert wrong == []


def test_only_the_recipe_and_the_front_doors_import_the_later_stages() -> None:
    graph = _imports()
    later = {f"{NAME}.{stage}" for stage in STAGES[1:]}
    allowed = {f"{NAME}.{name}" for name in ("service", "many", "server", "capabilities", *STAGES)}
    importers = {
        module
        for module, targets in graph.items()
        if targets & later and module not in allowed and not module.startswith(f"{NAME}.oip")
    }
    assert importers == set()


@pytest.mark.parametrize(("importer", "imported"), [("runtime.handles", "catalog"), ("operators.base", "runtime")])
def test_the_layer_check_sees_an_upward_import(importer: str, imported: str) -> None:
    assert _layer(f"{NAME}.{imported}") > _layer(f"{NAME}.{importer}")
