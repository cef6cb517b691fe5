"""The operator dashboard: ``GET /ops`` (HTML), ``GET /api/ops/dashboard`` (JSON) and the
page's own script and stylesheet (``/ops/dashboard.js``, ``/ops/dashboard.css``).

Only operators (``WHARF_OPERATORS``, :func:`wharf.infra.operators.require_operator`) see its
data: everyone else, anonymous visitors included, gets 404 on ``GET`` (problem+json from
the JSON endpoint, an HTML page from ``/ops``, with a login form for anonymous visitors).
Both answers are ``Cache-Control: no-store``. What is *not* hidden: that the dashboard
exists — the routes are in the OpenAPI document, other methods get the usual 405, and
the script and stylesheet (static, no data; the login form needs the script) are public.
Retry and cancel are the existing ``POST /api/operations/{id}/retry|cancel`` (operators
may act on any user's operation).
"""
from __future__ import annotations

from importlib import resources

import falcon

from api import contract, dashboard_page
from api.schemas.dashboard import Dashboard
from storage.db import Database
from wharf.dashboard import service as dashboard
from wharf.infra.errors import NotFound
from wharf.infra.operators import require_operator
from wharf.infra.settings import Settings

HTML = "text/html; charset=utf-8"
NO_STORE = "no-store"


def _page_headers(resp: falcon.Response) -> None:
    resp.set_header("Content-Security-Policy", dashboard_page.CSP)
    resp.set_header("X-Content-Type-Options", "nosniff")
    resp.set_header("Referrer-Policy", "no-referrer")
    resp.cache_control = [NO_STORE]


class DashboardPage:
    def __init__(self, settings: Settings, cache: dashboard.SnapshotCache) -> None:
        self.settings, self.cache = settings, cache

    @contract.op(operation_id="dashboardPage", summary="The operator dashboard (HTML)",
                 tags=["dashboard"],
                 description="Server-rendered HTML of every panel, refreshed by its own "
                             "script from `GET /api/ops/dashboard`. Operators only "
                             "(WHARF_OPERATORS): anyone else gets a 404 page (with a login "
                             "form for anonymous visitors).",
                 responses={200: contract.Answer(schema={"type": "string"},
                                                 content_type="text/html",
                                                 description="the dashboard"),
                            404: contract.Answer(schema={"type": "string"},
                                                 content_type="text/html",
                                                 description="not an operator")},
                 auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        _page_headers(resp)
        resp.content_type = HTML
        ctx = req.context.ctx
        try:
            require_operator(self.settings, ctx)
        except NotFound:
            resp.status = falcon.HTTP_404
            resp.text = dashboard_page.not_found(login=not ctx.principal.is_user)
            return
        resp.text = dashboard_page.page(self.cache.get(),
                                        ctx.principal.username)


class DashboardData:
    def __init__(self, settings: Settings, cache: dashboard.SnapshotCache) -> None:
        self.settings, self.cache = settings, cache

    @contract.op(operation_id="getDashboard", summary="The operator dashboard's numbers",
                 tags=["dashboard"],
                 description="Operations by status and kind (open ones up to a cap, "
                             "finished ones over the last 24 h), throughput and failures per "
                             "minute over the last hour, queue lag, the slowest, most retried and "
                             "failed recent operations with their attempts, deletion jobs "
                             "failing for more than a day, sweeps, and processes seen in "
                             "the last 5 minutes. Operators only (WHARF_OPERATORS): 404 "
                             "for anyone else.",
                 responses={200: Dashboard}, problems=(404,), auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        require_operator(self.settings, req.context.ctx)
        resp.cache_control = [NO_STORE]
        resp.media = self.cache.get()


class _StaticFile:
    """A file of ``api/static`` (read once), for anyone: it holds no data."""

    name = ""
    content_type = ""

    def __init__(self) -> None:
        self.body = resources.files("api").joinpath("static", self.name).read_bytes()

    def _serve(self, resp: falcon.Response) -> None:
        resp.data = self.body
        resp.content_type = self.content_type
        resp.set_header("X-Content-Type-Options", "nosniff")
        resp.cache_control = ["no-cache"]


class DashboardScript(_StaticFile):
    name, content_type = "dashboard.js", "text/javascript"

    @contract.op(operation_id="dashboardScript", summary="The dashboard page's script",
                 tags=["dashboard"],
                 responses={200: contract.Answer(schema={"type": "string"},
                                                 content_type="text/javascript",
                                                 description="the script")},
                 auth="none")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._serve(resp)


class DashboardStyle(_StaticFile):
    name, content_type = "dashboard.css", "text/css"

    @contract.op(operation_id="dashboardStyle", summary="The dashboard page's stylesheet",
                 tags=["dashboard"],
                 responses={200: contract.Answer(schema={"type": "string"},
                                                 content_type="text/css",
                                                 description="the stylesheet")},
                 auth="none")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        self._serve(resp)


class Favicon:
    """``/favicon.ico``: no icon, and no 404 either. Browsers ask for it on their own,
    whatever the page declares (the dashboard declares an empty one), and a 404 there is a
    failed request in every browser's network log."""

    @contract.op(operation_id="favicon", summary="No icon (204)", tags=["dashboard"],
                 responses={204: contract.Answer(None, "No icon.")}, auth="none")
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.status = falcon.HTTP_204
        resp.cache_control = ["public", "max-age=86400"]


def mount(app: contract.App, db: Database, settings: Settings) -> None:
    cache = dashboard.SnapshotCache(db, settings)  # shared: one snapshot per 2 s
    app.add_route("/ops", DashboardPage(settings, cache))
    app.add_route("/api/ops/dashboard", DashboardData(settings, cache))
    app.add_route("/ops/dashboard.js", DashboardScript())
    app.add_route("/ops/dashboard.css", DashboardStyle())
    app.add_route("/favicon.ico", Favicon())
