"""``wharf-client watch``: the live change feed (``GET /api/feed`` as Server-Sent Events),
one line per event, until interrupted.

Each connection starts with a one-use ticket (``POST /api/feed-tickets``: a token is never
put in a URL). A dropped connection (the feed process restarted, a proxy's timeout, a slow
consumer closed) is re-opened with a new ticket and the last cursor seen
(``Last-Event-ID``): the server replays what was missed within its window, or says
``resync`` (then re-read what you show). Pings (SSE comments) keep an idle connection
alive and are not printed.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from wharfclient.http import WharfClient

#: Seconds between reconnections after a dropped stream (doubling up to the last).
BACKOFF = (0.5, 1.0, 2.0, 5.0)


def subscription(spaces: list[str], units: list[str], operations: bool,
                 worktrees: bool) -> dict[str, str]:
    params: dict[str, str] = {}
    if spaces:
        params["spaces"] = ",".join(spaces)
    if units:
        params["units"] = ",".join(units)
    if operations:
        params["operations"] = "mine"
    if worktrees:
        params["worktrees"] = "1"
    return params


def events(lines: Iterator[str]) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """(id, event) of each SSE message in ``lines`` (comments skipped)."""
    data: list[str] = []
    event_id: str | None = None
    for line in lines:
        if line == "":
            if data:
                yield event_id, json.loads("\n".join(data))
            data, event_id = [], None
        elif line.startswith(":"):
            continue  # a ping
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            elif name == "id":
                event_id = value


def watch(client: WharfClient, params: dict[str, str], emit: Callable[[dict[str, Any]], None],
          *, cursor: str | None = None, max_events: int | None = None,
          note: Callable[[str], None] | None = None) -> int:
    """Follow the feed, calling ``emit`` per event, reconnecting with the last cursor; the
    number of events emitted once ``max_events`` is reached (tests), else only on Ctrl-C
    (KeyboardInterrupt propagates)."""
    seen, failures = 0, 0
    while True:
        ticket = client.json("POST", "/api/feed-tickets")["ticket"]
        headers = {"Accept": "text/event-stream"}
        if cursor:
            headers["Last-Event-ID"] = cursor
        try:
            with client.http.stream("GET", "/api/feed", params={**params, "ticket": ticket},
                                    headers=headers,
                                    timeout=httpx.Timeout(None, connect=10)) as resp:
                if resp.status_code != 200:
                    resp.read()
                    raise httpx.HTTPStatusError(f"HTTP {resp.status_code}: {resp.text[:200]}",
                                                request=resp.request, response=resp)
                failures = 0
                for event_id, event in events(resp.iter_lines()):
                    cursor = event_id or event.get("cursor") or cursor
                    emit(event)
                    seen += 1
                    if max_events is not None and seen >= max_events:
                        return seen
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code < 500 and exc.response.status_code != 429:
                raise
        except httpx.TransportError:
            pass
        delay = BACKOFF[min(failures, len(BACKOFF) - 1)]
        failures += 1
        if note is not None:
            note(f"feed connection lost; reconnecting in {delay:g} s"
                 + (f" from {cursor}" if cursor else ""))
        time.sleep(delay)


def line(event: dict[str, Any]) -> str:
    """One event as a line: its type, then its fields (``cursor`` last)."""
    fields = " ".join(f"{k}={v}" for k, v in event.items() if k not in ("type", "cursor"))
    return f"{event.get('type')} {fields}".rstrip() + f"  [{event.get('cursor')}]"
