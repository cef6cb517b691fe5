"""Completion webhooks: users register endpoints; when an operation they submitted
finishes, a signed delivery is written in the finishing transaction and sent by workers.

- ``events``: the event types (declared once) and the payload.
- ``addresses``: which URLs may be called (SSRF rules), checked at registration and again
  at each delivery, connecting to the very address checked.
- ``signing``: Standard Webhooks signatures.
- ``service``: register, list, delete; ``announce`` writes deliveries at completion.
- ``delivery``: sending one delivery, retrying, disabling an endpoint that keeps failing.
"""
from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from wharf.infra.hooks import register
from wharf.operations import finish
from wharf.webhooks.service import Finished, announce


def announce_finished(s: Session, outcomes: Sequence[finish.Outcome]) -> int:
    """The engine's ``FINISHED_HOOKS`` entry: the completion deliveries of ``outcomes``
    (one query for them all), in the finishing transaction."""
    return announce(s, [Finished(o.op.id, o.op.actor_id, o.status) for o in outcomes])


# Every process that finishes operations imports this package (wharfd.capabilities).
register(finish.FINISHED_HOOKS, announce_finished)
