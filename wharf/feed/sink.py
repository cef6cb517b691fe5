"""What a committed write hands over after its commit (``storage.db.notify_after_commit``):
completion notices go to the long-poll notifier as before; the feed's events, with one
``operation.done`` per finished operation, go to the feed's bus. Neither can fail the
write (the notifier logs; the bus queues without blocking)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from wharf.feed.bus import FeedBus
from wharf.feed.events import Event, EventType
from wharf.operations.notify import Done


class FeedSink:
    def __init__(self, notify: Callable[[Sequence[Any]], None], bus: FeedBus | None):
        self.notify, self.bus = notify, bus

    def __call__(self, notices: Sequence[Any]) -> None:
        events = [n for n in notices if isinstance(n, Event)]
        others = [n for n in notices if not isinstance(n, Event)] if events else notices
        if others:
            self.notify(others)
        if self.bus is None:
            return
        events += [Event(EventType.OPERATION_DONE, operation_id=n.id, kind=n.kind,
                         status=n.status, actor_id=n.actor_id)
                   for n in others if isinstance(n, Done)]
        self.bus.publish(events)
