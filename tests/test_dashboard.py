"""deploy/'s Grafana dashboard, Prometheus scrape config and alert rules name only metrics that a real server exports
(scraped from a --workers 2 server that served operators and models), and the Helm chart installs the dashboard."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import grpc
import numpy as np
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from tritonclient.grpc import service_pb2, service_pb2_grpc

import dmlrpc
from tests.oip.repository import build
from tests.service.test_workers import OWN_CONNECTION, Workers
from tests.test_deploy import check, needs

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "deploy/helm/dmlrpc/dashboards/dmlrpc.json"
PROMETHEUS = ROOT / "deploy/prometheus/prometheus.yml"
ALERTS = ROOT / "deploy/prometheus/alerts.yml"

#: PromQL's functions, aggregations and keywords that the queries use (anything else must be a metric).
PROMQL = {
    "sum", "avg", "max", "min", "count", "rate", "increase", "irate", "histogram_quantile", "avg_over_time",
    "max_over_time", "by", "without", "on", "ignoring", "and", "or", "unless", "bool", "abs", "clamp_min",
}  # fmt: skip
#: Series a histogram or counter family exposes, by its type.
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "info": ("_info",)}


def metric_names(expr: str) -> set[str]:
    """The metric names one PromQL expression reads (strings, label matchers, ranges and grouping labels removed).

    Raises:
        AssertionError: the expression names a function or keyword this checker does not know.
    """
    expr = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", "", expr)
    expr = re.sub(r"\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    names = set()
    for word in re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", expr):
        if word in PROMQL:
            continue
        assert word.startswith("dmlrpc_"), f"{word!r} in {expr!r} is neither PromQL this test knows nor a metric"
        names.add(word)
    return names


def dashboard_queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        if isinstance(query, dict):
            # label_values(metric, label): the metric is what must exist.
            queries += re.findall(r"label_values\((\w+),", query["query"])
    return queries


def alert_rules() -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Every series name a --workers 2 server exports once it has run an operator and a model (its families
    without samples too, by their type)."""
    repository = build(tmp_path_factory.mktemp("models"))
    server = Workers("--model-repository", str(repository))
    try:
        with dmlrpc.Client(f"127.0.0.1:{server.port}", timeout=30, options=OWN_CONNECTION) as client:
            client.top_k(np.arange(8, dtype=np.float32), 2)
        with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=OWN_CONNECTION) as channel:
            a = np.arange(16, dtype=np.int32).tobytes()
            inputs = [
                service_pb2.ModelInferRequest.InferInputTensor(name=name, datatype="INT32", shape=[1, 16])
                for name in ("INPUT0", "INPUT1")
            ]
            request = service_pb2.ModelInferRequest(model_name="simple", inputs=inputs, raw_input_contents=[a, a])
            service_pb2_grpc.GRPCInferenceServiceStub(channel).ModelInfer(request, timeout=30)
        with urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics", timeout=10) as response:
            text = response.read().decode()
    finally:
        server.process.close()
    names = set()
    for family in text_string_to_metric_families(text):
        names.add(family.name)
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ()))
        names.update(sample.name for sample in family.samples)
    return names


def test_the_checker_finds_the_metrics_and_refuses_the_unknown() -> None:
    expr = 'histogram_quantile(0.99, sum by (le, operator) (rate(dmlrpc_x_bucket{job=~"$job"}[$__rate_interval])))'
    assert metric_names(expr) == {"dmlrpc_x_bucket"}
    with pytest.raises(AssertionError, match="neither PromQL"):
        metric_names("predict_linear(dmlrpc_x[5m], 60)")


def test_every_dashboard_query_names_exported_metrics(exported: set[str]) -> None:
    queries = dashboard_queries()
    assert len(queries) > 20
    unknown = {name: q for q in queries for name in metric_names(q) if name not in exported}
    assert not unknown, f"the dashboard reads metrics the server does not export: {unknown}"
    assert "dmlrpc_nonexistent_total" not in exported  # the set is the scrape's, not everything


def test_every_alert_names_exported_metrics(exported: set[str]) -> None:
    rules = alert_rules()
    names = {rule["alert"] for rule in rules}
    assert names >= {"DmlrpcQueueBacklog", "DmlrpcInternalErrors", "DmlrpcCallMemoryNearLimit"}
    for rule in rules:
        assert rule["labels"]["severity"] in ("warning", "critical") and rule["annotations"]["summary"]
        unknown = metric_names(rule["expr"]) - exported
        assert not unknown, f"alert {rule['alert']} reads metrics the server does not export: {unknown}"


def test_the_scrape_config_loads_the_alert_rules() -> None:
    config = yaml.safe_load(PROMETHEUS.read_text())
    assert [(PROMETHEUS.parent / path).resolve() for path in config["rule_files"]] == [ALERTS.resolve()]
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert jobs["dmlrpc"]["static_configs"][0]["targets"] == ["localhost:9464"]  # the server's default metrics port
    assert "kubernetes_sd_configs" in jobs["dmlrpc-kubernetes"]


def test_the_dashboard_covers_what_operators_watch() -> None:
    queries = " ".join(dashboard_queries())
    for metric in (
        "dmlrpc_requests_total",  # request rate per operator
        "dmlrpc_request_duration_seconds_bucket",  # latency per operator
        "dmlrpc_model_requests_total",  # request rate per model
        "dmlrpc_model_request_duration_seconds_total",  # latency per model
        "dmlrpc_queued_requests",  # queue depth
        "dmlrpc_batch_size_bucket",  # batch sizes
        "dmlrpc_call_memory_bytes",  # memory held
        "dmlrpc_provider_fallbacks_total",  # fallbacks
        "dmlrpc_workers",  # workers
    ):
        assert metric in queries, metric


def test_the_helm_chart_installs_the_dashboard_for_grafanas_sidecar() -> None:
    values = {"grafanaDashboard": {"enabled": True, "annotations": {"grafana_folder": "dmlrpc"}}}
    docs = needs(check.helm_render, values)
    assert needs(check.validate, docs) == []
    assert check.check_manifests(docs, "cpu") == []
    (config_map,) = [doc for doc in docs if doc["kind"] == "ConfigMap"]
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["metadata"]["annotations"] == {"grafana_folder": "dmlrpc"}
    assert json.loads(config_map["data"]["dmlrpc.json"]) == json.loads(DASHBOARD.read_text())
    assert not [doc for doc in needs(check.helm_render, {}) if doc["kind"] == "ConfigMap"]  # off by default
