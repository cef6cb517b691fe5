"""The typed HTTP contract: route metadata, request decoding, response encoding and the
OpenAPI 3.1 document generated from the mounted app.

Usage (a responder)::

    from api import contract
    from api.schemas.spaces import CreateSpaceRequest, Space

    class Spaces:
        @contract.op(operation_id="createSpace", summary="Create a team space", tags=["spaces"],
                     body=CreateSpaceRequest, responses={201: contract.Answer(Space,
                     headers=("Location",))}, problems=(409,))
        def on_post(self, req, resp):
            body = contract.read_body(req, CreateSpaceRequest)   # typed, validated
            ...
            resp.media = Space(...)                              # encoded by msgspec
            resp.status = falcon.HTTP_201

- ``read_body(req, T)``: the hardened JSON parse of ``api.body`` (size, depth, duplicate
  keys, NaN/Infinity, lone surrogates) then ``msgspec.convert``; a mismatch is the 400
  ``validation_failed`` problem (``details.field``, ``details.errors[].pointer``).
- ``read_query(req, T)``: the query string into a Struct (integers as plain ASCII digits).
- ``resp.media = <Struct>``: ``install(app)`` makes msgspec the JSON encoder.
- ``@op(...)``: every responder of a mounted resource needs it; ``auth`` is the single
  source for the middleware (``"required"``: a user; ``"optional"``: visitors too, given
  credentials are checked; ``"none"``: credentials are not read; ``"metrics"``: the
  monitoring bearer token; :func:`auth_modes`). 401/403 are documented from it.
- :class:`App`: ``falcon.App`` that records every route it mounts (template, resource and
  its responders as Falcon maps them, ``suffix=`` included).
- ``document(app)``: the OpenAPI document of those routes (``/api/openapi.json`` serves
  the document of the app it is mounted in). A responder without metadata makes building
  fail (:class:`Undocumented`).
"""
from __future__ import annotations

from api.contract.decoding import read_body, read_query, validation_failed
from api.contract.encoding import MsgspecJSON, install
from api.contract.metadata import Answer, Auth, Operation, op, operation_of
from api.contract.openapi import Undocumented, document, problem_codes
from api.contract.routing import App, Route, auth_modes, new_app, routes, with_head
from api.contract.vocabulary import REF

__all__ = ["REF", "Answer", "App", "Auth", "MsgspecJSON", "Operation", "Route", "Undocumented",
           "auth_modes", "document", "install", "new_app", "op", "operation_of", "problem_codes",
           "read_body", "read_query", "routes", "validation_failed", "with_head"]
