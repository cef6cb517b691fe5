"""``wharf-client`` (wharfclient) against a real ``wharf serve`` process, over real TCP.

- A 200 MiB upload through a proxy that cuts the connection once after ~80 MiB completes
  exactly once: one blob resource, one completed create_blob_resource operation, the
  server's SHA-256 equals the file's.
- A download cut midway leaves ``FILE.part``; the rerun resumes it with a ranged request
  and yields the exact bytes.
- ``wait`` exits 1 on a failed (cancelled) operation and 0 on a completed one; ``--json``
  output parses; a problem+json error is one line with exit status 3.

The file is generated streamed (sparse, then a few written regions), never held in memory.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from tests.processes.test_serving import Server, User

pytestmark = pytest.mark.slow

MiB = 1024 * 1024
CLIENT = [sys.executable, "-m", "wharfclient"]


class CuttingProxy:
    """A TCP proxy that ends the connection in flight once, after ``cut_after`` bytes
    went from client to server; every later connection passes untouched."""

    #: Drop the chunk that reaches ``cut_after`` instead of forwarding it first.
    drop_trigger = False

    def __init__(self, target_port: int, cut_after: int):
        self.target = ("127.0.0.1", target_port)
        self.cut_after = cut_after
        self.sent = 0
        self.cut = False
        self.lock = threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            pair = (client, upstream)
            threading.Thread(target=self._pump, args=(client, upstream, pair, True),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, pair, False),
                             daemon=True).start()

    def _pump(self, src, dst, pair, upward: bool) -> None:
        try:
            while data := src.recv(256 * 1024):
                trigger = False
                if upward:
                    with self.lock:
                        self.sent += len(data)
                        trigger = not self.cut and self.sent >= self.cut_after
                        self.cut = self.cut or trigger
                if not (trigger and self.drop_trigger):
                    dst.sendall(data)
                if trigger:
                    # shutdown, not just close: it wakes the other pump's recv and
                    # ends both connections now.
                    for s in pair:
                        s.shutdown(socket.SHUT_RDWR)
                        s.close()
                    return
        except OSError:
            pass
        finally:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


@pytest.fixture(scope="module")
def wharf(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("client")
    server = Server(tmp)
    try:
        user = User(server)
        status, _, token = user.call("POST", "/api/api-tokens",
                                     {"name": "cli", "scopes": ["read", "write"]})
        assert status == 201, token
        yield server, user, token["token"]
    finally:
        server.stop()


def run(args, *, url: str, token: str, timeout: float = 120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
    env.update(WHARF_URL=url, WHARF_TOKEN=token, WHARF_CLIENT_CONFIG="/nonexistent")
    return subprocess.run([*CLIENT, *args], env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def big_file(path: Path, size: int) -> str:
    """A sparse file with a few written 1 MiB regions; returns its SHA-256, streamed."""
    with path.open("wb") as f:
        f.truncate(size)
        for i, at in enumerate(range(0, size, 37 * MiB)):
            f.seek(at)
            f.write(bytes([i % 251 + 1]) * MiB)
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(4 * MiB):
            h.update(chunk)
    return h.hexdigest()


def blob_operations(user: User) -> list[dict]:
    status, _, page = user.call("GET", "/api/operations?kind=create_blob_resource&limit=100")
    assert status == 200, page
    return page["items"]


def test_upload_200_mib_through_a_connection_cut_completes_exactly_once(wharf, tmp_path):
    server, user, token = wharf
    src = tmp_path / "big.bin"
    digest = big_file(src, 200 * MiB)
    before = blob_operations(user)
    proxy = CuttingProxy(server.port, cut_after=80 * MiB)
    try:
        r = run(["upload", str(src), "--space", user.space_id, "--json"],
                url=f"http://127.0.0.1:{proxy.port}", token=token)
    finally:
        proxy.close()
    assert proxy.cut, "the proxy never cut the connection"
    assert r.returncode == 0, r.stderr
    assert "retrying" in r.stderr  # the PUT was cut and sent again
    assert proxy.sent >= 280 * MiB  # ~80 MiB, then the whole 200 MiB again
    out = json.loads(r.stdout)
    op = out["operation"]
    assert op["status"] == "completed" and op["kind"] == "create_blob_resource"
    new = [o for o in blob_operations(user) if o["id"] not in {b["id"] for b in before}]
    assert [o["id"] for o in new] == [op["id"]]  # exactly one operation
    status, _, meta = user.call("GET", f"/api/blob-resources/{op['result']['resource_id']}")
    assert status == 200, meta
    assert (meta["size"], meta["sha256"]) == (200 * MiB, digest)
    status, _, children = user.call("GET", f"/api/spaces/{user.space_id}/nodes")
    assert status == 200
    assert [n["name"] for n in children["items"]].count("big.bin") == 1


def test_download_resumes_a_partial_file_with_the_exact_bytes(wharf, tmp_path):
    server, user, token = wharf
    size = 24 * MiB
    resource_id = user.upload(size)
    out = tmp_path / "copy.bin"
    proxy = _DownwardCut(server.port, cut_after=9 * MiB)
    try:
        r = run(["download", resource_id, "-o", str(out), "--retries", "0"],
                url=f"http://127.0.0.1:{proxy.port}", token=token)
    finally:
        proxy.close()
    assert r.returncode == 3, r.stderr
    part = tmp_path / "copy.bin.part"
    kept = part.stat().st_size
    assert 0 < kept < size and not out.exists()
    r = run(["download", resource_id, "-o", str(out), "--json"],
            url=f"http://127.0.0.1:{server.port}", token=token)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["resumed_from"] == kept
    chunk = bytes(range(256)) * 4096
    expected = hashlib.sha256(chunk * (size // len(chunk))).hexdigest()
    assert hashlib.sha256(out.read_bytes()).hexdigest() == expected == got["sha256"]
    assert not part.exists()


class _DownwardCut(CuttingProxy):
    """Counts (and cuts on) the server's bytes instead."""

    def _pump(self, src, dst, pair, upward: bool) -> None:
        super()._pump(src, dst, pair, not upward)


class _LostAnswer(_DownwardCut):
    """The first answer never arrives: the server acted, the client saw a reset."""

    drop_trigger = True


def test_a_lost_answer_is_retried_with_the_same_idempotency_key(wharf):
    server, user, token = wharf

    def creates() -> set[str]:
        status, _, page = user.call("GET", "/api/operations?kind=create_resource&limit=100")
        assert status == 200, page
        return {op["id"] for op in page["items"]}

    before = creates()
    proxy = _LostAnswer(server.port, cut_after=1)
    try:
        r = run(["create", "Once", "--type", "sheet", "--space", user.space_id, "--json"],
                url=f"http://127.0.0.1:{proxy.port}", token=token)
    finally:
        proxy.close()
    assert proxy.cut and r.returncode == 0, r.stderr
    assert "retrying" in r.stderr
    op = json.loads(r.stdout)
    assert op["status"] == "completed"
    assert creates() - before == {op["id"]}  # the retry replayed, no second operation


def test_wait_exits_1_on_a_failed_operation_and_0_on_a_completed_one(wharf):
    server, user, token = wharf
    url = f"http://127.0.0.1:{server.port}"
    server.pause_file.touch()
    try:
        first = run(["create", "Held", "--type", "doc", "--space", user.space_id,
                     "--no-wait", "--json"], url=url, token=token)
        assert first.returncode == 0, first.stderr
        held = json.loads(first.stdout)["id"]
        deadline = time.monotonic() + 10
        while user.call("GET", f"/api/operations/{held}")[2]["status"] != "running":
            assert time.monotonic() < deadline, "the first operation never ran"
            time.sleep(0.1)
        second = run(["create", "Doomed", "--type", "sheet", "--space", user.space_id,
                      "--no-wait", "--json"], url=url, token=token)
        doomed = json.loads(second.stdout)["id"]
        cancel = run(["cancel", doomed, "--json"], url=url, token=token)
        assert cancel.returncode == 0, cancel.stderr
        assert json.loads(cancel.stdout)["error"]["code"] == "cancelled"
    finally:
        server.pause_file.unlink(missing_ok=True)
    r = run(["wait", held, doomed, "--json"], url=url, token=token)
    assert r.returncode == 1, r.stderr
    statuses = {op["id"]: op["status"] for op in json.loads(r.stdout)}
    assert statuses == {held: "completed", doomed: "failed"}
    r = run(["wait", held], url=url, token=token)
    assert r.returncode == 0 and held in r.stdout
    r = run(["ops", "--status", "failed", "--json"], url=url, token=token)
    assert r.returncode == 0
    assert doomed in [op["id"] for op in json.loads(r.stdout)["items"]]


def test_problem_json_error_is_one_line_with_exit_3(wharf):
    server, _user, token = wharf
    url = f"http://127.0.0.1:{server.port}"
    r = run(["wait", uuid.uuid4().hex], url=url, token=token)
    assert r.returncode == 3
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wharf-client: ")
    assert lines[0].endswith("(not_found)"), lines
    r = run(["ops"], url=url, token="not-a-token")
    assert r.returncode == 3 and len(r.stderr.strip().splitlines()) == 1
    r = run(["ops", "--retries", "1"], url="http://127.0.0.1:1", token=token)
    assert r.returncode == 3 and "unreachable" in r.stderr


def test_stdin_upload_resume_replace_download_trash_restore(wharf, tmp_path):
    server, user, token = wharf
    url = f"http://127.0.0.1:{server.port}"
    # upload -: stdin spooled, uploaded under --name
    r = subprocess.run(
        [*CLIENT, "upload", "-", "--space", user.space_id, "--name", "piped.txt", "--json"],
        input=b"from a pipe\n", capture_output=True, timeout=60,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("WHARF_")},
             "WHARF_URL": url, "WHARF_TOKEN": token, "WHARF_CLIENT_CONFIG": "/nonexistent"})
    assert r.returncode == 0, r.stderr
    piped = json.loads(r.stdout)["operation"]["result"]["resource_id"]
    # --resume: a session left before its PUT (as after Ctrl-C) is finished by a rerun
    src = tmp_path / "later.txt"
    src.write_bytes(b"resumed upload\n")
    status, _, sess = user.call("POST", "/api/blob-upload-sessions",
                                {"space_id": user.space_id, "filename": "later.txt",
                                 "size": src.stat().st_size},
                                **{"Idempotency-Key": uuid.uuid4().hex})
    assert status == 201, sess
    r = run(["upload", str(src), "--resume", sess["id"], "--json"], url=url, token=token)
    assert r.returncode == 0, r.stderr
    done = json.loads(r.stdout)
    assert done["session_id"] == sess["id"] and done["operation"]["status"] == "completed"
    # a second rerun replays the same completion: no second operation
    again = run(["upload", str(src), "--resume", sess["id"], "--json"], url=url, token=token)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["operation"]["id"] == done["operation"]["id"]
    # replace, then download under the blob's own name
    new = tmp_path / "v2.txt"
    new.write_bytes(b"second version\n")
    r = run(["replace", piped, str(new), "--json"], url=url, token=token)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "completed"
    work = tmp_path / "dl"
    work.mkdir()
    r = subprocess.run([*CLIENT, "download", piped, "--url", url, "--token", token, "-q"],
                       cwd=work, capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if not k.startswith("WHARF_")})
    assert r.returncode == 0, r.stderr
    assert (work / "piped.txt").read_bytes() == b"second version\n"
    # trash the node, restore the batch
    status, _, meta = user.call("GET", f"/api/blob-resources/{piped}")
    r = run(["trash", meta["node_id"], "--json"], url=url, token=token)
    assert r.returncode == 0, r.stderr
    batch = json.loads(r.stdout)["id"]
    assert user.call("GET", f"/api/blob-resources/{piped}")[0] == 404
    r = run(["restore", batch, "--json"], url=url, token=token)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["restored_nodes"] == 1
    assert user.call("GET", f"/api/blob-resources/{piped}")[0] == 200


def test_configuration_flags_over_environment_over_profile(tmp_path, monkeypatch):
    from wharfclient.config import ConfigError, load_config

    profiles = tmp_path / "client.toml"
    profiles.write_text('[default]\nurl = "http://default:1"\ntoken = "t-default"\n'
                        '[ci]\nurl = "http://ci:2/"\ntoken = "t-ci"\n')
    for name in ("WHARF_URL", "WHARF_TOKEN", "WHARF_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WHARF_CLIENT_CONFIG", str(profiles))
    assert load_config().url == "http://default:1"
    ci = load_config(profile="ci")
    assert (ci.url, ci.token) == ("http://ci:2", "t-ci")
    monkeypatch.setenv("WHARF_URL", "http://env:3")
    # an explicit profile wins over the environment for BOTH fields: the ci token never
    # goes to the environment's server
    ci = load_config(profile="ci")
    assert (ci.url, ci.token) == ("http://ci:2", "t-ci")
    # the environment's url and token go together: no profile token for WHARF_URL
    env = load_config()
    assert (env.url, env.token) == ("http://env:3", None)
    monkeypatch.setenv("WHARF_TOKEN", "t-env")
    assert (load_config().url, load_config().token) == ("http://env:3", "t-env")
    # flags override field by field
    assert load_config(url="http://flag:4").token == "t-env"
    assert load_config(profile="ci", token="t-flag").url == "http://ci:2"
    monkeypatch.delenv("WHARF_TOKEN")
    assert load_config(url="http://flag:4", token="t-flag").token == "t-flag"
    with pytest.raises(ConfigError, match="nope"):
        load_config(profile="nope")
    monkeypatch.delenv("WHARF_URL")
    monkeypatch.setenv("WHARF_CLIENT_CONFIG", str(tmp_path / "absent.toml"))
    with pytest.raises(ConfigError, match="no server"):
        load_config()
    r = subprocess.run([*CLIENT, "ops"], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "WHARF_CLIENT_CONFIG": str(tmp_path / "absent")})
    assert r.returncode == 2 and r.stderr.startswith("wharf-client: no server")


def test_common_flags_work_before_and_after_the_verb():
    from wharfclient.cli import build_parser

    before = build_parser().parse_args(["--json", "--retries", "0", "--url", "u", "ops"])
    after = build_parser().parse_args(["ops", "--json", "--retries", "0", "--url", "u"])
    for args in (before, after):
        assert (args.json, args.retries, args.url) == (True, 0, "u")
    plain = build_parser().parse_args(["ops"])
    assert (plain.json, plain.quiet, plain.retries, plain.url) == (False, False, 5, None)


def test_503_with_retry_after_is_honoured_and_the_key_resent():
    """A stand-in answering 503 (Retry-After: 1) once: the client waits that long and
    resends the write with the same Idempotency-Key."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[tuple[float, str | None]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append((time.monotonic(), self.headers.get("Idempotency-Key")))
            if len(seen) == 1:
                body, status = b'{"title": "Busy", "code": "unavailable"}', 503
            else:
                body, status = json.dumps({"id": "op1", "kind": "create_resource",
                                           "status": "completed", "done": True}).encode(), 202
            self.send_response(status)
            if status == 503:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        r = run(["create", "X", "--type", "doc", "--space", "s" * 32, "--json"],
                url=f"http://127.0.0.1:{httpd.server_address[1]}", token="t")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["id"] == "op1"
    assert len(seen) == 2 and seen[0][1] == seen[1][1] and seen[0][1]
    assert seen[1][0] - seen[0][0] >= 0.95
    assert "HTTP 503; retrying in 1.0 s" in r.stderr


class _LostPostAnswer(CuttingProxy):
    """The answer to the first POST never arrives (the server acted); the GETs before it
    and every later request pass untouched."""

    def __init__(self, target_port: int):
        super().__init__(target_port, cut_after=0)
        self.posting: set[int] = set()

    def _pump(self, src, dst, pair, upward: bool) -> None:
        try:
            while data := src.recv(256 * 1024):
                with self.lock:
                    if upward and data.startswith(b"POST "):
                        self.posting.add(id(pair))
                    trigger = not upward and not self.cut and id(pair) in self.posting
                    self.cut = self.cut or trigger
                if trigger:
                    for s in pair:
                        s.shutdown(socket.SHUT_RDWR)
                        s.close()
                    return
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


def _lost(args, server, token):
    proxy = _LostPostAnswer(server.port)
    try:
        r = run([*args, "--json"], url=f"http://127.0.0.1:{proxy.port}", token=token)
    finally:
        proxy.close()
    assert proxy.cut, "the proxy never lost an answer"
    assert r.returncode == 0, r.stderr
    assert "reading the state back" in r.stderr
    return json.loads(r.stdout)


def test_lost_answers_of_cancel_retry_trash_restore_are_read_back(wharf):
    """These writes have no Idempotency-Key: a re-send would answer 409/404 although the
    first one succeeded. The client reads the state back instead and exits 0."""
    server, user, token = wharf
    url = f"http://127.0.0.1:{server.port}"
    server.pause_file.touch()
    try:
        held = json.loads(run(["create", "Held2", "--type", "doc", "--space", user.space_id,
                               "--no-wait", "--json"], url=url, token=token).stdout)["id"]
        deadline = time.monotonic() + 10
        while user.call("GET", f"/api/operations/{held}")[2]["status"] != "running":
            assert time.monotonic() < deadline, "the first operation never ran"
            time.sleep(0.1)
        doomed = json.loads(run(["create", "Doomed2", "--type", "sheet", "--space",
                                 user.space_id, "--no-wait", "--json"],
                                url=url, token=token).stdout)["id"]
        op = _lost(["cancel", doomed], server, token)
        assert (op["id"], op["status"], op["error"]["code"]) == (doomed, "failed", "cancelled")
    finally:
        server.pause_file.unlink(missing_ok=True)
    before = user.call("GET", f"/api/operations/{doomed}")[2]
    op = _lost(["retry", doomed], server, token)
    assert op["id"] == doomed and op["status"] != "failed"
    r = run(["wait", doomed, "--json"], url=url, token=token)
    assert r.returncode == 0, r.stderr
    after = user.call("GET", f"/api/operations/{doomed}")[2]
    assert after["status"] == "completed" and after["attempts"] > before["attempts"]
    # trash: the batch the lost answer created is found and printed
    node = after["result"]["node_id"]
    batch = _lost(["trash", node], server, token)
    status, _, listing = user.call("GET", f"/api/spaces/{user.space_id}/trash")
    assert status == 200
    assert [b["id"] for b in listing["items"] if b["root_node_id"] == node] == [batch["id"]]
    restored = _lost(["restore", batch["id"]], server, token)
    assert restored["id"] == batch["id"]
    assert user.call("GET", f"/api/nodes/{node}")[0] == 200


def test_local_and_decoding_errors_are_one_line_with_exit_3(wharf, tmp_path):
    """OSError (cannot write -o) and a 200 that is not JSON: exit 3, no traceback."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    server, user, token = wharf
    resource_id = user.upload(1024)
    r = run(["download", resource_id, "-o", "/nonexistent/dir/f"],
            url=f"http://127.0.0.1:{server.port}", token=token)
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wharf-client: "), r.stderr
    assert "No such file or directory" in lines[0]

    seen: list[str | None] = []

    class Html(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            body = b"<html>captive portal</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Html)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    # a ~/.netrc for that host must not add Basic credentials (trust_env=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text("machine 127.0.0.1 login leak password secret\n")
    (home / ".netrc").chmod(0o600)
    try:
        r = subprocess.run(
            [*CLIENT, "ops", "--url", f"http://127.0.0.1:{port}"], capture_output=True,
            text=True, timeout=60, stdin=subprocess.DEVNULL,
            env={**{k: v for k, v in os.environ.items()
                    if not k.startswith("WHARF_") and k != "NETRC"},
                 "HOME": str(home), "WHARF_CLIENT_CONFIG": "/nonexistent"})
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert r.returncode == 3, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "not JSON" in r.stderr, r.stderr
    assert seen == [None]


def test_proxy_from_the_environment_is_kept(monkeypatch):
    from wharfclient.http import proxy_for

    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
                 "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert proxy_for("https://wharf.example.com") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert proxy_for("https://wharf.example.com") == "http://proxy:3128"
    assert proxy_for("http://wharf.example.com") is None
    monkeypatch.setenv("NO_PROXY", "example.com")
    assert proxy_for("https://wharf.example.com") is None


class _Hostile:
    """A stand-in server for one blob ``r1`` that lies: its metadata declares ``size``
    bytes (``filename`` as the suggested name) and ``download`` decides the answer to the
    download request: ``(status, headers, body chunks)``. ``sent`` counts the body bytes
    the server managed to write before the client stopped reading."""

    def __init__(self, *, size: int, data: bytes, filename: str = "blob.bin", download=None,
                 meta_status: int = 200, meta_body: bytes | None = None):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.sent = 0
        self.requests: list[dict[str, str]] = []
        hostile = self
        meta = json.dumps({"id": "r1", "filename": filename, "size": size,
                           "etag": '"e1"', "sha256": hashlib.sha256(data).hexdigest()}).encode()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                if self.path.endswith("/download"):
                    hostile.requests.append(dict(self.headers))
                    status, headers, chunks = download(dict(self.headers))
                else:
                    status, headers = meta_status, {"Content-Type": "application/json"}
                    chunks = [meta_body if meta_body is not None else meta]
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                if "Content-Length" not in headers:
                    self.send_header("Content-Length", str(sum(len(c) for c in chunks)
                                                           if isinstance(chunks, list)
                                                           else 32 * MiB))
                self.end_headers()
                try:
                    for chunk in chunks:
                        self.wfile.write(chunk)
                        hostile.sent += len(chunk)
                except OSError:  # the client hung up: what a careful client does
                    self.close_connection = True

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _flood(total: int = 32 * MiB, byte: bytes = b"x"):
    block = byte * (256 * 1024)
    for _ in range(total // len(block)):
        yield block


def test_download_stops_reading_once_more_than_the_declared_size_arrived(tmp_path):
    """A server declaring a 10-byte blob and streaming 32 MiB: the client hangs up after
    the first chunk past 10 bytes; nothing of it stays on disk (exit 3, a stable code)."""
    hostile = _Hostile(size=10, data=b"0123456789",
                       download=lambda _h: (200, {"ETag": '"e1"'}, _flood()))
    try:
        r = run(["download", "r1", "-o", str(tmp_path / "f")], url=hostile.url, token="t")
    finally:
        hostile.close()
    assert r.returncode == 3, r.stderr
    assert "(download_too_large)" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert hostile.sent < 16 * MiB, hostile.sent


def test_a_206_must_start_where_the_partial_file_ends(tmp_path):
    """Resuming a 5-byte FILE.part, a 206 whose Content-Range starts at 0 is refused
    before a byte is appended."""
    data = b"0123456789"
    out = tmp_path / "f"
    (tmp_path / "f.part").write_bytes(data[:5])
    (tmp_path / "f.part.etag").write_text('"e1"')
    hostile = _Hostile(size=10, data=data, download=lambda _h: (
        206, {"ETag": '"e1"', "Content-Range": "bytes 0-4/10"}, [data[:5]]))
    try:
        r = run(["download", "r1", "-o", str(out)], url=hostile.url, token="t")
    finally:
        hostile.close()
    assert hostile.requests[0]["Range"] == "bytes=5-"
    assert r.returncode == 3, r.stderr
    assert "(content_range_mismatch)" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []

    # the honest 206 continues it
    (tmp_path / "f.part").write_bytes(data[:5])
    (tmp_path / "f.part.etag").write_text('"e1"')
    honest = _Hostile(size=10, data=data, download=lambda _h: (
        206, {"ETag": '"e1"', "Content-Range": "bytes 5-9/10"}, [data[5:]]))
    try:
        r = run(["download", "r1", "-o", str(out)], url=honest.url, token="t")
    finally:
        honest.close()
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == data


def test_an_endless_error_body_is_not_read_whole(tmp_path):
    hostile = _Hostile(size=10, data=b"0123456789", download=lambda _h: (
        404, {"Content-Type": "application/problem+json"}, _flood()))
    try:
        r = run(["download", "r1", "-o", str(tmp_path / "f"), "--retries", "0"],
                url=hostile.url, token="t")
    finally:
        hostile.close()
    assert r.returncode == 3, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr[:300]
    assert hostile.sent < 16 * MiB, hostile.sent


def test_download_does_not_overwrite_the_servers_file_name_without_force(tmp_path):
    """The server names the file ``.bashrc``: an existing one is kept (exit 2) unless
    ``--force``; a name with a directory part lands in the current directory."""
    data = b"echo pwned\n"
    bashrc = tmp_path / ".bashrc"
    bashrc.write_text("# mine\n")

    def answer(_h):
        return 200, {"ETag": '"e1"'}, [data]

    hostile = _Hostile(size=len(data), data=data, filename="../../.bashrc", download=answer)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
        env.update(WHARF_URL=hostile.url, WHARF_TOKEN="t",
                   WHARF_CLIENT_CONFIG="/nonexistent")
        (tmp_path / "sub").mkdir()

        def client(*args):
            return subprocess.run([*CLIENT, "download", "r1", *args], env=env,
                                  cwd=tmp_path, capture_output=True, text=True, timeout=60,
                                  stdin=subprocess.DEVNULL)

        r = client()
        assert r.returncode == 2, r.stderr
        assert ".bashrc exists; pass --force" in r.stderr
        assert bashrc.read_text() == "# mine\n"
        assert not (tmp_path / ".bashrc.part").exists()
        r = client("--force")
        assert r.returncode == 0, r.stderr
        assert bashrc.read_bytes() == data
        assert sorted(p.name for p in tmp_path.parent.iterdir()
                      if p.name == ".bashrc") == []
    finally:
        hostile.close()


def test_server_text_reaches_the_terminal_without_control_characters(tmp_path):
    """Escape codes in a problem+json title and in a file name are stripped."""
    evil = "\x1b]0;owned\x07\x1b[2J\rBad\x9b31m"
    body = json.dumps({"title": evil, "detail": "line\nbreak", "code": "x"}).encode()
    hostile = _Hostile(size=1, data=b"z", meta_status=400, meta_body=body,
                       download=lambda _h: (200, {}, [b"z"]))
    try:
        r = run(["download", "r1"], url=hostile.url, token="t")
    finally:
        hostile.close()
    assert r.returncode == 3
    assert r.stderr == "wharf-client: ]0;owned[2JBad31m: line break (x)\n", repr(r.stderr)

    data = b"z"
    named = _Hostile(size=1, data=data, filename="a\x1b[31mb\x07.txt",
                     download=lambda _h: (200, {"ETag": '"e1"'}, [data]))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
        env.update(WHARF_URL=named.url, WHARF_TOKEN="t", WHARF_CLIENT_CONFIG="/nonexistent")
        r = subprocess.run([*CLIENT, "download", "r1"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    finally:
        named.close()
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout, repr(r.stdout)
    assert [p.name for p in tmp_path.iterdir()] == ["a[31mb.txt"]


def test_the_python_example_in_docs_client_md_runs(wharf, tmp_path):
    """docs/client.md, "From Python": the example, as printed there, against a real
    server: an operation, an upload, a download and an error."""
    import re

    from tests.support.processes import REPO

    server, user, token = wharf
    text = (REPO / "docs" / "client.md").read_text()
    section = text[text.index("## From Python"):text.index("## Exit status")]
    (example,) = re.findall(r"```python\n(.*?)```", section, re.S)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
    env.update(WHARF_URL=f"http://127.0.0.1:{server.port}", WHARF_TOKEN=token,
               WHARF_CLIENT_CONFIG="/nonexistent", SPACE=user.space_id)
    r = subprocess.run([sys.executable, "-c", example], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    created, downloaded, error = r.stdout.splitlines()
    assert created.startswith("completed ")
    data = b"Hello from wharfclient\n"
    assert downloaded == f"{len(data)} {hashlib.sha256(data).hexdigest()}"
    assert (tmp_path / "copy.txt").read_bytes() == data
    assert error == "404 not_found"
