"""Keep start-up objects out of the cyclic garbage collector's way.

A Wharf process builds most of its objects once, at start: imported modules, the app and
its routes, schemas, SQLAlchemy's mappers, the broker and its actors. CPython's collector
scans every tracked object it holds in a full (generation 2) collection, which on an
API worker took 90-215 ms under load (``docs/benchmarks.md``): every request
of that process waited behind it. :func:`settle` collects once and then freezes what
survives (``gc.freeze``): those objects move to a permanent generation that no later
collection scans, so full collections cost what requests leave behind, not the whole
process. Called once the process is built, before it serves (``wharfd.wsgi``, the
worker and scheduler processes, ``wharf serve``, ``wharf feed``); under gunicorn with
``preload_app`` that is once, in the master, and its workers inherit the frozen heap.

The price: a frozen object that later becomes cyclic garbage is never freed. Only what is
alive at :func:`settle` is frozen, once, so that leak is bounded by the start-up heap."""
from __future__ import annotations

import gc


def settle() -> int:
    """Collect, then freeze every object that survives; returns how many are frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
