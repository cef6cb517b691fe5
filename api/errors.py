"""Every error leaves as RFC 9457 ``application/problem+json`` with a stable ``code``.

Domain errors (:class:`wharf.infra.errors.WharfError`) map by their ``status`` and ``code``;
storage's errors (:class:`storage.errors.StorageError`) become domain errors first, through
the core's one mapping (:func:`wharf.infra.errors.from_storage`);
Falcon's own errors (unknown route, wrong method, bad header) get a code derived from the
status; anything else is logged and answered as a 500 ``internal_error`` problem.
"""
from __future__ import annotations

import json
import logging
from typing import Any

import falcon

from storage.errors import StorageError
from wharf.infra.errors import ProblemCode, WharfError, from_storage

log = logging.getLogger("wharf.api")

PROBLEM = "application/problem+json"

#: The ``code`` of Falcon's own errors, by status (others: ``http_error``).
FALCON_CODES = {
    400: "bad_request", 401: "unauthenticated", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 406: "not_acceptable", 409: "conflict", 411: "length_required",
    412: "precondition_failed", 413: "payload_too_large", 414: "uri_too_long",
    415: "unsupported_media_type", 416: "range_not_satisfiable", 428: "precondition_required",
    429: "too_many_requests", 431: "headers_too_large", 503: "service_unavailable",
}


#: The longest ``detail`` a problem carries (longer ones are cut, with an ellipsis).
MAX_DETAIL = 1000


def problem_document(status: int, code: str, title: str, detail: str | None = None,
                     extra: dict[str, Any] | None = None,
                     request_id: str | None = None) -> dict[str, Any]:
    """The problem document every problem answer carries: a top-level one (``_write``) and
    each problem item of a batch answer (``api.resources.batch``)."""
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status,
                            "code": code}
    if detail:
        # bounded: a message must never echo a large client input back
        body["detail"] = detail if len(detail) <= MAX_DETAIL else detail[:MAX_DETAIL] + "…"
    if extra:
        body.update(extra)
    if request_id:
        body["request_id"] = request_id
    return body


def error_document(ex: WharfError, request_id: str | None = None) -> dict[str, Any]:
    """A domain error's problem document (its ``details``, if any, as they are)."""
    extra = {"details": ex.details} if ex.details else None
    return problem_document(ex.status, ex.code, ex.title, ex.message, extra, request_id)


def _write(req: falcon.Request, resp: falcon.Response, status: int, code: str, title: str,
           detail: str | None, extra: dict[str, Any] | None = None,
           headers: dict[str, str] | None = None) -> None:
    _send(req, resp, problem_document(status, code, title, detail, extra,
                                      getattr(req.context, "request_id", None)), headers)


def _send(req: falcon.Request, resp: falcon.Response, body: dict[str, Any],
          headers: dict[str, str] | None = None) -> None:
    req.context.problem_code = body["code"]  # for what reads the answer after (api.refusals)
    resp.status = body["status"]
    resp.content_type = PROBLEM
    resp.text = json.dumps(body)
    resp.data = None
    resp.stream = None
    for k, v in (headers or {}).items():
        resp.set_header(k, v)


def write_problem(req: falcon.Request, resp: falcon.Response, status: int, *, code: str,
                  title: str, detail: str | None = None, extra: dict[str, Any] | None = None,
                  headers: dict[str, str] | None = None) -> None:
    """Answer with a problem document (for the few answers that are not raised errors)."""
    _write(req, resp, status, code, title, detail, extra, headers)


def handle_wharf_error(req: falcon.Request, resp: falcon.Response, ex: WharfError,
                       params: dict[str, Any]) -> None:
    _send(req, resp, error_document(ex, getattr(req.context, "request_id", None)), ex.headers)


def handle_storage_error(req: falcon.Request, resp: falcon.Response, ex: StorageError,
                         params: dict[str, Any]) -> None:
    handle_wharf_error(req, resp, from_storage(ex), params)


def handle_http_error(req: falcon.Request, resp: falcon.Response, ex: falcon.HTTPError,
                      params: dict[str, Any]) -> None:
    status = int(str(ex.status).split()[0]) if not isinstance(ex.status, int) else ex.status
    code = getattr(ex, "code", None) or FALCON_CODES.get(status, ProblemCode.HTTP_ERROR)
    headers = dict(ex.headers or {})
    _write(req, resp, status, str(code), ex.title or "Error", ex.description, None, headers)


def handle_unexpected(req: falcon.Request, resp: falcon.Response, ex: Exception,
                      params: dict[str, Any]) -> None:
    if isinstance(ex, falcon.HTTPStatus):
        raise ex
    # Falcon calls error handlers inside its except block: the traceback is there.
    log.exception("unhandled error on %s %s", req.method, req.path)  # noqa: LOG004
    _write(req, resp, 500, ProblemCode.INTERNAL_ERROR, "Internal server error",
           "Something went wrong on our side; the request id identifies it in the logs.")


def install(app: falcon.App[falcon.Request, falcon.Response]) -> None:
    app.add_error_handler(Exception, handle_unexpected)
    app.add_error_handler(falcon.HTTPError, handle_http_error)
    app.add_error_handler(WharfError, handle_wharf_error)
    app.add_error_handler(StorageError, handle_storage_error)
