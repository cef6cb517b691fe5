"""Liveness, readiness, dependency details, metrics and the OpenAPI document."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon
import msgspec

from api import contract
from api.contract import App
from api.schemas.system import Check, CheckState, HealthStatus, Readiness
from api.schemas.system import Health as HealthBody
from api.schemas.system import HealthDetails as HealthDetailsBody
from wharf.infra.errors import Unauthenticated
from wharf.observability import metrics
from wharf.observability.metrics import Dependencies, token_ok

RETRY_AFTER = "5"


class Health:
    @contract.op(operation_id="healthz", summary="Liveness", tags=["system"],
                 description="The process answers; nothing else is checked.",
                 responses={200: HealthBody}, auth="none")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = HealthBody(status=HealthStatus.OK)


class Ready:
    """Readiness: can this process accept requests? Only the product database counts: the
    broker and the blob store are shared by every replica, and the API rides out their
    outages (the outbox keeps submissions; uploads fail with their own errors), so pulling
    every replica out of the load balancer would only turn a partial outage into a full one.
    Their status is in ``/healthz/details`` and in ``wharf_dependency_up``."""

    def __init__(self, checks: dict[str, Callable[[], None]]):
        self.checks = Dependencies(checks, ttl=0)

    @contract.op(operation_id="readyz", summary="Readiness: the database answers",
                 tags=["system"],
                 description="200 when the database answers; otherwise 503 with the same "
                             "report (`status: unavailable`, each check's state) and "
                             "`Retry-After`.",
                 responses={200: Readiness,
                            503: contract.Answer(Readiness, "not ready: the database does "
                                                 "not answer", headers=("Retry-After",))},
                 auth="none")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        results = self.checks.run()
        ok = all(error is None for error in results.values())
        checks = {name: "ok" if error is None else f"error: {error.type}"
                  for name, error in results.items()}
        resp.media = Readiness(status=HealthStatus.OK if ok else HealthStatus.UNAVAILABLE,
                               checks=checks)
        if not ok:
            resp.status = falcon.HTTP_503
            resp.set_header("Retry-After", RETRY_AFTER)


def _require_metrics_token(req: falcon.Request, token: str | None) -> None:
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

    def __init__(self, dependencies: Dependencies, token: str | None = None):
        self.dependencies = dependencies
        self.token = token

    @contract.op(operation_id="healthDetails", summary="Every dependency with its status",
                 tags=["system"],
                 description="Database, broker, blob store and unit store with their status "
                             "(cached for WHARF_METRICS_CACHE_SECONDS). `ok`/`degraded` "
                             "answer 200, `unavailable` (the database is down) 503 with the "
                             "same report. Needs `Authorization: Bearer "
                             "<WHARF_METRICS_TOKEN>` when that is set.",
                 responses={200: HealthDetailsBody,
                            503: contract.Answer(HealthDetailsBody,
                                                 "unavailable: the database does not answer",
                                                 headers=("Retry-After",))},
                 auth="metrics")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _require_metrics_token(req, self.token)
        results = self.dependencies.results()
        if results.get("database") is not None:
            status = HealthStatus.UNAVAILABLE
        elif any(error is not None for error in results.values()):
            status = HealthStatus.DEGRADED
        else:
            status = HealthStatus.OK
        resp.media = HealthDetailsBody(status=status, checks={
            name: Check(CheckState.OK) if error is None else
            Check(CheckState.DOWN, error.detail if self.token else error.type)
            for name, error in results.items()})
        if status == HealthStatus.UNAVAILABLE:
            resp.status = falcon.HTTP_503
            resp.set_header("Retry-After", RETRY_AFTER)


class OpenApi:
    """The OpenAPI document of the app this resource is mounted in (built on first use)."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._document: dict[str, Any] | None = None
        self._body: bytes | None = None

    def document(self) -> dict[str, Any]:
        if self._document is None:
            self._document = contract.document(self.app)
        return self._document

    @contract.op(operation_id="openapi", summary="This document", tags=["system"],
                 description="The OpenAPI 3.1 document of this server, generated from the "
                             "typed contract of every mounted route.",
                 responses={200: contract.Answer(schema={"type": "object"},
                                                 description="the OpenAPI document")},
                 auth="none")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        if self._body is None:
            self._body = msgspec.json.encode(self.document())
        resp.data = self._body
        resp.content_type = "application/json"


class Metrics:
    """Prometheus exposition: process counters plus database-derived gauges (cached)."""

    def __init__(self, collector: metrics.DatabaseCollector, token: str | None = None):
        self.collector = collector
        self.token = token

    @contract.op(operation_id="metrics", summary="Prometheus metrics", tags=["system"],
                 description="Process counters and database-derived gauges in the text "
                             "exposition format. Needs `Authorization: Bearer "
                             "<WHARF_METRICS_TOKEN>` when that is set.",
                 responses={200: contract.Answer(schema={"type": "string"},
                                                 content_type="text/plain",
                                                 description="text exposition format")},
                 auth="metrics")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _require_metrics_token(req, self.token)
        body, ctype = metrics.render(self.collector)
        resp.data = body
        resp.content_type = ctype
