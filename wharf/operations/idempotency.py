"""Idempotency keys: the one algorithm behind every request recorded under an
``Idempotency-Key`` -- operations (``wharf.operations.service.Operations.submit``) and
upload sessions (``wharf.blobs.sessions.create_session``).

- A key is 16-200 characters of ``A-Z a-z 0-9 _ -`` (:func:`check_key`), scoped to its
  actor, and names one request: its fingerprint (:func:`fingerprint`, the canonical JSON
  of what it records and the request).
- Under a bound key, the same request is a replay, answered by what it recorded; a
  different one is 409 ``idempotency_key_reused`` naming what the key is bound to
  (:func:`check_same_request`). A unique constraint on (actor, key) decides between
  concurrent requests.
- A key is released ``WHARF_IDEMPOTENCY_KEY_TTL`` after its request is done
  (:func:`released_at`, :func:`done_before`; the ``release_idempotency_keys`` sweep), not
  when its row is deleted: after that it names nothing and a new request may take it.
"""
from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timedelta
from typing import Any

from wharf.operations.errors import (
    IdempotencyKeyRequired,
    IdempotencyKeyReused,
    InvalidIdempotencyKey,
)

#: The ``Idempotency-Key`` header (the API documents this very pattern).
IDEMPOTENCY_KEY_PATTERN = r"^[A-Za-z0-9_-]{16,200}$"
KEY_RE = re.compile(IDEMPOTENCY_KEY_PATTERN)


def fingerprint(kind: str, request: dict[str, Any]) -> str:
    canonical = json.dumps({"kind": kind, "request": request}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_key(key: str | None) -> str:
    if key is None or key == "":
        raise IdempotencyKeyRequired("Send an Idempotency-Key header (16-200 characters of "
                                     "A-Z a-z 0-9 _ -; a UUID fits).")
    if not KEY_RE.match(key):
        raise InvalidIdempotencyKey("The Idempotency-Key must be 16-200 characters of "
                                    "A-Z a-z 0-9 _ -.")
    return key


def check_same_request(recorded: str | None, fp: str, bound_to: dict[str, str]) -> None:
    """A bound key's request (``recorded``: its fingerprint; None: it recorded something
    else) against this one's (``fp``): a different request is 409
    ``idempotency_key_reused``, its ``details`` naming what the key is bound to."""
    if recorded != fp:
        raise IdempotencyKeyReused("This Idempotency-Key was used for a different request.",
                                   details=bound_to)


def released_at(done_at: datetime, ttl: int) -> datetime:
    """When the key of a request done at ``done_at`` is released (``ttl``:
    ``Settings.idempotency_key_ttl``)."""
    return done_at + timedelta(seconds=ttl)


def done_before(now: datetime, ttl: int) -> datetime:
    """The keys of requests done before this are released at ``now``."""
    return now - timedelta(seconds=ttl)
