"""Fair claiming (issue 19 item 1, ``WHARF_FAIR_CLAIMING``), in process, on SQLite and
PostgreSQL: a batched claim takes due operations round-robin across actors, each actor's
oldest first, so an operation submitted behind another actor's backlog is in the very next
claim (behind at most ``limit - 1`` others of that claim); off, the claim is oldest first
over everyone. On PostgreSQL the claim stays bounded with a deep backlog (no scan of the
backlog: rows read counted from ``pg_stat_xact_user_tables``)."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select, text

from storage.models import Operation
from wharf.infra.clock import utcnow
from wharf.operations.claiming import claim_statement
from wharf.operations.executor import Executor


def create(client, space_id: str, name: str) -> str:
    r = client.post("/api/resources", json={"space_id": space_id, "name": name,
                                            "unit_type": "doc"},
                    headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    return r.json["id"]


def statuses(db) -> dict[str, str]:
    with db.read() as s:
        return {i: st for i, st in s.execute(select(Operation.id, Operation.status))}


def completed(db, ids: list[str]) -> list[bool]:
    st = statuses(db)
    return [st[i] == "completed" for i in ids]


def backlog(world, sizes: dict[str, int]) -> dict[str, list[str]]:
    """Each user's operations, submitted one user after the other (alice's all first)."""
    out: dict[str, list[str]] = {}
    for name, n in sizes.items():
        u = world.user(name)
        out[name] = [create(u, u.personal_space_id, f"{name}-{i}") for i in range(n)]
    return out


def test_a_claim_takes_actors_round_robin_each_oldest_first(world, components, db):
    ops = backlog(world, {"alice": 6, "bob": 2, "carol": 1})
    a, b, c = ops["alice"], ops["bob"], ops["carol"]
    ex = components.executor
    assert components.settings.fair_claiming  # on by default
    assert ex.run_batch(["create_resource"], limit=4, worker_id="w1") == 4
    # first round: every actor's oldest; second round: alice's next (older than bob's)
    assert completed(db, a) == [True, True, False, False, False, False]
    assert completed(db, b) == [True, False]
    assert completed(db, c) == [True]
    run = ex.run_batch_report(["create_resource"], limit=4, worker_id="w1")
    # bob's last one is in this claim; alice's are taken oldest first
    assert completed(db, b) == [True, True]
    done_a = completed(db, a)
    assert done_a[:4] == [True] * 4 and done_a == sorted(done_a, reverse=True)
    assert run.full  # alice may have more (she gave all a claim lets one actor give)
    while ex.run_batch(["create_resource"], limit=4, worker_id="w1"):
        pass
    assert set(statuses(db).values()) == {"completed"}


def test_an_operation_behind_a_backlog_is_in_the_next_claim(world, components, db):
    """The bound, per claim: bob's operation waits behind at most ``limit - 1`` of alice's
    (those claimed with it), however many alice has due; with the setting off it waits
    behind all of them."""
    ops = backlog(world, {"alice": 30, "bob": 1})
    ex = components.executor
    claimed = ex.run_batch(["create_resource"], limit=5, worker_id="w1")
    assert completed(db, ops["bob"]) == [True]
    # SQLite fills the claim (4 of alice's); PostgreSQL gives each of the two actors at
    # most ceil(5 / 2) = 3 (the LATERAL LIMIT that keeps the claim bounded)
    assert completed(db, ops["alice"]) == [True] * (claimed - 1) + [False] * (31 - claimed)
    assert claimed in (4, 5)


def test_off_claims_oldest_first_over_everyone(world, components, db):
    ops = backlog(world, {"alice": 6, "bob": 2})
    ex = Executor(components.db, components.settings.replace(fair_claiming=False),
                  components.handlers)
    assert ex.run_batch(["create_resource"], limit=4, worker_id="w1") == 4
    assert completed(db, ops["alice"]) == [True] * 4 + [False] * 2
    assert completed(db, ops["bob"]) == [False, False]


def test_named_operation_first_then_fair_others(world, components, db):
    ops = backlog(world, {"alice": 5, "bob": 1})
    last = ops["alice"][-1]
    assert components.executor.run_batch(["create_resource"], limit=3, worker_id="w1",
                                         include=last) == 3
    assert completed(db, ops["alice"]) == [True, False, False, False, True]
    assert completed(db, ops["bob"]) == [True]


def test_the_setting_reads_from_the_environment():
    from wharf.infra.settings import ConfigError, Settings
    assert Settings.from_env({}).fair_claiming is True
    assert Settings.from_env({"WHARF_FAIR_CLAIMING": "off"}).fair_claiming is False
    with pytest.raises(ConfigError, match="WHARF_FAIR_CLAIMING"):
        Settings.from_env({"WHARF_FAIR_CLAIMING": "sometimes"})


# --- PostgreSQL: bounded with a deep backlog ----------------------------------------------

@pytest.fixture
def pg_only(backend):
    if backend != "postgres":
        pytest.skip("the bounded plan is PostgreSQL's (SQLite ranks every due row)")


BACKLOG = 20000


def rows_read(conn) -> tuple[int, int]:
    """(rows read by sequential scans, heap rows fetched by index scans) of ``operations``
    in this transaction so far."""
    row = conn.execute(text(
        "SELECT coalesce(seq_tup_read, 0), coalesce(idx_tup_fetch, 0) "
        "FROM pg_stat_xact_user_tables WHERE relname = 'operations'")).one()
    return int(row[0]), int(row[1])


def test_fair_claim_reads_a_bounded_number_of_rows_whatever_the_backlog(pg_only, world,
                                                                        components, db):
    alice, bob = world.user("alice"), world.user("bob")
    mine = create(bob, bob.personal_space_id, "bob-0")
    with db.write() as s:
        s.connection().execute(text(
            "INSERT INTO operations (id, kind, status, actor_id, request_fingerprint, "
            "payload, attempts, max_attempts, created_at, updated_at) "
            "SELECT md5(g::text), 'create_resource', 'pending', :actor, 'x', '{}', 0, 5, "
            "now() - interval '1 hour' + g * interval '1 ms', now() "
            "FROM generate_series(1, :n) g"), {"actor": alice.user_id, "n": BACKLOG})
    with db.write() as s:
        s.connection().execute(text("ANALYZE operations"))
    now = utcnow()
    limit = 32
    params = {"now": now, "lease_until": now, "worker": "w1", "kinds": ["create_resource"],
              "n": limit}
    for fair in (True, False):
        engine = db.engine
        with engine.connect() as conn, conn.begin() as tx:
            before = rows_read(conn)
            rows = conn.execute(claim_statement(False, True, True, True, fair), params).all()
            seq, fetched = (x - y for x, y in zip(rows_read(conn), before, strict=True))
            tx.rollback()
        ids = {r.id for r in rows}
        print(f"fair={fair}: claimed {len(rows)}, seq rows {seq}, index-fetched {fetched}")
        # fair: two actors, each may give half the claim: 16 of alice's and bob's one
        assert len(rows) == (limit // 2 + 1 if fair else limit)
        assert seq == 0
        assert fetched < 10 * limit  # not the backlog of 20,000
        assert (mine in ids) == fair  # bob's (the newest) only in the fair claim


# --- rotation: the claim serves the next actors after the last one served (review 19) ----

def seed(db, backlog_of: dict[str, int], kind: str = "fair_probe") -> dict[str, list[str]]:
    """Users named (and identified) by the keys, each with that many due operations of a
    kind no handler runs (a claimed one fails at once: only the claim order matters),
    submitted one actor after the other, oldest first."""
    from datetime import timedelta

    from storage.models import User
    base = utcnow() - timedelta(hours=1)
    out: dict[str, list[str]] = {}
    t = 0
    with db.write() as s:
        for actor in backlog_of:
            s.add(User(id=actor, username=actor, username_key=actor))
        s.flush()
        for actor, n in backlog_of.items():
            out[actor] = []
            for _ in range(n):
                op_id = uuid.uuid4().hex
                s.add(Operation(id=op_id, kind=kind, status="pending", actor_id=actor,
                                request_fingerprint="x", payload={}, attempts=0,
                                max_attempts=1, created_at=base + timedelta(microseconds=t),
                                updated_at=base))
                out[actor].append(op_id)
                t += 1000
    return out


def claimed_ids(db) -> set[str]:
    with db.read() as s:
        return set(s.scalars(select(Operation.id).where(Operation.attempts > 0)))


def claims_until(db, ex, op_id: str, limit: int, most: int) -> int:
    """How many claims (of ``limit``) until ``op_id`` is claimed (at most ``most``)."""
    for i in range(1, most + 1):
        assert ex.run_batch(["fair_probe"], limit=limit, worker_id="w1") > 0
        if op_id in claimed_ids(db):
            return i
    return most + 1


def test_more_actors_than_a_claim_serves_rotate(components, db):
    """n = 2 with two deep backlogs (a1, a2) ahead of b's one: b is served within
    ceil(actors / n) = 2 claims, not after the backlogs (claim 51 before)."""
    ops = seed(db, {"a1": 50, "a2": 50, "b": 1})
    assert claims_until(db, components.executor, ops["b"][0], limit=2, most=5) <= 2


def test_a_claim_of_one_is_round_robin(components, db):
    """n = 1 (long kinds' batch limit): the actors are served in turn, not FIFO."""
    ops = seed(db, {"a1": 5, "a2": 5, "b": 1})
    ex = components.executor
    served = []
    for _ in range(6):
        before = claimed_ids(db)
        assert ex.run_batch(["fair_probe"], limit=1, worker_id="w1") == 1
        (new,) = claimed_ids(db) - before
        served.append(next(a for a, ids in ops.items() if new in ids))
    assert served == ["a1", "a2", "b", "a1", "a2", "a1"]


def test_actors_past_the_first_hundreds_are_reached(components, db):
    """300 actors with due operations, and one more whose id sorts last: it is reached
    within ceil(301 / 32) = 10 claims of 32 (before: only the first 256 pairs were ever
    looked at while they had due operations)."""
    many = {f"m{i:03d}": 3 for i in range(300)}
    ops = seed(db, {**many, "z" * 32: 1})
    assert claims_until(db, components.executor, ops["z" * 32][0], limit=32, most=30) <= 10
