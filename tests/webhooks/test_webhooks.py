"""Completion webhooks (issue 16) on SQLite and PostgreSQL: registration and its limits,
SSRF refusals, signed deliveries to a local receiver (127.0.0.1, so the tests allow
private addresses), retries through a receiver that is down for a while, the same
``webhook-id`` on a delivery sent again after a worker died, redirects not followed, and
an endpoint disabled after persistent failure.
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import threading
import time
import uuid
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from sqlalchemy import select, update

from api.app import create_app
from storage.models import Operation, OutboxMessage, Webhook, WebhookDelivery
from tests.conftest import World, make_settings
from tests.support.foundation import assert_problem, audit_rows, bearer, make_token
from tests.support.waiting import wait_until
from wharf.infra.clock import utcnow
from wharf.operations import recovery
from wharf.webhooks import delivery
from wharf.webhooks.events import DELIVERY_RETENTION_DAYS, QUEUE, REPLAY_WINDOW_SECONDS


@pytest.fixture
def settings(tmp_path, database_url, unitstore_url):
    return make_settings(tmp_path, database_url, unitstore_url, webhook_allow_private=True,
                         webhook_retry_schedule="0.3,0.3,0.5,1,1,1,1", webhook_timeout=2.0,
                         worker_threads=2)


class Receiver:
    """A local HTTP endpoint: records each request, answers from ``answers`` (then 200)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: list[int] = []
        self.delay = 0.0  # seconds each answer waits
        self.port = 0
        self.server: ThreadingHTTPServer | None = None
        self.start()

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver.requests.append({"path": self.path, "headers": dict(
                    (k.lower(), v) for k, v in self.headers.items()), "body": body})
                time.sleep(receiver.delay)
                status = receiver.answers.pop(0) if receiver.answers else 200
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", f"http://127.0.0.1:{receiver.port}/other")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def submit(client, k: str | None = None) -> str:
    r = client.post("/api/resources", json={"space_id": client.personal_space_id,
                                            "name": f"Doc {uuid.uuid4().hex[:6]}",
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": k or uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    return str(r.json["id"])


def register(client, url: str, events=("operation.completed", "operation.failed")) -> dict:
    r = client.post("/api/webhooks", json={"url": url, "events": list(events)})
    assert r.status_code == 201, r.text
    return dict(r.json)


def deliveries(client, hook_id: str) -> list[dict]:
    r = client.get(f"/api/webhooks/{hook_id}/deliveries")
    assert r.status_code == 200, r.text
    return list(r.json["items"])


def verify(secret: str, request: dict) -> dict:
    """An independent Standard Webhooks check, as a receiver would write it."""
    h = request["headers"]
    content = f"{h['webhook-id']}.{h['webhook-timestamp']}.".encode() + request["body"]
    key = base64.b64decode(secret.removeprefix("whsec_"))
    expected = "v1," + base64.b64encode(
        hmac.new(key, content, hashlib.sha256).digest()).decode()
    assert hmac.compare_digest(expected, h["webhook-signature"])
    assert abs(time.time() - int(h["webhook-timestamp"])) < REPLAY_WINDOW_SECONDS
    return dict(json.loads(request["body"]))


def test_signed_delivery_on_completion(world: World, worker, receiver, components) -> None:
    alice = world.user("alice")
    hook = register(alice, receiver.url)
    assert hook["secret"].startswith("whsec_") and hook["enabled"]
    listed = alice.get("/api/webhooks").json["items"]
    assert [h["id"] for h in listed] == [hook["id"]] and "secret" not in listed[0]
    op_id = submit(alice)
    wait_until(lambda: receiver.requests)
    body = verify(hook["secret"], receiver.requests[0])
    assert body["type"] == "operation.completed"
    assert body["data"]["operation"]["id"] == op_id
    assert body["data"]["operation"]["status"] == "completed"
    assert body["id"] == receiver.requests[0]["headers"]["webhook-id"]
    items = wait_until(lambda: [d for d in deliveries(alice, hook["id"])
                              if d["status"] == "delivered"])
    assert items[0]["id"] == body["id"] and items[0]["attempts"] == 1
    assert items[0]["last_status_code"] == 200 and items[0]["operation_id"] == op_id
    assert audit_rows(components.db, action="webhook.create")


def test_receiver_down_for_a_while_is_retried(world: World, worker, receiver) -> None:
    alice = world.user("alice")
    hook = register(alice, receiver.url, events=["operation.completed"])
    receiver.answers = [503]
    submit(alice)
    wait_until(lambda: receiver.requests)
    receiver.stop()  # now the connection is refused
    wait_until(lambda: [d for d in deliveries(alice, hook["id"]) if d["attempts"] >= 2])
    receiver.start()
    done = wait_until(lambda: [d for d in deliveries(alice, hook["id"])
                             if d["status"] == "delivered"])
    assert done[0]["attempts"] >= 3 and done[0]["last_error"] is None
    ids = {r["headers"]["webhook-id"] for r in receiver.requests}
    assert ids == {done[0]["id"]}  # every attempt carried the same id
    verify(hook["secret"], receiver.requests[-1])
    assert alice.get(f"/api/webhooks/{hook['id']}").json["enabled"]


def test_duplicate_after_a_kill_carries_the_same_id(world: World, receiver,
                                                    components) -> None:
    """The worker sends, then dies before it records the delivery: after recovery the
    receiver gets the same ``webhook-id`` again (and de-duplicates on it)."""
    alice = world.user("alice")
    hook = register(alice, receiver.url)
    op_id = submit(alice)
    assert components.executor.execute(op_id) == "completed"
    db, settings = components.db, components.settings
    with db.read() as s:
        (d,) = s.scalars(select(WebhookDelivery)).all()
        assert s.scalar(select(OutboxMessage.id).where(OutboxMessage.subject_id == d.id))

    def killed(_: str) -> None:
        raise SystemExit("worker killed after sending")

    with pytest.raises(SystemExit):
        delivery.run_delivery(db, settings, d.id, after_send=killed)
    assert len(receiver.requests) == 1
    # Not sent again while the dead worker's claim lasts; then the sweep rings again.
    assert delivery.run_delivery(db, settings, d.id) == "not_due"
    with db.write() as s:
        s.execute(update(WebhookDelivery).values(next_attempt_at=utcnow()))
    assert delivery.rering_due(db, grace_seconds=0) == 1
    assert delivery.run_delivery(db, settings, d.id) == "delivered"
    assert [r["headers"]["webhook-id"] for r in receiver.requests] == [d.id, d.id]
    for r in receiver.requests:
        verify(hook["secret"], r)


def test_cancel_announces_failed(world: World, receiver, components) -> None:
    alice = world.user("alice")
    hook = register(alice, receiver.url, events=["operation.failed"])
    op_id = submit(alice)
    r = alice.post(f"/api/operations/{op_id}/cancel")
    assert r.status_code == 200, r.text
    (d,) = deliveries(alice, hook["id"])
    assert d["type"] == "operation.failed" and d["status"] == "pending"
    assert delivery.run_delivery(components.db, components.settings, d["id"]) == "delivered"
    body = verify(hook["secret"], receiver.requests[0])
    assert body["data"]["operation"]["error"]["code"] == "cancelled"


def test_an_operation_failed_by_recovery_announces_failed(world: World, receiver,
                                                          components) -> None:
    """The recovery sweep fails what died on its last attempt; the submitter's webhook
    hears of each such operation once, in the sweep's transaction."""
    alice = world.user("alice")
    hook = register(alice, receiver.url, events=["operation.failed"])
    ops = [submit(alice), submit(alice)]
    components.dispatcher.flush()
    components.broker.flush_all()  # no worker will run them
    with components.db.write() as s:
        s.execute(update(Operation).where(Operation.id.in_(ops)).values(
            status="running", attempts=5, max_attempts=5, lease_owner="dead",
            lease_expires_at=utcnow() - timedelta(minutes=1)))
    report = recovery.recover(components.db, components.dispatcher.send, grace_seconds=0,
                              key_ttl=components.settings.idempotency_key_ttl)
    assert report.expired == 2
    found = deliveries(alice, hook["id"])
    assert sorted(d["operation_id"] for d in found) == sorted(ops)
    assert all(d["type"] == "operation.failed" for d in found)
    assert delivery.run_delivery(components.db, components.settings,
                                 found[0]["id"]) == "delivered"
    body = verify(hook["secret"], receiver.requests[0])
    assert body["data"]["operation"]["error"]["code"] == "lease_expired"


def test_no_webhook_no_delivery_and_events_filtered(world: World, receiver,
                                                    components) -> None:
    alice, bob = world.user("alice"), world.user("bob")
    register(bob, receiver.url, events=["operation.failed"])
    components.executor.execute(submit(alice))
    components.executor.execute(submit(bob))  # completed: bob listens to failures only
    with components.db.read() as s:
        assert s.scalars(select(WebhookDelivery)).all() == []


def test_redirect_is_a_failure(world: World, receiver, components) -> None:
    alice = world.user("alice")
    hook = register(alice, receiver.url)
    receiver.answers = [302]
    components.executor.execute(submit(alice))
    (d,) = deliveries(alice, hook["id"])
    assert delivery.run_delivery(components.db, components.settings, d["id"]) == "retry"
    (d,) = deliveries(alice, hook["id"])
    assert d["last_status_code"] == 302 and "redirect" in d["last_error"]
    assert [r["path"] for r in receiver.requests] == ["/hook"]  # /other never called


def test_persistent_failure_disables_the_endpoint(world: World, receiver,
                                                   components) -> None:
    alice = world.user("alice")
    hook = register(alice, receiver.url)
    receiver.answers = [500] * 20
    components.executor.execute(submit(alice))
    (d,) = deliveries(alice, hook["id"])
    db, settings = components.db, components.settings
    outcomes = []
    for _ in range(20):
        with db.write() as s:
            s.execute(update(WebhookDelivery).where(WebhookDelivery.status == "pending")
                      .values(next_attempt_at=utcnow()))
        outcomes.append(delivery.run_delivery(db, settings, d["id"]))
        if outcomes[-1] != "retry":
            break
    assert outcomes[-1] == "failed" and len(outcomes) == len(delivery.schedule(settings)) + 1
    got = alice.get(f"/api/webhooks/{hook['id']}").json
    assert not got["enabled"] and "HTTP 500" in got["disabled_reason"]
    (d,) = deliveries(alice, hook["id"])
    assert d["status"] == "failed" and d["next_attempt_at"] is None
    # A disabled endpoint gets no more deliveries.
    components.executor.execute(submit(alice))
    assert len(deliveries(alice, hook["id"])) == 1


def test_ownership_limits_and_input(world: World, receiver, components) -> None:
    alice, bob = world.user("alice"), world.user("bob")
    hook = register(alice, receiver.url)
    for path in (f"/api/webhooks/{hook['id']}", f"/api/webhooks/{hook['id']}/deliveries"):
        assert_problem(bob.get(path), 404, "not_found")
    assert_problem(bob.delete(f"/api/webhooks/{hook['id']}"), 404, "not_found")
    assert bob.get("/api/webhooks").json["items"] == []
    # A token acts for its user.
    token = make_token(alice)["token"]
    anon = world.anonymous()
    r = anon.get(f"/api/webhooks/{hook['id']}", headers=bearer(token))
    assert r.status_code == 200 and r.json["id"] == hook["id"]
    for _ in range(components.settings.webhook_max_per_user - 1):
        register(alice, receiver.url)
    assert_problem(alice.post("/api/webhooks", json={
        "url": receiver.url, "events": ["operation.completed"]}), 400, "webhook_limit")
    for body in ({"url": "http://127.0.0.1/" + "a" * 2100, "events": ["operation.failed"]},
                 {"url": receiver.url, "events": []},
                 {"url": receiver.url, "events": ["operation.started"]},
                 {"url": receiver.url, "events": ["operation.failed", "operation.failed"]}):
        r = bob.post("/api/webhooks", json=body)
        assert 400 <= r.status_code < 500 and r.headers["content-type"].startswith(
            "application/problem+json"), r.text
    r = alice.delete(f"/api/webhooks/{hook['id']}")
    assert r.status_code == 204
    assert_problem(alice.get(f"/api/webhooks/{hook['id']}"), 404, "not_found")
    assert audit_rows(components.db, action="webhook.delete")


@pytest.mark.both_databases  # concurrency: the database decides
def test_the_limit_holds_for_concurrent_creates(world: World, receiver, components,
                                                monkeypatch) -> None:
    """``WHARF_WEBHOOK_MAX_PER_USER`` is counted under a lock per user (wharf.infra.limits): a
    second create of the same user that arrives between the first one's count and its
    insert waits for it, then finds the limit reached. Then
    a burst of concurrent creates ends at the limit too."""
    from tests.support.client import ApiClient
    from wharf.webhooks import service

    limit = components.settings.webhook_max_per_user
    alice, bob = world.user("alice"), world.user("bob")
    for _ in range(limit - 1):
        register(alice, receiver.url)
    body = {"url": receiver.url, "events": ["operation.completed"]}
    token = make_token(alice)["token"]
    rival: list[int] = []
    waited: list[bool] = []
    new_secret = service.signing.new_secret  # called after the count, before the insert
    main = threading.current_thread()

    def racing_secret() -> str:
        if threading.current_thread() is main and not waited:
            # the first create, counted: another request of alice's comes in now
            other = ApiClient(components.api_app(), headers=bearer(token))
            t = threading.Thread(target=lambda: rival.append(
                other.post("/api/webhooks", json=body).status_code))
            t.start()
            t.join(timeout=1.0)
            waited.append(t.is_alive())
            racing_secret.thread = t  # type: ignore[attr-defined]
        return new_secret()

    monkeypatch.setattr(service.signing, "new_secret", racing_secret)
    r = alice.post("/api/webhooks", json=body)
    racing_secret.thread.join(timeout=30)  # type: ignore[attr-defined]
    monkeypatch.undo()
    assert r.status_code == 201, r.text
    assert waited == [True] and rival == [400]
    with components.db.read() as s:
        assert len(s.scalars(select(Webhook.id).where(Webhook.user_id == alice.user_id))
                   .all()) == limit

    # a burst of bob's, all at once
    bob_token = make_token(bob)["token"]
    barrier = threading.Barrier(limit + 4)
    answers: list[int] = []

    def create() -> None:
        client = ApiClient(components.api_app(), headers=bearer(bob_token))
        barrier.wait(timeout=30)
        answers.append(client.post("/api/webhooks", json=body).status_code)

    threads = [threading.Thread(target=create) for _ in range(limit + 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(answers) == [201] * limit + [400] * 4, answers
    assert len(bob.get("/api/webhooks").json["items"]) == limit


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8080/x", "http://10.1.2.3/x", "http://169.254.169.254/latest",
    "http://[::1]/x", "http://localhost/x", "https://[::ffff:127.0.0.1]/x",
    "http://0.0.0.0/x", "http://224.0.0.1/x", "ftp://example.com/x", "file:///etc/passwd",
    "http://user:pw@example.com/x", "http://no-such-host.invalid/x",
    "http://[2002:7f00:1::1]/x", "http://[2002:a00:1::]/x", "http://[fec0::1]/x"])
def test_ssrf_refused_without_the_setting(components, url: str) -> None:
    strict = dataclasses.replace(components.settings, webhook_allow_private=False)
    app = create_app(strict, components.db, operations=components.operations)
    alice = World(app).user("alice")
    r = alice.post("/api/webhooks", json={"url": url, "events": ["operation.completed"]})
    assert_problem(r, 400, "webhook_url_refused")


def test_private_address_refused_again_at_delivery(world: World, receiver,
                                                   components) -> None:
    """Registered while allowed; a delivery checks again (as it would after DNS changed)."""
    alice = world.user("alice")
    hook = register(alice, receiver.url)
    components.executor.execute(submit(alice))
    (d,) = deliveries(alice, hook["id"])
    strict = dataclasses.replace(components.settings, webhook_allow_private=False)
    assert delivery.run_delivery(components.db, strict, d["id"]) == "retry"
    assert receiver.requests == []
    (d,) = deliveries(alice, hook["id"])
    assert "private" in d["last_error"]


def test_finished_deliveries_are_pruned_after_retention(world: World, receiver,
                                                        components) -> None:
    alice = world.user("alice")
    hook = register(alice, receiver.url)
    components.executor.execute(submit(alice))
    components.executor.execute(submit(alice))
    first, second = deliveries(alice, hook["id"])
    db = components.db
    assert delivery.run_delivery(db, components.settings, first["id"]) == "delivered"
    old = utcnow() - timedelta(days=DELIVERY_RETENTION_DAYS + 1)
    with db.write() as s:
        s.execute(update(WebhookDelivery).values(created_at=old))
    assert delivery.prune(db) == 1  # the pending one stays until it finishes
    assert [d["id"] for d in deliveries(alice, hook["id"])] == [second["id"]]


def test_trickling_receiver_is_cut_at_the_deadline() -> None:
    """A receiver sending one header line every 0.2 s never lets a per-read timeout fire;
    the send still ends at ``WHARF_WEBHOOK_TIMEOUT`` (a wall-clock deadline)."""
    import socket as socketlib

    from wharf.webhooks import addresses
    listener = socketlib.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def trickle() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            for _ in range(100):
                if stop.is_set():
                    return
                try:
                    conn.sendall(b"x-slow: 1\r\n")
                except OSError:
                    return
                time.sleep(0.2)

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    target = addresses.Target(scheme="http", host="127.0.0.1", port=port, path="/hook",
                              addresses=("127.0.0.1",))
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        delivery.post(target, b"{}", {}, 1.0)
    took = time.monotonic() - started
    stop.set()
    listener.close()
    assert took < 1.0 + delivery.DEADLINE_SLACK_SECONDS, took


def test_webhook_sends_take_at_most_half_the_worker_threads(world: World, receiver,
                                                            components) -> None:
    """With 2 worker threads one may send: while a slow receiver holds it, a second send
    does not wait (its thread stays free for operations) but comes back later."""
    from tasks.actors import WEBHOOK_BUSY_DELAY_MS, webhook_slots
    from wharf.webhooks.events import ACTOR
    assert [webhook_slots(n) for n in (1, 2, 3, 8)] == [1, 1, 1, 4]
    alice = world.user("alice")
    register(alice, receiver.url)
    for op_id in (submit(alice), submit(alice)):
        assert components.executor.execute(op_id) == "completed"
    with components.db.read() as s:
        first, second = s.scalars(select(WebhookDelivery.id)).all()
    send = components.actors[ACTOR].fn
    receiver.delay = 1.0
    slow = threading.Thread(target=send, args=(first,))
    slow.start()
    wait_until(lambda: receiver.requests)
    started = time.monotonic()
    send(second)
    assert time.monotonic() - started < 0.5
    assert len(receiver.requests) == 1
    delayed = [m for m in components.broker.queues[f"{QUEUE}.DQ"].queue
               if second in str(m)] if f"{QUEUE}.DQ" in components.broker.queues else []
    assert delayed, "the send that found no slot re-queued itself"
    assert WEBHOOK_BUSY_DELAY_MS <= 1000
    slow.join()
    receiver.delay = 0.0
    send(second)
    assert len(receiver.requests) == 2


def test_a_send_whose_claim_expired_records_nothing(world: World, receiver,
                                                   components) -> None:
    """Worker A's claim expires mid-send and worker B sends and records the attempt: A's
    late result changes nothing (the attempt and the failure are counted once)."""
    alice = world.user("alice")
    register(alice, receiver.url)
    assert components.executor.execute(submit(alice)) == "completed"
    db, settings = components.db, components.settings
    with db.read() as s:
        (d_id,) = s.scalars(select(WebhookDelivery.id)).all()
    assert delivery.claim_seconds(settings) > settings.webhook_timeout + \
        delivery.DEADLINE_SLACK_SECONDS
    receiver.answers = [500, 500]
    results: list[str] = []

    def claim_expires_and_b_sends(_: str) -> None:
        with db.write() as s:
            s.execute(update(WebhookDelivery).values(next_attempt_at=utcnow()))
        results.append(delivery.run_delivery(db, settings, d_id))

    assert delivery.run_delivery(db, settings, d_id,
                                 after_send=claim_expires_and_b_sends) == "lost_claim"
    assert results == ["retry"] and len(receiver.requests) == 2
    with db.read() as s:
        d = s.get(WebhookDelivery, d_id)
        assert d is not None and d.attempts == 1 and d.status == "pending"
        assert d.claim is None
        hook = s.get(Webhook, d.webhook_id)
        assert hook is not None and hook.consecutive_failures == 1


def test_rering_does_not_ring_again_every_sweep(world: World, receiver,
                                                components) -> None:
    """A backlog older than the grace is rung once, not once per sweep."""
    alice = world.user("alice")
    register(alice, receiver.url)
    assert components.executor.execute(submit(alice)) == "completed"
    db = components.db
    with db.write() as s:
        s.execute(update(WebhookDelivery).values(
            next_attempt_at=utcnow() - timedelta(minutes=5)))
    assert delivery.rering_due(db) == 1
    assert delivery.rering_due(db) == 0
    assert delivery.run_delivery(db, components.settings, _only_delivery(db)) == "delivered"


def _only_delivery(db) -> str:
    with db.read() as s:
        (d_id,) = s.scalars(select(WebhookDelivery.id)).all()
        return str(d_id)


def test_a_short_outage_does_not_disable_and_enable_resumes(world: World, receiver,
                                                            components) -> None:
    """Many failed attempts in a short outage disable nothing (time, not a count); a day
    without success does, parking the other pending deliveries (not failing them); POST
    .../enable resets the endpoint and resumes them, with the same secret."""
    alice = world.user("alice")
    hook = register(alice, receiver.url)
    # The outage must last less than the schedule (here over a minute, so 60 attempts
    # on a loaded machine are still a short outage).
    db = components.db
    settings = components.settings.replace(
        webhook_retry_schedule="0.3,0.3,0.5,1,1,1,60")
    for _ in range(3):
        assert components.executor.execute(submit(alice)) == "completed"
    receiver.answers = [500] * 60
    for _ in range(20):  # 60 failed attempts (more than the old count of 50)
        with db.write() as s:
            s.execute(update(WebhookDelivery).values(next_attempt_at=utcnow(), attempts=0))
        for d in deliveries(alice, hook["id"]):
            assert delivery.run_delivery(db, settings, d["id"]) == "retry"
    got = alice.get(f"/api/webhooks/{hook['id']}").json
    assert got["enabled"] and got["consecutive_failures"] == 60
    # No success for longer than the schedule lasts: disabled on the next failure.
    with db.write() as s:
        s.execute(update(Webhook).values(failing_since=utcnow() - timedelta(days=2)))
        s.execute(update(WebhookDelivery).values(next_attempt_at=utcnow()))
    receiver.answers = [500]
    first, *others = [d["id"] for d in deliveries(alice, hook["id"])]
    assert delivery.run_delivery(db, settings, first) == "retry"
    got = alice.get(f"/api/webhooks/{hook['id']}").json
    assert not got["enabled"] and "no successful delivery" in got["disabled_reason"]
    for other in others:
        assert delivery.run_delivery(db, settings, other) == "disabled"
    assert {d["status"] for d in deliveries(alice, hook["id"])} == {"pending"}
    assert delivery.rering_due(db, grace_seconds=0) == 0  # parked: not due
    r = alice.post(f"/api/webhooks/{hook['id']}/enable")
    assert r.status_code == 200, r.text
    assert r.json["enabled"] and r.json["consecutive_failures"] == 0
    assert r.json["disabled_reason"] is None
    assert audit_rows(db, action="webhook.enable")
    with db.write() as s:
        s.execute(update(WebhookDelivery).values(next_attempt_at=utcnow()))
    for d in deliveries(alice, hook["id"]):
        assert delivery.run_delivery(db, settings, d["id"]) == "delivered"
        verify(hook["secret"], receiver.requests[-1])
    # Another user's endpoint is not found.
    bob = world.user("bob")
    assert_problem(bob.post(f"/api/webhooks/{hook['id']}/enable"), 404)


def test_failed_delivery_still_says_failed_after_a_retry(world: World, receiver,
                                                         components) -> None:
    """The payload is the operation as it finished: a retry (pending, then completed)
    changes nothing in the body of the delivery announcing its failure."""
    alice = world.user("alice")
    hook = register(alice, receiver.url)
    op_id = submit(alice)
    assert alice.post(f"/api/operations/{op_id}/cancel").status_code == 200
    r = alice.post(f"/api/operations/{op_id}/retry")
    assert r.status_code in (200, 202), r.text
    assert components.executor.execute(op_id) == "completed"
    db, settings = components.db, components.settings
    failed, completed = sorted(deliveries(alice, hook["id"]), key=lambda d: d["id"])
    assert failed["type"] == "operation.failed"
    assert delivery.run_delivery(db, settings, failed["id"]) == "delivered"
    body = verify(hook["secret"], receiver.requests[-1])
    op = body["data"]["operation"]
    assert op["id"] == op_id and op["status"] == "failed"
    assert op["error"]["code"] == "cancelled" and op["completed_at"]
    assert delivery.run_delivery(db, settings, completed["id"]) == "delivered"
    done = verify(hook["secret"], receiver.requests[-1])["data"]["operation"]
    assert done["status"] == "completed" and done["error"] is None


def test_every_checked_address_is_tried_and_the_audit_keeps_the_origin(
        world: World, receiver, components) -> None:
    """A host resolving to a dead address first is still reached on the next one; the
    audit row keeps scheme://host[:port] only (no secret path or query)."""
    from wharf.webhooks import addresses
    target = addresses.Target(scheme="http", host="127.0.0.1", port=receiver.port,
                              path="/hook", addresses=("127.0.0.2", "127.0.0.1"))
    # 127.0.0.2 is loopback too but nothing listens on this port there (refused).
    assert delivery.post(target, b"{}", {}, 2.0)[0] == 200
    assert addresses.origin("https://hooks.example.com/services/T0/B0/SECRET?x=1") == \
        "https://hooks.example.com"
    assert addresses.origin("http://[::1]:8080/a") == "http://[::1]:8080"
    alice = world.user("alice")
    register(alice, receiver.url + "/T0/SECRET?token=abc")
    (row,) = audit_rows(components.db, action="webhook.create")
    assert row.details is not None
    assert row.details["url"] == f"http://127.0.0.1:{receiver.port}"


def test_prune_keeps_up_in_bounded_batches(world: World, receiver, components) -> None:
    """More old deliveries than one batch: one prune deletes them all, batch by batch;
    a budget of zero stops after one batch."""
    alice = world.user("alice")
    register(alice, receiver.url)
    for _ in range(5):
        assert components.executor.execute(submit(alice)) == "completed"
    db = components.db
    old = utcnow() - timedelta(days=DELIVERY_RETENTION_DAYS + 1)
    with db.write() as s:
        s.execute(update(WebhookDelivery).values(created_at=old, status="delivered",
                                                 next_attempt_at=None))
    assert delivery.prune(db, 2, budget_seconds=0) == 2
    assert delivery.prune(db, 2) == 3
    with db.read() as s:
        assert s.scalars(select(WebhookDelivery.id)).all() == []


def test_pending_deliveries_gauge_in_metrics(world: World, receiver, components) -> None:
    """``wharf_webhook_deliveries_pending`` on the API's /metrics counts the deliveries
    not yet delivered (nor given up), and drops once they are."""
    from tests.observability.test_metrics import sample
    from tests.support.client import ApiClient
    fresh = components.settings.replace(metrics_cache_seconds=0.0)
    scraper = ApiClient(create_app(fresh, components.db, operations=components.operations,
                                   metrics=True))

    def pending() -> float | None:
        return sample(scraper.get("/metrics").text, "wharf_webhook_deliveries_pending")

    assert pending() == 0
    alice = world.user("alice")
    register(alice, receiver.url)
    receiver.answers = [503]
    for _ in range(2):
        assert components.executor.execute(submit(alice)) == "completed"
    assert pending() == 2
    first, second = _delivery_ids(components.db)
    db, settings = components.db, components.settings
    assert delivery.run_delivery(db, settings, first) == "retry"
    assert pending() == 2  # a retry is still pending
    assert delivery.run_delivery(db, settings, second) == "delivered"
    assert pending() == 1


def _delivery_ids(db) -> list[str]:
    with db.read() as s:
        return [str(i) for i in s.scalars(select(WebhookDelivery.id)
                                          .order_by(WebhookDelivery.id))]


def test_claim_margin_setting_bounds_the_claim_and_the_sweeps_grace(
        world: World, receiver, components) -> None:
    """``WHARF_WEBHOOK_CLAIM_MARGIN_SECONDS`` (1 to 3600, default 60): the claim is the
    send's deadline + 1 s + the margin, and the sweep rings a delivery overdue by it."""
    from wharf.infra.settings import ConfigError, Settings
    from wharf.retention.sweeps import SweepContext, retry_webhook_deliveries
    for bad in ("0", "0.5", "3601", "soon"):
        with pytest.raises(ConfigError):
            Settings.from_env({"WHARF_WEBHOOK_CLAIM_MARGIN_SECONDS": bad})
    assert Settings.from_env({}).webhook_claim_margin_seconds == 60
    settings = components.settings.replace(webhook_claim_margin_seconds=1.0)
    assert delivery.claim_seconds(settings) == settings.webhook_timeout + 2.0
    alice = world.user("alice")
    register(alice, receiver.url)
    assert components.executor.execute(submit(alice)) == "completed"
    db = components.db
    with db.write() as s:
        s.execute(update(WebhookDelivery).values(
            next_attempt_at=utcnow() - timedelta(seconds=5)))
    default = SweepContext(db=db, settings=components.settings, now=utcnow())
    assert retry_webhook_deliveries(default)["rung"] == 0  # 5 s overdue < 60 s
    short = SweepContext(db=db, settings=settings, now=utcnow())
    assert retry_webhook_deliveries(short)["rung"] == 1
    assert delivery.run_delivery(db, settings, _only_delivery(db)) == "delivered"
