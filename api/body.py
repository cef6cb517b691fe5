"""Reading JSON request bodies: the hardened parse (size, content type, depth, duplicate
keys, NaN/Infinity and overflowing numbers, lone surrogates) that every body goes through
before ``api.contract.read_body`` validates it into its Struct."""
from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any, NoReturn

import falcon

from wharf.infra.errors import MalformedRequest, PayloadTooLarge, ValidationFailed
from wharf.infra.validation import encodable

MAX_DEPTH = 64  # room for document content (JSON Patch values) inside a body


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    """JSON numbers that overflow a double (``1e999``) would parse as ``inf`` and be written
    back as ``Infinity``, which is not JSON: refuse them like ``NaN``/``Infinity``."""
    value = float(text)
    if value in (math.inf, -math.inf):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _check_tree(data: object) -> None:
    """Refuse what JSON can carry but no handler or database can: nesting deeper than
    ``MAX_DEPTH`` (validators and serializers recurse) and lone UTF-16 surrogates
    (``"\\ud800"`` decodes to a str that cannot be encoded as UTF-8). Iterative, so a
    hostile body cannot exhaust the stack here either."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if not encodable(value):
                raise MalformedRequest("The body contains an unpaired UTF-16 surrogate "
                                       "escape, which is not valid Unicode text.",
                                       code="malformed_json")
        elif isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise _too_deep()
            if isinstance(value, dict):
                stack.extend((k, depth) for k in value)
                stack.extend((v, depth + 1) for v in value.values())
            else:
                stack.extend((v, depth + 1) for v in value)


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")


def _too_deep() -> MalformedRequest:
    return MalformedRequest(f"The body nests deeper than {MAX_DEPTH} levels.",
                            code="malformed_json")


def _depth(raw: bytes) -> int:
    """How deep ``raw`` (valid UTF-8 JSON) nests: its brackets outside strings, counted.
    Two C-speed regexes, then one pass over the brackets alone: a megabyte of small
    objects costs a few milliseconds where walking the parsed tree cost a third of a
    second."""
    brackets = _NOT_BRACKET.sub(b"", _STRING.sub(b"", raw))
    return max(itertools.accumulate(1 if b in b"[{" else -1 for b in brackets), default=0)


def _check_parsed(raw: bytes, data: object) -> None:
    """What :func:`_check_tree` refuses, found cheaply where it can be: a lone surrogate
    can only come from a ``\\uD800``-``\\uDFFF`` escape in valid UTF-8, and only a body
    with more than ``MAX_DEPTH`` opening brackets can nest that deep (both tests are
    conservative: brackets and escapes inside strings count too); a typical body is
    passed by the counts alone."""
    if json.detect_encoding(raw) != "utf-8" or _SURROGATE_ESCAPE.search(raw) is not None:
        _check_tree(data)  # (json.loads also takes UTF-16/32)
    elif raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _depth(raw) > MAX_DEPTH:
        raise _too_deep()


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """An object with a key twice is refused: JSON parsers disagree on which one wins, so a
    proxy or a client library could read a different request from the one we act on."""
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"duplicate key {dup[:100]!r}")
    return data


def parse_object(req: falcon.Request) -> dict[str, Any]:
    """Parse the body as a JSON object (an empty body is ``{}``), hardened as above."""
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
            # Decoded strictly first: json.loads(bytes) decodes with "surrogatepass", so
            # UTF-8-encoded surrogates (b"\xed\xa0\x80") would become lone surrogates.
            text = raw.decode(json.detect_encoding(raw))
            data = json.loads(text, parse_constant=_refuse_constant,
                              parse_float=_finite_float, object_pairs_hook=_unique_keys)
        except RecursionError:
            raise _too_deep() from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise MalformedRequest(f"The body is not valid JSON: {str(exc)[:200]}",
                                   code="malformed_json") from None
        _check_parsed(raw, data)
    if not isinstance(data, dict):
        raise ValidationFailed("The body must be a JSON object.")
    return data
