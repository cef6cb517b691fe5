"""A webhook delivery sent again after its worker was killed with SIGKILL (issue 16), with
real processes: ``wharf worker`` and ``wharf scheduler`` subprocesses on PostgreSQL +
Redis, the API in-process (``Components.api_app()`` behind the contract-checking
``ApiClient``, as in ``test_operations_processes.py``) and a local receiver (an
``http.server`` thread on 127.0.0.1, so ``WHARF_WEBHOOK_ALLOW_PRIVATE`` is on).

The "killed after sending" window, made certain rather than raced: the receiver takes the
first request whole (headers and body, recorded as delivered to the receiver) and holds
its ``200`` until the test has SIGKILLed the worker's whole process group. The worker is
then provably between its send and its recording (waiting for the status line, well
within ``WHARF_WEBHOOK_TIMEOUT``): the database still says ``pending``, no attempt
counted, the dead worker's claim in place. A receiver that answered at once would race
the kill against the worker's recording, and a won race would prove nothing.

Then a new worker starts; once the dead worker's claim expired (``WHARF_WEBHOOK_TIMEOUT``
+ 1 s + ``WHARF_WEBHOOK_CLAIM_MARGIN_SECONDS``, 1 s here) the ``retry_webhook_deliveries``
sweep (every second) rings the delivery again and it is sent again: the receiver sees two
requests with the same ``webhook-id`` and the same body, both signatures verify, and the
delivery ends ``delivered`` with one recorded attempt (the killed send recorded nothing);
one operation, one delivery: one logical event. PostgreSQL and Redis are required
(skipped without them, failed under ``WHARF_TEST_REQUIRE_SERVICES=1``); SQLite is not
covered, as in the other process tests.
"""
from __future__ import annotations

import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import (
    ProcessCluster,
    cluster_fixture,
    databases_fixture,
    redis_fixture,
    sign_up,
)
from tests.support.waiting import wait_until
from tests.webhooks.test_webhooks import verify

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

WEBHOOK_TIMEOUT = 3.0  # the kill comes well within it: the send is still waiting then
CLAIM_MARGIN = 1  # WHARF_WEBHOOK_CLAIM_MARGIN_SECONDS: the dead worker's claim, 5 s in all
RESEND_DEADLINE = 60.0  # from the kill to the delivery recorded (~7 s idle; a worker start)


pg_databases = databases_fixture("wharf_proc")
redis_ns = redis_fixture("webhooks-processes")


class HoldingReceiver:
    """A local endpoint recording every request. The first one is read whole, then its
    ``200`` is held until ``release`` is set (the test kills the worker in between); the
    others are answered at once."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.first_received = threading.Event()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                receiver.requests.append({"headers": {k.lower(): v for k, v in
                                                      self.headers.items()}, "body": body})
                if len(receiver.requests) == 1:
                    receiver.first_received.set()
                    receiver.release.wait(30)
                try:
                    self.send_response(200)
                    self.send_header("content-length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:
                    pass  # the first sender is dead by now: nobody reads this answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = HoldingReceiver()
    yield r
    r.stop()


class Cluster(ProcessCluster):
    def __init__(self, tmp_path: Path, product_url: str, units_url: str, redis_ns):
        super().__init__(tmp_path, product_url, units_url, redis_ns,
                         WHARF_WEBHOOK_ALLOW_PRIVATE="true",
                         WHARF_WEBHOOK_TIMEOUT=str(WEBHOOK_TIMEOUT),
                         WHARF_WEBHOOK_CLAIM_MARGIN_SECONDS=str(CLAIM_MARGIN),
                         WHARF_SWEEP_INTERVAL="1")

    def delivery_rows(self) -> list[Any]:
        return self.sql("SELECT id, status, attempts, claim, last_status_code, subject_id "
                        "FROM webhook_deliveries")

    def state(self) -> list[str]:
        return [f"--- webhook deliveries: {[tuple(map(str, r)) for r in self.delivery_rows()]}"]


cluster = cluster_fixture(Cluster)


def test_worker_killed_after_sending_resends_with_the_same_webhook_id(cluster, receiver):
    client = cluster.api()
    space = sign_up(client)["personal_space_id"]
    r = client.post("/api/webhooks", json={"url": receiver.url,
                                           "events": ["operation.completed"]})
    assert r.status_code == 201, r.text
    hook = r.json
    cluster.start_scheduler()  # the retry_webhook_deliveries sweep, every second
    first = cluster.start_worker("first")
    r = client.post("/api/resources", json={"space_id": space, "name": "announced",
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    op_id = r.json["id"]

    # The first worker executes the operation and sends its delivery; the receiver has it
    # whole and holds the answer: the worker waits for it, between sending and recording.
    # Killed at once, well within WHARF_WEBHOOK_TIMEOUT (the send still waits).
    assert receiver.first_received.wait(60), cluster.logs()
    cluster.kill_group(first)
    killed_at = time.monotonic()
    receiver.release.set()  # the 200 goes to a dead socket
    assert len(receiver.requests) == 1
    # The dead worker recorded nothing: pending, no attempt counted, its claim still set.
    (row,) = cluster.delivery_rows()
    assert (row.status, row.attempts, row.subject_id) == ("pending", 0, op_id)
    assert row.claim is not None

    cluster.start_worker("second")
    done = wait_until(
        lambda: [d for d in client.get(f"/api/webhooks/{hook['id']}/deliveries")
                 .json["items"] if d["status"] == "delivered"],
        RESEND_DEADLINE, "the delivery sent again and recorded", cluster)
    resent_in = time.monotonic() - killed_at
    print(f"delivery sent again and recorded {resent_in:.1f}s after SIGKILL")

    (d,) = done
    assert len(receiver.requests) == 2, receiver.requests
    assert [q["headers"]["webhook-id"] for q in receiver.requests] == [d["id"], d["id"]]
    bodies = [verify(hook["secret"], q) for q in receiver.requests]  # both signatures
    assert bodies[0] == bodies[1] and bodies[0]["id"] == d["id"]
    assert bodies[0]["data"]["operation"]["id"] == op_id
    assert bodies[0]["data"]["operation"]["status"] == "completed"
    # One recorded attempt (the killed send never was), its 200, no error.
    assert (d["attempts"], d["last_status_code"], d["last_error"]) == (1, 200, None)
    assert d["operation_id"] == op_id
    # One logical event: one operation completed once, one delivery for it.
    (row,) = cluster.delivery_rows()
    assert row.claim is None
    r = client.get(f"/api/operations/{op_id}")
    assert r.json["status"] == "completed" and r.json["attempts"] == 1
    assert client.get(f"/api/webhooks/{hook['id']}").json["enabled"]
