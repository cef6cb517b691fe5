"""The live change feed's server (``wharf feed``, issue 39): an ASGI application under
uvicorn (:mod:`.app`), one dispatcher per process following the feed's bus (:mod:`.hub`),
its metrics (:mod:`.metrics`). The events, the bus and who hears what are the core's
(``wharf.feed``); the tickets are asked for from the WSGI API (``POST /api/feed-tickets``).
"""
