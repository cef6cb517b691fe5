"""Hot statements executed on the driver's connection, not through SQLAlchemy's.

``Connection.execute`` costs about 0.1 ms of CPU per call beyond the driver's own work
(an execution context, a cursor result and its metadata, the compiled-cache lookup): a
third of a one-statement transaction, and, on the paths that run once per request or
per operation, several percent of a process's CPU (``docs/benchmarks.md``).
:class:`DriverStatement` compiles a Core statement once and, on PostgreSQL (psycopg),
runs it on the psycopg connection under a SQLAlchemy ``Connection``: the same transaction
and the same parameters (bound through the statement's types, as SQLAlchemy binds them).
Anywhere else (SQLite), or while something listens to the engine's statements or errors
or logs them (tracing, statement counters, ``echo``), SQLAlchemy executes it.

A statement's values must all be given: one whose compiled form needs SQLAlchemy's
execution context (Python-side column defaults or ``onupdate`` values, expanding ``IN``
parameters, literal-execute or escaped parameter names) is refused when first compiled.
Results go through the statement's column types (an aware UTC datetime, say) when the
statement names its columns (a Core SELECT, or RETURNING); a ``text()`` statement's come
back as the driver returns them. Any failure, from binding a parameter to a dead
connection, goes through SQLAlchemy's own handling (``_handle_dbapi_exception``): the same
exception types, and on a disconnect the pool's older connections discarded too.

A statement that is a whole read on its own (``alone=True`` on a connection with no
transaction: a long-poll's read of its operation) runs in the driver's autocommit: one
round trip, where a transaction takes three (psycopg sends ``BEGIN`` on its own, then
the statement, then the pool's ``ROLLBACK``). One statement sees one snapshot either way.
"""
from __future__ import annotations

import contextlib
import re
import weakref
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, Table, any_, bindparam, insert
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql import Executable
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import BindParameter

_PARAM = re.compile(r"%\((\w+)\)s::([A-Z][A-Z ]*)")
_ONE = r"%\(\w+\)s::[A-Z][A-Z ]*"
_TUPLE = re.compile(rf"\({_ONE}(?:, {_ONE})*\)")  # one row: each parameter cast


class _Compiled(NamedTuple):
    compiled: SQLCompiler
    sql: str
    binds: dict[str, Any]  # bind name -> the type's bind processor
    results: list[tuple[int, Any]]  # column position -> the type's result processor
    names: list[str] | None  # the columns' names, when the statement names them
    # executemany: each row's parameters (bind name, row key, processor), and the
    # statement's own values (literals in it: bind name, row key that overrides it,
    # processor, the value processed once)
    per_row: list[tuple[str, str, Any]]
    fixed: list[tuple[str, str, Any, Any]]
    # an INSERT of rows (``insert_rows``) as one statement over arrays (``unnest``), and
    # the bind names of its arrays (None: not such a one)
    rows: tuple[str, list[str]] | None


def array_param(name: str, column: ColumnElement[Any]) -> BindParameter[Any]:
    """A PostgreSQL parameter ``name`` holding a list of ``column``'s values as one array."""
    return bindparam(name, type_=postgresql.ARRAY(column.type))


def in_param(column: ColumnElement[Any], name: str, *, postgres: bool) -> ColumnElement[bool]:
    """``column`` is one of the values of the list parameter ``name``, written as each
    backend runs it: on PostgreSQL ``= ANY(one array)``, which the driver runs as it is (an
    expanding ``IN`` needs SQLAlchemy's execution context); elsewhere SQLAlchemy's
    expanding ``IN``, which SQLAlchemy runs."""
    if postgres:
        return column == any_(array_param(name, column))
    return column.in_(bindparam(name, type_=column.type, expanding=True))


def set_autocommit(conn: Connection, on: bool) -> bool:
    """Switch the driver's autocommit of ``conn`` (psycopg's own flag: no round trip; SA's
    ``isolation_level`` option would do it through an engine event, which turns this
    module's direct path off). False when it could not: the connection (broken, or inside
    a transaction) is discarded, never pooled."""
    try:
        driver = conn.connection.driver_connection
        if driver is not None and driver.autocommit != on:
            driver.autocommit = on
        return True
    except Exception:
        if not conn.invalidated:
            conn.invalidate()
        return False


@contextlib.contextmanager
def pipelined(conn: Connection) -> Iterator[None]:
    """The writes of :meth:`DriverStatement.executemany` inside the block ride one psycopg
    pipeline, sent without waiting and synced once when the block ends: one round trip
    for all of them, where each executemany waits for its own. Only writes belong inside:
    a read waits for its rows (a round trip) and the block's end for its sync (another),
    so it gains nothing, and SQLAlchemy's own execution reads a result's columns before
    psycopg has them in pipeline mode. An error in any write fails the block (and so the
    transaction). Elsewhere (SQLite, listeners, a libpq without pipelines) a plain
    block."""
    if not DriverStatement._direct(conn):
        yield
        return
    import psycopg  # (the dialect is psycopg's here)

    if not psycopg.Pipeline.is_supported():
        yield
        return
    if not conn.in_transaction():
        conn.begin()
    driver = conn.connection.driver_connection
    assert driver is not None
    try:
        with driver.pipeline():
            yield
    except conn.dialect.loaded_dbapi.Error as exc:  # raised by the sync at the end
        conn._handle_dbapi_exception(exc, "(pipeline sync)", None, None, None)
    except BaseException as exc:
        if not isinstance(exc, Exception) and not conn.invalidated:
            # An interrupt (a worker's time limit) in the sync: the connection's
            # protocol state is unknown, and SQLAlchemy's handling discards it.
            conn._handle_dbapi_exception(exc, "(pipeline sync)", None, None, None)
        raise
    finally:
        # A pipeline psycopg could not leave (interrupted mid-sync) must never go back
        # to the pool: its rollback there could wait forever.
        if not conn.invalidated and driver.pgconn.pipeline_status != \
                psycopg.pq.PipelineStatus.OFF:
            conn.invalidate()


def direct(conn: Connection) -> bool:
    """Whether statements on ``conn`` run on the driver (PostgreSQL with psycopg, nothing
    listening): where :func:`execute_sql` may be used."""
    return DriverStatement._direct(conn)


def execute_sql(conn: Connection, sql: str, params: dict[str, Any] | Sequence[Any]) -> None:
    """A write in the driver's own SQL (``%(name)s`` or ``%s`` placeholders, values as
    psycopg adapts them), in ``conn``'s transaction; only where :func:`direct` holds.
    Failures go through SQLAlchemy's handling, as :class:`DriverStatement`'s do."""
    _on_driver(conn, sql, params, fetch=False)


def _on_driver(conn: Connection, sql: str, params: dict[str, Any] | Sequence[Any], *,
               fetch: bool) -> list[Any]:
    """``sql`` on ``conn``'s driver connection, in its transaction; the rows when
    ``fetch``."""
    if not conn.in_transaction():
        conn.begin()
    cursor = None
    try:
        driver = conn.connection.driver_connection
        assert driver is not None
        with driver.cursor() as cursor:
            cursor.execute(sql, params)
            found: list[Any] = cursor.fetchall() if fetch else []
            return found
    except BaseException as exc:  # SQLAlchemy's handling decides (and raises)
        conn._handle_dbapi_exception(exc, sql, params, cursor, None)
        raise  # (it raises)


class DriverStatement:
    """A Core statement, compiled once per dialect, run on the driver when it can."""

    def __init__(self, statement: Executable, column_keys: Sequence[str] | None = None, *,
                 multirow: bool = False) -> None:
        """``column_keys``: for an INSERT or UPDATE without values, the columns each row
        gives (compiled as SQLAlchemy compiles it for rows with those keys). ``multirow``:
        an INSERT of rows, run on the driver as one statement over arrays."""
        self.statement = statement
        self.column_keys = list(column_keys) if column_keys is not None else None
        self.multirow = multirow
        self._compiled: weakref.WeakKeyDictionary[Dialect, _Compiled] = \
            weakref.WeakKeyDictionary()

    @classmethod
    def insert_rows(cls, table: Table, columns: Sequence[str] | None = None) -> DriverStatement:
        """An INSERT into ``table`` for :meth:`executemany` of rows that give ``columns``
        (default: every column; a row without one is an error, never a silent NULL). On
        the driver it runs as ONE ``INSERT … SELECT * FROM unnest(CAST(%(a)b AS T[]), …)``,
        each column's values one array: PostgreSQL runs one statement for the rows
        instead of one per row, and its text is the same whatever the number of rows
        (prepared once; a multi-row ``VALUES`` list would be parsed anew by psycopg and
        planned anew by PostgreSQL for each size)."""
        return cls(insert(table), list(columns) if columns is not None else table.c.keys(),
                   multirow=True)

    @staticmethod
    def _rows(sql: str) -> tuple[str, list[str]] | None:
        """``sql`` (``INSERT INTO t (…) VALUES (%(a)s::T, …)``, then perhaps ``ON
        CONFLICT …`` and ``RETURNING …``) as an INSERT over arrays (None: anything but
        one tuple of parameters, each cast to a plain type)."""
        head, sep, values = sql.partition(" VALUES ")
        one = _TUPLE.match(values) if sep else None
        if one is None:
            return None
        params, tail = _PARAM.findall(one.group(0)), values[one.end():]
        if tail and not tail.startswith((" ON CONFLICT ", " RETURNING ")):
            return None
        # (binary arrays: psycopg packs them without quoting each element, about a
        # fourth of the text format's cost)
        arrays = ", ".join(f"CAST(%({name})b AS {cast}[])" for name, cast in params)
        return f"{head} SELECT * FROM unnest({arrays}){tail}", [name for name, _ in params]

    @classmethod
    def insert_rows_returning(cls, statement: Executable,
                              columns: Sequence[str]) -> DriverStatement:
        """``statement`` (an INSERT of rows that give ``columns``, with RETURNING, perhaps
        ``ON CONFLICT``) for :meth:`insert_returning`: on the driver one statement over
        arrays, as :meth:`insert_rows`."""
        return cls(statement, list(columns), multirow=True)

    def insert_returning(self, conn: Connection,
                         rows: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
        """The rows' INSERT (an :meth:`insert_rows_returning` statement) in ``conn``'s
        transaction; the rows it returned (those inserted), in no particular order."""
        if not rows:
            return []
        entry = self._for(conn.dialect) if self._direct(conn) else None
        if entry is None or entry.rows is None or entry.results:
            # elsewhere, a statement the array form cannot take, or a RETURNING whose
            # values need SQLAlchemy's result processing: as SQLAlchemy runs it
            return [tuple(row) for row in conn.execute(self.statement, list(rows))]
        sql = entry.rows[0]
        arrays: dict[str, list[Any]] = {}
        try:
            for name, key, process in entry.per_row:
                arrays[name] = [row[key] for row in rows] if process is None else \
                    [process(row[key]) for row in rows]
        except KeyError:  # SQLAlchemy's own error for a missing value
            for row in rows:
                entry.compiled.construct_params(row, escape_names=False)
            raise
        return [tuple(row) for row in _on_driver(conn, sql, arrays, fetch=True)]

    def _for(self, dialect: Dialect) -> _Compiled:
        entry = self._compiled.get(dialect)
        if entry is None:
            compiled = self.statement.compile(  # type: ignore[attr-defined]
                dialect=dialect, column_keys=self.column_keys)
            assert isinstance(compiled, SQLCompiler)
            if (compiled.post_compile_params or compiled.literal_execute_params
                    or compiled.insert_prefetch or compiled.update_prefetch
                    or compiled.escaped_bind_names):
                raise ValueError("this statement needs SQLAlchemy's execution context "
                                 "(defaults, expanding or escaped parameters)")
            rendered = {name: bind for bind, name in compiled.bind_names.items()}
            binds = {name: proc for name, bind in rendered.items()
                     if (proc := bind.type.dialect_impl(dialect).bind_processor(dialect))
                     is not None}
            columns = getattr(self.statement, "exported_columns", None) or ()
            results = [(i, proc) for i, column in enumerate(columns)
                       if (proc := column.type.dialect_impl(dialect).result_processor(
                           dialect, None)) is not None]
            names = [column.key for column in columns] if columns else None
            per_row = [(name, bind.key, binds.get(name))
                       for name, bind in rendered.items() if bind.required]
            fixed = []
            for name, bind in rendered.items():
                if bind.callable is not None:  # (a value computed per execution)
                    raise ValueError("this statement needs SQLAlchemy's execution context "
                                     "(a parameter computed when it runs)")
                if not bind.required:
                    process = binds.get(name)
                    value = bind.effective_value
                    fixed.append((name, bind.key, process,
                                  value if process is None else process(value)))
            sql = str(compiled)
            entry = _Compiled(compiled, sql, binds, results, names, per_row, fixed,
                              self._rows(sql) if self.multirow and not fixed else None)
            self._compiled[dialect] = entry
        return entry

    @staticmethod
    def _direct(conn: Connection) -> bool:
        # (``_has_events``: SQLAlchemy's own tests before it calls listeners of statements
        # or errors; ``_echo``: statement logging.)
        dialect = conn.dialect
        return (dialect.name == "postgresql" and dialect.driver == "psycopg"
                and not conn._has_events and not conn.engine._has_events
                and not dialect._has_events and not conn._echo)

    def first(self, conn: Connection, params: dict[str, Any]) -> tuple[Any, ...] | None:
        """The statement's first row (None: no row), in ``conn``'s transaction."""
        if not self._direct(conn):
            row = conn.execute(self.statement, params).first()
            return None if row is None else tuple(row)
        return self._first(conn, params, named=False)[0]

    def first_mapping(self, conn: Connection, params: dict[str, Any], *,
                      alone: bool = False) -> dict[str, Any] | None:
        """The first row as a dict by column name (None: no row). ``alone``: the statement
        is a read on its own, in autocommit on the driver when ``conn`` has no transaction
        (the caller commits nothing after it)."""
        if not self._direct(conn):
            found = conn.execute(self.statement, params).mappings().first()
            return None if found is None else dict(found)
        row, names = self._first(conn, params, named=True,
                                 alone=alone and not conn.in_transaction())
        return None if row is None else dict(zip(names, row, strict=True))

    def executemany(self, conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
        """The statement once per row, in ``conn``'s transaction (psycopg pipelines them:
        one round trip; an ``insert_rows`` INSERT is one multi-row statement), as
        ``conn.execute(statement, rows)`` would run it."""
        if not rows:
            return
        if not self._direct(conn):
            conn.execute(self.statement, list(rows))
            return
        if not conn.in_transaction():
            conn.begin()
        entry = self._for(conn.dialect)
        sql, values, cursor = entry.sql, None, None
        try:
            try:
                values = [{name: row[key] if process is None else process(row[key])
                           for name, key, process in entry.per_row} for row in rows]
                for row, value in zip(rows, values, strict=True):
                    for name, key, process, default in entry.fixed:
                        # (a row's value, by the parameter's key or name, overrides the
                        # statement's, as in SQLAlchemy's construct_params)
                        given = key if key in row else name if name in row else None
                        value[name] = default if given is None else \
                            row[given] if process is None else process(row[given])
            except KeyError:  # SQLAlchemy's own error for a missing value
                for row in rows:
                    entry.compiled.construct_params(row, escape_names=False)
                raise
            driver = conn.connection.driver_connection
            assert driver is not None
            with driver.cursor() as cursor:
                if entry.rows is None or len(values) == 1:
                    cursor.executemany(sql, values)
                else:
                    sql, names = entry.rows
                    cursor.execute(sql, {name: [v[name] for v in values] for name in names})
        except BaseException as exc:  # SQLAlchemy's handling decides (and raises)
            conn._handle_dbapi_exception(exc, sql, values, cursor, None)

    def all(self, conn: Connection, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """Every row of the statement, in ``conn``'s transaction."""
        if not self._direct(conn):
            return [tuple(row) for row in conn.execute(self.statement, params)]
        return self._fetch(conn, params, named=False, one=False)[0]

    def mappings(self, conn: Connection, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Every row as a dict by column name, in ``conn``'s transaction."""
        if not self._direct(conn):
            return [dict(row) for row in conn.execute(self.statement, params).mappings()]
        rows, names = self._fetch(conn, params, named=True, one=False)
        return [dict(zip(names, row, strict=True)) for row in rows]

    def _first(self, conn: Connection, params: dict[str, Any], *, named: bool,
               alone: bool = False) -> tuple[tuple[Any, ...] | None, list[str]]:
        rows, names = self._fetch(conn, params, named=named, alone=alone, one=True)
        return (rows[0] if rows else None), names

    def _fetch(self, conn: Connection, params: dict[str, Any], *, named: bool,
               alone: bool = False, one: bool) -> tuple[list[tuple[Any, ...]], list[str]]:
        if not alone and not conn.in_transaction():
            conn.begin()  # as execute autobegins: the caller's commit() then commits it
        entry = self._for(conn.dialect)
        sql, values, cursor = entry.sql, None, None
        try:
            values = entry.compiled.construct_params(params, escape_names=False)
            for name, process in entry.binds.items():
                values[name] = process(values[name])
            driver = conn.connection.driver_connection
            assert driver is not None
            if alone:
                driver.autocommit = True  # (no round trip: psycopg's own flag)
            with driver.cursor() as cursor:
                cursor.execute(sql, values)
                if one:
                    first = cursor.fetchone()
                    found = [] if first is None else [first]
                else:
                    found = cursor.fetchall()
                names = entry.names or []
                if named and entry.names is None:  # (description builds them on each call)
                    names = [column.name for column in cursor.description or ()]
        except BaseException as exc:  # SQLAlchemy's handling decides (and raises)
            conn._handle_dbapi_exception(exc, sql, values, cursor, None)
        finally:
            if alone:
                set_autocommit(conn, False)
        if not entry.results:
            return [tuple(row) for row in found], names
        rows = []
        for raw in found:
            row = list(raw)
            for i, process in entry.results:
                row[i] = process(row[i])
            rows.append(tuple(row))
        return rows, names
