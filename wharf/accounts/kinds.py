"""The kinds of the accounts capability: ``delete_account`` (the submitter's account and
everything it owns) and ``delete_space`` (a team space and everything in it, through the
same purge, ``wharf.accounts.tree``), their payloads and results, declared once here
(``wharf.operations.registry``)."""
from __future__ import annotations

from wharf.operations.kinds import Shape
from wharf.operations.registry import Collaborators, KindSpec, register
from wharf.spaces.lifecycle import DELETE_SPACE

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


class DeleteSpacePayload(Shape, frozen=True):
    """The team space being deleted (read-only since the submission)."""

    space_id: str


class DeleteSpaceResult(Shape, frozen=True):
    space_id: str


def _delete_space(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.accounts.space_deletion import DeleteSpace
    # A space's deletion fails the space's other operations with their kinds' hooks.
    return DeleteSpace(c.db, c.unitstore, c.settings, c.handlers)


register(KindSpec(
    name=DELETE_SPACE, payload=DeleteSpacePayload, result=DeleteSpaceResult,
    handler=_delete_space,
    doc="``delete_space``: a team space and everything in it, deleted\n"
        "    (``DELETE /api/spaces/{id}``).",
    result_doc="Once completed: the deleted space's id."))
