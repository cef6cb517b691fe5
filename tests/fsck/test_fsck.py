"""``wharf fsck`` on the filesystem store and on a real S3-compatible server (moto over
HTTP), on SQLite and PostgreSQL: orphaned and missing objects, the repair of old orphans
through deletion jobs, live uploads left alone, the unit side, streaming with small pages,
the CLI (in process, with one real process per exit-status contract), and the sweep with
its gauges."""
from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from sqlalchemy import insert, select, update

from storage.blobstore import FileBlobStore
from storage.db import Database
from storage.models import (
    BlobResource,
    BlobUploadSession,
    ObjectDeletionJob,
    ScheduleTick,
    UnitAsset,
    Worktree,
    WorktreeUnit,
)
from storage.unitstore import UnitStore
from tests.assets.test_assets import PNG, new_unit, published
from tests.blobs.test_blobs import Env, put_bytes, start_upload, upload
from tests.cli.test_cli import run_wharf, wharf_env
from tests.support.cli import call_wharf
from wharf.deletion import service as deletion
from wharf.fsck import Finding, Report, check_grace, run_fsck, streams
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id
from wharf.infra.settings import ConfigError
from wharf.observability import metrics
from wharf.retention.runner import run_sweep
from wharf.retention.schedule import schedules
from wharf.retention.sweeps import SWEEPS, SweepContext

pytestmark = pytest.mark.both_databases  # the consistency scans' SQL on each dialect

DAY = timedelta(days=1)


@pytest.fixture(params=["file", "s3"])
def env(request, settings, db, tmp_path):
    store = FileBlobStore(tmp_path / "blobs") if request.param == "file" \
        else request.getfixturevalue("s3_store")
    e = Env(settings, db, store)
    yield e
    e.close()


def fsck(env: Env, *, later: timedelta = timedelta(0), repair: bool = False,
         **kw) -> tuple[Report, list[Finding]]:
    """One run as if ``later`` from now; the findings it listed."""
    found: list[Finding] = []
    report = run_fsck(env.db, env.real_store, env.components.unitstore,
                      env.components.settings, repair=repair, now=utcnow() + later,
                      emit=found.append, **kw)
    return report, found


def by_kind(found: list[Finding], kind: str) -> dict[str, Finding]:
    return {f.subject: f for f in found if f.kind == kind}


def old() -> timedelta:
    """Past the default grace (two days)."""
    return 3 * DAY


# --- the object side ----------------------------------------------------------------------

def test_a_clean_store_has_no_findings(env):
    alice = env.world.user("alice")
    _sess, op = upload(alice, alice.personal_space_id, b"hello")
    assert op["status"] == "completed", op
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    published(alice, unit, PNG)
    env.run_deletions()
    report, found = fsck(env, later=old(), repair=True)
    assert found == [] and report.total == 0 and report.complete
    # rows: the blob, its completed upload session, the asset
    assert report.objects_listed == 2 and report.object_references == 3
    assert report.units_listed == 1 and report.unit_references == 1
    assert report.repairs_queued == 0


def test_a_planted_object_is_an_orphan_repaired_only_once_older_than_the_grace(env):
    alice = env.world.user("alice")
    _sess, op = upload(alice, alice.personal_space_id, b"keep me")
    kept = op["result"]["resource_id"]
    planted = new_id()
    env.real_store.put_stream(planted, [b"nobody names me"])

    # Fresh: reported, not repaired (it may be a write not yet recorded).
    report, found = fsck(env, repair=True)
    orphan = by_kind(found, "orphaned_object")[planted]
    assert orphan.details["repair"] == "too_recent" and orphan.details["size"] == 15
    assert report.counts["orphaned_object"] == 1 and report.too_recent == 1
    assert report.repairs_queued == 0
    with env.db.read() as s:
        assert s.scalar(select(ObjectDeletionJob).where(
            ObjectDeletionJob.object_key == planted)) is None

    # Without --repair an old one is only reported.
    report, found = fsck(env, later=old())
    assert "repair" not in by_kind(found, "orphaned_object")[planted].details
    assert report.repairs_queued == 0

    # Older than the grace: a deletion job is queued; a second repair queues nothing new.
    report, found = fsck(env, later=old(), repair=True)
    assert by_kind(found, "orphaned_object")[planted].details["repair"] == "deletion_queued"
    assert report.repairs_queued == 1
    with env.db.read() as s:
        job = s.scalar(select(ObjectDeletionJob).where(ObjectDeletionJob.object_key == planted))
        assert job is not None and job.reason == "fsck_orphaned"
    report, found = fsck(env, later=old(), repair=True)
    assert found == [] and report.repairs_queued == 0 and report.total == 0

    # The normal deletion worker deletes it; the blob everyone uses is untouched.
    env.run_deletions()
    assert planted not in set(env.real_store.list_keys())
    assert alice.get(f"/api/blob-resources/{kept}/content").content == b"keep me"
    report, found = fsck(env, later=old(), repair=True)
    assert found == [] and report.total == 0


def test_a_row_whose_object_was_deleted_behind_wharfs_back_is_missing(env):
    alice = env.world.user("alice")
    _sess, op = upload(alice, alice.personal_space_id, b"precious")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    asset = published(alice, unit, PNG)["result"]["asset_id"]
    # The PUT queued the deletion of the session's first (never written) key: let the
    # deletion worker finish it, so the jobs left below are fsck's alone.
    env.run_deletions()
    with env.db.read() as s:
        blob_key = s.scalar(select(BlobResource.object_key).where(
            BlobResource.resource_id == op["result"]["resource_id"]))
        asset_key = s.scalar(select(UnitAsset.object_key).where(UnitAsset.id == asset))
    env.real_store.delete(blob_key)
    env.real_store.delete(asset_key)

    report, found = fsck(env, later=old(), repair=True)
    missing = by_kind(found, "missing_object")
    assert missing[blob_key].details["tables"] == ["blob_resources"]
    assert missing[asset_key].details["tables"] == ["unit_assets"]
    assert report.counts["missing_object"] == 2 and report.total == 2
    # Never repaired: the rows stay, nothing is queued.
    assert report.repairs_queued == 0
    with env.db.read() as s:
        assert s.scalar(select(BlobResource.object_key).where(
            BlobResource.object_key == blob_key)) == blob_key
        assert s.scalar(select(UnitAsset.id).where(UnitAsset.id == asset)) == asset
        assert list(s.scalars(select(ObjectDeletionJob.object_key))) == []


def test_live_uploads_are_neither_orphaned_nor_missing(env):
    alice = env.world.user("alice")
    # A session whose bytes are stored, not yet completed: its object is named.
    uploaded = start_upload(alice, alice.personal_space_id, "a.bin", 3)
    assert put_bytes(alice, uploaded["id"], b"abc").status_code == 200
    # A session waiting for its bytes: its reserved key has no object and needs none.
    start_upload(alice, alice.personal_space_id, "b.bin", 3)
    # An upload streaming right now: its key is reserved (a deletion job due when the
    # session expires) before the first byte; the bytes are already in the store.
    streaming = new_id()
    with env.db.write() as s:
        deletion.schedule(s, streaming, "upload_reservation", not_before=utcnow() + DAY)
    env.real_store.put_stream(streaming, [b"half of it"])

    report, found = fsck(env, later=old(), repair=True)
    assert found == [] and report.total == 0 and report.repairs_queued == 0
    assert report.objects_listed == 2
    assert streaming in set(env.real_store.list_keys())
    # The reservation is still the upload's, not brought forward by fsck.
    with env.db.read() as s:
        job = s.scalar(select(ObjectDeletionJob).where(
            ObjectDeletionJob.object_key == streaming))
        assert job is not None and job.reason == "upload_reservation"
        assert job.next_attempt_at > utcnow()

    # Once bytes are stored, a session that needs them notices them gone.
    with env.db.read() as s:
        stored_key = s.scalar(select(BlobUploadSession.object_key).where(
            BlobUploadSession.id == uploaded["id"]))
    env.real_store.delete(stored_key)
    _report, found = fsck(env)
    assert by_kind(found, "missing_object")[stored_key].details["tables"] == [
        "blob_upload_sessions"]


def test_many_keys_stream_through_small_pages(env, db, monkeypatch):
    """A few thousand keys read 37 at a time (keyset pages on the database, ListObjectsV2
    pages on S3): every page boundary is crossed and the counts come out exact."""
    many = 2400 if isinstance(env.real_store, FileBlobStore) else 900
    alice = env.world.user("alice")
    # Mixed shapes, so bytewise order matters ('-' < '/' < digits < letters).
    keys = sorted({f"{p}{new_id()}" for p in ("", "assets/", "objects/", "x-")
                   for _ in range(many // 4)})
    with ThreadPoolExecutor(8) as pool:  # the writes' fsyncs (or HTTP round trips) overlap
        list(pool.map(lambda k: env.real_store.put_stream(k, [b"."]), keys))
    unnamed, named = keys[::100], [k for i, k in enumerate(keys) if i % 100]
    orphans = [k for k in unnamed if not k.startswith("x-")]  # x-...: not Wharf's shape
    foreign = [k for k in unnamed if k.startswith("x-")]
    with db.write() as s:
        deletion.schedule_many(s, named, "test")
        s.execute(update(ObjectDeletionJob).values(next_attempt_at=utcnow() + DAY))
        missing = [f"assets/{new_id()}" for _ in range(25)]
        s.execute(insert(UnitAsset), [
            {"id": new_id(), "unit_id": new_id(), "object_key": k, "filename": "f",
             "declared_media_type": "image/png", "detected_media_type": "image/png",
             "size": 1, "sha256": "0" * 64, "etag": "e", "created_by": alice.user_id}
            for k in missing])
    for native in (True, False):
        # Not native: the reads a database with a non-bytewise collation gets (COLLATE "C").
        monkeypatch.setitem(streams._native, db.url, native)
        report, found = fsck(env, later=old(), page_size=37)
        assert set(by_kind(found, "orphaned_object")) == set(orphans)
        assert set(by_kind(found, "foreign_object")) == set(foreign)
        assert set(by_kind(found, "missing_object")) == set(missing)
        assert report.objects_listed == len(keys)
        assert report.object_references == len(named) + len(missing)
        assert report.complete and not report.truncated

    # The time budget (checked every 1000 keys): the run stops, and says so.
    report, _found = fsck(env, later=old(), page_size=37, max_seconds=0)
    assert report.complete is (len(keys) + len(missing) < 1000)

    # The detail cap: counts go on, only the first findings are listed (and repaired).
    report, found = fsck(env, later=old(), page_size=37, max_findings=5, repair=True)
    assert len(found) == 5 and report.truncated and report.repairs_queued <= 5
    assert report.counts["orphaned_object"] == len(orphans)
    assert report.counts["missing_object"] == len(missing)


# --- the unit side ------------------------------------------------------------------------

def test_units_without_resources_and_resources_without_units(env):
    alice = env.world.user("alice")
    kept = new_unit(alice, alice.personal_space_id)
    lost = new_unit(alice, alice.personal_space_id)
    units = env.components.unitstore
    planted = new_id()
    units.create_unit(planted, "doc")
    units.delete_unit(lost["unit_id"])  # behind Wharf's back
    # A worktree's new unit, merged into trunk before its activation writes the resource
    # (a blocked activation waits): owned by its worktree_units row, not an orphan.
    merged = new_id()
    units.create_unit(merged, "doc")
    with env.db.write() as s:
        s.add(Worktree(id=(wt := new_id()), kind="user", name="wt", creator_id=alice.user_id,
                       visibility="private", state="draft"))
        s.flush()
        s.add(WorktreeUnit(worktree_id=wt, unit_id=merged, resource_id=new_id(),
                           source="worktree", unit_type="doc", ordinal=0,
                           added_by=alice.user_id))

    # A unit created a moment ago may be a creation in flight: not reported yet.
    report, found = fsck(env)
    assert set(by_kind(found, "missing_unit")) == {lost["unit_id"]}
    assert by_kind(found, "orphaned_unit") == {} and report.units_too_recent == 2

    report, found = fsck(env, later=timedelta(hours=2), repair=True)
    orphan = by_kind(found, "orphaned_unit")[planted]
    assert orphan.details["age_seconds"] >= 7200
    assert by_kind(found, "missing_unit")[lost["unit_id"]].details == {
        "resource_id": lost["resource_id"]}
    assert report.counts["orphaned_unit"] == 1 and report.counts["missing_unit"] == 1
    assert report.units_listed == 3 and report.unit_references == 2
    # Report only: the planted unit is still there.
    assert units.get(planted) is not None and units.get(kept["unit_id"]) is not None


def test_unit_pages_are_bytewise(env):
    units = env.components.unitstore
    ids = sorted(new_id() for _ in range(25))
    units.create_units([(i, "doc", None) for i in ids])
    got, after = [], None
    while page := units.unit_page(after, 4):
        got += [i for i, _ in page]
        after = page[-1][0]
    assert got == ids


def test_a_listing_out_of_bytewise_order_stops_the_run(settings, db, tmp_path):
    """Merged with a wrong order, every key past the fault would be a false finding: a
    backend that lists out of order stops the run instead."""
    class Shuffled(FileBlobStore):
        def list_objects(self, prefix="", page_size=1000):
            return iter(sorted(super().list_objects(prefix, page_size),
                               key=lambda o: o.key, reverse=True))

    store = Shuffled(tmp_path / "shuffled")
    for k in ("a", "b"):
        store.put_stream(k, [b"."])
    units_db = Database(settings.unitstore_url)
    try:
        with pytest.raises(streams.OutOfOrder, match="bytewise"):
            run_fsck(db, store, UnitStore(units_db), settings)
    finally:
        units_db.dispose()


# --- rules, CLI, sweep --------------------------------------------------------------------

def test_the_grace_must_outlast_every_live_upload(settings):
    check_grace(settings)
    for bad in (settings.replace(fsck_grace_seconds=settings.upload_session_ttl),
                settings.replace(fsck_grace_seconds=settings.asset_upload_ttl + 300,
                                 upload_session_ttl=60)):
        with pytest.raises(ConfigError, match="WHARF_FSCK_GRACE_SECONDS"):
            check_grace(bad)


def test_the_cli(tmp_path, settings, db, monkeypatch, capsys):
    """The command's outputs, flags and exit statuses: ``wharf``'s main in this process
    for each run, and one real ``wharf fsck`` process for the findings' exit status and
    text (tests/support/cli.py says why)."""
    blobs = tmp_path / "cli-blobs"
    base = wharf_env(tmp_path, WHARF_DATABASE_URL=settings.database_url,
                     WHARF_UNITSTORE_URL=settings.unitstore_url,
                     WHARF_BLOB_STORE_URL=blobs.as_uri())

    def wharf(*args: str, env: dict[str, str] = base):
        return call_wharf(monkeypatch, capsys, *args, env=env)

    store = FileBlobStore(blobs)
    clean = wharf("fsck")
    assert clean.returncode == 0, clean.stderr
    assert "0 orphaned object(s)" in clean.stdout

    planted = new_id()
    store.put_stream(planted, [b"x"])
    old_mtime = (utcnow() - 3 * DAY).timestamp()
    os.utime(blobs / planted, (old_mtime, old_mtime))
    text = run_wharf(tmp_path, "fsck", env=base)  # the one real process
    assert text.returncode == 1, text.stderr
    assert planted in text.stdout and "orphaned object" in text.stdout

    as_json = wharf("fsck", "--json")
    assert as_json.returncode == 1
    lines = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert lines[0] == {"finding": "orphaned_object", "key": planted, "size": 1,
                        "modified": lines[0]["modified"],
                        "age_seconds": lines[0]["age_seconds"]}
    assert lines[0]["age_seconds"] >= 3 * 86400 - 60
    assert lines[-1]["summary"]["orphaned_object"] == 1
    assert lines[-1]["summary"]["complete"] is True

    repaired = wharf("fsck", "--json", "--repair")
    assert repaired.returncode == 1
    assert json.loads(repaired.stdout.splitlines()[0])["repair"] == "deletion_queued"
    deletion.run_due(db, store)
    again = wharf("fsck", "--json", "--repair")
    assert again.returncode == 0, again.stdout
    assert json.loads(again.stdout)["summary"]["repairs_queued"] == 0

    short = wharf("fsck", env={**base, "WHARF_FSCK_GRACE_SECONDS": "60"})
    assert short.returncode == 2 and "WHARF_FSCK_GRACE_SECONDS=60" in short.stderr
    for bad in (["--max-findings", "-1"], ["--page-size", "0"], ["--bogus"]):
        result = wharf("fsck", *bad)
        assert result.returncode == 2, (bad, result.stderr)


def test_the_sweep_reports_and_exports_gauges(env, db):
    plan = {s.name: s for s in schedules(env.components.settings)}
    assert plan["fsck"].period == 604800
    env.real_store.put_stream(new_id(), [b"stray"])
    with db.write() as s:
        s.add(ScheduleTick(id=(tick := new_id()), schedule="fsck", tick_at=utcnow(),
                           status="running", scheduler_id="test", started_at=utcnow()))
    ctx = SweepContext(db=db, settings=env.components.settings, now=utcnow(),
                       blob_store=env.real_store, unitstore=env.components.unitstore)
    counts = run_sweep(ctx, "fsck", tick_id=tick)
    assert counts["orphaned_object"] == 1 and counts["complete"] == 1
    assert counts["repairs_queued"] == 0  # report-only by default
    with db.read() as s:
        assert s.get(ScheduleTick, tick).status == "done"
        gauges = {g.name: g.samples[0].value for g in metrics.fsck_gauges(s)}
    assert gauges["wharf_fsck_orphaned_objects"] == 1
    assert gauges["wharf_fsck_missing_objects"] == 0
    assert gauges["wharf_fsck_orphaned_units"] == 0
    assert gauges["wharf_fsck_missing_units"] == 0
    assert gauges["wharf_fsck_last_run_complete"] == 1
    assert abs(gauges["wharf_fsck_last_run_timestamp_seconds"] - utcnow().timestamp()) < 60

    # WHARF_FSCK_REPAIR: the sweep queues old orphans too.
    ctx.settings = env.components.settings.replace(fsck_repair=True)
    ctx.now = utcnow() + old()
    counts = SWEEPS["fsck"](ctx)
    assert counts["orphaned_object"] == 1 and counts["repairs_queued"] == 1


def test_no_gauges_before_the_first_run(db):
    with db.read() as s:
        assert metrics.fsck_gauges(s) == []


# --- review fixes -------------------------------------------------------------------------

def test_a_queued_replace_keeps_its_staged_object(settings, db, tmp_path):
    """A replace_blob_content queued while the workers are down (past the grace): its
    staged object is named only by the operation's payload. fsck does not call it an
    orphan, repair queues nothing, and the replace completes once a worker runs."""
    import time

    import dramatiq

    from tests.blobs.test_blobs import _queued_replace
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    try:
        alice = env.world.user("alice")
        url, _etag, op_id, staged = _queued_replace(env, db, alice)
        report, found = fsck(env, later=old(), repair=True)
        assert staged not in by_kind(found, "orphaned_object"), found
        assert report.repairs_queued == 0
        env.run_deletions()
        assert staged in env.stored_keys()
        env.worker = dramatiq.Worker(env.components.broker, worker_threads=2,
                                     worker_timeout=50)
        env.worker.start()
        deadline = time.monotonic() + 20
        while alice.get(f"/api/operations/{op_id}").json["status"] != "completed":
            assert time.monotonic() < deadline, "the replace never completed"
            time.sleep(0.1)
        assert alice.get(url).content == b"staged bytes"
    finally:
        env.close()


def test_an_fsck_deletion_rechecks_its_key_when_it_runs(env):
    """A key queued by repair that something names by the time its job runs stays: the
    job drops itself (the other job deletes its object as usual)."""
    alice = env.world.user("alice")
    planted = [new_id(), f"assets/{new_id()}"]
    for key in planted:
        env.real_store.put_stream(key, [b"x"])
    env.worker.stop(timeout=5000)  # the jobs run below, when the test says so
    report, _found = fsck(env, later=old(), repair=True)
    assert report.repairs_queued == 2
    with env.db.write() as s:
        s.execute(insert(UnitAsset), [{
            "id": new_id(), "unit_id": new_id(), "object_key": planted[1], "filename": "f",
            "declared_media_type": "image/png", "detected_media_type": "image/png",
            "size": 1, "sha256": "0" * 64, "etag": "e", "created_by": alice.user_id}])
        job_ids = {k: i for k, i in s.execute(
            select(ObjectDeletionJob.object_key, ObjectDeletionJob.id))}
    assert deletion.run_job(env.db, env.real_store, job_ids[planted[1]]) == "referenced"
    assert deletion.run_job(env.db, env.real_store, job_ids[planted[0]]) == "deleted"
    stored = set(env.real_store.list_keys())
    assert planted[1] in stored and planted[0] not in stored
    with env.db.read() as s:
        assert list(s.scalars(select(ObjectDeletionJob.object_key))) == []


def test_objects_wharf_never_writes_are_foreign_and_never_repaired(env):
    """A shared bucket or directory: files of other shapes are reported as foreign, never
    queued for deletion, however old."""
    foreign = ["backup/db.dump", "notes.txt", f"x-{new_id()}", f"objects/{new_id()}/x",
               new_id().upper()]
    ours = [new_id(), f"objects/{new_id()}", f"assets/{new_id()}"]
    for key in foreign + ours:
        env.real_store.put_stream(key, [b"data"])
    report, found = fsck(env, later=old(), repair=True)
    assert set(by_kind(found, "foreign_object")) == set(foreign)
    assert all("repair" not in f.details for f in by_kind(found, "foreign_object").values())
    assert set(by_kind(found, "orphaned_object")) == set(ours)
    assert report.counts["foreign_object"] == len(foreign)
    assert report.repairs_queued == len(ours)
    env.run_deletions()
    assert set(env.real_store.list_keys()) == set(foreign)
    assert by_kind(found, "foreign_object")["notes.txt"].as_json()["key"] == "notes.txt"


def test_an_object_deleted_after_the_listing_is_not_an_orphan(settings, db, tmp_path):
    """Its deletion job ran between the listing and the confirmation: gone, not reported."""
    class DeletesAfterListing(FileBlobStore):
        def list_objects(self, prefix="", page_size=1000):
            listed = list(super().list_objects(prefix, page_size))
            for obj in listed:
                self.delete(obj.key)
            return iter(listed)

    store = DeletesAfterListing(tmp_path / "racy")
    store.put_stream(new_id(), [b"."])
    units_db = Database(settings.unitstore_url)
    try:
        report = run_fsck(db, store, UnitStore(units_db), settings, repair=True,
                          now=utcnow() + old())
    finally:
        units_db.dispose()
    assert report.total == 0 and report.repairs_queued == 0 and report.objects_listed == 1


def test_the_cli_exit_status_when_it_could_not_check(tmp_path, settings, db, monkeypatch,
                                                     capsys, sqlite_template):
    """A database error during the run (here: a unit store with no tables, and a product
    database at this revision with a table gone) is exit 3 with one line on stderr, not a
    traceback (exit 1 would read as "findings"); a product database not at this revision
    at all, and a zero --max-seconds, are usage errors (2). ``wharf``'s main in this
    process, and one real process for the exit 3 (tests/support/cli.py says why)."""
    import sqlite3
    base = wharf_env(tmp_path, WHARF_DATABASE_URL=settings.database_url,
                     WHARF_UNITSTORE_URL=settings.unitstore_url,
                     WHARF_BLOB_STORE_URL=(tmp_path / "cli-blobs").as_uri())

    def wharf(*args: str, env: dict[str, str] = base):
        return call_wharf(monkeypatch, capsys, *args, env=env)

    sqlite3.connect(tmp_path / "empty.db").close()  # there, never migrated (a missing
    # file is refused before: tests/cli/test_cli.py, the data dir's message)
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    result = wharf("fsck", env={**base, "WHARF_DATABASE_URL": empty})
    assert result.returncode == 2 and "run `wharf migrate` first" in result.stderr, result
    damaged = tmp_path / "damaged.db"
    shutil.copy(sqlite_template, damaged)  # migrated to this revision (tests/conftest.py)
    with sqlite3.connect(damaged) as conn:
        conn.execute("DROP TABLE blob_resources")
    for run, broken in ((run_wharf, {"WHARF_DATABASE_URL": f"sqlite:///{damaged}"}),
                        (None, {"WHARF_UNITSTORE_URL": empty})):
        env = {**base, **broken}
        result = run_wharf(tmp_path, "fsck", env=env) if run else wharf("fsck", env=env)
        assert result.returncode == 3, (broken, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("wharf fsck: could not check: ")
        assert "Traceback" not in result.stderr
    for bad in (["--max-seconds", "0"], ["--max-seconds", "-1"], ["--max-seconds", "nan"]):
        result = wharf("fsck", *bad)
        assert result.returncode == 2 and "--max-seconds" in result.stderr, (bad, result)


def test_the_unit_side_has_a_budget_of_its_own(env):
    """The object side stopping at its budget (a large store) no longer skips the units
    when they have their own budget (the sweep's)."""
    alice = env.world.user("alice")
    unit = new_unit(alice, alice.personal_space_id)["unit_id"]
    env.components.unitstore.delete_unit(unit)  # a missing unit to find
    with env.db.write() as s:  # more than the 1000 keys between two looks at the clock
        deletion.schedule_many(s, [new_id() for _ in range(1100)], "test")
        s.execute(update(ObjectDeletionJob).values(next_attempt_at=utcnow() + DAY))
    report, found = fsck(env, max_seconds=0)
    assert not report.complete and report.unit_references == 0
    report, found = fsck(env, max_seconds=0, unit_max_seconds=60)
    assert not report.complete and report.unit_references == 1
    assert set(by_kind(found, "missing_unit")) == {unit}


def test_only_keys_exactly_of_wharfs_shape_are_wharfs():
    """A key that merely starts with one of Wharf's shapes (a trailing newline, which a
    ``$`` would let through, or a suffix) is foreign: never repaired."""
    from wharf.blobs.ingest import OBJECT_KEY_RE
    key = new_id()
    assert all(OBJECT_KEY_RE.match(k) for k in (key, f"assets/{key}", f"objects/{key}"))
    assert not any(OBJECT_KEY_RE.match(k) for k in (
        f"{key}\n", f"assets/{key}\n", f"{key}x", f"assets/{key}/x", f"other/{key}",
        key.upper()))
