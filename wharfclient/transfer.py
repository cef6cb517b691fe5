"""Uploads, downloads and waiting for operations, on top of ``WharfClient``.

Rules:
- Upload: create the session (one Idempotency-Key), PUT the bytes, POST ``/complete``
  with the key ``upload-complete-<session id>`` (derived, so a rerun with ``--resume``
  replays the same completion instead of starting a second one), then wait. The server
  has no ranged PUT (a second PUT replaces the first), so after a network error the PUT
  of the SAME session restarts from byte 0; a session that already holds the bytes
  (``uploaded``: the answer, not the PUT, was lost) is not sent again.
- Download (``download_to``: a blob resource's, an export's): into ``FILE.part`` with
  the file's ETag in ``FILE.part.etag``; a rerun (or a
  retry after a network error) asks ``Range: bytes=<size of .part>-`` with ``If-Range:
  <that ETag>``; a 206 appends, a 200 (the content changed) starts over. The finished file
  is checked against the declared SHA-256 before ``.part`` is renamed to FILE. The
  server is not trusted with the disk: the body stops being read the moment more than
  the declared size has arrived, and a 206 must say (``Content-Range``) that it starts
  where ``.part`` ends; either failure removes ``.part``. An existing FILE is replaced
  only when the caller asks (``overwrite``).
- Waiting is a long-poll (``?wait=``), never a busy loop; a request that starts an
  operation asks the server to wait on it first (``Prefer: wait=``, :data:`PREFER_WAIT`),
  so a quick operation needs no second request.
"""
from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import httpx

from wharfclient.http import ApiError, Unreachable, WharfClient, new_key

CHUNK = 1024 * 1024
#: Seconds one long-poll asks the server to hold (the server caps it lower if it must).
LONG_POLL = 20
DONE_STATUSES = frozenset({"completed", "failed"})
#: Sent with a request that starts an operation the caller will wait for: the server
#: answers with the finished operation if it is done within LONG_POLL seconds (RFC 7240).
PREFER_WAIT = {"Prefer": f"wait={LONG_POLL}"}

Progress = Callable[[int, int], None]  # (bytes so far, total)


def completion_key(session_id: str) -> str:
    return f"upload-complete-{session_id}"


def wait_operation(client: WharfClient, op_id: str, *,
                   timeout: float | None = None) -> dict[str, Any]:
    """Long-poll until the operation is done (or ``timeout`` seconds pass: the last seen)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        op: dict[str, Any] = client.json("GET", f"/api/operations/{op_id}",
                                         params={"wait": LONG_POLL})
        if op.get("done") or (deadline is not None and time.monotonic() >= deadline):
            return op


def file_chunks(f: BinaryIO, size: int, progress: Progress) -> Iterator[bytes]:
    f.seek(0)
    sent = 0
    progress(0, size)
    while sent < size:
        chunk = f.read(min(CHUNK, size - sent))
        if not chunk:
            raise OSError("the file shrank while it was being uploaded")
        sent += len(chunk)
        yield chunk
        progress(sent, size)


def put_session_content(client: WharfClient, session: dict[str, Any], f: BinaryIO,
                        progress: Progress) -> None:
    """PUT the whole file into the session, restarting the PUT after a network error."""
    sid, size = session["id"], int(session["size"])
    restarts = 0
    while True:
        try:
            client.request("PUT", f"/api/blob-upload-sessions/{sid}/content",
                           headers={"Content-Length": str(size),
                                    "Content-Type": "application/octet-stream"},
                           content=lambda: file_chunks(f, size, progress))
            return
        except Unreachable:
            restarts += 1
            if restarts > client.retries:
                raise
        # Did the bytes arrive and only the answer get lost?
        state = client.json("GET", f"/api/blob-upload-sessions/{sid}")
        if state["state"] != "waiting_for_upload":
            return


def create_session(client: WharfClient, *, space_id: str, filename: str, size: int,
                   parent_id: str | None) -> dict[str, Any]:
    body = {"space_id": space_id, "filename": filename, "size": size,
            "parent_id": parent_id}
    session: dict[str, Any] = client.json("POST", "/api/blob-upload-sessions", json=body,
                                          key=new_key())
    return session


def finish_upload(client: WharfClient, session: dict[str, Any], f: BinaryIO,
                  progress: Progress) -> dict[str, Any]:
    """From whatever state the session is in: PUT (if needed), complete, wait."""
    sid = session["id"]
    if session["state"] == "waiting_for_upload":
        put_session_content(client, session, f, progress)
    elif session["state"] not in ("uploaded", "verifying", "completed"):
        raise ApiError(409, "Upload session cannot continue",
                       f"session {sid} is {session['state']}", "upload_session_state")
    op: dict[str, Any] = client.json("POST", f"/api/blob-upload-sessions/{sid}/complete",
                                     key=completion_key(sid), headers=PREFER_WAIT)
    return op if op.get("done") else wait_operation(client, op["id"])


def blob_meta(client: WharfClient, resource_id: str) -> dict[str, Any]:
    meta: dict[str, Any] = client.json("GET", f"/api/blob-resources/{resource_id}")
    return meta


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


class BadDownload(ApiError):
    """The server's bytes are not the blob it declared; ``.part`` was removed."""

    def __init__(self, title: str, detail: str, code: str):
        super().__init__(0, title, detail, code)


_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


def download(client: WharfClient, resource_id: str, out: Path,
             progress: Progress, *, overwrite: bool = False) -> dict[str, Any]:
    """Download a blob resource into ``out`` (resuming ``out.part``); returns the blob
    metadata plus ``path`` and ``resumed_from`` (see :func:`download_to`)."""
    if not overwrite and (out.exists() or out.is_symlink()):
        raise FileExistsError(f"{out} exists; not replaced without overwrite=True")
    meta = blob_meta(client, resource_id)
    got = download_to(client, f"/api/blob-resources/{resource_id}/download", out, progress,
                      size=int(meta["size"]), sha256=meta["sha256"], etag=meta["etag"],
                      overwrite=overwrite, what=resource_id)
    return {**meta, **got}


def download_to(client: WharfClient, path: str, out: Path, progress: Progress, *,
                size: int, sha256: str, etag: str | None = None, overwrite: bool = False,
                what: str = "the file") -> dict[str, Any]:
    """GET ``path`` (a path on the client's server) into ``out``, resuming ``out.part``:
    the declared ``size`` and ``sha256`` are what the bytes must be; ``etag`` (when known
    before the first byte) is the If-Range of a later resume, else the first answer's
    ETag is. Returns ``path`` (of ``out``), ``size``, ``sha256`` and ``resumed_from``
    (bytes kept from an earlier partial download). A network error in the body is
    survived ``client.retries`` times, each time resuming from ``.part``. An existing
    ``out`` raises FileExistsError unless ``overwrite``; bytes that are not the declared
    ones raise :class:`BadDownload`."""
    if not overwrite and (out.exists() or out.is_symlink()):
        raise FileExistsError(f"{out} exists; not replaced without overwrite=True")
    part = out.with_name(out.name + ".part")
    etag_file = out.with_name(out.name + ".part.etag")
    if not (part.exists() and etag_file.exists()):
        part.write_bytes(b"")
        etag_file.write_text(etag or "", encoding="utf-8")
    resumed_from = part.stat().st_size
    restarts = 0
    while True:
        have = part.stat().st_size
        known = etag_file.read_text(encoding="utf-8").strip()  # a 200 rewrites it
        if have and not known:  # nothing to ask If-Range with: start over
            part.write_bytes(b"")
            have = 0
        headers = {"Range": f"bytes={have}-", "If-Range": known} if have else {}
        try:
            _fetch_into(client, path, part, headers, size, progress)
            break
        except (httpx.TransportError, Unreachable):
            restarts += 1
            if restarts > client.retries:
                raise Unreachable(f"download of {what} interrupted; rerun to resume "
                                  f"from {part.stat().st_size} bytes") from None
        except BadDownload:
            _discard(part, etag_file)
            raise
    if part.stat().st_size != size or _sha256_file(part) != sha256:
        _discard(part, etag_file)
        raise BadDownload("Download corrupt", "the bytes do not hash to the declared "
                          "SHA-256; the partial file was removed, run again",
                          "sha256_mismatch")
    os.replace(part, out)
    etag_file.unlink()
    return {"path": str(out), "size": size, "sha256": sha256, "resumed_from": resumed_from}


def _discard(part: Path, etag_file: Path) -> None:
    part.unlink(missing_ok=True)
    etag_file.unlink(missing_ok=True)


def _check_range(resp: httpx.Response, have: int, total: int) -> None:
    """A 206 must continue ``.part``: its Content-Range starts at ``have`` (the byte the
    client asked for) and names the declared size."""
    header = resp.headers.get("Content-Range", "")
    match = _CONTENT_RANGE.fullmatch(header.strip())
    if match is None or int(match[1]) != have or match[3] not in ("*", str(total)):
        raise BadDownload("Download refused", f"the server answered 206 with Content-Range "
                          f"{header[:80]!r} to a request for bytes {have}- of a "
                          f"{total}-byte blob", "content_range_mismatch")


def _fetch_into(client: WharfClient, path: str, part: Path, headers: dict[str, str],
                total: int, progress: Progress) -> None:
    """Append (206) or write afresh (200, recording its ETag) the answer's bytes, never
    more than ``total`` in all."""
    resp = client.request("GET", path, headers=headers, stream=True, ok=(416,))
    try:
        if resp.status_code == 416:  # nothing left to fetch: the .part is whole
            return
        whole = resp.status_code != 206
        if not whole:
            _check_range(resp, part.stat().st_size, total)
        if whole:  # the ETag first: an interruption below resumes against these bytes
            part.with_name(part.name + ".etag").write_text(resp.headers.get("ETag", ""),
                                                           encoding="utf-8")
        mode = "wb" if whole else "ab"
        with part.open(mode) as f:
            done = f.tell()
            progress(done, total)
            for chunk in resp.iter_bytes(CHUNK):
                if done + len(chunk) > total:  # stop now, before the excess reaches disk
                    raise BadDownload("Download refused", f"the server sent more than the "
                                      f"declared {total} bytes; the partial file was "
                                      "removed", "download_too_large")
                f.write(chunk)
                done += len(chunk)
                progress(done, total)
    finally:
        resp.close()
