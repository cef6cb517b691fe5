"""Search: find nodes by name (``wharf.search.names``); see docs/search.md."""
