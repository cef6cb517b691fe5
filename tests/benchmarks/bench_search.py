"""Name search at scale (issue 41): ``wharf.search.names.search_names`` p50/p99, permission
filter included, on SQLite and PostgreSQL.

A throw-away database (a SQLite file in a temporary directory; on PostgreSQL
``wharf_search_bench_<random>``, dropped at the end) is migrated, then filled in bulk:
``--nodes`` nodes spread evenly over ``--spaces`` team spaces of another owner, the caller a
member of ``--member-of`` of them. The searched word (``plan``) is in half the names in the
caller's spaces and in just enough of the others' that the caller can discover
``--visible-share`` (1 %) of all its matches: the filter must not walk the other 99 %.
Then ``--rounds`` searches per query (first page, 50 items): a substring, a prefix, an
exact name, a two-character prefix and a word nobody's names hold; p50/p99 in ms.

    .venv/bin/python tests/benchmarks/bench_search.py                       # 100k nodes
    .venv/bin/python tests/benchmarks/bench_search.py --nodes 1000000 --spaces 10000
    .venv/bin/python tests/benchmarks/bench_search.py --backend sqlite --rounds 50

The issue's target: 1,000,000 nodes, 10,000 spaces, member of 20: p99 <= 50 ms on both.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, insert, text  # noqa: E402

from migrations.prepare import prepare  # noqa: E402
from storage.db import Database, make_engines  # noqa: E402
from storage.models import Node, Space, SpaceMember, User  # noqa: E402
from tests.benchmarks.harness import log, pct  # noqa: E402
from wharf.infra.context import Principal, RequestContext  # noqa: E402
from wharf.search.names import search_names  # noqa: E402

ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
QUERIES = {"substring": "plan", "prefix": "quarterly", "exact": "quarterly plan 7",
           "short prefix": "qu", "no match": "zzyzx"}
CHUNK = 20_000


@contextlib.contextmanager
def database(backend: str) -> Iterator[str]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{tmp}/bench.db"
        return
    name = f"wharf_search_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def fill(url: str, nodes: int, spaces: int, member_of: int, visible_share: float) -> str:
    """Migrate and fill; the caller's user id."""
    engine, reader = make_engines(url)
    prepare(engine, report=lambda *_: None)
    now = datetime.now(UTC)
    owner, caller = uuid.uuid4().hex, uuid.uuid4().hex
    space_ids = [uuid.uuid4().hex for _ in range(spaces)]
    mine = set(space_ids[:: max(1, spaces // member_of)][:member_of])
    per_space = max(1, nodes // spaces)
    caller_nodes = per_space * len(mine)
    visible = caller_nodes // 2
    # the others' share holding the word, so that visible / all matches == visible_share
    others = max(1, nodes - caller_nodes)
    other_share = min(1.0, (visible / visible_share - visible) / others)
    step = max(1, round(1 / other_share)) if other_share > 0 else nodes + 1
    with engine.begin() as conn:
        conn.execute(insert(User), [
            {"id": uid, "username": name, "username_key": name, "created_at": now,
             "status": "active"} for uid, name in ((owner, "owner"), (caller, "caller"))])
        conn.execute(insert(Space), [
            {"id": sid, "type": "team", "name": f"space {i}", "owner_id": owner,
             "public_read": False, "read_only": False, "created_at": now, "updated_at": now}
            for i, sid in enumerate(space_ids)])
        conn.execute(insert(SpaceMember), [
            {"space_id": sid, "user_id": caller, "role": "viewer", "created_at": now,
             "updated_at": now} for sid in mine])
    rows, made = [], 0
    for sid in space_ids:
        own = sid in mine
        for j in range(per_space):
            made += 1
            word = (j % 2 == 0) if own else (made % step == 0)
            name = f"quarterly plan {made}" if word else f"notes {made} {j % 97}"
            rows.append({"id": uuid.uuid4().hex, "space_id": sid, "parent_id": None,
                         "name": name, "created_by": owner, "trash_batch_id": None,
                         "created_at": now, "updated_at": now})
            if len(rows) >= CHUNK:
                with engine.begin() as conn:
                    conn.execute(insert(Node), rows)
                rows = []
    if rows:
        with engine.begin() as conn:
            conn.execute(insert(Node), rows)
    with engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.execute(text("ANALYZE"))
        total = conn.execute(text("SELECT count(*) FROM nodes WHERE lower(name) LIKE "
                                  "'%plan%'")).scalar_one()
    log(f"filled {made} nodes in {spaces} spaces; caller in {len(mine)}: sees {visible} "
        f"of {total} matches ({100 * visible / max(total, 1):.2f} %)")
    engine.dispose()
    if reader is not engine:
        reader.dispose()
    return caller


def measure(url: str, caller: str, rounds: int) -> dict[str, tuple[float, float, int]]:
    db = Database(url)
    ctx = RequestContext(principal=Principal(kind="user", user_id=caller, username="caller"))
    out = {}
    try:
        for label, q in QUERIES.items():
            times, count = [], 0
            for _ in range(rounds):
                t0 = time.perf_counter()
                items, _next = search_names(db, ctx, q, None, 50, None)
                times.append((time.perf_counter() - t0) * 1000)
                count = len(items)
            out[label] = (pct(times, 50), pct(times, 99), count)
    finally:
        db.dispose()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    p.add_argument("--nodes", type=int, default=100_000)
    p.add_argument("--spaces", type=int, default=1_000)
    p.add_argument("--member-of", type=int, default=20)
    p.add_argument("--visible-share", type=float, default=0.01)
    p.add_argument("--rounds", type=int, default=100)
    args = p.parse_args()
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    for backend in backends:
        with database(backend) as url:
            t0 = time.perf_counter()
            caller = fill(url, args.nodes, args.spaces, args.member_of, args.visible_share)
            log(f"{backend}: filled in {time.perf_counter() - t0:.1f} s")
            for label, (p50, p99, n) in measure(url, caller, args.rounds).items():
                log(f"{backend:8} {label:13} {QUERIES[label]!r:20} items={n:3} "
                    f"p50={p50:7.2f} ms  p99={p99:7.2f} ms")


if __name__ == "__main__":
    main()
