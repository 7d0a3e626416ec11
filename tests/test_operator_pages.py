"""The operator data: one page per executable operator, in the data file named as its operator module; the
corrections each with a reason; the generated docs/operators/ pages current."""

from __future__ import annotations

import importlib
import json
import pathlib
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest

from dmlrpc.schema import snake_case
from dmlrpc_server.operators import REGISTRY, Operator, pages

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPERATORS_DIR = ROOT / "server" / "dmlrpc_server" / "operators"
DOCS = ROOT / "docs" / "operators"


def _listed(module: ModuleType) -> set[int]:
    """The operators a module defines (their classes) or lists (module-level instances and tuples of them)."""
    found = {id(operator) for operator in REGISTRY.values() if type(operator).__module__ == module.__name__}
    for value in vars(module).values():
        items: tuple[Any, ...] = value if isinstance(value, tuple) else (value,)
        found.update(id(item) for item in items if isinstance(item, Operator))
    return found


def test_the_pages_cover_every_executable_operator_and_nothing_else() -> None:
    assert sorted(name.lower() for name in pages.PAGES) == sorted(REGISTRY)
    assert sum(len(names) for names in pages.FAMILIES.values()) == len(pages.PAGES)


@pytest.mark.parametrize("family", list(pages.FAMILIES))
def test_each_data_file_mirrors_its_operator_module(family: str) -> None:
    assert (OPERATORS_DIR / f"{family}.py").is_file(), f"pages/{family}.json has no operators/{family}.py"
    listed = _listed(importlib.import_module(f"dmlrpc_server.operators.{family}"))
    for name in pages.FAMILIES[family]:
        assert id(REGISTRY[name.lower()]) in listed, f"{name}'s page is in pages/{family}.json, its operator elsewhere"


def test_each_operator_module_has_its_data_file() -> None:
    modules = {path.stem for path in OPERATORS_DIR.glob("*.py") if not path.stem.startswith("_")} - {"base"}
    assert modules == set(pages.FAMILIES)


def test_operators_read_their_tables_from_the_pages() -> None:
    # The server's tables are the page data's: the newest table of each page is the operator's newest table.
    for name, entry in pages.PAGES.items():
        operator = REGISTRY[name.lower()]
        if "functions" in entry["support"][-1]:
            continue  # REDUCE: the operator's table is the union of its function groups' tables
        level, table = operator.support[-1]
        newest = entry["support"][-1]
        assert {field: (rule.min_dimension_count, rule.max_dimension_count) for field, rule in table.items()} == {
            snake_case(field): tuple(row["dims"]) for field, row in newest["tensors"].items()
        }, name
        assert operator.introduced == operator.support[0][0] and level >= operator.introduced


def test_a_page_in_two_files_is_refused(tmp_path: pathlib.Path) -> None:
    entry = {"X": pages.PAGES["ELEMENT_WISE_ABS"]}
    for stem in ("one", "two"):
        (tmp_path / f"{stem}.json").write_text(json.dumps(entry))
    (tmp_path / "corrections.toml").write_text("")
    with pytest.raises(ValueError, match="DML_OPERATOR_X"):
        pages.load(tmp_path)


@pytest.mark.parametrize(
    "correction",
    [
        'operator = "NO_SUCH"\nreason = "r"\nintroduced = "1.0"',
        'operator = "ELEMENT_WISE_ABS"\nintroduced = "1.0"',
        'operator = "ELEMENT_WISE_ABS"\nreason = "r"',
        'operator = "ELEMENT_WISE_ABS"\nreason = "r"\nintroduced = "1.0"\nlevel = "2.0"',
    ],
    ids=["unknown operator", "no reason", "no change", "unknown key"],
)
def test_a_correction_needs_an_operator_a_reason_and_a_change(tmp_path: pathlib.Path, correction: str) -> None:
    (tmp_path / "abs.json").write_text(json.dumps({"ELEMENT_WISE_ABS": pages.PAGES["ELEMENT_WISE_ABS"]}))
    (tmp_path / "corrections.toml").write_text(f"[[correction]]\n{correction}\n")
    with pytest.raises(ValueError, match=r"corrections\.toml"):
        pages.load(tmp_path)


def test_every_correction_is_applied_with_its_reason() -> None:
    lines = (OPERATORS_DIR / "pages" / "corrections.toml").read_text(encoding="utf-8").splitlines()
    written = lines.count("[[correction]]")
    assert sum(len(reasons) for reasons in pages.CORRECTIONS.values()) == written
    top_k = pages.page("TOP_K")
    assert top_k["introduced"] == "1.0"
    assert [table["level"] for table in top_k["support"]] == ["1.0", "2.1", "3.1", "5.0"]
    assert all("correction" in table for table in top_k["support"])
    assert [table["level"] for table in pages.page("TOP_K1")["support"]] == ["2.1", "3.1", "5.0"]
    assert "correction" not in pages.page("TOP_K1")["support"][0]
    (adam,) = pages.page("ADAM_OPTIMIZER")["support"]  # rows at a level the page has: replaced, the others kept
    assert list(adam["tensors"]["TrainingStepTensor"]["types"]) == ["FLOAT32", "FLOAT16", "UINT32"]
    assert len(adam["tensors"]) == 8 and "correction" in adam


def test_page_lookup() -> None:
    found: pages.Page = pages.page("ELEMENT_WISE_ABS")
    assert found["page"] == "ns-directml-dml_element_wise_abs_operator_desc"
    with pytest.raises(KeyError):
        pages.page("NO_SUCH_OPERATOR")


def test_the_rules_text_says_the_page() -> None:
    text = pages.rules("TOP_K1")
    assert text.startswith("DML_OPERATOR_TOP_K1 (from feature level 2.1): OutputValueTensor = the K largest")
    assert "- InputTensor and OutputValueTensor: same DataType." in text
    assert "- 2.1: InputTensor, OutputValueTensor: 4D FLOAT32 FLOAT16 INT32" in text
    assert "OutputIndexTensor: 1-8D UINT64 UINT32." in text
    assert "dmlrpc's correction: The stored page lists the 2.1 and 3.1 tables" in text
    assert max(map(len, text.splitlines())) <= 100
    assert "Notes: Ties:" in text and "Notes:" not in pages.rules("TOP_K1", notes=False)


def test_the_pages_module_loads_by_path_without_the_server() -> None:
    # What a dev-time generator (the SDK's stubs) does: load the data module alone, no server, no ONNX Runtime.
    path = str(OPERATORS_DIR / "pages" / "__init__.py")
    heavy = {"dmlrpc_server", "dmlrpc", "onnx", "onnxruntime", "numpy", "grpc"}
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('operator_pages', {path!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "assert module.rules('TOP_K1').startswith('DML_OPERATOR_TOP_K1')\n"
        f"print(sorted(name for name in sys.modules if name.split('.')[0] in {heavy!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_operator_docs_are_current() -> None:
    expected = {f"{family}.md": pages.markdown(family) for family in pages.FAMILIES} | {"README.md": pages.index()}
    found = {path.name: path.read_text(encoding="utf-8") for path in DOCS.glob("*.md")}
    stale = sorted(name for name in expected.keys() | found.keys() if expected.get(name) != found.get(name))
    assert not stale, f"docs/operators/ is stale ({stale}): regenerate it with `python tools/operator_docs.py`"


def test_the_docs_tool_finds_them_current() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "operator_docs.py"), "--check"], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (0, "")
