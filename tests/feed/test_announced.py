"""Every write announces its feed event once it commits (issue 39, the publishing side):
the events the in-process bus holds after each kind of change, with the ids the issue
names and nothing else a client could read content from; a write that fails announces
nothing; and who hears each one (``wharf.feed.audience``), decided at delivery: a member
removed from a space stops hearing it at once, a stranger never does, an operation is
heard by its submitter only."""
from __future__ import annotations

import uuid

import dramatiq
import pytest

from tests.conftest import World
from tests.engine.test_operations import wait_done
from tests.exchange.test_exports import make_unit
from tests.support.foundation import add_member, team_space
from wharf.feed import audience
from wharf.feed.events import EventType
from wharfd.runtime import Components


def key() -> str:
    return uuid.uuid4().hex


class Env:
    def __init__(self, settings, db):
        self.components = Components(settings, db=db)
        self.bus = self.components.feed_bus
        self.db = db
        self.world = World(self.components.api_app())
        self.worker = dramatiq.Worker(self.components.broker, worker_threads=2,
                                      worker_timeout=50)
        self.worker.start()
        self.cursor = "0-0"

    def close(self):
        self.worker.stop(timeout=5000)
        self.components.close()

    def new(self) -> list:
        """The events stored since the last call."""
        self.bus.flush()
        events = self.bus.since(self.cursor) or []
        if events:
            self.cursor = events[-1].cursor
        return events

    def hearers(self, event, users) -> set[str]:
        with self.db.read() as s:
            return audience.hearers(s, event, [u.user_id for u in users])


@pytest.fixture
def env(settings, db):
    e = Env(settings, db)
    yield e
    e.close()


def only(events, type_):
    got = [e for e in events if e.type == type_]
    assert len(got) == 1, events
    return got[0]


def test_tree_changes_announce_space_and_parent(env):
    alice = env.world.user("alice")
    space = alice.personal_space_id
    env.new()
    r = alice.post("/api/nodes", json={"space_id": space, "name": "Folder"})
    folder = r.json["id"]
    created = only(env.new(), EventType.TREE_CHANGED)
    assert (created.space_id, created.parent_id) == (space, None)
    r = alice.post("/api/nodes", json={"space_id": space, "name": "Inner", "parent_id": folder})
    inner = r.json["id"]
    assert only(env.new(), EventType.TREE_CHANGED).parent_id == folder
    assert alice.patch(f"/api/nodes/{inner}", json={"name": "Renamed"}).status_code == 200
    assert only(env.new(), EventType.TREE_CHANGED).parent_id == folder
    assert alice.post(f"/api/nodes/{inner}/trash").status_code in (200, 201)
    trashed = only(env.new(), EventType.TREE_CHANGED)
    assert trashed.space_id == space
    # what a client receives: ids only, never the node's name
    assert set(trashed.public()) <= {"type", "cursor", "space_id", "parent_id"}
    assert "Renamed" not in str(trashed.public())


def test_a_created_resource_announces_its_tree_and_its_operation(env):
    alice = env.world.user("alice")
    env.new()
    unit = make_unit(alice, "doc", "Plan", {"title": "Plan"})
    events = env.new()
    tree = [e for e in events if e.type == EventType.TREE_CHANGED]
    assert tree and tree[0].space_id == alice.personal_space_id
    done = [e for e in events if e.type == EventType.OPERATION_DONE]
    assert done and done[0].status == "completed" and done[0].kind == "create_resource"
    assert done[0].actor_id == alice.user_id and "actor_id" not in done[0].public()
    changed = only(events, EventType.UNIT_CHANGED)
    assert (changed.unit_id, changed.revision) == (unit, 1)


def test_issues_comments_and_worktrees_announce_theirs(env):
    alice = env.world.user("alice")
    space = team_space(alice)["id"]
    unit = make_unit(alice, "doc", "Plan", {"title": "Plan"}, space)
    env.new()
    r = alice.post(f"/api/spaces/{space}/issues", json={"title": "Ship it"})
    assert r.status_code == 201, r.text
    issue = only(env.new(), EventType.ISSUES_CHANGED)
    assert (issue.space_id, issue.number) == (space, r.json["number"])
    r = alice.post(f"/api/units/{unit}/comments", json={"anchor": {"at": 1}, "body": "hm"})
    assert r.status_code == 201, r.text
    comment = only(env.new(), EventType.COMMENTS_CHANGED)
    assert comment.unit_id == unit and "hm" not in str(comment.public())
    r = alice.post("/api/worktrees", json={"kind": "user", "name": "Draft"},
                   headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    assert wait_done(alice, r.json["id"])["status"] == "completed"
    assert any(e.type == EventType.WORKTREES_CHANGED for e in env.new())


def test_a_refused_write_announces_nothing(env):
    alice, bob = env.world.user("alice"), env.world.user("bob")
    env.new()
    r = bob.post("/api/nodes", json={"space_id": alice.personal_space_id, "name": "x"})
    assert r.status_code in (403, 404)
    assert env.new() == []


def test_who_hears_a_space_event_is_decided_at_delivery(env):
    alice, bob, eve = (env.world.user(n) for n in ("alice", "bob", "eve"))
    space = team_space(alice)["id"]
    add_member(alice, space, bob.user_id, "viewer")
    env.new()
    alice.post("/api/nodes", json={"space_id": space, "name": "Plans"})
    event = only(env.new(), EventType.TREE_CHANGED)
    assert env.hearers(event, [alice, bob, eve]) == {alice.user_id, bob.user_id}
    assert alice.delete(f"/api/spaces/{space}/members/{bob.user_id}").status_code == 204
    # the same event, delivered after the removal: bob no longer hears it
    assert env.hearers(event, [alice, bob, eve]) == {alice.user_id}


def test_a_unit_event_reaches_a_grantee_but_not_a_stranger(env):
    alice, bob, eve = (env.world.user(n) for n in ("alice", "bob", "eve"))
    unit = make_unit(alice, "doc", "Plan", {"title": "Plan"})
    node = alice.get(f"/api/units/{unit}").json["node_id"]
    r = alice.put(f"/api/nodes/{node}/grants/{bob.user_id}", json={"role": "viewer"})
    assert r.status_code in (200, 201), r.text
    env.new()
    r = alice.post(f"/api/units/{unit}/changesets", json={
        "base_revision": 1, "changes": [{"op": "replace", "path": "/body/title", "value": "x"}]})
    assert r.status_code == 200, r.text
    event = only(env.new(), EventType.UNIT_CHANGED)
    assert event.revision == 2
    assert env.hearers(event, [alice, bob, eve]) == {alice.user_id, bob.user_id}
    with env.db.read() as s:
        assert audience.may_subscribe_unit(s, bob.user_id, unit)
        assert not audience.may_subscribe_unit(s, eve.user_id, unit)
        assert not audience.may_subscribe_space(s, eve.user_id, alice.personal_space_id)


def test_an_operation_is_heard_by_its_submitter_only(env):
    alice, bob = env.world.user("alice"), env.world.user("bob")
    env.new()
    make_unit(alice, "doc", "Plan", {"title": "Plan"})
    done = next(e for e in env.new() if e.type == EventType.OPERATION_DONE)
    assert env.hearers(done, [alice, bob]) == {alice.user_id}


def test_the_bus_replays_after_a_cursor_and_answers_none_outside_its_window(env):
    alice = env.world.user("alice")
    env.new()
    for n in range(3):
        alice.post("/api/nodes", json={"space_id": alice.personal_space_id, "name": f"n{n}"})
    events = env.new()
    assert len(events) == 3
    assert [e.cursor for e in env.bus.since(events[0].cursor)] == [
        e.cursor for e in events[1:]]
    assert env.bus.since(events[-1].cursor) == []
    assert env.bus.since("99999999999999-0") is None  # not this log's
    assert env.bus.since("garbage") is None
