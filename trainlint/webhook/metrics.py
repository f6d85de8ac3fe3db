"""Prometheus metrics of one webhook server, in its own registry (tests run several)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from trainlint.kinds import TRAINER_KINDS
from trainlint.webhook.admission import OPERATIONS

#: Sub-millisecond to the API server's 30 s ceiling.
BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        self.requests = Counter(
            "trainlint_webhook_requests", "Admission reviews answered.",
            ["kind", "operation", "decision"], registry=registry,
        )
        self.latency = Histogram(
            "trainlint_webhook_request_duration_seconds",
            "Time from the request handler's start to the answer.", buckets=BUCKETS,
            registry=registry,
        )
        self.in_flight = Gauge(
            "trainlint_webhook_in_flight_requests", "Requests being handled.", registry=registry
        )
        self.errors = Counter(
            "trainlint_webhook_errors", "Requests not checked, by reason.", ["reason"],
            registry=registry,
        )
        self.findings = Counter(
            "trainlint_webhook_findings", "Findings reported, by rule.", ["rule"],
            registry=registry,
        )
        self.cache_synced = Gauge(
            "trainlint_webhook_cache_synced", "1 once the kind's cache is fully listed.",
            ["kind"], registry=registry,
        )
        self.cache_objects = Gauge(
            "trainlint_webhook_cache_objects", "Objects held in the cache.", ["kind"],
            registry=registry,
        )
        self.certificate_expiry = Gauge(
            "trainlint_webhook_certificate_expiry_timestamp_seconds",
            "When the serving certificate expires (Unix time).", registry=registry,
        )

    def count(self, kind: str, operation: str, decision: str) -> None:
        """Labels from the request are bounded: anything unexpected is `other`."""
        self.requests.labels(
            kind if kind in TRAINER_KINDS else "other",
            operation if operation in OPERATIONS else "other",
            decision,
        ).inc()
