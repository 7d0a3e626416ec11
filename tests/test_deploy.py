"""deploy/: hadolint, yamllint, kustomize and Helm renders validated strictly, and the project's own rules.

The checks live in tools/check-deploy.py. A missing tool skips its test locally and fails it when CI is set.
The negative tests feed each rule a broken manifest to prove that it can fail.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

try:
    import yaml  # noqa: F401  (tools/check-deploy.py needs it; it comes with yamllint and kubernetes-validate)
except ImportError:
    if os.environ.get("CI"):
        raise
    pytest.skip("PyYAML is not installed (pip install the deploy tools: see .ci/run)", allow_module_level=True)

_SPEC = importlib.util.spec_from_file_location("check_deploy", Path(__file__).parent.parent / "tools/check-deploy.py")
assert _SPEC is not None and _SPEC.loader is not None
check = importlib.util.module_from_spec(_SPEC)
sys.modules["check_deploy"] = check
_SPEC.loader.exec_module(check)


def needs(call: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a check; a missing tool skips (locally) or fails (CI)."""
    try:
        return call(*args, **kwargs)
    except check.ToolMissing as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have the deploy tools: {error}")
        pytest.skip(str(error))


@pytest.mark.parametrize("dockerfile", check.DOCKERFILES, ids=lambda p: p.name)
def test_hadolint(dockerfile: Path) -> None:
    assert needs(check.hadolint, dockerfile) == []


def test_hadolint_fails_on_a_bad_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM debian:latest\nRUN apt-get install curl\n")
    assert needs(check.hadolint, bad)


def test_yamllint() -> None:
    assert needs(check.yamllint) == []


def test_yamllint_fails_on_bad_yaml(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("---\nkey:   value\nkey: again\n")
    assert needs(check.yamllint, [tmp_path])


def test_windows_dockerfile_rules() -> None:
    text = (check.DEPLOY / "docker/Dockerfile.windows").read_text()
    assert check.check_windows_dockerfile(text) == []
    assert check.check_windows_constraints((check.DEPLOY / "requirements/windows.txt").read_text()) == []
    assert check.check_windows_consistency() == []


@pytest.mark.parametrize(
    ("old", "new", "finding"),
    [
        ("ARG WINDOWS_BUILD=10.0.20348", "ARG WINDOWS_BUILD=10.0.17763", "not the build of ltsc2022"),
        ("FROM mcr.microsoft.com/windows/server:", "FROM mcr.microsoft.com/windows/nanoserver:", "final stage"),
        ("msvc-runtime==14.44.35112 --hash=sha256:", "msvc-runtime==14.44.35112 --hash=md5:", "VC++ runtime"),
        ("Set-Content -Path C:\\msvc-runtime.txt", "Invoke-WebRequest -Uri https://example.com/vc.exe;", "download"),
        ("--require-hashes -r windows.txt", "-r windows.txt", "the lock deploy/requirements/windows.txt"),
        ("USER ContainerUser", "USER ContainerAdministrator", "ContainerUser"),
    ],
)
def test_windows_dockerfile_rules_fail(old: str, new: str, finding: str) -> None:
    text = (check.DEPLOY / "docker/Dockerfile.windows").read_text()
    assert old in text
    assert any(finding in error for error in check.check_windows_dockerfile(text.replace(old, new)))


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict[str, Any]]]:
    out = {f"kustomize:{name}": needs(check.kustomize, path) for name, path in check.KUSTOMIZE_TARGETS.items()}
    for values_file in check.HELM_VALUES:
        out[f"helm:{values_file}"] = needs(check.helm_render, check.helm_values(values_file))
    return out


TARGETS = [f"kustomize:{name}" for name in check.KUSTOMIZE_TARGETS] + [f"helm:{v}" for v in check.HELM_VALUES]


def provider_of(target: str) -> str | None:
    kind, name = target.split(":")
    return (check.PROVIDER_OF_TARGET if kind == "kustomize" else check.PROVIDER_OF_VALUES).get(name)


@pytest.mark.parametrize("target", TARGETS)
def test_schema_strict(rendered: dict[str, list[dict[str, Any]]], target: str) -> None:
    assert needs(check.validate, rendered[target]) == []


@pytest.mark.parametrize("target", TARGETS)
def test_project_rules(rendered: dict[str, list[dict[str, Any]]], target: str) -> None:
    assert check.check_manifests(rendered[target], provider_of(target)) == []


@pytest.mark.parametrize("values_file", check.HELM_VALUES)
def test_helm_lint(values_file: str) -> None:
    assert needs(check.helm_lint, values_file) == []


def test_helm_schema_rejects_bad_values() -> None:
    helm = needs(check._helm)
    with pytest.raises(helm.HelmError):
        helm.Chart.load(check.CHART).render({"platform": "macos"}, name="x", namespace="x")
    with pytest.raises(helm.HelmError, match=r"windows\.build"):
        helm.Chart.load(check.CHART).render(
            {"platform": "windows", "provider": "directml", "gpu": {"resourceName": "microsoft.com/directx"},
             "windows": {"ltsc": "ltsc2025", "build": "10.0.20348"}},
            name="x", namespace="x",
        )  # fmt: skip


@pytest.mark.parametrize(
    ("field", "value"),
    [("readinessProbe", {"grpc": {"port": "grpc"}}), ("livenesProbe", {"grpc": {"port": 50051}})],
    ids=["named-grpc-port", "unknown-field"],
)
def test_schema_rejects_bad_manifests(rendered: dict[str, list[dict[str, Any]]], field: str, value: Any) -> None:
    docs = copy.deepcopy(rendered["kustomize:linux-cpu"])
    _pod(docs)["containers"][0][field] = value
    assert needs(check.validate, docs, ["1.33.0"])


def _pod(docs: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]
    return spec


def _broken(rendered: dict[str, list[dict[str, Any]]], target: str, breaks: Any) -> list[str]:
    docs = copy.deepcopy(rendered[target])
    breaks(_pod(docs), docs)
    errors: list[str] = check.check_manifests(docs, provider_of(target))
    return errors


@pytest.mark.parametrize("target", ["kustomize:windows-directml", "helm:values-windows-directml.yaml"])
@pytest.mark.parametrize(
    ("breaks", "finding"),
    [
        (lambda pod, _: pod["securityContext"].update(runAsUser=1000), "Linux-only securityContext.runAsUser"),
        (lambda pod, _: pod["securityContext"].update(seccompProfile={"type": "RuntimeDefault"}), "seccompProfile"),
        (
            lambda pod, _: pod["containers"][0].update(securityContext={"readOnlyRootFilesystem": True}),
            "readOnlyRootFilesystem",
        ),
        (lambda pod, _: pod.update(hostPID=True), "hostPID"),
        (lambda pod, _: pod.pop("os"), "spec.os.name: windows"),
        (lambda pod, _: pod["nodeSelector"].update({"node.kubernetes.io/windows-build": "10.0.26100"}), "ltsc2022"),
        (lambda pod, _: pod["nodeSelector"].pop("node.kubernetes.io/windows-build"), "windows-build"),
        (lambda pod, _: pod["containers"][0].update(image="dmlrpc:latest"), "no -ltscYYYY"),
        (lambda pod, _: pod["containers"][0]["resources"]["limits"].clear(), "without a GPU limit"),
    ],
)
def test_windows_rules_fail(rendered: dict[str, list[dict[str, Any]]], target: str, breaks: Any, finding: str) -> None:
    assert any(finding in error for error in _broken(rendered, target, breaks))


@pytest.mark.parametrize("target", ["kustomize:linux-cuda", "helm:values-linux-cuda.yaml"])
def test_gpu_rule_fails_without_the_gpu(rendered: dict[str, list[dict[str, Any]]], target: str) -> None:
    def breaks(pod: dict[str, Any], _: Any) -> None:
        for key in ("limits", "requests"):
            pod["containers"][0]["resources"][key].pop("nvidia.com/gpu")

    assert any("without a GPU limit" in e for e in _broken(rendered, target, breaks))


def _set_probe_port(pod: dict[str, Any], _: Any) -> None:
    pod["containers"][0]["livenessProbe"]["grpc"]["port"] = 9464


def _http_probe(pod: dict[str, Any], _: Any) -> None:
    pod["containers"][0]["readinessProbe"] = {"httpGet": {"path": "/metrics", "port": 9464}}


@pytest.mark.parametrize("target", ["kustomize:linux-cpu", "helm:values.yaml"])
@pytest.mark.parametrize(
    ("breaks", "finding"),
    [
        (_set_probe_port, "livenessProbe probes port 9464"),
        (_http_probe, "readinessProbe is not a gRPC probe"),
        (lambda pod, _: pod["containers"][0].pop("startupProbe"), "no startupProbe"),
        (lambda pod, _: pod["containers"][0]["args"].__setitem__(1, "127.0.0.1"), "0.0.0.0"),
        (lambda _, docs: docs.remove(next(d for d in docs if d["kind"] == "PodDisruptionBudget")), "no PodDisruption"),
        (
            lambda _, docs: next(d for d in docs if d["kind"] == "Service")["spec"].pop("clusterIP"),
            "no headless Service",
        ),
    ],
)
def test_probe_and_service_rules_fail(
    rendered: dict[str, list[dict[str, Any]]], target: str, breaks: Any, finding: str
) -> None:
    assert any(finding in error for error in _broken(rendered, target, breaks))


def test_linux_pods_are_hardened(rendered: dict[str, list[dict[str, Any]]]) -> None:
    for target in ("kustomize:linux-cpu", "kustomize:linux-cuda", "helm:values.yaml", "helm:values-linux-cuda.yaml"):
        pod = _pod(rendered[target])
        assert pod["securityContext"]["runAsNonRoot"] is True
        security = pod["containers"][0]["securityContext"]
        assert security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False


def _set_env(name: str, value: str) -> Any:
    def breaks(pod: dict[str, Any], _: Any) -> None:
        env = pod["containers"][0]["env"]
        env[:] = [item for item in env if item["name"] != name] + [{"name": name, "value": value}]

    return breaks


def _drop_env(name: str) -> Any:
    def breaks(pod: dict[str, Any], _: Any) -> None:
        env = pod["containers"][0]["env"]
        env[:] = [item for item in env if item["name"] != name]

    return breaks


@pytest.mark.parametrize("target", TARGETS)
def test_memory_limits_fit_the_container(rendered: dict[str, list[dict[str, Any]]], target: str) -> None:
    """What the server may hold, as the manifests bound it, fits the memory limit (the rule's own arithmetic)."""
    container = _pod(rendered[target])["containers"][0]
    budget, unset = check.memory_budget(container)
    assert unset == []
    assert 0 < budget <= check.memory_quantity(container["resources"]["limits"]["memory"])


def test_memory_budget_of_linux_cpu(rendered: dict[str, list[dict[str, Any]]]) -> None:
    """2 workers x (512 MiB runtime + 12 x 32 MiB messages + 512 MiB of pools) + 384 MiB of shared totals + 128 MiB
    of supervisor: 3328 MiB."""
    container = _pod(rendered["kustomize:linux-cpu"])["containers"][0]
    assert check._setting(container, "--workers") == "2"
    assert check.memory_budget(container) == (3328 * 2**20, [])
    assert check.memory_quantity("4Gi") == 4 * 2**30 and check.memory_quantity("512M") == 512 * 10**6


@pytest.mark.parametrize("target", ["kustomize:linux-cpu", "helm:values.yaml", "kustomize:windows-directml"])
@pytest.mark.parametrize(
    ("breaks", "finding"),
    [
        (_set_env("DMLRPC_WORKERS", "8"), "more than its memory limit"),
        (_set_env("DMLRPC_MAX_MESSAGE_BYTES", str(2**30)), "more than its memory limit"),
        (_drop_env("DMLRPC_RESIDENT_BYTES_TOTAL"), "--resident-bytes-total left at the server's defaults"),
        (_drop_env("DMLRPC_MAX_CONCURRENT_REQUESTS"), "--max-concurrent-requests left at the server's defaults"),
        (_set_env("DMLRPC_RESIDENT_BYTES_PER_CALLER", str(2**40)), "per caller exceed the total"),
        (lambda pod, _: pod["containers"][0]["resources"]["limits"].pop("memory"), "no memory limit"),
        (lambda pod, _: pod["containers"][0].update(image="dmlrpc:0.1.0-linux-cpu"), "names no registry"),
        (lambda pod, _: pod["containers"][0].update(image="registry.example.com/dmlrpc"), "has no tag"),
        (lambda _, docs: docs.remove(next(d for d in docs if d["kind"] == "NetworkPolicy")), "no NetworkPolicy"),
    ],
)
def test_memory_image_and_network_rules_fail(
    rendered: dict[str, list[dict[str, Any]]], target: str, breaks: Any, finding: str
) -> None:
    assert any(finding in error for error in _broken(rendered, target, breaks))


TLS_VALUES = {
    "tls": {"secretName": "dmlrpc-tls", "serverName": "dmlrpc.dmlrpc.svc", "clientCA": True},
    "auth": {"secretName": "dmlrpc-auth"},
}


@pytest.mark.parametrize("values_file", ["values.yaml", "values-windows-directml.yaml"])
def test_helm_tls_and_tokens(values_file: str) -> None:
    """Given the Secrets, the chart mounts them, points the server at them and probes health over TLS."""
    docs = needs(check.helm_render, {**check.helm_values(values_file), **TLS_VALUES})
    assert needs(check.validate, docs) == []
    assert check.check_manifests(docs, check.PROVIDER_OF_VALUES[values_file]) == []
    pod = _pod(docs)
    container = pod["containers"][0]
    assert check._setting(container, "--tls-cert-file") == "/etc/dmlrpc/tls/tls.crt"
    assert check._setting(container, "--tls-client-ca-file") == "/etc/dmlrpc/tls/ca.crt"
    assert check._setting(container, "--auth-tokens-file") == "/etc/dmlrpc/auth/tokens"
    assert {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v} == {
        "tls": "dmlrpc-tls",
        "auth": "dmlrpc-auth",
    }
    assert all("exec" in container[kind] for kind in ("startupProbe", "readinessProbe", "livenessProbe"))


@pytest.mark.parametrize("target", ["kustomize:linux-cpu-tls", "helm:tls"])
def test_tls_probe_rule_fails_on_a_plaintext_probe(rendered: dict[str, list[dict[str, Any]]], target: str) -> None:
    docs = rendered[target] if target in rendered else needs(check.helm_render, TLS_VALUES)

    def breaks(pod: dict[str, Any], _: Any) -> None:
        pod["containers"][0]["readinessProbe"] = {"grpc": {"port": 50051}}

    broken = copy.deepcopy(docs)
    breaks(_pod(broken), broken)
    assert any("must exec a TLS health check" in e for e in check.check_manifests(broken, "cpu"))


MODEL_VALUES = check.MODEL_REPOSITORY_VALUES


@pytest.mark.parametrize("values_file", ["values.yaml", "values-windows-directml.yaml"])
def test_helm_mounts_a_model_repository(values_file: str) -> None:
    """Given a volume, the chart mounts it read-only and points the server's Open Inference Protocol at it."""
    docs = needs(check.helm_render, {**check.helm_values(values_file), **MODEL_VALUES})
    assert needs(check.validate, docs) == []
    assert check.check_manifests(docs, check.PROVIDER_OF_VALUES[values_file]) == []
    pod = _pod(docs)
    container = pod["containers"][0]
    assert check._setting(container, "--model-repository") == "/models"
    assert check._setting(container, "--model-control-mode") == "explicit"
    assert json.loads(check._env(container, "DMLRPC_LOAD_MODEL") or "") == ["simple", "relu_add"]
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == "models"]
    assert mount == {"name": "models", "mountPath": "/models", "readOnly": True}
    (volume,) = [v for v in pod["volumes"] if v["name"] == "models"]
    assert volume["persistentVolumeClaim"]["claimName"] == "models"
    # Without a volume there is no repository.
    plain = _pod(needs(check.helm_render, check.helm_values(values_file)))["containers"][0]
    assert check._setting(plain, "--model-repository") is None


def _writable_models(pod: dict[str, Any], _: Any) -> None:
    for mount in pod["containers"][0]["volumeMounts"]:
        if mount["name"] == "models":
            mount["readOnly"] = False


def _unmounted_models(pod: dict[str, Any], _: Any) -> None:
    pod["containers"][0]["volumeMounts"] = [m for m in pod["containers"][0]["volumeMounts"] if m["name"] != "models"]


@pytest.mark.parametrize(
    ("breaks", "finding"),
    [
        (_writable_models, "must be mounted readOnly"),
        (_unmounted_models, "is not a volume mount"),
        (_set_env("DMLRPC_LOAD_MODEL", "simple"), "JSON list"),
        (_set_env("DMLRPC_MODEL_CONTROL_MODE", "poll"), "not none or explicit"),
    ],
)
def test_model_repository_rule_fails(breaks: Any, finding: str) -> None:
    docs = needs(check.helm_render, MODEL_VALUES)
    broken = copy.deepcopy(docs)
    breaks(_pod(broken), broken)
    assert any(finding in e for e in check.check_manifests(broken, "cpu"))


def test_helm_model_repository_values_are_checked() -> None:
    helm = needs(check._helm)
    with pytest.raises(helm.HelmError, match=r"controlMode"):
        helm.Chart.load(check.CHART).render({"modelRepository": {"controlMode": "poll"}}, name="x", namespace="x")


def test_helm_tls_needs_a_server_name() -> None:
    helm = needs(check._helm)
    with pytest.raises(helm.HelmError, match=r"tls\.serverName"):
        helm.Chart.load(check.CHART).render({"tls": {"secretName": "x"}}, name="x", namespace="x")
