"""Hot statements on the driver (``storage.driver.DriverStatement``): the submission's
INSERT and the space lookup run on psycopg directly on PostgreSQL. They must write what
SQLAlchemy would have written, fail with SQLAlchemy's errors (so a replay, a race and a
lost connection are handled as before), and give way to SQLAlchemy while something
listens to the engine's statements (tracing)."""
from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import Integer, any_, bindparam, event, func, insert, select, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DBAPIError, IntegrityError

from storage.db import ConnectionLost, Database
from storage.driver import DriverStatement, pipelined
from storage.errors import DatabaseBusy
from storage.models import AuditLog, Operation, OutboxMessage, User
from tests.support import services


@pytest.fixture
def pg_db(request):
    services.need(services.postgres_error())
    url = request.getfixturevalue("postgres_database")
    database = Database(url)
    yield database
    database.dispose()


@pytest.fixture
def driver_runs(monkeypatch, backend) -> list[str]:
    """The statements run on the driver itself (none on SQLite)."""
    runs: list[str] = []
    real = DriverStatement._first

    def spy(self, conn, params, **kw):
        runs.append(self._for(conn.dialect).sql)
        return real(self, conn, params, **kw)

    monkeypatch.setattr(DriverStatement, "_first", spy)
    return runs


def _create(client, space_id: str, name: str) -> str:
    r = client.post("/api/resources", json={"space_id": space_id, "name": name,
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    return str(r.json["id"])


def _recorded(db: Database, op_id: str) -> dict:
    with db.read() as s:
        op = s.get(Operation, op_id)
        outbox = s.scalars(select(OutboxMessage).where(OutboxMessage.subject_id == op_id)).one()
        audit = s.scalars(select(AuditLog).where(AuditLog.target_id == op_id)).one()
        return {
            "operation": {c: getattr(op, c) for c in (
                "kind", "status", "actor_id", "scope_id", "attempts", "max_attempts",
                "next_attempt_at", "trace_context")},
            "payload_keys": sorted(op.payload), "unit_type": op.payload["unit_type"],
            "created_at": (type(op.created_at), op.created_at.utcoffset()),
            "outbox": (outbox.actor_name, outbox.queue_name, outbox.delay_ms,
                       outbox.send_attempts),
            "audit": (audit.action, audit.target_type, audit.actor_id, audit.space_id,
                      audit.details, type(audit.at), audit.at.utcoffset())}


def test_a_submission_on_the_driver_records_what_sqlalchemy_records(world, db, backend,
                                                                    driver_runs):
    """The same request recorded on the driver (PostgreSQL; SQLAlchemy on SQLite) and
    through SQLAlchemy (a statement listener attached: the way tracing runs) stores the
    same operation, outbox and audit rows."""
    alice = world.user("alice")
    space = alice.personal_space_id
    plain = _create(alice, space, "on the driver")
    # On PostgreSQL the space lookup and the INSERT ran on the driver; never on SQLite.
    assert len(driver_runs) == (2 if backend == "postgres" else 0)
    seen: list[str] = []

    def listen(conn, cursor, statement, params, context, executemany):
        seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", listen)
    try:
        traced = _create(alice, space, "through sqlalchemy")
    finally:
        event.remove(db.engine, "before_cursor_execute", listen)
    assert any(s.lstrip().startswith(("WITH", "INSERT INTO operations")) for s in seen)
    assert len(driver_runs) == (2 if backend == "postgres" else 0)  # none while listened
    assert _recorded(db, plain) == _recorded(db, traced)
    # Both answer a replay with the operation they recorded.
    for op_id in (plain, traced):
        assert alice.get(f"/api/operations/{op_id}").status_code == 200


def test_the_driver_is_used_on_postgresql_only_while_nobody_listens(pg_db):
    stmt = DriverStatement(select(text("1")))
    with pg_db.write() as s:
        conn = s.connection()
        assert stmt._direct(conn)
        event.listen(pg_db.engine, "before_cursor_execute", lambda *a: None)
        assert not stmt._direct(conn)
    sqlite = Database("sqlite://")
    try:
        with sqlite.write() as s:
            assert not stmt._direct(s.connection())
            assert stmt.first(s.connection(), {}) == (1,)
    finally:
        sqlite.dispose()


def test_an_error_on_the_driver_is_sqlalchemys_and_rolls_back(pg_db):
    """A unique violation is SQLAlchemy's IntegrityError (the submission's retry and
    replay handling catch that); the transaction rolls back; the connection is reused."""
    user_id = uuid.uuid4().hex
    row = {"id": user_id, "username": "dup", "username_key": f"dup-{user_id[:8]}",
           "created_at": datetime.now(UTC), "status": "active"}
    add_user = DriverStatement(insert(User).returning(User.id))
    with pg_db.write() as s:
        assert add_user.first(s.connection(), row) == (user_id,)
        pid = s.execute(text("SELECT pg_backend_pid()")).scalar_one()
    with pytest.raises(IntegrityError), pg_db.write() as s:
        s.execute(text("SELECT 1"))
        add_user.first(s.connection(), {**row, "id": uuid.uuid4().hex})
    with pytest.raises(DBAPIError) as caught, pg_db.write() as s:
        DriverStatement(select(text("1 / 0"))).first(s.connection(), {})
    assert "division by zero" in str(caught.value)
    with pg_db.read() as s:
        assert s.scalar(select(User.id).where(User.username == "dup")) == user_id
        assert s.execute(text("SELECT pg_backend_pid()")).scalar_one() == pid


_PID = DriverStatement(select(text("pg_backend_pid()")))


def _lose_the_connection(pg_db: Database, admin_url: str) -> int:
    """Terminate the backend under a write transaction between two driver statements:
    the second must fail as ``ConnectionLost``. The dead backend's pid."""
    from sqlalchemy import create_engine
    admin = create_engine(admin_url)
    try:
        with pytest.raises(ConnectionLost), pg_db.write() as s:
            dead = _PID.first(s.connection(), {})[0]
            with admin.connect() as conn:
                conn.execute(text("SELECT pg_terminate_backend(:p, 10000)"), {"p": dead})
            _PID.first(s.connection(), {})  # on the terminated backend
    finally:
        admin.dispose()
    return int(dead)


def test_a_connection_lost_under_the_driver_is_replaced(pg_db, postgres_database):
    """A backend terminated under a pooled connection: the driver's statement fails as
    ``ConnectionLost`` (503, retryable), and the next transaction gets a new connection
    instead of the dead one."""
    dead = _lose_the_connection(pg_db, postgres_database)
    with pg_db.write() as s:
        assert _PID.first(s.connection(), {})[0] != dead


def test_a_detached_operation_reads_in_a_fresh_process():
    """``Operation.detached`` (the claim's and the submission's rows) in a process where
    no ORM object was built yet: the mappers are configured first (a worker's first claim
    failed on every message without that)."""
    import subprocess
    import sys
    code = ("from storage.models import Operation\n"
            "op = Operation.detached({'id': 'x', 'attempts': 2, 'payload': {'a': 1}})\n"
            "assert (op.id, op.attempts, op.payload, op.completed_at) == "
            "('x', 2, {'a': 1}, None), op\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_long_poll_reads_the_operation_as_sqlalchemy_reads_it(world, components, db,
                                                                 backend):
    """A long-poll's reads (``Database.read_one``, ``Operations.peek``) on the driver: the
    same values, of the same types (aware UTC datetimes, decoded JSON), as through
    SQLAlchemy."""
    from wharf.operations.service import _BY_ID
    alice = world.user("alice")
    op_id = _create(alice, alice.personal_space_id, "peeked")
    assert components.executor.run_batch(limit=10, worker_id="w1") == 1
    with db.read_engine.connect() as conn:
        assert _BY_ID._direct(conn) == (backend == "postgres")
    plain = db.read_one(_BY_ID, {"id": op_id})

    def listen(*args):
        pass

    event.listen(db.read_engine, "before_cursor_execute", listen)
    try:
        traced = db.read_one(_BY_ID, {"id": op_id})
    finally:
        event.remove(db.read_engine, "before_cursor_execute", listen)
    assert plain == traced
    assert {c: type(v) for c, v in plain.items()} == {c: type(v) for c, v in traced.items()}
    assert plain["status"] == "completed" and isinstance(plain["result"], dict)
    assert plain["completed_at"].utcoffset().total_seconds() == 0
    assert db.read_one(_BY_ID, {"id": "0" * 32}) is None


def test_a_statement_on_a_bare_connection_commits_with_it(pg_db):
    """On a connection SQLAlchemy has not begun, the driver's statement begins its
    transaction as ``execute`` would: the connection's ``commit()`` commits it (it would
    otherwise be a no-op, leaving the statement's transaction open)."""
    user_id = uuid.uuid4().hex
    add_user = DriverStatement(insert(User).returning(User.id))
    with pg_db.engine.connect() as conn:
        add_user.first(conn, {"id": user_id, "username": "bare",
                              "username_key": f"bare-{user_id[:8]}",
                              "created_at": datetime.now(UTC), "status": "active"})
        assert conn.in_transaction()
        conn.commit()
        with pg_db.read() as s:  # another connection sees it
            assert s.scalar(select(User.id).where(User.id == user_id)) == user_id


def test_a_lost_connection_discards_the_pools_older_connections(pg_db, postgres_database):
    """As ``Connection.execute`` does on a disconnect: the connections pooled before the
    failure are replaced too (a server restart or failover the checkout poll cannot see
    kills them all; the submission's one retry must not meet another dead one)."""
    held = [pg_db.engine.connect() for _ in range(2)]
    pids = {_PID.first(conn, {})[0] for conn in held}
    for conn in held:
        conn.close()  # both back in the pool, alive
    dead = _lose_the_connection(pg_db, postgres_database)
    assert dead in pids
    with pg_db.write() as s:  # the other one was alive, but pooled before the failure
        assert _PID.first(s.connection(), {})[0] not in pids


def test_errors_before_the_server_are_sqlalchemys_and_unsupported_statements_refused(pg_db):
    from sqlalchemy import bindparam
    from sqlalchemy.exc import StatementError
    needs = DriverStatement(select(text("1")).where(text("1 = :x").bindparams(
        bindparam("x", type_=Integer, required=True))))
    with pytest.raises(StatementError), pg_db.write() as s:
        needs.first(s.connection(), {})  # the parameter is missing
    computed = DriverStatement(select(User.id).where(User.id == bindparam(
        "id", callable_=lambda: "x")))
    with pytest.raises(ValueError, match="execution context"), pg_db.write() as s:
        computed.first(s.connection(), {})
    expanding = DriverStatement(select(User.id).where(User.id.in_(
        bindparam("ids", expanding=True))))
    with pytest.raises(ValueError, match="execution context"), pg_db.write() as s:
        expanding.first(s.connection(), {"ids": ["x"]})
    # created_at and status have Python-side defaults: not filled in here, so required
    # (never a silent NULL)
    with pytest.raises(StatementError, match="required"), pg_db.write() as s:
        DriverStatement(insert(User)).first(
            s.connection(), {"id": "x", "username": "x", "username_key": "x"})


@pytest.fixture
def pooled_in_autocommit(request) -> list[int]:
    """Every connection the test's PostgreSQL pools take back, checked: the pids of those
    that came back in the driver's autocommit (must stay empty). A pool listener leaves
    ``storage.driver`` on (it tests engine and dialect listeners only)."""
    found: list[int] = []
    engines = [request.getfixturevalue(name).engine
               for name in ("pg_db", "db") if name in request.fixturenames]

    def checkin(dbapi_conn, record) -> None:
        if dbapi_conn is not None and getattr(dbapi_conn, "autocommit", False):
            found.append(dbapi_conn.info.backend_pid)

    pools = [e.pool for e in engines if e.dialect.name == "postgresql"]
    for pool in pools:
        event.listen(pool, "checkin", checkin)
    yield found
    for pool in pools:
        event.remove(pool, "checkin", checkin)
    assert found == [], "connections pooled in autocommit"


@pytest.fixture
def commands(monkeypatch) -> list[bytes]:
    """The commands psycopg sends on its own (``BEGIN``, ``COMMIT``, ``ROLLBACK``)."""
    import psycopg
    sent: list[bytes] = []
    real = psycopg.Connection._exec_command

    def spy(self, command, *args, **kw):
        sent.append(bytes(command) if isinstance(command, bytes | bytearray) else
                    str(command).encode())
        return real(self, command, *args, **kw)

    monkeypatch.setattr(psycopg.Connection, "_exec_command", spy)
    return sent


def test_a_read_on_its_own_is_one_round_trip_and_leaves_transactions_as_they_were(
        pg_db, commands, pooled_in_autocommit):
    """``Database.read_one`` (a long-poll's read) runs its statement in the driver's
    autocommit: no ``BEGIN`` and no ``ROLLBACK`` of its own (three round trips become
    one). The connection goes back to the pool as it came: the next transaction on it
    is a transaction (its rollback undoes its write)."""
    with pg_db.engine.connect():
        pass  # (SQLAlchemy's first connect reads the server's settings in a transaction)
    commands.clear()
    pid = pg_db.read_one(_PID, {})["pg_backend_pid"]
    assert commands == []
    user_id = uuid.uuid4().hex
    with pg_db.engine.connect() as conn:
        assert _PID.first(conn, {})[0] == pid  # the same pooled connection
        assert not conn.connection.driver_connection.autocommit
        DriverStatement(insert(User).returning(User.id)).first(conn, {
            "id": user_id, "username": "undone", "username_key": f"undone-{user_id[:8]}",
            "created_at": datetime.now(UTC), "status": "active"})
        conn.rollback()
    assert pg_db.read_one(DriverStatement(select(User.id).where(User.id == user_id)),
                          {}) is None
    assert b"BEGIN" in commands and b"ROLLBACK" in commands  # what read_one spares


def test_a_read_on_its_own_that_fails_leaves_no_autocommit_behind(pg_db,
                                                                  pooled_in_autocommit):
    """A statement error, then a connection lost mid-statement, under ``read_one``:
    SQLAlchemy's errors as before, and no connection goes back to the pool in
    autocommit."""
    with pytest.raises(DBAPIError, match="division by zero"):
        pg_db.read_one(DriverStatement(select(text("1 / 0"))), {})
    with pg_db.engine.connect() as conn:
        _PID.first(conn, {})
        assert not conn.connection.driver_connection.autocommit
        conn.rollback()
    held = [pg_db.engine.connect() for _ in range(2)]
    pids = {_PID.first(conn, {})[0] for conn in held}
    for conn in held:
        conn.close()
    with pytest.raises(DatabaseBusy):  # the backend ends itself under the statement (503)
        pg_db.read_one(DriverStatement(select(text("pg_terminate_backend(pg_backend_pid())"))),
                       {})
    with pg_db.engine.connect() as conn:
        assert _PID.first(conn, {})[0] not in pids  # all pooled before it: replaced
        assert not conn.connection.driver_connection.autocommit


def test_a_create_submission_sends_no_begin_or_commit_and_pools_no_autocommit(
        world, components, db, backend, commands, pooled_in_autocommit):
    """A create's submission runs unbundled on PostgreSQL (``Database.unbundled``): its
    space lookup, then the one statement that records the operation, outbox and audit
    rows, each committing on its own; no ``BEGIN``/``COMMIT`` round trips. Its rows are
    all there, and the connection goes back to the pool out of autocommit. SQLite keeps
    its write transaction."""
    alice = world.user("alice")
    _create(alice, alice.personal_space_id, "warm")  # (first-connect reads, the token)
    commands.clear()
    op_id = _create(alice, alice.personal_space_id, "unbundled")
    components.dispatcher.flush()  # (the outbox mark, unbundled as well)
    if backend == "postgres":
        assert b"BEGIN" not in commands and b"COMMIT" not in commands, commands
        with db.engine.connect() as conn:
            assert not conn.connection.driver_connection.autocommit
    assert _recorded(db, op_id)["operation"]["status"] == "pending"
    with db.read() as s:
        outbox = s.scalars(select(OutboxMessage).where(OutboxMessage.subject_id == op_id))
        assert outbox.one().dispatched_at is not None  # marked, unbundled as well


def test_an_unbundled_session_that_fails_pools_no_autocommit(pg_db, pooled_in_autocommit,
                                                             monkeypatch):
    """An error inside an unbundled session: the statements before it stay committed (no
    transaction holds them), the error is SQLAlchemy's, and the pool gets the connection
    back out of autocommit."""
    user_id = uuid.uuid4().hex
    with pytest.raises(IntegrityError), pg_db.unbundled() as s:
        pid = _PID.first(s.connection(), {})[0]
        add = DriverStatement(insert(User).returning(User.id))
        row = {"id": user_id, "username": "kept", "username_key": f"kept-{user_id[:8]}",
               "created_at": datetime.now(UTC), "status": "active"}
        add.first(s.connection(), row)
        add.first(s.connection(), row)  # the same id again
    with pg_db.engine.connect() as conn:
        assert _PID.first(conn, {})[0] == pid
        assert not conn.connection.driver_connection.autocommit
    assert pg_db.read_one(DriverStatement(select(User.id).where(User.id == user_id)),
                          {}) == {"id": user_id}

    class Interrupt(BaseException):  # as Dramatiq's time limit interrupts a worker thread
        pass

    with pytest.raises(Interrupt), pg_db.unbundled() as s:
        _PID.first(s.connection(), {})
        raise Interrupt()
    import psycopg
    real = psycopg.Cursor.execute

    def interrupted(self, query, *args, **kw):  # under the statement, in autocommit
        if "interrupt me" in str(query):
            raise Interrupt()
        return real(self, query, *args, **kw)

    monkeypatch.setattr(psycopg.Cursor, "execute", interrupted)
    with pytest.raises(Interrupt):
        pg_db.read_one(DriverStatement(select(text("'interrupt me'"))), {})
    # (pooled_in_autocommit checks every connection these gave back)


def test_a_connection_lost_after_an_unbundled_record_answers_that_operation_once(
        world, db, backend, monkeypatch, pooled_in_autocommit):
    """Unbundled, the recording statement commits on its own: a connection that dies
    right after it (the operation recorded, the client not told) is ``ConnectionLost``,
    the submission runs again, and the Idempotency-Key answers the recorded operation:
    one operation, one outbox row, one audit row."""
    if backend != "postgres":
        pytest.skip("PostgreSQL: a server-side disconnect")
    from wharf.operations.service import Operations
    real = Operations.record_submission
    killed: list[str] = []

    def record_then_die(self, s, ctx, op_id, *args, **kw):
        op = real(self, s, ctx, op_id, *args, **kw)
        if not killed:
            killed.append(op_id)
            s.connection().execute(text("SELECT pg_terminate_backend(pg_backend_pid())"))
        return op

    monkeypatch.setattr(Operations, "record_submission", record_then_die)
    alice = world.user("alice")
    k = uuid.uuid4().hex
    r = alice.post("/api/resources", json={"space_id": alice.personal_space_id,
                                           "name": "once", "unit_type": "doc"},
                   headers={"Idempotency-Key": k})
    assert r.status_code == 202, r.text
    assert killed == [r.json["id"]]  # the answer is the operation recorded before the loss
    with db.read() as s:
        ops = s.scalars(select(Operation).where(Operation.idempotency_key == k)).all()
        assert [o.id for o in ops] == killed
        assert len(s.scalars(select(OutboxMessage).where(
            OutboxMessage.subject_id == killed[0])).all()) == 1
        assert len(s.scalars(select(AuditLog).where(
            AuditLog.target_id == killed[0])).all()) == 1


def _completed(db: Database, op_id: str) -> dict:
    """What a completed create wrote, ids and times left out (their types kept)."""
    from storage.models import Node, OperationAttempt, Resource, UnitResource
    with db.read() as s:
        op = s.get(Operation, op_id)
        node = s.get(Node, op.result["node_id"])
        resource = s.get(Resource, op.result["resource_id"])
        unit = s.get(UnitResource, op.result["resource_id"])
        attempt = s.scalars(select(OperationAttempt).where(
            OperationAttempt.operation_id == op_id)).one()
        audit = s.scalars(select(AuditLog).where(
            AuditLog.target_id == op.result["resource_id"])).one()
        return {
            "operation": (op.status, op.error, op.lease_owner, op.lease_expires_at,
                          op.next_attempt_at, op.completed_at == op.updated_at,
                          op.key_expires_at.utcoffset(), sorted(op.result)),
            "node": (node.space_id, node.parent_id, node.created_by, node.trash_batch_id,
                     node.created_at == node.updated_at, node.created_at.utcoffset()),
            "resource": (resource.node_id == node.id, resource.kind, resource.created_by),
            "unit": (unit.unit_id == op.result["unit_id"], unit.unit_type),
            "attempt": (attempt.number, attempt.outcome, attempt.error,
                        attempt.finished_at.utcoffset(), attempt.worker_id),
            "audit": (audit.action, audit.actor_type, audit.actor_id == op_id,
                      audit.space_id, sorted(audit.details), audit.at.utcoffset())}


def test_a_batch_completed_on_the_driver_writes_what_sqlalchemy_writes(
        world, components, db, backend, monkeypatch):
    """The claim, its attempt rows and the completion's executemany statements (nodes,
    resources, unit rows, audit rows, the operations marked completed, the attempts
    finished) on the driver (PostgreSQL) and through SQLAlchemy (a statement listener
    attached) store the same rows."""
    many: list[str] = []
    real = DriverStatement.executemany

    def spy(self, conn, rows):
        if self._direct(conn):
            words = self._for(conn.dialect).sql.split(None, 3)
            many.append(words[2] if words[0] == "INSERT" else words[1])
        return real(self, conn, rows)

    monkeypatch.setattr(DriverStatement, "executemany", spy)
    read: list[str] = []
    real_all = DriverStatement.all

    def spy_all(self, conn, params):
        if self._direct(conn):
            read.append(re.search(r"FROM\s+(\w+)", self._for(conn.dialect).sql).group(1))
        return real_all(self, conn, params)

    monkeypatch.setattr(DriverStatement, "all", spy_all)
    real_mappings = DriverStatement.mappings

    def spy_mappings(self, conn, params):
        if self._direct(conn):
            read.append(self._for(conn.dialect).sql.split(None, 2)[0])
        return real_mappings(self, conn, params)

    monkeypatch.setattr(DriverStatement, "mappings", spy_mappings)
    from wharf.operations import finish as finish_module
    real_sql = finish_module.execute_sql

    def spy_sql(conn, sql, params):
        many.append(sql.split(None, 2)[1])
        return real_sql(conn, sql, params)

    monkeypatch.setattr(finish_module, "execute_sql", spy_sql)
    alice = world.user("alice")
    space = alice.personal_space_id
    plain = [_create(alice, space, f"driver {i}") for i in range(2)]
    assert components.executor.run_batch(limit=10, worker_id="w1") == 2
    # (The inserts multi-row, the two completion updates one statement each: ``unnest``.)
    assert many == (["operation_attempts", "unit_checkpoints", "nodes", "resources",
                     "unit_resources", "audit_logs", "operations", "operation_attempts"]
                    if backend == "postgres" else [])
    # The claim (WITH picked … UPDATE) and its actors' accounts, then the completion's
    # lock of the batch, its actors' accounts and its webhook lookup (ids as one array).
    assert read == (["WITH", "users", "operations", "users", "webhooks"]
                    if backend == "postgres" else [])
    many.clear()

    def listen(*args):
        pass

    event.listen(db.engine, "before_cursor_execute", listen)
    try:
        traced = [_create(alice, space, f"sqlalchemy {i}") for i in range(2)]
        assert components.executor.run_batch(limit=10, worker_id="w1") == 2
    finally:
        event.remove(db.engine, "before_cursor_execute", listen)
    # none on the product database while listened (the UnitStore's engine is not)
    assert many == (["unit_checkpoints"] if backend == "postgres" else [])
    assert [_completed(db, o) for o in plain] == [_completed(db, o) for o in traced]
    assert _completed(db, plain[0])["operation"][0] == "completed"


def test_executemany_errors_are_sqlalchemys(pg_db):
    from sqlalchemy.exc import StatementError
    add = DriverStatement.insert_rows(User.__table__, ("id", "username", "username_key",
                                                       "created_at", "status"))
    rows = [{"id": uuid.uuid4().hex, "username": f"m{i}", "username_key": uuid.uuid4().hex,
             "created_at": datetime.now(UTC), "status": "active"} for i in range(2)]
    with pytest.raises(IntegrityError), pg_db.write() as s:
        add.executemany(s.connection(), [rows[0], {**rows[1], "id": rows[0]["id"]}])
    with pytest.raises(StatementError, match="username"), pg_db.write() as s:
        add.executemany(s.connection(), [rows[0], {k: v for k, v in rows[1].items()
                                                   if k != "username"}])
    with pg_db.read() as s:  # both rolled back
        assert s.scalar(select(User.id).where(User.id == rows[0]["id"])) is None


def test_executemany_binds_as_sqlalchemy_does(pg_db):
    """A row's value for a parameter the statement fills itself (a literal in
    ``.values()``) overrides it, as in ``conn.execute(statement, rows)``."""
    from sqlalchemy import bindparam, update
    ids = [uuid.uuid4().hex for _ in range(4)]
    add = DriverStatement.insert_rows(User.__table__, ("id", "username", "username_key",
                                                       "created_at", "status"))
    rename = update(User.__table__).where(User.id == bindparam("b_id")).values(
        username="renamed")
    with pg_db.write() as s:
        add.executemany(s.connection(), [
            {"id": i, "username": f"u{n}", "username_key": i, "created_at": datetime.now(UTC),
             "status": "active"} for n, i in enumerate(ids)])
        rows = [{"b_id": ids[0]}, {"b_id": ids[1], "username": "chosen"}]
        DriverStatement(rename).executemany(s.connection(), rows)
        s.connection().execute(rename, [{"b_id": ids[2]}, {"b_id": ids[3],
                                                           "username": "chosen"}])
        names = dict(s.execute(select(User.id, User.username).where(User.id.in_(ids))).all())
    assert [names[i] for i in ids] == ["renamed", "chosen", "renamed", "chosen"]


def _users(n: int) -> list[dict]:
    return [{"id": uuid.uuid4().hex, "username": f"p{uuid.uuid4().hex[:8]}",
             "username_key": uuid.uuid4().hex, "created_at": datetime.now(UTC),
             "status": "active"} for _ in range(n)]


_ADD_USERS = DriverStatement.insert_rows(User.__table__, ("id", "username", "username_key",
                                                          "created_at", "status"))
_USERS_BY_ID = DriverStatement(select(User.id, User.username, User.created_at).where(
    User.id == any_(bindparam("ids", type_=postgresql.ARRAY(User.id.type))))
    .order_by(User.username))


def test_pipelined_writes_are_in_the_transaction_and_mappings_read_as_sqlalchemy_does(
        pg_db):
    """Writes in a ``pipelined`` block are in the transaction when it ends, and
    ``mappings`` reads what SQLAlchemy reads (types processed, by name)."""
    rows = _users(3)
    ids = [r["id"] for r in rows]
    with pg_db.write() as s:
        conn = s.connection()
        with pipelined(conn):
            _ADD_USERS.executemany(conn, rows[:2])
            _ADD_USERS.executemany(conn, rows[2:])
        got = _USERS_BY_ID.mappings(conn, {"ids": ids})
        plain = [dict(r) for r in conn.execute(_USERS_BY_ID.statement,
                                               {"ids": ids}).mappings()]
    assert got == plain and [g["id"] for g in got] == [
        r["id"] for r in sorted(rows, key=lambda r: r["username"])]
    assert got[0]["created_at"].utcoffset() is not None  # processed as SQLAlchemy does


def _pipelined_write_that_fails(pg_db: Database, rows: list[dict],
                                expected: type[BaseException]):
    """Insert ``rows`` in a pipelined block that must fail with ``expected``; returns the
    psycopg connection it ran on."""
    with pytest.raises(expected), pg_db.write() as s:
        conn = s.connection()
        driver = conn.connection.driver_connection
        with pipelined(conn):
            _ADD_USERS.executemany(conn, rows)
    return driver


def test_a_pipelined_write_that_fails_is_sqlalchemys_error_and_rolls_back(
        pg_db, pooled_in_autocommit):
    rows = _users(2)
    with pytest.raises(IntegrityError), pg_db.write() as s:
        conn = s.connection()
        with pipelined(conn):
            _ADD_USERS.executemany(conn, rows[:1])
            _ADD_USERS.executemany(conn, [{**rows[1], "id": rows[0]["id"]}])  # duplicate
    with pg_db.write() as s:  # the pool's connection works, nothing was kept
        conn = s.connection()
        assert _USERS_BY_ID.all(conn, {"ids": [rows[0]["id"]]}) == []
        with pipelined(conn):
            _ADD_USERS.executemany(conn, rows)
    with pg_db.read() as s:
        assert s.scalar(select(func.count()).select_from(User).where(
            User.id.in_([r["id"] for r in rows]))) == 2


def test_an_interrupt_inside_a_pipeline_discards_its_connection(pg_db, monkeypatch,
                                                                pooled_in_autocommit):
    """A ``BaseException`` (a worker's time limit) in the middle of a pipeline leaves the
    connection's protocol state unknown: it is discarded, never pooled, and the next
    transaction works."""
    import psycopg

    class Interrupt(BaseException):
        pass

    real = psycopg.Cursor.executemany

    def interrupted(self, *args, **kw):
        real(self, *args, **kw)  # queued in the pipeline, not yet synced
        raise Interrupt

    rows = _users(1)
    monkeypatch.setattr(psycopg.Cursor, "executemany", interrupted)
    driver = _pipelined_write_that_fails(pg_db, rows, Interrupt)
    monkeypatch.setattr(psycopg.Cursor, "executemany", real)
    assert driver.closed  # discarded
    with pg_db.write() as s:
        conn = s.connection()
        assert _USERS_BY_ID.all(conn, {"ids": [rows[0]["id"]]}) == []
    with pg_db.read() as s:
        assert s.scalar(select(User.id).where(User.id == rows[0]["id"])) is None


def test_a_pipeline_is_a_plain_block_while_something_listens(pg_db):
    rows = _users(1)
    seen: list[str] = []

    def listen(conn, cursor, statement, *args):
        seen.append(statement.split(None, 3)[2] if statement.startswith("INSERT") else "")

    event.listen(pg_db.engine, "before_cursor_execute", listen)
    try:
        with pg_db.write() as s:
            conn = s.connection()
            with pipelined(conn):
                _ADD_USERS.executemany(conn, rows)
            assert len(_USERS_BY_ID.mappings(conn, {"ids": [rows[0]["id"]]})) == 1
    finally:
        event.remove(pg_db.engine, "before_cursor_execute", listen)
    assert "users" in seen  # SQLAlchemy ran it


def test_a_pipeline_psycopg_could_not_leave_never_goes_back_to_the_pool(
        pg_db, monkeypatch, pooled_in_autocommit):
    """If leaving the pipeline fails half way (an interrupt in its sync), the connection
    is still in pipeline mode: it is discarded, not pooled (its rollback there could
    wait forever), and the next transaction works."""
    import psycopg

    def stuck(self, *exc):
        raise RuntimeError("interrupted while leaving the pipeline")

    rows = _users(1)
    monkeypatch.setattr(psycopg.Pipeline, "__exit__", stuck)
    driver = _pipelined_write_that_fails(pg_db, rows, RuntimeError)
    monkeypatch.undo()
    assert driver.closed
    with pg_db.read() as s:
        assert s.scalar(select(User.id).where(User.id == rows[0]["id"])) is None


def test_creating_one_unit_sends_no_begin_or_commit(components, backend, commands):
    """A create's unit (``UnitStore.create_unit``, a batch of one's side effect) is one
    insert that commits on its own on PostgreSQL: no ``BEGIN``/``COMMIT`` round trips.
    It is still idempotent on its id and still refuses another type, and nothing is left
    in autocommit for the next transaction on the pool."""
    from storage.unitstore import UnitConflict
    store = components.unitstore
    store.create_unit(uuid.uuid4().hex, "doc")  # (first-connect reads)
    unit_id = uuid.uuid4().hex
    commands.clear()
    created = store.create_unit(unit_id, "doc")
    if backend == "postgres":
        assert b"BEGIN" not in commands and b"COMMIT" not in commands, commands
    assert (created.id, created.unit_type, created.revision) == (unit_id, "doc", 0)
    again = store.create_unit(unit_id, "doc")
    assert (again.id, again.revision, again.updated_at) == (unit_id, 0, created.updated_at)
    with pytest.raises(UnitConflict):
        store.create_unit(unit_id, "sheet")
    if backend == "postgres":
        with store.db.engine.connect() as conn:
            assert not conn.connection.driver_connection.autocommit


def test_insert_rows_is_one_statement_over_arrays(pg_db, monkeypatch):
    """``insert_rows`` on the driver: one ``INSERT … SELECT * FROM unnest(…)`` for all
    the rows, every row stored as SQLAlchemy would store it (JSON objects and arrays,
    NULL, aware datetimes, text needing quotes in an array), and a failing row fails
    the whole call."""
    import psycopg

    from storage.models import AuditLog
    sent: list[str] = []
    real = psycopg.Cursor.execute

    def spy(self, query, params=None, **kw):
        if str(query).startswith("INSERT INTO audit_logs"):
            sent.append(str(query))
        return real(self, query, params, **kw)

    monkeypatch.setattr(psycopg.Cursor, "execute", spy)
    add = DriverStatement.insert_rows(AuditLog.__table__)
    now = datetime.now(UTC)
    details = [None, {"i": 1, "s": 'é\u2028 "q" {a,b}'}, {"list": [1, "x", None]}, {}]
    rows = [{"id": uuid.uuid4().hex, "at": now, "actor_type": "system",
             "actor_id": f'a{i} "{{,}}" \\', "action": "probe", "target_type": "t",
             "target_id": None, "space_id": None, "request_id": None, "client_ip": None,
             "user_agent": None, "details": details[i % 4]} for i in range(7)]
    with pg_db.write() as s:
        add.executemany(s.connection(), rows)
    assert len(sent) == 1 and "unnest(" in sent[0]
    with pg_db.read() as s:
        got = {r.actor_id: (r.details, r.at) for r in s.execute(
            select(AuditLog).where(AuditLog.action == "probe")).scalars()}
    assert got == {f'a{i} "{{,}}" \\': (details[i % 4], now) for i in range(7)}
    dup = [{**rows[0], "id": uuid.uuid4().hex, "actor_id": "b"} for _ in range(4)]
    dup[3]["id"] = rows[6]["id"]  # one row fails: nothing of the call stays
    with pytest.raises(IntegrityError), pg_db.write() as s:
        add.executemany(s.connection(), dup)
    with pg_db.read() as s:
        assert s.scalar(select(AuditLog.id).where(AuditLog.actor_id == "b")) is None
