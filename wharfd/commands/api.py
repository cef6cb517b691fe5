"""``wharf api``: the production API under gunicorn, with Wharf's hooks chained before any
configured ones."""
from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from wharf.infra.settings import ConfigError, Settings
from wharfd.commands.preflight import check_blob_store, settings_from_args

if TYPE_CHECKING:
    from gunicorn.app.wsgiapp import WSGIApplication

WSGI_APP = "wharfd.wsgi:application"  # gunicorn's app (also in wharfd/gunicorn_conf.py)


def cmd_api(args: argparse.Namespace) -> int:
    """Production API: gunicorn with the packaged settings (wharfd/gunicorn_conf.py) or the
    file named by WHARF_GUNICORN_CONF."""
    settings = settings_from_args(args)
    from importlib.util import find_spec

    from wharfd.tracing import exporters_from
    exporters_from(os.environ)  # a bad OTEL_TRACES_EXPORTER fails here, not in each worker
    check_blob_store(settings)
    host = f"[{settings.host}]" if ":" in settings.host and not settings.host.startswith("[") \
        else settings.host
    argv = ["gunicorn", WSGI_APP, "--bind", f"{host}:{settings.port}"]
    conf = os.environ.get("WHARF_GUNICORN_CONF")
    if conf:
        if not os.path.isfile(conf):
            raise ConfigError(f"WHARF_GUNICORN_CONF={conf!r}: no such file")
    else:
        spec = find_spec("wharfd.gunicorn_conf")
        assert spec is not None and spec.origin is not None  # packaged with Wharf
        conf = spec.origin
    argv += ["--config", conf]
    # Explicit options win over the config file.
    if args.workers is not None:
        argv += ["--workers", str(args.workers)]
    if args.threads is not None:
        argv += ["--threads", str(args.threads)]
    sys.argv = argv
    api_application_class()("%(prog)s [OPTIONS] [APP_MODULE]").run()
    return 0


def api_application_class() -> type[WSGIApplication]:
    from gunicorn.app.wsgiapp import WSGIApplication

    class ApiApplication(WSGIApplication):
        """gunicorn with Wharf's ``pre_request`` hook chained before any configured one:
        ``Expect: 100-continue`` is answered on the first body read (api.expect_continue),
        so a refused upload is refused before the client sends the body.

        Whatever the config file (the packaged one, an operator's own, ``preload_app``):
        long-polls may take three quarters of each worker's ``threads`` unless
        ``WHARF_LONG_POLL_MAX_WAITERS`` says otherwise, and a limit that would take every
        thread is a configuration error."""

        _derived_waiters = False  # WHARF_LONG_POLL_MAX_WAITERS is ours (re-derived on HUP)
        _config_error: ConfigError | None = None

        def do_load_config(self) -> None:
            # gunicorn turns any error here into "Error: ..." and exit 1; ours is exit 2.
            self._config_error = None
            super().do_load_config()
            if self._config_error is not None:
                raise self._config_error

        def load_config(self) -> None:
            super().load_config()
            from api.expect_continue import defer_100_continue
            configured = self.cfg.pre_request

            def pre_request(worker: Any, req: Any) -> None:
                defer_100_continue(worker, req)
                configured(worker, req)

            self.cfg.set("pre_request", pre_request)
            self._chain_heartbeat_hooks()
            from wharfd.gunicorn_logs import LOGGER_CLASS
            if self.cfg.settings["logger_class"].get() == "gunicorn.glogging.Logger" \
                    and self.cfg.settings["statsd_host"].get() is None:
                # an operator's own config file: gunicorn's lines in Wharf's format too
                self.cfg.set("logger_class", LOGGER_CLASS)
            try:
                self._limit_long_polls(self.cfg.threads)
            except ConfigError as exc:
                self._config_error = exc

        def _chain_heartbeat_hooks(self) -> None:
            """Each worker's heartbeat (``wharfd.wsgi``), before any configured hook."""
            configured_init = self.cfg.post_worker_init
            configured_exit = self.cfg.worker_exit

            def post_worker_init(worker: Any) -> None:
                from wharfd.wsgi import start_heartbeat
                start_heartbeat(worker)
                configured_init(worker)

            def worker_exit(server: Any, worker: Any) -> None:
                from wharfd.wsgi import stop_heartbeat
                stop_heartbeat(worker)
                configured_exit(server, worker)

            self.cfg.set("post_worker_init", post_worker_init)
            self.cfg.set("worker_exit", worker_exit)

        def _limit_long_polls(self, threads: int) -> None:
            from wharfd.serving import long_poll_waiters
            name = "WHARF_LONG_POLL_MAX_WAITERS"
            ours = self._derived_waiters or not (os.environ.get(name) or "").strip()
            configured = None if ours else Settings.from_env().long_poll_max_waiters
            waiters = long_poll_waiters(configured, threads, "gunicorn's threads")
            if configured is None:
                os.environ[name] = str(waiters)  # the workers inherit it
                self._derived_waiters = True

    return ApiApplication
