"""Content indexing (issue 41): a changeset's latency with indexing on ÷ off, and whether
one indexer keeps up with 100 changesets/s, on SQLite and PostgreSQL.

In process, through the core (no HTTP): a throw-away product database and unit store (SQLite
files in a temporary directory; on PostgreSQL two ``wharf_search_bench_<random>`` databases,
dropped at the end), ``--units`` doc units of one owner.

1. Latency: ``--changesets`` changesets (``wharf.units.service.apply_changeset``, each
   replacing a doc's text with ``--words`` random words), alternating blocks of 50 with the
   indexing hook registered (``on``: the changeset's audit transaction upserts the unit's
   ``search_dirty`` row and, for its first mark, an outbox row) and removed (``off``);
   p50/p99/mean per mode and their ratio. Not included: the broker send of a first mark's
   bell after commit (one message per unit per ``WHARF_SEARCH_INDEX_DELAY``).
2. Capacity: every unit marked, then one ``index_due`` drain (one thread): units indexed
   per second (each read from the unit store, its text extracted and written).
3. Keeping up: a producer applies ``--rate`` changesets/s to random units for
   ``--seconds`` while one indexer thread drains with a ``--delay`` debounce; the largest
   backlog seen and how long after the last changeset the index is complete.

    .venv/bin/python tests/benchmarks/bench_content.py --backend both --units 200
"""
from __future__ import annotations

import argparse
import contextlib
import random
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import func, insert, select  # noqa: E402

from migrations.prepare import prepare  # noqa: E402
from storage.db import Database  # noqa: E402
from storage.models import Node, Resource, SearchDirty, Space, UnitResource, User  # noqa: E402
from storage.unitschema import prepare_unitstore_db  # noqa: E402
from storage.unitstore import UnitStore  # noqa: E402
from tests.benchmarks.bench_search import database  # noqa: E402
from tests.benchmarks.harness import log, pct  # noqa: E402
from wharf.infra import audit  # noqa: E402
from wharf.infra.context import Principal, RequestContext  # noqa: E402
from wharf.search import indexing  # noqa: E402
from wharf.units.service import apply_changeset  # noqa: E402

VOCABULARY = [f"w{n}" for n in range(5000)]
BLOCK = 50


@contextlib.contextmanager
def stores(backend: str):
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{tmp}/product.db", f"sqlite:///{tmp}/units.db"
        return
    with database("postgres") as product, database("postgres") as units:
        yield product, units


def fill(db: Database, store: UnitStore, units: int) -> tuple[RequestContext, list[str]]:
    prepare(db.write_engine, report=lambda *_: None)
    now = datetime.now(UTC)
    owner, space = uuid.uuid4().hex, uuid.uuid4().hex
    ids = [(uuid.uuid4().hex, uuid.uuid4().hex, uuid.uuid4().hex) for _ in range(units)]
    with db.write_engine.begin() as conn:
        conn.execute(insert(User), [{"id": owner, "username": "owner", "username_key": "owner",
                                     "created_at": now, "status": "active"}])
        conn.execute(insert(Space), [{"id": space, "type": "personal", "name": "mine",
                                      "owner_id": owner, "public_read": False,
                                      "read_only": False, "created_at": now,
                                      "updated_at": now}])
        conn.execute(insert(Node), [{"id": n, "space_id": space, "parent_id": None,
                                     "name": f"doc {i}", "created_by": owner,
                                     "trash_batch_id": None, "created_at": now,
                                     "updated_at": now} for i, (n, _, _) in enumerate(ids)])
        conn.execute(insert(Resource), [{"id": r, "node_id": n, "kind": "unit",
                                         "created_by": owner, "created_at": now}
                                        for n, r, _ in ids])
        conn.execute(insert(UnitResource), [{"resource_id": r, "unit_id": u,
                                             "unit_type": "doc"} for _, r, u in ids])
    store.create_units([(u, "doc", None) for _, _, u in ids])
    ctx = RequestContext(principal=Principal(kind="user", user_id=owner, username="owner"))
    return ctx, [u for _, _, u in ids]


class Editor:
    """Applies changesets, keeping each unit's revision."""

    def __init__(self, db: Database, store: UnitStore, ctx: RequestContext, words: int,
                 revisions: dict[str, int] | None = None, seed: int = 7):
        self.db, self.store, self.ctx, self.words = db, store, ctx, words
        self.revisions: dict[str, int] = {} if revisions is None else revisions
        self.rng = random.Random(seed)

    def edit(self, unit_id: str) -> float:
        text = " ".join(self.rng.choices(VOCABULARY, k=self.words))
        changes = [{"op": "add", "path": "/body/body", "value": {"dataStream": text + "\r\n"}}]
        t0 = time.perf_counter()
        applied = apply_changeset(self.db, self.store, self.ctx, unit_id,
                                  self.revisions.get(unit_id, 0), changes, with_document=False)
        elapsed = time.perf_counter() - t0
        self.revisions[unit_id] = applied.revision
        return elapsed


def dirty(db: Database) -> int:
    with db.read() as s:
        return int(s.scalar(select(func.count()).select_from(SearchDirty)) or 0)


def latency(editor: Editor, units: list[str], changesets: int) -> None:
    hook = next(h for h in audit.AUDITED if h.__module__ == indexing.__name__)
    times: dict[str, list[float]] = {"on": [], "off": []}
    for n in range(changesets // BLOCK):
        mode = "on" if n % 2 == 0 else "off"
        if mode == "off":
            audit.AUDITED.remove(hook)
        try:
            for i in range(BLOCK):
                times[mode].append(editor.edit(units[(n * BLOCK + i) % len(units)]) * 1000)
        finally:
            if hook not in audit.AUDITED:
                audit.AUDITED.append(hook)
    for mode, values in times.items():
        log(f"  changeset {mode:3}: n={len(values)} p50={pct(values, 50):.2f} ms "
            f"p99={pct(values, 99):.2f} ms mean={sum(values) / len(values):.2f} ms")
    on, off = times["on"], times["off"]
    log(f"  ratio on/off: p50 {pct(on, 50) / pct(off, 50):.3f}, "
        f"mean {sum(on) / sum(off) * len(off) / len(on):.3f}")


def capacity(editor: Editor, units: list[str]) -> None:
    for unit_id in units:
        editor.edit(unit_id)
    marked = dirty(editor.db)
    t0 = time.perf_counter()
    drained = indexing.index_due(editor.db, editor.store, 0, budget=3600)
    elapsed = time.perf_counter() - t0
    log(f"  capacity: {drained.indexed} of {marked} marked units indexed in {elapsed:.2f} s "
        f"= {drained.indexed / elapsed:.0f} units/s on one thread")


def keep_up(editor: Editor, units: list[str], rate: float, seconds: float,
            delay: float, producers: int) -> None:
    """``producers`` threads (each its own units) share ``rate``; one indexer thread."""
    stop = threading.Event()
    backlog = [0]

    def indexer() -> None:
        while not stop.is_set():
            indexing.index_due(editor.db, editor.store, delay)
            backlog[0] = max(backlog[0], dirty(editor.db))
            stop.wait(0.05)

    sent = [0] * producers

    def produce(k: int) -> None:
        mine = units[k::producers]
        me = Editor(editor.db, editor.store, editor.ctx, editor.words, editor.revisions, k)
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            me.edit(me.rng.choice(mine))
            sent[k] += 1
            pause = start + sent[k] / (rate / producers) - time.perf_counter()
            if pause > 0:
                time.sleep(pause)

    thread = threading.Thread(target=indexer, daemon=True)
    thread.start()
    start = time.perf_counter()
    workers = [threading.Thread(target=produce, args=(k,)) for k in range(producers)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    produced = time.perf_counter() - start
    last = time.perf_counter()
    while dirty(editor.db):
        time.sleep(0.02)
    settled = time.perf_counter() - last
    stop.set()
    thread.join()
    total = sum(sent)
    log(f"  keep-up: {total} changesets in {produced:.1f} s ({total / produced:.0f}/s, "
        f"{producers} producers) over {len(units)} units, delay {delay} s: backlog at most "
        f"{backlog[0]} units, index complete {settled:.2f} s after the last changeset "
        f"(the delay included)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    p.add_argument("--units", type=int, default=200)
    p.add_argument("--words", type=int, default=300)
    p.add_argument("--changesets", type=int, default=2000)
    p.add_argument("--rate", type=float, default=100.0)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--delay", type=float, default=1.0)
    p.add_argument("--producers", type=int, default=4)
    args = p.parse_args()
    for backend in ["sqlite", "postgres"] if args.backend == "both" else [args.backend]:
        with stores(backend) as (product_url, units_url):
            db, unit_db = Database(product_url), Database(units_url)
            prepare_unitstore_db(unit_db, report=lambda *_: None)
            store = UnitStore(unit_db)
            try:
                ctx, units = fill(db, store, args.units)
                editor = Editor(db, store, ctx, args.words)
                log(f"{backend}: {args.units} doc units, {args.words} words per changeset")
                latency(editor, units, args.changesets)
                indexing.index_due(db, store, 0, budget=3600)
                capacity(editor, units)
                keep_up(editor, units, args.rate, args.seconds, args.delay, args.producers)
            finally:
                db.dispose()
                unit_db.dispose()


if __name__ == "__main__":
    main()
