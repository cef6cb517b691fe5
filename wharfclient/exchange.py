"""Office imports and exports (and takeouts) over HTTP, on top of ``wharfclient.transfer``.

Rules:
- An import reads an upload session's bytes (the PUT of :mod:`wharfclient.transfer`,
  no completion: no blob resource is made) or a blob resource: ``POST /api/imports``
  names the one or the other. The import's Idempotency-Key is derived from it
  (``import-<session or blob resource id>``): every retry of the submission, and a rerun
  that resumes the same upload session, replays the same import instead of starting a
  second one (the server answers 409 ``idempotency_key_reused`` if the rerun asks for
  something else, e.g. another name).
- An export (``POST /api/units/{id}/exports``) and a takeout (``POST
  /api/spaces/{id}/exports``, ``POST /api/me/exports``) are one operation each, submitted
  with one fresh key re-sent on every retry; their results share one shape (``export_id``,
  ``content_url``, ``size``, ``sha256``, ``expires_at``), which :func:`fetch_export`
  downloads: streamed into ``FILE.part``, resumed with ``Range``/``If-Range`` after a
  network error, checked against ``size`` and ``sha256`` before it becomes ``FILE``.
- ``content_url`` must be a path on the same server (``/api/...``): an absolute URL is
  refused, so the token is never sent to another host a server names.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from wharfclient.http import ApiError, WharfClient, new_key
from wharfclient.transfer import PREFER_WAIT, Progress, download_to

#: The formats ``POST /api/units/{id}/exports`` takes.
EXPORT_FORMATS = ("xlsx", "csv", "docx", "pptx")
#: The unit types ``POST /api/imports`` takes as ``unit_type``.
IMPORT_UNIT_TYPES = ("sheet", "doc", "slide")
_FILENAME_STAR = re.compile(r"filename\*\s*=\s*UTF-8''([^;]+)", re.IGNORECASE)
_FILENAME = re.compile(r'filename\s*=\s*"([^"]*)"', re.IGNORECASE)


def import_key(source_id: str) -> str:
    """The import's Idempotency-Key: derived from its upload session or blob resource."""
    return f"import-{source_id}"


def _submit(client: WharfClient, path: str, body: dict[str, Any], *, key: str,
            wait: bool) -> dict[str, Any]:
    op: dict[str, Any] = client.json("POST", path, key=key, json=body,
                                     headers=PREFER_WAIT if wait else {})
    return op


def submit_import(client: WharfClient, *, space_id: str, parent_id: str | None, name: str,
                  upload_session_id: str | None = None,
                  blob_resource_id: str | None = None, unit_type: str | None = None,
                  wait: bool = True) -> dict[str, Any]:
    """``POST /api/imports`` (operation ``import_file``) from an ``uploaded`` upload
    session (which the import consumes) or a blob resource, exactly one; ``wait``: ask the
    server to answer the finished operation if it is done soon (``Prefer: wait``)."""
    if (upload_session_id is None) == (blob_resource_id is None):
        raise ValueError("give exactly one of upload_session_id and blob_resource_id")
    body: dict[str, Any] = {"space_id": space_id, "parent_id": parent_id, "name": name}
    if upload_session_id is not None:
        body["upload_session_id"] = upload_session_id
    else:
        body["blob_resource_id"] = blob_resource_id
    if unit_type:
        body["unit_type"] = unit_type
    source = upload_session_id or blob_resource_id
    assert source is not None
    return _submit(client, "/api/imports", body, key=import_key(source), wait=wait)


def submit_export(client: WharfClient, unit_id: str, fmt: str, *, sheet: str | None = None,
                  wait: bool = True) -> dict[str, Any]:
    """``POST /api/units/{unit_id}/exports`` (operation ``export_unit``)."""
    body: dict[str, Any] = {"format": fmt}
    if sheet is not None:
        body["sheet"] = sheet
    return _submit(client, f"/api/units/{unit_id}/exports", body, key=new_key(), wait=wait)


def takeout_path(space_id: str | None) -> str:
    """The takeout route: a space's (``space_id``) or everything the user owns (None)."""
    return f"/api/spaces/{space_id}/exports" if space_id else "/api/me/exports"


def submit_takeout(client: WharfClient, space_id: str | None, *,
                   wait: bool = True) -> dict[str, Any]:
    """``POST /api/spaces/{space_id}/exports`` or ``POST /api/me/exports``."""
    return _submit(client, takeout_path(space_id), {}, key=new_key(), wait=wait)


def content_path(result: dict[str, Any]) -> str:
    """The result's ``content_url`` as a path on this server (an absolute URL, or
    anything that is not ``/api/...``, is refused)."""
    url = str(result.get("content_url") or "")
    if not url.startswith("/api/") or "//" in url or "\\" in url:
        raise ApiError(0, "Export refused", f"the operation names its file at {url[:120]!r}, "
                       "not a path on this server", "content_url_refused")
    return url


def suggested_filename(client: WharfClient, result: dict[str, Any]) -> str | None:
    """The file name the server suggests for the export (``Content-Disposition`` of a
    HEAD), unsanitised; None without one."""
    resp = client.request("HEAD", content_path(result))
    header = resp.headers.get("Content-Disposition", "")
    if m := _FILENAME_STAR.search(header):
        return unquote(m[1].strip(), errors="replace")
    if m := _FILENAME.search(header):
        return m[1]
    return None


def fetch_export(client: WharfClient, result: dict[str, Any], out: Path, progress: Progress,
                 *, overwrite: bool = False) -> dict[str, Any]:
    """Download a finished export's (or takeout's) file into ``out``, checked against the
    result's ``size`` and ``sha256``; returns ``path``, ``size``, ``sha256``,
    ``resumed_from`` (see :func:`wharfclient.transfer.download_to`)."""
    return download_to(client, content_path(result), out, progress,
                       size=int(result["size"]), sha256=str(result["sha256"]),
                       overwrite=overwrite,
                       what=f"export {result.get('export_id')}")
