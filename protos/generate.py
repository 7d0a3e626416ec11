"""Regenerate the committed Python code (messages, gRPC stubs, .pyi stubs) from protos/dmlrpc/v1."""

from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess
import sys
import venv

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
OUT = ROOT / "client"
PACKAGE_DIR = OUT / "dmlrpc" / "v1"
SERVICE_PROTOS = {"service.proto"}
# The generator runs in its own environment, pinned by protos/requirements.txt (which says why those versions), so
# that the project's own environment keeps the newest protobuf runtime while the gencode stays old enough for 6.x.
REQUIREMENTS = PROTO_ROOT / "requirements.txt"
GENERATOR_ENV = ROOT / ".venv-protoc"
INSIDE = "--inside-generator-env"


def generator_python() -> pathlib.Path:
    """The generator environment's interpreter, (re)built when protos/requirements.txt changed."""
    bin_dir = GENERATOR_ENV / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    stamp = GENERATOR_ENV / "requirements.sha256"
    wanted = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    venv.EnvBuilder(clear=True, with_pip=True).create(GENERATOR_ENV)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "--no-deps", "-r", str(REQUIREMENTS)], check=True)
    stamp.write_text(wanted)
    return python


def generate() -> int:
    from grpc_tools import protoc  # type: ignore[import-untyped]  # only the generator environment has it

    # The mypy-protobuf plugins are console scripts installed next to this interpreter.
    os.environ["PATH"] = f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    # Remove old outputs first so that a deleted .proto leaves no orphan module behind.
    for old in PACKAGE_DIR.glob("*_pb2*.py*"):
        old.unlink()
    protos = sorted(PROTO_ROOT.glob("dmlrpc/v1/*.proto"))
    include = str(pathlib.Path(protoc.__file__).parent / "_proto")
    rel = [str(p.relative_to(PROTO_ROOT)) for p in protos]
    args = ["protoc", f"-I{PROTO_ROOT}", f"-I{include}", f"--python_out={OUT}", f"--mypy_out={OUT}"]
    if protoc.main([*args, *rel]) != 0:
        return 1
    # Only service protos get gRPC stubs (protoc would write empty *_pb2_grpc.py files for the others).
    services = [r for r in rel if pathlib.Path(r).name in SERVICE_PROTOS]
    grpc_args = ["protoc", f"-I{PROTO_ROOT}", f"-I{include}", f"--grpc_python_out={OUT}", f"--mypy_grpc_out={OUT}"]
    return int(protoc.main([*grpc_args, *services]))


def main() -> int:
    if INSIDE in sys.argv[1:]:
        return generate()
    return subprocess.run([str(generator_python()), __file__, INSIDE], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
