"""The live change feed (issue 39): what changed, told to the users who may know it.

- :mod:`.events`: the event kinds and their fields, declared once, and the events a
  committed write announces (derived from its audit records: every write is audited);
- :mod:`.bus`: where committed events go and are read back by cursor (Redis stream, or
  in process in the embedded mode), with a retention window;
- :mod:`.audience`: who of a set of listening users may hear an event, decided when it is
  delivered by the same access rules every route uses.
"""

# ruff: noqa: F401  (the import registers the audit hook)
import wharf.feed.announce
