"""Request validation cost per request: the old path (``json.loads`` with the hardening
hooks, then jsonschema against the hand-built schema) against the new one (the same
hardened parse, then ``msgspec.convert`` into the request Struct), plus pydantic v2 on the
same dict so the choice between the two typed libraries is on record.

A script, not a test (pytest collects ``test_*.py`` only). Run::

    .venv/bin/python tests/benchmarks/bench_validation.py

Bodies: ``create_resource`` (POST /api/resources) and ``register`` (POST /api/users).
Each figure is the best of 7 rounds of N calls, in CPU microseconds per call (process
CPU time, so a busy machine's waiting does not count; cache contention still does).
"""
from __future__ import annotations

import io
import json
import sys
import time
import timeit
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import msgspec
import pydantic
from jsonschema import Draft202012Validator

from api import body as hardened
from api.schemas.common import IdRef, Request
from api.schemas.identity import RegisterRequest
from storage.enums import UnitType

ID_MAX = 64
N = 20_000

# The hand-built request schemas the API validated with until the contract (api/openapi*.py
# at 95f5dc3), copied so the comparison does not depend on what is still in the tree.
OLD_SCHEMAS: dict[str, dict[str, Any]] = {
    "CreateResourceRequest": {
        "type": "object", "additionalProperties": False,
        "required": ["space_id", "name", "unit_type"],
        "properties": {
            "space_id": {"type": "string", "maxLength": ID_MAX},
            "parent_id": {"type": ["string", "null"], "maxLength": ID_MAX},
            "name": {"type": "string", "minLength": 1, "maxLength": 255},
            "unit_type": {"type": "string", "enum": ["sheet", "doc", "slide", "board", "base"]}}},
    "RegisterRequest": {
        "type": "object", "additionalProperties": False, "required": ["username", "password"],
        "properties": {"username": {"type": "string", "minLength": 3, "maxLength": 64},
                       "password": {"type": "string", "minLength": 12, "maxLength": 1024}}},
}


class CreateResourceFallback(Request):
    """The typed create_resource body, until ``api.schemas.operations`` declares it."""

    space_id: IdRef
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]
    unit_type: UnitType
    parent_id: IdRef | None = None


def _create_resource_struct() -> type:
    try:  # the typed request of the operations module, once it is migrated
        from api.schemas import operations
        return operations.CreateResourceRequest  # type: ignore[attr-defined,no-any-return]
    except (ImportError, AttributeError):
        return CreateResourceFallback


class PydanticCreateResource(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", strict=True)
    space_id: Annotated[str, pydantic.Field(max_length=ID_MAX)]
    name: Annotated[str, pydantic.Field(min_length=1, max_length=255)]
    unit_type: Literal["sheet", "doc", "slide", "board", "base"]
    parent_id: Annotated[str, pydantic.Field(max_length=ID_MAX)] | None = None


class PydanticRegister(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", strict=True)
    username: Annotated[str, pydantic.Field(min_length=3, max_length=64)]
    password: Annotated[str, pydantic.Field(min_length=12, max_length=1024)]


CONTEXT = SimpleNamespace(max_body_bytes=1024 * 1024)


class FakeRequest:
    """What ``api.body.parse_object`` reads from a Falcon request."""

    content_type = "application/json"

    def __init__(self, raw: bytes):
        self.raw = raw
        self.context = CONTEXT

    @property
    def bounded_stream(self) -> io.BytesIO:
        return io.BytesIO(self.raw)


def best(fn: Any) -> float:
    return min(timeit.repeat(fn, number=N, repeat=7, timer=time.process_time)) / N * 1e6


def main() -> None:
    bodies = {
        "create_resource": ("CreateResourceRequest", _create_resource_struct(),
                            PydanticCreateResource,
                            {"space_id": "0f8fad5bd9cb469fa16570867728950e",
                             "parent_id": "7c9e6679742540de944be07fc1f90ae7",
                             "name": "Q3 plans", "unit_type": "sheet"}),
        "register": ("RegisterRequest", RegisterRequest, PydanticRegister,
                     {"username": "alice", "password": "correct horse battery staple"}),
    }
    print(f"{'body':<16} {'step':<48} {'us/request':>10}")
    for label, (schema_name, struct, model, value) in bodies.items():
        raw = json.dumps(value).encode()
        validator = Draft202012Validator(OLD_SCHEMAS[schema_name])

        def parse() -> dict:
            return hardened.parse_object(FakeRequest(raw))  # type: ignore[arg-type]

        def old_parse() -> dict:
            """The parse of 95f5dc3: the same hooks, and the tree walk on every body."""
            req = FakeRequest(raw)
            data = json.loads(req.bounded_stream.read(1024 * 1024 + 1),
                              parse_constant=hardened._refuse_constant,
                              parse_float=hardened._finite_float,
                              object_pairs_hook=hardened._unique_keys)
            hardened._check_tree(data)
            assert isinstance(data, dict)
            return data

        def before() -> None:
            data = old_parse()
            errors = list(validator.iter_errors(data))
            assert not errors

        def after() -> None:
            msgspec.convert(parse(), struct)

        def with_pydantic() -> None:
            model.model_validate(parse())

        data = parse()
        rows = [
            ("hardened parse alone, before (tree walk always)", old_parse),
            ("hardened parse alone, after (walk when needed)", parse),
            ("before: parse + jsonschema", before),
            ("after: parse + msgspec.convert", after),
            ("alternative: parse + pydantic v2", with_pydantic),
            ("validation alone: jsonschema", lambda: list(validator.iter_errors(data))),
            ("validation alone: msgspec.convert", lambda: msgspec.convert(data, struct)),
            ("validation alone: pydantic v2", lambda: model.model_validate(data)),
        ]
        for step, fn in rows:
            print(f"{label:<16} {step:<48} {best(fn):>10.2f}")


if __name__ == "__main__":
    main()
