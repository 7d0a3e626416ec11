#!/usr/bin/env bash
# The container lane: build the Linux CPU image with Podman and run it as an operator would, then clean up.
#
#   tools/container-lane.sh          # from the repository root, as root, with the project's Python active
#
# 1. a Debian 12 base image from mmdebstrap (the machine's own apt mirror; no container registry is needed);
# 2. deploy/docker/Dockerfile.linux built on it (PYTHON_IMAGE), installing deploy/requirements/linux-cpu.txt;
# 3. the image run read-only as its non-root user with several workers: deploy/docker/smoke.py inside, then the
#    same checks from outside through the SDK (health, top-k, provider, workers, metrics scrape), then SIGTERM,
#    which must end it with exit status 0 within the grace period;
# 4. the Helm chart's exec probes for TLS, run in the image serving a self-signed certificate;
# 5. the rendered deploy/k8s/overlays/linux-cpu with `podman play kube`, answering health (two workers);
# 6. deploy/compose.yaml with `podman-compose`, answering health.
# Everything runs in a private Podman store and configuration under one temporary directory (nothing under
# /etc/containers is touched), with free host ports; the containers, pods, images, networks and that directory
# are removed at the end, also on failure. Missing Debian packages are installed with apt-get (only those).
# Exit status 3 means "this machine cannot run containers" (callers skip the lane loudly); anything else non-zero
# is a real failure.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
cd "$REPO"
TAG=dmlrpc:0.1.0-linux-cpu
IMAGE="localhost/$TAG"
BASE=localhost/dmlrpc-lane-base:bookworm
WORKERS=2
GRACE_SECONDS=10
# catatonit: the pause process of the pods that `play kube` makes.
PACKAGES=(podman runc catatonit mmdebstrap podman-compose)
PYTHON="${PYTHON:-python}"

log() { printf '[container-lane %(%H:%M:%S)T] %s\n' -1 "$*"; }
cannot() { echo "container-lane: CANNOT RUN CONTAINERS on this machine: $*" >&2; exit 3; }
fail() { echo "container-lane: FAIL: $*" >&2; exit 1; }

preflight() {
    [ "$(id -u)" -eq 0 ] || cannot "needs root (rootful Podman, mmdebstrap)"
    [ "$(uname -m)" = x86_64 ] || cannot "needs an x86_64 host (the lock file is for x86-64 wheels)"
    command -v apt-get >/dev/null || cannot "needs a Debian-family host (apt-get)"
    "$PYTHON" -c 'import dmlrpc, yaml' 2>/dev/null || fail "$PYTHON needs the project and PyYAML (the dev extra)"
    local probe
    probe=$(mktemp -d)
    if ! mount -t tmpfs tmpfs "$probe" 2>/dev/null; then
        rmdir "$probe"
        cannot "mount is not permitted here (no CAP_SYS_ADMIN)"
    fi
    umount "$probe" && rmdir "$probe"
    grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || true
    local missing=() package status
    for package in "${PACKAGES[@]}"; do
        status="$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)"
        [ "$status" = "install ok installed" ] || missing+=("$package")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        log "installing: ${missing[*]}"
        local apt_log
        apt_log=$(mktemp)
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$apt_log" 2>&1 \
            || { tail -20 "$apt_log" >&2; rm -f "$apt_log"; cannot "apt-get could not install ${missing[*]}"; }
        rm -f "$apt_log"
    fi
}

# The machine's configured Debian mirror (deb822 sources first, then the one-line format); never a fixed host.
apt_mirror() {
    local uri=""
    if compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null; then
        uri=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/*.sources)
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1 == "deb" && $0 !~ /security/ {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' \
            /etc/apt/sources.list)
    fi
    printf '%s' "$uri"
}

# The CA bundle pip uses here, where it is not the default one (a TLS-inspecting proxy): the build gets it as the
# secret pip-ca. Empty when pip uses its own bundle.
pip_ca_bundle() {
    local ca="${PIP_CERT:-}"
    [ -n "$ca" ] || ca="$("$PYTHON" -m pip config get global.cert 2>/dev/null || true)"
    [ -n "$ca" ] || ca="${REQUESTS_CA_BUNDLE:-}"
    [ -f "$ca" ] && printf '%s' "$ca"
}

# Podman's configuration for this machine, detected rather than assumed: runc (crun refuses hybrid cgroup v1/v2
# hierarchies), cgroupfs without a systemd PID 1, a file event log (no journald), and default ulimits that a
# container can get here (probe_container).
configure() {
    CGROUP_MANAGER=cgroupfs
    [ -d /run/systemd/system ] && [ "$(cat /proc/1/comm)" = systemd ] && CGROUP_MANAGER=systemd
    mkdir -p "$WORK/storage" "$WORK/run" "$WORK/tmp" "$WORK/networks"
    cat >"$WORK/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$WORK/storage"
runroot = "$WORK/run"
EOF
    write_containers_conf "$(ulimit -Hn)" "$(ulimit -Hu)"
    export CONTAINERS_CONF="$WORK/containers.conf" CONTAINERS_STORAGE_CONF="$WORK/storage.conf"
    podman info >/dev/null 2>"$WORK/info.err" || { cat "$WORK/info.err" >&2; cannot "podman info fails"; }
}

write_containers_conf() {
    cat >"$WORK/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$1:$1", "nproc=$2:$2"]
[engine]
runtime = "runc"
cgroup_manager = "$CGROUP_MANAGER"
events_logger = "file"
events_logfile_path = "$WORK/events.log"
tmp_dir = "$WORK/tmp"
[network]
network_config_dir = "$WORK/networks"
EOF
}

# One container started from the base, with the highest default ulimits that work here. Podman's own defaults
# (about a million open files) exceed this kind of machine's hard limits, and even the shell's hard limits can be
# out of reach (without CAP_SYS_RESOURCE, runc cannot give a container more than conmon has), so every container
# would fail to start: try the hard limits, then lower ones.
probe_container() {
    local hard_nofile hard_nproc limit nofile nproc
    hard_nofile=$(ulimit -Hn)
    hard_nproc=$(ulimit -Hu)
    [ "$hard_nofile" = unlimited ] && hard_nofile=1048576
    [ "$hard_nproc" = unlimited ] && hard_nproc=4194304
    for limit in "" 65536 32768 16384 4096 1024; do
        nofile=$hard_nofile nproc=$hard_nproc
        if [ -n "$limit" ]; then
            nofile=$((limit < hard_nofile ? limit : hard_nofile))
            nproc=$((limit < hard_nproc ? limit : hard_nproc))
        fi
        write_containers_conf "$nofile" "$nproc"
        if podman run --rm --network none "$BASE" true 2>"$WORK/probe.err"; then
            log "podman $(podman version --format '{{.Client.Version}}'), runc, cgroup manager $CGROUP_MANAGER," \
                "ulimits nofile=$nofile nproc=$nproc, store $WORK"
            return 0
        fi
        grep -q "error setting rlimit" "$WORK/probe.err" || break
    done
    cat "$WORK/probe.err" >&2
    cannot "a container does not start"
}

# What Podman's CNI networking leaves on the host after its containers and networks are gone: bridges
# (cni-podmanN) and the CNI plugins' iptables chains. Only what this lane created is removed.
host_network_state() { ip -o link show type bridge 2>/dev/null | awk -F': ' '{print $2}' | grep '^cni-podman' || true; }
iptables_cni_chains() { iptables-save 2>/dev/null | grep -c '^:CNI-' || true; }

remove_host_network_leftovers() {
    local bridge table line chain
    for bridge in $(host_network_state); do
        grep -qx "$bridge" <<<"$BRIDGES_BEFORE" || ip link delete "$bridge" 2>/dev/null
    done
    [ "$CNI_CHAINS_BEFORE" -eq 0 ] || return 0
    for table in filter nat; do
        while read -r line; do
            eval "iptables -t $table -D ${line#-A }"
        done < <(iptables-save -t "$table" 2>/dev/null | grep -E '^-A [^ ]+ .*-j CNI-' | grep -v '^-A CNI-')
        for chain in $(iptables-save -t "$table" 2>/dev/null | awk '/^:CNI-/ {print substr($1, 2)}'); do
            iptables -t "$table" -F "$chain"
        done
        for chain in $(iptables-save -t "$table" 2>/dev/null | awk '/^:CNI-/ {print substr($1, 2)}'); do
            iptables -t "$table" -X "$chain"
        done
    done
}

cleanup() {
    local status=$?
    set +e
    if [ -n "${WORK:-}" ] && [ -d "$WORK" ]; then
        if [ -n "${CONTAINERS_CONF:-}" ]; then
            podman pod rm --all --force --time 0 >/dev/null 2>&1
            podman rm --all --force --time 0 >/dev/null 2>&1
            # The images, networks and the store itself (the reset removes them all, and faster than rmi).
            podman system reset --force >/dev/null 2>&1
            remove_host_network_leftovers
        fi
        # Podman's blob-info cache is kept outside the store: remove it where this lane made it.
        [ "$VAR_LIB_CONTAINERS_BEFORE" = yes ] || rm -rf /var/lib/containers
        if grep -qF " $WORK/" /proc/self/mounts; then
            echo "container-lane: mounts remain under $WORK; not deleting it" >&2
            status=1
        else
            rm -rf "$WORK"
        fi
    fi
    exit "$status"
}

free_port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

bootstrap_base() {
    local mirror
    if [ -n "${DMLRPC_CONTAINER_BASE_TAR:-}" ] && [ -f "$DMLRPC_CONTAINER_BASE_TAR" ]; then
        log "base: $DMLRPC_CONTAINER_BASE_TAR (DMLRPC_CONTAINER_BASE_TAR)"
        podman import --quiet "$DMLRPC_CONTAINER_BASE_TAR" "$BASE" >/dev/null
        return 0
    fi
    mirror="$(apt_mirror)"
    [ -n "$mirror" ] || cannot "no Debian mirror in the apt sources"
    log "base: mmdebstrap bookworm from $mirror"
    nice mmdebstrap --quiet --variant=minbase --include=python3,python3-venv,python-is-python3,ca-certificates,passwd \
        bookworm "$WORK/rootfs.tar" "$mirror" >"$WORK/mmdebstrap.log" 2>&1 \
        || { tail -20 "$WORK/mmdebstrap.log" >&2; fail "mmdebstrap could not make the base"; }
    podman import --quiet "$WORK/rootfs.tar" "$BASE" >/dev/null
    log "base: $(du -m "$WORK/rootfs.tar" | cut -f1) MB"
    rm -f "$WORK/rootfs.tar"
}

build_image() {
    local secret=() ca
    ca="$(pip_ca_bundle || true)"
    [ -n "$ca" ] && secret=(--secret "id=pip-ca,src=$ca")
    log "build: deploy/docker/Dockerfile.linux on $BASE${ca:+ (pip CA bundle $ca as a build secret)}"
    nice podman build --quiet --format docker --network host --build-arg "PYTHON_IMAGE=$BASE" \
        --build-arg ORT_FLAVOUR=cpu "${secret[@]}" --ignorefile deploy/docker/Dockerfile.linux.dockerignore \
        -f deploy/docker/Dockerfile.linux -t "$IMAGE" . >"$WORK/build.log" 2>&1 \
        || { tail -40 "$WORK/build.log" >&2; fail "podman build"; }
    log "image $IMAGE: $(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%d MB", $1 / 1e6}')"
}

# The SDK from this side: health, top-k, provider, workers and the metrics scrape.
smoke_outside() {
    "$PYTHON" deploy/docker/smoke.py --target "127.0.0.1:$1" --expect-provider cpu --wait-seconds 120 "${@:2}"
}

run_image() {
    local name=dmlrpc-lane-run grpc metrics started elapsed code
    grpc=$(free_port)
    metrics=$(free_port)
    log "run: $IMAGE read-only, user 10001, $WORKERS workers, on 127.0.0.1:$grpc (metrics :$metrics)"
    podman run --detach --name "$name" --read-only --tmpfs /tmp --cap-drop ALL \
        --security-opt no-new-privileges:true -p "127.0.0.1:$grpc:50051" -p "127.0.0.1:$metrics:9464" \
        "$IMAGE" --host 0.0.0.0 --provider cpu --workers "$WORKERS" \
        --shutdown-grace-seconds "$GRACE_SECONDS" >/dev/null 2>"$WORK/run.err" \
        || { cat "$WORK/run.err" >&2; fail "podman run"; }
    [ "$(podman inspect --format '{{.Config.User}}' "$name")" = 10001:10001 ] || fail "the image does not run as 10001"
    log "smoke.py inside the container"
    if ! podman exec -i "$name" python - --expect-provider cpu --expect-workers "$WORKERS" \
        <deploy/docker/smoke.py; then
        podman logs "$name" >&2
        fail "smoke.py inside the container"
    fi
    log "the SDK from outside, through the published ports"
    smoke_outside "$grpc" --expect-workers "$WORKERS" --metrics-url "http://127.0.0.1:$metrics/metrics" \
        || { podman logs "$name" >&2; fail "the SDK from outside the container"; }
    # The image's HEALTHCHECK, run once by hand (Podman schedules it with systemd timers, absent here).
    podman healthcheck run "$name" 2>/dev/null || fail "the image's HEALTHCHECK reports unhealthy"
    log "HEALTHCHECK: healthy"
    started=$(date +%s)
    podman stop --time $((GRACE_SECONDS + 20)) "$name" >/dev/null 2>&1
    elapsed=$(($(date +%s) - started))
    code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
    [ "$code" -eq 0 ] || { podman logs "$name" >&2; fail "SIGTERM: exit status $code, not 0"; }
    [ "$elapsed" -le "$GRACE_SECONDS" ] || fail "SIGTERM: stopped after $elapsed s, past the $GRACE_SECONDS s grace"
    log "SIGTERM: exit status 0 after ${elapsed} s"
    podman rm "$name" >/dev/null 2>&1
}

# The chart's probes with TLS on (exec probes: the kubelet's gRPC probe speaks plaintext only), run in the image
# against the server serving a self-signed certificate for the probes' server name: SERVING -> exit status 0.
tls_probes() {
    local name=dmlrpc-lane-tls
    mkdir -p "$WORK/tls"
    "$PYTHON" - "$WORK/tls" <<'EOF'
import datetime, sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

out, name = Path(sys.argv[1]), "dmlrpc.dmlrpc.svc"
key = ec.generate_private_key(ec.SECP256R1())
subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
now = datetime.datetime.now(datetime.timezone.utc)
cert = (
    x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
    .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
    .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
    .sign(key, hashes.SHA256())
)
(out / "tls.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
(out / "tls.key").write_bytes(
    key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
)
EOF
    chmod 755 "$WORK/tls" && chmod 644 "$WORK/tls/"*
    log "TLS: the chart's exec probes against the image serving a self-signed certificate"
    "$PYTHON" - "$WORK/tls" "$IMAGE" "$name" <<'EOF' || fail "TLS: the chart's probes do not pass"
import importlib.util, subprocess, sys, time

tls, image, name = sys.argv[1:4]
spec = importlib.util.spec_from_file_location("check_deploy", "tools/check-deploy.py")
check = importlib.util.module_from_spec(spec)
sys.modules["check_deploy"] = check
spec.loader.exec_module(check)
docs = check.helm_render({"tls": {"secretName": "dmlrpc-tls", "serverName": "dmlrpc.dmlrpc.svc"}})
container = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]
mount = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == "tls")
env = [f"--env={e['name']}={e['value']}" for e in container["env"] if e["name"].startswith("DMLRPC_TLS")]
subprocess.run(
    ["podman", "run", "--detach", "--name", name, "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL",
     "--security-opt", "no-new-privileges:true", "-v", f"{tls}:{mount}:ro", *env,
     image, "--host", "0.0.0.0", "--provider", "cpu", "--workers", "1"],
    check=True, capture_output=True,
)
for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
    command = container[kind]["exec"]["command"]
    for _ in range(60):
        if subprocess.run(["podman", "exec", name, *command], capture_output=True).returncode == 0:
            break
        time.sleep(1)
    else:
        print(subprocess.run(["podman", "logs", name], capture_output=True, text=True).stderr, file=sys.stderr)
        sys.exit(f"{kind} never passed")
EOF
    log "TLS: startup, readiness and liveness probes pass"
    podman rm --force --time 0 "$name" >/dev/null 2>&1
}

# The linux-cpu overlay as kubectl would apply it, patched in a rendered copy for one host: one replica, this
# image, host ports, and only the Deployment (play kube has no Service, HPA, PDB or NetworkPolicy).
play_kube() {
    local grpc metrics rendered="$WORK/linux-cpu.yaml"
    grpc=$(free_port)
    metrics=$(free_port)
    "$PYTHON" - "$rendered" "$IMAGE" "$grpc" "$metrics" <<'EOF'
import subprocess, sys
import yaml

out, image, grpc, metrics = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
kubectl = [sys.executable.rsplit("/", 1)[0] + "/kubectl", "kustomize", "deploy/k8s/overlays/linux-cpu"]
docs = [d for d in yaml.safe_load_all(subprocess.run(kubectl, check=True, capture_output=True, text=True).stdout) if d]
deployment = next(d for d in docs if d["kind"] == "Deployment")
deployment["spec"]["replicas"] = 1
container = deployment["spec"]["template"]["spec"]["containers"][0]
container["image"] = image
container["imagePullPolicy"] = "Never"
for port in container["ports"]:
    port["hostIP"], port["hostPort"] = "127.0.0.1", {"grpc": grpc, "metrics": metrics}[port["name"]]
with open(out, "w") as file:
    yaml.safe_dump(deployment, file)
EOF
    log "play kube: deploy/k8s/overlays/linux-cpu (rendered, 1 replica, host port $grpc)"
    podman play kube "$rendered" >"$WORK/play.log" 2>&1 || { cat "$WORK/play.log" >&2; fail "podman play kube"; }
    # The overlay runs two workers (DMLRPC_WORKERS) under its 4 GiB limit.
    smoke_outside "$grpc" --expect-workers 2 --metrics-url "http://127.0.0.1:$metrics/metrics" \
        || { podman logs "$(podman ps -q --filter label=io.kubernetes.container.name=dmlrpc | head -1)" >&2
             fail "play kube: no answer"; }
    [ "$(podman ps --format '{{.Names}}' --filter name=dmlrpc-pod | wc -l)" -eq 1 ] || fail "play kube: not one replica"
    podman play kube --down "$rendered" >/dev/null 2>&1
}

compose() {
    local grpc project="dmlrpc-lane-$$"
    grpc=$(free_port)
    log "compose: deploy/compose.yaml (service dmlrpc) on 127.0.0.1:$grpc"
    export DMLRPC_IMAGE="$IMAGE" DMLRPC_GRPC_HOST_PORT="$grpc" DMLRPC_METRICS_HOST_PORT
    DMLRPC_METRICS_HOST_PORT=$(free_port)
    podman-compose -f deploy/compose.yaml -p "$project" up --detach --no-build dmlrpc >"$WORK/compose.log" 2>&1 \
        || { cat "$WORK/compose.log" >&2; fail "podman-compose up"; }
    smoke_outside "$grpc" || { podman logs "${project}_dmlrpc_1" >&2; fail "compose: no answer"; }
    podman-compose -f deploy/compose.yaml -p "$project" down >>"$WORK/compose.log" 2>&1 \
        || { cat "$WORK/compose.log" >&2; fail "podman-compose down"; }
    [ -z "$(podman ps -aq)" ] || fail "podman-compose down left containers"
}

main() {
    local started
    started=$(date +%s)
    preflight
    BRIDGES_BEFORE="$(host_network_state)"
    CNI_CHAINS_BEFORE="$(iptables_cni_chains)"
    VAR_LIB_CONTAINERS_BEFORE=no
    [ -e /var/lib/containers ] && VAR_LIB_CONTAINERS_BEFORE=yes
    WORK="$(mktemp -d "${TMPDIR:-/var/tmp}/dmlrpc-container-lane.XXXXXX")"
    trap cleanup EXIT
    trap 'exit 143' TERM INT
    configure
    bootstrap_base
    probe_container
    build_image
    run_image
    tls_probes
    play_kube
    compose
    log "PASS in $(($(date +%s) - started)) s"
}

main "$@"
