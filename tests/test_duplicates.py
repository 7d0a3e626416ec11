"""Copied code in client/ and server/: tools/duplicates.py's scan (runs of 6+ equal lines) stays small and never
finds a sync/async client copy or a copy between the two owner-scoped stores."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location("duplicates", Path(__file__).parent.parent / "tools/duplicates.py")
assert _SPEC is not None and _SPEC.loader is not None
duplicates = importlib.util.module_from_spec(_SPEC)
sys.modules["duplicates"] = duplicates  # dataclasses look their module up while the class is made
_SPEC.loader.exec_module(duplicates)

#: The most pairs the scan may find (at most 10, the goal): none is left since the SDK's faces are generated from one
#: declaration per function; lowered as copies are removed, never raised.
MOST = 0
#: Places that must never share a copied run: each pair of twins is one implementation with two faces.
TWINS = (
    ("client/dmlrpc/client.py", "client/dmlrpc/aio.py"),
    ("server/dmlrpc_server/runtime/handles.py", "server/dmlrpc_server/runtime/resident.py"),
)


def test_the_scan_finds_a_copy_however_indented() -> None:
    body = [f"value_{i} = compute({i})" for i in range(7)]
    one = "\n".join(["import os", "", *body, "print(1)"])
    other = "\n".join(["def f(", "    a: int,", ") -> None:", *(f"    {line}" for line in body)])
    (pair,) = duplicates.find_pairs({"one.py": one, "other.py": other})
    assert pair.lines == 7
    assert (pair.a.path, pair.a.first, pair.a.last) == ("one.py", 3, 9)
    assert (pair.b.path, pair.b.first, pair.b.last) == ("other.py", 4, 10)


def test_imports_signatures_and_short_runs_are_not_copies() -> None:
    imports = "\n".join(f"from package_{i} import name_{i}" for i in range(8))
    signature = "def f(\n" + "".join(f"    a_{i}: int,\n" for i in range(8)) + ") -> None:\n    pass"
    short = "\n".join(f"x_{i} = {i}" for i in range(4))  # with the body's "pass": 5 lines
    files = {"a.py": f"{imports}\n{signature}\n{short}", "b.py": f"{imports}\n{signature}\n{short}"}
    assert duplicates.find_pairs(files) == []


def test_the_sources_have_few_copies_and_no_twin_copies() -> None:
    pairs = duplicates.scan()
    assert len(pairs) <= MOST, "\n".join(map(str, pairs))
    for first, second in TWINS:
        twins = [pair for pair in pairs if {pair.a.path, pair.b.path} == {first, second}]
        assert twins == [], twins
    places = [place.path for pair in pairs for place in (pair.a, pair.b)]
    assert not [path for path in places if "/v1/" in path]


def test_only_generated_code_is_left_out() -> None:
    scanned = {path.relative_to(duplicates.ROOT).as_posix() for path in duplicates.sources()}
    assert not [path for path in scanned if "/v1/" in path]
    assert {"server/dmlrpc_server/operators/pages/__init__.py", "client/dmlrpc/codec.py"} <= scanned
