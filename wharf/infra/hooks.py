"""Hook lists: how a capability reacts to another's event without the event's owner
importing it by name.

The owner declares a module-level list (``FINISHED_HOOKS``, ``UNITS_PURGED``, ...) and
calls each entry at the event; a reacting capability registers its function with
:func:`register` when its package is imported (``wharfd.capabilities`` imports every
capability in every process). Registering twice keeps one entry, so a re-imported package
does not react twice.
"""
from __future__ import annotations

from typing import TypeVar

H = TypeVar("H")


def register(hooks: list[H], hook: H) -> H:
    """Add ``hook`` to ``hooks`` once; returns it (so it can decorate)."""
    if hook not in hooks:
        hooks.append(hook)
    return hook
