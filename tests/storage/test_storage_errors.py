"""Storage's own errors and the core's one mapping of them (wharf.infra.errors.from_storage): each
keeps the status, problem code, title, retryability and headers it had when storage raised
the core's errors itself. And the outbox's fast path is a collaborator the database is given."""
from __future__ import annotations

import inspect

import pytest

from storage import errors as se
from storage.db import Database, send_after_commit
from storage.models import OutboxMessage
from wharf.infra.errors import WharfError, from_storage
from wharf.infra.ids import new_id

# class -> (status, code, title, retryable, Retry-After)
EXPECTED = {
    se.BlobNotFound: (404, "blob_not_found", "Blob not found", False, None),
    se.UnitNotFound: (404, "not_found", "Not found", False, None),
    se.RevisionConflict: (409, "revision_conflict", "Revision conflict", False, None),
    se.UnitConflict: (409, "unit_conflict", "Unit conflict", False, None),
    se.DraftQuotaExceeded: (409, "draft_quota_exceeded", "Draft quota exceeded", False, None),
    se.DatabaseBusy: (503, "database_busy", "Service unavailable", True, "1"),
    se.UnitStoreUnavailable: (503, "unitstore_unavailable", "Transient failure", True, None),
    se.BlobStoreUnavailable: (503, "blob_store_unavailable", "Blob store unavailable", True,
                              None),
    se.BucketNotFound: (503, "blob_store_bucket_missing", "Blob store bucket missing", True,
                        None),
    se.ChangesetTooLarge: (413, "changeset_too_large", "Changeset too large", False, None),
    se.UnitTooLarge: (413, "unit_too_large", "Unit too large", False, None),
    se.InvalidChangeset: (400, "invalid_changeset", "Invalid changeset", False, None),
    se.UnitTooDeep: (400, "unit_too_deep", "Unit too deep", False, None),
    # the groups, for an error a future storage module raises without a rule of its own
    se.StorageNotFound: (404, "not_found", "Not found", False, None),
    se.StorageConflict: (409, "conflict", "Conflict", False, None),
    se.StorageUnavailable: (503, "transient_failure", "Transient failure", True, None),
    se.StorageTooLarge: (413, "payload_too_large", "Payload too large", False, None),
    se.StorageError: (503, "storage_failure", "Storage failure", True, None),
}


def test_every_storage_error_has_a_documented_mapping():
    declared = {cls for _, cls in inspect.getmembers(se, inspect.isclass)
                if issubclass(cls, se.StorageError)}
    assert declared == set(EXPECTED)
    for cls in declared:
        assert cls.__doc__, f"{cls.__name__} needs a docstring"


@pytest.mark.parametrize("cls", list(EXPECTED), ids=lambda c: c.__name__)
def test_from_storage_keeps_status_code_title_and_retryability(cls):
    status, code, title, retryable, retry_after = EXPECTED[cls]
    err = from_storage(cls("what happened", details={"op_index": 3}))
    assert isinstance(err, WharfError)
    assert (err.status, err.code, err.title, err.retryable) == (status, code, title, retryable)
    assert err.message == "what happened" and err.details == {"op_index": 3}
    assert err.headers.get("Retry-After") == retry_after
    assert err.to_dict() == {"code": code, "message": "what happened",
                             "retryable": retryable, "details": {"op_index": 3}}


def test_storage_errors_are_not_core_errors():
    """The core is the one that maps; storage knows nothing of statuses or codes."""
    for cls in EXPECTED:
        assert not issubclass(cls, WharfError)
        assert not hasattr(cls, "status") and not hasattr(cls, "code")


def test_committed_outbox_rows_go_to_the_collaborator_the_database_was_given(db: Database):
    sent: list[list[str]] = []
    sending = db.with_outbox_sink(lambda rows: sent.append([r.id for r in rows]))
    assert sending.write_engine is db.write_engine  # one database, one pool
    assert sending.on_outbox_committed is not None and db.on_outbox_committed is None

    def message() -> OutboxMessage:
        return OutboxMessage(id=new_id(), queue_name="q", actor_name="a", subject_id="s")

    row = message()
    with sending.write() as s:
        send_after_commit(s, row)
    assert sent == [[row.id]]
    with pytest.raises(RuntimeError), sending.write() as s:  # rolled back: nothing sent
        send_after_commit(s, message())
        raise RuntimeError("abort")
    with db.write() as s:  # the database without a collaborator: left to the relay
        send_after_commit(s, message())
    assert sent == [[row.id]]
