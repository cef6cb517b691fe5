"""A toy capability: one operation kind, ``toy_echo``, declared as a real capability
declares its kinds (``wharf/<capability>/kinds.py``): its payload and result Structs, its
handler and its ``KindSpec`` -- and nothing else anywhere. Importing this module registers
the kind (``tests/engine/test_kind_registry.py`` imports it in a fresh process, before the
process is built, as ``wharf.capabilities`` imports a capability)."""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from storage.models import Operation
from wharf.infra.context import Principal, RequestContext
from wharf.infra.settings import Settings
from wharf.operations.kinds import Shape, payload
from wharf.operations.registry import KINDS, Collaborators, KindSpec
from wharf.operations.service import Operations, Submission

TOY_ECHO = "toy_echo"


class ToyEchoPayload(Shape, frozen=True):
    """What to echo, and a key naming an object (the kind declares it in ``object_keys``)."""

    text: str
    object_key: str


class ToyEchoResult(Shape, frozen=True):
    echo: str
    length: int


class ToyEcho:
    """The handler: the result is the text in upper case; nothing outside the database."""

    kind = TOY_ECHO

    def __init__(self, settings: Settings):
        self.settings = settings

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        pass

    def perform(self, op: Operation) -> None:
        pass

    def commit(self, session: Session, op: Operation, ctx: RequestContext) -> ToyEchoResult:
        text = payload(op, ToyEchoPayload).text
        return ToyEchoResult(echo=text.upper(), length=len(text))

    def compensate(self, op: Operation) -> None:
        pass


def _toy_echo(c: Collaborators) -> ToyEcho:
    return ToyEcho(c.settings)


SPEC = KindSpec(
    name=TOY_ECHO, payload=ToyEchoPayload, result=ToyEchoResult, handler=_toy_echo,
    long=True, failure_consumes_input=True, object_keys=("object_key",),
    doc="``toy_echo``: a text echoed in upper case (a test's own capability).",
    result_doc="Once completed: the echo and the text's length.")


def register() -> KindSpec:
    return KINDS.register(SPEC)


def submit(ops: Operations, ctx: RequestContext, key: str, text: str,
           object_key: str = "toy/0") -> Submission:
    """What the toy's API resource would do: submit an echo."""
    request: dict[str, Any] = {"text": text, "object_key": object_key}

    def prepare(s: Session, op_id: str) -> tuple[str | None, ToyEchoPayload]:
        return None, ToyEchoPayload(text=text, object_key=object_key)
    return ops.submit(ctx, TOY_ECHO, key, request, prepare)
