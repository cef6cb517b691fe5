"""Route metadata: what ``@op`` attaches to a responder (its operation id, tags, body,
answers, problems and ``auth`` mode), read back by :func:`operation_of`."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

Auth = Literal["required", "optional", "none", "metrics"]
F = TypeVar("F", bound=Callable[..., Any])

JSON = "application/json"


@dataclass(frozen=True)
class Answer:
    """One documented response: a Struct (or None for no body), or a raw ``schema`` for
    other media types; ``headers`` are names of ``HEADERS`` the server sends with it."""

    type: Any = None
    description: str = ""
    headers: tuple[str, ...] = ()
    content_type: str = JSON
    schema: dict[str, Any] | None = None
    also: tuple[str, ...] = ()  # more media types of the same schema (e.g. "*/*")


@dataclass(frozen=True)
class Operation:
    operation_id: str
    summary: str
    tags: tuple[str, ...]
    responses: dict[int, Answer]
    description: str = ""
    body: Any = None
    query: Any = None
    problems: tuple[int, ...] = ()
    auth: Auth = "required"
    headers: tuple[str, ...] = ()  # request header parameters (names in components)
    raw_body: tuple[str, dict[str, Any]] | None = None  # (media type, schema): not JSON


def op(*, operation_id: str, summary: str, tags: list[str] | tuple[str, ...],
       responses: dict[int, Any], description: str = "", body: Any = None, query: Any = None,
       problems: tuple[int, ...] = (), auth: Auth = "required",
       headers: tuple[str, ...] = (),
       raw_body: tuple[str, dict[str, Any]] | None = None) -> Callable[[F], F]:
    """Attach the contract of one responder (see the module docstring). ``raw_body`` is a
    request body that is not JSON (e.g. streamed bytes): its media type and schema."""
    answers = {status: a if isinstance(a, Answer) else Answer(a)
               for status, a in responses.items()}
    meta = Operation(operation_id=operation_id, summary=summary, tags=tuple(tags),
                     responses=answers, description=description, body=body, query=query,
                     problems=tuple(problems), auth=auth, headers=tuple(headers),
                     raw_body=raw_body)

    def decorate(fn: F) -> F:
        fn.__contract__ = meta  # type: ignore[attr-defined]
        return fn
    return decorate


def operation_of(responder: Callable[..., Any]) -> Operation | None:
    """The contract ``@op`` attached to ``responder`` (None: undeclared)."""
    meta = getattr(responder, "__contract__", None)
    return meta if isinstance(meta, Operation) else None
