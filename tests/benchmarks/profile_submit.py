"""CPU-ms per ``POST /api/resources`` (create_resource, request to 202) by layer, in process.

A script, not a test. It builds the API app as ``wharfd.runtime.Components`` does (with
the in-process StubBroker: the Redis enqueue is not measured) in a throw-away PostgreSQL
database, registers a user, mints an API token and calls the WSGI app directly (no HTTP
server, no test client) N times with a Bearer token and a fresh ``Idempotency-Key``, as
``bench_operations.py``'s clients do.

Two passes of N POSTs each:

1. **Totals**: this process's CPU per POST (``os.times``) and the PostgreSQL backends'
   CPU per POST (``/proc``), nothing else running in the process.
2. **Layers**: ``py-spy record --gil`` (installed with the ``dev`` extra) samples the
   thread holding the GIL, so a wait on PostgreSQL is not sampled. Each sample goes
   to one layer, the first of these its stack is in: harness (building the environ),
   commit, SQL under auth, auth (``AuthMiddleware``, ``wharf.identity``), SQL
   (SQLAlchemy, psycopg, ``storage.driver``), validation (msgspec decoding), the
   submission's own logic (``wharf.*``: idempotency, quota, audit, outbox), our API code
   (``api.*``: middleware, responders, serialization), Falcon (routing, request and
   response objects, middleware dispatch), other. The layer shares of pass 2 are applied
   to pass 1's total (the sampler's own cost is not in it).

Then SQL statements per POST (100 more POSTs, a statement listener on) and, each optional:

- ``--profile N``: the top N of a cProfile of N more POSTs (CPU, main thread only);
- ``--execute BATCH``: N more submissions executed in process, BATCH per claim
  (``Executor.run_batch``, no broker): the executor's CPU and PostgreSQL's per operation;
  ``--round-trips`` counts its round trips per batch (libpq's trace), ``--profile-execute
  N`` prints the top N of a cProfile of it.

``--no-layers`` skips pass 2 (no py-spy needed); ``--sqlite`` runs on a SQLite file (no
PostgreSQL CPU, no round trips); ``--no-cte`` records a submission with three INSERTs
instead of PostgreSQL's one CTE statement.

The HTTP server's own CPU per request is not in this process: ``--server`` measures it
apart, for an app that only answers 202 (gunicorn gthread with ``wharf api``'s settings,
waitress as ``wharf serve`` runs it, granian's WSGI interface when importable), 8
keep-alive client threads, the server process tree's CPU from /proc.

    PYTHONPATH=. .venv/bin/python tests/benchmarks/profile_submit.py --n 2000
    PYTHONPATH=. .venv/bin/python tests/benchmarks/profile_submit.py --server --requests 20000
    PYTHONPATH=. .venv/bin/python tests/benchmarks/profile_submit.py --n 1000 --no-layers \
        [--sqlite] [--profile 30] [--execute 1 [--round-trips] [--profile-execute 40]]
"""
from __future__ import annotations

import argparse
import collections
import cProfile
import io
import os
import pstats
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.waiting import free_port, stop  # noqa: E402  (after the path)

PASSWORD = "correct horse battery staple"
TICK = os.sysconf("SC_CLK_TCK")

LAYERS = ("HTTP server (apart: --server)", "harness", "commit", "auth: SQL", "auth",
          "dispatch (outbox -> broker, marker thread)", "SQL: SQLAlchemy (session, Core, ORM)",
          "SQL: psycopg (driver)", "validation (msgspec)", "submission logic (wharf.*)",
          "API code (api.*: middleware, responders, JSON)",
          "Falcon (routing, req/resp, middleware dispatch)", "other")


def _cpu(pid: int) -> float:
    try:
        raw = open(f"/proc/{pid}/stat").read()
    except OSError:
        return 0.0
    fields = raw[raw.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _tree_cpu(pid: int) -> float:
    """CPU of ``pid`` and its live children, and of the children it reaped."""
    total = 0.0
    try:
        raw = open(f"/proc/{pid}/stat").read()
        fields = raw[raw.rindex(")") + 2:].split()
        total += sum(int(f) for f in fields[11:15]) / TICK
        kids = open(f"/proc/{pid}/task/{pid}/children").read().split()
    except OSError:
        return total
    return total + sum(_tree_cpu(int(k)) for k in kids)


def _self_cpu() -> float:
    t = os.times()
    return t.user + t.system


def classify(frames: list[tuple[str, str]]) -> str:
    """The layer of one stack (``(filename, qualified function name)`` pairs)."""
    files = [f.replace(os.sep, "/") for f, _ in frames]

    def within(*parts: str) -> bool:
        return any(p in f for f in files for p in parts)

    if within("/falcon/testing/"):
        return "harness"
    if any(fn.rsplit(".", 1)[-1] == "commit" and ("/sqlalchemy/" in f or "/psycopg/" in f or "/storage/" in f)
           for (_, fn), f in zip(frames, files)):
        return "commit"
    sql = within("/sqlalchemy/", "/psycopg/", "/storage/driver.py", "/storage/db.py")
    auth = within("/wharf/identity/") or any(
        "/api/middleware.py" in f and fn.startswith("AuthMiddleware.")
        for (_, fn), f in zip(frames, files))
    if sql and auth:
        return "auth: SQL"
    if auth:
        return "auth"
    if within("/dramatiq/", "/tasks/dispatch.py", "/threading.py"):
        return "dispatch (outbox -> broker, marker thread)"
    if sql:
        return "SQL: psycopg (driver)" if "/psycopg/" in files[0] \
            else "SQL: SQLAlchemy (session, Core, ORM)"
    if within("/msgspec/", "/api/body.py", "/api/schemas/"):
        return "validation (msgspec)"
    if within(f"{ROOT.as_posix()}/wharf/"):
        return "submission logic (wharf.*)"
    if within(f"{ROOT.as_posix()}/api/"):
        return "API code (api.*: middleware, responders, JSON)"
    if within("/falcon/"):
        return "Falcon (routing, req/resp, middleware dispatch)"
    return "other"


class PySpy:
    """``py-spy record --gil`` of this process while the block runs: only samples of the
    thread holding the GIL (a wait on PostgreSQL or on a condition releases it, so it is
    not sampled; without ``--gil`` py-spy counted such waits as busy), raw stacks."""

    def __init__(self, rate: int) -> None:
        exe = Path(sys.executable).with_name("py-spy")
        self.argv = [str(exe) if exe.exists() else "py-spy", "record", "--pid",
                     str(os.getpid()), "--rate", str(rate), "--format", "raw",
                     "--full-filenames", "--gil"]
        self.by_layer: collections.Counter[str] = collections.Counter()
        self.by_leaf: collections.Counter[str] = collections.Counter()

    def __enter__(self) -> PySpy:
        fd, name = tempfile.mkstemp(prefix="wharf-pyspy-", suffix=".txt")
        os.close(fd)
        self.out = Path(name)
        self.proc = subprocess.Popen([*self.argv, "-o", name], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        time.sleep(1.5)  # attached and sampling
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(60)
        for line in self.out.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack:
                continue
            frames = []
            for part in stack.split(";"):
                name, _, where = part.rpartition(" (")
                frames.append((where.rsplit(":", 1)[0], name))
            frames.reverse()  # leaf first
            layer = classify(frames)
            self.by_layer[layer] += int(count)
            self.by_leaf[f"{layer} | {_short(frames[0][0])}:{frames[0][1]}"] += int(count)
        self.out.unlink()


def _short(path: str) -> str:
    for mark in ("site-packages/", f"{ROOT.as_posix()}/"):
        if mark in path:
            return path.split(mark, 1)[1]
    return path.rsplit("/", 2)[-1] if "/" in path else path


# -- the app in process ------------------------------------------------------------------


def in_process(args: argparse.Namespace) -> int:
    from sqlalchemy import create_engine, event

    from migrations.prepare import prepare
    from tests.benchmarks.harness import migrated_postgres

    tmp = Path(tempfile.mkdtemp(prefix="wharf-layers-"))
    if args.sqlite:
        url = f"sqlite:///{tmp / 'wharf.db'}"
        engine = create_engine(url)
        prepare(engine, report=lambda *_: None)
        engine.dispose()
        return _run(args, url, tmp, None, event)
    with migrated_postgres("wharf_test_layers") as url:
        return _run(args, url, tmp, url.rsplit("/", 1)[1], event)


def _run(args: argparse.Namespace, url: str, tmp: Path, dbname: str | None,
         event: Any) -> int:
    from falcon import testing
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    from storage.unitschema import prepare_unitstore_db
    from wharf.infra.settings import Settings
    from wharfd.runtime import Components

    settings = Settings.from_env({
        "WHARF_DATA_DIR": str(tmp / "data"), "WHARF_DATABASE_URL": url,
        # the unit store beside the product database, as deployed (PostgreSQL: a database
        # of its own, whose backends count as PostgreSQL's too)
        "WHARF_UNITSTORE_URL": f"sqlite:///{tmp / 'units.db'}" if dbname is None
        else f"{url}_units",
        "WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
        "WHARF_ARGON2_PARALLELISM": "1", "WHARF_LOG_LEVEL": "WARNING",
        **({"WHARF_AUTH_CACHE_SECONDS": args.auth_cache_seconds}
           if args.auth_cache_seconds is not None else {}),
        **dict(kv.split("=", 1) for kv in args.env)})
    comps = Components(settings)
    if args.no_cte and hasattr(comps.operations, "_record_all"):
        comps.operations._record_all = None
    if args.prepare_threshold != "default":
        threshold = None if args.prepare_threshold == "none" else int(args.prepare_threshold)

        @event.listens_for(comps.db.engine, "connect")
        def _threshold(dbapi_conn: Any, _rec: Any) -> None:
            dbapi_conn.prepare_threshold = threshold
        comps.db.engine.dispose()
    assert comps.unit_db is not None
    prepare_unitstore_db(comps.unit_db, report=lambda *_: None)
    app = comps.api_app()
    client = testing.TestClient(app)
    r = client.simulate_post("/api/users", json={"username": "prof", "password": PASSWORD})
    assert r.status_code == 201, r.text
    space_id = r.json["personal_space_id"]
    r = client.simulate_post("/api/login-sessions",
                             json={"username": "prof", "password": PASSWORD})
    assert r.status_code == 201, r.text
    cookie = r.headers["set-cookie"].split(";", 1)[0]
    r = client.simulate_post("/api/api-tokens", json={"name": "p", "scopes": ["read", "write"]},
                             headers={"Cookie": cookie, "Origin": "http://falconframework.org"})
    assert r.status_code == 201, r.text
    token = r.json["token"]

    status: list[str] = []

    def start_response(s: str, _h: list[tuple[str, str]], _e: Any = None) -> Any:
        status.append(s)
        return lambda _b: None

    def post(i: int) -> None:
        body = (b'{"space_id":"%s","parent_id":null,"name":"n-%07d","unit_type":"doc"}'
                % (space_id.encode(), i))
        environ = testing.create_environ(
            method="POST", path="/api/resources", body=body,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                     "Idempotency-Key": uuid.uuid4().hex})
        environ["wsgi.input"] = io.BytesIO(body)
        out = app(environ, start_response)
        b"".join(out)
        if hasattr(out, "close"):
            out.close()
        s = status.pop()
        assert s.startswith("202"), s

    for i in range(args.warmup):
        post(i)
    comps.dispatcher.flush()

    observer = create_engine(url, poolclass=NullPool)

    def backends() -> list[int]:
        """Every backend of the pool. (Asked on a connection of its own: one taken from
        the pool would leave itself out, and a later call that took another would then
        count its whole life's CPU as new.)"""
        if dbname is None:
            return []
        with observer.connect() as conn:
            return [p for (p,) in conn.execute(text(
                "SELECT pid FROM pg_stat_activity WHERE datname IN (:d, :u) AND pid <> "
                "pg_backend_pid() AND backend_type = 'client backend'"),
                {"d": dbname, "u": f"{dbname}_units"})]

    # environ building alone (the harness share, taken out of the totals)
    c0 = _self_cpu()
    for _ in range(args.n):
        testing.create_environ(method="POST", path="/api/resources", body=b"{}",
                               headers={"Authorization": "Bearer x",
                                        "Idempotency-Key": uuid.uuid4().hex})
    harness = (_self_cpu() - c0) / args.n

    pids = backends()
    pg0 = {p: _cpu(p) for p in pids}
    c0, w0 = _self_cpu(), time.perf_counter()
    for i in range(args.n):
        post(args.warmup + i)
    comps.dispatcher.flush()
    c1, w1 = _self_cpu(), time.perf_counter()
    pg1 = {p: _cpu(p) for p in set(pids) | set(backends())}
    pg = sum(pg1[p] - pg0.get(p, 0.0) for p in pg1) / args.n
    total = (c1 - c0) / args.n

    if args.execute:  # (before the statement counter: a listener turns storage.driver off)
        execute(args, comps, post, backends, event)
    if args.layers:
        with PySpy(args.rate) as sampler:
            for i in range(args.n):
                post(10_000_000 + i)
        comps.dispatcher.flush()
    statements = _statements(comps, post, event)
    if args.profile:
        prof = cProfile.Profile(time.process_time)  # CPU, not wall: waits do not count
        prof.enable()
        for i in range(args.n):
            post(20_000_000 + i)
        prof.disable()
        comps.dispatcher.flush()
    comps.close()
    observer.dispose()

    backend = "SQLite" if dbname is None else "PostgreSQL"
    print(f"{backend}: {args.n} POSTs in {w1 - w0:.2f}s wall "
          f"(prepare_threshold {args.prepare_threshold})")
    print(f"  API process CPU per POST   : {1000 * total:.3f} ms "
          f"(of which the harness's environ: {1000 * harness:.3f} ms)")
    if dbname is not None:
        print(f"  PostgreSQL CPU per POST    : {1000 * pg:.3f} ms ({len(pg1)} backends)")
    print(f"  SQL statements per POST    : {statements:.2f} (incl. outbox marking)")
    if args.layers:
        _print_layers(args, sampler, total)
    if args.profile:
        pstats.Stats(prof).sort_stats(args.sort).print_stats(args.profile)
    return 0


def _print_layers(args: argparse.Namespace, sampler: PySpy, total: float) -> None:
    sampled = sum(sampler.by_layer.values()) or 1
    print(f"  layers (pass 2: {sampled} on-CPU samples of py-spy at {args.rate}/s; "
          f"shares applied to pass 1's total):")
    print(f"  {'layer':<50} {'CPU-ms/POST':>11} {'share':>6}")
    for layer in LAYERS[1:]:
        share = sampler.by_layer.get(layer, 0.0) / sampled
        print(f"  {layer:<50} {1000 * total * share:>11.3f} {100 * share:>5.1f}%")
    if args.top:
        print(f"  top {args.top} leaves (layer | file:function, CPU-ms per POST):")
        for leaf, used in sampler.by_leaf.most_common(args.top):
            print(f"    {1000 * total * used / sampled:7.3f}  {leaf}")


def _statements(comps: Any, post: Any, event: Any, m: int = 100) -> float:
    """SQL statements per POST, over ``m`` POSTs."""
    statements = 0

    def count(*_a: object) -> None:
        nonlocal statements
        statements += 1

    event.listen(comps.db.engine, "before_cursor_execute", count)
    for i in range(m):
        post(30_000_000 + i)
    comps.dispatcher.flush()
    event.remove(comps.db.engine, "before_cursor_execute", count)
    return statements / m


# -- the executor in process -------------------------------------------------------------


class _ServerWaits:
    """Counts the executor's round trips with libpq's own trace: each ``ReadyForQuery``
    the server sends ends one exchange the client waited for (a simple ``BEGIN`` or
    ``COMMIT``, a statement, or a pipeline's sync). A pool listener, not a statement
    listener: ``storage.driver`` stays on. Every engine given counts (the product
    database's and the unit store's)."""

    def __init__(self, event: Any, *engines: Any) -> None:
        self.event = event
        self.path = Path(tempfile.mkstemp(prefix="wharf-libpq-trace-")[1])
        self.file = self.path.open("w")
        self.engines = engines
        self.traced: list[Any] = []
        for engine in engines:
            event.listen(engine, "checkout", self._checkout)

    def _checkout(self, dbapi_conn: Any, record: Any, proxy: Any) -> None:
        if hasattr(dbapi_conn, "pgconn") and dbapi_conn not in self.traced:
            dbapi_conn.pgconn.trace(self.file.fileno())
            self.traced.append(dbapi_conn)

    def close(self) -> int:
        for engine in self.engines:
            self.event.remove(engine, "checkout", self._checkout)
        for conn in self.traced:
            conn.pgconn.untrace()
        self.file.close()
        with self.path.open() as f:
            n = sum(1 for line in f if "\tB\t" in line and "ReadyForQuery" in line)
        self.path.unlink()
        return n


def execute(args: argparse.Namespace, comps: Any, post: Any, backends: Any,
            event: Any) -> None:
    """The executor's CPU per create_resource: everything pending is executed first, then
    N new submissions are executed ``args.execute`` at a time (one claim, the unit store,
    one completion per batch; no broker: ``run_batch`` directly)."""
    while comps.executor.run_batch(limit=100, worker_id="prof"):
        pass
    for i in range(args.n):
        post(40_000_000 + i)
    comps.dispatcher.flush()
    pids = backends()
    pg0 = {p: _cpu(p) for p in pids}
    c0, w0 = _self_cpu(), time.perf_counter()
    done = 0
    prof = cProfile.Profile(time.process_time) if args.profile_execute else None
    waits = _ServerWaits(event, *{comps.db.engine, comps.unit_db.engine}) \
        if args.round_trips else None
    if prof is not None:
        prof.enable()
    while n := comps.executor.run_batch(limit=args.execute, worker_id="prof"):
        done += n
    if prof is not None:
        prof.disable()
    c1, w1 = _self_cpu(), time.perf_counter()
    if waits is not None:
        print(f"  round trips per batch (ReadyForQuery received): "
              f"{waits.close() / max(1, -(-done // args.execute)):.2f}")
    pg1 = {p: _cpu(p) for p in set(pids) | set(backends())}
    pg = sum(pg1[p] - pg0.get(p, 0.0) for p in pg1)
    print(f"executor: {done} operations, {args.execute} per claim, in {w1 - w0:.2f}s wall")
    print(f"  worker process CPU per operation : {1000 * (c1 - c0) / max(done, 1):.3f} ms")
    if pids:
        print(f"  PostgreSQL CPU per operation     : {1000 * pg / max(done, 1):.3f} ms")
    if prof is not None:
        pstats.Stats(prof).sort_stats(args.sort).print_stats(args.profile_execute)


# -- the HTTP server alone ---------------------------------------------------------------

_APP = '''
def application(environ, start_response):
    inp = environ["wsgi.input"]
    n = int(environ.get("CONTENT_LENGTH") or 0)
    if n:
        inp.read(n)
    body = b'{"id":"op_0123456789abcdef","status":"pending"}'
    start_response("202 Accepted", [("Content-Type", "application/json"),
                                    ("Content-Length", str(len(body)))])
    return [body]
'''


def _wait_port(port: int, proc: subprocess.Popen[bytes], seconds: float = 20) -> None:
    import socket
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not listen")


def _drive(port: int, requests: int, clients: int) -> float:
    import http.client
    per = requests // clients
    body = b'{"space_id":"s","parent_id":null,"name":"n","unit_type":"doc"}'

    def one() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        for _ in range(per):
            conn.request("POST", "/api/resources", body=body,
                         headers={"Content-Type": "application/json",
                                  "Authorization": "Bearer x",
                                  "Idempotency-Key": uuid.uuid4().hex})
            r = conn.getresponse()
            r.read()
            assert r.status == 202, r.status
        conn.close()

    threads = [threading.Thread(target=one) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def servers(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="wharf-srv-"))
    (tmp / "answer_app.py").write_text(_APP)
    env = {**os.environ, "PYTHONPATH": f"{tmp}:{ROOT}:{os.environ.get('PYTHONPATH', '')}",
           "WHARF_ACCESS_LOG": "false", "WHARF_LOG_LEVEL": "warning"}
    py = sys.executable
    kinds: dict[str, list[str]] = {
        "gunicorn gthread (2 workers x 32 threads, wharf api's conf)": [
            py, "-m", "gunicorn", "-c", str(ROOT / "wharfd" / "gunicorn_conf.py"),
            "--bind", "127.0.0.1:{port}", "answer_app:application"],
        "waitress (1 process, 16 threads, as wharf serve)": [
            py, "-c", "import answer_app, waitress; waitress.serve(answer_app.application, "
                      "host='127.0.0.1', port={port}, threads=16, asyncore_use_poll=True, "
                      "_quiet=True)"],
    }
    try:
        import granian  # noqa: F401
        kinds["granian WSGI (2 workers, 32 blocking threads)"] = [
            py, "-m", "granian", "--interface", "wsgi", "--workers", "2",
            "--blocking-threads", "32", "--host", "127.0.0.1", "--port", "{port}",
            "--no-ws", "--log-level", "warning", "answer_app:application"]
    except ImportError:
        print("granian not importable: left out")
    print(f"{args.requests} POSTs of an app that only answers 202, {args.clients} keep-alive "
          f"clients, no access log; server tree CPU per request:")
    for _round in range(args.rounds):
        for name, argv in kinds.items():
            port = free_port()
            proc = subprocess.Popen([a.replace("{port}", str(port)) for a in argv], env=env,
                                    cwd=tmp, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            try:
                _wait_port(port, proc)
                _drive(port, 400, args.clients)  # warm-up
                time.sleep(0.5)
                c0 = _tree_cpu(proc.pid)
                wall = _drive(port, args.requests, args.clients)
                c1 = _tree_cpu(proc.pid)
                print(f"  {name:<60} {1000 * (c1 - c0) / args.requests:6.3f} CPU-ms/request "
                      f"({args.requests / wall:,.0f} req/s)")
            finally:
                stop(proc, 10)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="POSTs per pass")
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    ap.add_argument("--top", type=int, default=15, help="print the top N leaf functions")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra WHARF_* settings")
    ap.add_argument("--prepare-threshold", default="default",
                    help="psycopg's prepare_threshold for the API's pool: an int, 'none' "
                         "(never prepare) or 'default' (psycopg's: 5)")
    ap.add_argument("--sqlite", action="store_true", help="a SQLite file, not PostgreSQL")
    ap.add_argument("--no-layers", dest="layers", action="store_false",
                    help="skip pass 2 (py-spy's layers)")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="print the top N of a cProfile of N more POSTs")
    ap.add_argument("--sort", default="cumulative", choices=("cumulative", "tottime"),
                    help="the cProfiles' order")
    ap.add_argument("--auth-cache-seconds", default=None,
                    help="WHARF_AUTH_CACHE_SECONDS (default: the setting's default)")
    ap.add_argument("--no-cte", action="store_true",
                    help="PostgreSQL: three INSERTs instead of the one CTE statement")
    ap.add_argument("--execute", type=int, default=0, metavar="BATCH",
                    help="then execute N more submissions in process, claiming BATCH at a "
                         "time (Executor.run_batch), and print its CPU per operation")
    ap.add_argument("--round-trips", action="store_true",
                    help="with --execute (PostgreSQL): count the executor's round trips")
    ap.add_argument("--profile-execute", type=int, default=0, metavar="N",
                    help="with --execute: print the top N of a cProfile of the executor")
    ap.add_argument("--server", action="store_true",
                    help="measure the HTTP servers alone instead")
    ap.add_argument("--requests", type=int, default=20000, help="--server: POSTs per server")
    ap.add_argument("--clients", type=int, default=8, help="--server: client threads")
    ap.add_argument("--rounds", type=int, default=1, help="--server: rounds (alternated)")
    args = ap.parse_args()
    return servers(args) if args.server else in_process(args)


if __name__ == "__main__":
    raise SystemExit(main())
