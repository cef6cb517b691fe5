"""Quarantine and release a published blob (``wharf.blobs.quarantine``)."""
from __future__ import annotations

import falcon

from api import contract
from api.resources.blobs import blob_body
from api.schemas.blobs import BlobResource
from storage.db import Database
from wharf.blobs.quarantine import set_quarantine
from wharf.infra.settings import Settings

_WHO = ("The space's owner or an admin (the owner of a personal space), or an operator "
        "(`WHARF_OPERATORS`, any blob). 404 for a blob you cannot discover, 403 for one "
        "you can but may not quarantine. Idempotent; each change is audited.")


class BlobQuarantine:
    def __init__(self, db: Database, settings: Settings):
        self.db, self.settings = db, settings

    @contract.op(operation_id="quarantineBlob", summary="Withhold a blob's bytes",
                 tags=["blobs"],
                 description="`state` becomes `quarantined`: `/content` and `/download` "
                             "then answer 409 `quarantined` (imports from it too) until "
                             "it is released; the metadata stays readable and nothing is "
                             "deleted. " + _WHO,
                 responses={200: contract.Answer(BlobResource, "The blob, quarantined.")})
    def on_post(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        blob, node = set_quarantine(self.db, self.settings, req.context.ctx, resource_id, True)
        resp.media = blob_body(blob, node.id)


class BlobRelease:
    def __init__(self, db: Database, settings: Settings):
        self.db, self.settings = db, settings

    @contract.op(operation_id="releaseBlob", summary="Serve a quarantined blob's bytes again",
                 tags=["blobs"], description="`state` becomes `ready`. " + _WHO,
                 responses={200: contract.Answer(BlobResource, "The blob, ready.")})
    def on_post(self, req: falcon.Request, resp: falcon.Response, resource_id: str) -> None:
        blob, node = set_quarantine(self.db, self.settings, req.context.ctx, resource_id,
                                    False)
        resp.media = blob_body(blob, node.id)
