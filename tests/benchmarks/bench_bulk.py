"""Phase (d) of ``bench_operations.py`` (``--bulk M``): bulk submission (issue 43).

``--clients`` closed-loop submitters each POST batches of ``--bulk-size`` (default 100)
``create_resource`` items to ``POST /api/operations:batch`` (every item its own
Idempotency-Key) until M operations are submitted, while the same ``wharf worker``
processes as (b) execute them. Time: first batch sent -> the database shows all M
operations completed/failed (the probe of (b)). The figure is compared with (a), raw
Dramatiq, measured in the same run; the CPU table shows which side is the bottleneck.
"""
from __future__ import annotations

import json
import time
import uuid
from typing import Any

from tests.benchmarks.harness import closed_loop, pct

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
    n_batches = -(-m // size)

    def send(b: int) -> tuple[float, Any]:
        st, body, dt = post_batch(sub, prefix, b * size, min(size, m - b * size))
        refused = [a for a in body.get("items", []) if a.get("status") != 202] \
            if st == 200 else [body]
        return dt, (st, refused[:1]) if refused else None

    run = closed_loop(probe, prefix, m, n_batches, clients, send, meter=meter,
                      queue_depth=queue_depth, what="batches with items not 202")
    lat = run.pop("latencies")
    return {"m": m, "size": size, "batches": n_batches, **run,
            "batch_p50": pct(lat, 50), "batch_p99": pct(lat, 99)}


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
