"""Issue 40 item 5: device login for the CLI (RFC 8628): approve, deny, expire, reuse,
slow_down, the issued credential (a separate login session), who may approve, the page."""
from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from sqlalchemy import update

from storage.models import DeviceAuthorization, User
from tests.support.client import ApiClient
from tests.support.foundation import assert_problem, audit_rows, bearer, make_token
from wharf.identity import device
from wharf.infra.clock import utcnow
from wharf.retention.sweeps import SweepContext, delete_expired_credentials

GRANT = "urn:ietf:params:oauth:grant-type:device_code"
CLI_AGENT = "wharf-client/0.1 (test)"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def _cli(app) -> ApiClient:
    return ApiClient(app, headers={"User-Agent": CLI_AGENT})


def _start(cli: ApiClient, **body) -> dict:
    r = cli.post("/api/device-authorizations", json=body)
    assert r.status_code == 200, r.text
    assert r.headers["cache-control"] == "no-store"
    return r.json


def _poll(cli: ApiClient, device_code: str):
    return cli.post("/api/device-authorizations/token",
                    json={"grant_type": GRANT, "device_code": device_code})


def _later(db, seconds: int = 60) -> None:
    """As if the last poll was ``seconds`` ago (the interval is 5 s)."""
    with db.write() as s:
        s.execute(update(DeviceAuthorization).values(
            last_polled_at=utcnow() - timedelta(seconds=seconds)))


def _refused(r, status: int, error: str) -> dict:
    body = assert_problem(r, status, error)
    assert body["error"] == error
    assert r.headers["cache-control"] == "no-store"
    return body


@pytest.mark.both_databases
def test_approved_request_yields_a_separate_session_once(app, db, world):
    alice = world.user("alice")
    cli = _cli(app)
    started = _start(cli, client_id="wharf-client on laptop")
    assert re.fullmatch(r"[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}",
                        started["user_code"])
    assert started["verification_uri"].endswith("/device")
    assert started["verification_uri_complete"] == \
        f"{started['verification_uri']}?user_code={started['user_code']}"
    assert started["token_endpoint"].endswith("/api/device-authorizations/token")
    assert (started["expires_in"], started["interval"]) == (600, 5)
    assert len(started["device_code"]) >= 40
    code = started["user_code"]

    _refused(_poll(cli, started["device_code"]), 400, "authorization_pending")
    seen = alice.get(f"/api/device-authorizations/{code}")
    assert seen.status_code == 200
    assert seen.json["status"] == "pending" and seen.json["user_agent"] == CLI_AGENT
    assert seen.json["client_name"] == "wharf-client on laptop"
    r = alice.post(f"/api/device-authorizations/{code}/approve")
    assert r.status_code == 200 and r.json["status"] == "approved"

    _later(db)
    r = _poll(cli, started["device_code"])
    assert r.status_code == 200, r.text
    assert r.headers["cache-control"] == "no-store"
    issued = r.json
    assert issued["token_type"] == "Bearer" and issued["scope"] == "read write"
    assert issued["user"]["username"] == "alice"
    # the credential works as a bearer, as a session of alice's own
    me = cli.get("/api/me", headers=bearer(issued["access_token"]))
    assert me.status_code == 200 and me.json["auth"] == "session"
    assert me.json["username"] == "alice"
    sessions = alice.get("/api/login-sessions").json["items"]
    assert len(sessions) == 2
    mine = next(s for s in sessions if s["id"] == issued["session_id"])
    assert mine["current"] is False and mine["user_agent"] == CLI_AGENT
    # single use: the next poll, and a second approval, are refused
    _later(db)
    _refused(_poll(cli, started["device_code"]), 400, "invalid_grant")
    assert_problem(alice.post(f"/api/device-authorizations/{code}/approve"), 409,
                   "device_authorization_decided")
    assert alice.get(f"/api/device-authorizations/{code}").json["status"] == "issued"
    actions = [a.action for a in audit_rows(db) if a.target_type == "device_authorization"]
    assert actions == ["device_authorization.request", "device_authorization.approve",
                       "device_authorization.issue"]
    issue = audit_rows(db, action="device_authorization.issue")[0]
    assert issue.actor_id == alice.user_id
    assert issue.details == {"session_id": issued["session_id"]}
    # ending that session (from the browser) refuses the CLI's credential
    assert alice.delete(f"/api/login-sessions/{issued['session_id']}").status_code == 204
    assert_problem(cli.get("/api/me", headers=bearer(issued["access_token"])), 401,
                   "invalid_token")
    assert alice.get("/api/me").status_code == 200


@pytest.mark.both_databases
def test_denied_request_gives_nothing(app, db, world):
    alice = world.user("alice")
    cli = _cli(app)
    started = _start(cli)
    code = started["user_code"].lower().replace("-", "")  # any case, dash optional
    r = alice.post(f"/api/device-authorizations/{code}/deny")
    assert r.status_code == 200 and r.json["status"] == "denied"
    assert r.json["user_code"] == started["user_code"]
    _refused(_poll(cli, started["device_code"]), 400, "access_denied")
    _later(db)
    _refused(_poll(cli, started["device_code"]), 400, "access_denied")
    assert_problem(alice.post(f"/api/device-authorizations/{code}/approve"), 409,
                   "device_authorization_decided")
    assert len(alice.get("/api/login-sessions").json["items"]) == 1
    assert [a.actor_id for a in audit_rows(db, action="device_authorization.deny")] == \
        [alice.user_id]


@pytest.mark.both_databases
def test_expired_request_cannot_be_approved_or_used(app, db, world, settings):
    alice = world.user("alice")
    cli = _cli(app)
    waiting, approved = _start(cli), _start(cli)
    assert alice.post(f"/api/device-authorizations/{approved['user_code']}/approve"
                      ).status_code == 200
    with db.write() as s:  # ten minutes later
        s.execute(update(DeviceAuthorization).values(
            created_at=utcnow() - timedelta(seconds=601),
            expires_at=utcnow() - timedelta(seconds=1)))
    _refused(_poll(cli, waiting["device_code"]), 400, "expired_token")
    _refused(_poll(cli, approved["device_code"]), 400, "expired_token")  # not picked up
    assert alice.get(f"/api/device-authorizations/{waiting['user_code']}"
                     ).json["status"] == "expired"
    assert_problem(alice.post(f"/api/device-authorizations/{waiting['user_code']}/approve"),
                   409, "device_authorization_expired")
    assert_problem(alice.post(f"/api/device-authorizations/{waiting['user_code']}/deny"),
                   409, "device_authorization_expired")
    assert len(alice.get("/api/login-sessions").json["items"]) == 1
    # the credentials sweep deletes them; an unknown device code is invalid_grant
    counts = delete_expired_credentials(SweepContext(db=db, settings=settings, now=utcnow()))
    assert counts["device_authorizations"] == 2
    _refused(_poll(cli, waiting["device_code"]), 400, "invalid_grant")
    assert_problem(alice.get(f"/api/device-authorizations/{waiting['user_code']}"), 404,
                   "not_found")


@pytest.mark.both_databases
def test_polling_faster_than_the_interval_is_slow_down(app, db):
    cli = _cli(app)
    started = _start(cli)
    _refused(_poll(cli, started["device_code"]), 400, "authorization_pending")
    body = _refused(_poll(cli, started["device_code"]), 400, "slow_down")
    assert body["details"]["interval"] == 10
    body = _refused(_poll(cli, started["device_code"]), 400, "slow_down")
    assert body["details"]["interval"] == 15
    _later(db, 16)
    _refused(_poll(cli, started["device_code"]), 400, "authorization_pending")


def test_only_a_login_session_approves(app, world):
    alice = world.user("alice")
    cli = _cli(app)
    code = _start(cli)["user_code"]
    token = make_token(alice)["token"]
    by_token = _cli(app)
    for method, path in (("GET", ""), ("POST", "/approve"), ("POST", "/deny")):
        r = by_token.request(method, f"/api/device-authorizations/{code}{path}",
                             headers=bearer(token))
        assert_problem(r, 403, "token_cannot_mint")
        assert_problem(cli.request(method, f"/api/device-authorizations/{code}{path}"), 401)
    # the cookie routes follow the cookie-write origin check
    r = alice.post(f"/api/device-authorizations/{code}/approve",
                   headers={"Origin": "https://evil.example"})
    assert_problem(r, 403, "cross_origin")
    assert alice.get(f"/api/device-authorizations/{code}").json["status"] == "pending"
    assert_problem(alice.get("/api/device-authorizations/AAAA-AAAA"), 404, "not_found")
    assert_problem(alice.get("/api/device-authorizations/" + "B" * 40), 404, "not_found")


def test_a_disabled_approver_gets_the_device_nothing(app, db, world):
    alice = world.user("alice")
    cli = _cli(app)
    started = _start(cli)
    assert alice.post(f"/api/device-authorizations/{started['user_code']}/approve"
                      ).status_code == 200
    with db.write() as s:
        s.execute(update(User).where(User.id == alice.user_id).values(status="disabled"))
    _refused(_poll(cli, started["device_code"]), 400, "access_denied")


def test_rfc_clients_send_forms(app, db, world):
    """RFC 8628 sections 3.1 and 3.4: form-encoded parameters; errors carry ``error``."""
    alice = world.user("alice")
    cli = _cli(app)
    r = cli.request("POST", "/api/device-authorizations", headers=FORM,
                    body=urlencode({"client_id": "rfc-client", "scope": "anything"}))
    assert r.status_code == 200, r.text
    started = r.json

    def token(**params):
        return cli.request("POST", "/api/device-authorizations/token", headers=FORM,
                           body=urlencode(params))

    _refused(token(grant_type=GRANT, device_code=started["device_code"], client_id="x"),
             400, "authorization_pending")
    _refused(token(grant_type="authorization_code", device_code="x"), 400,
             "unsupported_grant_type")
    _refused(token(device_code="x"), 400, "unsupported_grant_type")
    _refused(token(grant_type=GRANT), 400, "invalid_request")
    _refused(token(grant_type=GRANT, device_code="not-a-code"), 400, "invalid_grant")
    body = assert_problem(cli.request("POST", "/api/device-authorizations/token",
                                      headers=FORM, body=f"grant_type={GRANT}&grant_type=x"),
                          400, "validation_failed")
    assert body["error"] == "invalid_request"
    body = assert_problem(token(grant_type=GRANT, device_code="x", other="y"), 400,
                          "validation_failed")
    assert body["error"] == "invalid_request"
    body = assert_problem(cli.request("POST", "/api/device-authorizations/token",
                                      headers=FORM, body=b"device_code=%FF"), 400,
                          "malformed_request")
    assert body["error"] == "invalid_request"
    assert alice.post(f"/api/device-authorizations/{started['user_code']}/approve"
                      ).status_code == 200
    _later(db)
    r = token(grant_type=GRANT, device_code=started["device_code"])
    assert r.status_code == 200 and r.json["token_type"] == "Bearer"


def test_requests_and_lookups_are_throttled(app, world):
    cli = _cli(app)
    for _ in range(device.REQUESTS_PER_WINDOW):
        code = _start(cli)["user_code"]
    r = cli.post("/api/device-authorizations", json={})
    body = assert_problem(r, 429, "rate_limited")
    assert body["error"] == "slow_down" and int(r.headers["retry-after"]) >= 1
    alice = world.user("alice")
    for _ in range(device.LOOKUPS_PER_WINDOW):
        assert alice.get("/api/device-authorizations/BBBB-BBBB").status_code == 404
    assert_problem(alice.get(f"/api/device-authorizations/{code}"), 429, "rate_limited")
    assert_problem(alice.post(f"/api/device-authorizations/{code}/approve"), 429,
                   "rate_limited")


def test_the_approval_page(app, world):
    anon = _cli(app)
    r = anon.get("/device")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert 'id="login-form"' in r.text and 'id="code-form"' not in r.text
    alice = world.user("alice")
    r = alice.get("/device", params={"user_code": 'WDJB-MJHT"><script>'})
    assert 'id="code-form"' in r.text and "<script>" not in r.text.split("</head>", 1)[1]
    assert 'value="WDJB-MJHT&quot;&gt;&lt;script&gt;"' in r.text
    js = anon.get("/device.js")
    assert js.status_code == 200 and b"/api/device-authorizations/" in js.content


@pytest.mark.both_databases
def test_concurrent_polls_of_an_approved_request_yield_one_session(app, db, world):
    import threading

    from wharf.infra.context import RequestContext
    alice = world.user("alice")
    started = _start(_cli(app))
    assert alice.post(f"/api/device-authorizations/{started['user_code']}/approve"
                      ).status_code == 200
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def poll() -> None:
        barrier.wait()
        try:
            device.poll(db, RequestContext(), started["device_code"], session_ttl=3600)
            outcomes.append("session")
        except device.GrantError as ex:
            outcomes.append(ex.code)

    threads = [threading.Thread(target=poll) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(outcomes) == ["invalid_grant"] * 3 + ["session"]
    assert len(alice.get("/api/login-sessions").json["items"]) == 2
