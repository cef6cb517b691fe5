#!/usr/bin/env python
"""Benchmark of uploaded files ("blobs") against one S3-compatible server (moto).

A script, not a test (pytest collects ``test_*.py`` only). One run starts a moto server
subprocess and a real ``wharf api`` (gunicorn, 1 worker, gthread) subprocess on a
throw-away SQLite data dir with the S3 blob store pointed at that moto server, then
measures:

(a) upload throughput: ``--size-mib`` bytes through ``PUT /api/blob-upload-sessions/{id}/
    content`` vs raw boto3 ``upload_fileobj`` of the same bytes to the same server, each
    ``--repeats`` times, interleaved (the order alternates every round); median MiB/s and
    the ratio Wharf/raw. Both stream from the same file on disk (page cache), never holding
    the body in memory. A third row, ``S3BlobStore.put_stream`` called in this process (no
    HTTP, no gunicorn), separates the cost of the HTTP ingress from the store.
(b) peak RSS of the gunicorn worker process (the child, not the master) during one
    ``--rss-size-mib`` upload: VmRSS sampled every 50 ms, and VmHWM (reset just before the
    upload via /proc/<pid>/clear_refs when the kernel allows it).
(c) re-hash throughput of the verifier (``wharf.blobs.verify_object(..., rehash=True)``:
    HEAD + streamed read + SHA-256) against the S3 store (moto) and the filesystem store,
    next to the raw layers beneath: boto3 ``get_object`` streamed + hashlib (S3), plain
    file reads + hashlib (filesystem), and hashlib over the same bytes already in memory
    (mmap'd page cache, 1 MiB slices).
(d) CPU seconds per GiB during the uploads of (a): the gunicorn worker (utime+stime from
    /proc/<pid>/stat), the moto server and this client process, for each path.

The API runs with the embedded broker (``WHARF_BROKER_URL`` unset): the content PUT needs
no worker; the database (SQLite) is not what is measured.

    .venv/bin/python tests/benchmarks/bench_blobs.py            # defaults: about 1 minute
    .venv/bin/python tests/benchmarks/bench_blobs.py --size-mib 64 --rss-size-mib 256 --repeats 1
"""
from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import mmap
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

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
GiB = 1024 * MiB
CHUNK = MiB
BUCKET = "wharf-bench"
PREFIX = "wharf"
PASSWORD = "benchmark password 1234"

TARGET_UPLOAD_RATIO = 0.8
TARGET_RSS_MIB = 150
TARGET_VERIFY_RATIO = 0.8


def log(msg: str) -> None:
    _log(msg, file=sys.stderr)


# -- the bytes ----------------------------------------------------------------------------
def make_data(path: Path, size: int) -> str:
    """``size`` random bytes in ``path``; returns their SHA-256."""
    sha = hashlib.sha256()
    with open(path, "wb") as fh:
        left = size
        while left:
            block = os.urandom(min(16 * MiB, left))
            sha.update(block)
            fh.write(block)
            left -= len(block)
    return sha.hexdigest()


def stream_file(path: Path, size: int, chunk: int = CHUNK):
    """``size`` bytes read from ``path`` chunk by chunk, cycling through the file if
    ``size`` is larger than it (the 1 GiB RSS upload reuses the 256 MiB file)."""
    left = size
    with open(path, "rb") as fh:
        while left:
            data = fh.read(min(chunk, left))
            if not data:
                fh.seek(0)
                continue
            left -= len(data)
            yield data


class GeneratorReader:
    """A non-seekable, read-only file-like object over a chunk generator (what boto3's
    ``upload_fileobj`` gets in the raw case: a stream, like Wharf's request body)."""

    def __init__(self, chunks):
        self.chunks = iter(chunks)
        self.buf = b""

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            return self.buf + b"".join(self.chunks)
        parts, have = [self.buf], len(self.buf)
        while have < size:
            nxt = next(self.chunks, None)
            if nxt is None:
                break
            parts.append(nxt)
            have += len(nxt)
        data = b"".join(parts) if len(parts) > 1 else parts[0]
        self.buf = data[size:]
        return data[:size]

    def readable(self) -> bool:
        return True


# -- processes ------------------------------------------------------------------------------
class WharfApi:
    """``wharf migrate`` then ``wharf api --workers 1`` on a throw-away SQLite data dir."""

    def __init__(self, tmp: Path, s3_endpoint: str, max_upload: int, threads: int | None,
                 extra_env: dict[str, str] | None = None):
        self.tmp = tmp
        self.port = free_port()
        self.processes = WharfProcesses(tmp, {
            "WHARF_DATA_DIR": str(tmp / "data"),
            "WHARF_BLOB_STORE_URL": f"s3://{BUCKET}/{PREFIX}",
            "WHARF_S3_ENDPOINT_URL": s3_endpoint,
            "WHARF_MAX_UPLOAD_SIZE": str(max_upload),
            "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1", "NO_PROXY": "127.0.0.1,localhost",
            "WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
            "WHARF_ARGON2_PARALLELISM": "1", "WHARF_LOG_LEVEL": "WARNING",
            **(extra_env or {}),
        })
        self.threads = threads
        self.proc: subprocess.Popen | None = None
        self.log_path = self.processes.log_path("api")
        self.base = f"http://127.0.0.1:{self.port}"
        self.cookie = ""

    def start(self) -> WharfApi:
        self.processes.migrate()
        args = ["api", "--port", str(self.port), "--workers", "1"]
        if self.threads:
            args += ["--threads", str(self.threads)]
        self.proc = self.processes.start("api", *args)
        self.processes.wait_http(self.port, "/healthz")
        kids = children(self.proc.pid)
        if len(kids) != 1:
            raise RuntimeError(f"expected one gunicorn worker, found {kids}")
        self.worker_pid = kids[0]
        return self

    def stop(self) -> None:
        self.processes.stop_all(timeout=15)

    def request(self, method: str, path: str, body: dict | None = None,
                headers: dict | None = None) -> tuple[int, dict, http.client.HTTPResponse]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            hdrs = {"Cookie": self.cookie, **(headers or {})}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                hdrs["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            raw = resp.read()
            return resp.status, (json.loads(raw) if raw.strip().startswith(b"{") else {}), resp
        finally:
            conn.close()

    def login(self) -> str:
        status, user, _ = self.request("POST", "/api/users",
                                       {"username": "bench", "password": PASSWORD})
        assert status == 201, (status, user)
        status, _, resp = self.request("POST", "/api/login-sessions",
                                       {"username": "bench", "password": PASSWORD})
        assert status == 201, status
        self.cookie = "; ".join(v.split(";", 1)[0] for k, v in resp.getheaders()
                                if k.lower() == "set-cookie")
        return user["personal_space_id"]

    def upload(self, space_id: str, size: int, chunks) -> dict:
        """Create a session (not timed), then PUT the content; returns timing + response."""
        status, sess, _ = self.request("POST", "/api/blob-upload-sessions",
                                       {"space_id": space_id, "filename": "bench.bin",
                                        "size": size},
                                       {"Idempotency-Key": uuid.uuid4().hex})
        assert status == 201, (status, sess)
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        try:
            t0 = time.perf_counter()
            conn.putrequest("PUT", f"/api/blob-upload-sessions/{sess['id']}/content")
            conn.putheader("Content-Type", "application/octet-stream")
            conn.putheader("Content-Length", str(size))
            conn.putheader("Cookie", self.cookie)
            conn.endheaders()
            for chunk in chunks:
                conn.send(chunk)
            resp = conn.getresponse()
            raw = resp.read()
            elapsed = time.perf_counter() - t0
        finally:
            conn.close()
        assert resp.status == 200, (resp.status, raw[:500])
        return {"seconds": elapsed, "response": json.loads(raw)}


# -- S3 helpers ---------------------------------------------------------------------------
def s3_client(endpoint: str, pool: int = 10):
    """A boto3 client with the same client config as Wharf's S3BlobStore."""
    from storage.blobstore import S3BlobStore
    store = S3BlobStore(BUCKET, endpoint_url=endpoint)
    if pool <= 10:
        return store.client
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                        config=store.client.meta.config.merge(
                            Config(max_pool_connections=pool)))


def empty_bucket(client) -> None:
    paginator = client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=BUCKET):
        keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
        if keys:
            client.delete_objects(Bucket=BUCKET, Delete={"Objects": keys})


# -- measurements -------------------------------------------------------------------------
def bench_uploads(args, api: WharfApi, space_id: str, client, data: Path, sha: str,
                  moto_pid: int) -> dict:
    from boto3.s3.transfer import TransferConfig

    from storage.blobstore import S3BlobStore
    size = args.size_mib * MiB
    transfer = TransferConfig(max_concurrency=args.raw_concurrency)
    store = S3BlobStore(BUCKET, "inproc", client=client)
    pids = {"api": api.worker_pid, "moto": moto_pid}
    results: dict[str, list[dict]] = {"wharf": [], "raw": [], "store": []}

    def run_wharf():
        with CpuMeter(pids, this_process="client") as m:
            out = api.upload(space_id, size, stream_file(data, size))
        assert out["response"]["sha256"] == sha, out
        return m

    def run_raw():
        key = f"raw/{uuid.uuid4().hex}"
        with CpuMeter(pids, this_process="client") as m:
            client.upload_fileobj(GeneratorReader(stream_file(data, size)), BUCKET, key,
                                  Config=transfer)
        assert client.head_object(Bucket=BUCKET, Key=key)["ContentLength"] == size
        return m

    def run_store():
        with CpuMeter(pids, this_process="client") as m:
            info = store.put_stream(f"objects/{uuid.uuid4().hex}", stream_file(data, size))
        assert info.size == size
        return m

    runners = {"wharf": run_wharf, "raw": run_raw, "store": run_store}
    order = ["wharf", "raw", "store"]
    for i in range(args.repeats):
        rnd = order if i % 2 == 0 else order[::-1]
        for name in rnd:
            m = runners[name]()
            results[name].append({"wall": m.wall, "cpu": m.cpu, "other": m.other_cores,
                                  "steal": m.steal_cores})
            log(f"  round {i + 1} {name:5}: {size / MiB / m.wall:6.1f} MiB/s  "
                f"cpu api {m.cpu['api']:.2f}s moto {m.cpu['moto']:.2f}s "
                f"client {m.cpu['client']:.2f}s; other processes {m.other_cores:.2f} cores, "
                f"steal {m.steal_cores:.2f} cores; "
                f"API RSS {status_kib(api.worker_pid, 'VmRSS') / 1024:.0f} MiB")
            empty_bucket(client)  # moto keeps objects in memory / temp files
    return results


def bench_rss(args, api: WharfApi, space_id: str, client, data: Path) -> dict:
    size = args.rss_size_mib * MiB
    pid = api.worker_pid
    before = status_kib(pid, "VmRSS")
    hwm_before = status_kib(pid, "VmHWM")
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as fh:
            fh.write("5")  # reset the peak RSS (VmHWM) to the current RSS
        hwm_reset = status_kib(pid, "VmHWM") <= hwm_before
    except OSError:
        hwm_reset = False
    with CpuMeter({"api": pid}, this_process="client") as m, RssSampler(pid) as sampler:
        api.upload(space_id, size, stream_file(data, size))
    out = {"size": size, "wall": m.wall, "rss_before_kib": before,
           "sampled_peak_kib": sampler.peak_kib, "samples": sampler.samples,
           "hwm_kib": status_kib(pid, "VmHWM"), "hwm_reset": hwm_reset,
           "hwm_before_kib": hwm_before, "api_cpu": m.cpu["api"]}
    empty_bucket(client)
    return out


def bench_verify(args, client, data: Path, sha: str, tmp: Path) -> dict:
    from storage.blobstore import FileBlobStore, S3BlobStore
    from wharf.blobs import verify_object
    size = data.stat().st_size
    s3store = S3BlobStore(BUCKET, "verify", client=client)
    fstore = FileBlobStore(tmp / "file-store")
    key = "objects/verify"
    s3info = s3store.put_stream(key, stream_file(data, size))
    finfo = fstore.put_stream(key, stream_file(data, size))
    fpath = fstore.root / key

    def t_verify(store, info):
        t0 = time.perf_counter()
        verify_object(store, key, size, info.etag, sha, rehash=True)
        return time.perf_counter() - t0

    def t_raw_s3():
        t0 = time.perf_counter()
        body = client.get_object(Bucket=BUCKET, Key=f"verify/{key}")["Body"]
        digest = hashlib.sha256()
        while True:
            chunk = body.read(CHUNK)
            if not chunk:
                break
            digest.update(chunk)
        body.close()
        assert digest.hexdigest() == sha
        return time.perf_counter() - t0

    def t_raw_file():
        t0 = time.perf_counter()
        digest = hashlib.sha256()
        with open(fpath, "rb") as fh:
            while chunk := fh.read(CHUNK):
                digest.update(chunk)
        assert digest.hexdigest() == sha
        return time.perf_counter() - t0

    def t_memory():
        with open(data, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            view = memoryview(mm)
            for off in range(0, size, CHUNK):  # fault the pages in before timing
                view[off]
            t0 = time.perf_counter()
            digest = hashlib.sha256()
            for off in range(0, size, CHUNK):
                digest.update(view[off:off + CHUNK])
            elapsed = time.perf_counter() - t0
            view.release()
        assert digest.hexdigest() == sha
        return elapsed

    runs = {"verify_s3": lambda: t_verify(s3store, s3info), "raw_s3": t_raw_s3,
            "verify_file": lambda: t_verify(fstore, finfo), "raw_file": t_raw_file,
            "memory": t_memory}
    times: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for i in range(args.repeats):
        for name in (names if i % 2 == 0 else names[::-1]):
            times[name].append(runs[name]())
        log("  verify round " + str(i + 1) + ": " + ", ".join(
            f"{n} {size / MiB / times[n][-1]:.0f} MiB/s" for n in names))
    s3store.delete(key)
    return {"size": size, "times": times}


# -- report -------------------------------------------------------------------------------
def mibs(size: int, seconds: float) -> float:
    return size / MiB / seconds


def report(args, up: dict, rss: dict, ver: dict, machine: dict) -> tuple[str, dict]:
    size = args.size_mib * MiB
    gib = size / GiB
    med = {k: statistics.median(mibs(size, r["wall"]) for r in v) for k, v in up.items()}

    def cpu_per_gib(rows, who):
        return statistics.median(r["cpu"][who] for r in rows) / gib

    def runs(rows):
        return ", ".join(f"{mibs(size, r['wall']):.1f}" for r in rows)

    ratio = med["wharf"] / med["raw"]
    lines = []
    lines.append(f"Machine: {machine['nproc']} cores, {machine['mem_gib']:.1f} GiB RAM, "
                 f"Python {machine['python']}, {machine['kernel']}; S3 = moto "
                 f"{machine['moto']} server (one process); wharf api = gunicorn "
                 f"{machine['gunicorn']} gthread, 1 worker x {args.threads or 8} threads, "
                 "embedded broker, SQLite data dir (not measured).")
    lines.append("")
    lines.append(f"(a)+(d) upload of {args.size_mib} MiB, median of {args.repeats} "
                 "interleaved runs; CPU = utime+stime per GiB uploaded (median run)")
    lines.append("")
    lines.append("| path | median MiB/s | runs MiB/s | API worker CPU-s/GiB | "
                 "moto CPU-s/GiB | client CPU-s/GiB | max other processes / steal (cores) |")
    lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    labels = {"wharf": "Wharf `PUT .../content` (HTTP -> gunicorn -> S3BlobStore)",
              "raw": f"raw boto3 `upload_fileobj` (8 MiB parts, {args.raw_concurrency} threads)",
              "store": "S3BlobStore.put_stream in-process (no HTTP; 8 MiB parts, 4 in flight)"}
    for k in ("wharf", "raw", "store"):
        api_cpu = f"{cpu_per_gib(up[k], 'api'):.2f}" if k == "wharf" else "-"
        lines.append(f"| {labels[k]} | {med[k]:.1f} | {runs(up[k])} | {api_cpu} | "
                     f"{cpu_per_gib(up[k], 'moto'):.2f} | {cpu_per_gib(up[k], 'client'):.2f} | "
                     f"{max(r['other'] for r in up[k]):.2f} / "
                     f"{max(r['steal'] for r in up[k]):.2f} |")
    paired = [w["wall"] and r["wall"] / w["wall"] for w, r in zip(up["wharf"], up["raw"])]
    lines.append(f"| **ratio Wharf / raw** (of the medians) | **{ratio:.2f}** (target >= "
                 f"{TARGET_UPLOAD_RATIO}: {'met' if ratio >= TARGET_UPLOAD_RATIO else 'MISSED'})"
                 f" | per round: {', '.join(f'{x:.2f}' for x in paired)} | | | | |")
    lines.append("")
    peak_kib = rss["hwm_kib"] if rss["hwm_reset"] else rss["sampled_peak_kib"]
    peak = max(peak_kib, rss["sampled_peak_kib"]) / 1024
    lines.append(f"(b) API worker memory during one {rss['size'] // MiB} MiB upload "
                 f"({mibs(rss['size'], rss['wall']):.1f} MiB/s, API CPU "
                 f"{rss['api_cpu'] / (rss['size'] / GiB):.2f} s/GiB)")
    lines.append("")
    lines.append("| RSS before | peak VmRSS (sampled every 50 ms) | VmHWM "
                 f"({'reset before the upload' if rss['hwm_reset'] else 'since start'}) "
                 "| VmHWM since start, before this upload (includes (a)) | target |")
    lines.append("| ---: | ---: | ---: | ---: | --- |")
    lines.append(f"| {rss['rss_before_kib'] / 1024:.1f} MiB | "
                 f"{rss['sampled_peak_kib'] / 1024:.1f} MiB ({rss['samples']} samples) | "
                 f"{rss['hwm_kib'] / 1024:.1f} MiB | {rss['hwm_before_kib'] / 1024:.1f} MiB | "
                 f"< {TARGET_RSS_MIB} MiB: "
                 f"{'met' if peak < TARGET_RSS_MIB else 'MISSED'} |")
    lines.append("")
    vsize = ver["size"]
    vmed = {k: statistics.median(mibs(vsize, t) for t in v) for k, v in ver["times"].items()}
    lines.append(f"(c) re-hash of a {vsize // MiB} MiB object, median of {args.repeats} "
                 "interleaved runs (1 MiB reads; page cache warm for the file store)")
    lines.append("")
    lines.append("| what | median MiB/s | vs raw layer beneath | vs hashlib in memory |")
    lines.append("| --- | ---: | ---: | ---: |")
    rows = [("verify_s3", "Wharf `verify_object(rehash=True)`, S3BlobStore (moto)", "raw_s3"),
            ("raw_s3", "raw boto3 `get_object` streamed + hashlib (moto)", None),
            ("verify_file", "Wharf `verify_object(rehash=True)`, FileBlobStore", "raw_file"),
            ("raw_file", "raw file `read(1 MiB)` + hashlib", None),
            ("memory", "raw `hashlib.sha256` over the bytes in memory (1 MiB slices)", None)]
    for k, label, beneath in rows:
        vs_raw = (f"{vmed[k] / vmed[beneath]:.2f}" if beneath else "-")
        vs_mem = f"{vmed[k] / vmed['memory']:.2f}" if k != "memory" else "1.00"
        lines.append(f"| {label} | {vmed[k]:.0f} | {vs_raw} | {vs_mem} |")
    lines.append("")
    figures = {"upload_ratio": ratio, "rss_peak_mib": peak,
               "verify_s3_vs_raw": vmed["verify_s3"] / vmed["raw_s3"],
               "verify_s3_vs_memory": vmed["verify_s3"] / vmed["memory"],
               "verify_file_vs_memory": vmed["verify_file"] / vmed["memory"],
               "verify_file_vs_raw": vmed["verify_file"] / vmed["raw_file"]}
    lines.append("Targets: upload ratio >= 0.8: "
                 f"{'met' if ratio >= TARGET_UPLOAD_RATIO else 'MISSED'} ({ratio:.2f}); "
                 f"peak RSS < 150 MiB: {'met' if peak < TARGET_RSS_MIB else 'MISSED'} "
                 f"({peak:.1f} MiB); re-hash >= 0.8 of hashlib in memory: file store "
                 f"{'met' if figures['verify_file_vs_memory'] >= TARGET_VERIFY_RATIO else 'MISSED'}"
                 f" ({figures['verify_file_vs_memory']:.2f}), S3 store "
                 f"{'met' if figures['verify_s3_vs_memory'] >= TARGET_VERIFY_RATIO else 'MISSED'}"
                 f" ({figures['verify_s3_vs_memory']:.2f}; vs boto3 get_object + hashlib "
                 f"{figures['verify_s3_vs_raw']:.2f}).")
    return "\n".join(lines), figures


def machine_info() -> dict:
    import gunicorn
    import moto
    mem = 0
    for line in open("/proc/meminfo"):
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) * 1024
    return {"nproc": os.cpu_count(), "mem_gib": mem / GiB, "python": platform.python_version(),
            "kernel": f"Linux {platform.release()}", "moto": moto.__version__,
            "gunicorn": gunicorn.__version__}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size-mib", type=int, default=256, help="(a)/(c)/(d) size (default 256)")
    p.add_argument("--rss-size-mib", type=int, default=1024, help="(b) size (default 1024)")
    p.add_argument("--repeats", type=int, default=5,
                   help="interleaved runs of each (default 5: moto alone varies by +-25%%)")
    p.add_argument("--raw-concurrency", type=int, default=10,
                   help="boto3 TransferConfig.max_concurrency for the raw upload "
                        "(default 10, boto3's default)")
    p.add_argument("--threads", type=int, default=None,
                   help="gunicorn threads of the API worker (default: wharf api's 8)")
    p.add_argument("--api-env", action="append", default=[], metavar="NAME=VALUE",
                   help="extra environment for the wharf api process (repeatable), e.g. "
                        "MALLOC_ARENA_MAX=2")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (logs)")
    args = p.parse_args(argv)

    os.environ.update({"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                       "AWS_DEFAULT_REGION": "us-east-1"})
    for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY",
              "all_proxy"):
        os.environ.pop(k, None)
    tmp = Path(tempfile.mkdtemp(prefix="wharf-bench-blobs-"))
    moto = api = None
    try:
        data = tmp / "data.bin"
        log(f"generating {args.size_mib} MiB of random bytes in {data}")
        sha = make_data(data, args.size_mib * MiB)
        moto = MotoServer().start()
        client = s3_client(moto.endpoint, pool=max(10, args.raw_concurrency))
        client.create_bucket(Bucket=BUCKET)
        log(f"moto on {moto.endpoint} (pid {moto.proc.pid})")
        api = WharfApi(tmp, moto.endpoint, max(args.size_mib, args.rss_size_mib) * MiB,
                       args.threads, dict(e.split("=", 1) for e in args.api_env)).start()
        space_id = api.login()
        log(f"wharf api on {api.base}: master {api.proc.pid}, worker {api.worker_pid}, "
            f"RSS after start {status_kib(api.worker_pid, 'VmRSS') / 1024:.1f} MiB")
        # Warm-up (imports, libmagic, connection pools), not measured.
        warm = 16 * MiB
        api.upload(space_id, warm, stream_file(data, warm))
        from boto3.s3.transfer import TransferConfig
        client.upload_fileobj(GeneratorReader(stream_file(data, warm)), BUCKET, "warm",
                              Config=TransferConfig(max_concurrency=args.raw_concurrency))
        empty_bucket(client)
        log(f"(a)+(d) uploads, {args.repeats} interleaved rounds")
        up = bench_uploads(args, api, space_id, client, data, sha, moto.proc.pid)
        log(f"(b) RSS during a {args.rss_size_mib} MiB upload")
        rss = bench_rss(args, api, space_id, client, data)
        log("(c) re-hash")
        ver = bench_verify(args, client, data, sha, tmp)
        text, _ = report(args, up, rss, ver, machine_info())
        print(text, flush=True)
        return 0
    finally:
        if api is not None:
            api.stop()
        if moto is not None:
            moto.stop()
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
