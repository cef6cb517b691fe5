"""Helpers shared by the foundation tests (identity, tree, audit, bad input).

Direct database access is used only to observe what the API cannot show (hashes, row
counts, audit rows) or to set up states a client cannot reach quickly (an expired token).
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import func, select, text

from storage.db import Database
from storage.models import (
    ApiToken,
    AuditLog,
    LoginSession,
    Node,
    PasswordCredential,
    Space,
    SpaceMember,
    User,
)
from tests.conftest import PASSWORD

COUNTED = {"users": User, "spaces": Space, "nodes": Node, "space_members": SpaceMember,
           "api_tokens": ApiToken, "login_sessions": LoginSession, "audit_logs": AuditLog}


#: What a refused request itself leaves in the audit trail (wharf.audittrail.refusals): the
#: record of the refusal, not a change; "changes nothing" counts the other rows.
REFUSAL_ACTIONS = ("session.login_failed", "request.refused")


def row_counts(db: Database) -> dict[str, int]:
    with db.read() as s:
        counts = {name: s.scalar(select(func.count()).select_from(model))
                  for name, model in COUNTED.items()}
        counts["audit_logs"] = s.scalar(select(func.count()).select_from(AuditLog).where(
            AuditLog.action.not_in(REFUSAL_ACTIONS)))
        return counts


def audit_rows(db: Database, **where: Any) -> list[AuditLog]:
    with db.read() as s:
        q = select(AuditLog)
        for key, value in where.items():
            q = q.where(getattr(AuditLog, key) == value)
        return list(s.scalars(q.order_by(AuditLog.at, AuditLog.id)))


def table_values(db: Database, table: str) -> list[str]:
    """Every column value of every row of ``table``, as strings."""
    with db.read() as s:
        rows = s.execute(text(f"SELECT * FROM {table}")).all()
    return [str(v) for row in rows for v in row if v is not None]


def password_hash(db: Database, user_id: str) -> str:
    with db.read() as s:
        return s.get(PasswordCredential, user_id).password_hash


def set_password_hash(db: Database, user_id: str, value: str) -> None:
    with db.write() as s:
        s.get(PasswordCredential, user_id).password_hash = value


def is_problem(r, status: int | None = None, code: str | None = None) -> bool:
    """True when ``r`` is an RFC 9457 problem with a code (and the given status/code)."""
    ctype = (r.headers.get("content-type") or "").split(";")[0].strip()
    if ctype != "application/problem+json":
        return False
    body = r.json
    if not isinstance(body, dict) or not isinstance(body.get("code"), str) or not body["code"]:
        return False
    if body.get("status") != r.status_code:
        return False
    if status is not None and r.status_code != status:
        return False
    return not (code is not None and body["code"] != code)


def assert_problem(r, status: int, code: str | None = None) -> dict:
    assert r.status_code == status, (r.status_code, r.text)
    assert is_problem(r, status, code), (r.status_code, r.headers.get("content-type"), r.text)
    return r.json


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def make_token(client, scopes=("read", "write"), name="ci", expires_in_days=None) -> dict:
    body: dict[str, Any] = {"name": name, "scopes": list(scopes)}
    if expires_in_days is not None:
        body["expires_in_days"] = expires_in_days
    r = client.post("/api/api-tokens", json=body)
    assert r.status_code == 201, r.text
    return r.json


def team_space(client, name: str = "Team") -> dict:
    r = client.post("/api/spaces", json={"name": name, "type": "team"})
    assert r.status_code == 201, r.text
    return r.json


def add_member(client, space_id: str, user_id: str, role: str) -> None:
    r = client.put(f"/api/spaces/{space_id}/members/{user_id}", json={"role": role})
    assert r.status_code in (200, 201), r.text


def make_node(client, space_id: str, name: str, parent_id: str | None = None) -> dict:
    body: dict[str, Any] = {"space_id": space_id, "name": name}
    if parent_id is not None:
        body["parent_id"] = parent_id
    r = client.post("/api/nodes", json=body)
    assert r.status_code == 201, r.text
    return r.json


__all__ = [
    "PASSWORD",
    "add_member",
    "assert_problem",
    "audit_rows",
    "bearer",
    "is_problem",
    "make_node",
    "make_token",
    "password_hash",
    "row_counts",
    "set_password_hash",
    "table_values",
    "team_space",
]
