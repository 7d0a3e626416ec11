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
from dmlrpc.ops import _registry as registry
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


def test_a_builder_takes_a_graph_tensor_where_it_takes_an_array() -> None:
    g = dmlrpc.Graph()
    x = g.input("float32", (2, 5))
    call = ops.top_k(x, 2)  # the builder traced: the same function the Graph face calls
    assert call.operator_desc.top_k1.input_tensor == x.desc
    assert tuple(call.operator_desc.top_k1.output_value_tensor.buffer.sizes) == (2, 2)


_TYPED_CALLS = """
import numpy as np
import dmlrpc

async def calls(c: dmlrpc.Client, a: dmlrpc.AsyncClient, g: dmlrpc.Graph) -> None:
    x = np.zeros((2, 3), np.float32)
    values, indices = c.top_k(x, 2, timeout=1.0)
    c.lstm(x, x, x, couple_input_forget="yes")
    values, indices = await a.top_k(x, 2)
    await a.gemm(x, x, alpha="1")
    t = g.input(np.float32, (2, 3))
    tensor, index = g.top_k(t, 2)
    g.reduce("sum", t, keepdims=True)
"""


def test_mypy_checks_calls_on_every_face(tmp_path: Path) -> None:
    from mypy import api

    source = tmp_path / "calls.py"
    source.write_text(_TYPED_CALLS)
    out, _, status = api.run(["--strict", "--cache-dir", str(tmp_path / "cache"), str(source)])
    errors = [line.split(": error: ")[1] for line in out.splitlines() if ": error: " in line]
    assert status == 1 and len(errors) == 3, out
    assert 'Argument "couple_input_forget" to "lstm" of "ClientOperations"' in errors[0]
    assert 'Argument "alpha" to "gemm" of "AsyncClientOperations"' in errors[1]
    assert 'Unexpected keyword argument "keepdims" for "reduce" of "GraphOperations"' in errors[2]


def test_directml_rules_of_an_operator_type_reach_every_face(monkeypatch: pytest.MonkeyPatch) -> None:
    """The data's rules (``directml_rules`` in tools/faces.py, by operator type) are written to ops/_rules.py, and
    each face's docstring shows them after the builder's text."""
    monkeypatch.setattr(faces, "directml_rules", lambda kind: "k <= the axis's size." if kind == "TOP_K1" else "")
    assert "'TOP_K1': \"k <= the axis's size.\"" in faces.rules_module(faces._registry()[0])
    monkeypatch.setitem(registry.RULES, "TOP_K1", "k <= the axis's size.")
    text = docstring("top_k")
    assert text.startswith(inspect.cleandoc(ops.top_k.__doc__ or ""))
    assert text.endswith("DirectML's rules (DML_OPERATOR_TOP_K1):\n\nk <= the axis's size.")
