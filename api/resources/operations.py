"""Operations: read, long-poll, list, retry, cancel; and how every operation-starting
endpoint answers a submission (``answer_submission``)."""
from __future__ import annotations

import logging
import re
from typing import Any

import falcon

from api import contract
from api.headers import preferences
from api.schemas.operations import (
    MAX_WAIT,
    OPERATION_TYPES,
    WAIT_ACCEPTED,
    Operation,
    OperationAttempt,
    OperationAttemptList,
    OperationList,
    OperationListQuery,
    OperationQuery,
)
from api.serialize import timestamp
from storage.db import Database
from storage.enums import AttemptOutcome, OperationStatus
from wharf.infra.clock import iso
from wharf.infra.errors import ValidationFailed
from wharf.infra.ids import is_id
from wharf.operations.kinds import read_error, read_result
from wharf.operations.notify import Done
from wharf.operations.reading import OperationRecord
from wharf.operations.service import DONE, Operations, Submission, can_retry

log = logging.getLogger("wharf.api")

RETRY_AFTER = "1"
#: Sent with every operation: where to poll it, and (while not done) how soon.
OPERATION_HEADERS = ("Location", "Retry-After")
#: The request headers of every operation-starting request (``answer_submission``).
SUBMISSION_HEADERS = ("Idempotency-Key", "Prefer")
# One ``wait=<delta-seconds>`` preference of a ``Prefer`` header (RFC 7240), its
# parameters (after ``;``) ignored; at most 6 digits: a longer value is malformed (ignored).
_WAIT_PREFERENCE = re.compile(r'\s*wait\s*=\s*"?([0-9]{1,6})"?\s*(?:;.*)?', re.IGNORECASE)



def operation_body(op: OperationRecord) -> Operation:
    """The operation as its kind's Struct, the stored result typed by the kind."""
    result = read_result(op.kind, op.result)
    shape: Any = OPERATION_TYPES[op.kind]
    body: Operation = shape(
        id=op.id, status=OperationStatus(op.status), done=op.status in DONE,
        attempts=op.attempts, max_attempts=op.max_attempts, created_at=timestamp(op.created_at),
        updated_at=timestamp(op.updated_at), completed_at=iso(op.completed_at),
        next_attempt_at=iso(op.next_attempt_at), error=read_error(op.error),
        can_retry=can_retry(op.status, op.kind, op.payload), result=result)
    return body


def write_operation(resp: falcon.Response, op: OperationRecord, status: int = 200) -> None:
    resp.media = operation_body(op)
    resp.status = status
    resp.location = f"/api/operations/{op.id}"
    if op.status not in DONE:
        resp.set_header("Retry-After", RETRY_AFTER)


def answer_submission(resp: falcon.Response, sub: Submission) -> None:
    """202 while the operation is not done (first request or replay); 200 once it is.
    A 202 may still become a 200 on its way out: :class:`PreferWait`."""
    op = sub.operation
    done = not sub.created and op.status in DONE
    write_operation(resp, op, 200 if done else 202)
    if not done:
        resp.context.pending_operation = op.id


def submission_answers(accepted: str) -> dict[int, contract.Answer]:
    """An operation-creating request's answers (``answer_submission``)."""
    return {202: contract.Answer(Operation, accepted, headers=OPERATION_HEADERS),
            200: contract.Answer(Operation, "The operation is done: it finished within the "
                                            "request's `Prefer: wait=N`, or this is a replay "
                                            "(same Idempotency-Key and request) of one that "
                                            "is done.",
                                 headers=(*OPERATION_HEADERS, "Preference-Applied"))}


def wait_for(ops: Operations, notifier: Any, req: falcon.Request, operation_id: str,
             seconds: float) -> tuple[OperationRecord, bool]:
    """The caller's operation once done, or as it stands after ``seconds`` (and whether it
    is done). The notifier registers the waiter, then asks ``is_done()``: that first read
    is also the request's own (and its 404). A notice that carries the finished operation
    answers without another read; one of its id alone makes it read once more, as does a
    polling notifier (``PollingNotifier``) once per interval. An operation this process
    accepted for the caller is not read first (``LocalNotifier.expect``): a notice will
    come (the notifier reads after ``CONFIRM_SECONDS`` without one)."""
    ctx = req.context.ctx
    state: dict[str, OperationRecord] = {}

    def is_done() -> bool:
        state["op"] = ops.peek(ctx, operation_id)
        return state["op"].status in DONE

    def answer(notice: Done) -> None:
        state["op"] = ops.visible(ctx, notice.operation())

    done = notifier.wait(operation_id, seconds, is_done, answer=answer,
                         reader=ctx.principal.user_id)
    return state["op"], done


def prefer_wait(header: str | None) -> float:
    """Seconds a ``Prefer`` header's ``wait`` preference asks for (RFC 7240), at most
    MAX_WAIT; 0 when it has none. A malformed preference is ignored, as the RFC asks: the
    request is served as if it had not been sent."""
    for preference in preferences(header):
        m = _WAIT_PREFERENCE.fullmatch(preference)
        if m:
            return min(float(m.group(1)), MAX_WAIT)
    return 0.0


class PreferWait:
    """``Prefer: wait=N`` on a request that starts an operation: instead of answering 202
    at once, wait up to N seconds (at most MAX_WAIT) for the operation to be done and
    answer it as a long-poll would, 200 with ``Preference-Applied: wait=N`` once done, so
    a client that wants the result needs one request, not a POST and a long-poll.

    It waits after the submission committed (the operation is recorded and sent on its
    way whatever happens next), on the notifier's long-poll slots: beyond
    ``WHARF_LONG_POLL_MAX_WAITERS`` it answers the 202 at once, as does a wait that
    cannot read the operation (the submission stands; the client polls)."""

    def __init__(self, ops: Operations, notifier: Any):
        self.ops, self.notifier = ops, notifier

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any,
                         req_succeeded: bool) -> None:
        operation_id = resp.context.get("pending_operation")
        if not req_succeeded or operation_id is None:
            return
        wait = prefer_wait(req.get_header("Prefer"))
        try:
            user_id = req.context.ctx.principal.user_id
            if user_id is not None:  # a notice will say when it is done (wait_for)
                self.notifier.expect(operation_id, user_id)
            if wait <= 0:
                return
            op, done = wait_for(self.ops, self.notifier, req, operation_id, wait)
        except Exception:
            # The submission has committed: whatever went wrong while waiting (the row
            # unreadable, the notifier broken), its 202 stands and the client polls.
            log.warning("could not wait for operation %s; answering 202", operation_id,
                        exc_info=True)
            return
        write_operation(resp, op, 200 if done else 202)
        # As text, like the status it replaces: middleware that runs after this one may
        # read it as such (wharfd.tracing.StatusAsText runs before it when tracing is on).
        resp.status = falcon.code_to_http_status(resp.status)
        if done:
            resp.set_header("Preference-Applied", f"wait={wait:g}")
            resp.delete_header("Retry-After")


def parse_wait(raw: str | None) -> float:
    """``?wait=`` (``OperationQuery``): seconds, 0 to WAIT_ACCEPTED, waited at most
    MAX_WAIT."""
    if raw is None or raw == "":
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        raise ValidationFailed("wait must be a number of seconds",
                               details={"field": "wait"}) from None
    if not 0 <= value <= WAIT_ACCEPTED or value != value:
        raise ValidationFailed(f"wait must be between 0 and {WAIT_ACCEPTED:g} seconds",
                               details={"field": "wait"})
    return min(value, MAX_WAIT)


class OperationItem:
    def __init__(self, db: Database, ops: Operations, notifier: Any):
        self.db, self.ops, self.notifier = db, ops, notifier

    def _load(self, req: falcon.Request, operation_id: str) -> OperationRecord:
        return self.ops.get(req.context.ctx, operation_id)

    @contract.op(operation_id="getOperation", summary="An operation", tags=["operations"],
                 description="The caller's operation (an operator's, see "
                             "`WHARF_OPERATORS`: any user's). `?wait=N` long-polls: the "
                             "answer comes as soon as the operation is done, or after N "
                             f"seconds (values up to {WAIT_ACCEPTED:g} are accepted; the server "
                             f"waits at most {MAX_WAIT:g}). `Retry-After` is sent while it "
                             "is not done.",
                 query=OperationQuery,
                 responses={200: contract.Answer(Operation, "The operation.",
                                                 headers=OPERATION_HEADERS)})
    def on_get(self, req: falcon.Request, resp: falcon.Response, operation_id: str) -> None:
        wait = parse_wait(req.get_param("wait"))
        if wait > 0 and self.notifier is not None and is_id(operation_id):
            op, _ = wait_for(self.ops, self.notifier, req, operation_id, wait)
        else:
            op = self._load(req, operation_id)
        write_operation(resp, op)


class OperationAttempts:
    def __init__(self, db: Database, ops: Operations):
        self.db, self.ops = db, ops

    @contract.op(operation_id="listOperationAttempts",
                 summary="Execution attempts of an operation", tags=["operations"],
                 responses={200: OperationAttemptList})
    def on_get(self, req: falcon.Request, resp: falcon.Response, operation_id: str) -> None:
        rows = self.ops.attempts(req.context.ctx, operation_id)
        resp.media = OperationAttemptList(items=[OperationAttempt(
            number=a.number, worker_id=a.worker_id, started_at=timestamp(a.started_at),
            finished_at=iso(a.finished_at),
            outcome=AttemptOutcome(a.outcome) if a.outcome else None,
            error=read_error(a.error)) for a in rows])


class OperationListing:
    def __init__(self, db: Database, ops: Operations):
        self.db, self.ops = db, ops

    @contract.op(operation_id="listOperations", summary="My operations, newest first",
                 tags=["operations"], query=OperationListQuery,
                 responses={200: OperationList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, OperationListQuery)
        items, nxt = self.ops.list(req.context.ctx,
                                   status=str(q.status) if q.status else None,
                                   kind=q.kind, limit=q.limit, cursor=q.cursor)
        resp.media = OperationList(items=[operation_body(o) for o in items], next_cursor=nxt)


class OperationRetry:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="retryOperation", summary="Retry a failed operation",
                 tags=["operations"],
                 description="The caller's (an operator's: any user's) operation becomes "
                             "pending again, with as many attempts as a new one. 409 "
                             "`operation_state_conflict` unless it failed; 409 "
                             "`retry_not_possible` for a kind whose input was discarded "
                             "when it failed (submit again instead); 429 "
                             "`quota_exceeded` when the caller is at their pending "
                             "operations quota (as a submission).",
                 responses={200: contract.Answer(Operation, "Pending again.",
                                                 headers=OPERATION_HEADERS)},
                 problems=(409, 429))
    def on_post(self, req: falcon.Request, resp: falcon.Response, operation_id: str) -> None:
        write_operation(resp, self.ops.retry(req.context.ctx, operation_id))


class OperationCancel:
    def __init__(self, ops: Operations):
        self.ops = ops

    @contract.op(operation_id="cancelOperation", summary="Cancel a pending operation",
                 tags=["operations"],
                 description="The caller's (an operator's: any user's) operation fails "
                             "with `error.code` `cancelled`. 409 "
                             "`operation_state_conflict` unless it is pending.",
                 responses={200: contract.Answer(Operation, "Cancelled (failed).",
                                                 headers=OPERATION_HEADERS)},
                 problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, operation_id: str) -> None:
        # (Its long-polls answer now, as a worker's do: wharf.operations.finish.)
        write_operation(resp, self.ops.cancel(req.context.ctx, operation_id))
