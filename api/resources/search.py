"""Search: find nodes by name (``wharf.search.names``)."""
from __future__ import annotations

import falcon
import msgspec

from api import contract
from api.schemas.search import SearchItem, SearchList, SearchQuery
from storage.db import Database
from wharf.search import names


class Search:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="search", summary="Find nodes by name", tags=["search"],
                 description="Case-insensitive; exact matches first, then prefixes, then "
                             "substrings; keyset-paged. Only nodes I can discover now: in "
                             "spaces I own or am a member of, below a grant to me, and in "
                             "a public space only when `space_id` names it; nothing in the "
                             "trash. A page may be short (even empty) with a `next_cursor` "
                             "when many matches were hidden. 400 `unsupported_search_kind` "
                             "for `kind=content` (not available yet). See docs/search.md.",
                 query=SearchQuery, responses={200: SearchList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, SearchQuery)
        text, _kind = names.check_query(q.q, q.kind)
        items, nxt = names.search_names(self.db, req.context.ctx, text, q.space_id, q.limit,
                                        q.cursor)
        resp.media = SearchList(items=[msgspec.convert(i, SearchItem) for i in items],
                                next_cursor=nxt)
