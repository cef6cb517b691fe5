"""gunicorn's own logs (its error log, and the access log when enabled) written with
Wharf's formatter (:mod:`wharfd.logs`): same destinations, levels and access line format
as gunicorn's configuration says, as JSON lines or text like every other line.

``wharfd/gunicorn_conf.py`` names :class:`GunicornLogger` as ``logger_class``; ``wharf api``
sets it too under an operator's own config file that leaves gunicorn's default logger.
(A module of its own: only ``wharf api`` imports gunicorn.)
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, MutableMapping
from datetime import timedelta
from typing import Any

from gunicorn.config import Config
from gunicorn.glogging import Logger

from wharfd import logs

#: The dotted name gunicorn's ``logger_class`` setting takes.
LOGGER_CLASS = "wharfd.gunicorn_logs.GunicornLogger"


class GunicornLogger(Logger):
    """gunicorn's logger with Wharf's formatter on every handler it sets up (at start and
    again on SIGHUP/USR1, which call ``setup``)."""

    def setup(self, cfg: Config) -> None:
        super().setup(cfg)
        chosen = logs.current_format()
        fmt = logs.formatter(chosen)
        # One line per request: JSON without structlog's chain (same keys, same order).
        access = logs.FastJsonFormatter() if chosen == "json" else fmt
        for log, log_fmt in ((self.error_log, fmt), (self.access_log, access)):
            for handler in log.handlers:
                handler.setFormatter(log_fmt)

    def atoms(self, resp: Any, req: Any, environ: MutableMapping[str, Any],
              request_time: timedelta) -> Any:
        """The atoms the access log format names, as gunicorn's own ``atoms`` would give
        them. gunicorn builds every atom for every request (each request and response
        header, every environ variable, a Basic-auth decode) and then escapes each: about
        half of the access log's cost, a few percent of an API process's CPU under load
        (``docs/benchmarks.md``). A format naming an atom not known here gets gunicorn's."""
        names = _format_atoms(self.cfg.access_log_format)
        if names is None:
            return super().atoms(resp, req, environ, request_time)
        found: dict[str, Any] = {}
        for name in names:
            build = _ATOMS.get(name)
            if build is not None:
                found[name] = build(self, resp, req, environ, request_time)
                continue
            m = _HEADER.fullmatch(name)
            assert m is not None  # _format_atoms knows every name
            header, where = m.group(1).lower(), m.group(2).lower()
            source = (req.headers if hasattr(req, "headers") else req) if where == "i" \
                else resp.headers if where == "o" else environ
            value = _last(source, header)
            if value is not _ABSENT:  # gunicorn's dict has no such key: ``-`` is written
                found[f"{{{header}}}{where}"] = value
        return found


# The atoms of gunicorn's ``access_log_format`` (``glogging.Logger.atoms``), one at a time.
_Atom = Callable[[Logger, Any, Any, MutableMapping[str, Any], timedelta], Any]


def _status(resp: Any) -> Any:
    status = resp.status
    return status.split(None, 1)[0] if isinstance(status, str) else status


_ATOMS: dict[str, _Atom] = {
    "h": lambda log, resp, req, env, t: env.get("REMOTE_ADDR", "-"),
    "l": lambda log, resp, req, env, t: "-",
    "t": lambda log, resp, req, env, t: log.now(),
    "r": lambda log, resp, req, env, t: (
        f"{env['REQUEST_METHOD']} {env['RAW_URI']} {env['SERVER_PROTOCOL']}"),
    "s": lambda log, resp, req, env, t: _status(resp),
    "m": lambda log, resp, req, env, t: env.get("REQUEST_METHOD"),
    "U": lambda log, resp, req, env, t: env.get("PATH_INFO"),
    "q": lambda log, resp, req, env, t: env.get("QUERY_STRING"),
    "H": lambda log, resp, req, env, t: env.get("SERVER_PROTOCOL"),
    "b": lambda log, resp, req, env, t: (
        str(resp.sent) if getattr(resp, "sent", None) is not None else "-"),
    "B": lambda log, resp, req, env, t: getattr(resp, "sent", None),
    "f": lambda log, resp, req, env, t: env.get("HTTP_REFERER", "-"),
    "a": lambda log, resp, req, env, t: env.get("HTTP_USER_AGENT", "-"),
    "T": lambda log, resp, req, env, t: t.seconds,
    "D": lambda log, resp, req, env, t: t.seconds * 1000000 + t.microseconds,
    "M": lambda log, resp, req, env, t: t.seconds * 1000 + int(t.microseconds / 1000),
    "L": lambda log, resp, req, env, t: f"{t.seconds}.{t.microseconds:06d}",
    "p": lambda log, resp, req, env, t: f"<{os.getpid()}>",
}
_NAME = re.compile(r"%\(([^)]*)\)")
_HEADER = re.compile(r"\{([^}]*)\}([ioeIOE])")
_ABSENT = object()
_formats: dict[str, tuple[str, ...] | None] = {}


def _format_atoms(fmt: str) -> tuple[str, ...] | None:
    """The atoms ``fmt`` names (None: one not built here, such as ``u``)."""
    if fmt not in _formats:
        names = tuple(dict.fromkeys(_NAME.findall(fmt)))
        known = all(n in _ATOMS or _HEADER.fullmatch(n) for n in names)
        _formats[fmt] = names if known else None
    return _formats[fmt]


def _last(items: Any, name: str) -> Any:
    """The last value of ``name`` (lower case) among headers or environ variables, as
    gunicorn's atoms dict keeps it; ``_ABSENT`` when there is none."""
    pairs: Iterable[tuple[str, Any]] = items.items() if hasattr(items, "items") else items
    found: Any = _ABSENT
    for key, value in pairs:
        if key.lower() == name:
            found = value
    return found
