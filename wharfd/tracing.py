"""Tracing setup for each process (OpenTelemetry SDK, exporters, instrumentations).

Rules:
- Configured by the standard ``OTEL_*`` variables only. ``OTEL_TRACES_EXPORTER`` turns it
  on: ``otlp`` (OTLP over http/protobuf, ``OTEL_EXPORTER_OTLP_ENDPOINT`` and friends) and/or
  ``console`` (comma-separated); unset, empty or ``none``: off, and nothing is installed
  (the hot path then costs a flag test; ``trace_context`` columns stay NULL). Any other
  value is a configuration error.
- ``OTEL_SERVICE_NAME`` defaults per process role: wharf-api, wharf-worker,
  wharf-scheduler, wharf-serve. ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER``
  and the exporter's own variables are read by the SDK as usual.
- Without ``OTEL_TRACES_SAMPLER``: parent-based, and a span of kind client with no parent
  (a query, Redis command or S3 call of a background loop with no request, message or
  operation around it: the relay's and the broker's polling) is not recorded.
- Instrumented: Falcon (``falcon.App`` is replaced by a traced subclass; ``api.contract``
  builds its app on top of whatever ``falcon.App`` is when the app is created), the
  product and unit store engines (SQLAlchemy, per engine: :func:`instrument_database`),
  Redis and botocore (their client classes), and Wharf's own spans
  (``wharf.observability.tracing``).
- :func:`setup` is called once per process, before its app or components are built:
  each gunicorn worker (``wharfd.wsgi``), each ``wharf worker`` child, ``wharf
  scheduler`` and ``wharf serve``.
"""
from __future__ import annotations

import os
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wharf.infra.settings import ConfigError
from wharf.observability import tracing

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from sqlalchemy.engine import Engine

    from storage.db import Database

#: ``OTEL_SERVICE_NAME``'s default per process role.
SERVICE_NAMES = {"api": "wharf-api", "worker": "wharf-worker",
                 "scheduler": "wharf-scheduler", "serve": "wharf-serve"}
EXPORTERS = ("otlp", "console")

_provider: TracerProvider | None = None
_exporters: set[int] = set()  # id() of the exporters already given a span processor
_named: set[str] = set()  # the OTEL_TRACES_EXPORTER exporters already installed
_engines: weakref.WeakSet[Engine] = weakref.WeakSet()  # engines already traced


#: Requests not traced unless ``OTEL_PYTHON_FALCON_EXCLUDED_URLS`` (or the general
#: ``OTEL_PYTHON_EXCLUDED_URLS``) says otherwise: health probes and metric scrapes.
UNTRACED_PATHS = "/healthz,/readyz,/metrics"
EXCLUDED_URLS_VARIABLES = ("OTEL_PYTHON_FALCON_EXCLUDED_URLS", "OTEL_PYTHON_EXCLUDED_URLS")


def exporters_from(environ: Mapping[str, str]) -> list[str]:
    """The exporters ``OTEL_TRACES_EXPORTER`` names (empty: tracing is off)."""
    raw = (environ.get("OTEL_TRACES_EXPORTER") or "").strip().lower()
    names = [n.strip() for n in raw.split(",") if n.strip() and n.strip() != "none"]
    for name in names:
        if name not in EXPORTERS:
            raise ConfigError(f"OTEL_TRACES_EXPORTER={raw!r}: expected otlp, console or none "
                              "(comma-separated)")
    return list(dict.fromkeys(names))


def setup(role: str, *, environ: Mapping[str, str] | None = None,
          exporter: SpanExporter | None = None) -> bool:
    """Turn tracing on for this process if ``OTEL_TRACES_EXPORTER`` asks for it (or an
    ``exporter`` is given: tests); returns whether it is on. Call it before the process
    builds its app and components; calling it again adds nothing twice."""
    env = os.environ if environ is None else environ
    names = exporters_from(env)
    if not names and exporter is None:
        return tracing.enabled()
    if environ is None and not any(os.environ.get(k) for k in EXCLUDED_URLS_VARIABLES):
        # Probes and scrapes are no requests worth a trace each (one every few seconds
        # per process); the standard variables override this.
        os.environ["OTEL_PYTHON_FALCON_EXCLUDED_URLS"] = UNTRACED_PATHS
    provider = _install_provider(role, env)
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    for name in names:
        if name not in _named:
            _named.add(name)
            provider.add_span_processor(BatchSpanProcessor(_exporter(name)))
    if exporter is not None and id(exporter) not in _exporters:
        _exporters.add(id(exporter))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    _instrument()
    tracing.enable(True)
    return True


def _exporter(name: str) -> SpanExporter:
    if name == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        return OTLPSpanExporter()
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter
    return ConsoleSpanExporter()


def _install_provider(role: str, env: Mapping[str, str]) -> TracerProvider:
    global _provider
    if _provider is not None:
        return _provider
    from opentelemetry import trace
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    service = (env.get("OTEL_SERVICE_NAME") or "").strip() or SERVICE_NAMES.get(
        role, f"wharf-{role}")
    sampler = None if (env.get("OTEL_TRACES_SAMPLER") or "").strip() else _default_sampler()
    _provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service}),
                               sampler=sampler)
    trace.set_tracer_provider(_provider)
    return _provider


def _default_sampler() -> Any:
    from opentelemetry.sdk.trace.sampling import (
        ALWAYS_ON,
        Decision,
        ParentBased,
        Sampler,
        SamplingResult,
    )
    from opentelemetry.trace import SpanKind

    class NoOrphanClientSpans(Sampler):
        """A root span is recorded unless it is a client call (background polling)."""

        def should_sample(self, parent_context: Any, trace_id: int, name: str,
                          kind: SpanKind | None = None, attributes: Any = None,
                          links: Sequence[Any] | None = None,
                          trace_state: Any = None) -> SamplingResult:
            if kind == SpanKind.CLIENT:
                return SamplingResult(Decision.DROP)
            return ALWAYS_ON.should_sample(parent_context, trace_id, name, kind,
                                           attributes, links, trace_state)

        def get_description(self) -> str:
            return "NoOrphanClientSpans"

    return ParentBased(root=NoOrphanClientSpans())


def _instrument() -> None:
    """Falcon, Redis and botocore, once per process (each is a no-op when already on)."""
    # ``api.contract.App`` subclasses Falcon's own (generic) App, which the instrumentation
    # replaces by a traced, non-generic subclass: import it first, whatever the process
    # imported so far; ``api.contract.new_app`` stacks the traced class on top.
    from opentelemetry.instrumentation.botocore import BotocoreInstrumentor
    from opentelemetry.instrumentation.falcon import FalconInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor

    import api.contract  # noqa: F401
    for instrumentor in _instrumentors(FalconInstrumentor, RedisInstrumentor,
                                       BotocoreInstrumentor):
        if not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument()


class StatusAsText:
    """Falcon middleware: a response status set as a number (``resp.status = 202``, as
    Falcon 4 allows and Wharf's problem responses do) becomes its ``"202 Accepted"`` text.
    OpenTelemetry's Falcon middleware reads the status as that text (an int fails the
    request with a 500); added last, this one's ``process_response`` runs before it."""

    def process_response(self, req: Any, resp: Any, resource: Any,
                         req_succeeded: bool) -> None:
        if not isinstance(resp.status, str):
            import falcon
            resp.status = falcon.code_to_http_status(resp.status)


def instrument_app(app: Any) -> None:
    """What the Falcon instrumentation needs of an app it traces (nothing while off)."""
    if tracing.enabled():
        app.add_middleware(StatusAsText())


def _instrumentors(*classes: Any) -> list[Any]:
    return [cls() for cls in classes]


def instrument_database(db: Database) -> None:
    """Trace the statements of ``db``'s engines (each engine once); nothing while off."""
    if not tracing.enabled():
        return
    from opentelemetry import trace
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
    from opentelemetry.metrics import get_meter
    tracer = trace.get_tracer("opentelemetry.instrumentation.sqlalchemy")
    usage = get_meter("opentelemetry.instrumentation.sqlalchemy").create_up_down_counter(
        "db.client.connections.usage", unit="connections")
    for engine in {id(e): e for e in (db.write_engine, db.read_engine)}.values():
        if engine not in _engines:
            _engines.add(engine)
            # Its listeners live as long as the engine (SQLAlchemy's event registry).
            EngineTracer(tracer, engine, usage)  # type: ignore[no-untyped-call]


def teardown() -> None:
    """Turn tracing off again in this process (tests): Wharf's spans and stored contexts
    stop, the instrumentations are removed. The tracer provider stays (OpenTelemetry
    allows one per process); a later :func:`setup` reuses it."""
    tracing.enable(False)
    from opentelemetry.instrumentation.botocore import BotocoreInstrumentor
    from opentelemetry.instrumentation.falcon import FalconInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
    for instrumentor in _instrumentors(FalconInstrumentor, RedisInstrumentor,
                                       BotocoreInstrumentor):
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
    EngineTracer.remove_all_event_listeners()  # type: ignore[no-untyped-call]
    _engines.clear()
    if _provider is not None:
        _provider.force_flush()


def shutdown() -> None:
    """Export what is buffered (the process is about to exit)."""
    if _provider is not None:
        _provider.force_flush()
