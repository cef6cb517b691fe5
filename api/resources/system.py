"""Liveness, readiness, dependency details, metrics and the OpenAPI document."""
from __future__ import annotations

import json
from typing import Callable

import falcon

from api.openapi import SPEC
from wharf import metrics
from wharf.errors import Unauthenticated
from wharf.metrics import Dependencies, token_ok


class Health:
    anonymous_ok = True

    def on_get(self, req, resp):
        resp.media = {"status": "ok"}


class Ready:
    """Readiness: can this process accept requests? Only the product database counts: the
    broker and the blob store are shared by every replica, and the API rides out their
    outages (the outbox keeps submissions; uploads fail with their own errors), so pulling
    every replica out of the load balancer would only turn a partial outage into a full one.
    Their status is in ``/healthz/details`` and in ``wharf_dependency_up``."""

    anonymous_ok = True

    def __init__(self, checks: dict[str, Callable[[], None]]):
        self.checks = Dependencies(checks, ttl=0)

    def on_get(self, req, resp):
        results = self.checks.run()
        ok = all(error is None for error in results.values())
        resp.media = {"status": "ok" if ok else "unavailable",
                      "checks": {name: "ok" if error is None else f"error: {error.type}"
                                 for name, error in results.items()}}
        if not ok:
            resp.status = falcon.HTTP_503
            resp.set_header("Retry-After", "5")


def _require_metrics_token(req, token: str | None) -> None:
    if not token_ok(token, req.get_header("Authorization")):
        raise Unauthenticated("Send 'Authorization: Bearer <WHARF_METRICS_TOKEN>'.",
                              code="invalid_metrics_token")


class HealthDetails:
    """Every dependency with its status: ``ok`` when all answer, ``degraded`` when the
    database answers but something else does not (200), ``unavailable`` when the database
    does not (503). Guarded by ``WHARF_METRICS_TOKEN`` when one is set.

    The checks are those of ``/metrics``, cached for ``WHARF_METRICS_CACHE_SECONDS``: a
    burst of requests during an outage runs them once. An error is its type only, unless a
    metrics token is configured (and was presented): then operator messages (such as the
    name of a missing bucket) are shown too."""

    anonymous_ok = True

    def __init__(self, dependencies: Dependencies, token: str | None = None):
        self.dependencies = dependencies
        self.token = token

    def on_get(self, req, resp):
        _require_metrics_token(req, self.token)
        results = self.dependencies.results()
        if results.get("database") is not None:
            status = "unavailable"
        elif any(error is not None for error in results.values()):
            status = "degraded"
        else:
            status = "ok"
        resp.media = {"status": status, "checks": {
            name: {"status": "ok"} if error is None else
            {"status": "down", "error": error.detail if self.token else error.type}
            for name, error in results.items()}}
        if status == "unavailable":
            resp.status = falcon.HTTP_503
            resp.set_header("Retry-After", "5")


class OpenApi:
    anonymous_ok = True

    def __init__(self):
        self._body = None

    def on_get(self, req, resp):
        if self._body is None:
            self._body = json.dumps(SPEC).encode()
        resp.data = self._body
        resp.content_type = "application/json"


class Metrics:
    """Prometheus exposition: process counters plus database-derived gauges (cached)."""

    anonymous_ok = True

    def __init__(self, collector: metrics.DatabaseCollector, token: str | None = None):
        self.collector = collector
        self.token = token

    def on_get(self, req, resp):
        _require_metrics_token(req, self.token)
        body, ctype = metrics.render(self.collector)
        resp.data = body
        resp.content_type = ctype
