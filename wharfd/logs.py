"""Logging of every Wharf process: one handler, one formatter, JSON lines or text.

Rules:
- Call sites do not change: they keep ``logging.getLogger(name)``. :func:`configure`
  puts ONE stderr handler on the root logger whose formatter is structlog's
  ``ProcessorFormatter``, so Wharf's loggers and the libraries' (dramatiq, alembic,
  waitress, SQLAlchemy) write through the same chain; gunicorn's own error and access
  logs get the same formatter through ``wharfd.gunicorn_logs.GunicornLogger``
  (``logger_class`` in ``wharfd/gunicorn_conf.py``, and set by ``wharf api`` under any
  other config file).
  ``structlog.get_logger()`` works too and ends in the same handler.
- ``WHARF_LOG_FORMAT``: ``json`` (one object per line: ``timestamp`` ISO-8601 UTC,
  ``level``, ``logger``, ``message``, ``exception`` -- the whole trace as one string --,
  then the bound context of :mod:`wharf.observability.logctx` and any ``extra=`` fields), ``text``
  (structlog's console renderer, no colours) or ``auto``: :data:`JSON_COMMANDS` write
  JSON (they run under a supervisor that ships logs), the rest text (``wharf serve`` is
  run by a person; the short commands are read in a terminal).
- ``WHARF_LOG_LEVEL`` is checked by ``wharf``'s ``main``; a record below it is dropped by
  ``logging`` before any formatting (structlog's processors run in the formatter only).
"""
from __future__ import annotations

import json
import logging
import os
import re
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from wharf.infra.settings import read_setting
from wharf.observability import logctx
from wharfd import serving
from wharfd.structlog_import import structlog

if TYPE_CHECKING:
    from structlog.typing import EventDict, Processor, WrappedLogger

#: Commands that write JSON lines under ``WHARF_LOG_FORMAT=auto``.
JSON_COMMANDS = frozenset({"api", "worker", "scheduler", "feed"})

_configured: dict[str, str] = {}  # the format in force in this process ("format")


def resolve(command: str, env: dict[str, str] | None = None) -> str:
    """``json`` or ``text``: ``WHARF_LOG_FORMAT`` with ``auto`` decided for ``command``.
    Raises ``ConfigError`` for a value that is none of them."""
    chosen = str(read_setting("log_format", env))
    if chosen == "auto":
        return "json" if command in JSON_COMMANDS else "text"
    return chosen


def _shared() -> list[Processor]:
    """What every line gets, whoever logged it (a ``logging`` record or structlog)."""
    return [
        structlog.contextvars.merge_contextvars,  # anything bound with structlog's own API
        logctx.add_context,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.ExtraAdder(),
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
    ]


#: The keys a JSON line starts with (the context and extra fields follow).
FIRST_KEYS = ("timestamp", "level", "logger", "message")


def _first_keys_first(logger: WrappedLogger, method_name: str,
                      event_dict: EventDict) -> EventDict:
    """Reading order for people tailing JSON: when, how bad, who, what; then the rest."""
    ordered = {key: event_dict.pop(key) for key in FIRST_KEYS if key in event_dict}
    ordered.update(event_dict)
    return ordered


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _escape_controls(logger: WrappedLogger, method_name: str,
                     event_dict: EventDict) -> EventDict:
    """Text lines: a message is one line, whatever it carries (a client's header with a
    newline in it cannot forge a line of its own); JSON escapes by itself."""
    for key, value in event_dict.items():
        if key != "exc_info" and isinstance(value, str) and _CONTROL.search(value):
            event_dict[key] = _CONTROL.sub(
                lambda m: m.group().encode("unicode_escape").decode("ascii"), value)
    return event_dict


def formatter(fmt: str) -> structlog.stdlib.ProcessorFormatter:
    """The ``logging.Formatter`` of every handler: ``fmt`` is ``json`` or ``text``."""
    renderer: list[Processor]
    if fmt == "json":
        renderer = [structlog.processors.format_exc_info,
                    structlog.processors.EventRenamer("message"),
                    _first_keys_first,
                    structlog.processors.JSONRenderer()]
    else:
        renderer = [_escape_controls, structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback)]
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared(),
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *renderer])


#: What every ``LogRecord`` holds: anything else on a record came with ``extra=`` (as
#: structlog's ``ExtraAdder`` decides).
_RECORD_KEYS = frozenset(logging.LogRecord("name", 0, "pathname", 0, "msg", (), None)
                         .__dict__)


class FastJsonFormatter(logging.Formatter):
    """The JSON line :func:`formatter` writes (first keys, then the bound context of
    :mod:`wharf.observability.logctx`, then ``extra=`` fields), built without structlog's processor
    chain, for a logger whose records carry no exceptions and nothing bound with
    structlog's own context API: the access logs, one line per request (gunicorn's
    cost about 8 % of an API process's CPU under load, a quarter of it this chain;
    ``docs/benchmarks.md``; ``wharf serve``'s, :data:`wharfd.serving.access_log`). A record
    that does carry an exception goes through the full chain, so nothing is lost."""

    def __init__(self) -> None:
        super().__init__()
        self._full = formatter("json")

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info or record.stack_info:
            return self._full.format(record)
        event: dict[str, Any] = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).strftime(
                "%Y-%m-%dT%H:%M:%S.%fZ"),
            "level": record.levelname.lower(), "logger": record.name,
            "message": record.getMessage()}
        line = logctx.add_context(None, record.levelname.lower(), event)
        for key, value in record.__dict__.items():
            if key not in _RECORD_KEYS:
                line[key] = value
        return json.dumps(line, default=repr)


def configure(level: str, fmt: str, stream: TextIO | None = None) -> None:
    """Route every logger of this process through one handler on ``stream`` (stderr)
    writing ``fmt`` (``json`` or ``text``) at ``level`` and above. Idempotent: replaces
    the root's handlers (``logging.basicConfig`` and earlier calls)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter(fmt))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # ``wharf serve``'s line per request: in JSON, the same line without the chain
    access = logging.getLogger(serving.access_log.name)
    for old in list(access.handlers):
        access.removeHandler(old)
    access.propagate = fmt != "json"
    if fmt == "json":
        fast = logging.StreamHandler(stream or sys.stderr)
        fast.setFormatter(FastJsonFormatter())
        access.addHandler(fast)
    structlog.configure(
        processors=[structlog.stdlib.filter_by_level, *_shared(),
                    structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True)
    _configured["format"] = fmt


def configure_from_env(command: str) -> None:
    """:func:`configure` for a process started without ``wharf``'s ``main`` (a spawned
    ``wharf worker`` child): ``WHARF_LOG_LEVEL`` (the parent checked it) and
    ``WHARF_LOG_FORMAT`` decided for ``command``."""
    level = (os.environ.get("WHARF_LOG_LEVEL") or "INFO").strip().upper()
    configure("WARNING" if level == "WARN" else level, resolve(command))


def current_format() -> str:
    """The format :func:`configure` set in this process (``wharf api``'s otherwise)."""
    return _configured.get("format") or resolve("api")
