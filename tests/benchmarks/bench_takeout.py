#!/usr/bin/env python
"""A takeout of a space holding ``--mib`` MiB of blobs (1 GiB in 16 blobs by default) against
raw boto3 copying the same bytes, on the same S3-compatible server (moto over HTTP), same
run (issue 38).

- Wharf: the ``export_takeout`` handler's ``perform`` as a worker runs it (the plan, every
  blob streamed from the store into the zip's parts, CRC-32 and SHA-256 of everything,
  each part stored and its progress recorded in SQLite, the manifest and central
  directory, the upload finished), in a child process whose peak RSS (VmHWM) is read at
  the end, with its RSS before the takeout (imports, connections) for scale;
- raw: boto3 in a child process: each blob's ``get_object`` body streamed into ONE
  ``upload_fileobj`` (default TransferConfig: 8 MiB parts, 10 threads), i.e. the same
  bytes read and written once, no archive, no hashing, no bookkeeping.

Rounds alternate (raw, Wharf, raw, Wharf...); the figure is raw time ÷ Wharf time per
round (1.0: no overhead; the goal is >= 0.7) and Wharf's peak RSS (goal < 200 MiB).

    .venv/bin/python tests/benchmarks/bench_takeout.py [--mib 1024] [--blobs 16] [--repeats 2]
"""
from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.s3 import MotoServer  # noqa: E402

PREFIX = "objects"


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def s3(endpoint: str) -> Any:
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="test", aws_secret_access_key="test",
                        config=Config(request_checksum_calculation="when_required",
                                      response_checksum_validation="when_required",
                                      s3={"addressing_style": "path"}))


def env_of(tmp: Path, bucket: str, endpoint: str) -> dict[str, str]:
    return {"WHARF_DATA_DIR": str(tmp / "data"),
            "WHARF_DATABASE_URL": f"sqlite:///{tmp / 'wharf.db'}",
            "WHARF_UNITSTORE_URL": f"sqlite:///{tmp / 'units.db'}",
            "WHARF_BLOB_STORE_URL": f"s3://{bucket}/{PREFIX}",
            "WHARF_S3_ENDPOINT_URL": endpoint, "WHARF_ARGON2_TIME_COST": "1",
            "WHARF_ARGON2_MEMORY_COST": "8", "WHARF_ARGON2_PARALLELISM": "1"}


def setup(tmp: Path, endpoint: str, bucket: str, size: int,
          blobs: int) -> tuple[str, str]:
    """Databases, a user, and ``blobs`` blob resources in their personal space whose
    objects are put straight into the bucket; the user's id."""
    from sqlalchemy import create_engine, select

    from migrations.prepare import prepare
    from storage.db import Database
    from storage.models import BlobResource, Node, Resource, Space, User
    from storage.unitschema import prepare_unitstore_db
    from tests.conftest import World
    from wharf.infra.settings import Settings
    from wharfd.runtime import Components

    (tmp / "data").mkdir(exist_ok=True)
    env = env_of(tmp, bucket, endpoint)
    engine = create_engine(env["WHARF_DATABASE_URL"])
    prepare(engine, report=lambda *_: None)
    engine.dispose()
    udb = Database(env["WHARF_UNITSTORE_URL"])
    prepare_unitstore_db(udb, report=lambda *_: None)
    udb.dispose()
    client = s3(endpoint)
    client.create_bucket(Bucket=bucket)
    comps = Components(Settings.from_env(env))
    try:
        World(comps.api_app()).user("alice")
        with comps.db.write() as s:
            user = s.scalars(select(User).where(User.username == "alice")).one()
            space = s.scalars(select(Space).where(Space.owner_id == user.id)).one()
            each = size // blobs
            for i in range(blobs):
                data = os.urandom(each)
                key = f"blobs/bench-{i}"
                client.put_object(Bucket=bucket, Key=f"{PREFIX}/{key}", Body=data)
                node = Node(space_id=space.id, name=f"blob-{i:02d}.bin", created_by=user.id)
                s.add(node)
                s.flush()
                res = Resource(node_id=node.id, kind="blob", created_by=user.id)
                s.add(res)
                s.flush()
                s.add(BlobResource(resource_id=res.id, object_key=key,
                                   filename=node.name, mime_type="application/octet-stream",
                                   size=each, sha256=hashlib.sha256(data).hexdigest(),
                                   object_etag="-", etag=uuid.uuid4().hex))
            return str(user.id), str(space.id)
    finally:
        comps.close()


def wharf_takeout(tmp: str, endpoint: str, bucket: str, user_id: str, space_id: str,
                  out: Any) -> None:
    import msgspec

    from storage.models import Operation
    from wharf.exchange.exports import object_key_for
    from wharf.exchange.takeout_kinds import EXPORT_TAKEOUT, ExportTakeoutPayload
    from wharf.infra.ids import new_id
    from wharf.infra.settings import Settings
    from wharfd.runtime import Components

    comps = Components(Settings.from_env(env_of(Path(tmp), bucket, endpoint)))
    handler = comps.handlers[EXPORT_TAKEOUT]
    op_id = new_id()
    op = Operation(id=op_id, kind=EXPORT_TAKEOUT, actor_id=user_id, payload=msgspec.to_builtins(
        ExportTakeoutPayload(scope="space", space_id=space_id, export_id=new_id(),
                             object_key=object_key_for(op_id), filename="bench.zip")))
    before = status_kib("VmRSS")
    t0 = time.perf_counter()
    handler.perform(op)
    elapsed = time.perf_counter() - t0
    written = handler._written[op_id]
    out.put({"seconds": elapsed, "rss_before_kib": before, "hwm_kib": status_kib("VmHWM"),
             "size": written.size})
    comps.close()


class Chained:
    """The blobs' bodies one after another, as one readable file."""

    def __init__(self, client: Any, bucket: str, keys: list[str]):
        self.client, self.bucket, self.keys = client, bucket, list(keys)
        self.body: Any = None

    def read(self, n: int = -1) -> bytes:
        while True:
            if self.body is None:
                if not self.keys:
                    return b""
                self.body = self.client.get_object(Bucket=self.bucket,
                                                   Key=self.keys.pop(0))["Body"]
            chunk = self.body.read(n if n and n > 0 else 1024 * 1024)
            if chunk:
                return bytes(chunk)
            self.body = None


def raw_copy(endpoint: str, bucket: str, blobs: int, out: Any) -> None:
    client = s3(endpoint)
    keys = [f"{PREFIX}/blobs/bench-{i}" for i in range(blobs)]
    before = status_kib("VmRSS")
    t0 = time.perf_counter()
    client.upload_fileobj(Chained(client, bucket, keys), bucket, f"raw/{uuid.uuid4().hex}")
    out.put({"seconds": time.perf_counter() - t0, "rss_before_kib": before,
             "hwm_kib": status_kib("VmHWM")})


def in_child(target: Any, *args: Any) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    p.start()
    import queue
    while True:
        try:
            got = q.get(timeout=1)
            break
        except queue.Empty:
            if not p.is_alive():
                raise RuntimeError(f"{target.__name__} failed (exit {p.exitcode})") from None
    p.join(60)
    return dict(got)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=1024, help="MiB of blobs in the space")
    ap.add_argument("--blobs", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    os.environ.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
                      AWS_DEFAULT_REGION="us-east-1", NO_PROXY="127.0.0.1,localhost")
    moto = MotoServer().start()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-takeout-") as tmp:
            bucket = f"bench-{uuid.uuid4().hex[:8]}"
            t0 = time.perf_counter()
            user_id, space_id = setup(Path(tmp), moto.endpoint, bucket, args.mib * 2**20,
                                      args.blobs)
            print(f"setup: {args.blobs} blobs, {args.mib:.0f} MiB in "
                  f"{time.perf_counter() - t0:.1f}s")
            ratios, hwms = [], []
            for r in range(args.repeats):
                raw = in_child(raw_copy, moto.endpoint, bucket, args.blobs)
                ours = in_child(wharf_takeout, tmp, moto.endpoint, bucket, user_id, space_id)
                ratio = raw["seconds"] / ours["seconds"]
                ratios.append(ratio)
                hwms.append(ours["hwm_kib"])
                mib = args.mib
                print(f"round {r + 1}: raw boto3 copy {raw['seconds']:.2f}s "
                      f"({mib / raw['seconds']:.0f} MiB/s, peak RSS "
                      f"{raw['hwm_kib'] / 1024:.0f} MiB); Wharf takeout {ours['seconds']:.2f}s "
                      f"({mib / ours['seconds']:.0f} MiB/s, zip {ours['size'] / 2**20:.0f} MiB, "
                      f"RSS {ours['rss_before_kib'] / 1024:.0f} MiB before, peak "
                      f"{ours['hwm_kib'] / 1024:.0f} MiB); raw/Wharf {ratio:.2f}")
            print(f"median raw/Wharf {statistics.median(ratios):.2f} (goal >= 0.7); "
                  f"worker peak RSS max {max(hwms) / 1024:.0f} MiB (goal < 200 MiB)")
    finally:
        moto.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
