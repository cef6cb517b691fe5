"""Team-space issues, as the API calls them: each function takes the ``Database`` and
runs in one transaction of its own (``wharf.infra.transactions``): every write checks the
caller's standing (:mod:`wharf.issues.access`), changes the rows, writes the timeline
event with a snapshot of the names involved, bumps the issue's ``updated_at`` and writes
the audit row; any failure rolls all of it back.

The rules themselves are session-level, in :mod:`wharf.issues.writes` (issues, comments)
and :mod:`wharf.issues.labels` (labels, assignees, node references); the shared views,
limits and checks in :mod:`wharf.issues.records`; the merged timeline in
:mod:`wharf.issues.timeline`.

Numbering: ``#N`` comes from the space's ``issue_counters`` row, incremented with
``UPDATE ... RETURNING`` inside the creating transaction. On PostgreSQL the row lock makes
concurrent creators of one space take turns; SQLite's write transactions are serialised by
``BEGIN IMMEDIATE``. A creation that fails rolls its increment back, so numbers have no
gaps; issues are never deleted, so numbers are never reused.

Limits (each refused with its own problem code): 100 labels per space (``label_limit``),
20 labels per issue (``issue_label_limit``), 10 assignees (``assignee_limit``), 20 node
references (``node_ref_limit``). Relationship writes lock the issue row first, so two
concurrent additions cannot both pass the count.
"""
from __future__ import annotations

from wharf.infra.transactions import in_read, in_write
from wharf.issues import labels, timeline, writes
from wharf.issues.records import IssueView, NodeRefView
from wharf.issues.writes import IssueFilters

create_issue = in_write(writes.create_issue)
get_issue = in_read(writes.get_issue)
list_issues = in_read(writes.list_issues)
update_issue = in_write(writes.update_issue)
close_issue = in_write(writes.close_issue)
reopen_issue = in_write(writes.reopen_issue)
issue_timeline = in_read(timeline.timeline)

create_comment = in_write(writes.create_comment)
update_comment = in_write(writes.update_comment)
delete_comment = in_write(writes.delete_comment)

list_labels = in_read(labels.list_labels)
create_label = in_write(labels.create_label)
update_label = in_write(labels.update_label)
delete_label = in_write(labels.delete_label)
add_label = in_write(labels.add_label)
remove_label = in_write(labels.remove_label)

add_assignee = in_write(labels.add_assignee)
remove_assignee = in_write(labels.remove_assignee)
add_node_ref = in_write(labels.add_node_ref)
remove_node_ref = in_write(labels.remove_node_ref)

__all__ = ["IssueFilters", "IssueView", "NodeRefView"]
