"""``Prefer: wait=N`` (RFC 7240) on requests that start an operation: one request answers
with the finished operation (200, ``Preference-Applied``) instead of a 202 and a
long-poll; a preference it cannot honour leaves the 202 as it was."""
from __future__ import annotations

import time
import uuid

import pytest

from api import contract
from api.resources.operations import prefer_wait
from api.schemas.operations import MAX_WAIT
from storage.models import Operation, Resource
from tests.conftest import World
from tests.engine.test_operations import count, key, start_worker, wait_done
from wharf.operations.notify import LocalNotifier


def submit(client, prefer: str, k: str | None = None, name: str = "Doc"):
    """POST /api/resources in ``client``'s personal space with ``Prefer: <prefer>``."""
    return client.post("/api/resources", json={"space_id": client.personal_space_id,
                                               "name": name, "unit_type": "doc"},
                       headers={"Idempotency-Key": k or key(), "Prefer": prefer})


def test_a_submission_that_prefers_to_wait_answers_the_finished_operation(
        world, components, db):
    alice = world.user("alice")
    w = start_worker(components.broker)
    try:
        t0 = time.monotonic()
        r = submit(alice, "wait=30", name="Waited")
        elapsed = time.monotonic() - t0
    finally:
        w.stop()
    assert r.status_code == 200, r.text
    assert r.json["status"] == "completed" and r.json["done"] is True
    assert r.headers["preference-applied"] == "wait=30"
    assert "retry-after" not in r.headers
    assert r.headers["location"] == f"/api/operations/{r.json['id']}"
    assert elapsed < 20  # woken by the completion, not by the end of the wait
    resource_id = r.json["result"]["resource_id"]
    assert count(db, Resource, Resource.id == resource_id) == 1
    # The same operation a long-poll reads, done once.
    assert wait_done(alice, r.json["id"])["result"] == r.json["result"]
    assert count(db, Operation, Operation.actor_id == alice.user_id) == 1


def test_a_wait_that_runs_out_answers_202_as_before(world, components):
    alice = world.user("alice")  # no worker: nothing finishes
    k = key()
    t0 = time.monotonic()
    r = submit(alice, "wait=1", k, "Slow")
    elapsed = time.monotonic() - t0
    assert r.status_code == 202 and r.json["status"] == "pending"
    assert r.headers["retry-after"] and "preference-applied" not in r.headers
    assert 0.9 <= elapsed < 10
    # A replay waits the same way, then answers the same operation; once done, at once.
    replay = submit(alice, "wait=1", k, "Slow")
    assert replay.status_code == 202 and replay.json["id"] == r.json["id"]
    w = start_worker(components.broker)
    try:
        wait_done(alice, r.json["id"])
    finally:
        w.stop()
    t0 = time.monotonic()
    done = submit(alice, "wait=30", k, "Slow")
    assert done.status_code == 200 and done.json["status"] == "completed"
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("header", [
    "wait=abc", "wait=-1", "wait", "wait=", "respond-async", "wait=1.5", "wait=0",
    "wait=1234567", "return=minimal; wait=5", "x" * 4000, "wait=5 seconds",
    ",".join(["handling=lenient"] * 100) + ",wait=5"])
def test_a_preference_it_does_not_understand_is_ignored(world, components, monkeypatch,
                                                       header):
    # Asserted on the notifier, not on the clock: a wall-clock bound failed on a busy CI
    # machine (one SQLite submission took 1.5 s there) without any wait being taken.
    waits: list[tuple[str, float]] = []

    def spy(operation_id, timeout, is_done, **_):  # a wait that runs out at once
        waits.append((operation_id, timeout))
        return is_done()

    monkeypatch.setattr(components.notifier, "wait", spy)
    alice = world.user("alice")
    assert submit(alice, "wait=3").status_code == 202  # the spy sees a wait it understands
    assert len(waits) == 1
    r = submit(alice, header)
    assert r.status_code == 202, r.text
    assert "preference-applied" not in r.headers
    assert len(waits) == 1  # answered at once: no wait was taken from it


def test_prefer_wait_parses_rfc_7240_preferences():
    assert prefer_wait("wait=10") == 10
    assert prefer_wait('WAIT = "7"') == 7
    assert prefer_wait("respond-async, wait=3") == 3
    assert prefer_wait("wait=3; foo=bar") == 3
    assert prefer_wait("wait=4;;;" + ";" * 1000) == 4  # empty parameters are allowed
    assert prefer_wait("wait=100000") == MAX_WAIT  # capped like ?wait=
    for ignored in (None, "", "wait=x", "wait=-2", "wait=1.5", "wait=1234567", "waited=3",
                    "return=minimal"):
        assert prefer_wait(ignored) == 0


def test_no_free_long_poll_slot_answers_202_at_once(settings, db):
    from wharfd.runtime import Components
    comps = Components(settings, db=db, notifier=LocalNotifier(max_waiters=0))
    try:
        alice = World(comps.api_app(), comps).user("alice")
        t0 = time.monotonic()
        r = submit(alice, "wait=30")
        assert r.status_code == 202 and r.json["status"] == "pending"
        assert time.monotonic() - t0 < 5
    finally:
        comps.close()


def test_every_operation_starting_request_declares_prefer(app):
    spec = contract.document(app)
    starting = 0
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            answers = op["responses"]
            if "202" not in answers or "200" not in answers:
                continue
            params = {p.get("$ref", "").rsplit("/", 1)[-1] for p in op.get("parameters", [])}
            if "Idempotency-Key" in params:
                starting += 1
                assert "Prefer" in params, (method, path)
                assert "Preference-Applied" in answers["200"]["headers"], (method, path)
    assert starting >= 12


def test_wharf_client_gets_the_finished_operation_from_its_submission(world, components, db):
    """``wharf-client create`` and an upload's completion send ``Prefer: wait``: with a
    worker keeping up, the submitting request answers the finished operation and the
    client sends no long-poll."""
    import argparse
    import contextlib
    import io

    import httpx

    from wharfclient import cli, transfer
    from wharfclient.http import WharfClient

    alice = world.user("alice")
    token = alice.post("/api/api-tokens", json={"name": "ci", "scopes": ["read", "write"]})
    assert token.status_code == 201, token.text
    seen: list[str] = []
    app = components.api_app()

    def counting(environ, start_response):
        seen.append(f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}")
        return app(environ, start_response)

    client = WharfClient("http://wharf.test", token.json["token"])
    client.http = httpx.Client(base_url="http://wharf.test",
                               transport=httpx.WSGITransport(app=counting),
                               headers=client.http.headers)
    w = start_worker(components.broker)
    try:
        class Ui:
            def result(self, doc, line):
                self.doc = doc

            spinner = staticmethod(lambda what: contextlib.nullcontext())

        ui = Ui()
        args = argparse.Namespace(space=alice.personal_space_id, name="Plan", type="doc",
                                  parent=None, no_wait=False)
        assert cli.cmd_create(client, ui, args) == cli.EXIT_OK
        assert ui.doc["status"] == "completed"
        data = b"hello, prefer"
        session = client.json("POST", "/api/blob-upload-sessions", key=uuid.uuid4().hex,
                              json={"space_id": alice.personal_space_id, "parent_id": None,
                                    "filename": "n.txt", "size": len(data)})
        op = transfer.finish_upload(client, session, io.BytesIO(data), lambda *_: None)
        assert op["status"] == "completed"
    finally:
        w.stop()
        client.close()
    assert not [r for r in seen if r.startswith("GET /api/operations/")], seen
    assert count(db, Resource, Resource.created_by == alice.user_id) == 2
