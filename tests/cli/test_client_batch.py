"""``wharf-client create-many`` against a real ``wharf serve``: many creations in batches
of 100 through ``POST /api/operations:batch``, each waited for; a refused item (a name the
server refuses) is reported on its line and the exit status is 1."""
from __future__ import annotations

import json

import pytest

from tests.cli.test_client_exchange import client, folder

pytestmark = pytest.mark.slow


def test_create_many_creates_each_name_once_in_batches(wharf, tmp_path):
    _server, user, _token = wharf
    target = folder(user, "Many")
    names = tmp_path / "names.txt"
    names.write_text("".join(f"Doc {i}\n" for i in range(150)))
    r = client(wharf)("--json", "create-many", "--type", "doc", "--space", user.space_id,
                      "--parent", target, "--from-file", str(names), "First", timeout=300)
    assert r.returncode == 0, r.stderr
    answers = json.loads(r.stdout)
    assert len(answers) == 151
    assert all(a["operation"]["status"] == "completed" for a in answers)
    status, _, listed = user.call("GET", f"/api/nodes/{target}/children?limit=200")
    assert status == 200
    assert sorted(n["name"] for n in listed["items"]) == sorted(
        ["First", *(f"Doc {i}" for i in range(150))])


def test_a_refused_item_is_reported_and_exits_1(wharf):
    _server, user, _token = wharf
    r = client(wharf)("create-many", "--type", "sheet", "--space", user.space_id,
                      "Fine", "bad/name", timeout=120)
    assert r.returncode == 1, (r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Fine: ") and "completed" in lines[0]
    assert lines[1].startswith("bad/name: refused 400") and "(validation_failed)" in lines[1]
