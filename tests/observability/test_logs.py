"""Structured logs (wharfd/logs.py, wharf/observability/logctx.py): what an operator reads and ships.

In process: the JSON formatter every process installs, on a private handler, shows the
context a request and an operation bind (request id, user, operation id, kind, attempt)
and that it does not leak to the next one on the same thread. Across processes: the
default format of each command (``wharf worker``: JSON lines on stderr, ``wharf serve``:
text), and gunicorn's own lines in the same format.
"""
from __future__ import annotations

import io
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

import api.serialize
from storage.models import Operation
from tests.cli.test_cli import WHARF, run_wharf, wharf_env
from tests.conftest import World
from tests.observability.test_tracing import spans  # noqa: F401  (a fixture)
from tests.support import services
from tests.support.waiting import free_port
from wharf.infra.errors import TransientFailure, WharfError
from wharf.observability import logctx
from wharf.operations.executor import Executor
from wharfd import logs

Lines = Callable[[], list[dict]]


@pytest.fixture
def json_lines() -> Iterator[Lines]:
    """Every record logged during the test, through the JSON formatter, parsed (one
    ``json.loads`` per physical line: a record written on two lines would fail here)."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logs.formatter("json"))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)

    def lines() -> list[dict]:
        return [json.loads(line) for line in buffer.getvalue().splitlines()]

    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def create(client, space_id: str) -> dict:
    r = client.post("/api/resources", json={"space_id": space_id, "name": "Doc",
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    return r.json


# --- requests ------------------------------------------------------------------------------

def test_a_request_line_carries_the_request_id_the_client_sent_and_the_user(
        world, monkeypatch, json_lines):
    alice = world.user("alice")
    real_user = api.serialize.user

    def failing(user):  # a warning, then a bug: the 500 path logs the trace
        logging.getLogger("wharf.test").warning("about to fail for %s", user.username)
        raise RuntimeError("boom")

    monkeypatch.setattr(api.serialize, "user", failing)
    # check=False: this 500 is injected (the contract documents none)
    r = alice.get("/api/me", headers={"X-Request-Id": "client-rid-42"}, check=False)
    assert r.status_code == 500 and r.json["request_id"] == "client-rid-42"
    monkeypatch.setattr(api.serialize, "user", real_user)

    ours = [line for line in json_lines() if line.get("request_id") == "client-rid-42"]
    warning = next(line for line in ours if line["logger"] == "wharf.test")
    assert warning["message"] == "about to fail for alice"
    assert warning["level"] == "warning" and warning["user_id"] == alice.user_id
    assert warning["timestamp"].endswith("Z")
    error = next(line for line in ours if line["logger"] == "wharf.api")
    assert error["level"] == "error" and error["message"] == "unhandled error on GET /api/me"
    # the whole trace in one field of one line
    assert error["exception"].startswith("Traceback (most recent call last)")
    assert "RuntimeError: boom" in error["exception"]

    # The next request on this thread carries its own id, not the last one's; between
    # requests, nothing is bound.
    assert logctx.current() == {}
    logging.getLogger("wharf.test").warning("between requests")
    r = alice.get("/api/me")
    assert r.status_code == 200
    rid = r.headers["x-request-id"]
    assert rid != "client-rid-42"
    logging.getLogger("wharf.test").warning("after")
    tail = [line for line in json_lines() if line["logger"] == "wharf.test"]
    assert [line["message"] for line in tail][-2:] == ["between requests", "after"]
    assert all("request_id" not in line and "user_id" not in line for line in tail[-2:])


def test_request_context_does_not_cross_threads():
    seen: dict[str, dict] = {}
    bound = threading.Event()
    checked = threading.Event()

    def request_thread() -> None:
        logctx.bind_request("rid-thread")
        bound.set()
        checked.wait(5)
        seen["own"] = logctx.current()
        logctx.clear_request()

    t = threading.Thread(target=request_thread)
    t.start()
    bound.wait(5)
    seen["other"] = logctx.current()
    checked.set()
    t.join()
    assert seen["own"] == {"request_id": "rid-thread"}
    assert seen["other"] == {}


# --- operations ----------------------------------------------------------------------------

class LoggingHandler:
    """A create_resource handler that logs from perform and commit, failing (retryably)
    its first attempt."""

    kind = "create_resource"

    def __init__(self) -> None:
        self.log = logging.getLogger("wharf.test.kind")
        self.calls = 0

    def authorize(self, s, op, actor):
        pass

    def perform(self, op):
        self.calls += 1
        self.log.warning("performing")
        if self.calls == 1:
            raise TransientFailure("not yet", code="unitstore_unavailable")

    def commit(self, s, op, ctx):
        self.log.warning("committing")
        return {k: op.payload[k] for k in ("node_id", "resource_id", "unit_id")}

    def compensate(self, op):
        pass


def _execute_when_due(executor: Executor, op_id: str) -> str:
    deadline = time.monotonic() + 10
    while (outcome := executor.execute(op_id, "w-test")) == "skipped":
        assert time.monotonic() < deadline, "the retry never came due"
        time.sleep(0.05)
    return outcome


def test_operation_lines_carry_operation_id_kind_and_attempt(settings, db, world,
                                                             json_lines):
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id)
    executor = Executor(db, settings, {"create_resource": LoggingHandler()})
    assert _execute_when_due(executor, op["id"]) == "retry"
    assert logctx.current() == {}  # nothing left bound on the thread
    logging.getLogger("wharf.test.kind").warning("between attempts")
    assert _execute_when_due(executor, op["id"]) == "completed"

    lines = [line for line in json_lines() if line["logger"].startswith("wharf.")]
    ours = [(line["message"], line.get("operation_id"), line.get("kind"),
             line.get("attempt")) for line in lines
            if line["logger"] in ("wharf.test.kind", "wharf.operations")]
    opid = op["id"]
    assert ours == [
        ("performing", opid, "create_resource", 1),
        (next(m for m, *_ in ours if m.startswith(f"operation {opid}: attempt 1 failed")),
         opid, "create_resource", 1),
        ("between attempts", None, None, None),
        ("performing", opid, "create_resource", 2),
        ("committing", opid, "create_resource", 2),
        (f"operation {opid} completed", opid, "create_resource", 2),
    ]
    # the request that submitted it is not on the worker's lines
    assert all("request_id" not in line for line in lines if line.get("operation_id"))


def test_batch_lines_carry_the_batch_and_each_operation_its_own(settings, db, world,
                                                                json_lines):
    alice = world.user("alice")
    ops = [create(alice, alice.personal_space_id)["id"] for _ in range(3)]
    handler = LoggingHandler()
    handler.calls = 1  # no failure: all three complete in one batch

    def perform_many(batch):
        handler.log.warning("performing %d at once", len(batch))
        raise RuntimeError("fall back to one by one")

    handler.perform_many = perform_many  # type: ignore[attr-defined]
    executor = Executor(db, settings, {"create_resource": handler})
    assert executor.run_batch(("create_resource",), limit=10) == 3
    with db.read() as s:
        assert {s.get(Operation, i).status for i in ops} == {"completed"}

    lines = [line for line in json_lines() if line["logger"] == "wharf.test.kind"]
    many = lines[0]
    assert many["message"] == "performing 3 at once"
    assert many["batch_size"] == 3 and sorted(many["operation_ids"]) == sorted(ops)
    assert many["kind"] == "create_resource" and "operation_id" not in many
    # one by one: each line names its own operation
    performing = [line for line in lines if line["message"] == "performing"]
    assert sorted(line["operation_id"] for line in performing) == sorted(ops)
    committing = [line for line in lines if line["message"] == "committing"]
    assert sorted(line["operation_id"] for line in committing) == sorted(ops)
    assert all(line["attempt"] == 1 and line["batch_size"] == 3
               for line in performing + committing)
    # the batch's completion: one line per operation, each naming its own only
    done = _outcome_lines(json_lines)
    assert sorted(line["operation_id"] for line in done) == sorted(ops)
    assert all(line["status"] == "completed" and "operation_ids" not in line
               for line in done)
    assert logctx.current() == {}


def _outcome_lines(json_lines: Lines) -> list[dict]:
    return [line for line in json_lines()
            if line["logger"] == "wharf.operations" and "status" in line]


def test_each_terminal_outcome_writes_one_line(settings, db, world, json_lines):
    """A completed operation (INFO) and one that failed for good (WARNING, with its error
    code) each write one line: its id, kind, attempt, status and duration."""
    alice = world.user("alice")
    done, doomed = (create(alice, alice.personal_space_id)["id"] for _ in range(2))
    handler = LoggingHandler()
    handler.calls = 1  # no retry

    def perform(op):
        if op.id == doomed:
            raise WharfError("no such target", code="unit_unavailable")

    handler.perform = perform  # type: ignore[method-assign]
    executor = Executor(db, settings, {"create_resource": handler})
    assert executor.execute(done, "w-test") == "completed"
    assert executor.execute(doomed, "w-test") == "failed"

    lines = _outcome_lines(json_lines)
    assert [(line["operation_id"], line["status"], line["level"]) for line in lines] == [
        (done, "completed", "info"), (doomed, "failed", "warning")]
    for line in lines:
        assert line["kind"] == "create_resource" and line["attempt"] == 1
        assert isinstance(line["duration_s"], float) and line["duration_s"] >= 0
        assert "trace_id" not in line  # tracing is off
    assert "error_code" not in lines[0] and lines[1]["error_code"] == "unit_unavailable"


def test_a_cancelled_operation_writes_its_line_too(world, json_lines):
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id)
    assert alice.post(f"/api/operations/{op['id']}/cancel").status_code == 200
    (line,) = _outcome_lines(json_lines)
    assert line["operation_id"] == op["id"] and line["status"] == "failed"
    assert line["error_code"] == "cancelled" and line["level"] == "warning"
    assert line["attempt"] == 0


@pytest.mark.usefixtures("spans")  # tracing on
def test_the_outcome_line_carries_the_operations_trace_id(settings, db, json_lines):
    from tests.engine.test_operations import start_worker, wait_done
    from wharfd.runtime import Components
    comps = Components(settings, db=db)
    w = start_worker(comps.broker)
    try:
        alice = World(comps.api_app()).user("alice")
        op = create(alice, alice.personal_space_id)
        assert wait_done(alice, op["id"])["status"] == "completed"
    finally:
        w.stop()
        comps.close()
    with db.read() as s:
        trace_context = s.get(Operation, op["id"]).trace_context
    (line,) = [line for line in _outcome_lines(json_lines)
               if line["operation_id"] == op["id"]]
    assert line["trace_id"] == trace_context.split("-")[1]


def test_the_outcome_line_builds_nothing_below_its_level(settings, db, world, monkeypatch):
    """With the level above INFO, a completion does not even build the line's fields."""
    from wharf.operations import finish
    built: list[object] = []
    real_round = round
    monkeypatch.setattr(finish, "round", lambda *a: built.append(a) or real_round(*a),
                        raising=False)
    monkeypatch.setattr(finish.log, "isEnabledFor", lambda level: level > logging.INFO)
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id)
    handler = LoggingHandler()
    handler.calls = 1
    assert Executor(db, settings, {"create_resource": handler}).execute(
        op["id"], "w-test") == "completed"
    assert built == []


def test_a_sweep_run_writes_one_line_with_its_name_rows_and_duration(
        world, components, json_lines):
    from sqlalchemy import update

    from wharf.infra.clock import utcnow
    from wharf.retention.runner import run_sweep
    from wharf.retention.sweeps import SweepContext
    alice = world.user("alice")
    op = create(alice, alice.personal_space_id)
    assert alice.post(f"/api/operations/{op['id']}/cancel").status_code == 200
    with components.db.write() as s:  # its key's TTL is over
        s.execute(update(Operation).where(Operation.id == op["id"]).values(
            key_expires_at=utcnow().replace(year=2000)))
    run_sweep(SweepContext(db=components.db, settings=components.settings, now=utcnow()),
              "release_idempotency_keys")
    (line,) = [line for line in json_lines() if line["logger"] == "wharf.sweeps"]
    assert line["sweep"] == "release_idempotency_keys" and line["level"] == "info"
    assert line["rows"] == 1 and line["outcome"] == "done"
    assert isinstance(line["duration_s"], float)


def test_lines_below_the_level_are_not_formatted(json_lines):
    """A DEBUG record under an INFO root is dropped by ``logging`` itself: the processors
    (and the bound context) are never touched."""
    calls = []
    formatter = logs.formatter("json")
    real = formatter.format
    formatter.format = lambda record: calls.append(record) or real(record)  # type: ignore[method-assign]
    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(formatter)
    logger = logging.getLogger("wharf.test.level")
    logger.addHandler(handler)
    try:
        logger.debug("hidden %s", "arg")
        logger.info("shown")
    finally:
        logger.removeHandler(handler)
    assert [r.getMessage() for r in calls] == ["shown"]


def test_trace_fields_come_from_a_recording_span_only(json_lines):
    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    class Recording(NonRecordingSpan):
        def is_recording(self) -> bool:
            return True

    ctx = SpanContext(trace_id=0x1234, span_id=0xABCD, is_remote=False,
                      trace_flags=TraceFlags(TraceFlags.SAMPLED))
    log = logging.getLogger("wharf.test.trace")
    log.warning("no span")
    with trace.use_span(NonRecordingSpan(ctx)):
        log.warning("not recording")
    with trace.use_span(Recording(ctx)):
        log.warning("recording")
    got = {line["message"]: line for line in json_lines()}
    assert "trace_id" not in got["no span"] and "trace_id" not in got["not recording"]
    assert got["recording"]["trace_id"] == f"{0x1234:032x}"
    assert got["recording"]["span_id"] == f"{0xABCD:016x}"


def test_the_format_setting():
    assert logs.resolve("worker", {}) == "json"
    assert logs.resolve("api", {"WHARF_LOG_FORMAT": "auto"}) == "json"
    assert logs.resolve("scheduler", {}) == "json"
    assert logs.resolve("serve", {}) == "text"
    assert logs.resolve("migrate", {}) == "text"
    assert logs.resolve("serve", {"WHARF_LOG_FORMAT": "JSON"}) == "json"
    assert logs.resolve("worker", {"WHARF_LOG_FORMAT": "text"}) == "text"


def test_a_bad_format_is_a_configuration_error(tmp_path):
    result = run_wharf(tmp_path, "sweeps", env=wharf_env(tmp_path, WHARF_LOG_FORMAT="xml"))
    assert result.returncode == 2
    assert result.stderr.strip() == ("wharf: configuration error: WHARF_LOG_FORMAT='xml': "
                                     "expected one of auto, json, text")


PROBE = """
import logging, sys
from wharfd import logs
import wharfd.runtime  # what a worker or API process imports
logs.configure("INFO", "text")
try:
    1 / 0
except ZeroDivisionError:
    logging.getLogger("probe").exception("failed")
print(sorted(m for m in sys.modules if m.split(".")[0] in ("rich", "pygments")))
import rich.console  # the client's progress bars still can
"""


def test_a_process_logs_without_importing_rich_and_tracebacks_stay_plain(tmp_path):
    """structlog imports rich (and pygments) when it is installed; Wharf's processes
    never render with it, so it is not loaded (about 80 CPU-ms of every start)."""
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert "Traceback (most recent call last):" in out.stderr
    assert "ZeroDivisionError: division by zero" in out.stderr


# --- processes -----------------------------------------------------------------------------

def _wait_for_file_text(path, needle: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while needle not in (path.read_text() if path.exists() else ""):
        assert proc.poll() is None, f"exited with {proc.returncode}"
        assert time.monotonic() < deadline, f"no {needle!r} within {timeout}s"
        time.sleep(0.2)


def _start_logged(tmp_path, command: str, env: dict[str, str], *args: str):
    """``wharf <command> *args`` with stdout and stderr in files (read while it runs)."""
    out, err = tmp_path / f"{command}.out", tmp_path / f"{command}.err"
    proc = subprocess.Popen([*WHARF, command, *args], env=env, cwd=tmp_path, text=True,
                            stdin=subprocess.DEVNULL, stdout=out.open("w"),
                            stderr=err.open("w"), start_new_session=True)
    return proc, out, err


def _terminate(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(40)
    except subprocess.TimeoutExpired:  # pragma: no cover
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)
    except ProcessLookupError:
        pass


@pytest.mark.slow
def test_wharf_worker_writes_json_lines_to_stderr_by_default(tmp_path, request):
    services.need(services.redis_error())
    ns = services.RedisNamespace("logs")
    request.addfinalizer(ns.close)
    env = wharf_env(tmp_path, WHARF_BROKER_URL=ns.url, WHARF_BROKER_NAMESPACE=ns.name,
                    WHARF_WORKER_PROCESSES="1", WHARF_WORKER_THREADS="1")
    assert run_wharf(tmp_path, "migrate", env=env).returncode == 0
    proc, _out, err = _start_logged(tmp_path, "worker", env)
    try:
        _wait_for_file_text(err, "consuming with", proc, timeout=60)
    finally:
        _terminate(proc)
    lines = [json.loads(line) for line in err.read_text().splitlines()]  # every one JSON
    consuming = next(line for line in lines if "consuming with" in line["message"])
    assert consuming["level"] == "info" and consuming["logger"] == "wharf.worker"
    assert consuming["timestamp"].endswith("Z")


@pytest.mark.slow
def test_wharf_serve_writes_text_by_default(tmp_path):
    port = free_port()
    env = wharf_env(tmp_path, WHARF_PORT=str(port), WHARF_LOG_LEVEL="DEBUG")
    proc, out, err = _start_logged(tmp_path, "serve", env)
    try:
        _wait_for_file_text(out, "serving on", proc, timeout=60)
        r = requests.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
        assert r.status_code == 200
        _wait_for_file_text(err, "[debug", proc, timeout=30)
    finally:
        _terminate(proc)
    text = err.read_text().splitlines()
    assert text
    for line in text:
        if line[:4].isdigit():  # a line of its own (a trace's lines follow theirs)
            assert not line.startswith("{")
            assert line[:10].count("-") == 2 and " [" in line, line


def _serve_requests(tmp_path, *args: str, quiet: bool = False, **env: str) -> list[str]:
    """Start ``wharf serve *args``, send a request whose query carries a secret, stop it
    (``quiet``: without waiting for its line): its stderr lines."""
    port = free_port()
    proc, out, err = _start_logged(tmp_path, "serve", wharf_env(tmp_path, WHARF_PORT=str(port),
                                                                 **env), *args)
    try:
        _wait_for_file_text(out, "serving on", proc, timeout=60)
        r = requests.get(f"http://127.0.0.1:{port}/api/me?ticket=s3cret-ticket", timeout=10,
                         headers={"X-Request-Id": "probe-access"})
        assert r.status_code == 401
        r = requests.get(f"http://127.0.0.1:{port}/x%0aFORGED%1b[31m", timeout=10)
        assert r.status_code == 404
        r = requests.head(f"http://127.0.0.1:{port}/healthz", timeout=10)
        assert r.status_code == 200
        if not quiet:
            _wait_for_file_text(err, "HEAD /healthz", proc, timeout=10)
    finally:
        _terminate(proc)
    lines = err.read_text().splitlines()
    assert not any("s3cret-ticket" in line for line in lines)
    return lines


@pytest.mark.slow
def test_wharf_serve_writes_one_line_per_request(tmp_path):
    """A newcomer sees each request arrive: method, path (never the query string), status,
    duration and request id, in text by default."""
    lines = _serve_requests(tmp_path)
    line = next(line for line in lines if "GET /api/me 401" in line)
    assert "[wharf.access]" in line and "request_id=probe-access" in line
    assert "duration_ms=" in line and "path=/api/me " in line
    assert any("HEAD /healthz 200" in line for line in lines)
    # a percent-decoded newline or escape code in the path cannot forge a line or reach
    # the terminal: it is logged escaped
    assert not any(line.startswith("FORGED") or "\x1b" in line for line in lines)
    assert any("GET /x\\nFORGED\\x1b[31m 404" in line for line in lines)


@pytest.mark.slow
def test_wharf_serve_access_lines_as_json(tmp_path):
    lines = _serve_requests(tmp_path, WHARF_LOG_FORMAT="json")
    access = [json.loads(line) for line in lines if '"wharf.access"' in line]
    me = next(line for line in access if line["path"] == "/api/me")
    assert me["message"] == "GET /api/me 401" and me["level"] == "info"
    assert me["method"] == "GET" and me["status"] == 401
    assert me["request_id"] == "probe-access" and me["duration_ms"] >= 0


@pytest.mark.slow
@pytest.mark.parametrize("how", ["--quiet", "WHARF_ACCESS_LOG=false"])
def test_wharf_serve_quiet_writes_no_request_lines(tmp_path, how):
    args, env = ((how,), {}) if how.startswith("--") else ((), dict([how.split("=")]))
    lines = _serve_requests(tmp_path, *args, quiet=True, **env)
    assert not any("wharf.access" in line for line in lines)


@pytest.mark.slow
def test_wharf_api_writes_gunicorns_lines_as_json_too(tmp_path):
    assert run_wharf(tmp_path, "migrate").returncode == 0
    port = free_port()
    env = wharf_env(tmp_path, WHARF_PORT=str(port), WEB_CONCURRENCY="1",
                    PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "metrics"))
    proc, out, err = _start_logged(tmp_path, "api", env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                r = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10,
                                 headers={"X-Request-Id": "probe-logs"})
                break
            except requests.ConnectionError:
                assert proc.poll() is None and time.monotonic() < deadline, err.read_text()
                time.sleep(0.2)
        assert r.status_code == 200
        _wait_for_file_text(out, "probe-logs", proc, timeout=10)
    finally:
        _terminate(proc)
    errors = [json.loads(line) for line in err.read_text().splitlines()]
    assert any(line["logger"] == "gunicorn.error" and "Listening at" in line["message"]
               for line in errors)
    access = [json.loads(line) for line in out.read_text().splitlines()
              if line.startswith("{")]
    hit = next(line for line in access if "rid=probe-logs" in line["message"])
    assert hit["logger"] == "gunicorn.access" and '"GET /healthz HTTP/1.1" 200' in hit["message"]


def test_a_text_line_cannot_be_forged_by_a_newline_in_what_it_logs():
    """Text format (``wharf serve``'s default): a message carrying a newline (a client's
    value, say) stays one line, the newline escaped; the traceback of an exception still
    follows on lines of its own."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logs.formatter("text"))
    logger = logging.getLogger("wharf.test.forge")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("refused %s", "evil\n2026-12-03 [error] forged line\r")
        try:
            raise ValueError("boom")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    lines = buffer.getvalue().splitlines()
    assert "refused evil\\n2026-12-03 [error] forged line\\r" in lines[0]
    assert not any(line.startswith("2026-12-03 [error] forged") for line in lines)
    assert any("ValueError: boom" in line for line in lines[2:])


def test_the_access_log_line_is_the_full_chains_line_without_the_chain():
    """gunicorn's access log skips structlog's processor chain (one line per request):
    its lines carry the same keys in the same order, and the same values (the timestamp
    aside: the chain stamps the time it formats), with the request's bound context; a
    record with an exception still goes through the whole chain."""
    fast, full = logs.FastJsonFormatter(), logs.formatter("json")
    record = logging.LogRecord("gunicorn.access", logging.INFO, __file__, 1,
                               '%(h)s "%(r)s" %(s)s', {"h": "10.0.0.1", "r": "GET / HTTP/1.1",
                                                       "s": "200"}, None)
    logctx.bind_request("rid-fast")
    logctx.bind_user("user-1")
    try:
        ours, theirs = json.loads(fast.format(record)), json.loads(full.format(record))
    finally:
        logctx.clear_request()
    assert list(ours) == list(theirs)
    assert ours.pop("timestamp").endswith("Z") and theirs.pop("timestamp")
    assert ours == theirs
    assert ours["message"] == '10.0.0.1 "GET / HTTP/1.1" 200'
    assert ours["request_id"] == "rid-fast"
    try:
        raise ValueError("boom")
    except ValueError:
        failed = logging.LogRecord("gunicorn.access", logging.ERROR, __file__, 1, "bad", None,
                                   sys.exc_info())
    line = json.loads(fast.format(failed))
    assert "ValueError: boom" in line["exception"]
    # wharf serve's access line: its fields given with extra=
    served = logging.LogRecord("wharf.access", logging.INFO, __file__, 1, "%s %s %s",
                               ("GET", "/api/me", 200), None)
    served.__dict__.update(method="GET", path="/api/me", status=200, duration_ms=1.5,
                           request_id="rid-access")
    ours, theirs = json.loads(fast.format(served)), json.loads(full.format(served))
    assert list(ours) == list(theirs)
    assert ours.pop("timestamp") and theirs.pop("timestamp")
    assert ours == theirs and ours["duration_ms"] == 1.5 and ours["status"] == 200


@pytest.mark.parametrize("fmt", [
    None,  # wharfd/gunicorn_conf.py's
    '%(h)s %(l)s %(t)s "%(r)s" %(s)s %(b)s %(B)s "%(f)s" "%(a)s" %(m)s %(U)s %(q)s %(H)s '
    '%(T)s %(D)s %(M)s %(L)s %(p)s',
    '%({X-Request-Id}o)s %({x-request-id}O)s %({User-Agent}i)s %({x-absent}i)s '
    '%({raw_uri}e)s %({nothing}e)s %(s)s',
    "%(u)s %(unknown)s %(s)s",  # atoms only gunicorn's own builder knows
])
def test_the_access_line_is_gunicorns_line(fmt):
    """The access log builds only the atoms its format names, and its line is the one
    gunicorn's own logger writes: every atom, request and response headers and environ
    variables in any case (the last of repeated ones, ``-`` for absent ones), quotes
    escaped; a format naming an atom not built here falls back to gunicorn's builder."""
    from datetime import timedelta

    from gunicorn.config import Config
    from gunicorn.glogging import Logger

    from wharfd import gunicorn_conf
    from wharfd.gunicorn_logs import GunicornLogger

    cfg = Config()
    cfg.set("accesslog", "-")
    cfg.set("access_log_format", fmt or gunicorn_conf.access_log_format)

    class Resp:
        status = "202 Accepted"
        sent = 512
        headers = (("Content-Type", "application/json"), ("X-Request-Id", "rid-1"),
                   ("x-request-id", "rid-2"))

    class Req:
        headers = (("USER-AGENT", 'curl "quoted"'), ("HOST", "example"))

    environ = {"REMOTE_ADDR": "10.1.2.3", "REQUEST_METHOD": "POST",
               "RAW_URI": "/api/resources?x=1", "SERVER_PROTOCOL": "HTTP/1.1",
               "PATH_INFO": "/api/resources", "QUERY_STRING": "x=1",
               "HTTP_USER_AGENT": 'curl "quoted"', "HTTP_AUTHORIZATION": "Basic dTpw"}
    took = timedelta(seconds=1, microseconds=2345)
    lines = []
    for cls in (GunicornLogger, Logger):
        log = cls(cfg)
        if cls is GunicornLogger and "u)" not in cfg.access_log_format:
            def every_atom(*args):
                raise AssertionError("built every atom")
            # the builder gunicorn's access() would otherwise call
            Logger.atoms, saved = every_atom, Logger.atoms  # type: ignore[method-assign]
        else:
            saved = None
        records: list[logging.LogRecord] = []
        log.access_log.handlers = []
        log.access_log.addHandler(type("H", (logging.Handler,), {
            "emit": lambda self, record: records.append(record)})())
        try:
            log.access(Resp(), Req(), environ, took)
        finally:
            if saved is not None:
                Logger.atoms = saved  # type: ignore[method-assign]
        lines.append(records[0].getMessage())
    ours, gunicorns = lines
    # %(t)s is the time each formats: the same second in both, or one tick apart
    assert ours.split("[", 1)[0] == gunicorns.split("[", 1)[0]
    assert ours.split("]", 1)[-1] == gunicorns.split("]", 1)[-1]
    if fmt is None:
        # the path without the query string (it may carry a secret), as `wharf serve`
        assert ours == '10.1.2.3 "POST /api/resources HTTP/1.1" 202 512 1002ms ' \
                       'rid=rid-2 ua="curl \\"quoted\\""'
