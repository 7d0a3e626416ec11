"""Find copied code: runs of 6 or more equal lines (whitespace normalised) in two places of the hand-written sources.

Usage: python tools/duplicates.py [--lines N] [PATH ...]   (default: client/dmlrpc and server/dmlrpc_server)

Blank lines, comments, import statements and function signatures are skipped (imports repeat by nature; a
signature is an interface, which a NumPy-style call, its Graph node and its desc builder share on purpose); every
other line counts, so a copied block shows up even when reindented. Only generated code is left out (``v1/``:
protoc's output, never edited by hand); the operator pages are data files (JSON), not Python. Prints one line per pair
of places, longest first, and exits 1 when any is found.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (ROOT / "client" / "dmlrpc", ROOT / "server" / "dmlrpc_server")
GENERATED = "v1"
MIN_LINES = 6
_IMPORT = re.compile(r"(from\s+\S+\s+)?import\s")
_DEF = re.compile(r"(async\s+)?def\s")


@dataclass(frozen=True)
class Place:
    path: str
    #: 1-based line numbers of the run's first and last counted lines.
    first: int
    last: int

    def __str__(self) -> str:
        return f"{self.path}:{self.first}-{self.last}"


@dataclass(frozen=True)
class Pair:
    """One run of ``lines`` equal counted lines found in two places."""

    lines: int
    a: Place
    b: Place

    def __str__(self) -> str:
        return f"{self.lines} lines: {self.a} = {self.b}"


#: The SDK's faces, which tools/faces.py writes from the operator declarations (generated, as ``v1/`` is).
FACES = ("client/dmlrpc/_client_operators.py", "client/dmlrpc/_graph_operators.py")


def sources(roots: Iterable[Path] = SOURCES) -> list[Path]:
    """The hand-written Python files under ``roots`` (generated protobuf code and SDK faces excluded)."""
    found: list[Path] = []
    for root in roots:
        paths = [root] if root.is_file() else sorted(root.rglob("*.py"))
        found.extend(
            path
            for path in paths
            if GENERATED not in path.relative_to(root.parent).parts[1:-1] and not path.as_posix().endswith(FACES)
        )
    return found


def counted_lines(text: str) -> list[tuple[int, str]]:
    """(line number, whitespace-normalised text) of every line that counts: not blank, not a comment, not an
    import (nor an import's continuation lines)."""
    counted: list[tuple[int, str]] = []
    in_import = in_signature = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = " ".join(raw.split())
        if in_import:
            in_import = not line.endswith(")")
            continue
        if in_signature:
            in_signature = not line.endswith(":")
            continue
        if not line or line.startswith("#"):
            continue
        if _IMPORT.match(line):
            in_import = line.endswith("(")
            continue
        if _DEF.match(line):
            in_signature = not line.endswith(":")
            continue
        counted.append((number, line))
    return counted


def find_pairs(files: dict[str, str], min_lines: int = MIN_LINES) -> list[Pair]:
    """Maximal runs of at least ``min_lines`` equal counted lines, in two files or two places of one file."""
    lines = {name: counted_lines(text) for name, text in files.items()}
    windows: dict[tuple[str, ...], list[tuple[str, int]]] = defaultdict(list)
    for name, numbered in lines.items():
        texts = [text for _, text in numbered]
        for start in range(len(texts) - min_lines + 1):
            windows[tuple(texts[start : start + min_lines])].append((name, start))
    matches: set[tuple[str, int, str, int]] = set()
    for places in windows.values():
        for i, (a, start_a) in enumerate(places):
            for b, start_b in places[i + 1 :]:
                if a == b and abs(start_a - start_b) < min_lines:
                    continue  # a run overlapping itself (a repeated line), not a copy
                matches.add((a, start_a, b, start_b))
    pairs: list[Pair] = []
    for a, start_a, b, start_b in matches:
        if (a, start_a - 1, b, start_b - 1) in matches:
            continue  # inside a longer run, counted from its start
        length = min_lines
        while (a, start_a + length - min_lines + 1, b, start_b + length - min_lines + 1) in matches:
            length += 1
        numbered_a, numbered_b = lines[a], lines[b]
        pairs.append(
            Pair(
                length,
                Place(a, numbered_a[start_a][0], numbered_a[start_a + length - 1][0]),
                Place(b, numbered_b[start_b][0], numbered_b[start_b + length - 1][0]),
            )
        )
    return sorted(pairs, key=lambda pair: (-pair.lines, str(pair.a), str(pair.b)))


def scan(roots: Iterable[Path] = SOURCES, min_lines: int = MIN_LINES) -> list[Pair]:
    """The copied runs among the hand-written sources under ``roots`` (paths relative to the repository)."""
    files = {path.relative_to(ROOT).as_posix(): path.read_text() for path in sources(roots)}
    return find_pairs(files, min_lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=MIN_LINES, help="shortest run reported (default: 6)")
    parser.add_argument("paths", nargs="*", type=Path, help="folders or files (default: the two packages)")
    args = parser.parse_args(argv)
    roots = [path.resolve() for path in args.paths] or list(SOURCES)
    pairs = scan(roots, args.lines)
    for pair in pairs:
        print(pair)
    print(f"{len(pairs)} pairs of runs of {args.lines}+ equal lines", file=sys.stderr)
    return 1 if pairs else 0


if __name__ == "__main__":
    sys.exit(main())
