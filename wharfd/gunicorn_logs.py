"""gunicorn's own logs (its error log, and the access log when enabled) written with
Wharf's formatter (:mod:`wharfd.logs`): same destinations, levels and access line format
as gunicorn's configuration says, as JSON lines or text like every other line.

``wharfd/gunicorn_conf.py`` names :class:`GunicornLogger` as ``logger_class``; ``wharf api``
sets it too under an operator's own config file that leaves gunicorn's default logger.
(A module of its own: only ``wharf api`` imports gunicorn.)
"""
from __future__ import annotations

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
