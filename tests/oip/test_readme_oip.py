"""The README's Open Inference Protocol example as written: make the model, serve the repository, call it."""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import re

from tests.conftest import start_server

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_tritonclient_example_runs(tmp_path: pathlib.Path) -> None:
    make, call = re.findall(r"```python oip\n(.*?)```", README.read_text(), re.S)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(make, {})  # our own README
    finally:
        os.chdir(cwd)
    server = start_server(model_repository=tmp_path / "models")
    try:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(call.replace("localhost:50051", server.address), {})
    finally:
        server.stop()
    assert printed.getvalue().splitlines() == ["[-1, 16]", "[100 101 102 103]"]
