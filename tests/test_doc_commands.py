"""Every command block of the docs is run by a test as written, or its fence says why it cannot run here."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import dmlrpc
from tests.conftest import ServerThread
from tests.doc_blocks import (
    COMMAND_LANGUAGES,
    DOCS,
    GRPCURL_MISSING,
    NOT_RUN_HERE,
    ROOT,
    Block,
    block,
    blocks,
    grpcurl,
)
from tests.test_cli import START_TIMEOUT, ServerProcess, _free_port

#: (doc, language, tag) of each command block that runs here -> the test that runs it (a test that reads the block
#: through tests/doc_blocks.py, or for untagged blocks all blocks of that language). Every other command block's
#: fence must say `not-run-here: <why>`.
RUN_BY = {
    ("README.md", "sh", "quickstart"): "tests/test_doc_commands.py::test_readme_quickstart",
    ("README.md", "python", ""): "tests/test_readme.py::test_readme_python_examples_run",
    ("README.md", "python", "oip"): "tests/oip/test_readme_oip.py::test_readme_tritonclient_example_runs",
    ("README.md", "sh", "configuration"): "tests/test_readme.py::test_configuration_sample_runs_as_written",
    ("README.md", "sh", "grpcurl"): "tests/test_doc_commands.py::test_grpcurl_blocks_run_as_written",
    ("README.md", "sh", "workers"): "tests/test_cli.py::test_readme_worker_samples_serve",
    ("README.md", "py", "client-options"): "tests/test_doc_commands.py::test_readme_client_options_run",
    ("README.md", "sh", "other-languages"): "tests/test_examples.py::test_readme_other_languages_run_as_written",
    ("README.md", "sh", "dml-lane"): "tests/test_doc_commands.py::test_dml_lane_commands",
    (
        "docs/protocol.md",
        "python",
        "dmlgraph",
    ): "tests/oip/test_graph_models.py::test_the_documented_graph_file_is_served",
    ("docs/protocol.md", "sh", "codegen"): "tests/test_examples.py::test_protocol_codegen_recipe_compiles",
    ("docs/protocol.md", "sh", "grpcurl-reflection"): "tests/test_doc_commands.py::test_grpcurl_blocks_run_as_written",
    ("docs/protocol.md", "sh", "grpcurl-execute"): "tests/test_doc_commands.py::test_grpcurl_blocks_run_as_written",
    ("deploy/README.md", "sh", "lock-check"): "tests/test_doc_commands.py::test_deploy_lock_check_runs",
    ("deploy/README.md", "python", "headless-service"): "tests/test_doc_commands.py::test_deploy_headless_client",
    ("deploy/README.md", "sh", "checks"): "tests/test_doc_commands.py::test_deploy_checks_run",
    ("CONTRIBUTING.md", "sh", "setup"): "tests/test_doc_commands.py::test_contributing_commands_are_what_ci_runs",
    ("CONTRIBUTING.md", "sh", "generate"): "tests/test_doc_commands.py::test_contributing_commands_are_what_ci_runs",
    ("CONTRIBUTING.md", "sh", "checks"): "tests/test_doc_commands.py::test_contributing_commands_are_what_ci_runs",
}


def _extras() -> dict[str, list[str]]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    extras: dict[str, list[str]] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    return extras


def _command_blocks() -> list[Block]:
    return [b for doc in DOCS for b in blocks(doc) if b.language in COMMAND_LANGUAGES]


def test_every_command_block_is_run_or_says_why_not() -> None:
    unaccounted = []
    for found in _command_blocks():
        if found.not_run_here is not None:
            assert len(found.not_run_here) >= 10, f"{found.where}: say why it cannot run here"
            continue
        test = RUN_BY.get((found.doc, found.language, found.tag))
        if test is None:
            unaccounted.append(found.where)
            continue
        path, _, name = test.partition("::")
        source = (ROOT / path).read_text()
        assert re.search(rf"^def {name}\(", source, re.M), f"{found.where}: {test} does not exist"
        # The test finds the block by its fence info, so that an edit of the block is what it runs.
        assert (found.tag or found.language) in source, (found.where, test)
    assert not unaccounted, (
        "command blocks that no test runs: run each in a test (and list it in RUN_BY), or mark its fence "
        f"```LANGUAGE {NOT_RUN_HERE} <why>: {unaccounted}"
    )
    # Nothing listed is stale: every entry names a block that is there.
    present = {(b.doc, b.language, b.tag) for b in _command_blocks()}
    assert set(RUN_BY) <= present, set(RUN_BY) - present


def test_the_check_finds_an_unmarked_block(tmp_path: Path) -> None:
    from tests import doc_blocks

    (tmp_path / "doc.md").write_text(
        "```sh\nrm -rf /\n```\n\n```powershell not-run-here: needs a Windows host\ndir\n```\n\n  ```\n  text\n  ```\n"
    )
    root, doc_blocks.ROOT = doc_blocks.ROOT, tmp_path
    try:
        found = doc_blocks.blocks("doc.md")
    finally:
        doc_blocks.ROOT = root
    assert [(b.line, b.language, b.tag, b.not_run_here) for b in found] == [
        (1, "sh", "", None),
        (5, "powershell", "not-run-here: needs a Windows host", "needs a Windows host"),
        (9, "", "", None),
    ]
    assert found[2].text == "text\n"
    assert (found[0].doc, found[0].language, found[0].tag) not in RUN_BY


# ---------------------------------------------------------------------------------------------------------------
# What CI runs: the docs' setup and check commands are the ones .ci/run runs.


def _ci_commands() -> set[str]:
    """.ci/run's commands, normalised as the docs write them (python3/python, . and source, .venv-ci/.venv)."""
    commands = set()
    for line in (ROOT / ".ci" / "run").read_text().splitlines():
        line = line.split(" #")[0].strip()
        for part in re.split(r"&&|\|\|", line):
            commands.add(_normalised(part))
    return commands


def _normalised(command: str) -> str:
    words = [w for w in shlex.split(command.split("#")[0]) if w not in ("--quiet", "sudo") and not w.startswith(">")]
    words = ["python" if w == "python3" else "." if w == "source" else w.replace(".venv-ci", ".venv") for w in words]
    return " ".join(words)


def _doc_commands(found: Block) -> list[str]:
    return [
        _normalised(part)
        for line in found.text.splitlines()
        if line.split("#")[0].strip()
        for part in line.split("#")[0].split("&&")
    ]


def test_contributing_commands_are_what_ci_runs() -> None:
    ci = _ci_commands()
    for tag in ("setup", "generate", "checks"):
        for command in _doc_commands(block("CONTRIBUTING.md", "sh", tag)):
            assert command in ci, f"CONTRIBUTING.md ```sh {tag}: {command!r} is not what .ci/run runs"


def test_readme_quickstart(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's two commands: the server starts as written, and the test command is what CI runs."""
    lines = [line for line in block("README.md", "sh", "quickstart").text.splitlines() if line.strip()]
    assert [line.startswith("#") for line in lines] == [True, False, True, False], lines
    assert "listens on 127.0.0.1:50051" in lines[0]
    install, serve = (part.strip() for part in lines[1].split("&&"))
    # The install is what pip does with pyproject.toml's `server` extra (CI installs `dev`, which includes it).
    assert install == "python3 -m pip install '.[server]'"
    assert "dmlrpc[server]" in _extras()["dev"]
    ci = _ci_commands()
    for command in _doc_commands(Block("README.md", 0, "sh", "quickstart", lines[3] + "\n")):
        assert command in ci, f"README.md ```sh quickstart: {command!r} is not what .ci/run runs"
    # The server command as written, on the address it says: the default host, and a free port in place of 50051
    # (through the environment, which the command's flags do not override).
    words = shlex.split(serve)
    assert words[0] == "dmlrpc-server"
    port = _free_port()
    monkeypatch.setenv("DMLRPC_PORT", str(port))
    monkeypatch.setenv("DMLRPC_METRICS_PORT", "0")
    server = ServerProcess(*words[1:])
    try:
        listening = server.wait_for(re.compile(r"dmlrpc server listening on ([\d.]+):(\d+)"))
        assert listening is not None and listening.groups() == ("127.0.0.1", str(port)), server.log()
        with dmlrpc.Client(f"127.0.0.1:{port}", timeout=START_TIMEOUT) as client:
            deadline = time.monotonic() + START_TIMEOUT
            while True:
                try:
                    capabilities = client.get_capabilities()
                    break
                except dmlrpc.UnavailableError:
                    assert time.monotonic() < deadline, server.log()
                    time.sleep(0.2)
        assert capabilities.execution_provider == "CPUExecutionProvider"
    finally:
        server.close()
    # The default port is the comment's 50051.
    from dmlrpc_server.settings import ServerSettings

    assert ServerSettings.model_fields["port"].default == 50051


def test_dml_lane_commands(tmp_path: Path) -> None:
    """The README's lane commands: build.sh and the lane's pytest are what .ci/run runs, run.sh's modules and probe
    sections exist (the lane itself runs run.sh, tests/dml/conftest.py), and `build.sh --clean` runs as written on a
    cache of its own."""
    ci = _ci_commands()
    lane_conftest = (ROOT / "tests" / "dml" / "conftest.py").read_text()
    found = block("README.md", "sh", "dml-lane")
    commands = [line.split("#")[0].strip() for line in found.text.splitlines() if line.split("#")[0].strip()]
    for command in commands:
        words = shlex.split(command)
        environment = [w for w in words if re.fullmatch(r"[A-Z_]+=\S*", w)]
        words = words[len(environment) :]
        for assignment in environment:
            assert f"export {assignment}" in ci, (command, assignment)
        if words[:3] == ["python", "-m", "pytest"]:
            paths = [word for word in words[3:] if word.startswith("tests")]
            assert all((ROOT / path).exists() for path in paths), command
            if not paths:  # everything: the command CI runs, as written
                assert " ".join(words) in ci, command
        elif words == ["sudo", "tools/dml-wine/build.sh"]:
            assert "tools/dml-wine/build.sh" in ci
        elif words == ["tools/dml-wine/build.sh", "--clean"]:
            cache = tmp_path / "cache"
            (cache / "downloads").mkdir(parents=True)
            done = subprocess.run(
                words,
                cwd=ROOT,
                env={**os.environ, "DMLRPC_WINE_CACHE": str(cache)},
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0 and not cache.exists(), done.stdout + done.stderr
        elif words[:3] == ["tools/dml-wine/run.sh", "-m", "dml_wine_probe"]:
            probe = (ROOT / "tools" / "dml-wine" / "win" / "dml_wine_probe.py").read_text()
            (listed,) = re.findall(r"^SECTIONS = \[(.*?)\]", probe, re.S | re.M)
            assert set(words[3:]) <= set(re.findall(r'"(\w+)"', listed)), command
            assert '"-m", "dml_wine_probe"' in lane_conftest
        elif words[:3] == ["tools/dml-wine/run.sh", "-m", "dml_wine_serve"]:
            assert (ROOT / "tools" / "dml-wine" / "win" / "dml_wine_serve.py").is_file()
            assert '"-m", "dml_wine_serve"' in lane_conftest
        else:
            raise AssertionError(f"README.md ```sh dml-lane: no check for {command!r}")


# ---------------------------------------------------------------------------------------------------------------
# grpcurl


#: GetCapabilities' answer as grpcurl prints it (proto field names through reflection, lowerCamelCase otherwise).
FEATURE_LEVEL = r'"feature_?[lL]evel": "FEATURE_LEVEL_6_4"'


def _run_block(found: Block, address: str, default: str) -> str:
    """The block run by bash, with the server's address for the documented one and grpcurl on PATH."""
    tool = grpcurl()
    if tool is None:
        pytest.skip(GRPCURL_MISSING)
    script = found.text.replace(default, address)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        env={**os.environ, "PATH": f"{Path(tool).parent}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{found.where}\n{script}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    return done.stdout


def test_grpcurl_blocks_run_as_written(server: ServerThread) -> None:
    # README: list, health, capabilities, and the TOP_K1 call whose answer its last comment gives.
    readme = block("README.md", "sh", "grpcurl")
    printed = _run_block(readme, server.address, "localhost:50051")
    assert {"dmlrpc.v1.DirectMLService", "grpc.health.v1.Health"} <= set(printed.split()), printed
    assert re.search(r'"status": "SERVING"', printed), printed
    assert re.search(FEATURE_LEVEL, printed), printed
    claimed = r'^# -> outputs: values "(\S+)" \(9, 7\) and indices "(\S+)" \(1, 3\)$'
    ((values, indices),) = re.findall(claimed, readme.text, re.M)
    assert f'"data": "{values}"' in printed and f'"data": "{indices}"' in printed, printed
    # docs/protocol.md: the same through reflection, with describe, and what its comment says Check prints.
    reflection = block("docs/protocol.md", "sh", "grpcurl-reflection")
    printed = _run_block(reflection, server.address, "127.0.0.1:50051")
    assert "dmlrpc.v1.TopK1OperatorDesc is a message:" in printed, printed
    assert re.search(FEATURE_LEVEL, printed) and '"status": "SERVING"' in printed, printed
    # docs/protocol.md's Execute as written prints exactly the JSON block that follows it.
    execute = block("docs/protocol.md", "sh", "grpcurl-execute")
    printed = _run_block(execute, server.address, "127.0.0.1:50051")
    (answer,) = [b for b in blocks("docs/protocol.md") if b.language == "json" and b.line > execute.line][:1]
    assert json.loads(printed) == json.loads(answer.text)


# ---------------------------------------------------------------------------------------------------------------
# Client construction samples (they name hosts that are not here: constructing a client connects nowhere yet)


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_client_options_run(in_tmp: Path) -> None:
    from tests.service.certificates import Authority

    authority = Authority(in_tmp, "docs")
    issued = authority.issue("client", server=False)
    (in_tmp / "ca.pem").write_bytes(authority.pem)
    (in_tmp / "client.pem").write_bytes(issued.cert_file.read_bytes())
    (in_tmp / "client.key").write_bytes(issued.key_file.read_bytes())
    (in_tmp / "token").write_text("docs-token\n")
    namespace: dict[str, Any] = {}
    exec(block("README.md", "py", "client-options").text, namespace)  # our own README
    client = namespace["client"]
    assert isinstance(client, dmlrpc.Client)
    client.close()


def test_deploy_headless_client() -> None:
    namespace: dict[str, Any] = {"dmlrpc": dmlrpc}
    exec(block("deploy/README.md", "python", "headless-service").text.replace("<namespace>", "default"), namespace)
    client = namespace["client"]
    assert isinstance(client, dmlrpc.Client)
    client.close()


# ---------------------------------------------------------------------------------------------------------------
# deploy/README.md's offline checks


def _python_commands(found: Block) -> list[list[str]]:
    """The block's `python ...` lines as argument lists run by this interpreter."""
    commands = []
    for line in found.text.splitlines():
        words = shlex.split(line.split("#")[0])
        if words[:1] == ["python"]:
            commands.append([sys.executable, *words[1:]])
    return commands


def test_deploy_lock_check_runs() -> None:
    (command,) = _python_commands(block("deploy/README.md", "sh", "lock-check"))
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_deploy_checks_run() -> None:
    found = block("deploy/README.md", "sh", "checks")
    (install,) = [line for line in found.text.splitlines() if line.startswith("pip install ")]
    # "as .ci/run does": CI installs the dev extra, which must hold every package named.
    dev = _extras()["dev"]
    pinned = {re.split(r"[=<>;\[ ]", requirement)[0] for requirement in dev}
    assert set(shlex.split(install.split("#")[0])[2:]) <= pinned, install
    check, pytest_run = _python_commands(found)
    assert pytest_run[1:] == ["-m", "pytest", "tests/test_deploy.py"] and (ROOT / pytest_run[3]).is_file()
    done = subprocess.run(check, cwd=ROOT, capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "not found" in done.stdout + done.stderr and not os.environ.get("CI"):
        pytest.skip(f"a deploy check tool is missing here: {(done.stdout + done.stderr)[-300:]}")
    assert done.returncode == 0, done.stdout + done.stderr


def test_readme_states_the_sdk_unary_limit() -> None:
    text = (ROOT / "README.md").read_text()
    assert f"`dmlrpc.UNARY_LIMIT_BYTES` ({dmlrpc.UNARY_LIMIT_BYTES >> 20} MiB)" in text
