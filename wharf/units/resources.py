"""Unit resources: ``create_resource`` (an operation) and reading a resource.

Submission fixes the node, resource and unit ids in the payload. The worker creates the
unit in the UnitStore (idempotent on the unit id), then writes node + resource + unit row
in the completion transaction. If the operation fails for good, the unit is deleted from
the UnitStore, so nothing is left behind.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.driver import DriverStatement, pipelined
from storage.enums import Role
from storage.models import AuditLog, Node, Operation, Resource, UnitResource
from storage.unitstore import UNIT_TYPES, UnitStore, initial_snapshot
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import NotFound, WharfError
from wharf.infra.ids import is_id, new_id
from wharf.infra.validation import clean_name, one_of
from wharf.operations.kinds import payload
from wharf.operations.service import Operations, Prepare, Submission
from wharf.spaces.access import Access, require_node
from wharf.spaces.nodes import resolve_parent, resources_for
from wharf.units.kinds import CREATE_RESOURCE, CreateResourcePayload, CreateResourceResult

KIND = CREATE_RESOURCE
# A batch's rows, one statement per table (on the driver: over arrays, ``insert_rows``).
_INSERT_NODES = DriverStatement.insert_rows(Node.__table__)
_INSERT_RESOURCES = DriverStatement.insert_rows(Resource.__table__)
_INSERT_UNIT_RESOURCES = DriverStatement.insert_rows(UnitResource.__table__)
_INSERT_AUDIT = DriverStatement.insert_rows(AuditLog.__table__)


def create_resource_request(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the idempotency fingerprint sees it (field order and an absent
    ``parent_id`` as null included), from a ``CreateResourceRequest``'s fields."""
    return {"space_id": body.get("space_id"), "parent_id": body.get("parent_id"),
            "name": body.get("name"), "unit_type": body.get("unit_type")}


def create_resource_prepare(ctx: RequestContext, request: dict[str, Any],
                            parents: dict[tuple[Any, Any], Any] | None = None) -> Prepare:
    """``create_resource``'s ``prepare`` (validation, then the permission to create in
    the parent). ``parents``: a batch's memo of ``resolve_parent`` by (space, parent), so
    a batch of creations in one folder checks it once (the caller's own transaction)."""
    def resolve(s: Session) -> Any:
        where = (request["space_id"], request["parent_id"])
        if parents is None:
            return resolve_parent(s, ctx, *where)
        if where not in parents:
            try:
                parents[where] = resolve_parent(s, ctx, *where)
            except WharfError as exc:
                parents[where] = exc
        found = parents[where]
        if isinstance(found, WharfError):
            raise found
        return found

    def prepare(s: Session, op_id: str) -> tuple[str, CreateResourcePayload]:
        name = clean_name(request["name"], "name")
        unit_type = one_of(request["unit_type"], "unit_type", UNIT_TYPES)
        space, parent = resolve(s)
        return space.id, CreateResourcePayload(
            space_id=space.id, parent_id=parent.id if parent else None, name=name,
            unit_type=unit_type, node_id=new_id(), resource_id=new_id(), unit_id=new_id())

    return prepare


def submit_create_resource(ops: Operations, ctx: RequestContext, key: str | None,
                           body: dict[str, Any]) -> Submission:
    request = create_resource_request(body)
    return ops.submit(ctx, KIND, key, request, create_resource_prepare(ctx, request),
                      prepare_reads_only=True)


def publish_node(session: Session, op: Operation, *, node_id: str, resource_id: str,
                 space_id: str, parent_id: str | None, name: str, kind: str,
                 created_by: str | None = None) -> None:
    """Insert the node and its resource with the ids fixed in the operation's payload;
    the caller adds the kind's extension row in the same transaction. ``created_by``
    (default: the operation's actor) is who the node and resource are credited to."""
    author = created_by or op.actor_id
    session.add(Node(id=node_id, space_id=space_id, parent_id=parent_id, name=name,
                     created_by=author))
    session.flush()
    session.add(Resource(id=resource_id, node_id=node_id, kind=kind, created_by=author))
    session.flush()


def publish_unit_resource(session: Session, op: Operation, ctx: RequestContext, *,
                          node_id: str, resource_id: str, unit_id: str, unit_type: str,
                          space_id: str, parent_id: str | None, name: str,
                          details: dict[str, Any] | None = None) -> None:
    """A unit resource's rows (node, resource, unit row) and its ``resource.create`` audit
    row, with the ids fixed in the operation's payload: what every kind that creates a
    unit resource writes in its completion transaction (``create_resource``,
    ``import_file``); the unit itself is already in the UnitStore."""
    publish_node(session, op, node_id=node_id, resource_id=resource_id, space_id=space_id,
                 parent_id=parent_id, name=name, kind="unit")
    session.add(UnitResource(resource_id=resource_id, unit_id=unit_id, unit_type=unit_type))
    session.flush()
    audit.record(session, ctx, "resource.create", "resource", resource_id, space_id=space_id,
                 details={"node_id": node_id, "unit_id": unit_id,
                          "on_behalf_of": op.actor_id, **(details or {})})


class CreateResource:
    """The ``create_resource`` handler. A batch of them shares one permission check per
    (actor, space, parent), creates its units in one UnitStore transaction and writes its
    rows with one statement per table (``DriverStatement.insert_rows``)."""

    kind = KIND

    def __init__(self, unitstore: UnitStore):
        self.unitstore = unitstore

    def target_key(self, op: Operation) -> Hashable:
        p = payload(op, CreateResourcePayload)
        return (op.actor_id, p.space_id, p.parent_id)

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        p = payload(op, CreateResourcePayload)
        resolve_parent(session, RequestContext(principal=actor), p.space_id, p.parent_id)

    def perform(self, op: Operation) -> None:
        p = payload(op, CreateResourcePayload)
        self.unitstore.create_unit(p.unit_id, p.unit_type, initial_snapshot(p.unit_type))

    def perform_many(self, ops: Sequence[Operation]) -> None:
        units = [payload(op, CreateResourcePayload) for op in ops]
        self.unitstore.create_units([(p.unit_id, p.unit_type, initial_snapshot(p.unit_type))
                                     for p in units])

    def commit(self, session: Session, op: Operation,
               ctx: RequestContext) -> CreateResourceResult:
        p = payload(op, CreateResourcePayload)
        publish_unit_resource(session, op, ctx, node_id=p.node_id, resource_id=p.resource_id,
                              unit_id=p.unit_id, unit_type=p.unit_type, space_id=p.space_id,
                              parent_id=p.parent_id, name=p.name)
        return CreateResourceResult(node_id=p.node_id, resource_id=p.resource_id,
                                    unit_id=p.unit_id)

    def commit_many(self, session: Session,
                    ops: Sequence[Operation]) -> list[CreateResourceResult]:
        """What ``commit`` writes, for every operation at once: one Core INSERT of rows per
        table, in foreign-key order. The audit row names the operation as the system
        principal, as ``commit`` with the executor's context does."""
        conn = session.connection()
        now = utcnow()
        ps = [(op, payload(op, CreateResourcePayload)) for op in ops]
        with pipelined(conn):  # (one round trip for the four tables)
            _INSERT_NODES.executemany(conn, [
                {"id": p.node_id, "space_id": p.space_id, "parent_id": p.parent_id,
                 "name": p.name, "created_by": op.actor_id, "trash_batch_id": None,
                 "created_at": now, "updated_at": now} for op, p in ps])
            _INSERT_RESOURCES.executemany(conn, [
                {"id": p.resource_id, "node_id": p.node_id, "kind": "unit",
                 "created_by": op.actor_id, "created_at": now} for op, p in ps])
            _INSERT_UNIT_RESOURCES.executemany(conn, [
                {"resource_id": p.resource_id, "unit_id": p.unit_id, "unit_type": p.unit_type}
                for _, p in ps])
            rows = [
                {"id": new_id(), "at": now, "actor_type": "system", "actor_id": op.id,
                 "action": "resource.create", "target_type": "resource",
                 "target_id": p.resource_id, "space_id": p.space_id, "request_id": None,
                 "client_ip": None, "user_agent": None,
                 "details": {"node_id": p.node_id, "unit_id": p.unit_id,
                             "on_behalf_of": op.actor_id}} for op, p in ps]
            _INSERT_AUDIT.executemany(conn, rows)
        for row, (_, p) in zip(rows, ps, strict=True):
            audit.announce(session, row, parent_id=p.parent_id)
        return [CreateResourceResult(node_id=p.node_id, resource_id=p.resource_id,
                                     unit_id=p.unit_id) for _, p in ps]

    def compensate(self, op: Operation) -> None:
        self.unitstore.delete_unit(payload(op, CreateResourcePayload).unit_id)


@dataclass(frozen=True)
class ResourceEntry:
    """A resource as the caller sees it: its rows, the caller's access to its node and the
    node's ``resources_for`` entry."""

    resource: Resource
    node: Node
    access: Access
    unit: UnitResource | None
    node_resource: dict[str, Any] | None


def read_resource(db: Database, ctx: RequestContext, resource_id: str) -> ResourceEntry:
    """``GET /api/resources/{id}``: in one read transaction of its own."""
    with db.read() as session:
        res, node, access, unit = get_resource(session, ctx, resource_id)
        return ResourceEntry(res, node, access, unit,
                             resources_for(session, [node.id]).get(node.id))


def get_resource(session: Session, ctx: RequestContext,
                 resource_id: str) -> tuple[Resource, Node, Access, UnitResource | None]:
    res = session.get(Resource, resource_id) if is_id(resource_id) else None
    if res is None:
        raise NotFound("No such resource.")
    try:
        node, access = require_node(session, ctx.principal, res.node_id, Role.VIEWER)
    except NotFound:
        raise NotFound("No such resource.") from None
    unit = session.get(UnitResource, res.id)
    return res, node, access, unit


def find_unit(session: Session, ctx: RequestContext, unit_id: str,
              need: Role = Role.VIEWER) -> tuple[UnitResource, Resource, Node, Access]:
    unit = session.scalar(select(UnitResource).where(UnitResource.unit_id == unit_id)) \
        if is_id(unit_id) else None
    if unit is None:
        raise NotFound("No such unit.")
    res = session.get(Resource, unit.resource_id)
    if res is None:  # the foreign key forbids it
        raise NotFound("No such unit.")
    try:
        node, access = require_node(session, ctx.principal, res.node_id, need)
    except NotFound:
        raise NotFound("No such unit.") from None
    return unit, res, node, access
