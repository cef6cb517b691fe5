"""Search: find nodes by name (``wharf.search.names``) and units by content
(``wharf.search.content``, indexed by ``wharf.search.indexing``); see docs/search.md."""
from wharf.search import indexing  # noqa: F401  (registers the audit hook that marks units)
