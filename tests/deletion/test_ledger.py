"""The deletion ledger (issue 18): appended with each decided deletion, shipped to the blob
store's ``ledger/`` prefix, and replayed after a backup is restored so that nothing deleted
since the backup comes back (SQLite's backup API; ``pg_dump``/``pg_restore`` on PostgreSQL).
"""
from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text, update

from storage.blobstore import FileBlobStore
from storage.db import Database
from storage.models import (
    ApiToken,
    BlobResource,
    DeletionRecord,
    LoginSession,
    Operation,
    User,
)
from tests.accounts.test_deletion import Env, delete_me, key, upload
from tests.conftest import World
from tests.support import services
from tests.support.foundation import PASSWORD, assert_problem, bearer, make_token
from wharf.accounts import service as accounts
from wharf.deletion import ledger
from wharf.deletion import service as deletion
from wharf.fsck import run_fsck
from wharf.infra.clock import utcnow
from wharfd import cli
from wharfd.runtime import Components

pytestmark = pytest.mark.both_databases  # backups and restores of each database


def records(db: Database) -> list[DeletionRecord]:
    with db.read() as s:
        return list(s.scalars(select(DeletionRecord).order_by(DeletionRecord.recorded_at,
                                                              DeletionRecord.id)))


def test_decided_deletions_are_recorded_and_reservations_are_not(db):
    with db.write() as s:
        deletion.schedule(s, "reserved", "upload", not_before=utcnow() + timedelta(hours=1))
        deletion.schedule(s, "gone", "purged")
        deletion.schedule(s, "gone", "purged")  # already queued: one record
        deletion.schedule_many(s, ["a", "b"], "expired")
        deletion.schedule_many(s, ["c"], deletion.FSCK_REASON)  # fsck's may drop itself
        deletion.schedule(s, "reserved", "aborted")  # the reservation decided: recorded now
    assert sorted((r.subject, r.reason) for r in records(db)) == [
        ("a", "expired"), ("b", "expired"), ("gone", "purged"), ("reserved", "aborted")]


def test_shipping_writes_json_lines_once_and_prune_keeps_the_unshipped(db, tmp_path):
    store = FileBlobStore(tmp_path / "blobs")
    with db.write() as s:
        ledger.record_objects(s, [f"k{i}" for i in range(5)], "purged")
        ledger.record_account(s, "u" * 32, "d" * 64, "account_deleted")
    assert ledger.ship(db, store, batch=4) == {"shipped": 6, "objects": 2}
    assert ledger.ship(db, store, batch=4) == {"shipped": 0, "objects": 0}
    keys = sorted(store.list_keys(ledger.PREFIX))
    assert len(keys) == 2 and all(k.startswith("ledger/") and k.endswith(".jsonl")
                                  for k in keys)
    lines = b"".join(store.open(keys[0])).decode().splitlines()
    assert len(lines) == 4 and json.loads(lines[0])["kind"] in ("object", "account")
    shipped = list(ledger.read_shipped(store, utcnow() - timedelta(minutes=5)))
    assert {e.subject for e in shipped} == {"k0", "k1", "k2", "k3", "k4", "u" * 32}
    assert all(r.shipped_at is not None and r.ledger_key for r in records(db))
    with db.write() as s:
        ledger.record_objects(s, ["late"], "purged")  # not shipped yet: kept
    assert ledger.prune(db, 0) == 6
    assert [r.subject for r in records(db)] == ["late"]


def test_fsck_leaves_the_ledger_alone(components, db):
    store = components.blob_store
    with db.write() as s:
        ledger.record_objects(s, ["x"], "purged")
    ledger.ship(db, store)
    report = run_fsck(db, store, components.unitstore, components.settings)
    assert report.total == 0, report.summary()


# -- backup → delete → restore → replay ------------------------------------------------------

class Backup:
    """A copy of the product database taken now, restored later into a new database."""

    def __init__(self, backend: str, url: str, tmp_path: Path):
        self.backend, self.url, self.tmp = backend, url, tmp_path
        self.created: list[str] = []
        if backend == "sqlite":
            self.file = tmp_path / "backup.db"
            src = sqlite3.connect(url.removeprefix("sqlite:///"))
            dst = sqlite3.connect(self.file)
            with dst:
                src.backup(dst)  # SQLite's online backup API
            src.close()
            dst.close()
        else:
            self.file = tmp_path / "backup.dump"
            subprocess.run(["pg_dump", "--no-owner", "-Fc", "-f", str(self.file),
                            self._libpq(url)], check=True, capture_output=True)

    @staticmethod
    def _libpq(url: str) -> str:
        return url.replace("postgresql+psycopg://", "postgresql://")

    def restore(self) -> str:
        """The backup, restored into a new (throw-away) database: its URL."""
        if self.backend == "sqlite":
            target = self.tmp / "restored.db"
            shutil.copy(self.file, target)
            return f"sqlite:///{target}"
        name = f"wharf_test_restore_{uuid.uuid4().hex[:8]}"
        admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        admin.dispose()
        self.created.append(name)
        url = self.url.rsplit("/", 1)[0] + "/" + name
        subprocess.run(["pg_restore", "--no-owner", "-d", self._libpq(url), str(self.file)],
                       check=True, capture_output=True)
        return url

    def close(self) -> None:
        admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            for name in self.created:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def test_a_restored_backup_cannot_bring_back_what_was_deleted(
        backend, database_url, settings, db, tmp_path, monkeypatch, capsys):
    store = FileBlobStore(tmp_path / "blobs")
    e = Env(settings, db, store)
    restored_db: Database | None = None
    backup: Backup | None = None
    try:
        alice, bob = e.world.user("alice"), e.world.user("bob")
        make_token(alice)
        bob_token = make_token(bob)["token"]
        alice_data, bob_data = b"alice's bytes" * 50, b"bob's bytes" * 50
        alice_key = upload(e, alice, alice.personal_space_id, alice_data)
        r = bob.post("/api/blob-upload-sessions", json={
            "space_id": bob.personal_space_id, "filename": "b.bin", "size": len(bob_data)},
            headers={"Idempotency-Key": key()})
        bob_session = r.json
        bob.request("PUT", f"/api/blob-upload-sessions/{bob_session['id']}/content",
                    body=bob_data, headers={"Content-Type": "application/octet-stream",
                                            "Content-Length": str(len(bob_data))})
        r = bob.post(f"/api/blob-upload-sessions/{bob_session['id']}/complete",
                     headers={"Idempotency-Key": key()})
        assert e.run(r.json["id"])["status"] == "completed"
        with db.read() as s:
            bob_key = s.scalar(select(BlobResource.object_key).where(
                BlobResource.resource_id == bob_session["resource_id"]))
        bob_cookie = dict(bob.cookies)

        taken_at = utcnow()
        backup = Backup(backend, database_url, tmp_path)

        # after the backup: alice deletes her account, bob purges his blob
        assert delete_me(alice).status_code == 202
        with db.read() as s:
            op_id = s.scalar(select(Operation.id).where(Operation.kind == "delete_account"))
        assert e.run(op_id)["status"] == "completed"
        node = bob_session["node_id"]
        assert bob.post(f"/api/nodes/{node}/trash", json={}).status_code in (200, 201)
        r = bob.delete(f"/api/nodes/{node}", headers={"Idempotency-Key": key()})
        assert r.status_code == 202, r.text
        assert e.run(r.json["id"])["status"] == "completed"
        e.run_deletions()
        assert not {alice_key, bob_key} & e.stored()
        assert accounts.sweep(db, store, settings)["shipped"] >= 3  # the ledger leaves

        # disaster: the database is restored from the backup (and, worst case, the
        # bucket from a snapshot of the same age: the objects are back too)
        for k, data in ((alice_key, alice_data), (bob_key, bob_data)):
            store.put_stream(k, [data])
        restored = backup.restore()
        restored_db = Database(restored)
        with restored_db.read() as s:  # the backup knows nothing of the deletions
            assert s.scalar(select(User.status).where(User.id == alice.user_id)) == "active"
            assert not list(s.scalars(select(DeletionRecord).where(
                DeletionRecord.recorded_at >= taken_at)))

        # the replay, as an operator runs it
        monkeypatch.setenv("WHARF_DATABASE_URL", restored)
        monkeypatch.setenv("WHARF_UNITSTORE_URL", settings.unitstore_url)
        monkeypatch.setenv("WHARF_BLOB_STORE_URL", store.root.as_uri())
        monkeypatch.setenv("WHARF_DATA_DIR", str(tmp_path / "data"))
        capsys.readouterr()
        assert cli.main(["restore-check", "--since", taken_at.isoformat()]) == 0
        report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert report["accounts_redeleted"] == 1
        assert report["objects_requeued"] >= 2
        assert report["sessions_revoked"] >= 1 and report["tokens_revoked"] >= 1
        assert report["ledger_rows_restored"] >= 3
        with restored_db.read() as s:
            assert s.scalar(select(User.status).where(User.id == alice.user_id)) == "deleting"
            assert not list(s.scalars(select(LoginSession)))
            assert all(t.revoked_at is not None for t in s.scalars(select(ApiToken)))

        # the restored deployment: alice cannot log in, bob's restored session is gone
        comps = Components(settings.replace(database_url=restored), db=restored_db,
                           blob_store=store)
        try:
            world = World(comps.api_app(), comps)
            world.ids = dict(e.world.ids)  # the accounts exist in the restored database
            assert_problem(world.anonymous().post(
                "/api/login-sessions", json={"username": "alice", "password": PASSWORD}), 401)
            stale = world.anonymous()
            stale.cookies.update(bob_cookie)
            assert_problem(stale.get("/api/me"), 401)
            assert_problem(world.anonymous().get("/api/me", headers=bearer(bob_token)), 401)
            assert world.user("bob").get("/api/me").status_code == 200
            # the re-recorded deletion runs; the objects are deleted again
            with restored_db.read() as s:
                again = accounts.open_deletion(s, alice.user_id)
            assert again is not None
            comps.executor.execute(again)
            for _ in range(5):
                deletion.run_due(restored_db, store)
            with restored_db.read() as s:
                assert s.get(User, alice.user_id) is None
        finally:
            comps.close()
        assert not {alice_key, bob_key} & {k for k in store.list_keys()
                                           if not k.startswith(ledger.PREFIX)}
        # a second replay finds the account gone
        assert cli.main(["restore-check", "--since", taken_at.isoformat()]) == 0
        report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert report["accounts_redeleted"] == 0 and report["accounts_already_gone"] == 1
    finally:
        if restored_db is not None:
            restored_db.dispose()
        if backup is not None:
            backup.close()
        e.close()


def test_restore_check_refuses_a_bad_time(monkeypatch, settings, capsys):
    monkeypatch.setenv("WHARF_DATABASE_URL", settings.database_url)
    assert cli.main(["restore-check", "--since", "yesterday"]) == 2
    assert "--since" in capsys.readouterr().err


def test_a_dry_run_changes_nothing(settings, db, tmp_path):
    store = FileBlobStore(tmp_path / "blobs")
    e = Env(settings, db, store)
    try:
        alice = e.world.user("alice")
        taken_at = utcnow()
        with db.write() as s:
            ledger.record_account(s, alice.user_id, "d" * 64, "account_deleted")
        report = accounts.restore_check(db, store, settings, taken_at, dry_run=True)
        assert report.accounts_redeleted == 1 and report.sessions_revoked >= 1
        assert alice.get("/api/me").status_code == 200
        with db.read() as s:
            assert s.scalar(select(User.status).where(User.id == alice.user_id)) == "active"
        with db.write() as s:  # nothing else: the test leaves no pending state
            s.execute(update(DeletionRecord).values(shipped_at=utcnow()))
    finally:
        e.close()


def test_a_batch_spanning_days_is_read_from_any_day(db, tmp_path):
    store = FileBlobStore(tmp_path / "blobs")
    now = utcnow()
    with db.write() as s:
        for subject, at in (("yesterday", now - timedelta(days=1)), ("today", now)):
            s.add(DeletionRecord(id=uuid.uuid4().hex, kind="object", subject=subject,
                                 reason="purged", recorded_at=at))
    ledger.ship(db, store)  # one object, named by yesterday's record
    assert len(list(store.list_keys(ledger.PREFIX))) == 1
    found = [e.subject for e in ledger.read_shipped(store, now - timedelta(minutes=1))]
    assert found == ["today"]
