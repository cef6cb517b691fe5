"""``wharf fsck``: the object store and the unit store compared with the product database.

- ``streams``: sorted keyset-paged database reads, sorted listings, and their merge;
- ``objects``: orphaned and missing objects, and the repair of old orphans;
- ``units``: orphaned and missing units (report only);
- ``report``: findings and counts, within a detail cap;
- ``run``: one run, the grace rule and the time budget.
"""
from __future__ import annotations

from wharf.fsck.report import KINDS, Finding, Report
from wharf.fsck.run import check_grace, longest_upload, run_fsck
from wharf.fsck.streams import OutOfOrder

__all__ = ["KINDS", "Finding", "OutOfOrder", "Report", "check_grace", "longest_upload",
           "run_fsck"]
