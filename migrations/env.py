"""Alembic environment: always run with a connection handed in by ``migrations.prepare``."""
from __future__ import annotations

from alembic import context

from storage.models import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:  # pragma: no cover - only via `alembic` CLI, which we do not use
    raise RuntimeError("run migrations through `wharf migrate`")

context.configure(connection=connection, target_metadata=Base.metadata,
                  render_as_batch=connection.dialect.name == "sqlite",
                  transaction_per_migration=False)
with context.begin_transaction():
    context.run_migrations()
