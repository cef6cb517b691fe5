"""An operation kind is declared once, by its capability (``KindSpec`` in
``wharf.operations.registry``): a toy capability (``tests/support/toy_kind.py``) adds a
kind -- payload, result, handler -- and, with no other file edited, it is submitted, run
by a worker and served in the API's ``Operation`` schema with its result type; the
transport, the retry rule and the reference check read what it declares. A name
registers once, and the processes that read operations refuse an empty registry."""
from __future__ import annotations

import json
import subprocess
import sys

import msgspec
import pytest

from tests.support import toy_kind
from wharf.deletion import references
from wharf.operations.registry import (
    KINDS,
    DuplicateKind,
    KindSpec,
    Registry,
    RegistryEmpty,
)
from wharf.operations.service import actor_name, can_retry

PROBE = """
import json, sys, uuid
from pathlib import Path

from tests.support import toy_kind
toy_kind.register()  # the new capability, imported before the process is built

import dramatiq
from api import contract
from tests.conftest import World, make_settings
from wharf.infra.context import Principal, RequestContext
from wharfd.runtime import Components

settings = make_settings(Path(sys.argv[1]), sys.argv[2], sys.argv[3])
components = Components(settings)
worker = dramatiq.Worker(components.broker, worker_threads=2, worker_timeout=50)
worker.start()
try:
    app = components.api_app()
    alice = World(app, components).user("alice")
    ctx = RequestContext(principal=Principal(kind="user", user_id=alice.user_id,
                                             username="alice"))
    sub = toy_kind.submit(components.operations, ctx, uuid.uuid4().hex, "hello")
    # ApiClient checks each answer against the app's own OpenAPI document.
    got = alice.get(f"/api/operations/{sub.operation.id}", params={"wait": "30"})
    listed = alice.get("/api/operations", params={"kind": "toy_echo"})
    doc = contract.document(app)
    schemas = doc["components"]["schemas"]
    kind_filter = doc["components"]["parameters"]["kindQuery"]
    print(json.dumps({
        "status": got.status_code, "body": got.json,
        "listed": [o["id"] for o in listed.json["items"]],
        "submitted": sub.operation.id,
        "schema": schemas.get("ToyEchoOperation"),
        "result_schema": schemas.get("ToyEchoResult"),
        "kind_filter": kind_filter,
        "handlers": sorted(components.handlers),
    }))
finally:
    worker.stop(timeout=5000)
    components.close()
"""


@pytest.fixture
def toy():
    """The toy kind registered in this process for one test."""
    spec = toy_kind.register()
    yield spec
    KINDS.unregister(spec.name)


def test_a_new_capability_kind_is_submitted_run_and_served(settings, tmp_path):
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path), settings.database_url,
                          settings.unitstore_url], capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr[-4000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert "toy_echo" in seen["handlers"]
    assert seen["status"] == 200
    body = seen["body"]
    assert body["kind"] == "toy_echo" and body["status"] == "completed", body
    assert body["result"] == {"echo": "HELLO", "length": 5}
    assert body["can_retry"] is False  # its failure consumes its input
    assert seen["listed"] == [seen["submitted"]]
    schema = seen["schema"]
    assert schema is not None
    assert schema["description"].startswith("``toy_echo``: a text echoed")
    assert schema["properties"]["kind"] == {"enum": ["toy_echo"]}
    result = schema["properties"]["result"]
    assert result["description"] == "Once completed: the echo and the text's length."
    assert {"$ref": "#/components/schemas/ToyEchoResult"} in result["anyOf"]
    assert set(seen["result_schema"]["properties"]) == {"echo", "length"}
    assert "toy_echo" in seen["kind_filter"]["schema"]["enum"]


def test_what_a_kind_declares_is_what_the_engine_and_the_transport_read(toy):
    from tasks.actors import batch_limit
    from tasks.doorbell import long_actors, long_kinds
    assert "toy_echo" in long_kinds() and actor_name("toy_echo") in long_actors()
    assert batch_limit("toy_echo", 32) == 1
    assert not can_retry("failed", "toy_echo", {})
    assert references.object_key_fields()["toy_echo"] == ("object_key",)


def test_an_open_operation_of_the_new_kind_references_its_object(toy, world, db):
    from storage.models import Operation
    from wharf.infra.clock import utcnow
    from wharf.infra.ids import new_id
    alice, now = world.user("alice"), utcnow()
    with db.write() as s:
        s.add(Operation(id=new_id(), kind="toy_echo", status="pending", actor_id=alice.user_id,
                        idempotency_key=new_id(), request_fingerprint="f",
                        payload={"text": "x", "object_key": "toy/obj"}, attempts=0,
                        max_attempts=3, created_at=now, updated_at=now, next_attempt_at=now))
    with db.read() as s:
        assert [r.table for r in references.referenced(s, ["toy/obj"])["toy/obj"]] == [
            "operations"]


def test_a_name_registers_once():
    registry = Registry()
    registry.register(toy_kind.SPEC)
    with pytest.raises(DuplicateKind):
        registry.register(toy_kind.SPEC)
    with pytest.raises(DuplicateKind):  # nor may a capability take another's name
        KINDS.register(KindSpec(
            name="create_resource", payload=toy_kind.ToyEchoPayload,
            result=toy_kind.ToyEchoResult, handler=lambda c: None, doc="", result_doc=""))
    assert KINDS["create_resource"].payload.__name__ == "CreateResourcePayload"


def test_a_kind_declares_only_object_keys_its_payload_has():
    class Payload(msgspec.Struct):
        text: str
    with pytest.raises(ValueError, match="not fields"):
        KindSpec(name="toy_other", payload=Payload, result=toy_kind.ToyEchoResult,
                 handler=lambda c: None, doc="", result_doc="", object_keys=("object_key",))


def test_processes_reading_operations_refuse_an_empty_registry(settings, db, monkeypatch):
    """A process that did not import the capabilities could not run their operations, and
    would take every object their open operations name for unreferenced (fsck's orphans,
    the deletion worker's last look): the runtime, fsck and the reference check refuse."""
    from wharfd.runtime import Components
    monkeypatch.setattr(KINDS, "_specs", {})
    with pytest.raises(RegistryEmpty):
        Components(settings, db=db)
    with db.read() as s, pytest.raises(RegistryEmpty):
        references.referenced(s, ["a-key"])
    from wharf.fsck import run_fsck
    with pytest.raises(RegistryEmpty):
        run_fsck(db, None, None, settings)


def test_the_engine_alone_registers_no_kind():
    """Kinds register with their capabilities: the engine imported alone has none (the
    composition root's import of every capability is what fills the registry)."""
    probe = ("import sys; importlib = __import__('importlib');"
             "importlib.import_module(sys.argv[1]);"
             "from wharf.operations.registry import KINDS; print(len(KINDS))")
    counts = {entry: subprocess.run([sys.executable, "-c", probe, entry], capture_output=True,
                                    text=True, check=True, timeout=120).stdout.split()[-1]
              for entry in ("wharf.operations.executor", "wharfd.runtime", "api.app")}
    # (the API's schemas import every capability themselves: their union has every kind)
    assert counts == {"wharf.operations.executor": "0", "wharfd.runtime": "16",
                      "api.app": "16"}
