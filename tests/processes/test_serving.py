"""Requests that try to hold the embedded server (``wharf serve``), against a real process.

Each scenario keeps its hostile clients going while ``/healthz`` must answer within 1 s
(every probe on a fresh connection):

- slow readers: 20 clients (more than the request threads) request a 32 MiB blob and never
  read; the download is served without pinning a request thread, and the server drops each
  connection once it made no progress for ``WHARF_HTTP_SEND_TIMEOUT`` (the client gets a
  truncated body, then EOF);
- slow bodies: 110 connections (more than waitress's default connection limit of 100)
  trickle a request a byte at a time, 10 more send nothing; the server closes each one
  once it falls behind ``WHARF_HTTP_RECEIVE_TIMEOUT`` / ``WHARF_HTTP_MIN_RECEIVE_RATE``;
- long-polls: 10 concurrent ``?wait=60`` on an operation held running (test hook); at most
  ``WHARF_LONG_POLL_MAX_WAITERS`` wait, the others answer at once with the current state and
  ``Retry-After``; all waiters are answered when the operation completes;
- all of the above at once.

Every test runs its own ``wharf serve`` on SQLite and files under a throw-away
``WHARF_DATA_DIR``.
"""
from __future__ import annotations

import http.client
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from tests.support.waiting import free_port

pytestmark = pytest.mark.slow

MiB = 1024 * 1024
PASSWORD = "correct horse battery staple"
_SCRIPT = shutil.which("wharf", path=str(Path(sys.executable).parent))
WHARF = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "wharfd.cli"]
SEND_TIMEOUT = 3
RECEIVE_TIMEOUT = 2
MAX_WAITERS = 4


class Server:
    """A ``wharf serve`` process on a free port with a private data dir."""

    def __init__(self, tmp: Path, **extra_env: str):
        self.port = free_port()
        self.data_dir = tmp / "data"
        self.pause_file = tmp / "pause"
        env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
        env.update(WHARF_DATA_DIR=str(tmp / "data"), WHARF_PORT=str(self.port),
                   WHARF_ARGON2_TIME_COST="1", WHARF_ARGON2_MEMORY_COST="8",
                   WHARF_ARGON2_PARALLELISM="1", PYTHONUNBUFFERED="1",
                   WHARF_TEST_HOOKS="1", WHARF_TEST_PAUSE_FILE=str(self.pause_file),
                   WHARF_HTTP_SEND_TIMEOUT=str(SEND_TIMEOUT),
                   WHARF_HTTP_RECEIVE_TIMEOUT=str(RECEIVE_TIMEOUT),
                   WHARF_LONG_POLL_MAX_WAITERS=str(MAX_WAITERS), **extra_env)
        self.log = open(tmp / "serve.log", "w+")
        self.proc = subprocess.Popen([*WHARF, "serve"], env=env, cwd=tmp,
                                     stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"wharf serve exited:\n{self.output()}")
            try:
                if self.request("GET", "/healthz", timeout=1)[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        pytest.fail(f"wharf serve did not answer within 60 s:\n{self.output()}")

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-5000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self.log.close()

    def request(self, method, path, body=None, headers=None, timeout=30.0):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            conn.close()


class User:
    """A registered, logged-in user talking JSON to the server."""

    def __init__(self, server: Server, name: str = "alice"):
        self.server = server
        status, _, body = server.request("POST", "/api/users", *self._json(
            {"username": name, "password": PASSWORD}))
        assert status == 201, body
        self.space_id = json.loads(body)["personal_space_id"]
        status, headers, body = server.request("POST", "/api/login-sessions", *self._json(
            {"username": name, "password": PASSWORD}))
        assert status == 201, body
        self.cookie = headers["Set-Cookie"].split(";", 1)[0]

    @staticmethod
    def _json(payload, **headers):
        return json.dumps(payload).encode(), {"Content-Type": "application/json", **headers}

    def call(self, method, path, payload=None, timeout=30.0, **headers):
        headers = {"Cookie": self.cookie, **headers}
        body = None
        if payload is not None:
            body, headers = self._json(payload, **headers)
        status, headers, raw = self.server.request(method, path, body, headers, timeout)
        return status, headers, (json.loads(raw) if raw else None)

    def wait_done(self, op_id: str) -> dict:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            status, _, op = self.call("GET", f"/api/operations/{op_id}?wait=5")
            assert status == 200, op
            if op["done"]:
                return op
        pytest.fail(f"operation {op_id} not done within 30 s")

    def upload(self, size: int) -> str:
        """A blob of ``size`` bytes in the user's space; returns its resource id."""
        status, _, sess = self.call("POST", "/api/blob-upload-sessions",
                                    {"space_id": self.space_id, "filename": "big.bin",
                                     "size": size}, **{"Idempotency-Key": uuid.uuid4().hex})
        assert status == 201, sess
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        try:
            conn.putrequest("PUT", f"/api/blob-upload-sessions/{sess['id']}/content")
            for k, v in (("Cookie", self.cookie), ("Content-Length", str(size)),
                         ("Content-Type", "application/octet-stream")):
                conn.putheader(k, v)
            conn.endheaders()
            chunk = bytes(range(256)) * 4096  # 1 MiB
            left = size
            while left:
                conn.send(chunk[:min(left, len(chunk))])
                left -= min(left, len(chunk))
            r = conn.getresponse()
            assert r.status == 200, r.read()
            r.read()
        finally:
            conn.close()
        status, _, op = self.call("POST", f"/api/blob-upload-sessions/{sess['id']}/complete",
                                  **{"Idempotency-Key": uuid.uuid4().hex})
        assert status == 202, op
        op = self.wait_done(op["id"])
        assert op["status"] == "completed", op
        return op["result"]["resource_id"]


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path)
    yield s
    s.stop()


# -- /healthz probes ----------------------------------------------------------------------------
def assert_healthz_answers(server: Server, probes: int = 3, gap: float = 0.5) -> None:
    """``probes`` GET /healthz on fresh connections, each answered 200 within 1 s."""
    for i in range(probes):
        t0 = time.monotonic()
        try:
            status, _, body = server.request("GET", "/healthz", timeout=1.0)
        except (OSError, http.client.HTTPException) as exc:
            pytest.fail(f"/healthz probe {i + 1}: no answer within 1 s ({exc!r})")
        took = time.monotonic() - t0
        assert status == 200 and json.loads(body) == {"status": "ok"}
        assert took < 1.0, f"/healthz probe {i + 1} took {took:.2f}s"
        time.sleep(gap)


# -- hostile clients ----------------------------------------------------------------------------
@contextmanager
def slow_readers(server: Server, user: User, resource_id: str, count: int = 20):
    """``count`` connections that request the blob and never read; yields them."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", server.port))
            s.sendall((f"GET /api/blob-resources/{resource_id}/content HTTP/1.1\r\n"
                       f"Host: 127.0.0.1\r\nCookie: {user.cookie}\r\n\r\n").encode())
            socks.append(s)
        time.sleep(1.0)  # let every download start and fill the socket buffers
        yield socks
    finally:
        for s in socks:
            s.close()


def drain(sock: socket.socket, deadline: float) -> tuple[int, bool]:
    """Read until EOF (or reset) or ``deadline``; return (bytes read, ended)."""
    total = 0
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            data = sock.recv(1 << 20)
        except TimeoutError:
            break
        except ConnectionResetError:
            return total, True
        if not data:
            return total, True
        total += len(data)
    return total, False


class Trickler:
    """``count`` connections sending a blob upload one byte at a time, round-robin, and
    ``silent`` that connect and send nothing."""

    def __init__(self, server: Server, count: int = 110, interval: float = 0.5,
                 silent: int = 10):
        head = (b"PUT /api/blob-upload-sessions/x/content HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\n")
        self.socks, self.closed_by_server = [], 0
        self.stop_ev = threading.Event()
        for i in range(count + silent):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=2)
            s.setblocking(False)
            self.socks.append([s, head if i < count else None])
        self.interval = interval
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop_ev.is_set():
            for entry in self.socks:
                s, pending = entry
                if s is None:
                    continue
                try:
                    if pending is None:  # silent: only notice the server closing
                        if s.recv(1) == b"":
                            raise ConnectionResetError
                        continue
                    s.send(pending[:1] or b"x")
                    entry[1] = pending[1:]
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    entry[0] = None
                    self.closed_by_server += 1
                    s.close()
            self.stop_ev.wait(self.interval)

    def __enter__(self):
        self.thread.start()
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        self.stop_ev.set()
        self.thread.join(5)
        for s, _ in self.socks:
            if s is not None:
                s.close()

    @property
    def alive(self) -> int:
        return sum(1 for s, _ in self.socks if s is not None)


@contextmanager
def paused_operation(server: Server, user: User):
    """An operation held running (the pause-file hook) until the block ends; yields its id."""
    server.pause_file.touch()
    try:
        status, _, op = user.call("POST", "/api/resources",
                                  {"space_id": user.space_id, "name": "Doc", "unit_type": "doc"},
                                  **{"Idempotency-Key": uuid.uuid4().hex})
        assert status == 202, op
        yield op["id"]
    finally:
        server.pause_file.unlink(missing_ok=True)


class LongPolls:
    """``count`` concurrent GET /api/operations/{id}?wait=60, each on its own thread."""

    def __init__(self, user: User, op_id: str, count: int = 10):
        self.results: queue.Queue = queue.Queue()

        def poll():
            t0 = time.monotonic()
            try:
                status, headers, op = user.call("GET", f"/api/operations/{op_id}?wait=60",
                                                timeout=70)
                self.results.put((time.monotonic() - t0, status, headers, op))
            except Exception as exc:
                self.results.put((time.monotonic() - t0, None, {}, repr(exc)))

        self.threads = [threading.Thread(target=poll, daemon=True) for _ in range(count)]
        for t in self.threads:
            t.start()

    def answered(self, timeout: float, expected: int | None = None) -> list:
        """The answers that arrive within ``timeout`` (sooner once ``expected`` did)."""
        out = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (expected is None or len(out) < expected):
            try:
                out.append(self.results.get(timeout=max(0.01, deadline - time.monotonic())))
            except queue.Empty:
                break
        return out


def check_long_polls(server: Server, user: User, op_id: str, count: int = 10,
                     during=lambda: None) -> None:
    polls = LongPolls(user, op_id, count)
    # The waiters beyond the limit are answered at once, not held: current state + Retry-After
    # (5 s: fresh connections and logins on a loaded machine; a held one would take 60 s).
    early = polls.answered(5, expected=count - MAX_WAITERS)
    early += polls.answered(0.5)  # and no more than those: the others are held
    assert len(early) == count - MAX_WAITERS, early
    for took, status, headers, op in early:
        assert status == 200 and op["done"] is False and headers.get("Retry-After"), op
        assert took < 5
    during()
    assert_healthz_answers(server)
    status, _, metrics = server.request("GET", "/metrics", timeout=1.0)
    assert status == 200
    assert f"wharf_long_polls_refused_total {float(count - MAX_WAITERS)}" in metrics.decode()
    server.pause_file.unlink()
    late = polls.answered(15, expected=MAX_WAITERS)
    assert len(late) == MAX_WAITERS, late
    for _, status, _, op in late:
        assert status == 200 and op["done"] is True and op["status"] == "completed", op


# -- tests --------------------------------------------------------------------------------------
def test_clients_that_never_read_a_large_blob_do_not_hold_the_server(server):
    user = User(server)
    size = 32 * MiB
    resource_id = user.upload(size)
    with slow_readers(server, user, resource_id) as socks:
        assert_healthz_answers(server)
        # Other users still download (a small range, read at once).
        status, headers, _ = server.request(
            "GET", f"/api/blob-resources/{resource_id}/content",
            headers={"Cookie": user.cookie, "Range": "bytes=0-1023"}, timeout=1.0)
        assert status == 206 and headers["Content-Length"] == "1024"
        # A download that makes no progress is dropped after the send timeout: reading
        # now yields what was buffered, then EOF — far less than the blob.
        time.sleep(SEND_TIMEOUT + 1.5)
        for s in socks:
            got, ended = drain(s, time.monotonic() + 5)
            assert ended and got < size, (got, ended)
    assert_healthz_answers(server, probes=1)


def test_connections_trickling_request_bodies_do_not_lock_everyone_out(server):
    with Trickler(server) as trickler:
        assert_healthz_answers(server, probes=4)
        # Trickled bytes do not keep a request alive forever: each is closed once it
        # falls behind the receive deadline.
        deadline = time.monotonic() + RECEIVE_TIMEOUT + 6
        while trickler.alive and time.monotonic() < deadline:
            time.sleep(0.2)
        assert trickler.alive == 0, f"{trickler.alive} trickling connections still open"
    assert_healthz_answers(server, probes=1)


def test_concurrent_long_polls_do_not_stall_healthz(server):
    user = User(server)
    with paused_operation(server, user) as op_id:
        check_long_polls(server, user, op_id)


def test_all_at_once(server):
    user = User(server)
    resource_id = user.upload(32 * MiB)
    with ExitStack() as stack:
        stack.enter_context(slow_readers(server, user, resource_id))
        stack.enter_context(Trickler(server))
        op_id = stack.enter_context(paused_operation(server, user))
        check_long_polls(server, user, op_id, during=lambda: assert_healthz_answers(server))


def test_a_long_poll_limit_that_leaves_no_thread_free_is_a_configuration_error(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
    env.update(WHARF_DATA_DIR=str(tmp_path / "data"), WHARF_PORT=str(free_port()),
               WHARF_HTTP_THREADS="4", WHARF_LONG_POLL_MAX_WAITERS="4")
    result = subprocess.run([*WHARF, "serve"], env=env, cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 2, result
    assert "WHARF_LONG_POLL_MAX_WAITERS=4 must be below WHARF_HTTP_THREADS=4" in result.stderr
    assert not (tmp_path / "data").exists()  # refused before touching anything


def test_behind_a_tls_proxy_the_forwarded_scheme_and_client_address_reach_the_app(tmp_path):
    """With ``WHARF_TRUSTED_PROXY_COUNT=1`` the proxy's ``X-Forwarded-Proto`` makes the API's
    own origin https (a browser's cookie write from it is accepted) and its
    ``X-Forwarded-For`` is the client address (audit rows, per-address rate limits)."""
    import sqlite3
    server = Server(tmp_path, WHARF_TRUSTED_PROXY_COUNT="1")
    try:
        user = User(server)
        here = f"127.0.0.1:{server.port}"
        proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9",
                   "Origin": f"https://{here}", "Host": here,
                   "Forwarded": "proto=http"}  # the client's own: not believed
        status, _headers, body = user.call(
            "POST", "/api/nodes", {"space_id": user.space_id, "name": "n"},
            **{"X-Request-Id": "proxied-write"}, **proxied)
        assert status == 201, body
        # Without the proxy's scheme, the same origin is another site.
        status, _, body = user.call("POST", "/api/nodes",
                                    {"space_id": user.space_id, "name": "m"},
                                    Origin=f"https://{here}")
        assert (status, body["code"]) == (403, "cross_origin")
    finally:
        server.stop()
    with sqlite3.connect(server.data_dir / "wharf.db") as conn:
        rows = conn.execute("SELECT client_ip FROM audit_logs WHERE request_id = ?",
                            ("proxied-write",)).fetchall()
    assert rows and {ip for (ip,) in rows} == {"203.0.113.9"}


def test_a_body_above_the_largest_accepted_is_refused_before_it_is_read(tmp_path):
    """waitress spools a body before the app runs: one announced above the largest the API
    accepts (``WHARF_MAX_UPLOAD_SIZE``, ``WHARF_MAX_BODY_BYTES`` plus slack) is answered 413
    at once, without reading it."""
    server = Server(tmp_path, WHARF_MAX_UPLOAD_SIZE=str(4 * MiB))
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"PUT /api/blob-upload-sessions/x/content HTTP/1.1\r\n"
                         b"Host: localhost\r\nContent-Type: application/octet-stream\r\n"
                         b"Content-Length: %d\r\n\r\n" % (64 * MiB))
            sock.sendall(b"x" * 1024)  # a start of the body; the rest never comes
            t0 = time.monotonic()
            head = sock.recv(65536)
        assert head.startswith(b"HTTP/1.1 413 "), head
        assert time.monotonic() - t0 < RECEIVE_TIMEOUT  # at once, not a slow-request close
        assert_healthz_answers(server, probes=1, gap=0)
    finally:
        server.stop()


def test_connections_closed_by_the_receive_deadline_never_take_a_new_one_with_them(server):
    # Waves of silent connections are closed by the same guard pass while fresh clients keep
    # connecting: a descriptor freed by that pass is reused at once by the next accept, and
    # the new connection must not inherit the closed one's fate (reset or closed unanswered).
    errors: list[str] = []
    stop = threading.Event()

    def hammer():
        while not stop.is_set():
            try:
                status, _, body = server.request("GET", "/healthz", timeout=10)
                if status != 200:
                    errors.append(f"{status} {body!r}")
            except (OSError, http.client.HTTPException) as exc:
                errors.append(repr(exc))

    threads = [threading.Thread(target=hammer, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for _ in range(3):
            silent = [socket.create_connection(("127.0.0.1", server.port), timeout=5)
                      for _ in range(150)]
            time.sleep(RECEIVE_TIMEOUT + 2.5)  # all closed by the guard meanwhile
            for s in silent:
                s.close()
    finally:
        stop.set()
        for t in threads:
            t.join(15)
    assert not errors, errors[:5]
