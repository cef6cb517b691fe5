"""The declarative base of the product database's models, and the column types they share. Ids are
generated in Python."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self

from sqlalchemy import String, Table
from sqlalchemy.orm import DeclarativeBase, configure_mappers

ID = String(32)
#: A W3C ``traceparent`` (version 00: ``00-<32 hex>-<16 hex>-<2 hex>``),
#: see wharf.observability.tracing.
TRACE_CONTEXT_LENGTH = 55


class Base(DeclarativeBase):
    # Every model here maps one Table (DeclarativeBase declares the wider FromClause).
    __table__: ClassVar[Table]

    @classmethod
    def detached(cls, values: Mapping[Any, Any]) -> Self:
        """An instance holding ``values`` (column attributes), built the way a query
        loads one: its state without the per-attribute events of ``__init__`` (about a
        sixth of the cost; hot paths build one per operation). Read it, like a loaded
        row; unset attributes read None. Nothing of it is pending in any Session."""
        if not cls.__mapper__.configured:  # __init__ would configure them: a fresh process
            configure_mappers()
        obj: Self = cls.__mapper__.class_manager.new_instance()
        obj.__dict__.update(values)
        return obj
