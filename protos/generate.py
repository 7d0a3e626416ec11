"""Regenerate the committed Python code (messages, gRPC stubs, .pyi stubs) from protos/dmlrpc/v1."""

from __future__ import annotations

import os
import pathlib
import sys

from grpc_tools import protoc  # type: ignore[import-untyped]

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
OUT = ROOT / "client"
PACKAGE_DIR = OUT / "dmlrpc" / "v1"
SERVICE_PROTOS = {"service.proto"}


def main() -> int:
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
    return protoc.main([*grpc_args, *services])


if __name__ == "__main__":
    sys.exit(main())
