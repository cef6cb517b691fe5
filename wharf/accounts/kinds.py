"""The kind of the accounts capability: ``delete_account`` (the submitter's account and
everything it owns), its payload and result, declared once here
(``wharf.operations.registry``)."""
from __future__ import annotations

from wharf.operations.kinds import Shape
from wharf.operations.registry import Collaborators, KindSpec, register

DELETE_ACCOUNT = "delete_account"


class DeleteAccountPayload(Shape, frozen=True):
    """The account being deleted (``deleting`` since the submission)."""

    user_id: str


class DeleteAccountResult(Shape, frozen=True):
    user_id: str



def _delete_account(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.accounts.service import DeleteAccount
    # An account's deletion fails its other operations with their kinds' hooks.
    return DeleteAccount(c.db, c.unitstore, c.settings, c.handlers)


register(KindSpec(
    name=DELETE_ACCOUNT, payload=DeleteAccountPayload, result=DeleteAccountResult,
    handler=_delete_account,
    doc="``delete_account``: the submitter's account and everything it owns, deleted\n"
        "    (``DELETE /api/me``).",
    result_doc="Once completed: the deleted account's id."))
