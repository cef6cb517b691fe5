"""Trash: moving nodes to the trash, restoring them and purging them for good.
"""
from __future__ import annotations

from wharf.trash import kinds  # noqa: F401  (registers its operation kind)
