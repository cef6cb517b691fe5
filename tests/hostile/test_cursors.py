"""Property-based hostile cursors: every paginated listing answers a cursor it did not issue
with 400 ``invalid_cursor`` (or, for a forged cursor that happens to be well formed, a
normal page) — never a 500, whatever the bytes, the JSON inside or the key types."""
from __future__ import annotations

import base64
import json
import uuid

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests.support.foundation import add_member, assert_problem, make_node, team_space

KINDS = ["spaces", "roots", "children", "trash", "recent", "operations", "members", "stars"]


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# JSON values of every shape, including strings no database takes (NUL, lone surrogates).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True)
    | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                  max_size=3),
    max_leaves=8)
timestamps = st.datetimes().map(lambda d: d.isoformat()) | st.sampled_from(
    ["2026-12-03T04:30:05Z", "2026-12-03", "9999-12-31T23:59:59+14:00", "0001-01-01T00:00:00Z",
     "2026-13-45T99:99:99Z", "+00:00", "Z", "2026-12-03T04:30:05.123456789Z", "", "now"])
key_parts = json_values | timestamps | st.text(alphabet="0123456789abcdef", max_size=40)


@st.composite
def cursors(draw):
    """Raw garbage, or base64 of JSON that looks more or less like what we issue."""
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return draw(st.text(max_size=300))
    if shape == 1:
        return b64(draw(st.binary(max_size=200)))
    kind = draw(st.sampled_from(KINDS) | st.text(max_size=10))
    parts = draw(st.lists(key_parts, max_size=4))
    try:
        raw = json.dumps([kind, *parts]).encode()
    except (ValueError, UnicodeEncodeError):
        raw = b"[]"
    if shape == 2:
        return b64(raw)
    return b64(raw) + draw(st.sampled_from(["", "=", "==", "!", "%00", "\u00e9"]))


@pytest.fixture
def listings(world, worker):
    alice = world.user("alice")
    sp = alice.personal_space_id
    team_space(alice, "T")
    parent = make_node(alice, sp, "p")["id"]
    for i in range(3):
        make_node(alice, sp, f"c{i}", parent)
    gone = make_node(alice, sp, "gone")["id"]
    alice.post(f"/api/nodes/{gone}/trash")
    op = alice.post("/api/resources", json={"space_id": sp, "parent_id": parent, "name": "d",
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": uuid.uuid4().hex}).json
    rid = alice.get(f"/api/operations/{op['id']}", params={"wait": "30"}).json["result"]
    alice.post(f"/api/resources/{rid['resource_id']}/open")
    alice.put(f"/api/me/stars/{rid['resource_id']}")
    team = team_space(alice, "Members")["id"]
    for name in ("mem1ber", "mem2ber"):
        add_member(alice, team, world.user(name).user_id, "viewer")
    paths = {"spaces": "/api/spaces", "roots": f"/api/spaces/{sp}/nodes",
             "children": f"/api/nodes/{parent}/children", "trash": f"/api/spaces/{sp}/trash",
             "recent": "/api/me/recent", "operations": "/api/operations",
             "members": f"/api/spaces/{team}/members", "stars": "/api/me/stars"}
    return alice, paths


@pytest.mark.parametrize("kind", KINDS)
def test_forged_cursors_are_refused_never_a_server_error(listings, kind):
    alice, paths = listings
    path = paths[kind]
    # every listing issues a cursor and accepts it back
    issued = alice.get(path, params={"limit": "1"}).json["next_cursor"]
    if issued:
        assert alice.get(path, params={"limit": "1", "cursor": issued}).status_code == 200

    @hsettings(max_examples=60, deadline=None, database=None, derandomize=True,
               suppress_health_check=list(HealthCheck))
    @given(cursor=cursors())
    def check(cursor):
        r = alice.get(path, params={"cursor": cursor, "limit": "2"})
        assert r.status_code in (200, 400), (cursor, r.status_code, r.text)
        if r.status_code == 400:
            assert_problem(r, 400, "invalid_cursor")

    check()


@pytest.mark.parametrize("forged", [
    ["recent", "not a date", "x"], ["recent", "2026-12-03", "x"],
    ["recent", "2026-12-03T04:30:05+02:00", "x"], ["recent", "9" * 40, "x"],
    ["recent", "2026-12-03T04:30:05Z", 7], ["recent", "2026-12-03T04:30:05Z"],
])
def test_forged_recent_cursor_is_400(listings, forged):
    alice, paths = listings
    cursor = b64(json.dumps(forged).encode())
    assert_problem(alice.get(paths["recent"], params={"cursor": cursor}), 400, "invalid_cursor")


def test_a_well_formed_recent_cursor_pages_from_that_time(listings):
    alice, paths = listings
    cursor = b64(json.dumps(["recent", "2000-01-01T00:00:00Z", "f" * 32]).encode())
    r = alice.get(paths["recent"], params={"cursor": cursor})
    assert r.status_code == 200 and r.json == {"items": [], "next_cursor": None}
    cursor = b64(json.dumps(["recent", "2999-01-01T00:00:00Z", "0" * 32]).encode())
    assert len(alice.get(paths["recent"], params={"cursor": cursor}).json["items"]) == 1
