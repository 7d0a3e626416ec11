"""The Windows image's contents under the DirectML lane: its locked packages, its entrypoint, its smoke checks.

A Windows image cannot be built here. What can be proven: the lane's Windows CPython holds exactly the packages the
image installs (deploy/requirements/windows.txt, by hash), and the image's entrypoint (`python -m dmlrpc_server`
with smoke-windows.ps1's arguments) serves DirectML under Wine and passes deploy/docker/smoke.py run by that same
Windows Python, as smoke-windows.ps1 runs it inside the container (health, a top-k, provider = DirectML).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
import uuid
from email.parser import HeaderParser
from pathlib import Path

import pytest

from tests.dml.conftest import LANE, START_TIMEOUT, _free_port
from tests.test_lock import lock

pytestmark = [pytest.mark.dml, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("DMLRPC_WINE_CACHE") or Path.home() / ".cache/dmlrpc/dml-wine")
SITE_PACKAGES = CACHE / "root/opt/winpy/Lib/site-packages"
#: env.sh's DML_WINE_TEST_TOOLS.
TEST_TOOLS = CACHE / "root/opt/wintest"


def _installed(directory: Path) -> dict[str, str]:
    installed = {}
    for metadata in directory.glob("*.dist-info/METADATA"):
        headers = HeaderParser().parsestr(metadata.read_text(errors="replace"))
        installed[lock.canonicalize_name(headers["Name"])] = headers["Version"]
    return installed


def test_windows_python_holds_the_lock(dml_environment: Path) -> None:
    """Every package of the lane's Windows Python is the image's locked one, at its locked version, and no other;
    its test tools (tests/dml/test_windows_suites.py) are their own lock's, beside it."""
    assert _installed(SITE_PACKAGES) == lock.parse((lock.LOCKS / "windows.txt").read_text())[1]
    assert _installed(TEST_TOOLS) == lock.parse((lock.LOCKS / "windows-tests.txt").read_text())[1]


def test_entrypoint_serves_directml_and_passes_the_smoke_checks(dml_environment: Path) -> None:
    dockerfile = (ROOT / "deploy/docker/Dockerfile.windows").read_text()
    found = re.search(r"^ENTRYPOINT (\[.*\])$", dockerfile, re.MULTILINE)
    assert found is not None
    assert json.loads(found.group(1))[1:] == ["-m", "dmlrpc_server"]
    script = (ROOT / "deploy/docker/smoke-windows.ps1").read_text()
    assert "--host 0.0.0.0 --provider directml" in script and "--expect-provider directml" in script

    # dml_wine_serve is dmlrpc_server's own main with the vkd3d shim that Wine needs applied first; loopback here,
    # where the container listens on 0.0.0.0 behind its published port.
    port = _free_port()
    args = ["--provider", "directml", "--host", "127.0.0.1", "--port", str(port), "--metrics-port", str(_free_port())]
    server = subprocess.Popen(
        [str(LANE / "run.sh"), "-m", "dml_wine_serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    log: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert server.stdout is not None
        for line in server.stdout:
            log.append(line.rstrip())
            if "warmed up" in line:
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    # smoke.py, as smoke-windows.ps1 pipes it to the container's python.exe, from a file Wine sees (Z:).
    smoke = CACHE / f"root/tmp/dmlrpc-smoke-{uuid.uuid4().hex}.py"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not ready.wait(0.2):
            assert server.poll() is None and time.monotonic() < deadline, "\n".join(log[-80:])
        smoke.write_text((ROOT / "deploy/docker/smoke.py").read_text())
        result = subprocess.run(
            [str(LANE / "run.sh"), "Z:\\tmp\\" + smoke.name, "--target", f"127.0.0.1:{port}"]
            + ["--expect-provider", "directml", "--wait-seconds", "60"],
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        assert result.returncode == 0, result.stdout + result.stderr + "\n".join(log[-40:])
        for check in ("ok   health: SERVING", "ok   top_k:", "ok   provider: DmlExecutionProvider"):
            assert check in result.stdout
    finally:
        smoke.unlink(missing_ok=True)
        server.terminate()  # run.sh ends the Windows process and its Xvfb
        server.wait(timeout=60)
        reader.join(timeout=30)
        if server.stdout is not None:
            server.stdout.close()
