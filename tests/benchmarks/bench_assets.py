#!/usr/bin/env python
"""Benchmark of unit asset uploads (``POST /api/units/{unit_id}/assets``) against raw writes
to the same store, S3 (moto) and the filesystem.

A script, not a test (pytest collects ``test_*.py`` only). One run starts a moto server
subprocess, a private ``redis-server`` and two throw-away PostgreSQL databases (product and
unit store, dropped at the end). Then, for each store (``--stores``: ``s3`` = the moto
server over HTTP, ``file`` = ``FileBlobStore`` in the temp dir), it starts the production
process shape: ``wharf api`` (gunicorn, 1 gthread worker, like ``bench_blobs.py``),
``wharf worker --processes 1`` and ``wharf scheduler``, with ``WHARF_MAX_ASSET_SIZE`` at
the largest upload and ``WHARF_VERIFY_REHASH`` on (the default: the worker re-reads the
stored object and checks its SHA-256 before publishing). It creates one user and one doc
unit, and measures:

(a) one large asset (``--size-mib``, 100 by default), ``--repeats`` interleaved rounds (5):
    - Wharf: ``POST /api/units/{unit_id}/assets`` (``http.client``, 1 MiB sends, streamed
      from a file in the page cache), timed from the request's start to the 202 (the bytes
      are stored) and to ``publish_asset`` completed (a long-poll ``GET
      /api/operations/{id}?wait=30`` sent right after the 202 returns ``done``: the worker
      has re-checked access, verified and published the asset);
    - raw: boto3 ``upload_fileobj`` of the same bytes to the same server (default
      ``TransferConfig``; the same client config as Wharf's ``S3BlobStore``), or for the
      file store a plain write + fsync + rename + directory fsync in this process;
    - CPU seconds of the API worker, the ``wharf worker`` tree, moto and this process.
(b) API memory: the gunicorn worker's (the child's) VmRSS sampled every 50 ms during every
    large Wharf upload, and VmHWM reset before each (``/proc/<pid>/clear_refs``); its growth
    over the RSS before the first large upload, and over its RSS right after start.
(c) small assets: ``--small-count`` assets of ``--small-kib`` each (200 x 64 KiB), from
    ``--small-concurrency`` client threads (keep-alive connections), against raw boto3
    ``put_object`` of the same bytes from as many threads (file store: plain writes with
    fsync). Assets/s to the last 202, and to the last ``publish_asset`` completed.

    .venv/bin/python tests/benchmarks/bench_assets.py            # defaults: 40 to 70 s
    .venv/bin/python tests/benchmarks/bench_assets.py --stores s3 --repeats 5
"""
from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_blobs import (  # noqa: E402
    BUCKET,
    PREFIX,
    GeneratorReader,
    empty_bucket,
    machine_info,
    make_data,
    s3_client,
    stream_file,
)
from tests.benchmarks.bench_operations import plain_pg, with_dbname  # noqa: E402
from tests.benchmarks.harness import (  # noqa: E402
    CpuMeter,
    RssSampler,
    WharfProcesses,
    children,
    free_port,
    status_kib,
)
from tests.benchmarks.harness import log as _log  # noqa: E402
from tests.support.s3 import MotoServer  # noqa: E402

MiB = 1024 * 1024
KiB = 1024
PASSWORD = "benchmark password 1234"
OCTETS = "application/octet-stream"


def log(msg: str) -> None:
    _log(msg, file=sys.stderr)


def mbs(size: int, seconds: float) -> float:
    """Decimal MB/s (the unit of the issue's "85 MB/s")."""
    return size / 1e6 / seconds


# -- the environment: PostgreSQL databases, Redis, moto ----------------------------------
class Environment:
    def __init__(self, args, tmp: Path):
        self.args, self.tmp = args, tmp
        self.tag = f"wharf_bench_assets_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        self.created: list[str] = []
        self.redis_proc: subprocess.Popen[bytes] | None = None
        self.redis_url = ""
        self.moto: MotoServer | None = None

    def start(self) -> None:
        import psycopg
        with psycopg.connect(plain_pg(self.args.postgres_url), autocommit=True) as conn:
            for name in (self.tag, self.tag + "_units"):
                conn.execute(f'CREATE DATABASE "{name}"')
                self.created.append(name)
        port = free_port()
        with open(self.tmp / "redis-server.log", "wb") as logf:
            self.redis_proc = subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(self.tmp)],
                stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        self.redis_url = f"redis://127.0.0.1:{port}/0"
        import redis
        client = redis.Redis.from_url(self.redis_url)
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.redis_proc.poll() is not None:
                    raise RuntimeError("the private redis-server did not start") from None
                time.sleep(0.05)
        client.close()
        if "s3" in self.args.stores:
            self.moto = MotoServer().start()

    def stop(self) -> None:
        if self.moto is not None:
            self.moto.stop()
        if self.redis_proc is not None and self.redis_proc.poll() is None:
            self.redis_proc.terminate()
            try:
                self.redis_proc.wait(10)
            except subprocess.TimeoutExpired:
                self.redis_proc.kill()
                self.redis_proc.wait(5)
        if self.created:
            import psycopg
            with psycopg.connect(plain_pg(self.args.postgres_url), autocommit=True) as conn:
                for name in self.created:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            self.created = []

    def settings(self, store: str) -> dict[str, str]:
        env = {
            "WHARF_DATA_DIR": str(self.tmp / "data"),
            "WHARF_DATABASE_URL": with_dbname(self.args.postgres_url, self.tag),
            "WHARF_UNITSTORE_URL": with_dbname(self.args.postgres_url, self.tag + "_units"),
            "WHARF_BROKER_URL": self.redis_url,
            "WHARF_MAX_ASSET_SIZE": str(max(self.args.size_mib * MiB, 100 * MiB)),
            "WHARF_VERIFY_REHASH": "true",
            "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1", "NO_PROXY": "127.0.0.1,localhost",
            "WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
            "WHARF_ARGON2_PARALLELISM": "1", "WHARF_LOG_LEVEL": "WARNING",
        }
        if store == "s3":
            assert self.moto is not None
            env["WHARF_BLOB_STORE_URL"] = f"s3://{BUCKET}/{PREFIX}"
            env["WHARF_S3_ENDPOINT_URL"] = self.moto.endpoint
        else:
            env["WHARF_BLOB_STORE_URL"] = f"file://{self.tmp / 'file-store'}"
        for item in self.args.api_env:
            key, _, value = item.partition("=")
            env[key] = value
        return env


# -- the wharf processes and an HTTP client ------------------------------------------------
class Http:
    """One keep-alive connection (one per client thread)."""

    def __init__(self, port: int, cookie: str, timeout: float = 600):
        self.port, self.cookie, self.timeout = port, cookie, timeout
        self.conn: http.client.HTTPConnection | None = None

    def _conn(self) -> http.client.HTTPConnection:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                   timeout=self.timeout)
        return self.conn

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict]:
        hdrs = {"Cookie": self.cookie, **(headers or {})}
        for attempt in (1, 2):
            conn = self._conn()
            try:
                conn.request(method, path, body=body, headers=hdrs)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()  # the server closed a kept-alive connection: once more
                if attempt == 2:
                    raise
        if resp.getheader("Connection", "").lower() == "close":
            self.close()
        return resp.status, (json.loads(raw) if raw.strip().startswith(b"{") else {})

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Wharf:
    """``wharf api`` (1 gunicorn worker), ``wharf worker --processes 1``, ``wharf
    scheduler`` against the environment's databases, Redis and one blob store."""

    def __init__(self, env: Environment, store: str, threads: int):
        self.env, self.store = env, store
        self.port = free_port()
        logdir = env.tmp / f"logs-{store}"
        logdir.mkdir(exist_ok=True)
        self.processes = WharfProcesses(logdir, env.settings(store))
        self.threads = threads
        self.cookie = ""
        self.local = threading.local()

    def start(self, first: bool) -> Wharf:
        if first:
            self.processes.migrate()
        self.worker = self.processes.start("worker", "worker", "--processes", "1",
                                           "--threads", str(self.threads))
        self.api = self.processes.start("api", "api", "--host", "127.0.0.1", "--port",
                                        str(self.port), "--workers", "1")
        self.processes.start("scheduler", "scheduler")
        self.processes.wait_http(self.port, "/readyz")
        kids = children(self.api.pid)
        if len(kids) != 1:
            raise RuntimeError(f"expected one gunicorn worker, found {kids}")
        self.api_pid = kids[0]
        self.rss_after_start_kib = status_kib(self.api_pid, "VmRSS")
        deadline = time.monotonic() + 30
        while not children(self.worker.pid):
            if time.monotonic() > deadline:
                raise RuntimeError("wharf worker started no child process")
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        self.processes.stop_all(timeout=20)

    def http(self) -> Http:
        h = getattr(self.local, "http", None)
        if h is None:
            h = self.local.http = Http(self.port, self.cookie)
        return h

    def json(self, method: str, path: str, body: dict | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            hdrs = {"Cookie": self.cookie, **(headers or {})}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                hdrs["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            raw = resp.read()
            if not self.cookie:
                cookies = [v.split(";", 1)[0] for k, v in resp.getheaders()
                           if k.lower() == "set-cookie"]
                if cookies and path == "/api/login-sessions":
                    self.cookie = "; ".join(cookies)
            return resp.status, (json.loads(raw) if raw.strip().startswith(b"{") else {})
        finally:
            conn.close()

    def setup_unit(self, username: str) -> str:
        """A user (registered and logged in) and one doc unit in their personal space."""
        status, user = self.json("POST", "/api/users",
                                 {"username": username, "password": PASSWORD})
        assert status == 201, (status, user)
        status, _ = self.json("POST", "/api/login-sessions",
                              {"username": username, "password": PASSWORD})
        assert status == 201 and self.cookie, status
        self.space_id = str(user["personal_space_id"])
        status, op = self.json("POST", "/api/resources",
                               {"space_id": user["personal_space_id"], "name": "bench",
                                "unit_type": "doc"},
                               {"Idempotency-Key": uuid.uuid4().hex})
        assert status == 202, (status, op)
        done = self.wait_done(op["id"])
        assert done["status"] == "completed", done
        return str(done["result"]["unit_id"])

    def wait_done(self, op_id: str) -> dict:
        while True:
            status, op = self.http().request("GET", f"/api/operations/{op_id}?wait=30")
            if status != 200:
                raise RuntimeError(f"long-poll {op_id}: {status} {op}")
            if op.get("done"):
                return op

    def post_stream(self, unit_id: str, size: int, chunks) -> tuple[float, dict]:
        """POST a large asset, streamed; (seconds to the 202, operation)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        try:
            t0 = time.perf_counter()
            conn.putrequest("POST", f"/api/units/{unit_id}/assets?filename=bench.bin")
            conn.putheader("Content-Type", OCTETS)
            conn.putheader("Content-Length", str(size))
            conn.putheader("Cookie", self.cookie)
            conn.putheader("Idempotency-Key", uuid.uuid4().hex)
            conn.endheaders()
            for chunk in chunks:
                conn.send(chunk)
            resp = conn.getresponse()
            raw = resp.read()
            elapsed = time.perf_counter() - t0
        finally:
            conn.close()
        assert resp.status == 202, (resp.status, raw[:500])
        return elapsed, json.loads(raw)

    def post_resource(self, i: int) -> dict:
        """An ordinary operation for reference: ``create_resource`` (no body to store)."""
        status, op = self.http().request(
            "POST", "/api/resources",
            json.dumps({"space_id": self.space_id, "name": f"ref-{i:05d}",
                        "unit_type": "doc"}).encode(),
            {"Content-Type": "application/json", "Idempotency-Key": uuid.uuid4().hex})
        assert status == 202, (status, op)
        return op

    def post_small(self, unit_id: str, i: int, body: bytes) -> dict:
        status, op = self.http().request(
            "POST", f"/api/units/{unit_id}/assets?filename=small-{i:05d}.bin", body,
            {"Content-Type": OCTETS, "Idempotency-Key": uuid.uuid4().hex})
        assert status == 202, (status, op)
        return op


# -- raw baselines ---------------------------------------------------------------------------
def raw_file_put(root: Path, chunks) -> int:
    """What a plain durable file write costs: temp file, write, fsync, rename, fsync of the
    directory (the same steps as ``FileBlobStore.put_stream``)."""
    tmp = root / f".{uuid.uuid4().hex}.part"
    target = root / uuid.uuid4().hex
    n = 0
    with open(tmp, "wb") as fh:
        for chunk in chunks:
            fh.write(chunk)
            n += len(chunk)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, target)
    fd = os.open(root, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return n


# -- measurements ----------------------------------------------------------------------------
def meter(w: Wharf, env: Environment) -> CpuMeter:
    roots = {"api": w.api_pid, "worker": w.worker.pid}
    if env.moto is not None and w.store == "s3":
        roots["moto"] = env.moto.proc.pid
    return CpuMeter(roots, this_process="client")


def worker_child(w: Wharf) -> int:
    """The ``wharf worker`` child that runs the actors: the supervisor's largest child (the
    other one is multiprocessing's resource tracker)."""
    return max(children(w.worker.pid), key=lambda pid: status_kib(pid, "VmRSS"))


def attempt_seconds(w: Wharf, op_id: str) -> float:
    """Server-side duration of the operation's last attempt (claimed -> finished: the
    worker's re-check, verification and commit)."""
    status, body = w.http().request("GET", f"/api/operations/{op_id}/attempts")
    assert status == 200, (status, body)
    last = body["items"][-1]

    def ts(v: str) -> datetime:
        return datetime.fromisoformat(v.replace("Z", "+00:00"))

    return (ts(last["finished_at"]) - ts(last["started_at"])).total_seconds()


def reset_hwm(pid: int) -> bool:
    before = status_kib(pid, "VmHWM")
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return status_kib(pid, "VmHWM") <= before


def bench_large(args, w: Wharf, env: Environment, unit_id: str, data: Path, sha: str,
                client) -> dict:
    from boto3.s3.transfer import TransferConfig
    size = args.size_mib * MiB
    raw_root = env.tmp / "raw-files"
    raw_root.mkdir(exist_ok=True)
    rows: dict[str, list[dict]] = {"wharf": [], "raw": []}
    rss_base = status_kib(w.api_pid, "VmRSS")

    def run_wharf() -> dict:
        before = status_kib(w.api_pid, "VmRSS")
        hwm_reset = reset_hwm(w.api_pid)
        wsampler = RssSampler(worker_child(w))
        with meter(w, env) as m, RssSampler(w.api_pid) as sampler, wsampler:
            t0 = time.perf_counter()
            to_202, op = w.post_stream(unit_id, size, stream_file(data, size))
            done = w.wait_done(op["id"])
            total = time.perf_counter() - t0
        assert done["status"] == "completed", done
        assert done["result"]["sha256"] == sha and done["result"]["size"] == size, done
        hwm = status_kib(w.api_pid, "VmHWM")
        peak = max(sampler.peak_kib, hwm if hwm_reset else 0)
        return {"wall": to_202, "published": total, "attempt": attempt_seconds(w, op["id"]), "cpu": m.cpu, "other": m.other_cores,
                "rss_before": before, "rss_peak": peak, "hwm_reset": hwm_reset,
                "samples": sampler.samples, "worker_rss_peak": wsampler.peak_kib}

    def run_raw() -> dict:
        with meter(w, env) as m:
            if w.store == "s3":
                key = f"raw/{uuid.uuid4().hex}"
                client.upload_fileobj(GeneratorReader(stream_file(data, size)), BUCKET, key,
                                      Config=TransferConfig())
            else:
                assert raw_file_put(raw_root, stream_file(data, size)) == size
        if w.store == "s3":
            assert client.head_object(Bucket=BUCKET, Key=key)["ContentLength"] == size
            client.delete_object(Bucket=BUCKET, Key=key)
        else:
            shutil.rmtree(raw_root)
            raw_root.mkdir()
        return {"wall": m.wall, "cpu": m.cpu, "other": m.other_cores}

    runners = {"wharf": run_wharf, "raw": run_raw}
    order = ["wharf", "raw"]
    for i in range(args.repeats):
        for name in (order if i % 2 == 0 else order[::-1]):
            r = runners[name]()
            rows[name].append(r)
            extra = ""
            if name == "wharf":
                extra = (f", published after {r['published']:.2f}s (attempt "
                         f"{r['attempt']:.2f}s); API RSS "
                         f"{r['rss_before'] / 1024:.0f} -> peak {r['rss_peak'] / 1024:.0f} MiB")
            log(f"  [{w.store}] round {i + 1} {name:5}: {mbs(size, r['wall']):6.1f} MB/s "
                f"({r['wall']:.2f}s){extra}; cpu " + ", ".join(
                    f"{k} {v:.2f}s" for k, v in r["cpu"].items())
                + f"; other processes {r['other']:.2f} cores")
    return {"size": size, "rows": rows, "rss_base": rss_base,
            "rss_after_start": w.rss_after_start_kib}


def bench_small(args, w: Wharf, env: Environment, unit_id: str, data: Path, client) -> dict:
    n, size, conc = args.small_count, args.small_kib * KiB, args.small_concurrency
    bodies = []
    with open(data, "rb") as fh:
        for i in range(n):
            fh.seek((i * size) % max(1, data.stat().st_size - size))
            bodies.append(fh.read(size))
    raw_root = env.tmp / "raw-small"
    raw_root.mkdir(exist_ok=True)

    def raw_one(i: int) -> None:
        if w.store == "s3":
            client.put_object(Bucket=BUCKET, Key=f"raw-small/{i:05d}", Body=bodies[i])
        else:
            raw_file_put(raw_root, [bodies[i]])

    with ThreadPoolExecutor(conc) as pool, meter(w, env) as mraw:
        list(pool.map(raw_one, range(n)))
    raw_wall = mraw.wall
    with ThreadPoolExecutor(conc) as pool, meter(w, env) as m:
        t0 = time.perf_counter()
        ops = list(pool.map(lambda i: w.post_small(unit_id, i, bodies[i]), range(n)))
        to_202 = time.perf_counter() - t0
        done = list(pool.map(lambda op: w.wait_done(op["id"]), ops))
        published = time.perf_counter() - t0
    bad = [d for d in done if d["status"] != "completed"]
    assert not bad, bad[:3]
    for d, body in zip(done, bodies):
        assert d["result"]["sha256"] == hashlib.sha256(body).hexdigest()
    # Reference: as many create_resource operations, same threads (no bytes to store).
    with ThreadPoolExecutor(conc) as pool, meter(w, env) as mref:
        t0 = time.perf_counter()
        ops = list(pool.map(w.post_resource, range(n)))
        ref_202 = time.perf_counter() - t0
        done = list(pool.map(lambda op: w.wait_done(op["id"]), ops))
        ref_done = time.perf_counter() - t0
    assert all(d["status"] == "completed" for d in done)
    if w.store == "s3":
        empty_prefix(client, "raw-small/")
    shutil.rmtree(raw_root, ignore_errors=True)
    log(f"  [{w.store}] small: raw {n / raw_wall:.1f}/s; wharf {n / to_202:.1f}/s to 202, "
        f"{n / published:.1f}/s published; create_resource {n / ref_202:.1f}/s to 202, "
        f"{n / ref_done:.1f}/s completed")
    return {"n": n, "size": size, "conc": conc, "raw": raw_wall, "to_202": to_202,
            "published": published, "cpu": m.cpu, "raw_cpu": mraw.cpu,
            "ref_202": ref_202, "ref_done": ref_done, "ref_cpu": mref.cpu,
            "other": max(m.other_cores, mraw.other_cores, mref.other_cores)}


def empty_prefix(client, prefix: str) -> None:
    paginator = client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=BUCKET, Prefix=prefix):
        keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if keys:
            client.delete_objects(Bucket=BUCKET, Delete={"Objects": keys})


# -- report ------------------------------------------------------------------------------------
def report(args, results: dict[str, dict], machine: dict) -> str:
    lines = [f"Machine: {machine['nproc']} cores, {machine['mem_gib']:.1f} GiB RAM, Python "
             f"{machine['python']}, {machine['kernel']}; moto {machine['moto']} (one "
             f"process), gunicorn {machine['gunicorn']} (1 gthread worker x 8 threads), "
             f"wharf worker 1 process x {args.worker_threads} threads, scheduler, "
             "PostgreSQL, private Redis. MB = 10^6 bytes.", ""]
    size = args.size_mib * MiB
    lines.append(f"(a) one {args.size_mib} MiB asset, median of {args.repeats} interleaved "
                 "rounds (CPU-s of the median Wharf round)")
    lines.append("")
    lines.append("| store | raw MB/s | Wharf to 202 MB/s | Wharf to published MB/s | "
                 "ratio Wharf/raw (202) | ratio (published) | 202 -> published (of it: the "
                 "worker's attempt) | "
                 "CPU-s API / worker / moto / client | ratio (202) per round | "
                 "max other processes (cores) |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |")
    for store, res in results.items():
        rows = res["large"]["rows"]
        raw = statistics.median(mbs(size, r["wall"]) for r in rows["raw"])
        w202 = statistics.median(mbs(size, r["wall"]) for r in rows["wharf"])
        wpub = statistics.median(mbs(size, r["published"]) for r in rows["wharf"])
        lag = statistics.median(r["published"] - r["wall"] for r in rows["wharf"])
        att = statistics.median(r["attempt"] for r in rows["wharf"])
        mid = sorted(rows["wharf"], key=lambda r: r["wall"])[len(rows["wharf"]) // 2]
        cpu = mid["cpu"]
        other = max(r["other"] for rs in rows.values() for r in rs)
        lines.append(
            f"| {store} | {raw:.1f} | {w202:.1f} | {wpub:.1f} | **{w202 / raw:.2f}** | "
            f"{wpub / raw:.2f} | {lag * 1000:.0f} ms ({att * 1000:.0f} ms) | {cpu['api']:.2f} / "
            f"{cpu['worker']:.2f} / {cpu.get('moto', 0.0):.2f} / {cpu['client']:.2f} | "
            + ", ".join(f"{r['wall'] / w['wall']:.2f}"
                        for w, r in zip(rows["wharf"], rows["raw"]))
            + f" | {other:.2f} |")
        res["figures"] = {"raw": raw, "w202": w202, "wpub": wpub, "lag": lag}
    lines.append("")
    lines.append(f"(b) API worker (gunicorn child) memory during the {args.size_mib} MiB "
                 "uploads (VmRSS every 50 ms; VmHWM reset before each upload)")
    lines.append("")
    lines.append("| store | RSS after start | RSS before 1st large upload | peak per round | "
                 "max growth over before-1st | max growth over after-start | "
                 "wharf worker child peak RSS |")
    lines.append("| --- | ---: | ---: | --- | ---: | ---: | ---: |")
    for store, res in results.items():
        lg = res["large"]
        wr = lg["rows"]["wharf"]
        peak = max(r["rss_peak"] for r in wr)
        lines.append(
            f"| {store} | {lg['rss_after_start'] / 1024:.1f} MiB | "
            f"{lg['rss_base'] / 1024:.1f} MiB | "
            + ", ".join(f"{r['rss_peak'] / 1024:.1f}" for r in wr) + " MiB | "
            f"**{(peak - lg['rss_base']) / 1024:.1f} MiB** | "
            f"{(peak - lg['rss_after_start']) / 1024:.1f} MiB | "
            f"{max(r['worker_rss_peak'] for r in wr) / 1024:.1f} MiB |")
        res["figures"]["rss_growth"] = (peak - lg["rss_base"]) / 1024
        res["figures"]["rss_growth_start"] = (peak - lg["rss_after_start"]) / 1024
    lines.append("")
    first = next(iter(results.values()))["small"]
    lines.append(f"(c) {first['n']} small assets of {first['size'] // KiB} KiB, "
                 f"{first['conc']} client threads")
    lines.append("")
    lines.append("| store | raw assets/s | Wharf to 202 assets/s | Wharf published assets/s | "
                 "ratio (202) | ratio (published) | CPU-ms per asset API / worker | "
                 "max other processes (cores) |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
    for store, res in results.items():
        sm = res["small"]
        raw, w202, wpub = sm["n"] / sm["raw"], sm["n"] / sm["to_202"], \
            sm["n"] / sm["published"]
        lines.append(f"| {store} | {raw:.1f} | {w202:.1f} | {wpub:.1f} | **{w202 / raw:.2f}** "
                     f"| {wpub / raw:.2f} | {sm['cpu']['api'] * 1000 / sm['n']:.1f} / "
                     f"{sm['cpu']['worker'] * 1000 / sm['n']:.1f} | {sm['other']:.2f} |")
    for store, res in results.items():
        sm = res["small"]
        lines.append(f"| {store}: reference, `POST /api/resources` (create_resource, no "
                     f"bytes) | - | {sm['n'] / sm['ref_202']:.1f} | "
                     f"{sm['n'] / sm['ref_done']:.1f} (completed) | - | - | "
                     f"{sm['ref_cpu']['api'] * 1000 / sm['n']:.1f} / "
                     f"{sm['ref_cpu']['worker'] * 1000 / sm['n']:.1f} | |")
    lines.append("")
    summary = []
    for store, res in results.items():
        f = res["figures"]
        sm = res["small"]
        summary.append(f"{store}: large ratio {f['w202'] / f['raw']:.2f} (202) / "
                       f"{f['wpub'] / f['raw']:.2f} (published), API RSS growth "
                       f"{f['rss_growth']:.1f} MiB for a {args.size_mib} MiB asset, small "
                       f"{sm['n'] / sm['published']:.1f} vs raw {sm['n'] / sm['raw']:.1f}/s")
    lines.append("SUMMARY: " + "; ".join(summary))
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size-mib", type=int, default=100, help="large asset (default 100)")
    p.add_argument("--repeats", type=int, default=5,
                   help="interleaved rounds (default 5: moto alone varies by +-25%%)")
    p.add_argument("--small-count", type=int, default=200)
    p.add_argument("--small-kib", type=int, default=64)
    p.add_argument("--small-concurrency", type=int, default=4)
    p.add_argument("--stores", default="s3,file", help="comma-separated: s3, file")
    p.add_argument("--worker-threads", type=int, default=4)
    p.add_argument("--postgres-url", default=os.environ.get(
        "WHARF_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"),
        help="a PostgreSQL server (any database; two throw-away ones are created beside it)")
    p.add_argument("--api-env", action="append", default=[], metavar="NAME=VALUE",
                   help="extra environment for the wharf processes (repeatable)")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (logs)")
    args = p.parse_args(argv)
    args.stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    assert set(args.stores) <= {"s3", "file"}, args.stores

    os.environ.update({"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                       "AWS_DEFAULT_REGION": "us-east-1"})
    for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY",
              "all_proxy"):
        os.environ.pop(k, None)
    tmp = Path(tempfile.mkdtemp(prefix="wharf-bench-assets-"))
    env = Environment(args, tmp)
    wharf: Wharf | None = None
    results: dict[str, dict] = {}
    try:
        data = tmp / "data.bin"
        log(f"generating {args.size_mib} MiB of random bytes in {data}")
        sha = make_data(data, args.size_mib * MiB)
        env.start()
        client = None
        if env.moto is not None:
            client = s3_client(env.moto.endpoint)
            client.create_bucket(Bucket=BUCKET)
            log(f"moto on {env.moto.endpoint} (pid {env.moto.proc.pid})")
        for n, store in enumerate(args.stores):
            wharf = Wharf(env, store, args.worker_threads).start(first=n == 0)
            unit_id = wharf.setup_unit(f"bench{n}")
            log(f"[{store}] wharf api worker {wharf.api_pid} (RSS after start "
                f"{wharf.rss_after_start_kib / 1024:.1f} MiB), worker {wharf.worker.pid}; "
                f"unit {unit_id}")
            # Warm-up, not measured: imports, libmagic, connection pools, one publish.
            op = wharf.post_small(unit_id, 0, os.urandom(64 * KiB))
            assert wharf.wait_done(op["id"])["status"] == "completed"
            if client is not None:
                client.put_object(Bucket=BUCKET, Key="warm", Body=b"x" * KiB)
            log(f"[{store}] (a)+(b) {args.size_mib} MiB, {args.repeats} interleaved rounds")
            large = bench_large(args, wharf, env, unit_id, data, sha, client)
            log(f"[{store}] (c) {args.small_count} x {args.small_kib} KiB")
            small = bench_small(args, wharf, env, unit_id, data, client)
            results[store] = {"large": large, "small": small}
            wharf.stop()
            wharf = None
            if client is not None and store == "s3":
                empty_bucket(client)
        print(report(args, results, machine_info()), flush=True)
        return 0
    finally:
        if wharf is not None:
            wharf.stop()
        env.stop()
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
