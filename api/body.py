"""Reading JSON request bodies, validated against the OpenAPI document's schemas."""
from __future__ import annotations

import json
from functools import lru_cache

import falcon
from jsonschema import Draft202012Validator

from api.openapi import SPEC
from wharf.errors import MalformedRequest, PayloadTooLarge, ValidationFailed


@lru_cache(maxsize=None)
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(SPEC["components"]["schemas"][name])


def _pointer(path) -> str:
    return "/" + "/".join(str(p) for p in path) if path else ""


def read_json(req: falcon.Request, schema: str | None = None) -> dict:
    """Parse the body as a JSON object and validate it against ``schema``."""
    ctype = (req.content_type or "application/json").split(";")[0].strip().lower()
    if ctype != "application/json" and not ctype.endswith("+json"):
        raise falcon.HTTPUnsupportedMediaType(description="Send application/json.")
    limit = getattr(req.context, "max_body_bytes", 1024 * 1024)
    raw = req.bounded_stream.read(limit + 1)
    if len(raw) > limit:
        raise PayloadTooLarge(f"The body is larger than {limit} bytes.")
    if not raw.strip():
        data: object = {}
    else:
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise MalformedRequest(f"The body is not valid JSON: {exc}",
                                   code="malformed_json") from None
    if not isinstance(data, dict):
        raise ValidationFailed("The body must be a JSON object.")
    if schema:
        errors = sorted(_validator(schema).iter_errors(data), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            field = _pointer(first.path) or None
            raise ValidationFailed(
                f"{field + ': ' if field else ''}{first.message}"[:500],
                details={"field": field.lstrip("/") if field else None,
                         "errors": [{"pointer": _pointer(e.path), "message": e.message[:200]}
                                    for e in errors[:10]]})
    return data
