"""kill -9 of workers during imports (issue 38) with real processes: ``wharf api``,
``wharf worker`` and ``wharf scheduler`` subprocesses on PostgreSQL + Redis + a real
S3-compatible server (moto's server mode, a dedicated subprocess for this module).

The promise: an ``import_file`` operation whose worker dies completes exactly once --
one node, one resource, one unit row and one unit per import, the unit holding what the
file held -- and leaves nothing behind (no other node of that name, no unit in the
UnitStore that no resource names, no temporary directory of a killed attempt).

- killed mid-conversion: the worker's workbook reader child (``python -m
  wharf.exchange.readers.isolated``) of an XLSX of 3000 cells is found in the worker's
  process group, held by the read-pause hook (``WHARF_TEST_READ_PAUSE_FILE``: it waits
  before its first cell while the file exists) and stopped (SIGSTOP), so the kill lands
  during the conversion, not before or after it; the API says the operation is
  ``running`` and no unit exists; then the whole ``wharf worker`` process group is
  killed with SIGKILL.
- killed while LibreOffice converts a DOC (``WHARF_SOFFICE``; found by its command line
  and frozen with SIGSTOP): LibreOffice runs in a session of its own and outlives the
  worker; the operation's next attempt kills it and removes the killed attempt's
  directory. Needs LibreOffice as ``tests/exchange/test_legacy_formats.py`` does (fails
  without it under ``WHARF_TEST_REQUIRE_SERVICES=1``, else skipped).
- killed after the conversion, before the completion: the next worker converts the XLSX
  again and a CSV, creates their units and is held before the completion commits (the
  pause-file hook) when it is killed; the third worker finds both units and publishes them.

Each test gets its own bucket, truncated PostgreSQL databases (created for this module)
and its own Redis namespace; a file lock serializes the process tests of this label across
pytest-xdist workers.
"""
from __future__ import annotations

import contextlib
import io
import os
import signal
import time
import uuid
from pathlib import Path

import pytest

from tests.support.processes import (
    ProcessApi,
    ProcessCluster,
    as_dict,
    attempt_history,
    cluster_for_test,
    databases_fixture,
    redis_fixture,
)
from tests.support.s3 import MotoServer, moto_fixture, s3_client
from tests.support.waiting import free_port, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

PREFIX = "wharf"
ROWS, COLUMNS = 500, 6  # the XLSX: 3000 cells

pg_databases = databases_fixture("wharf_importproc")
redis_ns = redis_fixture("imports-processes")
moto = moto_fixture()


def xlsx_bytes() -> bytes:
    import xlsxwriter
    out = io.BytesIO()
    wb = xlsxwriter.Workbook(out, {"in_memory": True})
    ws = wb.add_worksheet("Stock")
    for r in range(ROWS):
        ws.write_string(r, 0, f"item {r}")
        for c in range(1, COLUMNS):
            ws.write_number(r, c, r * 10 + c)
    wb.close()
    return out.getvalue()


CSV = "".join(f"row {r};{r};{r / 4}\n" for r in range(200)).encode()


class Api(ProcessApi):
    max_wait = 10.0

    def upload(self, space_id: str, data: bytes, filename: str) -> str:
        """A blob resource of ``data`` (upload session, content, completion); its id."""
        r = self.post("/api/blob-upload-sessions",
                      json={"space_id": space_id, "filename": filename, "size": len(data)},
                      headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 201, r.text
        sid = r.json()["id"]
        r = self.http.put(f"{self.base}/api/blob-upload-sessions/{sid}/content", data=data,
                          headers={"Content-Type": "application/octet-stream"}, timeout=30)
        assert r.status_code == 200, r.text
        r = self.post(f"/api/blob-upload-sessions/{sid}/complete",
                      headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 202, r.text
        op = self.wait_done(r.json()["id"], 60)
        assert op["status"] == "completed", op
        return str(op["result"]["resource_id"])

    def submit_import(self, space_id: str, blob_id: str, name: str) -> str:
        r = self.post("/api/imports", json={"blob_resource_id": blob_id, "space_id": space_id,
                                            "name": name},
                      headers={"Idempotency-Key": uuid.uuid4().hex})
        assert r.status_code == 202, r.text
        assert r.json()["kind"] == "import_file"
        return str(r.json()["id"])


class Cluster(ProcessCluster):
    def __init__(self, tmp_path: Path, product_url: str, units_url: str, redis_ns,
                 moto: MotoServer, **env: str):
        self.s3 = s3_client(moto.endpoint)
        self.bucket = f"wharf-imports-{uuid.uuid4().hex[:12]}"
        self.s3.create_bucket(Bucket=self.bucket)
        self.api_port = free_port()
        self.tmpdir = tmp_path / "tmp"  # the processes' TMPDIR: the imports' work files
        self.tmpdir.mkdir()
        self.read_pause_file = tmp_path / "pause-read"  # holds the workbook reader child
        super().__init__(
            tmp_path, product_url, units_url, redis_ns,
            WHARF_BLOB_STORE_URL=f"s3://{self.bucket}/{PREFIX}",
            WHARF_S3_ENDPOINT_URL=moto.endpoint,
            AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
            AWS_DEFAULT_REGION="us-east-1", NO_PROXY="127.0.0.1,localhost",
            TMPDIR=str(self.tmpdir), WHARF_TEST_READ_PAUSE_FILE=str(self.read_pause_file),
            **env)

    def start_api(self):
        return self._start("api", ["api", "--port", str(self.api_port), "--workers", "1"])

    def unit_ids(self) -> set[str]:
        from sqlalchemy import text
        with self.units_engine.connect() as conn:
            return {row[0] for row in conn.execute(text("SELECT id FROM units"))}

    def stored_keys(self) -> set[str]:
        """The objects (not the shipped deletion ledger, ``ledger/``)."""
        pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket)
        keys = {o["Key"].removeprefix(PREFIX + "/") for page in pages
                for o in page.get("Contents", [])}
        return {k for k in keys if not k.startswith("ledger/")}

    def state(self) -> list[str]:
        ops = self.sql("SELECT id, kind, status, attempts, lease_owner, error FROM operations "
                       "WHERE kind = 'import_file' ORDER BY created_at")
        return [f"--- import operations: {[tuple(map(str, r)) for r in ops]}",
                f"--- units: {sorted(self.unit_ids())}",
                f"--- TMPDIR: {sorted(p.name for p in self.tmpdir.iterdir())}"]


def freeze(*needles: bytes) -> list[int]:
    """SIGSTOP every live process whose command line holds ``needles`` until no new one
    appears: LibreOffice starts its processes as it goes (oosplash starts soffice.bin again
    after creating a profile), so one that was being forked while the first were stopped
    is stopped too. The stopped processes."""
    stopped: set[int] = set()
    while True:
        new = set(processes_with(*needles)) - stopped
        if not new:
            return sorted(stopped)
        for pid in new:
            with contextlib.suppress(ProcessLookupError):  # gone: not listed again
                os.kill(pid, signal.SIGSTOP)
                stopped.add(pid)
        time.sleep(0.2)  # a fork in flight when its parent stopped shows up by then


def processes_with(*needles: bytes, group: int | None = None) -> list[int]:
    """The live processes whose command line holds every one of ``needles`` (in the
    process group ``group`` if given)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if (all(n in cmd for n in needles) and state != "Z"
                    and (group is None or os.getpgid(int(entry)) == group)):
                found.append(int(entry))
        except (OSError, ProcessLookupError):
            continue
    return found


def readers_in(group: int) -> list[int]:
    """The workbook reader children (``wharf.exchange.readers.isolated``) alive in the
    process group ``group``."""
    return processes_with(b"wharf.exchange.readers.isolated", group=group)


def test_kill_9_of_workers_mid_import_completes_each_import_exactly_once(
        tmp_path, pg_databases, redis_ns, moto):
    with cluster_for_test(Cluster, tmp_path, pg_databases, redis_ns, moto) as cluster:
        t0 = time.monotonic()
        api_proc = cluster.start_api()
        # One thread, and no scheduler yet: the worker runs no sweep beside the import
        # when it dies (a recovery sweep killed mid-run holds the next ones back a minute).
        first = cluster.start_worker("worker-1", threads=1)
        api = Api(cluster.api_port)
        cluster.wait_http(api_proc, api)
        cluster.wait_worker(first)
        space = api.login()
        xlsx_blob = api.upload(space, xlsx_bytes(), "stock.xlsx")
        csv_blob = api.upload(space, CSV, "rows.csv")

        # 1. Killed mid-conversion: the reader child is held (the read-pause hook: a
        # 3000-cell workbook is read faster than a poll of /proc could catch it) and
        # frozen while it reads the XLSX.
        cluster.read_pause_file.touch()
        xlsx_op = api.submit_import(space, xlsx_blob, "Stock")
        reader = wait_until(lambda: readers_in(first.pid), 30,
                            "worker-1 to read the XLSX in its child", cluster)[0]
        os.kill(reader, signal.SIGSTOP)
        op = api.op(xlsx_op)
        assert op["status"] == "running" and not op["done"], op
        assert cluster.unit_ids() == set()
        cluster.kill_group(first)
        assert not readers_in(first.pid)  # the reader died with the worker's group
        cluster.read_pause_file.unlink()
        killed_mid_conversion = time.monotonic() - t0

        # 2. Killed after the conversion, before the completion: recovery gives the XLSX
        # to worker-2, which converts it again and the CSV, creates both units and is held
        # before committing.
        cluster.pause_file.touch()
        try:
            csv_op = api.submit_import(space, csv_blob, "Rows")
            scheduler = cluster.start_scheduler()
            second = cluster.start_worker("worker-2", threads=2)
            payloads = {r[0]: as_dict(r[1]) for r in cluster.sql(
                "SELECT id, payload FROM operations WHERE kind = 'import_file'")}
            units = {payloads[o]["unit_id"] for o in (xlsx_op, csv_op)}
            wait_until(lambda: cluster.unit_ids() == units, 60,
                       "worker-2 to convert both files (held before the commit)", cluster)
            for op_id in (xlsx_op, csv_op):
                op = api.op(op_id)
                assert op["status"] == "running" and not op["done"], op
            assert cluster.sql("SELECT count(*) FROM nodes WHERE name IN ('Stock', 'Rows')") \
                == [(0,)]
            # The scheduler goes first and its last sweeps finish: the kill lands in the
            # imports, not in a sweep.
            cluster.kill_group(scheduler)
            time.sleep(1.0)
            wait_until(lambda: not cluster.sql(
                "SELECT id FROM schedule_ticks WHERE status = 'running'"), 10,
                "the sweeps under way to finish", cluster)
            cluster.kill_group(second)
        finally:
            cluster.pause_file.unlink(missing_ok=True)
        cluster.start_scheduler()
        cluster.start_worker("worker-3", threads=2)
        done = {op_id: api.wait_done(op_id, 60) for op_id in (xlsx_op, csv_op)}

        # Exactly once: each operation completed with the ids its payload fixed.
        for op_id, op in done.items():
            assert op["status"] == "completed", (op, cluster.logs())
            p = payloads[op_id]
            assert op["result"] == {"node_id": p["node_id"], "resource_id": p["resource_id"],
                                    "unit_id": p["unit_id"]}
        history = attempt_history(cluster)
        assert [o for _, o, _ in history[xlsx_op]] == ["lost", "lost", "completed"]
        assert [o for _, o, _ in history[csv_op]] == ["lost", "completed"]
        assert all(f is not None for rows in history.values() for _, _, f in rows)
        # One node, resource and unit row per import; no other node of those names.
        for op_id, name in ((xlsx_op, "Stock"), (csv_op, "Rows")):
            p = payloads[op_id]
            assert cluster.sql("SELECT id FROM nodes WHERE name = :n", n=name) == \
                [(p["node_id"],)]
            assert cluster.sql("SELECT id, kind FROM resources WHERE node_id = :n",
                               n=p["node_id"]) == [(p["resource_id"], "unit")]
            assert cluster.sql("SELECT unit_id FROM unit_resources WHERE resource_id = :r",
                               r=p["resource_id"]) == [(p["unit_id"],)]
            assert cluster.sql("SELECT count(*) FROM audit_logs WHERE action = "
                               "'resource.create' AND target_id = :r",
                               r=p["resource_id"]) == [(1,)]
        # Nothing else: two blobs and two units in the tree, no unit the tree does not
        # name, the bucket holds the two blobs' objects, no work directory left.
        assert cluster.sql("SELECT kind, count(*) FROM resources GROUP BY kind "
                           "ORDER BY kind") == [("blob", 2), ("unit", 2)]
        assert cluster.count("nodes") == 4
        assert cluster.unit_ids() == units
        assert cluster.stored_keys() == {r[0] for r in cluster.sql(
            "SELECT object_key FROM blob_resources")}
        assert [p.name for p in cluster.tmpdir.iterdir() if "import" in p.name] == []

        # The units hold what the files held.
        stock = api.get(f"/api/units/{done[xlsx_op]['result']['unit_id']}").json()
        assert stock["unit_type"] == "sheet"
        body = stock["snapshot"]["body"]
        sheet = body["sheets"][body["sheetOrder"][0]]
        assert sheet["name"] == "Stock"
        cells = sheet["cellData"]
        assert sum(len(row) for row in cells.values()) == ROWS * COLUMNS
        assert cells["0"]["0"]["v"] == "item 0" and cells["499"]["0"]["v"] == "item 499"
        assert cells["499"]["5"]["v"] == 4995 and cells["123"]["1"]["v"] == 1231
        rows = api.get(f"/api/units/{done[csv_op]['result']['unit_id']}").json()
        cells = rows["snapshot"]["body"]["sheets"]["s1"]["cellData"]
        assert len(cells) == 200
        assert [cells["199"][c]["v"] for c in ("0", "1", "2")] == ["row 199", 199, 49.75]
        print(f"killed mid-conversion at {killed_mid_conversion:.1f}s; "
              f"converged at {time.monotonic() - t0:.1f}s")


def test_kill_9_of_a_worker_mid_libreoffice_conversion_leaves_no_libreoffice_behind(
        tmp_path, pg_databases, redis_ns, moto):
    """A DOC import's worker killed while the real LibreOffice converts the file (frozen
    with SIGSTOP so the kill lands there): LibreOffice runs in a session of its own and
    outlives the worker, beyond any time limit; the operation's next attempt kills it,
    removes the killed attempt's directory and imports the DOC once."""
    from tests.exchange.test_imports import docx_bytes
    from tests.exchange.test_legacy_formats import legacy_file, require_soffice
    soffice = require_soffice()
    (tmp_path / "make").mkdir()
    doc = legacy_file(soffice, tmp_path / "make", "report.docx", docx_bytes(), "doc")
    work = os.fsencode(str(tmp_path / "tmp" / "wharf-import-"))  # the cluster's TMPDIR
    try:
        run_the_libreoffice_kill(tmp_path, pg_databases, redis_ns, moto, soffice, doc, work)
    finally:  # a failure may leave the frozen LibreOffice: never past the test
        for pid in processes_with(work):
            os.kill(pid, signal.SIGKILL)


def run_the_libreoffice_kill(tmp_path, pg_databases, redis_ns, moto, soffice: str,
                             doc: bytes, work: bytes) -> None:
    from wharf.exchange import formats
    with cluster_for_test(Cluster, tmp_path, pg_databases, redis_ns, moto,
                          WHARF_SOFFICE=soffice) as cluster:
        t0 = time.monotonic()
        api_proc = cluster.start_api()
        first = cluster.start_worker("worker-1", threads=1)  # no sweep beside the import
        api = Api(cluster.api_port)
        cluster.wait_http(api_proc, api)
        cluster.wait_worker(first)
        space = api.login()
        blob = api.upload(space, doc, "report.doc")
        op_id = api.submit_import(space, blob, "Old report")
        wait_until(lambda: processes_with(work, b"soffice.bin"), 60,
                   "LibreOffice to convert the DOC", cluster, interval=0.01)
        office = freeze(work)  # oosplash and soffice.bin
        op = api.op(op_id)
        assert op["status"] == "running" and not op["done"], op
        cluster.kill_group(first)
        # LibreOffice outlived the worker (its own session), frozen mid-conversion.
        assert sorted(processes_with(work)) == sorted(office)
        killed_at = time.monotonic() - t0

        cluster.start_scheduler()
        cluster.start_worker("worker-2", threads=2)
        op = api.wait_done(op_id, 60)
        assert op["status"] == "completed", (op, cluster.logs())
        assert [a["outcome"] for a in api.attempts(op_id)] == ["lost", "completed"]
        assert processes_with(work) == []
        assert [p.name for p in cluster.tmpdir.iterdir() if "import" in p.name] == []
        p = as_dict(cluster.sql("SELECT payload FROM operations WHERE id = :i", i=op_id)[0][0])
        assert op["result"] == {"node_id": p["node_id"], "resource_id": p["resource_id"],
                                "unit_id": p["unit_id"]}
        assert cluster.sql("SELECT id FROM nodes WHERE name = 'Old report'") == \
            [(p["node_id"],)]
        assert cluster.sql("SELECT kind, count(*) FROM resources GROUP BY kind "
                           "ORDER BY kind") == [("blob", 1), ("unit", 1)]
        assert cluster.unit_ids() == {p["unit_id"]}
        unit = api.get(f"/api/units/{p['unit_id']}").json()
        assert unit["unit_type"] == "doc"
        assert formats.paragraphs_of(unit["snapshot"]["body"])[2] == (
            [("plain ", {}), ("bold", {"bl": 1}), (" and ", {}), ("italic", {"it": 1})],
            formats.NamedStyle.NORMAL_TEXT)
        print(f"killed mid-conversion at {killed_at:.1f}s; "
              f"converged at {time.monotonic() - t0:.1f}s")
