"""Shared fixtures. A test that uses ``db`` runs on SQLite, and on PostgreSQL as well where
the database decides the outcome (``BOTH_DATABASES``: claims, leases, the outbox,
concurrency, storage, migrations, process faults, dialect SQL): the tests in the folders
``BOTH_DATABASES_FOLDERS`` and in a module marked ``pytest.mark.both_databases``. API
behaviour above the service layer is the same SQL on either, so it runs on SQLite only.

SQLite: each test gets a copy of a database migrated once per run.
PostgreSQL: one database per run (per xdist worker), migrated once, tables truncated
between tests. PostgreSQL unavailable → skip (or fail under WHARF_TEST_REQUIRE_SERVICES=1).
"""
from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from migrations.prepare import prepare
from storage.db import Database, make_engines
from storage.models import Base
from tests.support import services
from tests.support.client import ApiClient
from wharf.infra.settings import Settings

PASSWORD = "correct horse battery staple"


def _admin_url(url: str, dbname: str) -> str:
    return url.rsplit("/", 1)[0] + "/" + dbname


@pytest.fixture(scope="session", autouse=True)
def service_guards():
    """Redis only in WHARF_TEST_REDIS_URL's DB, never a FLUSHDB; PostgreSQL writes only in
    databases the suite created (tests/support/services.py). Before any other fixture."""
    services.guard_redis()
    services.guard_postgres()


@pytest.fixture(autouse=True)
def service_isolation(service_guards):
    """Fail the test that broke the rules, even if a library swallowed the refusal."""
    yield
    violations = services.violations()
    assert not violations, f"the test used Redis or PostgreSQL outside its settings: {violations}"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("template") / "wharf.db"
    engine, reader = make_engines(f"sqlite:///{path}")
    prepare(engine, report=lambda *_: None)
    engine.dispose(), reader.dispose()
    return path


@pytest.fixture(scope="session")
def postgres_database():
    """Create a throw-away PostgreSQL database for this run; yields its URL."""
    if services.postgres_error() is not None:
        yield None
        return
    name = f"wharf_test_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        services.create_test_database(conn, name)
    url = _admin_url(services.POSTGRES_URL, name)
    engine = create_engine(url)
    prepare(engine, report=lambda *_: None)
    engine.dispose()
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def truncate_all(url: str) -> None:
    """Empty every product table (services.empty_tables: DELETE, far cheaper than TRUNCATE)."""
    engine = create_engine(url)
    try:
        services.empty_tables(engine, Base.metadata.sorted_tables)
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def postgres_unitstore(postgres_database):
    """A second PostgreSQL database for the UnitStore (never joined with the product DB)."""
    if postgres_database is None:
        yield None
        return
    name = postgres_database.rsplit("/", 1)[1] + "_units"
    admin = create_engine(services.POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        services.create_test_database(conn, name)
    url = _admin_url(services.POSTGRES_URL, name)
    from storage.unitschema import prepare_unitstore_db
    udb = Database(url)
    prepare_unitstore_db(udb, report=lambda *_: None)
    udb.dispose()
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


#: Folders of tests/ whose every database test runs on both databases.
BOTH_DATABASES_FOLDERS = frozenset({"engine", "storage", "processes"})


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise ``backend``: ``sqlite``, plus ``postgres`` where the database decides."""
    if "backend" not in metafunc.fixturenames:
        return
    if any("backend" in str(m.args[0]) for m in metafunc.definition.iter_markers("parametrize")):
        return  # the test chose its databases itself
    folder = Path(str(metafunc.definition.path)).parent.name
    both = (folder in BOTH_DATABASES_FOLDERS
            or metafunc.definition.get_closest_marker("both_databases") is not None)
    metafunc.parametrize("backend", ["sqlite", "postgres"] if both else ["sqlite"],
                         indirect=True)


@pytest.fixture
def backend(request) -> str:
    return request.param


@pytest.fixture
def database_url(backend, request, tmp_path, sqlite_template) -> str:
    if backend == "sqlite":
        path = tmp_path / "wharf.db"
        shutil.copy(sqlite_template, path)
        return f"sqlite:///{path}"
    services.need(services.postgres_error())
    url = request.getfixturevalue("postgres_database")
    truncate_all(url)
    return url


@pytest.fixture
def unitstore_url(backend, request, tmp_path) -> str:
    if backend == "sqlite":
        from storage.unitschema import prepare_unitstore_db
        url = f"sqlite:///{tmp_path / 'units.db'}"
        udb = Database(url)
        prepare_unitstore_db(udb, report=lambda *_: None)
        udb.dispose()
        return url
    url = request.getfixturevalue("postgres_unitstore")
    engine = create_engine(url)
    try:
        services.empty_tables(engine, services.unit_tables())
    finally:
        engine.dispose()
    return url


def make_settings(tmp_path: Path, database_url: str, unitstore_url: str | None = None,
                  **overrides) -> Settings:
    env = {"WHARF_DATA_DIR": str(tmp_path / "data"),
           "WHARF_DATABASE_URL": database_url,
           "WHARF_UNITSTORE_URL": unitstore_url or f"sqlite:///{tmp_path / 'units.db'}",
           "WHARF_OPERATION_BACKOFF_BASE": "0.05", "WHARF_OPERATION_BACKOFF_MAX": "0.5",
           "WHARF_ARGON2_TIME_COST": "1", "WHARF_ARGON2_MEMORY_COST": "8",
           "WHARF_ARGON2_PARALLELISM": "1"}
    return Settings.from_env(env, **overrides)


@pytest.fixture
def settings(tmp_path, database_url, unitstore_url) -> Settings:
    return make_settings(tmp_path, database_url, unitstore_url)


@pytest.fixture
def db(settings):
    database = Database(settings.database_url, settings.sqlite_busy_timeout_ms)
    yield database
    database.dispose()


@pytest.fixture
def components(settings, db):
    """The embedded wiring (StubBroker, LocalNotifier) around the test databases."""
    from wharfd.runtime import Components
    comps = Components(settings, db=db)
    yield comps
    comps.close()


@pytest.fixture
def worker(components):
    """Dramatiq worker threads consuming the in-process broker."""
    import dramatiq
    w = dramatiq.Worker(components.broker, worker_threads=2, worker_timeout=50)
    w.start()
    yield w
    w.stop(timeout=5000)


@pytest.fixture
def app(components):
    return components.api_app()


@pytest.fixture
def client(app) -> ApiClient:
    return ApiClient(app)


def register_operator(components, username: str) -> dict:
    """Create the account of an operator that ``WHARF_OPERATORS`` already lists, as an
    administrator would have before listing it (registration refuses listed names); the
    ``POST /api/users`` body of the new user."""
    import dataclasses

    from wharf.identity.service import Identity
    from wharf.infra.context import RequestContext
    unlisted = Identity(dataclasses.replace(components.settings, operators=()))
    user, space = unlisted.register(components.db, RequestContext(), username, PASSWORD)
    return {"id": user.id, "username": user.username, "personal_space_id": space.id}


class World:
    """Creates users and logged-in clients against one app (``components``: to create the
    accounts of listed operators, see :func:`register_operator`)."""

    def __init__(self, app, components=None):
        self.app = app
        self.components = components
        self.ids: dict[str, dict] = {}

    def user(self, username: str) -> ApiClient:
        c = ApiClient(self.app)
        if username not in self.ids:
            if self.components is not None and \
                    username.lower() in self.components.settings.operators:
                self.ids[username] = register_operator(self.components, username)
            else:
                r = c.post("/api/users", json={"username": username, "password": PASSWORD})
                assert r.status_code == 201, r.text
                self.ids[username] = r.json
        r = c.post("/api/login-sessions", json={"username": username, "password": PASSWORD})
        assert r.status_code == 201, r.text
        c.user_id = self.ids[username]["id"]
        c.personal_space_id = self.ids[username]["personal_space_id"]
        return c

    def anonymous(self) -> ApiClient:
        return ApiClient(self.app)


@pytest.fixture
def world(app, components) -> World:
    return World(app, components)


@pytest.fixture(scope="session")
def s3_server():
    """moto's S3 server over real HTTP (a subprocess), shared by the run."""
    from tests.support.s3 import MotoServer
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    server = MotoServer().start()
    yield server
    server.stop()


@pytest.fixture
def s3_store(s3_server):
    from storage.blobstore import S3BlobStore
    bucket = f"wharf-{uuid.uuid4().hex[:12]}"
    store = S3BlobStore(bucket, "objects", endpoint_url=s3_server.endpoint,
                        part_size=5 * 1024 * 1024)
    store.ensure_bucket()
    return store


@pytest.fixture(params=["file", "s3"])
def blob_store(request, tmp_path):
    if request.param == "file":
        from storage.blobstore import FileBlobStore
        return FileBlobStore(tmp_path / "blobs")
    return request.getfixturevalue("s3_store")
