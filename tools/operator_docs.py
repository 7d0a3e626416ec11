"""Write docs/operators/ from the server's operator data: one page per family and an index.

Usage: python tools/operator_docs.py [--check]   (--check: exit 1, naming the stale files, instead of writing)

The data module is loaded by its path, so this needs neither the server's dependencies nor an installed package.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "operators"
PAGES = ROOT / "server" / "dmlrpc_server" / "operators" / "pages" / "__init__.py"


def pages_module() -> ModuleType:
    """The server's operator data module (``dmlrpc_server.operators.pages``) loaded alone, by its path: its
    ``rules(name)``, ``markdown(family)``, ``PAGES`` and ``FAMILIES`` without the server's dependencies."""
    spec = importlib.util.spec_from_file_location("operator_pages", PAGES)
    assert spec is not None and spec.loader is not None
    pages = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pages)
    return pages


def rendered() -> dict[str, str]:
    """Every file docs/operators/ should hold, by name."""
    pages = pages_module()
    return {f"{family}.md": pages.markdown(family) for family in pages.FAMILIES} | {"README.md": pages.index()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report stale files instead of writing them")
    check = parser.parse_args(argv).check
    expected = rendered()
    found = {path.name: path.read_text(encoding="utf-8") for path in DOCS.glob("*.md")}
    stale = sorted(name for name in expected.keys() | found.keys() if expected.get(name) != found.get(name))
    if check:
        for name in stale:
            print(f"stale: docs/operators/{name}")
        return 1 if stale else 0
    DOCS.mkdir(parents=True, exist_ok=True)
    for name in stale:
        if name in expected:
            (DOCS / name).write_text(expected[name], encoding="utf-8")
        else:
            (DOCS / name).unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
