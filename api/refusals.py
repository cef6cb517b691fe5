"""Refused writes into the audit trail (``wharf.audittrail.refusals``): a ``POST``, ``PUT``,
``PATCH`` or ``DELETE`` on a known route answered 403 or 404 is recorded, rate limited,
after the answer is final (the request's own transaction rolled back long before)."""
from __future__ import annotations

from collections.abc import Callable

import falcon

from storage.db import Database
from wharf.audittrail import refusals
from wharf.infra.context import ANONYMOUS, RequestContext
from wharf.infra.settings import Settings


class RefusedWriteMiddleware:
    def __init__(self, db: Database, settings: Settings,
                 client_ip: Callable[[falcon.Request], str | None]) -> None:
        self.db, self.settings, self.client_ip = db, settings, client_ip

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: object,
                         req_succeeded: bool) -> None:
        status = resp.status_code
        if req.uri_template is None or not refusals.is_refused_write(req.method, status):
            return
        ctx = getattr(req.context, "ctx", None)
        if ctx is None:  # refused before the principal was known (a disabled account)
            ctx = RequestContext(principal=ANONYMOUS,
                                 request_id=getattr(req.context, "request_id", None),
                                 client_ip=self.client_ip(req), user_agent=req.user_agent)
        refusals.refused_write(self.db, self.settings, ctx, req.method, req.uri_template,
                               status, getattr(req.context, "problem_code", None))
