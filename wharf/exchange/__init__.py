"""Office exchange (issue 38): the unit formats a front end opens (:mod:`.formats`), imports
of Office files into units and exports of units to Office files, as worker jobs."""
from __future__ import annotations

from wharf.exchange import import_kinds  # noqa: F401  (registers its operation kind)
