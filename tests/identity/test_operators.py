"""Operators (WHARF_OPERATORS, wharf.infra.operators): who operates, and an operator reading,
retrying and cancelling another user's operation through the ordinary endpoints, on
SQLite and PostgreSQL (in-process broker)."""
from __future__ import annotations

import uuid

import dramatiq
import pytest
from sqlalchemy import select

from storage.models import AuditLog, Node
from tests.conftest import make_settings
from wharf.identity.service import USERNAME_RE
from wharf.infra.context import ANONYMOUS, Principal, RequestContext, system_principal
from wharf.infra.errors import NotFound
from wharf.infra.operators import is_operator, require_operator
from wharf.infra.settings import ConfigError, Settings


@pytest.fixture
def settings(tmp_path, database_url, unitstore_url) -> Settings:
    return make_settings(tmp_path, database_url, unitstore_url, operators=("carol",))


def create(client, space_id: str):
    return client.post("/api/resources", json={"space_id": space_id, "name": "Doc",
                                               "unit_type": "doc"},
                       headers={"Idempotency-Key": uuid.uuid4().hex})


def audit_rows(db, action: str) -> list[AuditLog]:
    with db.read() as s:
        return list(s.scalars(select(AuditLog).where(AuditLog.action == action)))


# --- the setting and the check ---------------------------------------------------------

def test_operators_setting_is_a_list_of_usernames_case_insensitive():
    assert Settings.from_env({}).operators == ()
    env = {"WHARF_OPERATORS": " Carol, dave.ops ,,carol "}
    assert Settings.from_env(env).operators == ("carol", "dave.ops")
    for bad in ("carol bob", "x", "carol,-dash", "é" * 4):
        with pytest.raises(ConfigError, match="WHARF_OPERATORS"):
            Settings.from_env({"WHARF_OPERATORS": bad})
    assert USERNAME_RE.fullmatch("dave.ops")  # one pattern for both


def test_who_operates():
    s = Settings.from_env({"WHARF_OPERATORS": "carol"})
    session = Principal(kind="user", user_id="u1", username="Carol", session_id="s")
    assert is_operator(s, session)  # usernames are case-insensitive
    assert not is_operator(s, Principal(kind="user", user_id="u2", username="bob"))
    assert not is_operator(Settings.from_env({}), session)
    token = Principal(kind="user", user_id="u1", username="carol", token_id="t",
                      scopes=frozenset({"read"}))
    assert not is_operator(s, token)  # a narrow token is an ordinary user's
    assert is_operator(s, Principal(kind="user", user_id="u1", username="carol", token_id="t",
                                    scopes=frozenset({"read", "write"})))
    assert not is_operator(s, ANONYMOUS)
    assert not is_operator(s, system_principal("carol"))  # a system actor is no user
    require_operator(s, RequestContext(principal=session))
    with pytest.raises(NotFound):
        require_operator(s, RequestContext(principal=token))


# --- through the API -------------------------------------------------------------------

def test_an_operator_cancels_and_retries_another_users_operation(world, components, db):
    alice, bob, carol = world.user("alice"), world.user("bob"), world.user("carol")
    op = create(alice, alice.personal_space_id).json
    path = f"/api/operations/{op['id']}"

    # a non-operator still cannot discover it
    assert bob.get(path).status_code == 404
    assert bob.get(f"{path}/attempts").status_code == 404
    assert bob.post(f"{path}/cancel").status_code == 404
    assert bob.post(f"{path}/retry").status_code == 404

    assert carol.get(path).json["id"] == op["id"]
    assert carol.get(path, params={"wait": "0.1"}).json["id"] == op["id"]  # the long-poll
    assert bob.get(path, params={"wait": "0.1"}).status_code == 404
    assert carol.get("/api/operations/" + "0" * 26).status_code == 404
    assert carol.get(f"{path}/attempts").json["items"] == []
    r = carol.post(f"{path}/cancel")
    assert r.status_code == 200 and r.json["status"] == "failed"
    assert r.json["error"]["code"] == "cancelled"
    assert r.json["error"]["message"] == "Cancelled by an operator."
    (cancel,) = audit_rows(db, "operation.cancel")
    assert cancel.actor_id == carol.user_id and cancel.target_id == op["id"]
    assert cancel.details == {"operator": "carol", "owner_id": alice.user_id}

    r = carol.post(f"{path}/retry")
    assert r.status_code == 200 and r.json["status"] == "pending"
    (retry,) = audit_rows(db, "operation.retry")
    assert retry.actor_id == carol.user_id
    assert retry.details == {"operator": "carol", "owner_id": alice.user_id}

    w = dramatiq.Worker(components.broker, worker_threads=2, worker_timeout=50)
    w.start()
    try:
        done = alice.get(path, params={"wait": "30"}).json
    finally:
        w.stop()
    assert done["status"] == "completed" and done["attempts"] == 1
    # executed as its owner: the node is alice's, in alice's space
    with db.read() as s:
        (node,) = s.scalars(select(Node))
        assert node.space_id == alice.personal_space_id
    assert carol.get(f"{path}/attempts").json["items"][0]["outcome"] == "completed"

    # listing stays per actor
    assert carol.get("/api/operations").json["items"] == []
    assert [o["id"] for o in alice.get("/api/operations").json["items"]] == [op["id"]]


def test_the_owner_acting_on_their_own_operation_is_audited_as_before(world, db):
    carol = world.user("carol")  # an operator acting on her own operation
    op = create(carol, carol.personal_space_id).json
    r = carol.post(f"/api/operations/{op['id']}/cancel")
    assert r.json["error"]["message"] == "Cancelled by the submitter."
    (row,) = audit_rows(db, "operation.cancel")
    assert row.details is None


def test_an_operators_token_operates_only_with_every_scope(world):
    alice, carol = world.user("alice"), world.user("carol")
    op = create(alice, alice.personal_space_id).json
    path = f"/api/operations/{op['id']}"

    def token(scopes: list[str]) -> dict[str, str]:
        r = carol.post("/api/api-tokens", json={"name": "ops", "scopes": scopes})
        assert r.status_code == 201, r.text
        return {"Authorization": f"Bearer {r.json['token']}"}

    anon = world.anonymous()
    narrow = token(["read"])
    assert anon.get(path, headers=narrow).status_code == 404
    full = token(["read", "write"])
    assert anon.get(path, headers=full).status_code == 200
    assert anon.post(f"{path}/cancel", headers=full).status_code == 200


def test_a_listed_operator_name_cannot_be_registered_by_anyone(world, client):
    """Whoever registered a listed but not yet existing name first would operate: the
    name is refused as taken (the answer any taken name gets, telling nothing more)."""
    for name in ("carol", "CAROL"):
        r = client.post("/api/users", json={"username": name, "password": "a long password"})
        assert r.status_code == 409 and r.json["code"] == "username_taken", r.text
    r = client.post("/api/users", json={"username": "mallory", "password": "a long password"})
    assert r.status_code == 201
    carol = world.user("carol")  # created as an administrator would, before listing it
    r = carol.get("/api/me")
    assert r.status_code == 200 and r.json["username"] == "carol"
