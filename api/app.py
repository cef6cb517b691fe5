"""``create_app(settings, ...)``: the Falcon WSGI application with its collaborators."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from api import contract, errors
from api.compression import CompressionMiddleware
from api.contract import App
from api.middleware import AuthMiddleware, BodyLimitMiddleware, RequestIdMiddleware
from api.refusals import RefusedWriteMiddleware
from api.resources import external_login, spaces, system
from api.resources import identity as identity_res
from api.resources import passwords as password_res
from storage.blobstore import BlobStore
from storage.db import Database
from storage.unitstore import UnitStore
from wharf.identity.external import ExternalLogin
from wharf.identity.service import Identity
from wharf.infra.settings import Settings
from wharf.observability.metrics import DatabaseCollector, Dependencies
from wharf.operations.notify import LocalNotifier
from wharf.operations.service import Operations


def create_app(settings: Settings, db: Database, *, identity: Identity | None = None,
               dependency_checks: dict[str, Callable[[], None]] | None = None,
               operation_kinds: tuple[str, ...] = (),
               operations: Operations | None = None, unitstore: UnitStore | None = None,
               notifier: LocalNotifier | None = None, blob_store: BlobStore | None = None,
               metrics: bool = False,
               extra_routes: Callable[[App], None] | None = None) -> App:
    """Build the WSGI app. ``operations`` (the engine's submit/read service), ``unitstore``
    and ``notifier`` (long-poll wake-ups) enable the operation endpoints.
    ``dependency_checks`` (broker, blob store, ...) are reported by ``/healthz/details`` and
    ``/metrics``; readiness is the database alone."""
    identity = identity or Identity(settings)
    app = contract.new_app()  # traced when tracing instrumented Falcon (wharfd.tracing)
    app.req_options.strip_url_path_trailing_slash = True
    app.req_options.auto_parse_qs_csv = False
    app.resp_options.secure_cookies_by_default = settings.secure_cookies
    errors.install(app)
    contract.install(app)

    dependencies = Dependencies({"database": db.ping, **(dependency_checks or {})},
                                ttl=settings.metrics_cache_seconds)
    app.add_route("/healthz", system.Health())
    app.add_route("/healthz/details", system.HealthDetails(dependencies, settings.metrics_token))
    app.add_route("/readyz", system.Ready({"database": db.ping}))
    app.add_route("/api/openapi.json", system.OpenApi(app))
    from api.resources import dashboard as dashboard_res
    dashboard_res.mount(app, db, settings)  # the operator dashboard: /ops (WHARF_OPERATORS)
    if metrics:
        collector = DatabaseCollector(db, dependencies, kinds=operation_kinds,
                                      ttl=settings.metrics_cache_seconds)
        app.add_route("/metrics", system.Metrics(collector, settings.metrics_token))

    app.add_route("/api/users", identity_res.Users(db, identity))
    app.add_route("/api/login-sessions", identity_res.LoginSessions(db, identity, settings))
    app.add_route("/api/login-sessions/current",
                  identity_res.CurrentLoginSession(db, identity, settings))
    app.add_route("/api/login-sessions/{session_id}", identity_res.LoginSession(db))
    app.add_route("/api/me", identity_res.Me(db) if operations is None
                  else identity_res.MeWithDeletion(db, identity, settings, operations))
    app.add_route("/api/me/password", password_res.MyPassword(db, identity))
    app.add_route("/api/me/recovery-codes", password_res.MyRecoveryCodes(db, identity))
    app.add_route("/api/password-resets", password_res.PasswordResets(db, identity))
    app.add_route("/api/api-tokens", identity_res.ApiTokens(db, identity))
    app.add_route("/api/api-tokens/{token_id}", identity_res.ApiToken(db, identity))
    from api.resources import audit as audit_res
    audit_res.mount(app, db, settings)  # reading the audit trail (wharf.audittrail)
    from api.resources import device as device_res
    device_res.mount(app, db, settings)  # device login for the CLI (wharf.identity.device)
    external = ExternalLogin(identity)  # sign-in with OpenID Connect or GitHub
    app.add_route("/api/auth/{provider}/start",
                  external_login.ExternalLoginStart(db, external, settings))
    app.add_route("/api/auth/{provider}/callback",
                  external_login.ExternalLoginCallback(db, external, settings))
    app.add_route("/api/me/external-identities", external_login.MyExternalIdentities(db, external))
    app.add_route("/api/me/external-identities/{provider}",
                  external_login.MyExternalIdentity(db, external))
    from api.resources import feed as feed_res
    app.add_route("/api/feed-tickets", feed_res.FeedTickets(db))  # the live feed (api.feed)

    app.add_route("/api/spaces", spaces.Spaces(db))
    from api.resources import space_lifecycle as lifecycle
    app.add_route("/api/spaces/{space_id}", spaces.Space(db) if operations is None
                  else lifecycle.SpaceWithDeletion(db, operations))
    app.add_route("/api/spaces/{space_id}/nodes", spaces.SpaceRootNodes(db))
    app.add_route("/api/spaces/{space_id}/members", spaces.Members(db))
    app.add_route("/api/spaces/{space_id}/members/{user_id}", spaces.Member(db))
    app.add_route("/api/spaces/{space_id}/transfer", lifecycle.SpaceTransfer(db))
    app.add_route("/api/spaces/{space_id}/archive", lifecycle.SpaceArchive(db))
    app.add_route("/api/spaces/{space_id}/unarchive", lifecycle.SpaceUnarchive(db))
    app.add_route("/api/nodes", spaces.Nodes(db))
    app.add_route("/api/nodes/{node_id}", spaces.Node(db) if operations is None
                  else spaces.NodeWithPurge(db, operations))
    app.add_route("/api/nodes/{node_id}/children", spaces.NodeChildren(db))

    if operations is not None:
        from api.resources import operations as ops_res
        app.add_route("/api/operations", ops_res.OperationListing(db, operations))
        from api.resources.batch import OperationBatch
        app.add_route("/api/operations:batch", OperationBatch(operations))
        app.add_route("/api/operations/{operation_id}",
                      ops_res.OperationItem(db, operations, notifier))
        app.add_route("/api/operations/{operation_id}/attempts",
                      ops_res.OperationAttempts(db, operations))
        app.add_route("/api/operations/{operation_id}/retry", ops_res.OperationRetry(operations))
        app.add_route("/api/operations/{operation_id}/cancel",
                      ops_res.OperationCancel(operations))
        from api.resources import units as units_res
        app.add_route("/api/resources", units_res.Resources(operations))
        app.add_route("/api/resources/{resource_id}", units_res.ResourceItem(db))
        from api.resources import recent, sharing, trash
        app.add_route("/api/nodes/{node_id}/grants", sharing.Grants(db))
        app.add_route("/api/nodes/{node_id}/grants/{user_id}", sharing.Grant(db))
        app.add_route("/api/nodes/{node_id}/link-sharing", sharing.LinkSharing(db))
        app.add_route("/api/nodes/{node_id}/trash", trash.NodeTrash(db))
        app.add_route("/api/spaces/{space_id}/trash", trash.SpaceTrash(db))
        app.add_route("/api/trash-batches/{batch_id}/restore", trash.BatchRestore(db))
        app.add_route("/api/resources/{resource_id}/open", recent.ResourceOpen(db))
        app.add_route("/api/me/recent", recent.MyRecent(db))
        from api.resources import stars
        app.add_route("/api/me/stars", stars.MyStars(db))
        app.add_route("/api/me/stars/{resource_id}", stars.MyStar(db))
        from api.resources import search
        app.add_route("/api/search", search.Search(db))
        from api.resources import worktrees
        app.add_route("/api/worktrees", worktrees.Worktrees(db, operations))
        app.add_route("/api/worktrees/{worktree_id}", worktrees.WorktreeItem(db, unitstore))
        app.add_route("/api/worktrees/{worktree_id}/events", worktrees.WorktreeEvents(db))
        app.add_route("/api/worktrees/{worktree_id}/ready", worktrees.WorktreeReady(db))
        app.add_route("/api/worktrees/{worktree_id}/reopen", worktrees.WorktreeReopen(db))
        app.add_route("/api/worktrees/{worktree_id}/discard",
                      worktrees.WorktreeDiscard(operations))
        from api.resources import worktree_merge
        app.add_route("/api/worktrees/{worktree_id}/merge",
                      worktree_merge.WorktreeMerge(operations))
        if unitstore is not None:
            app.add_route("/api/worktrees/{worktree_id}/units/{unit_id}/merge-preview",
                          worktree_merge.UnitMergePreview(db, unitstore, settings))
            app.add_route("/api/worktrees/{worktree_id}/units/{unit_id}/conflicts",
                          worktree_merge.UnitMergeConflicts(db, unitstore))
            app.add_route("/api/worktrees/{worktree_id}/units/{unit_id}/rebase",
                          worktree_merge.UnitRebase(db, unitstore, settings))
            app.add_route("/api/worktrees/{worktree_id}/units/{unit_id}/activate",
                          worktree_merge.UnitActivate(operations))
        if unitstore is not None:
            from api.resources import worktree_units as wtu
            app.add_route("/api/worktrees/{worktree_id}/units",
                          wtu.WorktreeUnits(operations, unitstore, settings))
            app.add_route("/api/worktrees/{worktree_id}/units/{unit_id}",
                          wtu.WorktreeUnitItem(db, unitstore, settings))
            app.add_route("/api/worktrees/{worktree_id}/units/{unit_id}/changesets",
                          wtu.WorktreeUnitChangesets(db, unitstore, settings))
            app.add_route("/api/units/{unit_id}", units_res.UnitItem(db, unitstore))
            app.add_route("/api/units/{unit_id}/changesets",
                          units_res.UnitChangesets(db, unitstore))
            from api.resources import history as history_res
            history_res.mount(app, db, unitstore, settings)  # trunk history (wharf.history)
            from api.resources import protection as protection_res
            protection_res.mount(app, db, unitstore)  # protected ranges (wharf.protection)

    if operations is not None and blob_store is not None and unitstore is not None:
        from api.resources import imports as import_res
        import_res.mount(app, operations)  # imports of Office files (wharf.exchange)

    if operations is not None and blob_store is not None:
        from api.resources import blobs as blob_res
        app.add_route("/api/blob-upload-sessions", blob_res.UploadSessions(db, settings))
        app.add_route("/api/blob-upload-sessions/{session_id}", blob_res.UploadSession(db))
        app.add_route("/api/blob-upload-sessions/{session_id}/content",
                      blob_res.UploadSessionContent(db, blob_store, settings))
        app.add_route("/api/blob-upload-sessions/{session_id}/complete",
                      blob_res.UploadSessionComplete(operations))
        app.add_route("/api/blob-resources/{resource_id}", blob_res.BlobMeta(db))
        app.add_route("/api/blob-resources/{resource_id}/content",
                      blob_res.BlobContent(db, blob_store, operations, settings))
        app.add_route("/api/blob-resources/{resource_id}/download",
                      blob_res.BlobDownload(db, blob_store, operations, settings))
        from api.resources import quarantine
        app.add_route("/api/blob-resources/{resource_id}/quarantine",
                      quarantine.BlobQuarantine(db, settings))
        app.add_route("/api/blob-resources/{resource_id}/release",
                      quarantine.BlobRelease(db, settings))

    if operations is not None and blob_store is not None and unitstore is not None:
        from api.resources import assets as asset_res
        app.add_route("/api/units/{unit_id}/assets",
                      asset_res.UnitAssets(db, blob_store, operations, settings))
        app.add_route("/api/assets/{asset_id}", asset_res.AssetItem(db))
        app.add_route("/api/assets/{asset_id}/content", asset_res.AssetContent(db, blob_store))
        app.add_route("/api/worktrees/{worktree_id}/units/{unit_id}/assets",
                      asset_res.WorktreeUnitAssets(db, blob_store, operations, settings))
        app.add_route("/api/worktrees/{worktree_id}/assets/{asset_id}/content",
                      asset_res.WorktreeAssetContent(db, blob_store))
        from api.resources import exports as export_res  # Office exports (wharf.exchange)
        app.add_route("/api/units/{unit_id}/exports",
                      export_res.UnitExports(operations, unitstore))
        app.add_route("/api/exports/{export_id}/content",
                      export_res.ExportContent(db, blob_store))
        app.add_route("/api/spaces/{space_id}/exports", export_res.SpaceTakeouts(operations))
        app.add_route("/api/me/exports", export_res.MyTakeouts(operations))

    if operations is not None:  # completion webhooks (wharf.webhooks)
        from api.resources import webhooks as webhook_res
        from wharf.webhooks.service import Webhooks
        hooks = Webhooks(settings, db)
        app.add_route("/api/webhooks", webhook_res.WebhookCollection(hooks))
        app.add_route("/api/webhooks/{webhook_id}", webhook_res.WebhookItem(hooks))
        app.add_route("/api/webhooks/{webhook_id}/enable", webhook_res.WebhookEnable(hooks))
        app.add_route("/api/webhooks/{webhook_id}/deliveries",
                      webhook_res.WebhookDeliveries(hooks))

    from api.resources import issues as issue_res
    issue_res.mount(app, db)  # team-space issues (wharf.issues)
    from api.resources import comments as comment_res
    comment_res.mount(app, db, settings)  # comments on trunk units (wharf.comments)

    if extra_routes is not None:
        extra_routes(app)
    # Added once every route is mounted: the auth middleware takes the routes' declared
    # auth modes (which paths read no credentials, who may call each responder).
    auth = AuthMiddleware(db, identity, settings.trusted_proxy_count,
                          settings.allowed_origins, auth_modes=contract.auth_modes(app))
    middleware: list[Any] = [
        # first: its process_response runs last, on the answer as it will be sent
        CompressionMiddleware(),
        RequestIdMiddleware(),
        # refused writes into the audit trail, once the answer is final (wharf.audittrail)
        RefusedWriteMiddleware(db, settings, auth.client_ip),
        auth,
        BodyLimitMiddleware(settings.max_body_bytes),
    ]
    if operations is not None and notifier is not None:
        from api.resources.operations import PreferWait
        # ``Prefer: wait=N`` on operation-starting requests; its process_response runs
        # first of all, inside the request id's log context.
        middleware.append(PreferWait(operations, notifier))
    app.add_middleware(middleware)
    return app
