"""The operation kinds: each declared once, by its capability, as a :class:`KindSpec`.

A capability's ``kinds.py`` (``wharf/units/kinds.py``, ``wharf/blobs/kinds.py``, ...)
declares its payload and result Structs and registers one ``KindSpec`` per kind in
:data:`KINDS` when its package is imported; ``wharf.capabilities`` imports every
capability, so every process (through ``wharfd.capabilities``) and the API's schemas see
every kind. Everything else reads this registry: the composition root builds the
handlers from the specs' factories, the transport claims long kinds one at a time, the
retry rule reads ``failure_consumes_input``, object deletion and fsck read ``object_keys``
(what a queued operation still references), and the API's ``Operation`` schema is the
tagged union of the kinds' results.

The engine knows no capability: it holds the registry, capabilities fill it. A process
that reads operations with an empty registry would not know what they reference or how to
run them, so those readers ask :meth:`Registry.loaded`, which refuses
(:class:`RegistryEmpty`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from storage.blobstore import BlobStore
    from storage.db import Database
    from storage.unitstore import UnitStore
    from wharf.infra.settings import Settings


@dataclass(frozen=True)
class Collaborators:
    """What a kind's handler may be built with (the composition root's collaborators).
    ``handlers`` is every kind's handler, filled once all are built (a kind that fails
    other operations, such as ``delete_account``, runs their kinds' failure hooks)."""

    db: Database
    unitstore: UnitStore
    blob_store: BlobStore
    settings: Settings
    handlers: dict[str, Any] = field(default_factory=dict)


#: Builds a kind's handler (``wharf.operations.executor.Handler``).
HandlerFactory = Callable[[Collaborators], Any]


@dataclass(frozen=True)
class KindSpec:
    """One operation kind.

    - ``name``: stored in ``operations.kind`` (never renamed: rows hold it);
    - ``payload``, ``result``: its Structs (``operations.payload``, ``operations.result``);
    - ``handler``: builds its handler from the process's :class:`Collaborators`;
    - ``long``: its side effects take long (reading a whole upload back): the transport
      claims its operations one at a time and rings a bell per operation;
    - ``failure_consumes_input``: its failure disposes of its input, so a failed one
      cannot be retried (``wharf.operations.service.can_retry``);
      ``failure_consumes_input_if``: the same for the operations whose payload has this
      field set (not null) only (an import from an upload session, not from a blob);
    - ``object_keys``: the payload fields that hold a blob store object key (a queued
      operation still references that object: object deletion and fsck read them);
    - ``doc``, ``result_doc``: the API's description of its operations and their result;
    - ``result_backfill``: for rows stored before the result gained fields, the fields to
      read them with (from the stored result).
    """

    name: str
    payload: type[msgspec.Struct]
    result: type[msgspec.Struct]
    handler: HandlerFactory
    doc: str
    result_doc: str
    long: bool = False
    failure_consumes_input: bool = False
    failure_consumes_input_if: str | None = None
    object_keys: tuple[str, ...] = ()
    result_backfill: Callable[[dict[str, Any]], dict[str, Any]] | None = field(
        default=None, compare=False)

    def __post_init__(self) -> None:
        fields = set(self.payload.__struct_fields__)
        unknown = [f for f in (*self.object_keys, self.failure_consumes_input_if)
                   if f is not None and f not in fields]
        if unknown:
            raise ValueError(f"kind {self.name}: {unknown} are not fields of "
                             f"{self.payload.__name__}")


class DuplicateKind(ValueError):
    """A kind name registered twice."""


class RegistryEmpty(RuntimeError):
    """No kind registered: the process did not import the capabilities."""


class Registry:
    """Kind name → :class:`KindSpec`; a name registers once."""

    def __init__(self) -> None:
        self._specs: dict[str, KindSpec] = {}
        # Derived once per change of the specs, not per read: the transport asks for the
        # long kinds on every dispatch and every drain.
        self._long: frozenset[str] | None = None

    def register(self, spec: KindSpec) -> KindSpec:
        if spec.name in self._specs:
            raise DuplicateKind(f"operation kind {spec.name!r} is registered twice")
        self._specs[spec.name] = spec
        self._long = None
        return spec

    def unregister(self, name: str) -> None:
        """Forget a kind (tests registering a toy capability clean up with it)."""
        self._specs.pop(name, None)
        self._long = None

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __getitem__(self, name: str) -> KindSpec:
        return self._specs[name]

    def get(self, name: str) -> KindSpec | None:
        return self._specs.get(name)

    def __iter__(self) -> Iterator[KindSpec]:
        """The specs, by name."""
        return iter(sorted(self._specs.values(), key=lambda spec: spec.name))

    def __len__(self) -> int:
        return len(self._specs)

    def names(self) -> list[str]:
        return sorted(self._specs)

    def loaded(self) -> Registry:
        """This registry, refusing if it is empty (:class:`RegistryEmpty`)."""
        if not self._specs:
            raise RegistryEmpty("no operation kind is registered: import the capabilities "
                                "(wharfd.capabilities) before reading operations")
        return self

    def handlers(self, collaborators: Collaborators) -> dict[str, Any]:
        """Every kind's handler built with ``collaborators``, in ``collaborators.handlers``
        (returned). Refuses with no kind registered (:class:`RegistryEmpty`): such a
        process could run nothing, and would take every object for unreferenced."""
        for spec in self.loaded():
            collaborators.handlers[spec.name] = spec.handler(collaborators)
        return collaborators.handlers

    def long_kinds(self) -> frozenset[str]:
        if self._long is None:
            self._long = frozenset(spec.name for spec in self._specs.values() if spec.long)
        return self._long

    def object_keys(self) -> dict[str, tuple[str, ...]]:
        """Per kind whose payload carries object keys, those fields (refuses when empty:
        a reader would take every object for unreferenced)."""
        return {spec.name: spec.object_keys for spec in self.loaded() if spec.object_keys}


#: The process's kinds.
KINDS = Registry()
register = KINDS.register
