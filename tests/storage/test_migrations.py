"""The startup "prepare" step (migrations/prepare.py) on SQLite and PostgreSQL.

- a new database is created at head; running again is a no-op that makes no backup;
- a partial or foreign schema, and a revision this code does not know, are refused and left
  untouched;
- an upgrade from an older revision first writes a consistent SQLite backup (reported), then
  upgrades in one transaction: a failing upgrade leaves the database as it was.

Only one or two real revisions exist, so "an older revision" is simulated honestly: the
test copies the real script directory, adds one extra revision on top of the real head, and
points ``migrations.prepare.HERE`` at the copy. The database is built at the real head first,
so the code under test sees exactly what a deployed database one release behind looks like.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import textwrap
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text

import migrations.prepare as prep
from migrations.prepare import MigrationRefused, backup_sqlite, current_revision, prepare
from storage.db import Database, make_engines
from tests.conftest import PASSWORD, make_settings
from tests.support import services
from wharf.identity.service import Identity
from wharf.infra.context import RequestContext

EXTRA_REVISION = "9999testextra"
# Tables no model declares: the SQLite search indexes (FTS5 tables and their shadows).
SEARCH_INDEX_PREFIXES = ("node_name_fts", "search_documents_fts")
CORE_TABLES = {"users", "password_credentials", "login_sessions", "spaces", "space_members",
               "nodes", "audit_logs"}


def _quiet(*_args) -> None:
    pass


# --- fixtures ------------------------------------------------------------------------------

@pytest.fixture(params=["sqlite", "postgres"])
def mig_url(request, tmp_path):
    """An empty database of each kind: a new SQLite file, or a throw-away PostgreSQL DB."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'wharf.db'}"
        return
    services.need(services.postgres_error())
    name = f"wharf_mig_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield services.POSTGRES_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def engine(mig_url):
    """Wharf's own write engine (BEGIN IMMEDIATE, foreign_keys=ON on SQLite)."""
    eng, reader = make_engines(mig_url, 5000)
    yield eng
    eng.dispose()
    if reader is not eng:
        reader.dispose()


def _is_sqlite(engine) -> bool:
    return engine.dialect.name == "sqlite"


def _sqlite_path(engine) -> Path:
    return Path(engine.url.database)


def _backups(engine) -> list[Path]:
    if not _is_sqlite(engine):
        return []
    path = _sqlite_path(engine)
    return sorted(path.parent.glob(f"{path.name}.backup-*"))


def _tables(engine) -> set[str]:
    with engine.connect() as conn:
        return set(inspect(conn).get_table_names())


def _counts(engine, tables) -> dict[str, int]:
    with engine.connect() as conn:
        return {t: conn.execute(text(f'SELECT count(*) FROM "{t}"')).scalar_one() for t in tables}


def _drop(conn, table: str, postgres: bool) -> None:
    # IF EXISTS: dropping an FTS5 table (SQLite's name search index) drops its shadow tables
    conn.execute(text(f'DROP TABLE IF EXISTS "{table}"' + (" CASCADE" if postgres else "")))


def _script_dir_with(tmp_path: Path, upgrade_body: str) -> Path:
    """A copy of the real migrations directory plus one revision on top of the real head."""
    target = tmp_path / "scripts"
    shutil.copytree(prep.HERE, target, ignore=shutil.ignore_patterns("__pycache__"))
    (target / "versions" / f"{EXTRA_REVISION}_extra.py").write_text(textwrap.dedent(f'''\
        """test-only revision on top of the real head"""
        from alembic import op
        import sqlalchemy as sa

        revision = {EXTRA_REVISION!r}
        down_revision = {prep.head_revision()!r}
        branch_labels = None
        depends_on = None


        def upgrade() -> None:
        ''') + textwrap.indent(textwrap.dedent(upgrade_body), "    "))
    return target


# An upgrade that, on SQLite, rebuilds `users` (the table every other table references) the
# way Alembic batch mode does for most changes: create a copy, move the rows, drop the
# original, rename. PostgreSQL alters in place.
REBUILD_USERS = """\
sqlite = op.get_bind().dialect.name == "sqlite"
with op.batch_alter_table("users", recreate="always" if sqlite else "auto") as batch:
    batch.add_column(sa.Column("nickname", sa.String(50), nullable=True))
"""


def _seed(url: str, tmp_path: Path) -> None:
    """A user with a credential, a personal space, a login session and audit rows."""
    settings = make_settings(tmp_path, url)
    db = Database(url)
    identity = Identity(settings)
    try:
        identity.register(db, RequestContext(), "alice", PASSWORD)
        identity.login(db, RequestContext(), "alice", PASSWORD)
    finally:
        db.dispose()


# --- fresh, re-run, concurrent --------------------------------------------------------------

def test_new_database_is_created_at_head(engine):
    head = prep.head_revision()
    messages: list[str] = []
    result = prepare(engine, report=messages.append)
    assert (result.before, result.after, result.changed, result.backup_path) == \
        (None, head, True, None)
    assert current_revision(engine)[0] == head
    assert _tables(engine) >= CORE_TABLES
    assert messages == [f"wharf: database migrated empty -> {head}"]
    assert _backups(engine) == []


def test_rerun_is_a_noop_without_backup(engine):
    prepare(engine, report=_quiet)
    tables = _tables(engine)
    messages: list[str] = []
    result = prepare(engine, report=messages.append)
    assert (result.before, result.after, result.changed, result.backup_path) == \
        (prep.head_revision(), prep.head_revision(), False, None)
    assert messages == []
    assert _tables(engine) == tables
    assert _backups(engine) == []


def test_empty_revision_table_counts_as_new(engine):
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE alembic_version "
                          "(version_num VARCHAR(32) NOT NULL PRIMARY KEY)"))
    result = prepare(engine, report=_quiet)
    assert result.before is None and result.changed and result.backup_path is None
    assert _tables(engine) >= CORE_TABLES
    assert _backups(engine) == []


def test_concurrent_prepares_queue_and_migrate_once(mig_url):
    """Two processes starting together: one migrates, the other then finds it at head."""
    engines = [make_engines(mig_url, 30000) for _ in range(2)]
    barrier = threading.Barrier(2)
    results, errors = [], []

    def run(eng):
        try:
            barrier.wait(timeout=10)
            results.append(prepare(eng, report=_quiet))
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w, _ in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for w, r in engines:
        w.dispose()
        if r is not w:
            r.dispose()
    assert errors == []
    assert sorted(r.changed for r in results) == [False, True]
    assert all(r.after == prep.head_revision() for r in results)


# --- refusals -------------------------------------------------------------------------------

def test_partial_schema_without_stamp_is_refused(engine):
    prepare(engine, report=_quiet)
    postgres = not _is_sqlite(engine)
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM alembic_version"))
    for table in sorted(_tables(engine) - {"users", "alembic_version"}):
        with engine.begin() as conn:
            _drop(conn, table, postgres)
    before = _tables(engine)
    assert before == {"users", "alembic_version"}
    with pytest.raises(MigrationRefused, match=r"no Wharf revision stamp \(users"):
        prepare(engine, report=_quiet)
    assert _tables(engine) == before
    assert current_revision(engine)[0] is None
    assert _backups(engine) == []


def test_foreign_database_is_refused(engine):
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE invoices (id INTEGER PRIMARY KEY)"))
    with pytest.raises(MigrationRefused, match="not a Wharf database"):
        prepare(engine, report=_quiet)
    assert _tables(engine) == {"invoices"}


def test_unknown_revision_is_refused_and_named(engine):
    prepare(engine, report=_quiet)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'ffffffff'"))
    tables = _tables(engine)
    with pytest.raises(MigrationRefused, match=r"revision 'ffffffff'.*newer Wharf"):
        prepare(engine, report=_quiet)
    assert current_revision(engine)[0] == "ffffffff"
    assert _tables(engine) == tables
    assert _backups(engine) == []


# --- upgrades from an older revision ----------------------------------------------------------

def test_upgrade_backs_up_first_and_keeps_every_row(engine, mig_url, tmp_path, monkeypatch):
    old_head = prep.head_revision()
    prepare(engine, report=_quiet)
    _seed(mig_url, tmp_path)
    tables = _tables(engine) - {"alembic_version"}
    counts = _counts(engine, tables)
    assert counts["users"] == 1 and counts["login_sessions"] == 1 and counts["spaces"] == 1

    monkeypatch.setattr(prep, "HERE", _script_dir_with(tmp_path, REBUILD_USERS))
    messages: list[str] = []
    result = prepare(engine, report=messages.append)

    assert (result.before, result.after, result.changed) == (old_head, EXTRA_REVISION, True)
    assert current_revision(engine)[0] == EXTRA_REVISION
    assert "nickname" in {c["name"] for c in inspect(engine).get_columns("users")}
    # Rebuilding `users` neither cascade-deleted nor orphaned anything.
    assert _counts(engine, tables) == counts
    assert messages[-1] == f"wharf: database migrated {old_head} -> {EXTRA_REVISION}"

    if not _is_sqlite(engine):
        assert result.backup_path is None
        assert len(messages) == 1
        return

    backup = result.backup_path
    assert backup is not None and backup.exists()
    assert backup.parent == _sqlite_path(engine).parent
    assert re.fullmatch(rf"wharf\.db\.backup-{re.escape(old_head)}-\d{{8}}T\d{{6}}Z", backup.name)
    assert _backups(engine) == [backup]
    assert messages[0] == (f"wharf: backed up {_sqlite_path(engine)} to {backup} before "
                           f"migrating {old_head} -> {EXTRA_REVISION}")
    # The backup is the database as it was before the upgrade, complete and consistent.
    copy = sqlite3.connect(str(backup))
    try:
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert copy.execute("SELECT version_num FROM alembic_version").fetchall() == [(old_head,)]
        assert "nickname" not in {r[1] for r in copy.execute("PRAGMA table_info(users)")}
        assert {t: copy.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
                for t in tables} == counts
    finally:
        copy.close()
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall() == []
        # The pooled connection the upgrade used has its foreign keys back on.
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar_one() == 1

    # Once at the new head, preparing again changes nothing and copies nothing.
    again = prepare(engine, report=_quiet)
    assert not again.changed and again.backup_path is None
    assert _backups(engine) == [backup]


def test_failing_upgrade_changes_nothing(engine, tmp_path, monkeypatch):
    old_head = prep.head_revision()
    prepare(engine, report=_quiet)
    tables = _tables(engine)
    monkeypatch.setattr(prep, "HERE", _script_dir_with(tmp_path, """\
        op.create_table("half_done", sa.Column("id", sa.Integer, primary_key=True))
        raise RuntimeError("boom in the middle of the upgrade")
        """))
    with pytest.raises(RuntimeError, match="boom"):
        prepare(engine, report=_quiet)
    assert current_revision(engine)[0] == old_head
    assert _tables(engine) == tables
    if _is_sqlite(engine):
        assert len(_backups(engine)) == 1  # written before the attempt, kept for the operator


def test_sqlite_upgrade_leaving_orphans_is_rolled_back(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'wharf.db'}"
    engine, reader = make_engines(url)
    try:
        old_head = prep.head_revision()
        prepare(engine, report=_quiet)
        monkeypatch.setattr(prep, "HERE", _script_dir_with(tmp_path, """\
            op.execute("INSERT INTO spaces (id, type, name, owner_id, public_read, created_at, "
                       "updated_at) VALUES ('" + "a" * 32 + "', 'team', 'x', '" + "b" * 32 +
                       "', 0, '2026-01-01 00:00:00', '2026-01-01 00:00:00')")
            """))
        with pytest.raises(MigrationRefused, match="violating foreign keys"):
            prepare(engine, report=_quiet)
        assert current_revision(engine)[0] == old_head
        assert _counts(engine, ["spaces"]) == {"spaces": 0}
    finally:
        engine.dispose(), reader.dispose()


# --- the backup itself -------------------------------------------------------------------------

def test_backup_sqlite_is_a_consistent_copy_including_the_wal(tmp_path, monkeypatch):
    path = tmp_path / "wharf.db"
    engine, reader = make_engines(f"sqlite:///{path}")
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
            for i in range(500):
                conn.exec_driver_sql("INSERT INTO t (v) VALUES (?)", (f"row {i}",))
        # The engine keeps its connection open, so the rows are still in the WAL file.
        wal = path.with_name(path.name + "-wal")
        assert wal.exists() and wal.stat().st_size > 0

        fixed = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
        monkeypatch.setattr(prep, "utcnow", lambda: fixed)
        first = backup_sqlite(path, "0001")
        second = backup_sqlite(path, "0001")
        assert first.name == "wharf.db.backup-0001-20260102T030405Z"
        assert second.name == "wharf.db.backup-0001-20260102T030405Z.2"  # never overwritten
        for copy_path in (first, second):
            copy = sqlite3.connect(str(copy_path))
            try:
                assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
                assert copy.execute("SELECT count(*), max(v) FROM t").fetchone() == (500, "row 99")
            finally:
                copy.close()
    finally:
        engine.dispose(), reader.dispose()


def _on_this_dialect(dialect: str):
    """Leave out the model's indexes made for another dialect only (``ddl_if``)."""
    def include(obj, name, type_, reflected, compare_to) -> bool:
        if type_ == "table" and reflected and compare_to is None and name.startswith(
                SEARCH_INDEX_PREFIXES):
            return False  # the search indexes (FTS5 and their shadow tables; 0033, 0035)
        only = getattr(obj, "_ddl_if", None) if type_ == "index" else None
        return only is None or only.dialect in (None, dialect)
    return include


def test_the_migrated_schema_is_the_models_schema(engine):
    """Alembic's autogenerate finds nothing to add, drop or alter between the database the
    migrations build and ``storage.models`` (tables, columns, types, nullability, indexes,
    unique constraints, foreign keys): a model change without its migration fails here."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from storage.models import Base

    prepare(engine, report=_quiet)
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={
            "compare_type": True, "include_object": _on_this_dialect(conn.dialect.name)})
        diff = [d for d in compare_metadata(ctx, Base.metadata)
                if not (isinstance(d, tuple) and d[0] == "remove_table"
                        and d[1].name == "alembic_version")]
    assert diff == []


def _back_to(engine, revision: str) -> None:
    """Undo the revisions after ``revision`` (their downgrades), as if the database had
    been migrated to it only."""
    with engine.connect() as conn:
        sqlite = engine.dialect.name == "sqlite"
        if sqlite:
            # as prepare() upgrades: a batch-mode table rebuild (0032's of spaces) must not
            # cascade into the rows that reference the table
            prep._set_sqlite_foreign_keys(conn, False)
        try:
            with conn.begin():
                cfg = prep.alembic_config()
                cfg.attributes["connection"] = conn
                command.downgrade(cfg, revision)
        finally:
            if sqlite:
                prep._set_sqlite_foreign_keys(conn, True)


def test_0018_keeps_an_index_built_beforehand_and_rebuilds_an_invalid_one(engine):
    """``ix_audit_actor`` may be built by an operator beforehand (CREATE INDEX
    CONCURRENTLY): 0018 keeps it; one such build that failed left it INVALID, and 0018
    builds it again (PostgreSQL; on SQLite it is only kept)."""
    prepare(engine, report=_quiet)
    with engine.begin() as conn:
        # back to 0018 (the revisions after it undone), then "0017 plus the index"
        cfg = prep.alembic_config()
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0018")
        conn.execute(text("UPDATE alembic_version SET version_num = '0017'"))
        if engine.dialect.name == "postgresql":
            conn.execute(text("UPDATE pg_index SET indisvalid = false "
                              "WHERE indexrelid = 'ix_audit_actor'::regclass"))
    result = prepare(engine, report=_quiet)
    assert (result.before, result.after) == ("0017", prep.head_revision())
    assert any(ix["name"] == "ix_audit_actor" and ix["column_names"] == ["actor_id", "id"]
               for ix in inspect(engine).get_indexes("audit_logs"))
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            assert conn.execute(text("SELECT indisvalid FROM pg_index "
                                     "WHERE indexrelid = 'ix_audit_actor'::regclass")
                                ).scalar_one() is True


def test_0020_rewrites_merge_results_and_their_deliveries_as_bounded_summaries(
        engine, mig_url, tmp_path):
    """A merge result written before 0020 (20 units x 20 conflicts of three 4,000-char
    values: 4.8 MB) and its webhook delivery's copy become the summary a merge writes
    now, under 64 KiB, the counts kept; other operations are left as they were."""
    from sqlalchemy.orm import Session

    from storage.models import Operation, User, Webhook, WebhookDelivery
    from wharf.infra.ids import new_id

    prepare(engine, report=_quiet)
    _seed(mig_url, tmp_path)
    big = "x" * 4000
    units = [{"unit_id": new_id(), "resource_id": new_id(), "node_id": None,
              "outcome": "conflict", "trunk_revision_before": 2, "trunk_revision_after": 2,
              "conflict_count": 25,
              "conflicts": [{"path": f"/body/k{i}", "base": big, "trunk": big, "draft": big}
                            for i in range(20)]} for _ in range(20)]
    old = {"worktree_id": new_id(), "state": "draft", "assets_published": 0,
           "counts": {"conflict": 20}, "units": units}
    other = {"worktree_id": new_id(), "kind_of": "untouched", "units": units[:1]}
    with Session(engine) as s, s.begin():
        alice = s.query(User).one().id
        merge_op, other_op, hook = new_id(), new_id(), new_id()
        for op_id, kind, result in ((merge_op, "merge_worktree", old),
                                    (other_op, "create_worktree", other)):
            s.add(Operation(id=op_id, kind=kind, status="completed", actor_id=alice,
                            request_fingerprint="f", payload={}, result=result,
                            max_attempts=5))
        s.add(Webhook(id=hook, user_id=alice, url="https://example.com/h",
                      events=["operation.completed"], secret="s"))
        s.flush()
        s.add(WebhookDelivery(webhook_id=hook, event_type="operation.completed",
                              subject_id=merge_op, payload={"operation": {
                                  "id": merge_op, "kind": "merge_worktree", "result": old}}))
    _back_to(engine, "0019")
    result = prepare(engine, report=_quiet)
    assert (result.before, result.after) == ("0019", prep.head_revision())
    with Session(engine) as s:
        new = s.get(Operation, merge_op).result
        sent = s.query(WebhookDelivery).one().payload["operation"]["result"]
        assert s.get(Operation, other_op).result == other
    assert new == sent and len(json.dumps(new)) < 64 * 1024
    assert new["counts"] == {"conflict": 20} and len(new["units"]) == 20
    assert [u["conflict_count"] for u in new["units"]] == [25] * 20
    shown = [c for u in new["units"] for c in u["conflicts"]]
    assert len(shown) == 10 and [len(u["conflicts"]) for u in new["units"][:4]] == [3, 3, 3, 1]
    assert shown[0]["path"] == "/body/k0" and shown[0]["draft"]["$truncated"] is True
    assert shown[0]["draft"]["size"] == 4002


def test_0021_drops_the_membership_rows_of_space_owners(engine, mig_url, tmp_path):
    """Before ownership changes dropped it, an admin who inherited a team space (or a user
    ``wharf space-owner`` named) kept their member row; 0021 deletes such rows, and only
    those."""
    from storage.models import Space, SpaceMember
    from wharf.infra.ids import new_id
    prepare(engine, report=_quiet)
    settings = make_settings(tmp_path, mig_url)
    db = Database(mig_url)
    try:
        ids = {name: Identity(settings).register(db, RequestContext(), name, PASSWORD)[0].id
               for name in ("alice", "bob", "carol")}
        sid = new_id()
        with db.write() as s:
            s.add(Space(id=sid, type="team", name="Team", owner_id=ids["bob"],
                        public_read=False))
            s.flush()
            s.add_all([SpaceMember(space_id=sid, user_id=ids["bob"], role="admin"),
                       SpaceMember(space_id=sid, user_id=ids["carol"], role="editor")])
    finally:
        db.dispose()
    _back_to(engine, "0020")
    result = prepare(engine, report=_quiet)
    assert (result.before, result.after) == ("0020", prep.head_revision())
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT user_id, role FROM space_members")).all()
    assert rows == [(ids["carol"], "editor")]
