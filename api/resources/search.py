"""Search: find nodes by name (``wharf.search.names``) and units by content
(``wharf.search.content``)."""
from __future__ import annotations

import falcon
import msgspec

from api import contract
from api.schemas.search import SearchItem, SearchList, SearchQuery
from storage.db import Database
from wharf.search import content, names


class Search:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="search", summary="Find nodes by name or units by content",
                 tags=["search"],
                 description="`kind=name` (the default): case-insensitive; exact matches "
                             "first, then prefixes, then substrings. `kind=content`: the "
                             "units whose text (doc text, sheet cells, slide text, indexed "
                             "a few seconds after a change) holds every word of `q`, best "
                             "first, with a snippet. Keyset-paged. Only nodes I can "
                             "discover now: in spaces I own or am a member of, below a "
                             "grant to me, and in a public space only when `space_id` names "
                             "it; nothing in the trash. A page may be short (even empty) "
                             "with a `next_cursor` when many matches were hidden. See "
                             "docs/search.md.",
                 query=SearchQuery, responses={200: SearchList})
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        q = contract.read_query(req, SearchQuery)
        text, kind = names.check_query(q.q, q.kind)
        run = content.search_content if kind == "content" else names.search_names
        items, nxt = run(self.db, req.context.ctx, text, q.space_id, q.limit, q.cursor)
        resp.media = SearchList(items=[msgspec.convert(i, SearchItem) for i in items],
                                next_cursor=nxt)
