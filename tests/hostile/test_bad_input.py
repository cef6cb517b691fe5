"""Bad input: every malformed request gets a 4xx problem+json with a code and changes nothing.

For each endpoint that takes a body, a valid body is mutated field by field (wrong types,
missing, oversized, unknown extras, characters databases refuse) and the whole body is
replaced by non-objects, broken JSON, other content types and oversized payloads. Then
unknown, foreign and garbage ids in every path.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.foundation import (
    PASSWORD,
    add_member,
    is_problem,
    make_node,
    make_token,
    row_counts,
    team_space,
)


@dataclass
class Endpoint:
    method: str
    path: str
    body: dict[str, Any]
    # field name -> kind: str | str? (nullable) | role | scopes | days | bool | id | id?
    fields: dict[str, str]
    required: tuple[str, ...]
    anonymous: bool = False
    at_least_one: bool = False  # PATCH bodies: {} is refused
    ok_status: int = 200


def _setup(world):
    alice, bob = world.user("alice"), world.user("bob")
    carol = world.user("carol")
    space = team_space(alice, "Team")
    add_member(alice, space["id"], bob.user_id, "viewer")
    node = make_node(alice, space["id"], "folder")
    target = make_node(alice, space["id"], "target")
    bobs = make_node(bob, bob.personal_space_id, "bob's")
    make_token(alice)
    return alice, bob, carol, space, node, target, bobs


def _endpoints(alice, bob, carol, space, node, target) -> dict[str, Endpoint]:
    return {
        "register": Endpoint("POST", "/api/users",
                             {"username": "newuser", "password": PASSWORD},
                             {"username": "str", "password": "str"},
                             ("username", "password"), anonymous=True, ok_status=201),
        "login": Endpoint("POST", "/api/login-sessions",
                          {"username": "alice", "password": PASSWORD},
                          {"username": "str", "password": "str"},
                          ("username", "password"), anonymous=True, ok_status=201),
        "create_token": Endpoint("POST", "/api/api-tokens",
                                 {"name": "ci", "scopes": ["read"], "expires_in_days": 7},
                                 {"name": "str", "scopes": "scopes", "expires_in_days": "days"},
                                 ("name", "scopes"), ok_status=201),
        "create_space": Endpoint("POST", "/api/spaces", {"name": "New", "type": "team"},
                                 {"name": "str", "type": "team"}, ("name",), ok_status=201),
        "update_space": Endpoint("PATCH", f"/api/spaces/{space['id']}",
                                 {"name": "Renamed", "public_read": True},
                                 {"name": "str", "public_read": "bool"}, (),
                                 at_least_one=True),
        "put_member": Endpoint("PUT", f"/api/spaces/{space['id']}/members/{carol.user_id}",
                               {"role": "editor"}, {"role": "role"}, ("role",), ok_status=201),
        "create_node": Endpoint("POST", "/api/nodes",
                                {"space_id": space["id"], "parent_id": node["id"], "name": "x"},
                                {"space_id": "id", "parent_id": "id?", "name": "str"},
                                ("space_id", "name"), ok_status=201),
        "update_node": Endpoint("PATCH", f"/api/nodes/{node['id']}",
                                {"name": "y", "parent_id": target["id"]},
                                {"name": "str", "parent_id": "id?"}, (), at_least_one=True),
    }


WRONG_TYPES = {
    "str": [1, 1.5, True, None, [], {}, ["x"]],
    "str?": [1, True, [], {}],
    "id": [1, True, None, [], {"id": "x"}],
    "id?": [1, True, [], {}],
    "role": [1, None, "owner", "ADMIN", "", ["admin"]],
    "scopes": ["read", [], ["admin"], [1], [None], ["read", "read"], None, {"read": True}],
    "days": ["7", 0, -1, 3651, 1.5, True, [7], float("nan")],
    "bool": ["true", 1, 0, None, [], "false"],
    "team": ["personal", "", 1, None],
}
OVERSIZED = {"str": "x" * 5000, "str?": "x" * 5000, "id": "0" * 5000, "id?": "0" * 5000}
# Strings that are valid JSON but no database can store as text.
BAD_TEXT = ["nul\x00byte", "lone \ud800 surrogate", "\udfff"]


def _bad_bodies(ep: Endpoint):
    """(label, raw_bytes or json-able value) pairs, every one of which must be refused."""
    valid = ep.body
    for name, kind in ep.fields.items():
        for wrong in WRONG_TYPES[kind]:
            yield f"{name}={wrong!r}", {**valid, name: wrong}
        if kind in OVERSIZED:
            yield f"{name} oversized", {**valid, name: OVERSIZED[kind]}
        if kind in ("str", "id", "id?"):
            for text in BAD_TEXT:
                yield f"{name}={text!r}", {**valid, name: text}
        if name in ep.required:
            yield f"missing {name}", {k: v for k, v in valid.items() if k != name}
    yield "unknown field", {**valid, "is_admin": True}
    yield "unknown field only", {"is_admin": True}
    yield "nested unknown", {**valid, "extra": {"deep": [1, 2, 3]}}
    if ep.required or ep.at_least_one:
        yield "empty object", {}
    yield "array", [valid]
    yield "empty array", []
    yield "string", "hello"
    yield "number", 42
    yield "null", None
    raw = json.dumps(valid).encode()
    yield "truncated", raw[:-1]
    yield "trailing comma", raw[:-1] + b",}"
    yield "single quotes", raw.replace(b'"', b"'")
    yield "two objects", raw + raw
    yield "invalid utf-8", raw[:-1] + b', "name": "\xff\xfe"}'
    yield "NaN", raw[:-1] + b', "n": NaN}'
    yield "huge int", raw[:-1] + b', "n": ' + b"9" * 5000 + b"}"
    yield "deep nesting", b'{"name": ' + b"[" * 50000 + b"]" * 50000 + b"}"
    yield "deep object", b'{"a":' * 50000 + b"1" + b"}" * 50000
    yield "lone surrogate key", raw[:-1] + b', "\\ud800": 1}'
    # The same surrogate as raw UTF-8 bytes (not an escape): json.loads(bytes) would let it
    # through as a lone surrogate, and msgspec failed on it with a 500.
    yield "utf-8 encoded surrogate key", raw[:-1] + b', "\xed\xa0\x80": 1}'
    for field in [k for k, v in valid.items() if isinstance(v, str)][:1]:
        yield f"utf-8 encoded surrogate in {field}", json.dumps(
            {**valid, field: "SURROGATE"}).encode().replace(b"SURROGATE", b"a\xed\xb0\x80")


def _send(client, ep: Endpoint, payload, headers=None):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    return client.request(ep.method, ep.path, body=body, headers=hdrs)


ENDPOINT_NAMES = ["register", "login", "create_token", "create_space", "update_space",
                  "put_member", "create_node", "update_node"]


@pytest.mark.parametrize("name", ENDPOINT_NAMES)
def test_bad_bodies_are_refused_and_change_nothing(world, db, settings, name):
    alice, bob, carol, space, node, target, _ = _setup(world)
    ep = _endpoints(alice, bob, carol, space, node, target)[name]
    client = world.anonymous() if ep.anonymous else alice
    before = row_counts(db)
    failures = []

    def check(label, r, status=None):
        if not (400 <= r.status_code < 500) or not is_problem(r) or (
                status is not None and r.status_code != status):
            failures.append(f"{label}: {r.status_code} {r.text[:200]}")

    for label, payload in _bad_bodies(ep):
        check(label, _send(client, ep, payload))
    raw = json.dumps(ep.body).encode()
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                  "application/xml", "text/json"):
        check(f"content-type {ctype}", _send(client, ep, raw, {"Content-Type": ctype}), 415)
    big = json.dumps({**ep.body, "pad": "x" * settings.max_body_bytes}).encode()
    check("oversized body", _send(client, ep, big), 413)

    assert failures == []
    assert row_counts(db) == before
    if not ep.anonymous:
        assert alice.get("/api/me").status_code == 200  # still logged in, nothing broke

    # Control: the unmodified body is accepted, so the refusals above were about the input.
    r = _send(client, ep, ep.body)
    assert r.status_code == ep.ok_status, r.text


def test_body_just_under_the_limit_is_read(world, settings, db):
    alice = world.user("alice")
    # Valid JSON, near the limit, refused for its content (unknown field) not its size.
    pad = "x" * (settings.max_body_bytes - 200)
    body = json.dumps({"space_id": alice.personal_space_id, "name": "n", "pad": pad}).encode()
    assert len(body) < settings.max_body_bytes
    r = alice.request("POST", "/api/nodes", body=body,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json["code"] == "validation_failed"


def test_oversized_body_on_any_route_is_413(world, settings):
    alice = world.user("alice")
    big = b"x" * (settings.max_body_bytes + 1)
    for method, path in (("GET", "/api/me"), ("DELETE", f"/api/api-tokens/{'0' * 32}"),
                         ("GET", "/api/spaces")):
        r = alice.request(method, path, body=big, headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and is_problem(r, 413, "payload_too_large"), r.text


def test_missing_content_type_and_charset_param(world):
    alice = world.user("alice")
    body = json.dumps({"space_id": alice.personal_space_id, "name": "n"})
    r = alice.request("POST", "/api/nodes", body=body,
                      headers={"Content-Type": "application/json; charset=utf-8"})
    assert r.status_code == 201
    r = alice.request("POST", "/api/nodes", body=body,
                      headers={"Content-Type": "Application/JSON"})
    assert r.status_code == 201


# --- ids in paths ---------------------------------------------------------------------

GARBAGE_IDS = ["nope", "0" * 31, "0" * 33, "F" * 32, "g" * 32, "%00", "%2e%2e", "null",
               "' OR '1'='1", "%E2%82%AC", "x" * 3000, "0" * 32 + "%0A", "-1", "%20"]


def test_unknown_foreign_and_garbage_ids(world, db):
    alice, bob, carol, space, _node, _target, bobs = _setup(world)
    bob_space = team_space(bob, "Bob's team")
    bob_token = make_token(bob)
    unknown = "0" * 32
    me = alice.user_id

    # (method, template, body); {x} is replaced by the id under test
    routes = [
        ("GET", "/api/spaces/{x}", None),
        ("PATCH", "/api/spaces/{x}", {"name": "x"}),
        ("GET", "/api/spaces/{x}/nodes", None),
        ("GET", "/api/spaces/{x}/members", None),
        ("PUT", "/api/spaces/{x}/members/" + carol.user_id, {"role": "viewer"}),
        ("DELETE", "/api/spaces/{x}/members/" + bob.user_id, None),
        ("PUT", f"/api/spaces/{space['id']}/members/{{x}}", {"role": "viewer"}),
        ("DELETE", f"/api/spaces/{space['id']}/members/{{x}}", None),
        ("GET", "/api/nodes/{x}", None),
        ("PATCH", "/api/nodes/{x}", {"name": "x"}),
        ("GET", "/api/nodes/{x}/children", None),
        ("DELETE", "/api/api-tokens/{x}", None),
    ]
    # ids that exist but belong to bob: alice cannot discover them
    foreign = {"/api/spaces/{x}": [bob_space["id"], bob.personal_space_id],
               "/api/nodes/{x}": [bobs["id"]], "/api/api-tokens/{x}": [bob_token["id"]]}
    before = row_counts(db)
    failures = []
    for method, template, body in routes:
        ids = [unknown, *GARBAGE_IDS]
        for prefix, theirs in foreign.items():
            if template.startswith(prefix.split("{x}")[0] + "{x}"):
                ids += theirs
        for x in ids:
            path = template.replace("{x}", x)
            r = alice.request(method, path, json_body=body)
            if r.status_code != 404 or not is_problem(r, 404):
                failures.append(f"{method} {path[:80]}: {r.status_code} {r.text[:150]}")
    assert failures == []
    assert row_counts(db) == before
    # bob's things are untouched and still his
    assert bob.get(f"/api/nodes/{bobs['id']}").json["name"] == "bob's"
    assert bob.get(f"/api/spaces/{bob_space['id']}").json["name"] == "Bob's team"
    assert [t["id"] for t in bob.get("/api/api-tokens").json["items"]] == [bob_token["id"]]
    assert alice.get("/api/me").json["id"] == me


def test_foreign_ids_inside_bodies(world, db):
    alice, bob, _carol, space, node, _target, bobs = _setup(world)
    bob_space = team_space(bob, "Bob's team")
    before = row_counts(db)
    cases = [
        ("POST", "/api/nodes", {"space_id": bob_space["id"], "name": "x"}),
        ("POST", "/api/nodes", {"space_id": bob.personal_space_id, "name": "x"}),
        ("POST", "/api/nodes", {"space_id": "0" * 32, "name": "x"}),
        ("POST", "/api/nodes", {"space_id": "not-an-id", "name": "x"}),
        ("POST", "/api/nodes", {"space_id": space["id"], "parent_id": bobs["id"], "name": "x"}),
        ("POST", "/api/nodes", {"space_id": space["id"], "parent_id": "0" * 32, "name": "x"}),
        ("PATCH", f"/api/nodes/{node['id']}", {"parent_id": bobs["id"]}),
        ("PATCH", f"/api/nodes/{node['id']}", {"parent_id": "0" * 32}),
        ("PATCH", f"/api/nodes/{node['id']}", {"parent_id": "garbage"}),
    ]
    for method, path, body in cases:
        r = alice.request(method, path, json_body=body)
        assert r.status_code == 404 and is_problem(r, 404), (method, path, body, r.text)
    assert row_counts(db) == before
    assert alice.get(f"/api/nodes/{node['id']}").json["parent_id"] is None


def test_unknown_routes_and_methods_are_problems(world):
    alice = world.user("alice")
    for method, path, status in [("GET", "/api/nope", 404), ("GET", "/api", 404),
                                 ("DELETE", "/api/spaces", 405), ("PUT", "/api/nodes", 405),
                                 ("POST", "/api/me", 405), ("DELETE", "/api/users", 405)]:
        r = alice.request(method, path)
        assert r.status_code == status, (method, path, r.status_code)
        assert is_problem(r, status), r.text


def test_large_arrays_are_refused_quickly(world, db, settings):
    """A body near the size limit full of distinct objects is refused in about a second:
    validation must not compare every pair of items (uniqueItems over objects did, which
    took hours for 1 MiB) nor build an error per item."""
    import time
    alice = world.user("alice")
    before = row_counts(db)
    n = settings.max_body_bytes // 16
    for scopes in ([{"k": i} for i in range(n)], [[i, {"k": i}] for i in range(n // 2)]):
        body = json.dumps({"name": "x", "scopes": scopes}).encode()[:settings.max_body_bytes]
        body = body[:body.rfind(b",")] + b"]}"
        t0 = time.perf_counter()
        r = alice.request("POST", "/api/api-tokens", body=body,
                          headers={"Content-Type": "application/json"})
        elapsed = time.perf_counter() - t0
        assert r.status_code == 400 and is_problem(r, 400), r.text[:300]
        assert len(r.json.get("details", {}).get("errors", [])) <= 10
        assert elapsed < 5, f"{elapsed:.1f}s to refuse {len(body)} bytes"  # was: hours
    assert row_counts(db) == before


def test_nesting_limit(world):
    """Moderately nested JSON is parsed and judged on its content; absurd nesting is a
    clean 400 rather than a stack overflow (a 500) in the parser."""
    from api.body import MAX_DEPTH
    alice = world.user("alice")
    for depth, code in ((MAX_DEPTH - 2, "validation_failed"), (MAX_DEPTH + 1, "malformed_json"),
                        (100_000, "malformed_json")):
        body = b'{"space_id": "x", "name": "n", "extra": ' + b"[" * depth + b"]" * depth + b"}"
        r = alice.request("POST", "/api/nodes", body=body,
                          headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and r.json["code"] == code, (depth, r.text[:200])


def test_duplicate_keys_are_refused_and_change_nothing(world, db):
    """``{"role": "viewer", "role": "admin"}``: JSON parsers disagree on which key wins, so
    a proxy or an audit tool in front could read another request than the one acted on."""
    alice, bob = world.user("alice"), world.user("bob")
    team = team_space(alice)
    add_member(alice, team["id"], bob.user_id, "viewer")
    r = alice.request("PUT", f"/api/spaces/{team['id']}/members/{bob.user_id}",
                      body='{"role": "viewer", "role": "admin"}',
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and is_problem(r), r.text
    assert r.json["code"] == "malformed_json" and "duplicate key 'role'" in r.json["detail"]
    r = alice.request("POST", "/api/nodes", headers={"Content-Type": "application/json"},
                      body='{{"space_id": "{}", "name": "a", "x": {{"k": 1, "k": 2}}}}'.format(team["id"]))
    assert r.status_code == 400 and r.json["code"] == "malformed_json"
    members = alice.get(f"/api/spaces/{team['id']}/members").json["items"]
    assert [m["role"] for m in members if m["user_id"] == bob.user_id] == ["viewer"]


def test_a_value_outside_an_enum_is_refused_with_the_allowed_values(world, db):
    """Every enum refusal names what is allowed, taken from the type: in the message and
    in ``details.allowed`` -- a body member, an item of a list, a query parameter."""
    from storage.enums import LabelColor, OperationStatus, TokenScope, values
    alice = world.user("alice")
    space = team_space(alice)
    before = row_counts(db)
    cases = [
        (alice.post(f"/api/spaces/{space['id']}/issues/labels",
                    json={"name": "bug", "color": "#0366d6"}), "color", values(LabelColor)),
        (alice.post("/api/api-tokens", json={"name": "ci", "scopes": ["read", "admin"]}),
         "scopes/1", values(TokenScope)),
        (alice.get("/api/operations", params={"status": "done"}), "status",
         values(OperationStatus)),
    ]
    for r, field, allowed in cases:
        assert is_problem(r, 400, "validation_failed"), r.text
        details = r.json["details"]
        assert details["field"] == field
        assert details["allowed"] == list(allowed)
        assert ", ".join(allowed) in r.json["detail"]
        assert ", ".join(allowed) in details["errors"][0]["message"]
    assert row_counts(db) == before


def test_an_enum_refusal_echoes_a_bounded_part_of_the_value(world):
    alice = world.user("alice")
    space = team_space(alice)
    r = alice.post(f"/api/spaces/{space['id']}/issues/labels",
                   json={"name": "bug", "color": "x" * 5000})
    assert is_problem(r, 400, "validation_failed")
    assert len(r.json["detail"]) < 400 and r.json["detail"].endswith("pink")


def test_the_bracket_count_finds_the_depth_the_tree_walk_finds():
    """``api.body`` judges a UTF-8 body's depth from its brackets outside strings (cheap)
    instead of walking the parsed tree: both give the same verdict, brackets, quotes and
    escapes inside strings included."""
    import random

    from api.body import MAX_DEPTH, _check_tree, _depth
    from wharf.infra.errors import MalformedRequest

    def nested(depth: int, leaf: object) -> object:
        value = leaf
        for i in range(depth - 1):
            value = [value] if i % 2 else {"k[{": value, "x": "]}\\"}
        return value

    rng = random.Random(7)
    leaves = ['"[[[{{{"', "\\\"[", "]]]}}}", "\\\\", "plain", 1, None]
    for depth in (1, 2, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2, MAX_DEPTH + 6):
        for leaf in leaves:
            data = nested(depth, rng.choice(leaves) if leaf == 1 else leaf)
            raw = json.dumps(data, ensure_ascii=False).encode()
            try:
                _check_tree(json.loads(raw))
                walk = False
            except MalformedRequest:
                walk = True
            assert (_depth(raw) > MAX_DEPTH) is walk, (depth, leaf)
            assert _depth(raw) == depth - 1  # the containers around the leaf
