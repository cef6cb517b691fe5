"""Units: unit resources (``create_resource``), reading units and applying changesets.
"""
from __future__ import annotations

from wharf.units import kinds  # noqa: F401  (registers its operation kind)
