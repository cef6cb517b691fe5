"""Operations, unit resources and units (filled by the migration of
``api/resources/operations.py``; until then they are documented from ``api.openapi``)."""
from __future__ import annotations
