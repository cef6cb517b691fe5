"""kill -9 of a worker during a worktree merge, with real processes (issue 14): a ``wharf
api`` (gunicorn), ``wharf worker`` and ``wharf scheduler`` subprocesses on PostgreSQL +
Redis + a real S3-compatible server (moto's server mode), the cluster of
``tests/processes/test_assets.py``.

Set up over HTTP: 20 trunk docs in a user worktree, each with draft changesets — most
fast-forward (one or two draft revisions), every fourth also changed on trunk so it
merges three-way — and a worktree asset on three of them; the worktree is marked ready
and merged. The test holds the row lock of the eleventh unit's draft (in the unit store
database), so the worker blocks inside ``perform`` exactly there: ten merge records
committed, the eleventh unit's trunk revisions written but not committed (the
``WHARF_TEST_PAUSE_FILE`` hook pauses before the product commit, after ``perform``: it
cannot stop a merge half-way). The process group holding the operation's lease is killed
with SIGKILL, the lock released and a new worker started.

After the recovery: the operation completed (its attempts ``lost`` then ``completed``);
every unit merged exactly once — one merge record per unit, as many trunk revisions as a
single merge writes (one per draft revision for a fast-forward, one for a three-way
merge), each naming this operation in its ``origin``, contiguous, with the expected
documents; the worktree ``merged``; each worktree asset published to trunk exactly once;
the bucket's keys == ``unit_assets``' keys."""
from __future__ import annotations

import hashlib
import random
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.processes.test_assets import Api, Cluster
from tests.support.processes import cluster_for_test, databases_fixture, redis_fixture
from tests.support.s3 import moto_fixture
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

UNITS = 20
VICTIM = 10  # the ordinal whose draft row the test locks: ten units merged before it
THREE_WAY = {i for i in range(UNITS) if i % 4 == 1}  # also changed on trunk
TWO_REVISIONS = {i for i in range(UNITS) if i % 4 in (2, 3)} | {VICTIM}  # fast-forwards
WITH_ASSET = (3, VICTIM, 17)


def key() -> str:
    return uuid.uuid4().hex


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


pg_databases = databases_fixture("wharf_mergeproc")
redis_ns = redis_fixture("worktree-merge-processes")


moto = moto_fixture()


class MergeCluster(Cluster):
    """The assets cluster, observing the unit store too."""

    def unit_rows(self, sql: str, **params) -> list:
        with self.units_engine.connect() as conn:
            return list(conn.execute(text(sql), params).all())

    def unit_scalar(self, sql: str, **params):
        with self.units_engine.connect() as conn:
            return conn.execute(text(sql), params).scalar()

    def state(self) -> list[str]:
        ops = self.rows("SELECT id, kind, status, attempts, lease_owner, lease_expires_at, "
                        "error FROM operations WHERE kind = 'merge_worktree'")
        records = self.unit_rows("SELECT operation_id, unit_id, outcome, "
                                 "trunk_revision_before, trunk_revision_after "
                                 "FROM unit_merge_records ORDER BY created_at")
        return [f"--- merge operations: {[tuple(map(str, r)) for r in ops]}",
                f"--- merge records: {[tuple(map(str, r)) for r in records]}",
                *super().state()]


def post_op(api: Api, path: str, body: dict) -> str:
    r = api.post(path, json=body, headers={"Idempotency-Key": key()})
    assert r.status_code == 202, r.text
    return r.json()["id"]


def completed(api: Api, op_ids: list[str], timeout: float = 30) -> list[dict]:
    out = []
    for op_id in op_ids:
        op = api.wait_done(op_id, timeout)
        assert op["status"] == "completed", op
        out.append(op["result"])
    return out


def changeset(api: Api, path: str, base: int, changes: list) -> dict:
    r = api.post(path, json={"base_revision": base, "changes": changes})
    assert r.status_code == 200, r.text
    return r.json()


def test_kill_9_of_the_worker_mid_merge_merges_every_unit_once(
        tmp_path: Path, pg_databases, redis_ns, moto):
    with cluster_for_test(MergeCluster, tmp_path, pg_databases, redis_ns, moto,
                          WHARF_ASSET_UPLOAD_TTL="120") as cluster:
        t0 = time.monotonic()
        api_proc = cluster.start_api()
        cluster.start_scheduler()
        first = cluster.start_worker("worker-1")
        api = cluster.wait_api(api_proc)
        cluster.wait_worker(first)
        space = api.login()

        # 20 trunk docs at revision 1 ({"a": 0, "b": 0}), added to a user worktree.
        docs = completed(api, [post_op(api, "/api/resources", {
            "space_id": space, "parent_id": None, "name": f"Doc {i:02d}",
            "unit_type": "doc"}) for i in range(UNITS)])
        for d in docs:
            changeset(api, f"/api/units/{d['unit_id']}/changesets", 0,
                      [{"op": "replace", "path": "/body", "value": {"a": 0, "b": 0}}])
        wt = completed(api, [post_op(api, "/api/worktrees", {"kind": "user",
                                                             "name": "Twenty"})])[0]
        wt = wt["worktree_id"]
        for d in docs:  # one at a time: the ordinals follow the docs' order
            completed(api, [post_op(api, f"/api/worktrees/{wt}/units",
                                    {"source": "trunk", "resource_id": d["resource_id"]})])
        ordinals = [r[0] for r in cluster.rows(
            "SELECT unit_id FROM worktree_units WHERE worktree_id = :wt "
            "ORDER BY ordinal, unit_id", wt=wt)]
        assert ordinals == [d["unit_id"] for d in docs]
        setup_units = time.monotonic() - t0

        # Drafts: every unit changes /body/a; some add /body/c in a second revision; the
        # three-way ones also change /body/b on trunk (revision 2).
        sent: dict[str, list[list]] = {}  # unit -> the draft changesets, in order
        expected: dict[str, dict] = {}
        for i, d in enumerate(docs):
            u = d["unit_id"]
            path = f"/api/worktrees/{wt}/units/{u}/changesets"
            sent[u] = [[{"op": "replace", "path": "/body/a", "value": 100 + i}]]
            if i in TWO_REVISIONS:
                sent[u].append([{"op": "add", "path": "/body/c", "value": f"c{i}"}])
            for rev, changes in enumerate(sent[u]):
                changeset(api, path, rev, changes)
            body = {"a": 100 + i, "b": 0, **({"c": f"c{i}"} if i in TWO_REVISIONS else {})}
            if i in THREE_WAY:
                changeset(api, f"/api/units/{u}/changesets", 1,
                          [{"op": "replace", "path": "/body/b", "value": 200 + i}])
                body["b"] = 200 + i
                expected[u] = {"outcome": "merged", "before": 2, "after": 3, "body": body}
            else:
                expected[u] = {"outcome": "fast_forward", "before": 1,
                               "after": 1 + len(sent[u]), "body": body}

        # Worktree assets on three units, published into the worktree's scope.
        uploaded: dict[str, tuple[str, bytes]] = {}  # asset id -> (unit, bytes)
        upload_ops = []
        for i in WITH_ASSET:
            u = docs[i]["unit_id"]
            body = random.Random(i).randbytes(50 * 1024 + i)
            r = api.post(f"/api/worktrees/{wt}/units/{u}/assets", params={"filename": f"{i}.bin"},
                         data=body, headers={"Idempotency-Key": key(),
                                             "Content-Type": "application/octet-stream",
                                             "Content-SHA256": sha(body)})
            assert r.status_code == 202, r.text
            upload_ops.append((r.json()["id"], u, body))
        for op_id, u, body in upload_ops:
            uploaded[completed(api, [op_id])[0]["asset_id"]] = (u, body)
        assert {r[0]: r[1] for r in cluster.rows(
            "SELECT id, worktree_id FROM unit_assets")} == dict.fromkeys(uploaded, wt)

        r = api.post(f"/api/worktrees/{wt}/ready")
        assert r.status_code == 200, r.text
        setup_done = time.monotonic() - t0

        # Hold the eleventh unit's draft row: the merge commits ten units, then blocks in
        # that unit's transaction after writing its trunk revisions.
        victim = docs[VICTIM]["unit_id"]
        lock = cluster.units_engine.connect()
        lock_tx = lock.begin()
        try:
            assert lock.execute(text(
                "SELECT unit_id FROM worktree_drafts WHERE worktree_id = :wt "
                "AND unit_id = :u FOR UPDATE"), {"wt": wt, "u": victim}).scalar() == victim
            merge_op = post_op(api, f"/api/worktrees/{wt}/merge", {})

            def blocked() -> bool:
                return cluster.unit_scalar(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock'") == 1 and cluster.unit_scalar(
                    "SELECT count(*) FROM unit_merge_records WHERE operation_id = :op",
                    op=merge_op) == VICTIM

            wait_until(blocked, 20, "the merge blocked on the eleventh unit", cluster)
            records = {r[0] for r in cluster.unit_rows(
                "SELECT unit_id FROM unit_merge_records WHERE operation_id = :op",
                op=merge_op)}
            assert records == set(ordinals[:VICTIM])
            owner = cluster.scalar("SELECT lease_owner FROM operations WHERE id = :op "
                                   "AND status = 'running'", op=merge_op)
            holder = cluster.group_of(int(owner.split(":")[1]))  # host:pid:thread
            assert holder is first, (owner, cluster.logs())
            cluster.kill_group(holder)
            killed_at = time.monotonic()
        finally:
            lock_tx.rollback()
            lock.close()
        # The killed transaction of the eleventh unit left nothing behind.
        assert cluster.unit_scalar("SELECT revision FROM units WHERE id = :u", u=victim) == 1
        assert cluster.unit_scalar("SELECT count(*) FROM unit_merge_records "
                                   "WHERE operation_id = :op", op=merge_op) == VICTIM
        assert cluster.scalar("SELECT state FROM worktrees WHERE id = :wt", wt=wt) == "merging"

        second = cluster.start_worker("worker-2")
        op = api.wait_done(merge_op, 90)
        recovered_in = time.monotonic() - killed_at
        assert op["status"] == "completed", (op, cluster.logs())
        assert [a["outcome"] for a in api.attempts(merge_op)] == ["lost", "completed"]
        assert second.poll() is None

        # The result: every unit with its expected outcome and trunk revisions.
        result = op["result"]
        assert result["state"] == "merged"
        assert result["counts"] == {"unchanged": 0, "fast_forward": UNITS - len(THREE_WAY),
                                    "merged": len(THREE_WAY), "created": 0, "conflict": 0,
                                    "activation_blocked": 0}
        assert result["assets_published"] == len(WITH_ASSET)
        assert [u["unit_id"] for u in result["units"]] == ordinals
        for u in result["units"]:
            e = expected[u["unit_id"]]
            assert (u["outcome"], u["trunk_revision_before"], u["trunk_revision_after"],
                    u["conflict_count"]) == (e["outcome"], e["before"], e["after"], 0), u

        # The unit store: one record per unit; trunk has exactly the revisions one merge
        # writes, contiguous, each naming this operation once.
        recs = {r[0]: tuple(r[1:]) for r in cluster.unit_rows(
            "SELECT unit_id, outcome, trunk_revision_before, trunk_revision_after "
            "FROM unit_merge_records WHERE operation_id = :op", op=merge_op)}
        assert recs == {u: (e["outcome"], e["before"], e["after"])
                        for u, e in expected.items()}
        assert cluster.unit_scalar("SELECT count(*) FROM unit_merge_records") == UNITS
        origin = {"merge": {"worktree_id": wt, "operation_id": merge_op}}
        for i, d in enumerate(docs):
            u, e = d["unit_id"], expected[d["unit_id"]]
            revs = cluster.unit_rows(
                "SELECT revision, changeset, origin FROM unit_revisions WHERE unit_id = :u "
                "ORDER BY revision", u=u)
            assert [r.revision for r in revs] == list(range(1, e["after"] + 1)), (i, revs)
            merged = [r for r in revs if r.origin is not None]
            assert [r.revision for r in merged] == list(range(e["before"] + 1,
                                                               e["after"] + 1)), (i, revs)
            assert all(r.origin == origin for r in merged), (i, merged)
            if e["outcome"] == "fast_forward":  # the draft's revisions, replayed once
                assert [r.changeset for r in merged] == sent[u], (i, merged)
            unit = api.get(f"/api/units/{u}").json()
            assert (unit["revision"], unit["snapshot"]["body"]) == (e["after"], e["body"])
        assert cluster.unit_scalar("SELECT count(*) FROM unit_revisions "
                                   "WHERE origin IS NOT NULL") == \
            sum(e["after"] - e["before"] for e in expected.values())

        # The product: the worktree merged, each unit's state, one merge audit row.
        detail = api.get(f"/api/worktrees/{wt}").json()
        assert detail["state"] == "merged" and detail["busy_operation_id"] is None
        assert detail["last_merge_operation_id"] == merge_op
        assert {u["unit_id"]: u["merge_state"] for u in detail["units"]} == \
            {u: e["outcome"] for u, e in expected.items()}
        assert cluster.scalar("SELECT count(*) FROM worktree_units WHERE worktree_id = :wt "
                              "AND last_merge_operation_id = :op", wt=wt, op=merge_op) == UNITS
        assert cluster.scalar("SELECT count(*) FROM audit_logs WHERE action = 'worktree.merge' "
                              "AND target_id = :wt", wt=wt) == 1

        # Each worktree asset published to trunk once; the bucket == the assets' keys.
        assets = cluster.rows("SELECT id, unit_id, worktree_id, published_at, sha256 "
                              "FROM unit_assets")
        assert sorted(a.id for a in assets) == sorted(uploaded)
        for a in assets:
            unit_id, body = uploaded[a.id]
            assert (a.unit_id, a.worktree_id, a.sha256) == (unit_id, None, sha(body))
            assert a.published_at is not None
            assert api.content(a.id) == body
            assert api.listed_assets(unit_id) == {a.id}
        cluster.assert_bucket_matches_assets()
        print(f"setup {setup_units:.1f}s (units) / {setup_done:.1f}s (all); merge recovered "
              f"{recovered_in:.1f}s after SIGKILL; total {time.monotonic() - t0:.1f}s")
