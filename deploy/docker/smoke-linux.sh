#!/usr/bin/env bash
# Build, run and smoke-test the Linux image on a machine with a Docker daemon (from the repository root):
#   deploy/docker/smoke-linux.sh            # CPU image
#   deploy/docker/smoke-linux.sh cuda       # CUDA image (NVIDIA driver + NVIDIA Container Toolkit)
# Extra arguments go to docker build (e.g. --build-arg PYTHON_IMAGE=... for a mirrored base image).
set -euo pipefail
cd "$(dirname "$0")/../.."
flavour="${1:-cpu}"
shift || true
tag="dmlrpc:0.1.0-linux-${flavour}"
name="dmlrpc-smoke-$$"
gpus=()
[ "$flavour" = cuda ] && gpus=(--gpus all)

docker build -f deploy/docker/Dockerfile.linux --build-arg "ORT_FLAVOUR=${flavour}" -t "$tag" "$@" .
docker run --detach --name "$name" "${gpus[@]}" --read-only --tmpfs /tmp --cap-drop ALL \
    --security-opt no-new-privileges:true "$tag" --host 0.0.0.0 --provider "$flavour" >/dev/null
trap 'docker rm --force "$name" >/dev/null' EXIT
if ! docker exec -i "$name" python - --expect-provider "$flavour" < deploy/docker/smoke.py; then
    docker logs "$name" >&2
    exit 1
fi
docker stop --time 30 "$name" >/dev/null
echo "PASS $tag (stopped cleanly: exit $(docker inspect --format '{{.State.ExitCode}}' "$name"))"
