"""Upload sessions and blob resources (filled by the migration of ``api/resources/blobs.py``;
until then they are documented from ``api.openapi``)."""
from __future__ import annotations
