"""A trunk unit's history (issue 37): who changed it and when, each revision's changes,
the document as it was after any revision, and restoring one (an ordinary revision whose
changeset turns the current document into the old one). Read from the unit store's
revisions and checkpoints (:mod:`storage.unitheads`), with the access rules of the unit's
resource; worktree drafts have none."""
