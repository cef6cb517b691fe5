"""Phase (d) of ``bench_operations.py`` (``--bulk M``): bulk submission (issue 43).

``--clients`` closed-loop submitters each POST batches of ``--bulk-size`` (default 100)
``create_resource`` items to ``POST /api/operations:batch`` (every item its own
Idempotency-Key) until M operations are submitted, while the same ``wharf worker``
processes as (b) execute them. Time: first batch sent -> the database shows all M
operations completed/failed (the probe of (b)). The figure is compared with (a), raw
Dramatiq, measured in the same run; the CPU table shows which side is the bottleneck.
"""
from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from typing import Any

from tests.benchmarks.harness import pct

BATCH_PATH = "/api/operations:batch"


def post_batch(sub: Any, prefix: str, start: int, size: int) -> tuple[int, dict, float]:
    """One batch of ``size`` creations named ``<prefix>-<start + i>``; (status, body, s)."""
    items = [{"idempotency_key": f"{prefix}-{uuid.uuid4().hex}", "kind": "create_resource",
              "input": {"space_id": sub.space_id, "parent_id": None,
                        "name": f"{prefix}-{start + i:06d}", "unit_type": "doc"}}
             for i in range(size)]
    t0 = time.perf_counter()
    st, _, data = sub.http().request("POST", BATCH_PATH, {"items": items})
    return st, json.loads(data), time.perf_counter() - t0


def bench_bulk(sub: Any, probe: Any, m: int, clients: int, size: int,
               prefix: str = "bulk", meter: Any = None, queue_depth: Any = None) -> dict:
    batches = itertools.count()
    lat: list[float] = []
    bad: list[Any] = []
    lock = threading.Lock()
    last_post = [0.0]
    n_batches = -(-m // size)

    def client() -> None:
        local = []
        while True:
            b = next(batches)
            if b >= n_batches:
                break
            n = min(size, m - b * size)
            st, body, dt = post_batch(sub, prefix, b * size, n)
            local.append(dt)
            refused = [a for a in body.get("items", []) if a.get("status") != 202] \
                if st == 200 else [body]
            if refused:
                with lock:
                    bad.append((st, refused[:1]))
        with lock:
            lat.extend(local)
            last_post[0] = max(last_post[0], time.perf_counter())

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    since = probe.now()
    if meter is not None:
        meter.start()
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    t_done = probe.wait_all_done(prefix, m, timeout=900, since=since)
    cpu = meter.stop() if meter is not None else None
    leftover = queue_depth() if queue_depth is not None else None
    for t in threads:
        t.join()
    if bad:
        raise RuntimeError(f"bulk: {len(bad)} batches with items not 202, e.g. {bad[0]}")

    return {"m": m, "size": size, "batches": n_batches, "seconds": t_done - t0,
            "throughput": m / (t_done - t0), "submit_rate": m / (last_post[0] - t0),
            "batch_p50": pct(lat, 50), "batch_p99": pct(lat, 99), "cpu": cpu,
            "leftover_messages": leftover, **probe.summary(prefix)}


def report_bulk(d: dict, raw: dict | None, per_group_table: Any,
                idle: dict | None) -> None:
    ms = 1000.0
    print()
    print(f"(d) bulk submission: {d['m']} create_resource operations in {d['batches']} "
          f"batches of {d['size']} (POST {BATCH_PATH})")
    print(f"    end to end {d['throughput']:.0f} ops/s (M={d['m']} in {d['seconds']:.2f}s); "
          f"submitted at {d['submit_rate']:.0f} ops/s; batch POST -> 200 p50/p99 "
          f"{d['batch_p50'] * ms:.1f} / {d['batch_p99'] * ms:.1f} ms; completed "
          f"{d['completed']}, failed {d['failed']}, >1 attempt {d['multi_attempt']}")
    if d.get("leftover_messages") is not None:
        print(f"    broker messages still queued at the last completion: "
              f"{d['leftover_messages']}")
    per_group_table("(d) bulk", d["cpu"], d["m"], idle)
    if raw:
        ratio = d["throughput"] / raw["throughput"]
        print(f"SUMMARY (d): bulk {d['throughput']:.0f} ops/s / raw dramatiq "
              f"{raw['throughput']:.0f} msg/s = {ratio:.2f}x [>= 1.0: "
              f"{'met' if ratio >= 1.0 else 'MISSED'}]; submitted at "
              f"{d['submit_rate'] / raw['throughput']:.2f}x raw")
