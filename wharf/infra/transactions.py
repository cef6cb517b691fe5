"""The service layer's transaction: a session-level function made into one that opens its
own, so an entry point (an API resource) calls the service with the ``Database`` and never
holds a session.

``in_write(f)`` runs ``f(session, ...)`` in ``db.write()`` (committed when ``f`` returns,
rolled back when it raises); ``in_read(f)`` in ``db.read()``. What ``f`` returns is read
inside the transaction and stays readable after it (sessions do not expire on commit).
The session-level function stays available for callers that compose it into a larger
transaction of their own (a purge, a test that rolls back).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Concatenate, ParamSpec, TypeVar

from sqlalchemy.orm import Session

from storage.db import Database

P = ParamSpec("P")
R = TypeVar("R")


def in_write(fn: Callable[Concatenate[Session, P], R]) -> Callable[Concatenate[Database, P], R]:
    @wraps(fn)
    def run(db: Database, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with db.write() as s:
            return fn(s, *args, **kwargs)
    return run


def in_read(fn: Callable[Concatenate[Session, P], R]) -> Callable[Concatenate[Database, P], R]:
    @wraps(fn)
    def run(db: Database, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with db.read() as s:
            return fn(s, *args, **kwargs)
    return run
