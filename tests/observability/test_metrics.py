"""Monitoring endpoints of the API: readiness is the database alone, dependencies are in
``/healthz/details`` and ``wharf_dependency_up``, ``/metrics`` caches its database gauges
and can require ``WHARF_METRICS_TOKEN``."""
from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import event, update

from storage.models import Operation
from tests.conftest import make_settings
from tests.support.client import ApiClient
from wharf.infra.clock import utcnow
from wharf.infra.settings import ConfigError, Settings

DEAD_REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
TOKEN = "metrics-" + "t" * 24


def sample(body: str, name: str, **labels: str) -> float | None:
    """The value of one sample in a Prometheus text exposition, or None when absent."""
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    pattern = rf"^{re.escape(name)}(?:\{{{re.escape(want)}\}})? (\S+)$" if want \
        else rf"^{re.escape(name)} (\S+)$"
    m = re.search(pattern, body, re.MULTILINE)
    return float(m.group(1)) if m else None


def api(tmp_path, database_url, unitstore_url, db, **overrides):
    from wharfd.runtime import Components
    settings = make_settings(tmp_path, database_url, unitstore_url, **overrides)
    comps = Components(settings, db=db)
    return comps, ApiClient(comps.api_app())


@pytest.fixture
def broker_down(tmp_path, database_url, unitstore_url, db):
    comps, client = api(tmp_path, database_url, unitstore_url, db, broker_url=DEAD_REDIS_URL)
    yield client
    comps.close()


def test_readyz_stays_ready_while_the_broker_is_down(broker_down):
    r = broker_down.get("/readyz")
    assert r.status_code == 200, r.text
    assert r.json == {"status": "ok", "checks": {"database": "ok"}}


def test_health_details_and_metrics_report_the_broker_down(broker_down):
    r = broker_down.get("/healthz/details")
    assert r.status_code == 200, r.text
    assert r.json["status"] == "degraded"
    checks = r.json["checks"]
    assert checks["database"] == {"status": "ok"}
    assert checks["broker"]["status"] == "down" and checks["broker"]["error"]
    assert checks["blob_store"] == {"status": "ok"} and checks["unitstore"] == {"status": "ok"}
    body = broker_down.get("/metrics").text
    assert sample(body, "wharf_dependency_up", dependency="broker") == 0
    assert sample(body, "wharf_dependency_up", dependency="database") == 1
    assert sample(body, "wharf_dependency_up", dependency="blob_store") == 1


def test_health_details_all_ok(client):
    r = client.get("/healthz/details")
    assert r.status_code == 200, r.text
    assert r.json["status"] == "ok"
    assert set(r.json["checks"]) == {"database", "broker", "blob_store", "unitstore"}


def test_operations_open_is_reported_at_zero(client):
    body = client.get("/metrics").text
    for kind in ("create_resource", "create_blob_resource", "replace_blob_content",
                 "purge_trash"):
        for status in ("pending", "running"):
            assert sample(body, "wharf_operations_open", kind=kind, status=status) == 0, \
                (kind, status, body)


def _count_queries(db) -> list[str]:
    seen: list[str] = []
    engines = {id(e): e for e in (db.write_engine, db.read_engine)}.values()
    for engine in engines:
        event.listen(engine, "before_cursor_execute",
                     lambda conn, cursor, statement, *a: seen.append(statement))
    return seen


def _submit(world) -> None:
    alice = world.user("alice")
    r = alice.post("/api/resources", json={"space_id": alice.personal_space_id,
                                           "parent_id": None, "name": "Sheet",
                                           "unit_type": "sheet"},
                   headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text


def test_database_gauges_are_cached_between_scrapes(tmp_path, database_url, unitstore_url, db):
    from tests.conftest import World
    comps, anon = api(tmp_path, database_url, unitstore_url, db, metrics_cache_seconds=60.0)
    try:
        first = anon.get("/metrics").text
        assert sample(first, "wharf_operations_open", kind="create_resource",
                      status="pending") == 0
        _submit(World(anon.client.app))
        queries = _count_queries(db)
        second = anon.get("/metrics").text
        assert [q for q in queries if "count(" in q.lower()] == [], queries
        assert sample(second, "wharf_operations_open", kind="create_resource",
                      status="pending") == 0  # still the cached value
    finally:
        comps.close()
    # Without the cache every scrape counts again.
    comps, fresh = api(tmp_path, database_url, unitstore_url, db, metrics_cache_seconds=0.0)
    try:
        queries = _count_queries(db)
        body = fresh.get("/metrics").text
        assert any("count(" in q.lower() for q in queries)
        assert sample(body, "wharf_operations_open", kind="create_resource",
                      status="pending") == 1
        # No worker runs here: the operation is due, the workers' backlog (the autoscaler's
        # metric); one not due before an hour is not.
        assert sample(body, "wharf_operations_due") == 1
        with db.write() as s:
            s.execute(update(Operation).values(next_attempt_at=utcnow() + timedelta(hours=1)))
        assert sample(fresh.get("/metrics").text, "wharf_operations_due") == 0
    finally:
        comps.close()


def test_metrics_token_guards_metrics_and_details(tmp_path, database_url, unitstore_url, db):
    comps, anon = api(tmp_path, database_url, unitstore_url, db, metrics_token=TOKEN)
    try:
        for path in ("/metrics", "/healthz/details"):
            r = anon.get(path)
            assert r.status_code == 401, r.text
            assert r.json["code"] == "invalid_metrics_token"
            r = anon.get(path, headers={"Authorization": "Bearer " + "x" * 32})
            assert r.status_code == 401 and r.json["code"] == "invalid_metrics_token"
            r = anon.get(path, headers={"Authorization": f"Bearer {TOKEN}"})
            assert r.status_code == 200, r.text
        body = anon.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
        assert "wharf_operations_open" in body
        # Probes stay anonymous.
        assert anon.get("/healthz").status_code == 200
        assert anon.get("/readyz").status_code == 200
        # The metrics token is not an API token.
        r = anon.get("/api/me", headers={"Authorization": f"Bearer {TOKEN}"})
        assert r.status_code == 401 and r.json["code"] == "invalid_token"
    finally:
        comps.close()


@pytest.mark.parametrize("env, variable", [
    ({"WHARF_METRICS_TOKEN": "short"}, "WHARF_METRICS_TOKEN"),
    ({"WHARF_METRICS_TOKEN": "has a space in it, sixteen+"}, "WHARF_METRICS_TOKEN"),
    ({"WHARF_METRICS_PORT": "70000"}, "WHARF_METRICS_PORT"),
    ({"WHARF_METRICS_PORT": "abc"}, "WHARF_METRICS_PORT"),
    ({"WHARF_METRICS_CACHE_SECONDS": "-1"}, "WHARF_METRICS_CACHE_SECONDS"),
    ({"WHARF_METRICS_CACHE_SECONDS": "nan"}, "WHARF_METRICS_CACHE_SECONDS"),
    ({"WHARF_METRICS_CACHE_SECONDS": "inf"}, "WHARF_METRICS_CACHE_SECONDS"),
    ({"WHARF_RELAY_INTERVAL": "NaN"}, "WHARF_RELAY_INTERVAL"),
    ({"WHARF_RECOVERY_INTERVAL": "Infinity"}, "WHARF_RECOVERY_INTERVAL"),
    ({"WHARF_OPERATION_BACKOFF_BASE": "nan"}, "WHARF_OPERATION_BACKOFF_BASE"),
    ({"WHARF_OPERATION_BACKOFF_MAX": "inf"}, "WHARF_OPERATION_BACKOFF_MAX"),
])
def test_bad_metrics_settings_are_configuration_errors(tmp_path, env, variable):
    with pytest.raises(ConfigError, match=variable):
        Settings.from_env({"WHARF_DATA_DIR": str(tmp_path), **env})


def test_metrics_token_is_not_in_the_settings_repr(tmp_path):
    settings = Settings.from_env({"WHARF_DATA_DIR": str(tmp_path), "WHARF_METRICS_TOKEN": TOKEN})
    assert settings.metrics_token == TOKEN and TOKEN not in repr(settings)


# -- the metrics port of the background processes: bad values stop them with exit 2 ---------
@pytest.mark.slow
def test_metrics_port_in_use_or_out_of_range_is_a_configuration_error(tmp_path):
    import socket

    from tests.cli.test_cli import _assert_config_error, run_wharf, wharf_env
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_wharf(tmp_path, "scheduler", timeout=60,
                           env=wharf_env(tmp_path, WHARF_METRICS_PORT=str(port)))
        _assert_config_error(result, "WHARF_METRICS_PORT")
        assert f"127.0.0.1:{port}" in result.stderr
    result = run_wharf(tmp_path, "worker", "--metrics-port", "70000", timeout=60)
    assert result.returncode == 2 and "--metrics-port 70000" in result.stderr, result.stderr
    result = run_wharf(tmp_path, "worker", timeout=60,
                       env=wharf_env(tmp_path, WHARF_METRICS_PORT="-1"))
    _assert_config_error(result, "WHARF_METRICS_PORT")


def test_database_down_is_not_ready_and_metrics_still_answer(tmp_path):
    from wharfd.runtime import Components
    settings = make_settings(tmp_path, "postgresql://wharf:x@127.0.0.1:1/nowhere")
    comps = Components(settings)
    try:
        anon = ApiClient(comps.api_app())
        before = {c: _responses(c) for c in ("2xx", "5xx")}
        r = anon.get("/readyz")
        assert r.status_code == 503 and r.headers["retry-after"] == "5"
        assert r.json["status"] == "unavailable"
        assert r.json["checks"]["database"].startswith("error: ")
        r = anon.get("/healthz/details")
        assert r.status_code == 503 and r.json["status"] == "unavailable"
        assert r.json["checks"]["database"]["status"] == "down"
        r = anon.get("/metrics")
        assert r.status_code == 200
        assert sample(r.text, "wharf_dependency_up", dependency="database") == 0
        assert sample(r.text, "wharf_dependency_up", dependency="unitstore") == 1
        # The API's responses by status class (the 5xx-rate alert): two 503s, one 200 so far.
        assert sample(r.text, "wharf_http_responses_total", status_class="5xx") \
            == before["5xx"] + 2
        assert _responses("2xx") == before["2xx"] + 1
    finally:
        comps.close()


def _responses(status_class: str) -> float:
    from wharf.observability.metrics import REGISTRY
    return REGISTRY.get_sample_value("wharf_http_responses_total",
                                     {"status_class": status_class}) or 0.0


def test_metrics_port_closes_connections_that_send_nothing(monkeypatch):
    """Each connection of the worker/scheduler metrics port holds a thread: one that sends
    nothing is closed after ``HANDLER_TIMEOUT`` (10 s; shortened here) and the port still
    answers."""
    import socket
    import time

    import requests

    from wharf.observability import metrics
    monkeypatch.setattr(metrics, "HANDLER_TIMEOUT", 0.5, raising=False)
    server = metrics.MetricsServer("127.0.0.1", 0).start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as idle:
            t0 = time.monotonic()
            assert idle.recv(1) == b""  # closed by the server, not by our 5 s timeout
            assert time.monotonic() - t0 < 3
        r = requests.get(f"http://127.0.0.1:{server.port}/healthz", timeout=5)
        assert r.status_code == 200
    finally:
        server.stop()


# -- a hung dependency: the checks have a short budget and run once per cache window ---------
class SilentServer:
    """An "S3 endpoint" that accepts connections, counts them, and never answers."""

    def __init__(self):
        import socket
        import threading
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections: list = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                self.connections.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self):
        self.sock.close()
        for conn in self.connections:
            conn.close()


@pytest.fixture
def silent_s3():
    server = SilentServer()
    yield server
    server.close()


def test_hung_blob_store_answers_fast_and_is_checked_once_per_window(
        tmp_path, database_url, unitstore_url, db, silent_s3, caplog, monkeypatch):
    """An S3 endpoint that accepts connections and never answers (the data client would
    wait 60 s per attempt, three attempts): ``/healthz/details`` answers within the ping's
    2 s budget, requests within the cache window reuse that one check, and the outage is
    logged once."""
    import logging
    import threading
    import time

    from storage.blobstore import S3BlobStore
    from wharfd.runtime import Components
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")  # signed requests reach the endpoint
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    store = S3BlobStore("wharf-bucket", endpoint_url=silent_s3.url)
    settings = make_settings(tmp_path, database_url, unitstore_url, metrics_cache_seconds=60)
    comps = Components(settings, db=db, blob_store=store)
    try:
        anon = ApiClient(comps.api_app())
        with caplog.at_level(logging.WARNING, logger="wharf.observability.metrics"):
            started = time.monotonic()
            r = anon.get("/healthz/details")
            assert time.monotonic() - started < 3.5, "the blob store ping has a short budget"
            assert r.status_code == 200 and r.json["status"] == "degraded"
            assert r.json["checks"]["blob_store"] == {"status": "down",
                                                      "error": "BlobStoreUnavailable"}
            results = []
            threads = [threading.Thread(target=lambda: results.append(
                (anon.get("/healthz/details").json, anon.get("/metrics").text)))
                for _ in range(4)]
            started = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            assert time.monotonic() - started < 2, "cached: nobody waits for the store again"
            assert len(results) == 4
            for details, body in results:
                assert details["checks"]["blob_store"]["status"] == "down"
                assert sample(body, "wharf_dependency_up", dependency="blob_store") == 0
        assert len(silent_s3.connections) == 1, "one check, one attempt, for the whole window"
        down = [rec for rec in caplog.records if "blob_store" in rec.getMessage()]
        assert len(down) == 1, [rec.getMessage() for rec in down]  # logged at the change
    finally:
        comps.close()


def test_concurrent_callers_get_the_previous_value_while_one_refreshes():
    import threading
    import time

    from wharf.observability.metrics import Dependencies
    release, calls = threading.Event(), []

    def slow():
        calls.append(1)
        if len(calls) > 1:
            release.wait(10)

    deps = Dependencies({"slow": slow}, ttl=0)
    assert deps.results() == {"slow": None}  # the first computation
    refresher = threading.Thread(target=deps.results)
    refresher.start()
    while len(calls) < 2:
        time.sleep(0.01)
    started = time.monotonic()
    assert deps.results() == {"slow": None}  # the previous value, at once
    assert time.monotonic() - started < 1 and len(calls) == 2
    release.set()
    refresher.join(10)


def test_a_database_that_never_answers_is_reported_down_within_the_budget(tmp_path,
                                                                          monkeypatch):
    """A PostgreSQL that accepts connections and never answers (a frozen server, a black
    hole): no client timeout covers every such case, so each dependency check has a budget.
    /readyz and /healthz/details answer 503 within it instead of holding request threads
    (or, from a cache, reporting the database 'ok' for as long as the check hangs), and a
    check still hanging is not started again."""
    import time

    from wharf.observability import metrics
    from wharfd.runtime import Components
    monkeypatch.setattr(metrics, "CHECK_BUDGET", 1.0)
    silent = SilentServer()
    port = silent.url.rsplit(":", 1)[1]
    comps = Components(make_settings(tmp_path, f"postgresql://wharf:x@127.0.0.1:{port}/hung"))
    try:
        anon = ApiClient(comps.api_app())
        for path in ("/readyz", "/healthz/details", "/readyz"):
            t0 = time.monotonic()
            r = anon.get(path)
            assert time.monotonic() - t0 < 2.5, path
            assert r.status_code == 503, (path, r.json)
        assert r.json["checks"]["database"] == "error: CheckTimedOut"
        assert len(silent.connections) == 1  # the hung ping was not started again
    finally:
        silent.close()
        comps.close()


def test_the_operations_guide_lists_every_metric_wharf_declares():
    """Every metric name declared in ``wharf.observability.metrics`` has a row in a table of
    docs/operations.md (an operator alerting on it finds what it means there)."""
    from pathlib import Path

    import wharf.observability.metrics
    root = Path(__file__).resolve().parents[2]
    declared = set(re.findall(r'"(wharf_[a-z_]+)"', Path(wharf.observability.metrics.__file__).read_text()))
    documented = set(re.findall(r"^\| `(wharf_[a-z_]+)`", (root / "docs" / "operations.md")
                                .read_text(), re.M))
    assert len(declared) > 20
    assert sorted(declared - documented) == []
