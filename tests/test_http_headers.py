"""``api/headers.py``: the conditional-request and download headers of blob reads, on
requests built directly (the HTTP round trips are in test_blobs and test_hostile_*)."""
from __future__ import annotations

import falcon.testing
import pytest

from api.headers import RangeNotSatisfiable, attachment, byte_range, not_modified

ETAG = '"0123456789abcdef0123456789abcdef"'


def req(**headers: str) -> falcon.Request:
    return falcon.testing.create_req(headers=headers)


@pytest.mark.parametrize(("header", "expected"), [
    (ETAG, True),
    ("W/" + ETAG, True),  # If-None-Match compares weakly (RFC 9110 13.1.2)
    ("*", True),
    (f'"other", {ETAG}', True),
    (f'"other", W/{ETAG}', True),
    ('"other"', False),
    ('"*"', False),  # a quoted star is an entity-tag, not the wildcard
    ("", False),
    ("  ", False),
    (",,", False),
    ('"other", *', True),  # the wildcard in a list still matches (as before Falcon's parser)
    (ETAG.strip('"'), False),  # an unquoted token is not the entity-tag
])
def test_if_none_match(header, expected):
    assert not_modified(req(**{"If-None-Match": header}), ETAG) is expected


def test_no_if_none_match():
    assert not_modified(req(), ETAG) is False


def test_if_range_names_the_current_etag_or_the_whole_content_is_served():
    assert byte_range(req(Range="bytes=0-3"), ETAG, 10) == (0, 3)
    assert byte_range(req(Range="bytes=0-3", **{"If-Range": ETAG}), ETAG, 10) == (0, 3)
    assert byte_range(req(Range="bytes=0-3", **{"If-Range": '"old"'}), ETAG, 10) is None
    assert byte_range(req(Range="bytes=-4"), ETAG, 10) == (6, 9)
    assert byte_range(req(Range="bytes=5-2"), ETAG, 10) is None
    with pytest.raises(RangeNotSatisfiable):
        byte_range(req(Range="bytes=10-"), ETAG, 10)


@pytest.mark.parametrize(("filename", "expected"), [
    ("plain.txt", "attachment; filename=\"plain.txt\"; filename*=UTF-8''plain.txt"),
    ('a"b\\c.txt', "attachment; filename=\"a_b_c.txt\"; filename*=UTF-8''a%22b%5Cc.txt"),
    ("Résumé 2026.txt",
     "attachment; filename=\"R_sum_ 2026.txt\"; filename*=UTF-8''R%C3%A9sum%C3%A9%202026.txt"),
])
def test_attachment(filename, expected):
    assert attachment(filename) == expected
