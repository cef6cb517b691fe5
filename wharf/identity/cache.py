"""The per-process cache of authenticated credentials (:class:`AuthCache`).

Each API process keeps the principals of recently used tokens and session cookies, keyed
by the SHA-256 of the credential, for at most ``WHARF_AUTH_CACHE_SECONDS``. Any change to
an API token, login session or user row made through the ORM in this process (revocation,
logout, an expiry moved, a user removed: whatever code does it) drops the credentials
concerned from every cache of the process, at flush and again after commit
(``wharf.identity.service`` describes the whole rule).
"""
from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import event
from sqlalchemy.orm import Session

from storage.db import after_commit
from storage.models import ApiToken, LoginSession, User
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal

#: The most credentials one process keeps in its :class:`AuthCache` (least recently used
#: first out).
AUTH_CACHE_MAX_ENTRIES = 10_000


@dataclass(slots=True)
class _Cached:
    principal: Principal
    credential_id: str
    expires_at: datetime | None  # the credential's own expiry
    fresh_until: float  # on the cache's clock


class AuthCache:
    """Credential digest → principal, for at most ``seconds`` after it was read from the
    database, at most ``max_entries`` of them (LRU). Thread-safe.

    ``invalidate`` drops a credential at once. An entry is stored only if nothing was
    invalidated since its database read began (``generation``), so a read that raced a
    revocation cannot put the revoked principal back. ``seconds`` 0 disables it."""

    def __init__(self, seconds: float, max_entries: int = AUTH_CACHE_MAX_ENTRIES,
                 clock: Callable[[], float] = time.monotonic):
        self.seconds = seconds
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[str, _Cached] = OrderedDict()
        self._keys: dict[str, str] = {}  # credential id -> key
        self._lock = threading.Lock()
        self._generation = 0
        _CACHES.add(self)

    @property
    def enabled(self) -> bool:
        return self.seconds > 0 and self.max_entries > 0

    def __len__(self) -> int:
        return len(self._entries)

    def begin(self) -> tuple[int, float]:
        """Call before reading a credential from the database: hand the result to
        :meth:`put`."""
        return self._generation, self.clock()

    def get(self, key: str) -> Principal | None:
        if not self.enabled:
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry.fresh_until <= self.clock() or (
                    entry.expires_at is not None and entry.expires_at <= utcnow()):
                self._drop(key, entry)
                return None
            self._entries.move_to_end(key)
            return entry.principal

    def put(self, key: str, principal: Principal, credential_id: str,
            expires_at: datetime | None, begun: tuple[int, float]) -> None:
        if not self.enabled:
            return
        generation, read_at = begun
        with self._lock:
            if generation != self._generation:
                return  # a revocation may have committed since the read began
            old = self._entries.pop(key, None)
            if old is not None:
                self._keys.pop(old.credential_id, None)
            self._entries[key] = _Cached(principal, credential_id, expires_at,
                                         read_at + self.seconds)
            self._keys[credential_id] = key
            while len(self._entries) > self.max_entries:
                evicted_key, evicted = self._entries.popitem(last=False)
                self._forget_key(evicted_key, evicted)

    def invalidate(self, credential_id: str) -> None:
        """Forget the credential (an API token id or a login session id) at once."""
        with self._lock:
            self._generation += 1
            key = self._keys.pop(credential_id, None)
            if key is not None:
                self._entries.pop(key, None)

    def invalidate_user(self, user_id: str) -> None:
        """Forget every credential of ``user_id`` at once."""
        with self._lock:
            self._generation += 1
            for key, entry in list(self._entries.items()):
                if entry.principal.user_id == user_id:
                    self._drop(key, entry)

    def _drop(self, key: str, entry: _Cached) -> None:
        self._entries.pop(key, None)
        self._forget_key(key, entry)

    def _forget_key(self, key: str, entry: _Cached) -> None:
        if self._keys.get(entry.credential_id) == key:
            del self._keys[entry.credential_id]


_CACHES: weakref.WeakSet[AuthCache] = weakref.WeakSet()


def _forget(tokens_and_sessions: list[str], users: list[str]) -> None:
    for cache in list(_CACHES):
        for credential_id in tokens_and_sessions:
            cache.invalidate(credential_id)
        for user_id in users:
            cache.invalidate_user(user_id)


@event.listens_for(Session, "before_flush")
def _credentials_changed(session: Session, _context: object, _instances: object) -> None:
    """A token, login session or user changed through the ORM (revoked, logged out,
    expiry moved, deleted): its cached principals go now and again after commit."""
    credentials: list[str] = []
    users: list[str] = []
    for obj in (*session.dirty, *session.deleted):
        if isinstance(obj, ApiToken | LoginSession):
            credentials.append(obj.id)
        elif isinstance(obj, User):
            users.append(obj.id)
    if credentials or users:
        _forget(credentials, users)
        after_commit(session, lambda: _forget(credentials, users))
