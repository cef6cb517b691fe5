"""``wharf user reset-password NAME`` (issue 40 item 1) as an operator runs it: the new
password comes from standard input (a terminal would be prompted twice, never echoed),
never from the command line; every login session of the user ends; it is audited."""
from __future__ import annotations

import subprocess

import pytest

from api.app import create_app
from storage.db import Database
from tests.cli.test_cli import WHARF, wharf_env
from tests.conftest import PASSWORD, World, make_settings
from tests.support.client import ApiClient
from tests.support.foundation import audit_rows

pytestmark = pytest.mark.slow

NEW = "set by the operator"


def reset_password(tmp_path, env, username: str, stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run([*WHARF, "user", "reset-password", username], env=env, cwd=tmp_path,
                          input=stdin, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_reset_password_on_a_real_database(tmp_path, database_url, unitstore_url):
    settings = make_settings(tmp_path, database_url, unitstore_url, auth_cache_seconds=0)
    db = Database(settings.database_url)
    try:
        app = create_app(settings, db)
        alice = World(app).user("alice")
        assert alice.get("/api/me").status_code == 200
        env = wharf_env(tmp_path, WHARF_DATABASE_URL=database_url,
                        WHARF_UNITSTORE_URL=unitstore_url)
        result = reset_password(tmp_path, env, "alice", NEW + "\n")
        assert result.returncode == 0, result.stderr
        assert "user alice has a new password; 1 login session(s) ended" in result.stderr
        assert NEW not in result.stdout + result.stderr
        assert alice.get("/api/me").status_code == 401
        login = ApiClient(app).post("/api/login-sessions",
                                    json={"username": "alice", "password": NEW})
        assert login.status_code == 201
        [row] = audit_rows(db, action="user.password_reset")
        assert (row.actor_type, row.actor_id) == ("system", "user-reset-password")
        assert row.details == {"by": "operator", "sessions_ended": 1}

        for name, stdin, says in [
                ("nobody", NEW + "\n", "wharf user reset-password: No user nobody."),
                ("alice", "", "wharf user reset-password: no password on standard input"),
                ("alice", "short\n",
                 "wharf user reset-password: password must be 12-1024 characters")]:
            refused = reset_password(tmp_path, env, name, stdin)
            assert refused.returncode == 1, refused.stderr
            assert refused.stderr.strip() == says
        assert ApiClient(app).post("/api/login-sessions", json={
            "username": "alice", "password": NEW}).status_code == 201
        assert ApiClient(app).post("/api/login-sessions", json={
            "username": "alice", "password": PASSWORD}).status_code == 401
    finally:
        db.dispose()
