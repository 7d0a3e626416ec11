"""The doc pages mirror the operator modules: one page per executable operator, in the page module of its name."""

from __future__ import annotations

import ast
import importlib
import pathlib
from types import ModuleType
from typing import Any

import pytest

from dmlrpc_server.operators import REGISTRY, Operator, pages
from dmlrpc_server.operators.pages import Page

OPERATORS_DIR = pathlib.Path(pages.__file__).resolve().parent.parent


def _listed(module: ModuleType) -> set[int]:
    """The operators a module defines (their classes) or lists (module-level instances and tuples of them)."""
    found = {id(operator) for operator in REGISTRY.values() if type(operator).__module__ == module.__name__}
    for value in vars(module).values():
        items: tuple[Any, ...] = value if isinstance(value, tuple) else (value,)
        found.update(id(item) for item in items if isinstance(item, Operator))
    return found


def test_every_operator_has_exactly_one_page() -> None:
    counts = {case: 0 for case in REGISTRY}
    for module in pages.MODULES:
        for name in module.PAGES:
            if name.lower() in counts:
                counts[name.lower()] += 1
    assert not sorted(case for case, count in counts.items() if count != 1)


@pytest.mark.parametrize("module", pages.MODULES, ids=lambda module: module.__name__.rsplit(".", 1)[-1])
def test_page_module_mirrors_its_operator_module(module: ModuleType) -> None:
    stem = module.__name__.rsplit(".", 1)[-1]
    assert (OPERATORS_DIR / f"{stem}.py").is_file(), f"pages/{stem}.py has no operators/{stem}.py"
    listed = _listed(importlib.import_module(f"dmlrpc_server.operators.{stem}"))
    for name in module.PAGES:
        operator = REGISTRY.get(name.lower())
        assert operator is not None, f"{name}: no executable operator"
        assert id(operator) in listed, f"the page of {name} is in pages/{stem}.py, its operator elsewhere"


def test_every_page_module_is_merged() -> None:
    on_disk = {path.stem for path in (OPERATORS_DIR / "pages").glob("*.py") if not path.stem.startswith("_")}
    assert on_disk == {module.__name__.rsplit(".", 1)[-1] for module in pages.MODULES}


def test_a_duplicate_page_is_refused() -> None:
    entry = next(iter(pages.PAGES.values()))
    twice = [ModuleType("one"), ModuleType("two")]
    for module in twice:
        module.PAGES = {"X": entry}  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="DML_OPERATOR_X"):
        pages._merge(tuple(twice))


def test_pages_import_no_operator_module() -> None:
    """Page modules are data: they import only the Page type (no cycle back into the operators)."""
    for path in (OPERATORS_DIR / "pages").glob("*.py"):
        if path.stem == "__init__":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert imported <= {"__future__", "typing", "dmlrpc_server.operators.pages._page"}, path.name


def test_page_lookup() -> None:
    found: Page = pages.page("ELEMENT_WISE_ABS")
    assert found["page"] == "ns-directml-dml_element_wise_abs_operator_desc"
    with pytest.raises(KeyError):
        pages.page("NO_SUCH_OPERATOR")
