"""The ``wharf`` command as an operator runs it: real processes, real HTTP, real signals.

- ``wharf migrate`` on a fresh data dir, again (no-op), and on a database it must refuse;
- a bad ``WHARF_*`` value stops every command with exit 2 and one line naming the variable;
- ``wharf serve`` answers /healthz and the register → login → team space → member → nodes →
  children flow over HTTP (every response checked against the OpenAPI document), and stops
  cleanly on SIGTERM;
- ``wharf worker`` and ``wharf scheduler`` start and stop cleanly on SIGTERM;
- a SQLite write lock held past the busy timeout makes an API write answer 503
  ``database_busy`` with ``Retry-After``, not a 500.
"""
from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from api.app import create_app
from migrations.prepare import head_revision
from storage.db import Database
from tests.conftest import PASSWORD, World, make_settings
from tests.support import services, zygote
from tests.support.client import Contract, check_response
from tests.support.waiting import free_port

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
_SCRIPT = shutil.which("wharf", path=str(Path(sys.executable).parent))
WHARF = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "wharfd.cli"]
FAST_HASHING = {"WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
                "WHARF_ARGON2_PARALLELISM": "1"}


def wharf_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without any WHARF_* setting, plus a private data dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
    env.update(FAST_HASHING, WHARF_DATA_DIR=str(tmp_path / "data"), PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def run_wharf(tmp_path: Path, *args: str, env: dict[str, str] | None = None,
              timeout: float = 120, script: bool = False) -> subprocess.CompletedProcess:
    """``wharf *args``: forked from the tests' fork server as ``python -m wharfd.cli``
    (tests/support/zygote.py), or with ``script`` the installed ``wharf`` script itself."""
    env = env or wharf_env(tmp_path)
    if not script and zygote.usable(env):
        return zygote.zygote().run(list(args), env, tmp_path, timeout)
    return subprocess.run(WHARF + list(args), env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


class Running:
    """A ``wharf`` process in its own process group, its output (stdout+stderr) collected."""

    def __init__(self, tmp_path: Path, *args: str, env: dict[str, str]):
        self.proc = subprocess.Popen(WHARF + list(args), env=env, cwd=tmp_path,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    @property
    def output(self) -> str:
        self._drain()
        return "\n".join(self.lines)

    def _drain(self) -> None:
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                return
            if line is not None:
                self.lines.append(line)

    def wait_for(self, pattern: str, timeout: float) -> re.Match:
        rx = re.compile(pattern, re.IGNORECASE)
        for line in self.lines:
            if m := rx.search(line):
                return m
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=0.1)
            except queue.Empty:
                continue
            if line is None:
                self.proc.wait(5)
                pytest.fail(f"wharf exited ({self.proc.returncode}) before printing "
                            f"/{pattern}/:\n{self.output}")
            self.lines.append(line)
            if m := rx.search(line):
                return m
        pytest.fail(f"no /{pattern}/ within {timeout}s:\n{self.output}")

    def terminate(self, timeout: float) -> tuple[int, float]:
        """SIGTERM; return (exit code, seconds it took). Fails if it does not exit in time."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {timeout}s after SIGTERM:\n{self.output}")
        return code, time.monotonic() - t0

    def group_empty(self, timeout: float = 5.0) -> bool:
        """True once no process of this one's group (children it spawned) is left."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass


@pytest.fixture
def spawn(tmp_path):
    started: list[Running] = []

    def _spawn(*args: str, env: dict[str, str]) -> Running:
        r = Running(tmp_path, *args, env=env)
        started.append(r)
        return r

    yield _spawn
    for r in started:
        r.kill()


def _backups(data_dir: Path) -> list[Path]:
    return sorted(data_dir.glob("*.backup-*"))


# --- wharf migrate -----------------------------------------------------------------------------

def test_migrate_fresh_data_dir_then_noop(tmp_path):
    head = head_revision()
    first = run_wharf(tmp_path, "migrate", script=True)
    assert first.returncode == 0, first.stderr
    assert f"wharf: database migrated empty -> {head}" in first.stdout
    data = tmp_path / "data"
    assert (data / "wharf.db").is_file()

    again = run_wharf(tmp_path, "migrate", script=True)
    assert again.returncode == 0, again.stderr
    assert f"wharf: database already at revision {head}; nothing to do" in again.stdout
    assert "migrated" not in again.stdout
    assert _backups(data) == []


def test_migrate_refuses_a_database_from_a_newer_wharf(tmp_path):
    assert run_wharf(tmp_path, "migrate").returncode == 0
    db = sqlite3.connect(tmp_path / "data" / "wharf.db")
    with db:
        db.execute("UPDATE alembic_version SET version_num = 'ffffffff'")
    db.close()
    result = run_wharf(tmp_path, "migrate")
    assert result.returncode == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("wharf: refusing to migrate: ")
    assert "'ffffffff'" in lines[0]
    assert _backups(tmp_path / "data") == []


def test_migrate_a_postgresql_database_that_does_not_exist_exits_2_in_one_line(tmp_path):
    services.need(services.postgres_error())
    from sqlalchemy import make_url
    url = make_url(services.POSTGRES_URL)
    name = f"wharf_missing_{os.getpid()}_{int(time.time() * 1000)}"
    password = url.password or "not-the-real-passw0rd"
    missing = url.set(database=name, password=password).render_as_string(hide_password=False)
    result = run_wharf(tmp_path, "migrate",
                       env=wharf_env(tmp_path, WHARF_DATABASE_URL=missing), timeout=60)
    _assert_config_error(result, "WHARF_DATABASE_URL")
    line = result.stderr.strip()
    assert f"cannot connect to database '{name}'" in line, line
    assert "does not exist" in line, line
    assert password not in line


def test_migrate_with_an_unreachable_database_server_exits_2_in_one_line(tmp_path):
    url = "postgresql://wharf:hunter2-secret@127.0.0.1:1/wharf"  # nothing listens on port 1
    result = run_wharf(tmp_path, "migrate", env=wharf_env(tmp_path, WHARF_DATABASE_URL=url),
                       timeout=60)
    _assert_config_error(result, "WHARF_DATABASE_URL")
    assert "cannot connect to database 'wharf'" in result.stderr
    assert "hunter2-secret" not in result.stderr


def test_help_lists_every_command_in_plain_text(tmp_path):
    result = run_wharf(tmp_path, "--help", script=True)
    assert result.returncode == 0, result.stderr
    assert "``" not in result.stdout and "`" not in result.stdout
    description = result.stdout.split("positional arguments")[0]
    for words in ("API", "live feed", "workers", "scheduler", "migrate", "sweeps",
                  "deletion jobs"):
        assert words in description, description
    commands = re.findall(r"^    (\S+)\s", result.stdout, re.M)
    assert commands == ["serve", "api", "feed", "worker", "scheduler", "sweeps",
                        "deletion-jobs", "processes", "migrate", "fsck", "restore-check",
                        "space-owner", "user"]


@pytest.mark.slow
def test_readme_try_it_commands_run_against_wharf_serve(tmp_path, spawn):
    """The README's curl examples (users, spaces, nodes, then the blob upload flow:
    session -> PUT -> complete -> poll -> ranged GET) are true against the code."""
    if not shutil.which("curl") or not shutil.which("bash"):
        pytest.skip("curl and bash are needed to run the README's examples")
    readme = (REPO / "README.md").read_text()
    part = readme[readme.index("## Try it"):readme.index("## What it does")]
    blocks = re.findall(r"```sh\n(.*?)```", part, re.S)
    assert len(blocks) >= 2 and "blob-upload-sessions" in blocks[-1]
    port = free_port()
    server = spawn("serve", env=wharf_env(tmp_path, WHARF_PORT=str(port)))
    server.wait_for(r"serving on http://", timeout=60)
    script = "set -euo pipefail\n" + "\n".join(blocks).replace(
        "BASE=http://127.0.0.1:8080", f"BASE=http://127.0.0.1:{port}")
    assert f"BASE=http://127.0.0.1:{port}" in script
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, (result.stdout, result.stderr)
    out = result.stdout
    assert '"name": "Drafts"' in out and '"next_cursor": null' in out
    assert '"mime_type": "text/plain"' in out and '"size": 48' in out
    assert '"status": "completed", "done": true' in out
    assert "206 Partial Content" in out and "Content-Range: bytes 7-12/48" in out
    assert out.rstrip().endswith("Wharf!")


# --- configuration errors ------------------------------------------------------------------------

BAD_VALUES = [
    ("WHARF_PORT", "abc"),
    ("WHARF_PORT", "70000"),
    ("WHARF_BROKER_URL", "ftp://x"),
    ("WHARF_BROKER_NAMESPACE", "two words"),
    ("WHARF_DATABASE_URL", "mysql://db/wharf"),
    ("WHARF_DATABASE_URL", "postgres"),
    ("WHARF_BLOB_STORE_URL", "http://bucket"),
    ("WHARF_BLOB_STORE_URL", "s3://"),
    ("WHARF_S3_ENDPOINT_URL", "minio:9000"),
    ("WHARF_SQLITE_BUSY_TIMEOUT_MS", "-1"),
    ("WHARF_SECURE_COOKIES", "maybe"),
    ("WHARF_RELAY_INTERVAL", "soon"),
    ("WHARF_LOG_LEVEL", "loud"),
]


def _assert_config_error(result: subprocess.CompletedProcess, name: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"wharf: configuration error: {name}="), lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("name", "value"), BAD_VALUES)
def test_bad_setting_exits_2_naming_the_variable(tmp_path, name, value):
    result = run_wharf(tmp_path, "migrate", env=wharf_env(tmp_path, **{name: value}))
    _assert_config_error(result, name)
    assert not (tmp_path / "data").exists()  # nothing was created


@pytest.mark.parametrize("command", ["serve", "api", "feed", "worker", "scheduler"])
@pytest.mark.parametrize(("name", "value"), [("WHARF_PORT", "abc"),
                                             ("WHARF_BROKER_URL", "ftp://x")])
def test_every_command_validates_settings_first(tmp_path, command, name, value):
    result = run_wharf(tmp_path, command, env=wharf_env(tmp_path, **{name: value}), timeout=30)
    _assert_config_error(result, name)


def test_uncreatable_data_dir_is_a_configuration_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    env = wharf_env(tmp_path, WHARF_DATA_DIR=str(blocker / "data"))
    for command in ("serve", "migrate"):
        result = run_wharf(tmp_path, command, env=env, timeout=30)
        assert result.returncode == 2, (command, result.stderr)
        assert "Traceback" not in result.stderr
        assert result.stderr.strip().splitlines()[-1].startswith("wharf: configuration error: ")


def test_serve_on_a_taken_port_says_so(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_wharf(tmp_path, "serve", env=wharf_env(tmp_path, WHARF_PORT=str(port)),
                           timeout=60)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert f"wharf: cannot listen on 127.0.0.1:{port}" in result.stderr


# --- wharf serve over real HTTP ------------------------------------------------------------------

class Http:
    """requests.Session that checks every response against the OpenAPI document."""

    def __init__(self, base: str):
        self.base = base
        self.session = requests.Session()
        self.contract: Contract | None = None

    def call(self, method: str, path: str, json=None, expect: int | None = None):
        if self.contract is None:  # the document the server generates for itself
            self.contract = Contract.of(
                requests.get(self.base + "/api/openapi.json", timeout=30).json())
        r = self.session.request(method, self.base + path, json=json, timeout=30)
        check_response(method, path.split("?")[0], r.status_code,
                       r.headers.get("content-type"), r.content, self.contract)
        if expect is not None:
            assert r.status_code == expect, (method, path, r.status_code, r.text)
        return r


def test_serve_end_to_end_then_sigterm(tmp_path, spawn):
    port = free_port()
    server = spawn("serve", env=wharf_env(tmp_path, WHARF_PORT=str(port)))
    m = server.wait_for(r"serving on (http://\S+)", timeout=60)
    base = m.group(1)
    assert base == f"http://127.0.0.1:{port}"

    anon = Http(base)
    assert anon.call("GET", "/healthz", expect=200).json() == {"status": "ok"}
    ready = anon.call("GET", "/readyz", expect=200).json()
    assert ready["status"] == "ok" and ready["checks"]["database"] == "ok"
    r = anon.call("POST", "/api/spaces", json={"name": "nope"}, expect=401)
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["code"] == "unauthenticated" and r.headers["x-request-id"]

    alice, bob, carol = Http(base), Http(base), Http(base)
    ids = {}
    for name, client in (("alice", alice), ("bob", bob), ("carol", carol)):
        ids[name] = client.call("POST", "/api/users",
                                json={"username": name, "password": PASSWORD},
                                expect=201).json()["id"]
        client.call("POST", "/api/login-sessions",
                    json={"username": name, "password": PASSWORD}, expect=201)
        assert "wharf_session" in client.session.cookies
    assert alice.call("GET", "/api/me", expect=200).json()["username"] == "alice"

    space = alice.call("POST", "/api/spaces", json={"name": "Research"}, expect=201)
    space_id = space.json()["id"]
    assert space.headers["location"] == f"/api/spaces/{space_id}"
    member = alice.call("PUT", f"/api/spaces/{space_id}/members/{ids['bob']}",
                        json={"role": "editor"}, expect=201).json()
    assert member["role"] == "editor" and member["username"] == "bob"

    folder = alice.call("POST", "/api/nodes", json={"space_id": space_id, "name": "Papers"},
                        expect=201).json()
    child = bob.call("POST", "/api/nodes",
                     json={"space_id": space_id, "parent_id": folder["id"], "name": "Drafts"},
                     expect=201).json()
    listing = alice.call("GET", f"/api/nodes/{folder['id']}/children", expect=200).json()
    assert [n["id"] for n in listing["items"]] == [child["id"]]
    assert listing["items"][0]["name"] == "Drafts" and listing["next_cursor"] is None
    roots = bob.call("GET", f"/api/spaces/{space_id}/nodes", expect=200).json()
    assert [n["id"] for n in roots["items"]] == [folder["id"]]
    # Someone who is not a member cannot even discover the node.
    assert carol.call("GET", f"/api/nodes/{folder['id']}/children",
                      expect=404).json()["code"] == "not_found"

    code, took = server.terminate(timeout=10)
    assert code == 0, server.output
    assert took < 5, took  # keep-alive connections from the clients above do not hold it up
    assert "wharf: stopped" in server.output
    assert server.group_empty()
    assert (tmp_path / "data" / "wharf.db").is_file()


# --- wharf api (gunicorn with the packaged wharfd/gunicorn_conf.py) ------------------------------

def test_api_under_gunicorn_serves_and_stops_on_sigterm(tmp_path, spawn):
    """Run outside the repository (cwd is a temp dir, no WHARF_GUNICORN_CONF): the packaged
    gunicorn settings are found (the access log format with the request id is theirs)."""
    assert run_wharf(tmp_path, "migrate").returncode == 0
    port = free_port()
    env = wharf_env(tmp_path, WHARF_PORT=str(port), WEB_CONCURRENCY="1",
                    PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "metrics"))
    api = spawn("api", env=env)
    api.wait_for(rf"Listening at: http://127\.0\.0\.1:{port}", timeout=60)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:  # the worker process boots after the master listens
        try:
            r = requests.get(base + "/readyz", timeout=10, headers={"X-Request-Id": "probe-1"})
            break
        except requests.ConnectionError:
            if api.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"wharf api not answering (exit {api.proc.poll()}):\n{api.output}")
            time.sleep(0.2)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "ok" and r.headers["x-request-id"] == "probe-1"
    assert requests.get(base + "/healthz", timeout=10).json() == {"status": "ok"}
    # access log (a JSON line by default: its quotes escaped)
    api.wait_for(r'\\?"GET /healthz HTTP/1.1\\?" 200 .* rid=', timeout=10)
    code, _took = api.terminate(timeout=40)
    assert code == 0, api.output
    assert api.group_empty(), api.output


def test_missing_gunicorn_conf_is_a_configuration_error(tmp_path):
    result = run_wharf(tmp_path, "api", timeout=30, env=wharf_env(
        tmp_path, WHARF_GUNICORN_CONF=str(tmp_path / "nope.conf.py")))
    _assert_config_error(result, "WHARF_GUNICORN_CONF")


def _own_gunicorn_conf(tmp_path: Path, **settings) -> Path:
    """An operator's own gunicorn file: no hooks of ours."""
    conf = tmp_path / "own.conf.py"
    conf.write_text("".join(f"{k} = {v!r}\n" for k, v in settings.items()))
    return conf


def test_api_long_poll_default_holds_with_an_operators_own_gunicorn_conf(tmp_path,
                                                                          monkeypatch):
    """The default (three quarters of gunicorn's threads) does not depend on hooks in the packaged
    file: an operator's own file, with ``preload_app`` even, gets it too."""
    from wharfd.commands.api import api_application_class
    conf = _own_gunicorn_conf(tmp_path, threads=8, preload_app=True)
    monkeypatch.setenv("WHARF_LONG_POLL_MAX_WAITERS", "")  # restored after the test
    monkeypatch.delenv("WHARF_LONG_POLL_MAX_WAITERS")
    monkeypatch.setattr(sys, "argv", ["gunicorn", "wharfd.wsgi:application", "--config",
                                      str(conf)])
    api_application_class()("%(prog)s [OPTIONS] [APP_MODULE]")
    assert os.environ["WHARF_LONG_POLL_MAX_WAITERS"] == "6"
    monkeypatch.setattr(sys, "argv", [*sys.argv, "--threads", "10"])
    monkeypatch.setenv("WHARF_LONG_POLL_MAX_WAITERS", "2")  # the operator's own value stays
    api_application_class()("%(prog)s [OPTIONS] [APP_MODULE]")
    assert os.environ["WHARF_LONG_POLL_MAX_WAITERS"] == "2"


def test_api_long_poll_limit_at_or_above_the_threads_is_a_configuration_error(tmp_path):
    result = run_wharf(tmp_path, "api", timeout=60, env=wharf_env(
        tmp_path, WHARF_GUNICORN_CONF=str(_own_gunicorn_conf(tmp_path, threads=4)),
        WHARF_LONG_POLL_MAX_WAITERS="4", WHARF_PORT=str(free_port())))
    _assert_config_error(result, "WHARF_LONG_POLL_MAX_WAITERS")
    assert "WHARF_LONG_POLL_MAX_WAITERS=4 must be below gunicorn's threads=4" in result.stderr


# --- the documented settings are the real ones --------------------------------------------------

def test_readme_and_env_example_document_every_setting():
    from wharf.infra.settings import DECLARED  # one declaration per setting (the variable derives)
    names = {d.variable for d in DECLARED}
    assert len(names) > 20
    readme = (REPO / "README.md").read_text()
    env_example = (REPO / "deploy" / "env.example").read_text()
    assert sorted(n for n in names if f"| `{n}` |" not in readme) == [], \
        "add these to the configuration table in README.md"
    assert sorted(n for n in names
                  if not re.search(rf"^(# )?{n}=", env_example, re.MULTILINE)) == [], \
        "add these to deploy/env.example"


# --- wharf worker / wharf scheduler ---------------------------------------------------------------

@pytest.mark.parametrize("command", ["worker", "scheduler"])
def test_background_process_starts_and_stops_on_sigterm(tmp_path, spawn, command, request):
    services.need(services.redis_error())
    ns = services.RedisNamespace(command)  # its own keys in the suite's Redis DB
    request.addfinalizer(ns.close)
    env = wharf_env(tmp_path, WHARF_BROKER_URL=ns.url, WHARF_BROKER_NAMESPACE=ns.name,
                    WHARF_WORKER_PROCESSES="1", WHARF_WORKER_THREADS="1")
    migrated = run_wharf(tmp_path, "migrate", env=env)
    assert migrated.returncode == 0, migrated.stderr
    proc = spawn(command, env=env)
    proc.wait_for(r"started", timeout=60)
    deadline = time.monotonic() + 30
    while not ns.clients() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ns.clients(), "the process never connected to Redis with its URL"
    assert ns.clients_elsewhere() == []  # on WHARF_TEST_REDIS_URL's DB, no other
    code, took = proc.terminate(timeout=15)
    assert code == 0, proc.output
    assert took < 15
    assert proc.group_empty(), f"{command} left child processes behind:\n{proc.output}"
    assert "Traceback" not in proc.output, proc.output


# --- SQLite busy → 503 -----------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["sqlite"])
def test_sqlite_lock_past_busy_timeout_answers_503(tmp_path, database_url):
    settings = make_settings(tmp_path, database_url, sqlite_busy_timeout_ms=200)
    db = Database(settings.database_url, settings.sqlite_busy_timeout_ms)
    try:
        world = World(create_app(settings, db))
        alice = world.user("alice")
        blocker = sqlite3.connect(database_url.split("///", 1)[1], isolation_level=None,
                                  timeout=0)
        try:
            blocker.execute("BEGIN IMMEDIATE")
            t0 = time.monotonic()
            r = alice.post("/api/spaces", json={"name": "Blocked"})
            took = time.monotonic() - t0
            assert r.status_code == 503, r.text
            assert r.headers["content-type"].startswith("application/problem+json")
            assert r.headers["retry-after"] == "1"
            assert r.json["code"] == "database_busy"
            assert 0.15 <= took < 5, took  # waited for the busy timeout, not forever
            # Readers are not blocked by the writer (WAL).
            assert alice.get("/api/me").status_code == 200
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        spaces = alice.get("/api/spaces").json["items"]
        assert [s["type"] for s in spaces] == ["personal"]  # the refused write left nothing
        assert alice.post("/api/spaces", json={"name": "Unblocked"}).status_code == 201
    finally:
        db.dispose()


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_missing_bucket_stops_the_start_with_its_name(tmp_path, s3_server, command):
    env = wharf_env(tmp_path, WHARF_BLOB_STORE_URL="s3://wharf-not-created/objects",
                    WHARF_S3_ENDPOINT_URL=s3_server.endpoint, WHARF_PORT=str(free_port()),
                    AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test")
    run_wharf(tmp_path, "migrate", env=env)
    r = run_wharf(tmp_path, command, env=env, timeout=60)
    assert r.returncode == 1, r.stderr
    assert "wharf: blob store: the bucket 'wharf-not-created' does not exist" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("command", [["processes"], ["sweeps"], ["deletion-jobs"], ["fsck"],
                                     ["restore-check", "--since", "2026-01-01T00:00:00Z"],
                                     ["space-owner", "some-space", "someone"],
                                     ["user", "disable", "someone"]])
def test_inspection_commands_on_an_unmigrated_database_say_to_migrate(tmp_path, command):
    """A command that reads the product database refuses one that is not at this code's
    revision (empty here, or left behind by an older release) in one line, exit 2: not a
    traceback about a missing table, and it changes nothing."""
    import sqlite3
    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "wharf.db") as conn:
        conn.execute("CREATE TABLE unrelated (a)")
    result = run_wharf(tmp_path, *command, env=wharf_env(tmp_path), timeout=60)
    _assert_config_error(result, "WHARF_DATABASE_URL")
    assert "run `wharf migrate` first" in result.stderr
    with sqlite3.connect(data / "wharf.db") as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["unrelated"]


@pytest.mark.parametrize("command", ["sweeps", "processes"])
def test_inspection_commands_run_elsewhere_name_the_data_dir_and_create_nothing(tmp_path,
                                                                               command):
    """Run from another directory, the default data dir (./var, relative) is another one:
    the command says which it looked in and refuses (exit 2), instead of creating an
    empty database there and reading nothing."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "var").mkdir(parents=True)
    env = {k: v for k, v in wharf_env(tmp_path).items() if k != "WHARF_DATA_DIR"}
    result = subprocess.run([*WHARF, command], env=env, cwd=elsewhere, capture_output=True,
                            text=True, timeout=60, stdin=subprocess.DEVNULL)
    _assert_config_error(result, "WHARF_DATABASE_URL")
    assert f"no database at {elsewhere / 'var' / 'wharf.db'}" in result.stderr
    assert (f"the data dir is {elsewhere / 'var'}, from the default ./var of the current "
            "directory") in result.stderr
    assert list((elsewhere / "var").iterdir()) == []


def test_inspection_commands_on_a_newer_database_say_so(tmp_path):
    """A database a newer release migrated (a revision this code does not know): the
    command says to use the newer release, not to migrate (which would refuse)."""
    import sqlite3
    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "wharf.db") as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
        conn.execute("INSERT INTO alembic_version VALUES ('9999')")
    result = run_wharf(tmp_path, "processes", env=wharf_env(tmp_path), timeout=60)
    _assert_config_error(result, "WHARF_DATABASE_URL")
    assert "'9999', newer than this Wharf's" in result.stderr
    assert "wharf migrate" not in result.stderr


@pytest.mark.parametrize("backend", ["sqlite"])
def test_user_disable_and_enable_on_a_real_database(tmp_path, database_url, unitstore_url):
    """``wharf user disable NAME`` refuses the user's next request (403 account_disabled,
    another process: within WHARF_AUTH_CACHE_SECONDS, 0 here), ``enable`` restores it; an
    unknown user is one line on stderr and exit 1, as ``wharf space-owner``."""
    settings = make_settings(tmp_path, database_url, unitstore_url, auth_cache_seconds=0)
    db = Database(settings.database_url)
    try:
        alice = World(create_app(settings, db)).user("alice")
        assert alice.get("/api/me").status_code == 200
        env = wharf_env(tmp_path, WHARF_DATABASE_URL=database_url,
                        WHARF_UNITSTORE_URL=unitstore_url)
        result = run_wharf(tmp_path, "user", "disable", "alice", env=env, timeout=60)
        assert result.returncode == 0, result.stderr
        assert "user alice is disabled" in result.stderr
        r = alice.get("/api/me")
        assert r.status_code == 403 and r.json["code"] == "account_disabled", r.text
        again = run_wharf(tmp_path, "user", "disable", "alice", env=env, timeout=60)
        assert again.returncode == 0 and "(already)" in again.stderr
        result = run_wharf(tmp_path, "user", "enable", "alice", env=env, timeout=60)
        assert result.returncode == 0, result.stderr
        assert "user alice is active" in result.stderr
        assert alice.get("/api/me").status_code == 200
        unknown = run_wharf(tmp_path, "user", "disable", "nobody", env=env, timeout=60)
        assert unknown.returncode == 1
        assert unknown.stderr.strip() == "wharf user disable: No user nobody."
        assert "Traceback" not in unknown.stderr
    finally:
        db.dispose()
