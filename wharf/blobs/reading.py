"""Finding a blob to read, and its ETag."""
from __future__ import annotations

from sqlalchemy.orm import Session

from storage.models import BlobResource, Node, Resource
from wharf.infra.context import RequestContext
from wharf.infra.errors import NotFound
from wharf.infra.ids import is_id
from wharf.spaces.access import Access, require_node


def blob_for_read(s: Session, ctx: RequestContext, resource_id: str,
                  need: str = "viewer") -> tuple[BlobResource, Node, Access]:
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
    from wharf.infra.context import ANONYMOUS
    from wharf.spaces.access import node_access
    return node_access(s, ANONYMOUS, node).role is not None

def etag_header(blob: BlobResource) -> str:
    return f'"{blob.etag}"'

