"""Content search (issue 41 item 1): ``GET /api/search?kind=content`` over the text of
trunk units (``search_documents``, written by ``wharf.search.indexing``).

``q`` is read as words (letters and digits; everything else separates them, so no query
syntax exists: quotes, ``*``, ``-``, ``OR``, ``NEAR(`` are plain separators or words), and
a unit matches when its text holds every word (whole words, case-insensitive, no
stemming). PostgreSQL: ``plainto_tsquery('simple', …)`` against the ``tsvector`` under
its GIN index, ranked by ``ts_rank``, the snippet by ``ts_headline``. SQLite: an FTS5
query of the words as phrases, ranked by ``bm25``, the snippet by ``snippet()``.

What the caller may discover is decided exactly as for names (``wharf.search.names``):
the candidates are restricted in SQL to the caller's spaces and untrashed nodes, then each
is confirmed in a bounded scan (``scan_page``). Keyset-paged on ``(score, node id)``;
snippets are made for the rows of the page only."""
from __future__ import annotations

import math
import re
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Double,
    Row,
    and_,
    bindparam,
    cast,
    column,
    func,
    literal,
    or_,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import REGCONFIG
from sqlalchemy.orm import Session

from storage.db import Database
from storage.models import Node, Resource, SearchDocument
from wharf.infra.context import RequestContext
from wharf.infra.errors import InvalidCursor
from wharf.infra.pagination import decode_cursor, scan_page
from wharf.search.names import MARK_CLOSE, MARK_OPEN, discoverable, space_ids, untrashed

CURSOR_KIND = "search-content"
#: Words of ``q`` searched at most (the rest are ignored).
MAX_WORDS = 32
#: Words around the match a snippet shows, about.
SNIPPET_WORDS = 24
_WORD = re.compile(r"[^\W_]+")
_FTS = "search_documents_fts"
_SIMPLE = cast(literal("simple"), REGCONFIG)  # the text search configuration: no stemming
_SNIPPETS = text(
    f"SELECT rowid, snippet({_FTS}, 0, '{MARK_OPEN}', '{MARK_CLOSE}', '…', {SNIPPET_WORDS}) "
    f"FROM {_FTS} WHERE {_FTS} MATCH :m AND rowid IN :ids"
).bindparams(bindparam("ids", expanding=True))


def words(q: str) -> list[str]:
    """The words of ``q`` searched (at most ``MAX_WORDS``)."""
    return _WORD.findall(q)[:MAX_WORDS]


def search_content(db: Database, ctx: RequestContext, q: str, space_id: str | None,
                   limit: int, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the units whose text holds every word of ``q`` that the caller can
    discover, best first (see the module)."""
    after = decode_cursor(CURSOR_KIND, cursor, 2)
    if after is not None:
        try:
            score = float(after[0])
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise InvalidCursor("The cursor is not valid for this listing.")
    with db.read() as s:
        return _search(s, ctx, words(q), space_id, limit, after)


def _search(s: Session, ctx: RequestContext, terms: list[str], space_id: str | None,
            limit: int, after: list[Any] | None) -> tuple[list[dict[str, Any]], str | None]:
    user_id = ctx.principal.user_id
    if user_id is None or not ctx.principal.is_user or not terms:
        return [], None
    spaces = space_ids(s, user_id, space_id)
    if not spaces:
        return [], None
    sqlite = s.get_bind().dialect.name == "sqlite"
    phrase = " ".join('"' + t + '"' for t in terms)
    stmt = (select(Node, Resource.id, SearchDocument.id)
            .join(Resource, Resource.id == SearchDocument.resource_id)
            .join(Node, Node.id == Resource.node_id))
    score: ColumnElement[float]
    if sqlite:
        hits = text(f"SELECT rowid AS doc_id, -bm25({_FTS}) AS score FROM {_FTS} "
                    f"WHERE {_FTS} MATCH :m").bindparams(m=phrase).columns(
            column("doc_id"), column("score")).subquery("hits")
        score = hits.c.score
        stmt = stmt.join(hits, hits.c.doc_id == SearchDocument.id)
    else:
        query = func.plainto_tsquery(_SIMPLE,
                                     " ".join(terms))
        # as double precision: a real would come back rounded and miss the keyset
        score = cast(func.ts_rank(SearchDocument.tsv, query), Double())
        stmt = stmt.where(SearchDocument.tsv.op("@@")(query))
    base = (stmt.add_columns(score.label("score"))
            .where(Node.space_id.in_(spaces), untrashed(s))
            .order_by(score.desc(), Node.id))

    def fetch(key: list[Any] | None, n: int) -> list[Row[Any]]:
        page = base
        if key:
            r, nid = float(key[0]), key[1]
            page = page.where(or_(score < r, and_(score == r, Node.id > nid)))
        return list(s.execute(page.limit(n)).all())

    keep = discoverable(s, ctx, named=space_id)
    rows, next_cursor = scan_page(fetch, after, limit, CURSOR_KIND,
                                  lambda row: [repr(float(row[3])), row[0].id],
                                  lambda row: keep(row[0]))
    marked = _snippets(s, sqlite, phrase, terms, [row[2] for row in rows])
    return [{"node_id": node.id, "name": node.name, "space_id": node.space_id,
             "parent_id": node.parent_id, "resource_id": resource_id, "kind": "unit",
             "snippet": marked.get(doc_id, ""), "match": None}
            for node, resource_id, doc_id, _score in rows], next_cursor


def _snippets(s: Session, sqlite: bool, phrase: str, terms: list[str],
              doc_ids: list[int]) -> dict[int, str]:
    """Each document's snippet: a passage around its best match, the words between « and
    », on one line."""
    if not doc_ids:
        return {}
    if sqlite:
        found = s.execute(_SNIPPETS, {"m": phrase, "ids": doc_ids}).all()
    else:
        query = func.plainto_tsquery(_SIMPLE,
                                     " ".join(terms))
        options = (f"StartSel={MARK_OPEN}, StopSel={MARK_CLOSE}, MaxWords={SNIPPET_WORDS}, "
                   "MinWords=8, MaxFragments=1")
        found = s.execute(select(SearchDocument.id, func.ts_headline(
            _SIMPLE, SearchDocument.body, query,
            options)).where(SearchDocument.id.in_(doc_ids))).all()
    return {int(i): " ".join(str(snippet).split()) for i, snippet in found}
