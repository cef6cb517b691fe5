"""Tracing (issue 15): one trace from the HTTP request through the outbox and the broker to
the worker's attempts, with an in-memory span exporter; on SQLite and PostgreSQL.

The API runs in-process (test client) and the in-process broker's worker threads answer
the doorbells, as in test_operations.py. Tracing is set up for the test (the SDK's
``InMemorySpanExporter``) and torn down after it.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from sqlalchemy import select, update

from storage.models import Operation, OperationAttempt, OutboxMessage
from tests.blobs.test_blobs import put_bytes, start_upload
from tests.conftest import World
from tests.engine.test_operations import FlakyUnitStore, create, start_worker, wait_done
from tests.support import services
from tests.support.processes import REPO, redis_namespace
from tests.support.waiting import wait_until
from wharf.infra.clock import utcnow
from wharf.infra.errors import TransientFailure
from wharf.infra.settings import ConfigError
from wharf.operations import recovery
from wharfd import tracing as wiring
from wharfd.runtime import Components

EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on (as with OTEL_TRACES_EXPORTER set) into the in-memory exporter."""
    assert wiring.setup("serve", environ={}, exporter=EXPORTER)
    EXPORTER.clear()
    yield EXPORTER
    wiring.teardown()
    EXPORTER.clear()


@pytest.fixture
def traced(spans, settings, db) -> Iterator[Components]:
    """The embedded wiring, built after tracing was set up (as each process does)."""
    comps = Components(settings, db=db)
    yield comps
    comps.close()


def finished() -> list[ReadableSpan]:
    return list(EXPORTER.get_finished_spans())


def attempts_of(op_id: str) -> list[ReadableSpan]:
    return sorted((s for s in finished() if s.name == "operation.attempt"
                   and s.attributes and s.attributes["wharf.operation.id"] == op_id),
                  key=lambda s: s.attributes["wharf.operation.attempt"])  # type: ignore[index]


def request_span(method: str, route: str) -> ReadableSpan:
    found = [s for s in finished() if s.kind == SpanKind.SERVER
             and s.name == f"{method} {route}"]
    assert len(found) == 1, [s.name for s in finished()]
    return found[0]


def trace_of(span: ReadableSpan) -> list[ReadableSpan]:
    tid = span.context.trace_id
    return [s for s in finished() if s.context.trace_id == tid]


def descends_from(span: ReadableSpan, ancestor: ReadableSpan) -> bool:
    by_id = {s.context.span_id: s for s in trace_of(ancestor)}
    parent = span.parent
    while parent is not None:
        if parent.span_id == ancestor.context.span_id:
            return True
        nxt = by_id.get(parent.span_id)
        parent = nxt.parent if nxt is not None else None
    return False


def is_database_call(span: ReadableSpan) -> bool:
    """A SQLAlchemy statement's span (old or new semantic conventions)."""
    attributes = span.attributes or {}
    return span.kind == SpanKind.CLIENT and ("db.system" in attributes
                                             or "db.system.name" in attributes)


def stored_context(db, op_id: str) -> tuple[str | None, list[str | None]]:
    with db.read() as s:
        op = s.get(Operation, op_id)
        assert op is not None
        rows = list(s.scalars(select(OutboxMessage.trace_context)
                              .where(OutboxMessage.subject_id == op_id)))
        return op.trace_context, rows


def test_one_operation_is_one_trace_from_request_to_worker(traced, db):
    world = World(traced.api_app())
    alice = world.user("alice")
    w = start_worker(traced.broker)
    try:
        op = create(alice, alice.personal_space_id).json
        assert wait_done(alice, op["id"])["status"] == "completed"
        wait_until(lambda: len(attempts_of(op["id"])) == 1, 10, "the attempt span")
        wait_until(lambda: any(s.name == "dramatiq.process" for s in finished()), 10,
                   "the message's span")
    finally:
        w.stop()
    post = request_span("POST", "/api/resources")
    tid = post.context.trace_id
    (attempt,) = attempts_of(op["id"])
    assert attempt.context.trace_id == tid
    assert attempt.attributes is not None
    assert attempt.attributes["wharf.operation.kind"] == "create_resource"
    assert attempt.attributes["wharf.operation.attempt"] == 1
    assert attempt.attributes["wharf.operation.outcome"] == "completed"
    assert attempt.status.status_code != StatusCode.ERROR
    names = {s.name for s in trace_of(post)}
    # POST → outbox → dispatch → the message → the batch (claim, completion) → the attempt
    assert {"outbox.dispatch", "dramatiq.process", "operation.batch",
            "operation.attempt"} <= names, names
    batch = next(s for s in trace_of(post) if s.name == "operation.batch")
    assert descends_from(batch, post) and descends_from(attempt, post)
    assert any(link.context.trace_id == tid for link in batch.links)
    database = [s for s in trace_of(post) if is_database_call(s)]
    assert any(descends_from(s, batch) for s in database)  # the claim, the completion
    assert any(s.parent is not None and s.parent.span_id == post.context.span_id
               for s in database)  # the submit's INSERTs
    assert any(s.parent is not None and s.parent.span_id == attempt.context.span_id
               for s in database)  # the side effect: the unit store's statements
    op_context, outbox_contexts = stored_context(db, op["id"])
    assert op_context is not None and op_context.split("-")[1] == f"{tid:032x}"
    assert outbox_contexts == [op_context]


def test_a_submission_that_waits_answers_200_with_tracing_on(traced):
    """``Prefer: wait`` rewrites the answer after StatusAsText ran: the status it sets is
    text too, or OpenTelemetry's middleware fails the committed request with a 500."""
    alice = World(traced.api_app()).user("alice")
    w = start_worker(traced.broker)
    try:
        r = alice.post("/api/resources", json={"space_id": alice.personal_space_id,
                                               "name": "Traced", "unit_type": "doc"},
                       headers={"Idempotency-Key": uuid.uuid4().hex, "Prefer": "wait=30"})
    finally:
        w.stop()
    assert r.status_code == 200, r.text
    assert r.json["status"] == "completed"
    post = request_span("POST", "/api/resources")
    assert post.attributes is not None
    assert post.attributes.get("http.response.status_code",
                               post.attributes.get("http.status_code")) == 200


def test_a_blob_operation_shows_its_s3_calls_in_the_trace(spans, settings, db, s3_store):
    comps = Components(settings, db=db, blob_store=s3_store)
    world = World(comps.api_app())
    alice = world.user("alice")
    w = start_worker(comps.broker)
    try:
        data = b"traced bytes" * 100
        sess = start_upload(alice, alice.personal_space_id, "t.bin", len(data))
        assert put_bytes(alice, sess["id"], data).status_code == 200
        r = alice.post(f"/api/blob-upload-sessions/{sess['id']}/complete",
                       headers={"Idempotency-Key": os.urandom(12).hex()})
        assert r.status_code == 202, r.text
        op_id = r.json["id"]
        assert wait_done(alice, op_id, 30)["status"] == "completed"
        wait_until(lambda: len(attempts_of(op_id)) == 1, 10, "the attempt span")
    finally:
        w.stop()
        comps.close()
    (attempt,) = attempts_of(op_id)
    complete = request_span("POST", "/api/blob-upload-sessions/{session_id}/complete")
    assert attempt.context.trace_id == complete.context.trace_id
    s3_calls = [s for s in trace_of(attempt) if s.attributes
                and s.attributes.get("rpc.service") == "S3" and descends_from(s, attempt)]
    assert s3_calls, [s.name for s in trace_of(attempt)]  # the verification reads the object


def test_a_retried_operation_has_one_attempt_span_each_in_the_same_trace(spans, settings, db):
    failure = TransientFailure("unit store down", code="unitstore_unavailable")
    real = Components(settings, db=db)
    comps = Components(settings, db=db, unitstore=FlakyUnitStore(real.unitstore, [failure]))
    world = World(comps.api_app())
    alice = world.user("alice")
    w = start_worker(comps.broker)
    try:
        op = create(alice, alice.personal_space_id).json
        done = wait_done(alice, op["id"])
        wait_until(lambda: len(attempts_of(op["id"])) == 2, 10, "two attempt spans")
    finally:
        w.stop()
        comps.close()
        real.close()
    assert done["status"] == "completed" and done["attempts"] == 2
    first, second = attempts_of(op["id"])
    post = request_span("POST", "/api/resources")
    assert first.context.trace_id == second.context.trace_id == post.context.trace_id
    assert [a.attributes["wharf.operation.attempt"] for a in (first, second)] == [1, 2]  # type: ignore[index]
    assert first.status.status_code == StatusCode.ERROR
    assert first.attributes["wharf.operation.outcome"] == "retry"  # type: ignore[index]
    assert [e.name for e in first.events].count("exception") == 1  # recorded once
    assert second.status.status_code != StatusCode.ERROR


def test_a_rerun_after_the_lease_expired_joins_the_original_trace(traced, db):
    world = World(traced.api_app())
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id).json
    traced.dispatcher.flush()
    traced.broker.flush_all()  # its bell is gone with the worker that took it ...
    with db.write() as s:  # ... which claimed it and was killed (kill -9: no span ended)
        s.execute(update(Operation).where(Operation.id == op["id"]).values(
            status="running", attempts=1, lease_owner="dead",
            lease_expires_at=utcnow().replace(year=2000)))
        s.add(OperationAttempt(operation_id=op["id"], number=1, worker_id="dead"))
    assert recovery.recover(db, traced.dispatcher.send, grace_seconds=0,
                            key_ttl=traced.settings.idempotency_key_ttl).requeued == 1
    w = start_worker(traced.broker)
    try:
        assert wait_done(alice, op["id"])["attempts"] == 2
        wait_until(lambda: len(attempts_of(op["id"])) == 1, 10, "the re-run's attempt span")
    finally:
        w.stop()
    (rerun,) = attempts_of(op["id"])
    assert rerun.attributes["wharf.operation.attempt"] == 2  # type: ignore[index]
    assert rerun.context.trace_id == request_span("POST", "/api/resources").context.trace_id


def test_with_tracing_off_nothing_is_stored_and_no_span_is_made(world, components, db):
    wiring.teardown()
    EXPORTER.clear()
    alice = world.user("alice")
    w = start_worker(components.broker)
    try:
        op = create(alice, alice.personal_space_id).json
        assert wait_done(alice, op["id"])["status"] == "completed"
    finally:
        w.stop()
    components.dispatcher.flush()
    assert stored_context(db, op["id"]) == (None, [None])
    assert finished() == []


@pytest.mark.parametrize("value, expected", [(None, []), ("", []), ("none", []),
                                             ("console", ["console"]),
                                             ("OTLP, console", ["otlp", "console"])])
def test_the_exporter_variable_turns_tracing_on(value, expected):
    env = {} if value is None else {"OTEL_TRACES_EXPORTER": value}
    assert wiring.exporters_from(env) == expected


def test_an_unknown_exporter_is_a_configuration_error_naming_the_variable():
    with pytest.raises(ConfigError, match="OTEL_TRACES_EXPORTER='jaeger'"):
        wiring.exporters_from({"OTEL_TRACES_EXPORTER": "jaeger"})
    r = subprocess.run([sys.executable, "-m", "wharfd.cli", "scheduler"], cwd=REPO,
                       env={**os.environ, "OTEL_TRACES_EXPORTER": "jaeger"},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "OTEL_TRACES_EXPORTER" in r.stderr, r.stderr


# -- the processes start with the console exporter ---------------------------------------------

def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "wharfd.cli", *args], cwd=REPO, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(proc: subprocess.Popen[bytes]) -> int:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        return proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait(5)


def _process_env(tmp_path: Path, ns: services.RedisNamespace) -> dict[str, str]:
    """The environment of ``wharf`` processes on SQLite files in ``tmp_path`` and this
    test's Redis namespace, tracing to the console; the databases migrated."""
    from tests.support.waiting import free_port
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WHARF_", "OTEL_", "GUNICORN_"))}
    env.update(WHARF_DATA_DIR=str(tmp_path / "data"), WHARF_BROKER_URL=ns.url,
               WHARF_DATABASE_URL=f"sqlite:///{tmp_path / 'data' / 'wharf.db'}",
               WHARF_UNITSTORE_URL=f"sqlite:///{tmp_path / 'data' / 'units.db'}",
               WHARF_BROKER_NAMESPACE=ns.name, WHARF_PORT=str(free_port()),
               WHARF_ARGON2_TIME_COST="1", WHARF_ARGON2_MEMORY_COST="8",
               WHARF_ARGON2_PARALLELISM="1",
               OTEL_TRACES_EXPORTER="console", PYTHONUNBUFFERED="1",
               GUNICORN_CMD_ARGS="--no-control-socket")
    assert subprocess.run([sys.executable, "-m", "wharfd.cli", "migrate"], cwd=REPO,
                          env=env, capture_output=True, timeout=120).returncode == 0
    return env


def _console_spans(text: str) -> list[dict]:  # type: ignore[type-arg]
    """The spans the console exporter printed (JSON objects, each from a line "{")."""
    return [obj for obj, _, _ in _span_objects(text)]


def _span_objects(text: str) -> Iterator[tuple[dict, int, int]]:  # type: ignore[type-arg]
    decoder, at = json.JSONDecoder(), 0
    while (at := text.find("\n{\n", at)) >= 0:
        try:
            obj, end = decoder.raw_decode(text, at + 1)
        except ValueError:
            at += 1
            continue
        if isinstance(obj, dict) and "context" in obj:
            yield obj, at + 1, end
        at = end


def _outside_spans(text: str) -> str:
    """The log without the printed spans whose only recorded exceptions are redis-py's
    EVALSHA answered NOSCRIPT (a Redis that had not seen the script yet; redis-py runs it
    again with EVAL): a span records the exception its call handled, traceback and all."""
    kept, at = [], 0
    for obj, start, end in _span_objects(text):
        raised = [e.get("attributes", {}).get("exception.type", "")
                  for e in obj.get("events", []) if e.get("name") == "exception"]
        if raised and all(t.endswith("NoScriptError") for t in raised):
            kept.append(text[at:start])
            at = end
    return "".join(kept) + text[at:]


def test_the_trace_crosses_redis_into_a_worker_process(spans, tmp_path):
    """The API in this process (in-memory exporter), a real ``wharf worker`` (console
    exporter) answering through Redis: the worker's attempt is in the POST's trace."""
    services.need(services.redis_error())
    from wharf.infra.settings import Settings
    with redis_namespace("tracing") as ns:
        assert ns is not None
        env = _process_env(tmp_path, ns)
        comps = Components(Settings.from_env({k: v for k, v in env.items()
                                              if k.startswith("WHARF_")}))
        log = tmp_path / "worker.log"
        proc = _start(["worker", "--processes", "1", "--threads", "1"], env, log)
        try:
            alice = World(comps.api_app()).user("alice")
            op = create(alice, alice.personal_space_id).json
            assert wait_done(alice, op["id"], 30)["status"] == "completed"
        finally:
            code = _stop(proc)
            comps.close()
        text = log.read_text()
        assert code == 0 and "Traceback" not in _outside_spans(text), text
    post = request_span("POST", "/api/resources")
    worker = [s for s in _console_spans(text) if s["name"] == "operation.attempt"
              and s["attributes"]["wharf.operation.id"] == op["id"]]
    assert len(worker) == 1, text
    assert worker[0]["context"]["trace_id"] == f"0x{post.context.trace_id:032x}"
    assert worker[0]["resource"]["attributes"]["service.name"] == "wharf-worker"
    consumed = [s for s in _console_spans(text) if s["name"] == "dramatiq.process"
                and s["context"]["trace_id"] == worker[0]["context"]["trace_id"]]
    assert consumed, text  # the message carried the context through Redis


@pytest.mark.parametrize("command", [["worker", "--processes", "1", "--threads", "1"],
                                     ["api", "--workers", "1", "--threads", "2"]])
def test_processes_start_with_the_console_exporter(command, tmp_path):
    services.need(services.redis_error())
    with redis_namespace("tracing") as ns:
        assert ns is not None
        env = _process_env(tmp_path, ns)
        port = int(env["WHARF_PORT"])
        log = tmp_path / "out.log"
        proc = _start(command, env, log)
        try:
            ready = "consuming with" if command[0] == "worker" else "Booting worker"
            wait_until(lambda: ready in log.read_text() or proc.poll() is not None, 60,
                       f"{command[0]} to start")
            if command[0] == "api":
                import requests
                wait_until(lambda: _answers(requests, port), 30, "the API to answer")
                requests.get(f"http://127.0.0.1:{port}/api/openapi.json", timeout=10)
            time.sleep(1)
            assert proc.poll() is None, log.read_text()
        finally:
            code = _stop(proc)
        text = log.read_text()
        assert "Traceback" not in _outside_spans(text) and code == 0, text
        if command[0] == "api":
            assert '"name": "GET /api/openapi.json"' in text, text  # the console exporter's
            assert '"name": "GET /healthz"' not in text, text  # probes are not traced


def _answers(requests, port: int) -> bool:  # type: ignore[no-untyped-def]
    try:
        return bool(requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).ok)
    except requests.RequestException:
        return False


def test_a_drains_hand_over_bell_starts_no_part_of_the_submitters_trace(spans, settings):
    """A full claim rings once more so another worker joins: that bell is the system's
    work, not the request's whose bell started the drain, so it carries no trace context
    (else one submitter's trace would take in every batch while the system stays busy)."""
    import dramatiq as dq
    from dramatiq.brokers.stub import StubBroker

    from tasks.dispatch import BrokerDispatcher
    from tasks.tracing import install
    from wharf.observability import tracing
    broker = StubBroker()
    install(broker)
    broker.declare_queue("operations")
    dispatcher = BrokerDispatcher(broker, db=None)  # type: ignore[arg-type]
    with tracing.start_span("dramatiq.process"):
        assert tracing.current_traceparent() is not None
        dispatcher.ring_more("op_create_resource")
        probe = dq.Message(queue_name="operations", actor_name="op_create_resource",
                           args=(), kwargs={}, options={})
        broker.enqueue(probe)  # an ordinary enqueue in the same span does carry it
    bell, ordinary = broker.queues["operations"].queue
    assert tracing.TRACEPARENT not in dq.Message.decode(bell).options
    assert tracing.TRACEPARENT in dq.Message.decode(ordinary).options
