#!/usr/bin/env bash
# Build, run and smoke-test the Linux image with Docker or Podman (from the repository root):
#   deploy/docker/smoke-linux.sh                       # CPU image, docker
#   ENGINE=podman deploy/docker/smoke-linux.sh --format docker
#   deploy/docker/smoke-linux.sh cuda                  # CUDA image (NVIDIA driver + NVIDIA Container Toolkit)
# ENGINE is the container engine's command (docker or podman; default docker). Extra arguments go to its build
# (e.g. --build-arg PYTHON_IMAGE=... for a mirrored base image, --secret id=pip-ca,src=... behind a TLS proxy).
set -euo pipefail
cd "$(dirname "$0")/../.."
engine="${ENGINE:-docker}"
flavour=cpu
if [ "${1:-}" = cpu ] || [ "${1:-}" = cuda ]; then
    flavour="$1"
    shift
fi
tag="dmlrpc:0.1.0-linux-${flavour}"
name="dmlrpc-smoke-$$"
gpus=()
[ "$flavour" = cuda ] && gpus=(--gpus all)

"$engine" build -f deploy/docker/Dockerfile.linux --build-arg "ORT_FLAVOUR=${flavour}" -t "$tag" "$@" .
"$engine" run --detach --name "$name" "${gpus[@]}" --read-only --tmpfs /tmp --cap-drop ALL \
    --security-opt no-new-privileges:true "$tag" --host 0.0.0.0 --provider "$flavour" >/dev/null
trap '"$engine" rm --force "$name" >/dev/null' EXIT
if ! "$engine" exec -i "$name" python - --expect-provider "$flavour" < deploy/docker/smoke.py; then
    "$engine" logs "$name" >&2
    exit 1
fi
"$engine" stop --time 30 "$name" >/dev/null
echo "PASS $tag with $engine (stopped cleanly: exit $("$engine" inspect --format '{{.State.ExitCode}}' "$name"))"
