#!/usr/bin/env python
"""Benchmark of unit storage (issue 36): what a one-cell edit, a read, a worktree fork, a
merge and a build-up cost as a ``sheet`` unit grows, through the HTTP API.

A script, not a test (pytest collects ``test_*.py`` only). One run starts a real
``wharf serve`` subprocess (the embedded mode: waitress, in-process broker and worker
threads, one process) on a throw-away data dir: its SQLite defaults, or with ``--postgres``
two throw-away PostgreSQL databases (``wharf_bench_units`` for the unit store,
``wharf_bench_units_app`` for the product database) created beside ``--postgres-url`` and
dropped at the end. Run::

    .venv/bin/python tests/benchmarks/bench_units.py --quick              # about 1-2 min
    nice -n 10 .venv/bin/python tests/benchmarks/bench_units.py --json out.json
    nice -n 10 .venv/bin/python tests/benchmarks/bench_units.py --postgres
    .venv/bin/python tests/benchmarks/bench_units.py --sizes 1k,1m --no-merge --no-build

The document is Univer-workbook-like: ``body.sheets.s1.cellData[row][col] = {"v": <84
random characters>, "t": 1}``, about 110 bytes of compact JSON per cell, 100 cells a row
(random text: neither TOAST compression nor anything else shrinks it).
Units are created by ``POST /api/resources`` (operation ``create_resource``: an empty
``body``) and filled by ``add`` changesets of whole rows (about 4 MB each; setup, not
timed). The server runs with ``WHARF_UNIT_MAX_SNAPSHOT_BYTES`` and ``WHARF_MAX_BODY_BYTES``
raised to fit the largest document (both have no ceiling but ``ge=1024``) and generous
worktree limits and draft quota. Rows (each optional):

1. **latency** (``--sizes``, default 1k,10k,100k; 1m on request: slow on the whole-document
   store): per size a fresh unit; ``--repeats`` rounds (after 5 warm-up rounds) of a
   one-cell ``replace`` changeset (``POST /api/units/{id}/changesets``, timed until the
   whole answer is read: today it carries the whole snapshot) followed by
   ``GET /api/units/{id}``; medians, and each size's ratio to the first size's median.
   Each edit replaces a random cell by a value 1-3 characters longer (the document's
   length changes, as with most real edits).
2. **bytes written per one-cell changeset** (``--write-changesets`` of them, on the same
   units, after row 1), twice: "resized" edits as in row 1, then "same size" edits (the
   new value as long as the old: SQLite overwrites a record whose size is unchanged in
   place and writes only the pages whose bytes differ, so these show what that saves;
   PostgreSQL rewrites the value either way). SQLite — the growth of ``units.db-wal`` (and the product
   ``wharf.db-wal``) per changeset, with the WAL first truncated (``PRAGMA
   wal_checkpoint(TRUNCATE)``) and a read transaction of this script held open meanwhile
   so no checkpoint can restart the WAL: every page the changeset commits is appended as
   one frame (page size + 24 bytes). A checkpoint later copies those pages into the
   database file once more (not counted). PostgreSQL — ``pg_wal_lsn_diff`` of
   ``pg_current_wal_lsn()`` around each changeset: the server's WAL is shared by every
   database on it, so other activity on the machine adds noise (the median and the
   minimum of the per-changeset figures are reported; the minimum is the one least
   disturbed).
3. **worktree fork bytes** (``--fork-repeats`` per size): ``POST /api/worktrees`` (a user
   worktree), then ``POST /api/worktrees/{id}/units`` with ``source: trunk`` (operation
   ``add_worktree_unit``, timed from submission to done); the unit store's growth per
   fork: SQLite — used pages, ``(page_count - freelist_count) * page_size`` read through a
   new connection (the WAL included); PostgreSQL — the sum of ``pg_total_relation_size``
   over the unit store's tables (indexes and TOAST included).
4. **merge** (``--merge-cells``, default 200 000): a trunk unit added to a user worktree;
   ``--merge-edits`` (100) one-cell edits on trunk and as many on the draft, on distinct
   cells, sent ``--merge-batch`` (10) edits per changeset; the worktree marked ready, then
   ``POST /api/worktrees/{id}/merge`` timed from submission until the operation is done
   (polled with ``GET /api/operations/{id}?wait=``); the peak RSS of the server process
   (in embedded mode the worker runs in it): VmRSS sampled every 20 ms, and VmHWM after
   a reset through ``/proc/<pid>/clear_refs`` where the kernel allows it.
5. **build** (``--build-cells`` by ``--build-changesets``, default 100 000 by 1 000): each
   changeset adds one new row of cells, one ``add`` operation per cell; total time and the
   time of the last 10 % of the changesets against the first 10 % (1.0 is linear).

Figures print as markdown tables; ``--json PATH`` also writes them as JSON. The machine's
other load skews wall times: run it alone (``nice`` keeps it polite on a shared machine).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_operations import plain_pg, with_dbname  # noqa: E402
from tests.benchmarks.harness import (  # noqa: E402
    RssSampler,
    WharfProcesses,
    free_port,
    log,
    status_kib,
)

MB = 1_000_000
MiB = 1024 * 1024
PASSWORD = "benchmark password 1234"
COLS = 100
CELL_TEXT = 84  # characters of each cell's value: ~110 bytes of compact JSON per cell
UNIT_TABLES = ("units", "unit_revisions", "worktree_drafts", "worktree_draft_revisions",
               "unit_merge_records")
DB_UNITS, DB_APP = "wharf_bench_units", "wharf_bench_units_app"


def parse_size(text: str) -> int:
    text = text.strip().lower()
    scale = {"k": 1000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def label(cells: int) -> str:
    return f"{cells // 1_000_000} M" if cells >= 1_000_000 and cells % 1_000_000 == 0 \
        else f"{cells // 1000} k" if cells % 1000 == 0 else str(cells)


#: Random letters the cells' values are cut from (at offsets that depend on the cell and
#: the edit): text that PostgreSQL's TOAST compression (pglz) and SQLite cannot shrink, so
#: a document's stored size is its JSON size (real sheets compress somewhat better).
POOL = "".join(random.Random(36).choices(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ", k=1 << 20))


def cell(r: int, c: int, tag: str, length: int = CELL_TEXT) -> dict[str, Any]:
    """A cell of ``length`` characters of text: ``tag`` then a slice of the pool."""
    head = f"{tag} "
    off = (r * 1_000_003 + c * 7919 + zlib.crc32(tag.encode())) % (len(POOL) - length)
    return {"v": (head + POOL[off:off + length])[:length], "t": 1}


def skeleton(rows: int, cols: int) -> dict[str, Any]:
    return {"id": "wb1", "name": "Benchmark", "appVersion": "0.5.0", "locale": "enUS",
            "styles": {}, "sheetOrder": ["s1"],
            "sheets": {"s1": {"id": "s1", "name": "Sheet1", "rowCount": rows + 1000,
                              "columnCount": cols + 20, "cellData": {}, "mergeData": [],
                              "rowData": {}, "columnData": {}}},
            "resources": []}


def cell_path(r: int, c: int) -> str:
    return f"/body/sheets/s1/cellData/{r}/{c}"


# -- the server and its HTTP client ------------------------------------------------------
class Wharf:
    """``wharf serve`` on a throw-away data dir (SQLite) or two throw-away PostgreSQL
    databases, with one keep-alive client connection and a logged-in user."""

    def __init__(self, args: argparse.Namespace, tmp: Path):
        self.args, self.tmp = args, tmp
        self.port = free_port()
        self.data = tmp / "data"
        self.created: list[str] = []
        self.conn: http.client.HTTPConnection | None = None
        self.cookie = ""
        biggest = max([*args.sizes, args.merge_cells, args.build_cells])
        limit = max(16 * MiB, int(biggest * 130 * 1.3))
        self.settings = {
            "WHARF_DATA_DIR": str(self.data),
            "WHARF_UNIT_MAX_SNAPSHOT_BYTES": str(limit),
            "WHARF_MAX_BODY_BYTES": str(64 * MiB),
            "WHARF_WORKTREE_DRAFT_QUOTA_BYTES": str(1 << 40),
            "WHARF_WORKTREE_MAX_OPEN_PER_USER": "1000",
            "WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
            "WHARF_ARGON2_PARALLELISM": "1", "WHARF_LOG_LEVEL": "WARNING",
            "WHARF_ACCESS_LOG": "false",
        }
        if args.postgres:
            self.settings["WHARF_DATABASE_URL"] = with_dbname(args.postgres_url, DB_APP)
            self.settings["WHARF_UNITSTORE_URL"] = with_dbname(args.postgres_url, DB_UNITS)
        for item in args.server_env:
            key, _, value = item.partition("=")
            self.settings[key] = value
        self.processes = WharfProcesses(tmp, self.settings)

    # lifecycle
    def start(self) -> Wharf:
        if self.args.postgres:
            import psycopg
            with psycopg.connect(plain_pg(self.args.postgres_url), autocommit=True) as conn:
                for name in (DB_UNITS, DB_APP):
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                    conn.execute(f'CREATE DATABASE "{name}"')
                    self.created.append(name)
        self.proc = self.processes.start("serve", "serve", "--host", "127.0.0.1", "--port",
                                         str(self.port), "--quiet")
        self.processes.wait_http(self.port, "/readyz", timeout=120)
        self.pid = self.proc.pid
        self.login()
        return self

    def stop(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.processes.stop_all(timeout=30)
        if self.created:
            import psycopg
            with psycopg.connect(plain_pg(self.args.postgres_url), autocommit=True) as conn:
                for name in self.created:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            self.created = []

    # HTTP
    def raw(self, method: str, path: str, body: Any = None,
            headers: dict[str, str] | None = None) -> tuple[int, bytes, float]:
        """(status, answer bytes, seconds from sending until the answer is read)."""
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        hdrs = {"Cookie": self.cookie, **(headers or {})}
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=900)
            try:
                t0 = time.perf_counter()
                self.conn.request(method, path, body=data, headers=hdrs)
                resp = self.conn.getresponse()
                raw = resp.read()
                elapsed = time.perf_counter() - t0
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        if resp.getheader("Connection", "").lower() == "close" and self.conn is not None:
            self.conn.close()
            self.conn = None
        self.last_headers = resp.getheaders()
        return resp.status, raw, elapsed

    def json(self, method: str, path: str, body: Any = None,
             headers: dict[str, str] | None = None, expect: tuple[int, ...] = (200,)) -> Any:
        status, raw, _ = self.raw(method, path, body, headers)
        if status not in expect:
            raise RuntimeError(f"{method} {path}: {status} {raw[:800]!r}")
        return json.loads(raw) if raw else None

    def login(self) -> None:
        user = self.json("POST", "/api/users", {"username": "bench", "password": PASSWORD},
                         expect=(201,))
        self.space_id = user["personal_space_id"]
        self.json("POST", "/api/login-sessions", {"username": "bench", "password": PASSWORD},
                  expect=(201,))
        self.cookie = "; ".join(v.split(";", 1)[0] for k, v in self.last_headers
                                if k.lower() == "set-cookie")

    def operation(self, path: str, body: Any) -> tuple[dict[str, Any], float]:
        """Submit an operation and wait for it: (its result, seconds from submission until
        it was seen done)."""
        t0 = time.perf_counter()
        op = self.json("POST", path, body, {"Idempotency-Key": uuid.uuid4().hex},
                       expect=(200, 202))
        while op["status"] not in ("completed", "failed", "cancelled", "dead"):
            op = self.json("GET", f"/api/operations/{op['id']}?wait=30")
        elapsed = time.perf_counter() - t0
        if op["status"] != "completed":
            raise RuntimeError(f"{path}: operation {op['status']}: {op}")
        return op["result"], elapsed

    # units
    def new_sheet(self, name: str, cells: int, tag: str = "base") -> Sheet:
        result, _ = self.operation("/api/resources", {
            "space_id": self.space_id, "parent_id": None, "name": name,
            "unit_type": "sheet"})
        sheet = Sheet(self, result["unit_id"], result["resource_id"])
        cols = min(COLS, cells)
        rows = cells // cols
        sheet.change([{"op": "add", "path": "/body", "value": skeleton(rows, cols)}])
        per = max(1, 40_000 // cols)  # rows per setup changeset: ~4 MB
        for start in range(0, rows, per):
            sheet.change([{"op": "add", "path": f"/body/sheets/s1/cellData/{r}",
                           "value": {str(c): cell(r, c, tag) for c in range(cols)}}
                          for r in range(start, min(rows, start + per))])
        sheet.rows, sheet.cols = rows, cols
        return sheet


class Sheet:
    def __init__(self, wharf: Wharf, unit_id: str, resource_id: str):
        self.wharf, self.unit_id, self.resource_id = wharf, unit_id, resource_id
        self.revision = 0
        self.rows = self.cols = 0
        self.path = f"/api/units/{unit_id}/changesets"

    def change(self, changes: list[dict[str, Any]], path: str | None = None) -> tuple[float, int]:
        """One changeset at the known revision: (seconds, answer bytes). The answer is not
        parsed (it carries the whole snapshot): the revision is the next one."""
        headers = {"Prefer": "return=minimal"} if self.wharf.args.answer == "minimal" else None
        status, raw, elapsed = self.wharf.raw(
            "POST", path or self.path, {"base_revision": self.revision, "changes": changes},
            headers)
        if status != 200:
            raise RuntimeError(f"changeset on {self.unit_id}: {status} {raw[:800]!r}")
        self.revision += 1
        return elapsed, len(raw)

    def edit_one(self, rng: random.Random, tag: str, resize: bool = True) -> tuple[float, int]:
        """Replace a random cell; ``resize``: by a value 1-3 characters longer than the
        original cells' (the document's length changes, as most real edits do), else by
        one of the same length (SQLite then overwrites a record of unchanged size in place
        and writes only the pages whose bytes differ)."""
        r, c = rng.randrange(self.rows), rng.randrange(self.cols)
        length = CELL_TEXT + 1 + rng.randrange(3) if resize else CELL_TEXT
        return self.change([{"op": "replace", "path": cell_path(r, c),
                             "value": cell(r, c, tag, length)}])

    def get(self) -> tuple[float, int]:
        status, raw, elapsed = self.wharf.raw("GET", f"/api/units/{self.unit_id}")
        if status != 200:
            raise RuntimeError(f"GET unit {self.unit_id}: {status} {raw[:500]!r}")
        return elapsed, len(raw)

    def get_if_none_match(self) -> tuple[float, int]:
        """``GET`` with ``If-None-Match`` naming the current revision (issue 36's ETag):
        (seconds, status). A server without revision ETags answers 200 and the document."""
        status, _, elapsed = self.wharf.raw("GET", f"/api/units/{self.unit_id}", None,
                                            {"If-None-Match": f'"rev-{self.revision}"'})
        return elapsed, status


# -- the databases, observed from outside ------------------------------------------------
class Storage:
    """Write and size meters of the unit store (and the product database's WAL)."""

    def __init__(self, wharf: Wharf):
        self.wharf = wharf
        self.pg = None
        if wharf.args.postgres:
            import psycopg
            self.pg = psycopg.connect(plain_pg(with_dbname(wharf.args.postgres_url,
                                                           DB_UNITS)), autocommit=True)

    def close(self) -> None:
        if self.pg is not None:
            self.pg.close()

    def db_file(self, name: str) -> Path:
        return self.wharf.data / name

    def settle(self) -> None:
        """After a large setup: flush it to disk now (PostgreSQL ``CHECKPOINT``, SQLite
        ``wal_checkpoint``), so the background writing of a hundred megabytes does not land
        in the measurements that follow."""
        if self.pg is not None:
            self.pg.execute("CHECKPOINT")
            return
        for name in ("units.db", "wharf.db"):
            conn = sqlite3.connect(self.db_file(name), isolation_level=None, timeout=30)
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                conn.close()

    # bytes written
    def begin_writes(self) -> Any:
        """Start counting; returns what ``written`` needs."""
        if self.pg is not None:
            return None
        readers = []
        for name in ("units.db", "wharf.db"):
            conn = sqlite3.connect(self.db_file(name), isolation_level=None, timeout=30)
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy:
                log(f"warning: the WAL of {name} could not be truncated (busy)")
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # holds the WAL
            readers.append(conn)
        return readers

    def mark(self) -> tuple[int, int]:
        """(unit store bytes, product database bytes) written so far, by the meter's
        origin (WAL sizes, or the server's WAL position on PostgreSQL)."""
        if self.pg is not None:
            row = self.pg.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')"
                                  ).fetchone()
            assert row is not None
            return int(row[0]), 0
        sizes = []
        for name in ("units.db", "wharf.db"):
            wal = self.db_file(name + "-wal")
            sizes.append(wal.stat().st_size if wal.exists() else 0)
        return sizes[0], sizes[1]

    def end_writes(self, readers: Any) -> None:
        for conn in readers or ():
            conn.execute("COMMIT")
            conn.close()

    # stored bytes
    def unit_store_bytes(self) -> int:
        if self.pg is not None:
            row = self.pg.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind = 'r' AND n.nspname = current_schema()").fetchone()
            assert row is not None
            return int(row[0])
        conn = sqlite3.connect(self.db_file("units.db"), isolation_level=None, timeout=30)
        try:
            page = conn.execute("PRAGMA page_size").fetchone()[0]
            count = conn.execute("PRAGMA page_count").fetchone()[0]
            free = conn.execute("PRAGMA freelist_count").fetchone()[0]
            return int((count - free) * page)
        finally:
            conn.close()


# -- the rows ----------------------------------------------------------------------------
def bench_sizes(args: argparse.Namespace, wharf: Wharf, store: Storage) -> list[dict[str, Any]]:
    out = []
    rng = random.Random(args.seed)
    for n in args.sizes:
        log(f"building a {n}-cell sheet")
        t0 = time.perf_counter()
        sheet = wharf.new_sheet(f"Sheet {n}", n)
        built = time.perf_counter() - t0
        store.settle()
        _, doc_bytes = sheet.get()
        row: dict[str, Any] = {"cells": sheet.rows * sheet.cols, "unit_id": sheet.unit_id,
                               "get_answer_bytes": doc_bytes, "setup_seconds": built}
        log(f"  {doc_bytes / MB:.2f} MB GET answer, built in {built:.1f} s")
        if args.latency:
            for _ in range(5):  # warm-up
                sheet.edit_one(rng, "warm")
                sheet.get()
            cs, gets, conditional, cs_bytes, statuses = [], [], [], 0, set()
            for i in range(args.repeats):
                seconds, cs_bytes = sheet.edit_one(rng, f"edit {i}")
                cs.append(seconds)
                gets.append(sheet.get()[0])
                seconds, status = sheet.get_if_none_match()
                conditional.append(seconds)
                statuses.add(status)
            row.update(changeset_median=statistics.median(cs), changeset_min=min(cs),
                       get_median=statistics.median(gets), get_min=min(gets),
                       changeset_answer_bytes=cs_bytes,
                       conditional_get_median=statistics.median(conditional),
                       conditional_get_status="/".join(map(str, sorted(statuses))))
            log(f"  changeset {row['changeset_median'] * 1000:.1f} ms, GET "
                f"{row['get_median'] * 1000:.1f} ms (medians of {args.repeats})")
        if args.writes:
            for resize, key in ((True, "write"), (False, "write_same_size")):
                readers = store.begin_writes()
                try:
                    units_w, app_w = [], []
                    before = store.mark()
                    for i in range(args.write_changesets):
                        sheet.edit_one(rng, f"write {i}", resize)
                        after = store.mark()
                        units_w.append(after[0] - before[0])
                        app_w.append(after[1] - before[1])
                        before = after
                finally:
                    store.end_writes(readers)
                row.update({f"{key}_median": statistics.median(units_w),
                            f"{key}_min": min(units_w), f"{key}_max": max(units_w),
                            f"{key}_app_median": statistics.median(app_w)})
                log(f"  written per changeset ({key}): "
                    f"{row[key + '_median'] / 1e3:.1f} kB (median, "
                    f"min {row[key + '_min'] / 1e3:.1f} kB, product DB "
                    f"{row[key + '_app_median'] / 1e3:.1f} kB)")
        if args.fork:
            grows, times = [], []
            for i in range(args.fork_repeats):
                wt, _ = wharf.operation("/api/worktrees", {"kind": "user",
                                                           "name": f"Fork {n} {i}"})
                size_before = store.unit_store_bytes()
                _, seconds = wharf.operation(f"/api/worktrees/{wt['worktree_id']}/units",
                                             {"source": "trunk",
                                              "resource_id": sheet.resource_id})
                grows.append(store.unit_store_bytes() - size_before)
                times.append(seconds)
            row.update(fork_bytes_median=statistics.median(grows),
                       fork_seconds_median=statistics.median(times))
            log(f"  fork: +{row['fork_bytes_median'] / MB:.2f} MB in "
                f"{row['fork_seconds_median'] * 1000:.0f} ms (median of {args.fork_repeats})")
            # one-cell changesets on the last fork's draft (the first loads its head)
            draft = Sheet(wharf, sheet.unit_id, sheet.resource_id)
            draft.rows, draft.cols = sheet.rows, sheet.cols
            draft.path = f"/api/worktrees/{wt['worktree_id']}/units/{sheet.unit_id}/changesets"
            for _ in range(3):
                draft.edit_one(rng, "draft warm")
            drafted = [draft.edit_one(rng, f"draft {i}")[0] for i in range(args.repeats)]
            row.update(draft_changeset_median=statistics.median(drafted))
            log(f"  draft changeset {row['draft_changeset_median'] * 1000:.1f} ms "
                f"(median of {args.repeats})")
        out.append(row)
    return out


def reset_hwm(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def outcome_summary(result: Any) -> list[str]:
    """The merge operation's result in short: its non-zero outcome counts, or each unit's
    outcome."""
    if not isinstance(result, dict):
        return [str(result)[:100]]
    counts: dict[str, Any] = result["counts"] if isinstance(result.get("counts"), dict) \
        else result
    named = [f"{k} {v}" for k, v in counts.items()
             if k in ("unchanged", "fast_forward", "merged", "created", "conflict",
                      "activation_blocked") and isinstance(v, int) and v]
    if named:
        return named
    return [str(u.get("outcome")) for u in result.get("units", []) if isinstance(u, dict)]


def bench_merge(args: argparse.Namespace, wharf: Wharf) -> dict[str, Any]:
    rng = random.Random(args.seed + 1)
    log(f"merge: building a {args.merge_cells}-cell sheet")
    sheet = wharf.new_sheet("Merge", args.merge_cells)
    wt, _ = wharf.operation("/api/worktrees", {"kind": "user", "name": "Merge"})
    wt_id = wt["worktree_id"]
    wharf.operation(f"/api/worktrees/{wt_id}/units",
                    {"source": "trunk", "resource_id": sheet.resource_id})
    draft = Sheet(wharf, sheet.unit_id, sheet.resource_id)
    draft.path = f"/api/worktrees/{wt_id}/units/{sheet.unit_id}/changesets"
    draft.revision = 0  # a draft's revisions count from 0 (its base)
    status, raw, _ = wharf.raw("GET", f"/api/worktrees/{wt_id}/units/{sheet.unit_id}")
    if status == 200:
        detail = json.loads(raw)
        draft.revision = int(detail.get("draft_revision", detail.get("revision", 0)) or 0)
    cells = rng.sample(range(sheet.rows * sheet.cols), 2 * args.merge_edits)
    sides = ((sheet, cells[:args.merge_edits], "trunk"),
             (draft, cells[args.merge_edits:], "draft"))
    log(f"merge: {args.merge_edits} edits a side, {args.merge_batch} per changeset")
    for target, picked, tag in sides:
        for start in range(0, len(picked), args.merge_batch):
            target.change([{"op": "replace", "path": cell_path(*divmod(k, sheet.cols)),
                            "value": cell(*divmod(k, sheet.cols), tag)}
                           for k in picked[start:start + args.merge_batch]])
    wharf.json("POST", f"/api/worktrees/{wt_id}/ready", {})
    rss_before = status_kib(wharf.pid, "VmRSS")
    hwm = reset_hwm(wharf.pid)
    with RssSampler(wharf.pid, interval=0.02) as sampler:
        result, seconds = wharf.operation(f"/api/worktrees/{wt_id}/merge", {})
    peak_hwm = status_kib(wharf.pid, "VmHWM") if hwm else None
    outcomes = outcome_summary(result)
    log(f"merge: {seconds:.2f} s, outcomes {outcomes}, RSS {rss_before / 1024:.0f} MiB "
        f"before, peak {max(sampler.peak_kib, peak_hwm or 0) / 1024:.0f} MiB")
    return {"cells": sheet.rows * sheet.cols, "edits_per_side": args.merge_edits,
            "edits_per_changeset": args.merge_batch, "seconds": seconds,
            "outcomes": outcomes, "rss_before_kib": rss_before,
            "rss_peak_sampled_kib": sampler.peak_kib, "rss_peak_hwm_kib": peak_hwm}


def bench_build(args: argparse.Namespace, wharf: Wharf) -> dict[str, Any]:
    per = args.build_cells // args.build_changesets
    log(f"build: {args.build_cells} cells by {args.build_changesets} changesets of {per}")
    result, _ = wharf.operation("/api/resources", {
        "space_id": wharf.space_id, "parent_id": None, "name": "Build", "unit_type": "sheet"})
    sheet = Sheet(wharf, result["unit_id"], result["resource_id"])
    sheet.change([{"op": "add", "path": "/body",
                   "value": skeleton(args.build_changesets, per)}])
    times = []
    for r in range(args.build_changesets):
        ops: list[dict[str, Any]] = [{"op": "add", "path": f"/body/sheets/s1/cellData/{r}",
                                      "value": {"0": cell(r, 0, "build")}}]
        ops += [{"op": "add", "path": cell_path(r, c), "value": cell(r, c, "build")}
                for c in range(1, per)]
        times.append(sheet.change(ops)[0])
        if (r + 1) % max(1, args.build_changesets // 10) == 0:
            log(f"  {r + 1} changesets, {sum(times):.1f} s")
    tenth = max(1, len(times) // 10)
    first, last = sum(times[:tenth]), sum(times[-tenth:])
    return {"cells": per * args.build_changesets, "changesets": args.build_changesets,
            "cells_per_changeset": per, "total_seconds": sum(times),
            "first_tenth_seconds": first, "last_tenth_seconds": last,
            "last_over_first": last / first}


# -- report ------------------------------------------------------------------------------
def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def report(args: argparse.Namespace, res: dict[str, Any]) -> str:
    lines = [f"Unit storage benchmark: `wharf serve` on {res['backend']}, commit "
             f"{res['commit']}, {res['date']}; Python {platform.python_version()}, "
             f"{os.cpu_count()} cores; medians of {args.repeats}; load average "
             f"{res['load_start']:.1f} at the start, {res['load_end']:.1f} at the end "
             "(the machine's other work skews wall times).", ""]
    sizes = res.get("sizes") or []
    if sizes and args.latency:
        ref_cs, ref_get = sizes[0]["changeset_median"], sizes[0]["get_median"]
        lines += [f"Changesets sent with answer={args.answer}.", "",
                  "| cells | document (GET answer) | one-cell changeset | x first | "
                  "changeset answer | GET of the unit | x first | GET If-None-Match |",
                  "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in sizes:
            lines.append(
                f"| {r['cells']:,} | {r['get_answer_bytes'] / MB:.2f} MB | "
                f"{ms(r['changeset_median'])} | {r['changeset_median'] / ref_cs:.1f}x | "
                f"{r['changeset_answer_bytes'] / MB:.2f} MB | {ms(r['get_median'])} | "
                f"{r['get_median'] / ref_get:.1f}x | {ms(r['conditional_get_median'])} "
                f"({r['conditional_get_status']}) |")
        lines.append("")
    if sizes and args.writes:
        what = ("PostgreSQL WAL (pg_current_wal_lsn, whole server)" if args.postgres
                else "SQLite WAL growth, units.db (wharf.db beside)")
        lines += [f"Bytes written per one-cell changeset ({what}, "
                  f"{args.write_changesets} changesets of each kind; \"resized\": the "
                  "new value is 1-3 characters longer, \"same size\": as long as the old):",
                  "", "| cells | resized: median | min | max | same size: median | min |"
                  + ("" if args.postgres else " product DB (median) |"),
                  "| ---: | ---: | ---: | ---: | ---: | ---: |"
                  + ("" if args.postgres else " ---: |")]
        for r in sizes:
            lines.append(f"| {r['cells']:,} | {r['write_median'] / 1e3:,.1f} kB | "
                         f"{r['write_min'] / 1e3:,.1f} kB | {r['write_max'] / 1e3:,.1f} kB | "
                         f"{r['write_same_size_median'] / 1e3:,.1f} kB | "
                         f"{r['write_same_size_min'] / 1e3:,.1f} kB |"
                         + ("" if args.postgres else
                            f" {r['write_app_median'] / 1e3:,.1f} kB |"))
        lines.append("")
    if sizes and args.fork:
        lines += [f"Worktree fork (add a trunk unit to a new user worktree; median of "
                  f"{args.fork_repeats}):", "",
                  "| cells | unit store growth per fork | x document | time (submit → done) "
                  "| one-cell draft changeset | x first |",
                  "| ---: | ---: | ---: | ---: | ---: | ---: |"]
        ref_draft = sizes[0]["draft_changeset_median"]
        for r in sizes:
            lines.append(f"| {r['cells']:,} | {r['fork_bytes_median'] / MB:.2f} MB | "
                         f"{r['fork_bytes_median'] / r['get_answer_bytes']:.1f} | "
                         f"{ms(r['fork_seconds_median'])} | "
                         f"{ms(r['draft_changeset_median'])} | "
                         f"{r['draft_changeset_median'] / ref_draft:.1f}x |")
        lines.append("")
    m = res.get("merge")
    if m:
        hwm = "n/a" if m["rss_peak_hwm_kib"] is None else f"{m['rss_peak_hwm_kib'] / 1024:.0f} MiB"
        lines += ["Merge:", "", "| cells | edits a side (per changeset) | merge (submit → "
                  "done) | server RSS before | peak RSS (sampled / VmHWM) | outcome |",
                  "| ---: | ---: | ---: | ---: | ---: | --- |",
                  f"| {m['cells']:,} | {m['edits_per_side']} ({m['edits_per_changeset']}) | "
                  f"{m['seconds'] * 1000:.0f} ms | {m['rss_before_kib'] / 1024:.0f} MiB | "
                  f"{m['rss_peak_sampled_kib'] / 1024:.0f} MiB / {hwm} | "
                  f"{', '.join(map(str, m['outcomes'])) or '?'} |", ""]
    b = res.get("build")
    if b:
        lines += ["Build by changesets:", "",
                  "| cells | changesets (cells each) | total | first 10 % | last 10 % | "
                  "last / first |", "| ---: | ---: | ---: | ---: | ---: | ---: |",
                  f"| {b['cells']:,} | {b['changesets']} ({b['cells_per_changeset']}) | "
                  f"{b['total_seconds']:.1f} s | {b['first_tenth_seconds']:.2f} s | "
                  f"{b['last_tenth_seconds']:.2f} s | {b['last_over_first']:.1f} |", ""]
    return "\n".join(lines)


def commit_id() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                         capture_output=True, text=True)
    return out.stdout.strip() or "?"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="sizes 1k,10k, 5 repeats, 1 fork, a 20k-cell merge with 20 edits a "
                        "side, a 10k-cell build by 100 changesets (about 1-2 min)")
    p.add_argument("--sizes", default=None, help="cells per unit, e.g. 1k,10k,100k,1m "
                   "(default 1k,10k,100k; the first is the ratios' reference)")
    p.add_argument("--repeats", type=int, default=None, help="rounds of row 1 (default 15)")
    p.add_argument("--write-changesets", type=int, default=None,
                   help="changesets measured by row 2 (default 15)")
    p.add_argument("--fork-repeats", type=int, default=None, help="forks per size (default 3)")
    p.add_argument("--merge-cells", default=None, help="row 4's sheet (default 200k)")
    p.add_argument("--merge-edits", type=int, default=None, help="edits a side (default 100)")
    p.add_argument("--merge-batch", type=int, default=10, help="edits per changeset (10)")
    p.add_argument("--build-cells", default=None, help="row 5's cells (default 100k)")
    p.add_argument("--build-changesets", type=int, default=None, help="(default 1000)")
    for name, what in (("latency", "row 1"), ("writes", "row 2"), ("fork", "row 3"),
                       ("merge", "row 4"), ("build", "row 5")):
        p.add_argument(f"--no-{name}", dest=name, action="store_false", help=f"skip {what}")
    p.add_argument("--postgres", action="store_true",
                   help=f"PostgreSQL databases {DB_UNITS} and {DB_APP} (created, dropped)")
    p.add_argument("--postgres-url", default=os.environ.get(
        "WHARF_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"),
        help="a PostgreSQL server (any database; the benchmark's are created beside it)")
    p.add_argument("--server-env", action="append", default=[], metavar="NAME=VALUE",
                   help="extra environment for wharf serve (repeatable)")
    p.add_argument("--seed", type=int, default=36)
    p.add_argument("--answer", choices=("minimal", "full"), default="minimal",
                   help="changesets sent with `Prefer: return=minimal` (the default; a "
                        "server before issue 36 ignores it and answers the whole document) "
                        "or without it (full: the answer carries the document)")
    p.add_argument("--json", type=Path, default=None, help="write the figures here too")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (logs, databases)")
    args = p.parse_args(argv)
    quick = args.quick
    args.sizes = [parse_size(s) for s in (args.sizes or ("1k,10k" if quick else
                                                          "1k,10k,100k")).split(",")]
    args.repeats = args.repeats or (5 if quick else 15)
    args.write_changesets = args.write_changesets or (5 if quick else 15)
    args.fork_repeats = args.fork_repeats or (1 if quick else 3)
    args.merge_cells = parse_size(args.merge_cells or ("20k" if quick else "200k"))
    args.merge_edits = args.merge_edits or (20 if quick else 100)
    args.build_cells = parse_size(args.build_cells or ("10k" if quick else "100k"))
    args.build_changesets = args.build_changesets or (100 if quick else 1000)

    tmp = Path(tempfile.mkdtemp(prefix="wharf-bench-units-"))
    wharf = store = None
    res: dict[str, Any] = {"backend": "PostgreSQL" if args.postgres else "SQLite",
                           "commit": commit_id(),
                           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "argv": sys.argv[1:], "settings": {},
                           "load_start": os.getloadavg()[0]}
    try:
        wharf = Wharf(args, tmp).start()
        res["settings"] = {k: v for k, v in wharf.settings.items()
                           if k.startswith("WHARF_UNIT") or k in (
                               "WHARF_MAX_BODY_BYTES", "WHARF_WORKTREE_DRAFT_QUOTA_BYTES")}
        log(f"wharf serve on port {wharf.port} (pid {wharf.pid}), {res['backend']}")
        store = Storage(wharf)
        if args.latency or args.writes or args.fork:
            res["sizes"] = bench_sizes(args, wharf, store)
        if args.merge:
            res["merge"] = bench_merge(args, wharf)
        if args.build:
            res["build"] = bench_build(args, wharf)
        res["server_vmhwm_kib"] = status_kib(wharf.pid, "VmHWM")
        res["load_end"] = os.getloadavg()[0]
        text = report(args, res)
        print()
        print(text, flush=True)
        if args.json:
            args.json.write_text(json.dumps(res, indent=2) + "\n")
        return 0
    finally:
        if store is not None:
            store.close()
        if wharf is not None:
            wharf.stop()
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
