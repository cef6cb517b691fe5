"""The kind of the trash capability: ``purge_trash`` (a trash batch deleted permanently),
its payload and result, declared once here (``wharf.operations.registry``)."""
from __future__ import annotations

from wharf.operations.kinds import Shape
from wharf.operations.registry import Collaborators, KindSpec, register

PURGE_TRASH = "purge_trash"


class PurgeTrashPayload(Shape, frozen=True):
    """The batch to delete permanently; ``by_retention`` when the retention sweep
    submitted it (the worker then skips the submitter's permission re-check)."""

    batch_id: str
    root_node_id: str
    space_id: str
    by_retention: bool = False


class PurgeTrashResult(Shape, frozen=True):
    batch_id: str
    nodes_deleted: int
    resources_deleted: int
    objects_queued: int
    batches_deleted: int
    nested_batch_ids: list[str]



def _purge_trash(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.trash.service import PurgeTrash
    return PurgeTrash(c.db, c.unitstore, c.settings)


register(KindSpec(
    name=PURGE_TRASH, payload=PurgeTrashPayload, result=PurgeTrashResult,
    handler=_purge_trash,
    doc="``purge_trash``: a trash batch deleted permanently.",
    result_doc="Once completed: what was deleted.",
    # before nested trash batches, a purge deleted exactly its own batch
    result_backfill=lambda stored: {"batches_deleted": 1, "nested_batch_ids": []}))
