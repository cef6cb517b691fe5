"""The operator dashboard over the API (both databases): who may see it, and that its
numbers are the database's. The browser test is tests/dashboard/test_dashboard_browser.py."""
from __future__ import annotations

from datetime import timedelta

import pytest

from storage.models import ObjectDeletionJob, Operation, OperationAttempt
from tests.conftest import make_settings
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id
from wharf.observability.heartbeats import Heartbeat

HOSTILE = '<script>alert("x")</script>&<img src=x onerror=alert(1)>'


@pytest.fixture
def settings(tmp_path, database_url, unitstore_url):
    return make_settings(tmp_path, database_url, unitstore_url, operators=("ops",))


def add_operation(db, actor_id: str, *, kind: str = "create_resource", status: str,
                  age: timedelta = timedelta(minutes=5), took: timedelta = timedelta(seconds=1),
                  attempts: int = 1, error: dict | None = None,
                  next_attempt_at=None, lease_expires_at=None) -> str:
    """An operation row (and its attempt rows) as the engine leaves them."""
    now = utcnow()
    created = now - age
    done = status in ("completed", "failed")
    op_id = new_id()
    with db.write() as s:
        s.add(Operation(id=op_id, kind=kind, status=status, actor_id=actor_id,
                        scope_id=None, idempotency_key=None, request_fingerprint="f" * 64,
                        payload={}, result=None, error=error, attempts=attempts,
                        max_attempts=5, next_attempt_at=next_attempt_at,
                        lease_owner="w" if status == "running" else None,
                        lease_expires_at=lease_expires_at, created_at=created,
                        updated_at=created + took, completed_at=created + took if done else None))
        s.flush()
        for n in range(1, attempts + 1):
            last = n == attempts
            s.add(OperationAttempt(
                id=new_id(), operation_id=op_id, number=n, worker_id=f"host:{n}",
                started_at=created + took * (n - 1) / attempts,
                finished_at=None if last and not done else created + took * n / attempts,
                outcome=(status if last and done else None if last else "retry"),
                error=error if (not last or status == "failed") else None))
    return op_id


@pytest.fixture
def scene(world, db):
    """An operator, a user, and operations of every kind of state."""
    ops, alice = world.user("ops"), world.user("alice")
    a = alice.user_id
    ids = {
        "pending_due": [add_operation(db, a, status="pending", attempts=0) for _ in range(2)],
        "pending_later": add_operation(db, a, status="pending", attempts=2,
                                       error={"code": "storage_timeout", "message": "slow"},
                                       next_attempt_at=utcnow() + timedelta(hours=1)),
        "running": add_operation(db, a, status="running", attempts=1,
                                 lease_expires_at=utcnow() + timedelta(minutes=1)),
        "completed": [add_operation(db, a, status="completed", took=timedelta(seconds=i + 1))
                      for i in range(4)],
        "slow": add_operation(db, a, status="completed", took=timedelta(seconds=90),
                              attempts=2, error=None),
        "failed": [add_operation(db, a, kind="purge_trash", status="failed", attempts=3,
                                 error={"code": "permission_revoked", "message": HOSTILE})
                   for _ in range(2)],
        "old": add_operation(db, a, status="completed", age=timedelta(days=2)),
    }
    return ops, alice, ids


def counts(items) -> dict[tuple[str, str], int]:
    return {(c["kind"], c["status"]): c["count"] for c in items}


def test_only_operators_see_the_dashboard(scene, world):
    ops, alice, _ = scene
    for who in (world.anonymous(), alice):
        r = who.get("/api/ops/dashboard")
        assert r.status_code == 404 and r.json["code"] == "not_found"
        assert r.headers["content-type"].startswith("application/problem+json")
        page = who.get("/ops")
        assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
        assert "operations" not in page.text.lower().replace("operators", "")
    assert 'id="login-form"' in world.anonymous().get("/ops").text
    assert 'id="login-form"' not in alice.get("/ops").text
    assert ops.get("/api/ops/dashboard").status_code == 200
    assert ops.get("/ops").status_code == 200


def test_numbers_are_the_databases(scene):
    ops, _, ids = scene
    r = ops.get("/api/ops/dashboard")
    assert r.status_code == 200, r.text
    assert r.headers["cache-control"] == "no-store"
    d = r.json
    assert counts(d["statuses"]["open"]) == {("create_resource", "pending"): 3,
                                             ("create_resource", "running"): 1}
    # the one finished two days ago is outside the 24 h window
    assert counts(d["statuses"]["finished"]) == {("create_resource", "completed"): 5,
                                                 ("purge_trash", "failed"): 2}
    assert d["statuses"]["finished_capped"] is False
    t = d["throughput"]
    assert (t["completed"], t["failed"]) == (5, 2)
    assert t["failure_rate"] == pytest.approx(2 / 7)
    assert len(t["minutes"]) == 60
    assert sum(m["completed"] for m in t["minutes"]) == 5
    # finished three to five minutes ago: in those minutes (the current one is last)
    assert sum(m["completed"] for m in t["minutes"][-7:-2]) == 5
    from datetime import datetime  # as instants: "…:00Z" sorts after "…:00.0015Z" as text
    last = datetime.fromisoformat(t["minutes"][-1]["start"])
    assert last <= datetime.fromisoformat(d["generated_at"]) < last + timedelta(minutes=1)
    q = d["queue"]
    assert (q["due"], q["running"], q["expired_leases"]) == (2, 1, 0)
    assert 4 * 60 < q["lag_seconds"] < 6 * 60  # created five minutes ago, never tried
    assert d["slowest"][0]["id"] == ids["slow"]
    assert d["slowest"][0]["duration_seconds"] == pytest.approx(90, abs=0.01)
    assert {o["id"] for o in d["failures"]} == set(ids["failed"])
    failed = d["failures"][0]
    assert failed["can_retry"] and not failed["can_cancel"]
    assert failed["actor"] == "alice"
    assert failed["error_message"] == HOSTILE
    assert [a["number"] for a in failed["history"]] == [1, 2, 3]
    assert [a["outcome"] for a in failed["history"]] == ["retry", "retry", "failed"]
    retried = [o["id"] for o in d["most_retried"]]
    assert set(retried[:2]) == set(ids["failed"])
    assert set(retried) == {*ids["failed"], ids["pending_later"], ids["slow"]}
    later = next(o for o in d["most_retried"] if o["id"] == ids["pending_later"])
    assert later["can_cancel"] and not later["can_retry"]
    assert {w["schedule"] for w in d["sweeps"]} >= {"recover_operations",
                                                    "retry_deletion_jobs"}


def test_page_renders_the_numbers_escaped(scene):
    ops, _, ids = scene
    r = ops.get("/ops")
    assert r.status_code == 200
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    html = r.text
    assert '<td data-status="pending">3</td>' in html
    assert '<td data-status="running">1</td>' in html
    assert '<td data-status="completed">5</td>' in html
    assert '<td data-status="failed">2</td>' in html
    assert HOSTILE not in html and "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert f'data-action="retry" data-op="{ids["failed"][0]}"' in html
    assert f'data-action="cancel" data-op="{ids["pending_later"]}"' in html
    assert '<script src="/ops/dashboard.js" defer></script>' in html
    assert html.count("<script") == 1  # no inline script
    js = ops.get("/ops/dashboard.js")
    assert js.status_code == 200 and js.headers["content-type"] == "text/javascript"
    assert b"/api/ops/dashboard" in js.content
    assert ops.get("/ops/dashboard.css").headers["content-type"] == "text/css"


def test_deletion_jobs_and_processes(world, db, settings):
    ops = world.user("ops")
    old = utcnow() - timedelta(days=3)
    with db.write() as s:
        s.add(ObjectDeletionJob(id=new_id(), object_key="objects/stuck", reason="orphan",
                                attempts=7, next_attempt_at=utcnow() + timedelta(hours=1),
                                last_error=HOSTILE, created_at=old))
        s.add(ObjectDeletionJob(id=new_id(), object_key="objects/fresh", reason="orphan",
                                attempts=1, next_attempt_at=utcnow(), created_at=utcnow()))
    Heartbeat(db, settings, "worker").beat()
    d = ops.get("/api/ops/dashboard").json
    assert [j["object_key"] for j in d["deletion_jobs"]] == ["objects/stuck"]
    assert d["deletion_jobs"][0]["last_error"] == HOSTILE
    assert [p["role"] for p in d["processes"]] == ["worker"]
    assert d["processes"][0]["stopped_at"] is None
    assert d["processes"][0]["state"] == "running"
    html = ops.get("/ops").text
    assert "objects/stuck" in html and HOSTILE not in html


def test_disabled_accounts_are_listed_with_their_waiting_operations(world, db, settings,
                                                                   monkeypatch):
    """Issue 40 item 6: the operators' dashboard shows who is disabled and what waits for
    them; enabling takes them off the panel. The count reads at most DISABLED_CAP rows."""
    from wharf.accounts.disabling import set_disabled
    from wharf.dashboard import service as dashboard

    ops, alice, bob = world.user("ops"), world.user("alice"), world.user("bob")
    world.user("carol")
    for _ in range(3):
        add_operation(db, alice.user_id, status="pending", attempts=0)
    add_operation(db, alice.user_id, status="completed")
    set_disabled(db, "alice", True)
    set_disabled(db, "bob", True)
    d = ops.get("/api/ops/dashboard").json
    assert d["disabled_total"] == 2
    assert [(u["username"], u["id"], u["pending_operations"]) for u in d["disabled_users"]] \
        == [("alice", alice.user_id, 3), ("bob", bob.user_id, 0)]
    html = ops.get("/ops").text
    assert 'id="disabled-total">2<' in html and alice.user_id in html

    monkeypatch.setattr(dashboard, "DISABLED_CAP", 2)
    set_disabled(db, "alice", False)
    d = dashboard.snapshot(db, settings)
    assert d.disabled_total == 1 and [u.username for u in d.disabled_users] == ["bob"]
    set_disabled(db, "alice", True)
    d = dashboard.snapshot(db, settings)
    assert d.disabled_total == 2 and d.disabled_users[0].pending_operations == 2  # capped


def test_the_openapi_document_declares_it(client):
    doc = client.get("/api/openapi.json").json
    assert "/api/ops/dashboard" in doc["paths"]
    ok = doc["paths"]["/api/ops/dashboard"]["get"]["responses"]["200"]
    assert ok["content"]["application/json"]["schema"]["$ref"].endswith("/Dashboard")
    assert "/ops" in doc["paths"]


def test_tokens_and_hostile_requests(world):
    from tests.support.foundation import bearer, make_token
    ops = world.user("ops")
    full = make_token(ops)["token"]
    narrow = make_token(ops, scopes=("read",), name="narrow")["token"]
    anon = world.anonymous()
    assert anon.get("/api/ops/dashboard", headers=bearer(full)).status_code == 200
    # a read-only token of an operator is an ordinary user's token: 404 like anyone's
    r = anon.get("/api/ops/dashboard", headers=bearer(narrow))
    assert r.status_code == 404 and r.json["code"] == "not_found"
    assert anon.get("/ops", headers=bearer(narrow)).status_code == 404
    # an unknown token is the usual 401; query strings are ignored; writes are 405
    assert anon.get("/api/ops/dashboard", headers=bearer("nope")).status_code == 401
    assert ops.get("/api/ops/dashboard", params={"limit": "999999999", "x": "<b>"}
                   ).status_code == 200
    assert ops.post("/api/ops/dashboard", json={}).status_code == 405
    assert ops.get("/ops/dashboard.js", headers={"Cookie": "wharf_session=junk"}
                   ).status_code == 200


def test_throughput_buckets_are_exact_at_minute_boundaries(db, world):
    """An operation finished exactly at hh:mm:00 is in minute hh:mm, on both databases
    (a float epoch on SQLite lost ~40 µs and put it in the minute before)."""
    from datetime import UTC, datetime

    from wharf.dashboard import service as dashboard

    a = world.user("alice").user_id
    now = datetime(2026, 12, 3, 14, 30, 20, 500000, tzinfo=UTC)
    first = dashboard.window_start(now)
    cases = [(timedelta(seconds=0), 0), (timedelta(seconds=59.9), 0),
             (timedelta(seconds=60), 1), (timedelta(minutes=30, seconds=59.999999), 30),
             (timedelta(minutes=31), 31), (timedelta(minutes=59, seconds=10), 59)]
    with db.write() as s:
        for off, _ in cases:
            t = first + off
            s.add(Operation(id=new_id(), kind="k", status="completed", actor_id=a,
                            scope_id=None, idempotency_key=None,
                            request_fingerprint="f" * 64, payload={}, attempts=1,
                            max_attempts=5, created_at=t - timedelta(seconds=1),
                            updated_at=t, completed_at=t))
    with db.read() as s:
        tp = dashboard.throughput(s, now)
    got = [i for i, m in enumerate(tp.minutes) for _ in range(m.completed)]
    assert got == [i for _, i in cases]
    assert tp.minutes[1].start == dashboard.iso(first + timedelta(minutes=1))


def test_listed_operations_histories_in_one_query(db, world):
    """The listed operations and their last attempts cost two queries, not one per
    operation; each history is its last ATTEMPTS_SHOWN attempts, oldest first."""
    from sqlalchemy import event

    from wharf.dashboard import service as dashboard

    a = world.user("alice").user_id
    ids = [add_operation(db, a, status="failed", attempts=12,
                         error={"code": "x", "message": "y"}) for _ in range(5)]
    ids.append(add_operation(db, a, status="completed", attempts=2))
    statements: list[str] = []

    def count(conn, cursor, statement, *args):
        statements.append(statement)

    event.listen(db.read_engine, "before_cursor_execute", count)
    try:
        with db.read() as s:
            views = dashboard.operations(s, ids)
    finally:
        event.remove(db.read_engine, "before_cursor_execute", count)
    assert len([q for q in statements if "operation" in q.lower()]) == 2
    for op_id in ids[:5]:
        assert [h.number for h in views[op_id].history] == list(range(3, 13))
    assert [h.number for h in views[ids[5]].history] == [1, 2]


def test_open_counts_are_capped_and_shown_as_at_least(world, db, settings, monkeypatch):
    """However large the backlog, each open count reads at most OPEN_SCAN rows; a count
    that reached it says so (JSON ``capped`` fields, the page's "≥")."""
    from wharf.dashboard import service as dashboard

    monkeypatch.setattr(dashboard, "OPEN_SCAN", 3)
    ops, a = world.user("ops"), world.user("alice").user_id
    for _ in range(5):
        add_operation(db, a, status="pending", attempts=0)
    add_operation(db, a, status="running", lease_expires_at=utcnow() + timedelta(minutes=1))
    d = ops.get("/api/ops/dashboard").json
    assert d["queue"]["due"] == 3 and d["queue"]["count_cap"] == 3
    assert d["queue"]["running"] == 1
    assert d["statuses"]["open_capped"] is True
    assert sum(c["count"] for c in d["statuses"]["open"]) == 3
    html = ops.get("/ops").text
    assert 'id="q-due">≥ 3<' in html and 'id="q-running">1<' in html
    assert "capped: the oldest 3 only" in html


def test_snapshot_is_shared_for_a_few_seconds(world, db, settings):
    """Many tabs refreshing cost one set of queries per CACHE_SECONDS."""
    from wharf.dashboard import service as dashboard

    a = world.user("alice").user_id
    now = [100.0]
    cache = dashboard.SnapshotCache(db, settings, clock=lambda: now[0])
    first = cache.get()
    add_operation(db, a, status="pending", attempts=0)
    now[0] += dashboard.CACHE_SECONDS - 0.1
    assert cache.get() is first
    now[0] += 0.1
    again = cache.get()
    assert again is not first and again.queue.due == first.queue.due + 1


def _plans(db, run) -> list[str]:
    """The query plans of every statement ``run()`` executes (PostgreSQL: with sequential
    scans disabled, so that a query no index serves still shows a ``Seq Scan``)."""
    from sqlalchemy import event

    seen: list[tuple[str, object]] = []

    def record(conn, cursor, statement, parameters, *args):
        seen.append((statement, parameters))

    event.listen(db.read_engine, "before_cursor_execute", record)
    try:
        run()
    finally:
        event.remove(db.read_engine, "before_cursor_execute", record)
    plans = []
    with db.read_engine.connect() as conn:
        if db.is_postgres:
            conn.exec_driver_sql("SET enable_seqscan = off")
        prefix = "EXPLAIN " if db.is_postgres else "EXPLAIN QUERY PLAN "
        for statement, parameters in seen:
            if statement.lstrip().upper().startswith("SELECT"):
                rows = conn.exec_driver_sql(prefix + statement, parameters).all()
                plans.append("\n".join(str(r[-1]) for r in rows))
        conn.rollback()
    return plans


def test_retried_and_failing_panels_read_an_index(world, db, settings):
    """The open "most retried" and the failing deletion jobs are an index's first
    entries (a backlog of a million open operations is not read on every refresh)."""
    from wharf.dashboard import service as dashboard
    from wharf.deletion import service as deletion

    a = world.user("alice").user_id
    add_operation(db, a, status="pending", attempts=2)
    with db.read() as s:
        plans = _plans(db, lambda: dashboard.most_retried(s, utcnow()))
    assert any("ix_operations_retried" in p for p in plans), plans
    plans = _plans(db, lambda: deletion.failing_jobs(db, limit=10))
    assert any("ix_deletion_jobs_failing" in p for p in plans), plans


def test_what_non_operators_learn(scene, world):
    """Hidden from non-operators: the data (404 on GET, no numbers, no 403). Not hidden,
    as docs/operations.md says: that the dashboard exists (documented routes, 405 for
    other methods, the static script and stylesheet)."""
    _, alice, ids = scene
    for who in (world.anonymous(), alice):
        r = who.get("/api/ops/dashboard")
        assert r.status_code == 404 and r.json["code"] == "not_found"
        page = who.get("/ops")
        assert page.status_code == 404
        assert ids["failed"][0] not in page.text and "permission_revoked" not in page.text
        assert who.post("/api/ops/dashboard", json={}).status_code == 405
        assert who.get("/ops/dashboard.js").status_code == 200  # static, no data
        assert who.get("/ops/dashboard.css").status_code == 200
    paths = world.anonymous().get("/api/openapi.json").json["paths"]
    assert "/ops" in paths and set(paths["/api/ops/dashboard"]) == {"get"}


def test_the_icon_browsers_ask_for_on_their_own_is_no_404(client):
    """Browsers request /favicon.ico whatever a page declares: an empty answer, cacheable,
    so the dashboard's network log has no failed request."""
    r = client.get("/favicon.ico")
    assert r.status_code == 204 and r.content == b""
    assert "max-age=86400" in r.headers["Cache-Control"]


def test_retry_is_offered_only_where_the_retry_endpoint_accepts_it(world, db):
    """A failed create_blob_resource discarded its input: neither the dashboard (its JSON,
    its page's buttons) nor the operation's JSON offers a retry, and the retry indeed
    answers 409 retry_not_possible; a failed create_resource is offered one, and it is
    accepted."""
    ops, alice = world.user("ops"), world.user("alice")
    error = {"code": "checksum_mismatch", "message": "bad bytes"}
    blob = add_operation(db, alice.user_id, kind="create_blob_resource", status="failed",
                         error=error)
    res = add_operation(db, alice.user_id, status="failed", error=error)
    d = ops.get("/api/ops/dashboard").json
    offered = {o["id"]: o["can_retry"] for o in d["failures"]}
    assert offered == {blob: False, res: True}
    page = ops.get("/ops").text
    assert f'data-action="retry" data-op="{res}"' in page
    assert f'data-action="retry" data-op="{blob}"' not in page
    for who in (alice, ops):
        assert who.get(f"/api/operations/{blob}").json["can_retry"] is False
        assert who.get(f"/api/operations/{res}").json["can_retry"] is True
    r = ops.post(f"/api/operations/{blob}/retry")
    assert r.status_code == 409 and r.json["code"] == "retry_not_possible"
    r = ops.post(f"/api/operations/{res}/retry")
    assert r.status_code == 200 and r.json["status"] == "pending"
    assert r.json["can_retry"] is False  # pending: nothing to retry
    schemas = ops.get("/api/openapi.json").json["components"]["schemas"]
    assert schemas["CreateBlobResourceOperation"]["properties"]["can_retry"]["type"] \
        == "boolean"
    assert "can_retry" in schemas["CreateBlobResourceOperation"]["required"]
