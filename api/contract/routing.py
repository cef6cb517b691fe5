"""The routes an :class:`App` mounts: the app records each route with its responders (HEAD
wherever GET, :func:`with_head`), and :func:`auth_modes` reads their ``auth``."""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, NamedTuple

import falcon
import falcon.routing

from api.contract.metadata import Auth, operation_of


class Route(NamedTuple):
    """A mounted route: its resource and responders by HTTP method."""

    resource: object
    responders: dict[str, Callable[..., Any]]


def _head_of(get: Callable[..., Any]) -> Callable[..., Any]:
    """HEAD answered by the GET responder ``get``: the same status and headers (Falcon
    drops the body of a HEAD answer and keeps the ``Content-Length`` of the body it
    rendered), so it has no effect a GET would not have. A stream the GET opened is closed
    unread (content routes declare their own ``on_head``, which opens none)."""

    @functools.wraps(get)  # the GET's contract (``__contract__``): its auth mode
    def on_head(req: falcon.Request, resp: falcon.Response, **params: Any) -> None:
        get(req, resp, **params)
        stream = resp.stream
        if stream is not None:
            resp.stream = None
            close = getattr(stream, "close", None)
            if close is not None:
                close()

    on_head.__implicit_head__ = True  # type: ignore[attr-defined]
    return on_head


def is_implicit_head(responder: Callable[..., Any]) -> bool:
    """A HEAD responder added by :func:`with_head` (the document does not list it)."""
    return bool(getattr(responder, "__implicit_head__", False))


def with_head(methods: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """A route's responders by method, with HEAD wherever GET is answered: the resource's
    own ``on_head`` if it has one, else its GET (:func:`_head_of`). The one place HEAD is
    added: Falcon's router (:class:`_Router`) and :attr:`App.routes` both take it."""
    out = dict(methods)
    if "GET" in out and "HEAD" not in out:
        out["HEAD"] = _head_of(out["GET"])
    return out


class _Router(falcon.routing.CompiledRouter):
    """Falcon's router, mapping HEAD wherever GET is mapped (:func:`with_head`)."""

    def map_http_methods(self, resource: object, **kwargs: Any) -> Any:
        return with_head(super().map_http_methods(resource, **kwargs))


class App(falcon.App[falcon.Request, falcon.Response]):
    """The WSGI app (Falcon's own request and response types) that records what it mounts:
    ``add_route`` also keeps the resource and its responders, mapped the way Falcon maps
    them (``on_<method>``, or ``on_<method>_<suffix>`` with ``suffix=``), HEAD included
    wherever GET is (:func:`with_head`). The document and the auth middleware read
    :attr:`routes`, not Falcon's router."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._routes: dict[str, Route] = {}
        kwargs.setdefault("router", _Router())
        super().__init__(*args, **kwargs)

    def add_route(self, uri_template: str, resource: object, **kwargs: Any) -> None:
        super().add_route(uri_template, resource, **kwargs)
        responders = falcon.routing.map_http_methods(resource, suffix=kwargs.get("suffix"))
        self._routes[uri_template] = Route(resource, with_head(responders))

    @property
    def routes(self) -> Mapping[str, Route]:
        """Every mounted route by URI template (a template mounted again: the last)."""
        return MappingProxyType(self._routes)


#: ``falcon.App`` as this module found it (``App``'s base).
_FALCON_APP = falcon.App


@cache
def _on_top_of(base: type[Any]) -> type[App]:
    return type("App", (App, base), {"__doc__": App.__doc__})


def new_app() -> App:
    """An :class:`App`. When ``falcon.App`` was replaced since this module was imported --
    OpenTelemetry's Falcon instrumentation replaces it with a traced subclass
    (``wharfd.tracing``) -- the app is built on top of the replacement as well, so the
    instrumentation applies whatever the import order."""
    current = falcon.App
    if current is _FALCON_APP or issubclass(App, current):
        return App()
    return _on_top_of(current)()


def routes(app: App) -> dict[str, Route]:
    return dict(app.routes)


def auth_modes(app: App) -> dict[str, dict[str, Auth | None]]:
    """The declared ``auth`` of every mounted responder: URI template -> HTTP method ->
    mode (None: a responder without contract metadata)."""
    out: dict[str, dict[str, Auth | None]] = {}
    for template, route in app.routes.items():
        modes: dict[str, Auth | None] = {}
        for method, responder in route.responders.items():
            meta = operation_of(responder)
            modes[method] = meta.auth if meta is not None else None
        out[template] = modes
    return out
