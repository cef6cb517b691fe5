"""The paths a set of RFC 6902 changesets touched, as a trie the three-way merge walks
instead of the whole documents (:mod:`wharf.worktrees.merge`).

Pure: no I/O. Trunk's document at a draft's ``base_revision`` and the draft's head differ
from trunk's head and from each other only at paths the revisions since then wrote (trunk's
after the base revision, the draft's since it was forked). A key a trie does not name is
unchanged on every side, so the merge keeps it without comparing its value: the merge's
work follows what the two sides changed, not the document.

A trie is a ``dict`` from an object key (an unescaped JSON Pointer token) to its child
trie, or to ``None`` when the whole value under that key may have changed; ``None`` as
the root means "anything may have changed" (a changeset replaced the root, or the trie
grew past :data:`MAX_NODES`): the merge then compares everything, as without a trie.
Array indices are keys like any other: the merge treats arrays as atomic values, so a
trie below an array is never walked.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, TypeAlias

#: A trie of touched paths (see the module docstring).
Trie: TypeAlias = "dict[str, Trie | None]"
#: A trie, or ``None``: everything may have changed.
Touched: TypeAlias = "Trie | None"

#: Nodes a trie may hold before it gives up and says "everything" (its own memory and
#: the walk's bookkeeping stay bounded whatever the changesets).
MAX_NODES: Final = 200_000


def _tokens(pointer: str) -> list[str] | None:
    """A JSON Pointer's unescaped tokens (``[]``: the root); None if it is not a pointer
    (a stored changeset was checked when written, so this only guards the trie)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        return None
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def touched_paths(changesets: Iterable[list[Any]]) -> Touched:
    """The trie of every path the changesets' operations wrote: ``path`` of ``add``,
    ``remove``, ``replace``, ``move`` and ``copy``, and ``from`` of ``move`` (``test``
    writes nothing)."""
    root: Trie = {}
    nodes = 0
    for changeset in changesets:
        for op in changeset:
            name = op.get("op") if isinstance(op, dict) else None
            if name not in ("add", "remove", "replace", "move", "copy"):
                continue
            pointers = [op.get("path")] + ([op.get("from")] if name == "move" else [])
            for pointer in pointers:
                tokens = _tokens(pointer) if isinstance(pointer, str) else None
                if not tokens:  # the root, or not a pointer: anything may have changed
                    return None
                added = _insert(root, tokens)
                nodes += added
                if nodes > MAX_NODES:
                    return None
    return root


def _insert(root: Trie, tokens: list[str]) -> int:
    """Mark ``tokens`` (non-empty) wholly touched under ``root``; the nodes added."""
    node, added = root, 0
    for token in tokens[:-1]:
        if token in node:
            child = node[token]
            if child is None:  # an ancestor is wholly touched already
                return added
        else:
            child = node[token] = {}
            added += 1
        node = child
    if node.get(tokens[-1], {}) is not None:
        added += tokens[-1] not in node
        node[tokens[-1]] = None
    return added
