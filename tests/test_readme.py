"""The README's Python examples run against a real server and print what the README says."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re

from tests.conftest import ServerThread

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_examples_run(server: ServerThread) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2
    for block in blocks:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(block.replace("localhost:50051", server.address), {})  # our own README
        assert printed.getvalue().strip()
    assert "[11. 10.  9.  8.  7.  6.]" in printed.getvalue()
