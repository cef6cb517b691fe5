"""State changes the server takes without an Idempotency-Key: trash, restore, retry, cancel.

Rules:
- A second copy of one of these writes is not a replay: the server answers it 409 (or 404:
  a trashed node, a restored batch are gone) although the first copy succeeded. So they
  are never re-sent blindly: the first request goes with ``resend=False``; when its answer
  is lost (``AnswerLost``) the client re-reads the state and decides from it.
- Decided from the state (``*_done``): cancel — the operation is ``failed`` with code
  ``cancelled``; retry — the operation is no longer ``failed``, or its ``attempts`` or
  ``max_attempts`` grew (a retry raises ``max_attempts``), so an operation that failed again
  is not retried a second time; trash — the node is gone and a trash batch rooted at it
  is listed; restore — the batch no longer exists (restore deletes it; there is no GET of
  a batch, so a batch purged in that same moment would look the same).
- When the state says "not done", the write is sent once more (normal retries); a 409 or
  404 to that re-send re-reads the state once more before it is reported.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wharfclient.http import AnswerLost, ApiError, WharfClient

Note = Callable[[str], None]
#: Trash batches looked at (newest first) to find the one a lost answer created.
TRASH_SCAN = 200


def _change(client: WharfClient, path: str, note: Note,
            done: Callable[[], dict[str, Any] | None]) -> dict[str, Any]:
    """POST ``path`` once; after a lost answer, ``done()`` (the state as the answer, or None)
    decides; if not done, send again and consult ``done()`` on a 404/409."""
    try:
        answer: dict[str, Any] = client.json("POST", path, resend=False)
        return answer
    except AnswerLost as exc:
        note(f"{exc}; reading the state back")
    state = done()
    if state is not None:
        return state
    try:
        answer = client.json("POST", path)
        return answer
    except ApiError as exc:
        if exc.status not in (404, 409):
            raise
        state = done()
        if state is None:
            raise
        return state


def _operation(client: WharfClient, op_id: str) -> dict[str, Any]:
    op: dict[str, Any] = client.json("GET", f"/api/operations/{op_id}")
    return op


def cancel(client: WharfClient, op_id: str, note: Note) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        op = _operation(client, op_id)
        return op if cancelled(op) else None
    return _change(client, f"/api/operations/{op_id}/cancel", note, done)


def cancelled(op: dict[str, Any]) -> bool:
    return op.get("status") == "failed" and (op.get("error") or {}).get("code") == "cancelled"


def retry(client: WharfClient, op_id: str, note: Note) -> dict[str, Any]:
    before = _operation(client, op_id)

    def done() -> dict[str, Any] | None:
        op = _operation(client, op_id)
        return op if retried(before, op) else None
    return _change(client, f"/api/operations/{op_id}/retry", note, done)


def retried(before: dict[str, Any], after: dict[str, Any]) -> bool:
    if before.get("status") != "failed":
        return False
    return (after.get("status") != "failed"
            or int(after["attempts"]) > int(before["attempts"])
            or int(after["max_attempts"]) > int(before["max_attempts"]))


def trash(client: WharfClient, node_id: str, note: Note) -> dict[str, Any]:
    node: dict[str, Any] = client.json("GET", f"/api/nodes/{node_id}")
    space_id = node["space_id"]

    def done() -> dict[str, Any] | None:
        still = client.request("GET", f"/api/nodes/{node_id}", ok=(404,))
        if still.status_code != 404:
            return None
        return _batch_rooted_at(client, space_id, node_id)
    return _change(client, f"/api/nodes/{node_id}/trash", note, done)


def _batch_rooted_at(client: WharfClient, space_id: str,
                     node_id: str) -> dict[str, Any] | None:
    """The newest trash batch of the space rooted at the node (first TRASH_SCAN batches)."""
    seen, cursor = 0, None
    while seen < TRASH_SCAN:
        params: dict[str, Any] = {"limit": 100}
        if cursor:
            params["cursor"] = cursor
        page = client.json("GET", f"/api/spaces/{space_id}/trash", params=params)
        for batch in page["items"]:
            if batch["root_node_id"] == node_id:
                found: dict[str, Any] = batch
                return found
        seen += len(page["items"])
        cursor = page.get("next_cursor")
        if not cursor:
            return None
    return None


def restore(client: WharfClient, batch_id: str, note: Note) -> dict[str, Any]:
    lost = False

    def done() -> dict[str, Any] | None:
        nonlocal lost
        lost = True
        return None  # no GET of a batch: learn it from the re-send (404: it is gone)

    try:
        return _change(client, f"/api/trash-batches/{batch_id}/restore", note, done)
    except ApiError as exc:
        if not (lost and exc.status == 404):
            raise
        note(f"trash batch {batch_id} is gone: restored by the request whose answer "
             f"was lost")
        return {"id": batch_id, "restored_nodes": None}
