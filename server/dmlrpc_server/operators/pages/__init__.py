"""DirectML's operator pages as data (<family>.json, corrections.toml), loaded once, and the text made from them.

Standard library only, importing nothing of the server: a dev-time generator may load this file by its path
(``importlib.util.spec_from_file_location``) without the server's dependencies.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypedDict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the server's tomli dependency on Python 3.10
    import tomli as tomllib

__all__ = [
    "CORRECTIONS",
    "FAMILIES",
    "FUSABLE",
    "FUSABLE_GEMM_ONLY",
    "PAGES",
    "Page",
    "Table",
    "Tensor",
    "index",
    "load",
    "markdown",
    "page",
    "rules",
]

#: The folder of the data files: one ``<family>.json`` per operator module of that name, and ``corrections.toml``.
FOLDER = Path(__file__).resolve().parent


class Tensor(TypedDict):
    """One row of a support table: a tensor field's supported dimension counts and data types."""

    #: The lowest and highest supported DimensionCount ([4, 4] for "4", [1, 8] for "1 to 8").
    dims: Sequence[int]
    #: DML_TENSOR_DATA_TYPE names without the prefix, in the page's order ("FLOAT32").
    types: Sequence[str]


class _Table(TypedDict):
    #: The "DML_FEATURE_LEVEL_X_Y and above" heading ("2.1"); the introducing level for a page with one table.
    level: str
    #: The DirectML tensor field name ("InputTensor") -> its row.
    tensors: Mapping[str, Tensor]


class Table(_Table, total=False):
    """One tensor-support table of a page, applying from its level until a newer one."""

    #: The functions a table is for, where a page splits its tables by function (REDUCE's "ARGMIN ARGMAX").
    functions: Sequence[str]
    #: Why the table differs from the page, where corrections.toml made or moved it.
    correction: str


class _Page(TypedDict):
    #: The page's name, e.g. "ns-directml-dml_element_wise_abs_operator_desc".
    page: str
    #: The feature level that introduced the operator (the page's Availability section, or its correction).
    introduced: str
    #: The function the page defines, in short mathematical form ("f(x) = abs(x)").
    function: str
    #: The page's tensor constraints and other documented rules, paraphrased one per item.
    constraints: Sequence[str]
    #: The page's tensor-support tables, ascending by level.
    support: Sequence[Table]
    #: Anything else a faithful implementation must know (attribute ranges, special values, remarks).
    notes: str


class Page(_Page, total=False):
    """What one ``DML_<NAME>_OPERATOR_DESC`` page of Microsoft's DirectML reference documents, with dmlrpc's
    corrections applied."""

    #: The level from which the activation may be another operator's FusedActivation (the fused-activation page
    #: lists CONVOLUTION, GEMM, BATCH_NORMALIZATION, MEAN_VARIANCE_NORMALIZATION(1) and ELEMENT_WISE_ADD1 as hosts;
    #: the fused activation's own tensors are left unset).
    fusable_from: str
    #: Where only some hosts take it: their names (SOFTMAX(1): GEMM only, per the 6.1 feature-level history).
    fusable_into: Sequence[str]
    #: The reasons of the corrections applied to the page.
    corrections: Sequence[str]


def _level(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _correct(pages: dict[str, Any], correction: Mapping[str, Any]) -> None:
    """Apply one ``[[correction]]`` of corrections.toml to the pages it names."""
    name, reason = correction.get("operator"), correction.get("reason", "").strip()
    unknown = set(correction) - {"operator", "reason", "introduced", "tables"}
    if name not in pages or not reason or unknown or not {"introduced", "tables"} & set(correction):
        raise ValueError(f"corrections.toml: a correction needs a known operator, a reason and a change: {correction}")
    entry = pages[name]
    entry.setdefault("corrections", []).append(" ".join(reason.split()))
    if "introduced" in correction:
        oldest = min((table["level"] for table in entry["support"]), key=_level)
        for table in entry["support"]:
            if table["level"] == oldest:
                table["level"] = correction["introduced"]
                table["correction"] = entry["corrections"][-1]
        entry["introduced"] = correction["introduced"]
    for added in correction.get("tables", ()):
        same = [old for old in entry["support"] if old["level"] == added["level"] and "functions" not in old]
        if same:  # rows the page has at that level, replaced
            same[0]["tensors"] = {**same[0]["tensors"], **added["tensors"]}
            same[0]["correction"] = entry["corrections"][-1]
            continue
        table = {"level": added["level"], "tensors": added["tensors"], "correction": entry["corrections"][-1]}
        entry["support"] = sorted([*entry["support"], table], key=lambda table: _level(table["level"]))


def load(folder: Path = FOLDER) -> tuple[Mapping[str, Sequence[str]], Mapping[str, Page]]:
    """The families (file stem -> operator type names, in file order) and every page by operator type name."""
    families: dict[str, Sequence[str]] = {}
    pages: dict[str, Any] = {}
    for path in sorted(folder.glob("*.json")):
        entries = json.loads(path.read_text(encoding="utf-8"))
        for name in entries:
            if name in pages:
                raise ValueError(f"the page of DML_OPERATOR_{name} is in two files (one is {path.name})")
        pages.update(entries)
        families[path.stem] = tuple(entries)
    corrections = tomllib.loads((folder / "corrections.toml").read_text(encoding="utf-8"))
    for correction in corrections.get("correction", ()):
        _correct(pages, correction)
    return MappingProxyType(families), MappingProxyType(pages)


#: Every family: the stem of the operator module (and data file) -> the operator type names it holds.
#: Every page by DirectML operator type name ("ELEMENT_WISE_ABS"), corrections applied.
FAMILIES, PAGES = load()
#: The operator types whose pages carry a correction -> the reasons.
CORRECTIONS: Mapping[str, Sequence[str]] = MappingProxyType(
    {name: entry["corrections"] for name, entry in PAGES.items() if "corrections" in entry}
)
#: Activations any fused-activation host takes -> the level from which it does.
FUSABLE: Mapping[str, str] = MappingProxyType(
    {
        name: entry["fusable_from"]
        for name, entry in PAGES.items()
        if "fusable_from" in entry and "fusable_into" not in entry
    }
)
#: Activations that GEMM's FusedActivation alone takes -> the level from which it does.
FUSABLE_GEMM_ONLY: Mapping[str, str] = MappingProxyType(
    {name: entry["fusable_from"] for name, entry in PAGES.items() if list(entry.get("fusable_into", ())) == ["GEMM"]}
)


def page(name: str) -> Page:
    """The page of operator type ``name`` (``"ELEMENT_WISE_ABS"``)."""
    if name not in PAGES:
        raise KeyError(f"no page for DML_OPERATOR_{name}")
    return PAGES[name]


def _rows(table: Table) -> list[str]:
    """A table's tensors, those of one row together: ``"InputTensor, OutputTensor: 1-8D FLOAT32 FLOAT16"``."""
    groups: dict[tuple[tuple[int, ...], tuple[str, ...]], list[str]] = {}
    for field, row in table["tensors"].items():
        groups.setdefault((tuple(row["dims"]), tuple(row["types"])), []).append(field)
    return [f"{', '.join(fields)}: {_dims(dims)}D {' '.join(types)}" for (dims, types), fields in groups.items()]


def _dims(dims: Sequence[int]) -> str:
    return str(dims[0]) if dims[0] == dims[1] else f"{dims[0]}-{dims[1]}"


def _heading(table: Table) -> str:
    functions = " ".join(table.get("functions", ()))
    return f"{table['level']} ({functions})" if functions else table["level"]


def rules(name: str, width: int = 100, *, notes: bool = True) -> str:
    """DirectML's rules for operator type ``name`` (``"TOP_K1"``) as plain text lines of at most ``width``
    characters, for a docstring section: the function, the constraints, the support tables by feature level, the
    notes (unless ``notes`` is false: some run to worked examples) and dmlrpc's corrections."""
    entry = page(name)

    def wrap(text: str, first: str = "", rest: str = "") -> list[str]:
        return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest or " " * len(first))

    lines = wrap(f"DML_OPERATOR_{name} (from feature level {entry['introduced']}): {entry['function']}")
    lines += [line for rule in entry["constraints"] for line in wrap(rule, "- ")]
    lines.append("Tensor support (from each feature level on: dimension counts, data types):")
    for table in entry["support"]:
        lines += wrap(f"{_heading(table)}: {'; '.join(_rows(table))}.", "- ")
    if notes:
        lines += wrap(f"Notes: {entry['notes']}")
    lines += [line for reason in entry.get("corrections", ()) for line in wrap(f"dmlrpc's correction: {reason}")]
    return "\n".join(lines)


def markdown(family: str) -> str:
    """docs/operators/<family>.md: the pages of one family, as the server and the SDK read them."""
    out = [
        f"# Operators: {family}",
        "",
        f"Generated from `server/dmlrpc_server/operators/pages/{family}.json` and the `corrections.toml` beside it",
        "by `python tools/operator_docs.py` (`tests/test_operator_pages.py` fails when this page is stale). The",
        f"server checks every request against these tables; `operators/{family}.py` validates and lowers them.",
    ]
    for name in FAMILIES[family]:
        entry = PAGES[name]
        out += [
            "",
            f"## DML_OPERATOR_{name}",
            "",
            f"Microsoft's page: `{entry['page']}`. Introduced in feature level {entry['introduced']}.",
            "",
            f"**Function.** {entry['function']}",
            "",
        ]
        out += ["**Constraints.**", "", *(f"- {rule}" for rule in entry["constraints"]), ""]
        out += ["**Tensor support** (each table applies from its feature level on).", ""]
        out += ["| from | tensor | dimension counts | data types |", "|---|---|---|---|"]
        for table in entry["support"]:
            mark = " *" if "correction" in table else ""
            for field, row in table["tensors"].items():
                out.append(f"| {_heading(table)}{mark} | {field} | {_dims(row['dims'])} | {', '.join(row['types'])} |")
        if "fusable_from" in entry:
            hosts = " and ".join(entry.get("fusable_into", ())) or "any operator with a FusedActivation field"
            out += ["", f"**Fusable** into {hosts} from feature level {entry['fusable_from']}."]
        out += ["", f"**Notes.** {entry['notes']}"]
        if "corrections" in entry:
            out += ["", "**dmlrpc's corrections** (tables marked * above):", ""]
            out += [f"- {reason}" for reason in entry["corrections"]]
    return "\n".join(out) + "\n"


def index() -> str:
    """docs/operators/README.md: every family and its operators."""
    out = [
        "# Operators",
        "",
        "DirectML's per-operator pages as the server applies them, one page per operator family (the server's",
        "`operators/<family>.py`). Generated by `python tools/operator_docs.py`; do not edit.",
        "",
        "| family | operators |",
        "|---|---|",
    ]
    out += [f"| [{family}]({family}.md) | {', '.join(names)} |" for family, names in FAMILIES.items()]
    return "\n".join(out) + "\n"
