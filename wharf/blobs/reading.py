"""Finding a blob to read, and its ETag. ``describe_blob`` and ``blob_for_download`` are
what the API calls: each in one read transaction of its own."""
from __future__ import annotations

from sqlalchemy.orm import Session

from storage.enums import Role
from storage.models import BlobResource, Node, Resource
from wharf.blobs.quarantine import refuse_if_quarantined
from wharf.infra.context import ANONYMOUS, RequestContext
from wharf.infra.errors import NotFound
from wharf.infra.ids import is_id
from wharf.infra.transactions import in_read
from wharf.spaces.access import Access, node_access, require_node


def blob_for_read(s: Session, ctx: RequestContext, resource_id: str,
                  need: Role = Role.VIEWER) -> tuple[BlobResource, Node, Access]:
    res = s.get(Resource, resource_id) if is_id(resource_id) else None
    blob = s.get(BlobResource, resource_id) if res is not None else None
    if res is None or blob is None:
        raise NotFound("No such blob resource.")
    try:
        node, access = require_node(s, ctx.principal, res.node_id, need)
    except NotFound:
        raise NotFound("No such blob resource.") from None
    return blob, node, access


def publicly_readable(s: Session, node: Node) -> bool:
    """Whether an anonymous visitor may read this node (public read or link sharing)."""
    return node_access(s, ANONYMOUS, node).role is not None

def _for_download(s: Session, ctx: RequestContext,
                  resource_id: str) -> tuple[BlobResource, bool]:
    """The blob to send, and whether everyone may read it (shared caches may keep it)."""
    blob, node, _access = blob_for_read(s, ctx, resource_id)
    refuse_if_quarantined(blob)
    return blob, publicly_readable(s, node)


describe_blob = in_read(blob_for_read)
blob_for_download = in_read(_for_download)


def etag_header(blob: BlobResource) -> str:
    return f'"{blob.etag}"'

