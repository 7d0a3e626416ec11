"""The docs' fenced blocks, found by their fence info: ```LANGUAGE TAG, or ```LANGUAGE not-run-here: WHY."""

from __future__ import annotations

import dataclasses
import pathlib
import re
import shutil

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: The docs whose commands and snippets tests run (tests/test_doc_commands.py checks that every one is run).
DOCS = ("README.md", "docs/protocol.md", "deploy/README.md", "CONTRIBUTING.md")

#: Fence languages that are commands or programs to run; the others (toml, json, yaml, cpp fragments, text) are data
#: or excerpts that the commands around them use.
COMMAND_LANGUAGES = frozenset({"sh", "bash", "console", "powershell", "python", "py"})

NOT_RUN_HERE = "not-run-here:"

#: The skip reason of tests that need grpcurl where it is missing (CI installs it: it never skips there quietly).
GRPCURL_MISSING = "!!!!!!!! grpcurl IS NOT INSTALLED: run tools/install-grpcurl.sh (CI does) !!!!!!!!"

_FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^`\n]*)\n(?P<text>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its tag (the rest of the fence info) and its text."""

    doc: str
    line: int
    language: str
    tag: str
    text: str

    @property
    def not_run_here(self) -> str | None:
        """The reason the fence info gives why this block cannot run where the tests run, if it gives one."""
        return self.tag[len(NOT_RUN_HERE) :].strip() if self.tag.startswith(NOT_RUN_HERE) else None

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line} (```{self.language} {self.tag})".rstrip(" )") + ")"


def blocks(doc: str) -> list[Block]:
    """Every fenced block of ``doc`` (a path relative to the repository root), in order."""
    text = (ROOT / doc).read_text()
    found = []
    for match in _FENCE.finditer(text):
        language, _, tag = match["info"].strip().partition(" ")
        indent = len(match["indent"])
        body = "".join(line[indent:] + "\n" for line in match["text"].splitlines())
        found.append(Block(doc, text.count("\n", 0, match.start()) + 1, language, tag.strip(), body))
    return found


def block(doc: str, language: str, tag: str = "") -> Block:
    """The one block of ``doc`` whose fence info is ``language tag``: the test that runs it runs what the doc says."""
    found = [b for b in blocks(doc) if (b.language, b.tag) == (language, tag)]
    assert found, f"{doc} has no ```{language} {tag} block (a test runs it: keep the fence info)"
    assert len(found) == 1, f"{doc} has {len(found)} ```{language} {tag} blocks: give each its own tag"
    return found[0]


def tagged(doc: str, language: str, tag: str = "") -> list[Block]:
    """Every block of ``doc`` whose fence info is ``language tag`` (e.g. the README's plain ```python examples)."""
    return [b for b in blocks(doc) if (b.language, b.tag) == (language, tag)]


def grpcurl() -> str | None:
    """grpcurl on PATH, else the one tools/install-grpcurl.sh puts in .grpcurl/bin (CI runs that script)."""
    installed = ROOT / ".grpcurl" / "bin" / "grpcurl"
    return shutil.which("grpcurl") or (str(installed) if installed.is_file() else None)
