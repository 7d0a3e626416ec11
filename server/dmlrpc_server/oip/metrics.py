"""Prometheus families of the served models' statistics (the numbers ModelStatistics reports), read at scrape."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from dmlrpc_server.oip.repository import Model

_NS = 1e-9


class ModelCollector(Collector):
    """Per model version: inferences (batch items), executions (model runs), requests by outcome and their time,
    and queue time; no second set of books: each scrape reads the versions' own statistics. With several workers the
    supervisor sums them, as it sums every family."""

    def __init__(self, served: Callable[[], list[Model]]) -> None:
        self._served = served

    def collect(self) -> Iterator[CounterMetricFamily]:
        labels = ["model", "version"]
        inferences = CounterMetricFamily(
            "dmlrpc_model_inferences", "Batch items a model version ran (Open Inference Protocol)", labels=labels
        )
        executions = CounterMetricFamily(
            "dmlrpc_model_executions", "Runs of a model version (a run may hold several requests)", labels=labels
        )
        requests = CounterMetricFamily(
            "dmlrpc_model_requests",
            "Inference requests a model version answered, by outcome",
            labels=[*labels, "outcome"],
        )
        seconds = CounterMetricFamily(
            "dmlrpc_model_request_duration_seconds",
            "Time of a model version's inference requests from arrival to answer, by outcome",
            labels=[*labels, "outcome"],
        )
        queued = CounterMetricFamily(
            "dmlrpc_model_queue_duration_seconds", "Time a model version's requests waited in its queue", labels=labels
        )
        for model in self._served():
            for number, version in sorted(model.versions.items()):
                stats, key = version.stats, [model.name, str(number)]
                inferences.add_metric(key, stats.inference_count)
                executions.add_metric(key, stats.execution_count)
                for outcome, duration in (("success", stats.success), ("failure", stats.fail)):
                    requests.add_metric([*key, outcome], duration.count)
                    seconds.add_metric([*key, outcome], duration.ns * _NS)
                queued.add_metric(key, stats.queue.ns * _NS)
        yield from (inferences, executions, requests, seconds, queued)
