"""Hostile changesets against a unit, through the HTTP API, on SQLite and PostgreSQL.

Any editor (a link editor included) can post changesets to a shared unit, so a changeset
must never make the server do unbounded work, store a document later reads cannot serve,
or leave a unit that no later changeset can patch. Every answer is a 2xx or a 4xx
problem+json with a stable code; never a 500.
"""
from __future__ import annotations

import json
import time
import uuid

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from sqlalchemy import select, update

from storage.unitpatch import json_size
from storage.unitschema import CheckpointRow, UnitRow
from tests.conftest import make_settings
from wharf.infra.settings import ConfigError, Settings


def _unit(world, worker):
    alice = world.user("alice")
    r = alice.post("/api/resources", json={"space_id": alice.personal_space_id, "name": "Doc",
                                           "unit_type": "doc"},
                   headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    deadline = time.monotonic() + 60  # a loaded CI machine once took over 10 s
    op = alice.get(f"/api/operations/{r.json['id']}", params={"wait": "10"}).json
    while not op["done"] and time.monotonic() < deadline:
        op = alice.get(f"/api/operations/{r.json['id']}", params={"wait": "10"}).json
    assert op["status"] == "completed", op
    return alice, op["result"]["unit_id"]


def _post(client, unit_id, changes, base=None):
    if base is None:
        base = client.get(f"/api/units/{unit_id}").json["revision"]
    return client.post(f"/api/units/{unit_id}/changesets",
                       json={"base_revision": base, "changes": changes})


def _raw(client, unit_id, body: bytes):
    return client.request("POST", f"/api/units/{unit_id}/changesets", body=body,
                          headers={"Content-Type": "application/json"})


def _depth(value) -> int:
    """Nesting depth of a JSON value (a scalar is 0, ``{}`` is 1); iterative."""
    best, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            best = max(best, d)
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return best


def _problem(r, status, code):
    assert r.status_code == status, r.text[:500]
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json["code"] == code, r.json


# --- item 1: bounded growth -------------------------------------------------------------

def test_doubling_copies_are_refused_while_applying_and_nothing_is_stored(world, worker):
    alice, unit_id = _unit(world, worker)
    assert _post(alice, unit_id, [{"op": "add", "path": "/body/a",
                                   "value": list(range(100))}]).status_code == 200
    # Each copy doubles the document: 30 of them would need tens of gigabytes.
    changes = [{"op": "copy", "from": "/body/a", "path": "/body/a/-"} for _ in range(30)]
    start = time.monotonic()
    r = _post(alice, unit_id, changes, base=1)
    elapsed = time.monotonic() - start
    _problem(r, 413, "unit_too_large")
    assert elapsed < 15, elapsed
    unit = alice.get(f"/api/units/{unit_id}").json
    assert unit["revision"] == 1 and unit["snapshot"]["body"]["a"] == list(range(100))


def test_changeset_op_count_is_bounded(world, worker):
    alice, unit_id = _unit(world, worker)
    changes = [{"op": "test", "path": "/schemaVersion", "value": 1}] * 1001
    _problem(_post(alice, unit_id, changes, base=0), 413, "changeset_too_large")
    assert _post(alice, unit_id, changes[:1000], base=0).status_code == 200


@pytest.mark.parametrize(("name", "value"), [
    ("WHARF_UNIT_MAX_SNAPSHOT_BYTES", "12"), ("WHARF_UNIT_MAX_SNAPSHOT_BYTES", "lots"),
    ("WHARF_UNIT_MAX_CHANGESET_OPS", "0"), ("WHARF_UNIT_MAX_CHANGESET_OPS", "20000"),
    ("WHARF_UNIT_MAX_DEPTH", "1000"), ("WHARF_UNIT_MAX_DEPTH", "2")])
def test_unit_limit_settings_are_validated(name, value):
    with pytest.raises(ConfigError, match=f"^{name}="):
        Settings.from_env({name: value})


def test_unit_limit_settings_defaults():
    s = Settings.from_env({})
    assert (s.unit_max_snapshot_bytes, s.unit_max_changeset_ops, s.unit_max_depth) == (
        16 * 1024 * 1024, 1000, 400)


# --- item 2: bounded depth, and no unit becomes unpatchable ----------------------------

def _nest(levels: int, leaf=1):
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


def test_nesting_over_several_changesets_stops_at_the_depth_limit(world, worker):
    alice, unit_id = _unit(world, worker)
    path, refused = "/body/a", None
    for _step in range(12):  # 12 x 50 levels would reach ~600
        r = _post(alice, unit_id, [{"op": "add", "path": path, "value": _nest(50)}])
        if r.status_code != 200:
            refused = r
            break
        path += "/a" * 50
    assert refused is not None, "a document deeper than 400 levels was stored"
    _problem(refused, 400, "unit_too_deep")
    unit = alice.get(f"/api/units/{unit_id}").json
    assert _depth(unit["snapshot"]) <= 400
    # the unit stays patchable
    ok = _post(alice, unit_id, [{"op": "add", "path": "/body/title", "value": "still fine"}])
    assert ok.status_code == 200, ok.text[:300]
    # a copy that would nest the document into itself past the limit is refused too
    deep = _post(alice, unit_id, [{"op": "copy", "from": "/body",
                                   "path": "/body" + "/a" * 50 + "/x"}])
    _problem(deep, 400, "unit_too_deep")
    moved = _post(alice, unit_id, [
        {"op": "add", "path": "/body/z", "value": _nest(55, {})},
        {"op": "move", "from": "/body/a", "path": "/body/z" + "/a" * 55 + "/m"}])
    _problem(moved, 400, "unit_too_deep")


def test_a_stored_document_deeper_than_the_limit_stays_patchable(world, worker, components):
    alice, unit_id = _unit(world, worker)
    legacy = {"type": "doc", "schemaVersion": 1, "body": {"a": _nest(560)}}
    with components.unitstore.db.write() as s:
        s.execute(update(CheckpointRow).where(CheckpointRow.unit_id == unit_id,
                                              CheckpointRow.revision == 0).values(
            snapshot=legacy, size=json_size(legacy)))
        s.execute(update(UnitRow).where(UnitRow.id == unit_id).values(size=json_size(legacy)))
    components.unitstore.heads.forget(unit_id)  # written beneath the process's copy
    r = _post(alice, unit_id, [{"op": "add", "path": "/body/title", "value": "x"}], base=0)
    assert r.status_code == 200, r.text[:300]
    r = _post(alice, unit_id, [{"op": "copy", "from": "/body/a", "path": "/body/b"}])
    _problem(r, 400, "unit_too_deep")
    r = _post(alice, unit_id, [{"op": "move", "from": "/body/a/a/a", "path": "/body/c"}])
    assert r.status_code == 200, r.text[:300]  # shallower: allowed
    r = _post(alice, unit_id, [{"op": "test", "path": "/body/c", "value": {"a": 1}}])
    _problem(r, 400, "invalid_changeset")
    r = _post(alice, unit_id, [{"op": "remove", "path": "/body/c"}])
    assert r.status_code == 200
    unit = alice.get(f"/api/units/{unit_id}").json
    assert unit["snapshot"]["body"] == {"title": "x", "a": {"a": {}}}


# --- item 3: invalid pointers, non-finite numbers, bounded detail -----------------------

INVALID_OPS = [
    {"op": "add", "path": "/x~2", "value": 1},
    {"op": "add", "path": "x", "value": 1},
    {"op": "remove", "path": "/body/~"},
    {"op": "copy", "from": "body", "path": "/body/x"},
    {"op": "move", "from": "/body/~3", "path": "/body/x"},
    {"op": "test", "path": "nope", "value": 1},
    {"op": "add", "path": 7, "value": 1},
    {"op": "copy", "from": ["/body"], "path": "/body/x"},
    {"op": "move", "path": "/body/x"},
    {"op": "add", "path": "/body/x"},
    {"op": 3, "path": "/body/x"},
    {"op": "replace", "path": "/body/-", "value": 1},
    {"op": "add", "path": "", "value": [1]},
    {"op": "remove", "path": ""},
    {"op": "move", "from": "/body", "path": "/body/x"},
]


def test_invalid_operations_are_400(world, worker):
    alice, unit_id = _unit(world, worker)
    for op in INVALID_OPS:
        r = _post(alice, unit_id, [{"op": "add", "path": "/body/ok", "value": 1}, op], base=0)
        _problem(r, 400, "invalid_changeset")
        assert r.json.get("details", {}).get("op_index", 1) == 1, (op, r.json)
    assert alice.get(f"/api/units/{unit_id}").json["revision"] == 0


def test_non_finite_numbers_are_refused_at_parsing(world, worker):
    alice, unit_id = _unit(world, worker)
    for number in (b"1e999", b"-1e999", b"1E400", b"NaN", b"Infinity", b"-Infinity"):
        body = (b'{"base_revision": 0, "changes": [{"op": "add", "path": "/body/n", '
                b'"value": [' + number + b']}]}')
        _problem(_raw(alice, unit_id, body), 400, "malformed_json")
        # the same rule for every request body, not only changesets
        r = alice.request("POST", "/api/spaces", body=b'{"name": ' + number + b'}',
                          headers={"Content-Type": "application/json"})
        _problem(r, 400, "malformed_json")
    unit = alice.get(f"/api/units/{unit_id}")
    assert unit.json["revision"] == 0
    json.loads(unit.text, parse_constant=lambda c: pytest.fail(f"{c} in a response"))
    ok = _raw(alice, unit_id, b'{"base_revision": 0, "changes": [{"op": "add", '
                              b'"path": "/body/n", "value": 1.7976931348623157e308}]}')
    assert ok.status_code == 200 and ok.json["snapshot"]["body"]["n"] == 1.7976931348623157e308


def test_failing_test_op_does_not_echo_the_document(world, worker):
    alice, unit_id = _unit(world, worker)
    big = ["x" * 1000] * 400
    assert _post(alice, unit_id, [{"op": "add", "path": "/body/big", "value": big}],
                 base=0).status_code == 200
    r = _post(alice, unit_id, [{"op": "test", "path": "/body", "value": {"big": []}}], base=1)
    _problem(r, 400, "invalid_changeset")
    assert len(r.content) < 2000, len(r.content)
    long_path = "/body/" + "y" * 200_000
    r = _post(alice, unit_id, [{"op": "remove", "path": long_path}], base=1)
    _problem(r, 400, "invalid_changeset")
    assert len(r.content) < 2000, len(r.content)


def test_every_rfc6902_operation_applies(world, worker, components):
    """add, replace, remove, move, copy and test, on objects and arrays (``-`` appends);
    the document shares nothing with the changeset the unit store records."""
    alice, unit_id = _unit(world, worker)
    changes = [
        {"op": "add", "path": "/body/a", "value": {"x": [1, 2]}},
        {"op": "add", "path": "/body/a/x/-", "value": 3},
        {"op": "add", "path": "/body/a/x/0", "value": 0},
        {"op": "add", "path": "/body/a/y", "value": "y"},
        {"op": "copy", "from": "/body/a", "path": "/body/b"},
        {"op": "add", "path": "/body/b/x/-", "value": "only in b"},
        {"op": "copy", "from": "/body/a/x", "path": "/body/a/x/1"},
        {"op": "replace", "path": "/body/a/y", "value": "z"},
        {"op": "replace", "path": "/body/b/x/0", "value": -1},
        {"op": "move", "from": "/body/a/y", "path": "/body/m~1n"},
        {"op": "move", "from": "/body/b/x/0", "path": "/body/b/x/-"},
        {"op": "move", "from": "/body/b", "path": "/body/b"},
        {"op": "remove", "path": "/body/b/x/1"},
        {"op": "add", "path": "/body/t~0", "value": {"n": 1.0}},
        {"op": "test", "path": "/body/t~0", "value": {"n": 1}},
        {"op": "test", "path": "/body/m~1n", "value": "z"},
    ]
    r = _post(alice, unit_id, changes, base=0)
    assert r.status_code == 200, r.text[:500]
    body = r.json["snapshot"]["body"]
    assert body == {"a": {"x": [0, [0, 1, 2, 3], 1, 2, 3]},
                    "b": {"x": [1, 3, "only in b", -1], "y": "y"},
                    "m/n": "z", "t~": {"n": 1.0}}, body
    assert alice.get(f"/api/units/{unit_id}").json["snapshot"]["body"] == body
    from storage.unitschema import RevisionRow
    with components.unitstore.db.read() as s:
        recorded = s.scalars(select(RevisionRow.changeset).where(
            RevisionRow.unit_id == unit_id, RevisionRow.revision == 1)).one()
    assert recorded == changes  # later operations did not alter the values they inserted


def test_refusals_never_echo_document_values(world, worker):
    """A pointer that does not resolve, into a large object or array: the problem names the
    operation and the client's pointer, never the document's values."""
    alice, unit_id = _unit(world, worker)
    big = {f"k{i}": f"SECRET-{i}-" + "v" * 100 for i in range(3000)}
    assert _post(alice, unit_id, [{"op": "add", "path": "/body/big", "value": big},
                                  {"op": "add", "path": "/body/list", "value": list(big.values())}],
                 base=0).status_code == 200
    refused = [
        {"op": "remove", "path": "/body/big/missing"},
        {"op": "remove", "path": "/body/big/missing/deeper"},
        {"op": "add", "path": "/body/big/missing/deeper", "value": 1},
        {"op": "replace", "path": "/body/big/missing", "value": 1},
        {"op": "copy", "from": "/body/big/missing", "path": "/body/c"},
        {"op": "move", "from": "/body/big/missing", "path": "/body/c"},
        {"op": "test", "path": "/body/big/missing", "value": 1},
        {"op": "test", "path": "/body/big/k1/x", "value": 1},
        {"op": "add", "path": "/body/big/k1/x", "value": 1},
        {"op": "remove", "path": "/body/list/3000"},
        {"op": "add", "path": "/body/list/3001", "value": 1},
        {"op": "add", "path": "/body/list/x", "value": 1},
        {"op": "add", "path": "/body/list/01", "value": 1},
        {"op": "replace", "path": "/body/list/-", "value": 1},
        {"op": "move", "from": "/body/list/-", "path": "/body/c"},
        {"op": "copy", "from": "/body/list/5/x", "path": "/body/c"},
        {"op": "move", "from": "/body/big", "path": "/body/big/k1"},
        {"op": "remove", "path": "/body/big/k1/0"},
    ]
    for op in refused:
        r = _post(alice, unit_id, [{"op": "test", "path": "/schemaVersion", "value": 1}, op],
                  base=1)
        _problem(r, 400, "invalid_changeset")
        assert r.json["details"]["op_index"] == 1, (op, r.json)
        assert "SECRET" not in r.text and len(r.content) < 1000, (op, r.text[:1000])
    assert alice.get(f"/api/units/{unit_id}").json["revision"] == 1


# --- the property: random hostile changesets ---------------------------------------------

SMALL = dict(unit_max_snapshot_bytes=64 * 1024, unit_max_changeset_ops=20, unit_max_depth=40)


@pytest.fixture
def small_settings(tmp_path, database_url, unitstore_url):
    return make_settings(tmp_path, database_url, unitstore_url, **SMALL)


@pytest.fixture
def small_world(small_settings, db):
    import dramatiq

    from tests.conftest import World
    from wharfd.runtime import Components
    comps = Components(small_settings, db=db)
    w = dramatiq.Worker(comps.broker, worker_threads=1, worker_timeout=50)
    w.start()
    yield World(comps.api_app())
    w.stop(timeout=5000)
    comps.close()


KEYS = st.sampled_from(["body", "a", "b", "0", "1", "-", "~0", "~1", "~2", "", "x~", "ü"])
NEAR = st.builds(lambda root, parts: root + "".join("/" + p for p in parts),
                 st.sampled_from(["/body", "/body", ""]),
                 st.lists(st.sampled_from(["a", "b", "0", "1", "-"]), max_size=4))
POINTERS = st.one_of(
    NEAR, NEAR, NEAR, NEAR,
    st.lists(KEYS, max_size=6).map(lambda parts: "".join("/" + p for p in parts)),
    st.text(max_size=12),
    st.sampled_from(["/body", "/body/a", "/body/a/-", "/body/a/0", "", "/", "x", "/x~2"]),
    st.integers(), st.none())
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "b", "0", "x"]),
                                                 inner, max_size=4)),
    max_leaves=20)
GROWTH = st.sampled_from([  # copies and nesting that apply to most states: they hit the limits
    {"op": "copy", "from": "/body", "path": "/body/b"},
    {"op": "copy", "from": "", "path": "/body/c"},
    {"op": "add", "path": "/body/d", "value": _nest(12, {})},
    {"op": "copy", "from": "/body/d", "path": "/body/d" + "/a" * 12 + "/a"},
    {"op": "add", "path": "/body/s", "value": "x" * 2000},
    {"op": "move", "from": "/body/b", "path": "/body/d/a"},
    {"op": "add", "path": "/body/a/-", "value": _nest(10, [1, 2, 3])},
])
VALID_OPS = st.one_of(
    st.builds(lambda op, path, value: {"op": op, "path": path, "value": value},
              st.sampled_from(["add", "add", "add", "replace", "test"]), NEAR, VALUES),
    st.builds(lambda op, path, source: {"op": op, "path": path, "from": source},
              st.sampled_from(["move", "copy", "copy"]), NEAR, NEAR),
    st.builds(lambda path: {"op": "remove", "path": path}, NEAR))
OPS = st.one_of(
    VALID_OPS, VALID_OPS, VALID_OPS,
    st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"])},
        optional={"path": POINTERS, "from": POINTERS, "value": VALUES}),
    GROWTH)
CHANGESETS = st.one_of(st.lists(OPS, min_size=1, max_size=3),
                       st.lists(OPS, min_size=1, max_size=25))


SEED = {"a": [1, {"a": [], "b": {}}, "x"], "b": {"a": {"a": 1}, "0": [0], "1": "y"}}


def _property(world, strategy, examples: int) -> dict:
    alice, unit_id = _unit(world, None)
    seen: dict[str, int] = {}

    @hsettings(max_examples=examples, deadline=None, database=None, derandomize=True,
               suppress_health_check=list(HealthCheck))
    @given(changes=strategy, stale=st.integers(0, 9).map(lambda n: n == 7))
    def check(changes, stale):
        unit = alice.get(f"/api/units/{unit_id}").json
        base = unit["revision"]
        body = unit["snapshot"].get("body")
        if not isinstance(body, dict) or "a" not in body:
            # give random pointers something to resolve against
            fresh = {"type": "doc", "schemaVersion": 1, "body": SEED}
            seeded = _post(alice, unit_id, [{"op": "add", "path": "", "value": fresh}], base)
            assert seeded.status_code == 200, seeded.text[:300]
            base += 1
            unit = alice.get(f"/api/units/{unit_id}").json
        r = _post(alice, unit_id, changes, base=base - 1 if stale and base else base)
        outcome = str(r.status_code) if r.status_code < 300 else r.json.get("code", "?")
        seen[outcome] = seen.get(outcome, 0) + 1
        if r.status_code >= 300:
            assert 400 <= r.status_code < 500, r.text[:500]
            assert r.headers["content-type"].startswith("application/problem+json")
            assert r.json["code"] and len(r.content) < 4000, r.text[:500]
        got = alice.get(f"/api/units/{unit_id}")
        assert got.status_code == 200
        doc = json.loads(got.text, parse_constant=lambda c: pytest.fail(f"{c} stored"))
        snapshot = doc["snapshot"]
        assert isinstance(snapshot, dict)
        assert _depth(snapshot) <= SMALL["unit_max_depth"]
        size = len(json.dumps(snapshot, ensure_ascii=False, separators=(",", ":")).encode())
        assert size <= SMALL["unit_max_snapshot_bytes"]
        assert doc["revision"] == base + (1 if r.status_code == 200 else 0)
        if r.status_code != 200:  # nothing stored, not even the operations before the failing one
            assert snapshot == unit["snapshot"]

    check()
    return seen


def test_random_changesets_never_500_and_the_unit_stays_valid(small_world):
    """Anything goes: malformed operations, pointers and values."""
    seen = _property(small_world, CHANGESETS, 40)
    assert seen.get("200") and seen.get("invalid_changeset"), seen


def test_random_wellformed_changesets_stay_within_the_limits(small_world):
    """Well-formed operations that grow, nest, copy and move: the limits hold."""
    seen = _property(small_world, st.lists(GROWTH,
                                           min_size=1, max_size=8), 30)
    assert seen.get("200") and (seen.get("unit_too_large") or seen.get("unit_too_deep")), seen
