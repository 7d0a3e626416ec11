#!/usr/bin/env bash
# Installs the peer servers of bench/peers.py into bench/.peers/ from the package registry (never by the tests).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/.peers/kserve"
python3 -m venv "$venv"
# The versions docs/benchmarks.md records; ONNX Runtime as the server's own.
"$venv/bin/pip" install --quiet "kserve==0.21.0" "onnxruntime==1.32.0" "numpy==2.4.6"
"$venv/bin/python" -m pip list 2>/dev/null | grep -E -i '^(kserve|onnxruntime|grpcio|protobuf|numpy) '
