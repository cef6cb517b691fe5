"""Disabling and enabling accounts (``wharf user disable|enable NAME``, operators only).

A disabled user (``users.status`` ``disabled``) is answered 403 ``account_disabled`` on
every request, by login session and API token alike, and by login with the right password
(``wharf.identity.service``): at once in the process that disabled them (the user row's
change drops their cached credentials), within ``WHARF_AUTH_CACHE_SECONDS`` in every
other. Their pending operations wait (``wharf.operations.outcomes``); nothing they own is
deleted. Enabling restores everything as it was.
"""
from __future__ import annotations

from sqlalchemy import select

from storage.db import Database
from storage.enums import UserStatus
from storage.models import User
from wharf.infra import audit
from wharf.infra.context import RequestContext, system_principal
from wharf.infra.errors import Conflict, NotFound


def set_disabled(db: Database, username: str, disabled: bool) -> bool:
    """``username`` disabled (or enabled again), audited; whether it changed anything.
    NotFound for no such user, Conflict for one being deleted."""
    target, source = ((UserStatus.DISABLED, UserStatus.ACTIVE) if disabled
                      else (UserStatus.ACTIVE, UserStatus.DISABLED))
    with db.write() as s:
        user = s.scalar(select(User).where(User.username_key == username.lower())
                        .with_for_update())
        if user is None:
            raise NotFound(f"No user {username}.")
        if user.status == target:
            return False
        if user.status != source:
            raise Conflict(f"User {username} is being deleted.")
        user.status = target  # drops their cached credentials in this process
        action = "user.disable" if disabled else "user.enable"
        audit.record(s, RequestContext(principal=system_principal(f"user-{action[5:]}")),
                     action, "user", user.id)
    return True
