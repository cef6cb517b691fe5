"""Search (``wharf.search``)."""
from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from api.schemas.common import Cursor, Id, IdRef, Limit, Response
from storage.enums import ResourceKind
from wharf.infra.pagination import DEFAULT_LIMIT
from wharf.search.names import MAX_QUERY

Query = Annotated[str, msgspec.Meta(
    max_length=MAX_QUERY, examples=["plan"],
    description="What to find, case-insensitive. Names: 3 characters or more match "
                "anywhere in a name, 1 or 2 match name prefixes only. Content: the words "
                "(letters and digits) a unit's text must all hold.")]
Kind = Annotated[Literal["name", "content"], msgspec.Meta(
    description="`name` (the default): node names; `content`: the text of units.")]


class SearchQuery(msgspec.Struct, forbid_unknown_fields=False):
    q: Query | None = None
    space_id: IdRef | None = None
    kind: Kind | None = None
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor | None = None


class SearchItem(Response):
    node_id: Id
    name: str
    space_id: Id
    parent_id: Id | None
    resource_id: Annotated[Id | None, msgspec.Meta(description="None for a folder.")]
    kind: Annotated[ResourceKind | None, msgspec.Meta(description="None for a folder.")]
    snippet: Annotated[str, msgspec.Meta(
        description="`kind=name`: the name with its first match between « and ». "
                    "`kind=content`: a passage of the unit's text around its best match, "
                    "the words found between « and ».",
        examples=["Quarterly «plan»"])]
    match: Annotated[list[int] | None, msgspec.Meta(
        description="`kind=name`: `[start, end)` of that match in the name, in "
                    "characters (None when it cannot be placed exactly); None for "
                    "`kind=content`.")]


class SearchList(Response):
    items: list[SearchItem]
    next_cursor: str | None
