"""The SDK's faces come from one definition per function: each ``dmlrpc.ops`` builder is declared once with
``@operator``, Client, AsyncClient and Graph get every function from that registry through generated code that is
current, and each face's signature is its builder's, differing only where the declaration says."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import pydoc
import sys
from pathlib import Path

import pytest

import dmlrpc
from dmlrpc import ops
from dmlrpc.ops._registry import OPERATORS, Operator, docstring

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "client" / "dmlrpc"
_SPEC = importlib.util.spec_from_file_location("faces", ROOT / "tools" / "faces.py")
assert _SPEC is not None and _SPEC.loader is not None
faces = importlib.util.module_from_spec(_SPEC)
sys.modules["faces"] = faces
_SPEC.loader.exec_module(faces)
#: The generated modules (their methods forward to the builders; nobody writes them by hand).
GENERATED = {"_client_operators.py", "_graph_operators.py", "ops/__init__.py"}


def test_the_generated_faces_and_docs_are_current() -> None:
    stale = [path.relative_to(ROOT).as_posix() for path, text in faces.outputs().items() if path.read_text() != text]
    assert stale == [], f"stale: {stale}; run 'python tools/faces.py' and commit the result"


def test_each_sdk_function_is_defined_once() -> None:
    """No hand-written module of the SDK defines a function or method named as an SDK function, except the builder's
    own module, once (the faces are generated from it)."""
    definitions: dict[str, list[str]] = {name: [] for name in OPERATORS}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in GENERATED or relative.startswith("v1/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in definitions:
                definitions[node.name].append(f"{relative}:{node.lineno}")
    for name, declared in OPERATORS.items():
        home = declared.builder.__module__.removeprefix("dmlrpc.").replace(".", "/") + ".py"
        assert [place.split(":")[0] for place in definitions[name]] == [home], (name, definitions[name])
    assert set(ops.__all__) >= set(OPERATORS)


def _graph_signature(declared: Operator) -> list[tuple[str, inspect._ParameterKind, object]]:
    """The builder's parameters as the Graph face must take them: less the keywords its declaration fixes, an
    array default dropped (a graph tensor has none)."""
    tensors = {p.name for p in declared.tensors}
    kept = []
    for p in declared.signature.parameters.values():
        if p.name in declared.graph.fixed:
            continue
        default = p.default if p.name not in tensors or p.default is None else inspect.Parameter.empty
        kept.append((p.name, p.kind, default))
    return kept


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_the_faces_match_their_definition(name: str) -> None:
    declared = OPERATORS[name]
    builder = [(p.name, p.kind, p.default) for p in declared.signature.parameters.values()]
    for face in (dmlrpc.Client, dmlrpc.AsyncClient):
        method = inspect.signature(getattr(face, name))
        parameters = [(p.name, p.kind, p.default) for p in method.parameters.values()]
        assert parameters[0][0] == "self"
        timeout = next(p for p in parameters if p[0] == "timeout")
        assert timeout[1:] == (inspect.Parameter.KEYWORD_ONLY, None)
        assert [p for p in parameters[1:] if p[0] != "timeout"] == builder, face
    graph = inspect.signature(getattr(dmlrpc.Graph, name))
    assert [(p.name, p.kind, p.default) for p in graph.parameters.values()][1:] == _graph_signature(declared)
    for face in (dmlrpc.Client, dmlrpc.AsyncClient):
        assert getattr(face, name).__doc__ == docstring(name) != ""
    assert getattr(dmlrpc.Graph, name).__doc__ == docstring(name, graph=True) != docstring(name)


def test_help_shows_the_full_signature_on_every_face() -> None:
    for face in (dmlrpc.Client, dmlrpc.AsyncClient, dmlrpc.Graph):
        text = pydoc.render_doc(face.lstm, renderer=pydoc.plaintext)
        assert "couple_input_forget: 'bool' = False" in text and "peephole" in text, face
        assert "DML_LSTM_OPERATOR_DESC" in text
    assert "timeout" in pydoc.render_doc(dmlrpc.Client.lstm, renderer=pydoc.plaintext)
    assert "GraphTensor" in pydoc.render_doc(dmlrpc.Graph.lstm, renderer=pydoc.plaintext)


def test_a_declared_graph_difference_is_the_only_one() -> None:
    """Graph.reduce keeps dims: declared once, so the face has no keepdims and the node keeps the input's rank."""
    assert OPERATORS["reduce"].graph.fixed == {"keepdims": True}
    assert "keepdims" not in inspect.signature(dmlrpc.Graph.reduce).parameters
    assert "keepdims" in inspect.signature(dmlrpc.Client.reduce).parameters
    g = dmlrpc.Graph()
    x = g.input("float32", (2, 3))
    assert g.reduce("sum", x, 1).shape == (2, 1)
    assert "``keepdims=True`` always." in (dmlrpc.Graph.reduce.__doc__ or "")


def test_a_second_declaration_of_a_function_is_refused() -> None:
    from dmlrpc.ops._registry import operator

    with pytest.raises(ValueError, match="declared twice"):
        operator(sends=("top_k",))(ops.top_k)
