"""``POST /api/operations:batch``: up to ``MAX_BATCH_ITEMS`` submissions in one request
and one transaction, each with its own Idempotency-Key and its own answer
(``wharf.operations.bulk``)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon
import msgspec

from api import contract
from api.contract.decoding import validation_failed
from api.errors import error_document
from api.resources.operations import operation_body
from api.schemas.operations import (
    BATCH_KINDS,
    MAX_BATCH_ITEMS,
    BatchAnswer,
    BatchItemAnswer,
    BatchRequest,
    CreateResourceRequest,
)
from api.schemas.problem import Problem
from wharf.infra.context import RequestContext
from wharf.infra.errors import WharfError
from wharf.operations.bulk import BatchItem, ItemAnswer, submit_batch
from wharf.operations.service import DONE, Operations
from wharf.units import resources

#: How each batchable kind turns its single route's body into a submission: (request as
#: its fingerprint sees it, prepare), given the batch's memo.
_Submit = Callable[[RequestContext, Any, dict[Any, Any]], BatchItem]


def _create_resource(ctx: RequestContext, body: CreateResourceRequest,
                     memo: dict[Any, Any]) -> BatchItem:
    request = resources.create_resource_request(
        {"space_id": body.space_id, "parent_id": body.parent_id, "name": body.name,
         "unit_type": str(body.unit_type)})
    return BatchItem(kind=resources.KIND, key=None, request=request,
                     prepare=resources.create_resource_prepare(ctx, request, memo))


_SUBMITTERS: dict[str, _Submit] = {"create_resource": _create_resource}


def _problem(exc: WharfError) -> Problem:
    # the single route's document (api.errors), every key of its details included, not only
    # those the ProblemDetails schema names (a Struct's constructor does not convert them)
    return Problem(**error_document(exc))


def _answer(answer: ItemAnswer) -> BatchItemAnswer:
    if answer.error is not None:
        return BatchItemAnswer(status=answer.error.status, problem=_problem(answer.error))
    assert answer.submission is not None
    op, created = answer.submission.operation, answer.submission.created
    done = not created and op.status in DONE
    return BatchItemAnswer(status=200 if done else 202, operation=operation_body(op),
                           replay=not created)


class OperationBatch:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="submitOperations",
                 summary="Start many operations at once (a batch)", tags=["operations"],
                 description=f"Up to {MAX_BATCH_ITEMS} submissions, each with its own "
                             "`idempotency_key` and the body of its kind's single route "
                             f"(kinds: {', '.join(sorted(BATCH_KINDS))}), recorded in one "
                             "transaction: the operations it records commit together or "
                             "not at all. Always 200 (once the batch itself is valid), with "
                             "one answer per item, in order: `status` 202 and `operation` "
                             "(recorded, or a replay not done), 200 (a replay of a done "
                             "operation), or the problem the single route would answer "
                             "(`validation_failed`, `not_found`, `idempotency_key_reused`, "
                             "`quota_exceeded`, ...). A key repeated inside the batch: the "
                             "later items are replays of the first (same input) or 409. "
                             "Quotas count each operation. A batch that is not valid "
                             "itself (more items than allowed, an unknown kind, a missing "
                             "key) is 400 `validation_failed` and records nothing.",
                 body=BatchRequest, responses={200: BatchAnswer}, problems=(429,))
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        batch = contract.read_body(req, BatchRequest)
        ctx = req.context.ctx
        memo: dict[Any, Any] = {}
        items: list[BatchItem] = []
        for entry in batch.items:
            shape = BATCH_KINDS[entry.kind]
            try:
                body = msgspec.convert(entry.input, shape)
            except msgspec.ValidationError as exc:
                err = validation_failed(exc, shape)
                items.append(BatchItem(kind=entry.kind, key=entry.idempotency_key,
                                       request={}, error=err))
                continue
            item = _SUBMITTERS[entry.kind](ctx, body, memo)
            item.key = entry.idempotency_key
            items.append(item)
        resp.media = BatchAnswer(items=[_answer(a) for a in submit_batch(self.ops, ctx, items)])
