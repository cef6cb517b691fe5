"""Quarantine: a published blob withheld from readers, and released again.

``POST /api/blob-resources/{id}/quarantine`` and ``/release`` are for whoever may destroy
the space's content (the owner of a personal space, the owner or an admin of a team
space: ``Access.can_purge``) and for operators (``WHARF_OPERATORS``, any blob, wherever it
lies, trashed included). Others get 404 when they cannot discover the blob and 403
(``forbidden``) when they can. While a blob is ``quarantined`` its bytes are refused,
``/content`` and ``/download`` answer 409 ``quarantined``; its metadata stays readable
(``state``) and nothing is deleted. Replacing the bytes leaves the state as it is: only a
release brings the blob back.

Each change is audited (``blob.quarantine``, ``blob.release``, target the resource) in
the transaction that makes it; asking for the state the blob is already in changes
nothing and writes nothing (idempotent). The blob row is locked (FOR UPDATE) so two
concurrent calls make one change.

A worker that reads a published blob's bytes back and finds them wrong (an import from
it: ``wharf.exchange.importer``) quarantines it instead of publishing what it made of them
(:func:`quarantine_corrupt`, audited ``blob.quarantine`` by the system)."""
from __future__ import annotations

import logging

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import BlobState, Role
from storage.models import BlobResource, Node, Resource
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext, system_principal
from wharf.infra.errors import Conflict, Forbidden, NotFound, ProblemCode
from wharf.infra.ids import is_id
from wharf.infra.operators import is_operator
from wharf.infra.settings import Settings
from wharf.spaces.access import require_node

log = logging.getLogger("wharf.blobs.quarantine")


class Quarantined(Conflict):
    """The blob is quarantined: its bytes are not served until it is released."""

    code = ProblemCode.QUARANTINED.value
    title = "Quarantined"


def refuse_if_quarantined(blob: BlobResource) -> None:
    """409 ``quarantined`` for a quarantined blob (the readers of its bytes call it)."""
    if blob.state == BlobState.QUARANTINED:
        raise Quarantined("This file is quarantined: its content is withheld until the "
                          "space's owner, an admin or an operator releases it.",
                          details={"resource_id": blob.resource_id})


def quarantine_corrupt(s: Session, resource_id: str, object_key: str,
                       operation_id: str) -> bool:
    """A worker found the stored bytes of a published blob wrong (they no longer hash to
    its SHA-256): quarantine it, in the caller's transaction, audited ``blob.quarantine``
    by the system (``details.reason`` ``verification_failed``). Only if the blob still
    names ``object_key`` (replaced since: the new bytes are not the bad ones) and is not
    quarantined already; whether it changed."""
    blob = s.scalar(select(BlobResource).where(BlobResource.resource_id == resource_id)
                    .with_for_update())
    if blob is None or blob.object_key != object_key or blob.state == BlobState.QUARANTINED:
        return False
    blob.state = BlobState.QUARANTINED
    blob.updated_at = utcnow()
    s.flush()
    res = s.get(Resource, resource_id)
    node = s.get(Node, res.node_id) if res is not None else None
    audit.record(s, RequestContext(principal=system_principal(operation_id)),
                 "blob.quarantine", "resource", resource_id,
                 space_id=node.space_id if node is not None else None,
                 details={"reason": "verification_failed", "operation_id": operation_id})
    log.warning("blob %s quarantined: its stored bytes do not match its SHA-256", resource_id)
    return True


def set_quarantine(db: Database, settings: Settings, ctx: RequestContext, resource_id: str,
                   quarantined: bool) -> tuple[BlobResource, Node]:
    """Quarantine (``quarantined``) or release the blob; the blob and its node after."""
    with db.write() as s:
        res = s.get(Resource, resource_id) if is_id(resource_id) else None
        blob = s.scalar(select(BlobResource).where(BlobResource.resource_id == resource_id)
                        .with_for_update()) if res is not None else None
        if res is None or blob is None:
            raise NotFound("No such blob resource.")
        if is_operator(settings, ctx.principal):
            node = s.get(Node, res.node_id)
            if node is None:  # the foreign key forbids it
                raise NotFound("No such blob resource.")
        else:
            try:
                node, access = require_node(s, ctx.principal, res.node_id, Role.VIEWER)
            except NotFound:
                raise NotFound("No such blob resource.") from None
            if not access.can_purge:
                raise Forbidden("Only the space's owner or an admin, or an operator, may "
                                "quarantine or release a file.")
        state = BlobState.QUARANTINED if quarantined else BlobState.READY
        if blob.state != state:
            blob.state = state
            blob.updated_at = utcnow()
            s.flush()
            audit.record(s, ctx, "blob.quarantine" if quarantined else "blob.release",
                         "resource", blob.resource_id, space_id=node.space_id)
        return blob, node
