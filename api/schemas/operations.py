"""Operations (a tagged union keyed by ``kind``, each with its kind's ``result``), their
attempts, unit resources, units and RFC 6902 JSON Patch changesets.

The union is built from the registered kinds (``wharf.operations.registry.KINDS``; this
module imports ``wharf.capabilities``, so every capability has registered its kinds): one
``<Kind>Operation`` Struct per kind, with the kind's ``doc`` and its result Struct,
described by its ``result_doc``. The results and the error shape are the core's own
Structs: what a handler returns is what the document declares.
"""
from __future__ import annotations

import functools
import operator
import types
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeAlias

import msgspec

import wharf.capabilities  # noqa: F401  (every capability registers its kinds: the union below)
from api.schemas.common import (
    Cursor,
    Id,
    IdRef,
    Limit,
    Request,
    Response,
    Timestamp,
)
from api.schemas.problem import Problem
from api.schemas.protection import ObjectRights
from api.schemas.spaces import Node
from storage.enums import AttemptOutcome, OperationStatus, ResourceKind, UnitType
from wharf.infra.pagination import DEFAULT_LIMIT
from wharf.operations.kinds import OperationError
from wharf.operations.registry import KINDS, KindSpec
from wharf.operations.service import KIND_PATTERN

#: ``?wait=`` accepts up to ``WAIT_ACCEPTED`` seconds; the server waits at most
#: ``MAX_WAIT`` (a larger value counts as ``MAX_WAIT``).
MAX_WAIT = 60.0
WAIT_ACCEPTED = 3600.0


# --- operations --------------------------------------------------------------------------

class OperationBase(Response, tag_field="kind"):
    """The fields of every operation; ``kind`` says which ``result`` it carries."""

    id: Id
    status: OperationStatus
    done: Annotated[bool, msgspec.Meta(description="The status is completed or failed.")]
    attempts: Annotated[int, msgspec.Meta(ge=0)]
    max_attempts: int
    created_at: Timestamp
    updated_at: Timestamp
    completed_at: Timestamp | None
    next_attempt_at: Annotated[Timestamp | None, msgspec.Meta(
        description="When the next attempt is due (after a retryable failure).")]
    error: Annotated[OperationError | None, msgspec.Meta(
        description="Why it failed (status failed), or the last retryable failure.")]
    can_retry: Annotated[bool, msgspec.Meta(
        description="`POST /api/operations/{id}/retry` can reopen it: it failed, and its "
                    "kind's failure did not dispose of its input (otherwise the retry "
                    "answers 409 `retry_not_possible` or `operation_state_conflict`; "
                    "submit the request again instead).")]


def _operation_type(spec: KindSpec) -> type[OperationBase]:
    """``<Kind>Operation``: the operations of ``spec``'s kind, with its result."""
    name = "".join(part.title() for part in spec.name.split("_")) + "Operation"
    optional: Any = spec.result | None
    result = Annotated[optional, msgspec.Meta(description=spec.result_doc)]

    def body(ns: dict[str, Any]) -> None:
        ns.update({"__doc__": spec.doc, "__module__": __name__,
                   "__annotations__": {"result": result}})
    return types.new_class(name, (OperationBase,), {"tag": spec.name}, body)


#: The Struct of each kind's operations.
OPERATION_TYPES: dict[str, type[OperationBase]] = {
    spec.name: _operation_type(spec) for spec in KINDS.loaded()}
if TYPE_CHECKING:
    Operation: TypeAlias = OperationBase
else:
    #: Any operation: the union of every kind's, keyed by ``kind``.
    Operation = functools.reduce(operator.or_, OPERATION_TYPES.values())


class OperationList(Response):
    items: list[Operation]
    next_cursor: str | None


class OperationQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?wait=`` of GET /api/operations/{operation_id}."""

    wait: Annotated[float, msgspec.Meta(
        ge=0, le=WAIT_ACCEPTED,
        description=f"Long-poll: answer as soon as the operation is done, or after this "
                    f"many seconds. Up to {WAIT_ACCEPTED:g} is accepted; the server waits "
                    f"at most {MAX_WAIT:g} s (a larger value counts as {MAX_WAIT:g}). "
                    f"0 or absent: answer at once.")] = 0.0


class OperationListQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?limit=&cursor=&status=&kind=`` of GET /api/operations."""

    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor | None = None
    status: OperationStatus | None = None
    kind: Annotated[str, msgspec.Meta(
        pattern=KIND_PATTERN, extra_json_schema={"enum": KINDS.names()},
        description="Only operations of this kind (a kind with no operations gives an "
                    "empty page).")] | None = None


class OperationAttempt(Response):
    number: int
    worker_id: str
    started_at: Timestamp
    finished_at: Timestamp | None
    outcome: AttemptOutcome | None
    error: OperationError | None


class OperationAttemptList(Response):
    items: list[OperationAttempt]


# --- unit resources and units --------------------------------------------------------------

class CreateResourceRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "space_id": "0f8fad5bd9cb469fa16570867728950e", "name": "Q3 plans",
        "unit_type": "doc"}
    space_id: IdRef
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=255, examples=["Q3 plans"])]
    unit_type: UnitType
    parent_id: Annotated[IdRef | None, msgspec.Meta(
        description="The folder to create it in (null or absent: the space's root).")] = None


class ExportRequest(Request):
    """``POST /api/units/{unit_id}/exports`` (operation ``export_unit``)."""

    __example__: ClassVar[dict[str, object]] = {"format": "xlsx"}
    format: Annotated[Literal["xlsx", "csv", "docx", "pptx"], msgspec.Meta(
        description="`xlsx` or `csv` for a sheet, `docx` for a doc, `pptx` for a slide; "
                    "another is 400 `validation_failed` (`details.field`: `format`).")]
    sheet: Annotated[str, msgspec.Meta(
        max_length=255, description="CSV only: the sheet (its id, else its name); default "
                                    "the first. An unknown sheet fails the operation "
                                    "(`validation_failed`).")] | None = None


class ResourceUnit(Response):
    unit_id: Id
    unit_type: UnitType


class Resource(Response):
    id: Id
    kind: ResourceKind
    node_id: Id
    created_by: Id
    created_at: Timestamp
    unit: ResourceUnit | None
    node: Node


class ProtectedRange(ObjectRights):
    """A protected range of the unit and what the caller may do with it (advisory: the
    snapshot is not filtered; docs/protection.md)."""

    object_id: Id
    name: str
    target: Annotated[str | None, msgspec.Meta(description="null: not bound.")]


class Unit(Response):
    unit_id: Id
    unit_type: UnitType
    revision: Annotated[int, msgspec.Meta(ge=0)]
    snapshot: dict[str, Any]
    resource_id: Id
    node_id: Id
    updated_at: Timestamp
    protected_ranges: Annotated[list[ProtectedRange] | msgspec.UnsetType, msgspec.Meta(
        description="`GET /api/units/{unit_id}` of a unit with protected ranges: each "
                    "one and the caller's rights on it (absent when it has none).")] \
        = msgspec.UNSET


Pointer = Annotated[str, msgspec.Meta(description="An RFC 6901 JSON Pointer.",
                                      examples=["/body/title"])]


class PatchAdd(Response, tag_field="op", tag="add"):
    path: Pointer
    value: Any


class PatchRemove(Response, tag_field="op", tag="remove"):
    path: Pointer


class PatchReplace(Response, tag_field="op", tag="replace"):
    path: Pointer
    value: Any


class PatchMove(Response, tag_field="op", tag="move", rename={"from_": "from"}):
    from_: Pointer
    path: Pointer


class PatchCopy(Response, tag_field="op", tag="copy", rename={"from_": "from"}):
    from_: Pointer
    path: Pointer


class PatchTest(Response, tag_field="op", tag="test"):
    path: Pointer
    value: Any


#: One RFC 6902 operation, keyed by ``op`` (other members are ignored, as the RFC says).
PatchOperation = PatchAdd | PatchRemove | PatchReplace | PatchMove | PatchCopy | PatchTest


class ChangesetRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "base_revision": 0,
        "changes": [{"op": "add", "path": "/body/title", "value": "Hello"}]}
    base_revision: Annotated[int, msgspec.Meta(
        ge=0, description="The revision the changes were made against (409 "
                          "`revision_conflict` if the unit moved on).")]
    changes: Annotated[list[PatchOperation], msgspec.Meta(min_length=1, max_length=10000)]


class ChangesetResult(Response):
    unit_id: Id
    revision: int
    snapshot: Annotated[dict[str, Any] | None, msgspec.Meta(
        description="The new document; null with `Prefer: return=minimal`.")]


class ChangesetQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?after=&limit=`` of a unit's changesets."""

    after: Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1, description=(
        "The revision the client holds: changesets of later revisions are listed."))] = 0
    limit: Limit = DEFAULT_LIMIT


class ChangesetItem(Response):
    revision: Annotated[int, msgspec.Meta(ge=1)]
    changes: Annotated[list[dict[str, Any]], msgspec.Meta(
        description="The RFC 6902 operations that made this revision from the one before.")]
    author_id: str | None
    origin: dict[str, Any] | None
    created_at: Timestamp


class ChangesetList(Response):
    items: list[ChangesetItem]
    next_after: Annotated[int | None, msgspec.Meta(description=(
        "The `after` of the next page; null when this page reaches the current revision."))]


# --- batches (POST /api/operations:batch) -----------------------------------------------

#: The most items one batch may carry (declared here, once).
MAX_BATCH_ITEMS = 100
#: The kinds a batch may start, and the body of each one's single route.
BATCH_KINDS: dict[str, type[Request]] = {"create_resource": CreateResourceRequest}


class BatchItemRequest(Request):
    """One submission of a batch."""

    idempotency_key: Annotated[str, msgspec.Meta(
        max_length=200, description="The item's own Idempotency-Key (16-200 characters of "
                                    "A-Z a-z 0-9 _ -), as the single route's header.")]
    kind: Annotated[Literal["create_resource"], msgspec.Meta(
        description="The operation kind to start.")]
    input: Annotated[dict[str, Any], msgspec.Meta(
        description="The body the kind's single route takes (`create_resource`: "
                    "`CreateResourceRequest`, as `POST /api/resources`); validated as "
                    "there, an invalid one answers that item's problem.")]


class BatchRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"items": [{
        "idempotency_key": "3c1d9b7e-batch-0001", "kind": "create_resource",
        "input": {"space_id": "0f8fad5bd9cb469fa16570867728950e", "name": "Q3 plans",
                  "unit_type": "doc"}}]}
    items: Annotated[list[BatchItemRequest], msgspec.Meta(
        min_length=1, max_length=MAX_BATCH_ITEMS,
        description=f"1 to {MAX_BATCH_ITEMS} submissions, answered in order.")]


class BatchItemAnswer(Response):
    """One item's answer: ``status`` as its single route would answer it (202 recorded, or
    a replay not done; 200 a replay of a done operation) with ``operation``, or the
    problem's status with ``problem``."""

    status: int
    operation: Operation | msgspec.UnsetType = msgspec.UNSET
    replay: Annotated[bool | msgspec.UnsetType, msgspec.Meta(
        description="With `operation`: true when the key already named it (an earlier "
                    "request, or an earlier item of this batch).")] = msgspec.UNSET
    problem: Annotated[Problem | msgspec.UnsetType, msgspec.Meta(
        description="The item's refusal, as the single route's problem document "
                    "(`validation_failed`, `forbidden`, `not_found`, "
                    "`idempotency_key_reused`, `invalid_idempotency_key`, "
                    "`quota_exceeded`, ...).")] = msgspec.UNSET


class BatchAnswer(Response):
    items: list[BatchItemAnswer]
