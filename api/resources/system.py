"""Liveness, readiness and the OpenAPI document."""
from __future__ import annotations

import json
import logging
from typing import Callable

import falcon

from api.openapi import SPEC

log = logging.getLogger("wharf.api")


class Health:
    anonymous_ok = True

    def on_get(self, req, resp):
        resp.media = {"status": "ok"}


class Ready:
    """Each check is a callable that raises when its dependency is not usable."""

    anonymous_ok = True

    def __init__(self, checks: dict[str, Callable[[], None]]):
        self.checks = checks

    def on_get(self, req, resp):
        results, ok = {}, True
        for name, check in self.checks.items():
            try:
                check()
                results[name] = "ok"
            except Exception as exc:  # any failure means "not ready"; say which
                ok = False
                results[name] = f"error: {type(exc).__name__}"
                if getattr(exc, "operator_message", False):  # a deployment problem: say it
                    results[name] += f": {exc}"
                log.warning("readiness check %s failed: %s", name, exc)
        resp.media = {"status": "ok" if ok else "unavailable", "checks": results}
        if not ok:
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
    """Prometheus exposition: process counters plus database-derived gauges."""

    anonymous_ok = True

    def __init__(self, db):
        self.db = db

    def on_get(self, req, resp):
        from wharf import metrics
        body, ctype = metrics.render(self.db)
        resp.data = body
        resp.content_type = ctype
