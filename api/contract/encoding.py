"""Responses: msgspec as the JSON encoder of ``resp.media`` (:func:`install`)."""
from __future__ import annotations

import json

import falcon
import falcon.media
import msgspec

from api.contract.routing import App


def _dumps(media: object) -> str:
    return json.dumps(msgspec.to_builtins(media), ensure_ascii=False)


class MsgspecJSON(falcon.media.JSONHandler):
    """``resp.media`` (Structs, dicts, lists): msgspec turns Structs and enums into plain
    JSON values (``to_builtins``), which ``json.dumps`` writes with the formatting Falcon's
    own handler used (``ensure_ascii=False``, ``", "`` and ``": "`` separators). A Struct's
    keys come in the order its fields are declared: a response that was a hand-built dict
    before may list its keys in another order (an ``Operation`` starts with ``kind`` and has
    ``error`` before ``result``); the values are the same. Request bodies are decoded by
    :func:`read_body`; this handler's ``loads`` (``req.media``) is msgspec's decoder."""

    def __init__(self) -> None:
        super().__init__(dumps=_dumps, loads=msgspec.json.decode)


def install(app: App) -> None:
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = MsgspecJSON()
