"""Hostile ``Range`` headers against a blob GET: whatever the header, the answer is 200 (the
whole content), 206 (exactly the bytes an RFC 9110 reading of the header names) or 416
(problem+json, ``Content-Range: bytes */size``) — never a 500.

The oracle below parses with unbounded integers (``sys.set_int_max_str_digits(0)``), so it
also covers positions of thousands of digits, which Python's ``int()`` refuses by default.
"""
from __future__ import annotations

import re
import sys

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from storage.blobstore import FileBlobStore
from tests.blobs.test_blobs import Env, upload

DATA = bytes(range(256)) * 4 + b"tail"  # 1028 bytes
SIZE = len(DATA)


def expected(header: str):
    """(status, start, end) by RFC 9110 §14: one ``bytes=`` range or the whole content."""
    m = re.fullmatch(r"\s*bytes\s*=\s*([0-9]*)\s*-\s*([0-9]*)\s*", header)
    if not header or not m or (not m.group(1) and not m.group(2)):
        return 200, 0, SIZE - 1
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        first = int(m.group(1)) if m.group(1) else None
        last = int(m.group(2)) if m.group(2) else None
    finally:
        sys.set_int_max_str_digits(old)
    if first is None:
        if last == 0:
            return 416, None, None
        return 206, max(0, SIZE - last), SIZE - 1
    if last is not None and last < first:
        return 200, 0, SIZE - 1
    if first >= SIZE:
        return 416, None, None
    return 206, first, SIZE - 1 if last is None else min(last, SIZE - 1)


@pytest.fixture
def blob(settings, db, tmp_path):
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"))
    alice = env.world.user("alice")
    _, op = upload(alice, alice.personal_space_id, DATA)
    assert op["status"] == "completed", op
    yield alice, f"/api/blob-resources/{op['result']['resource_id']}/content"
    env.close()


def digits():
    return st.one_of(
        st.integers(0, 2 * SIZE).map(str),
        st.integers(0, 2 ** 70).map(str),
        st.integers(1, 6000).map(lambda n: "9" * n),       # beyond int()'s 4,300 digits
        st.integers(1, 6000).map(lambda n: "0" * n + "1"),  # huge spelling, small value
        st.just(""))


well_formed = st.builds(lambda ws, a, b: f"{ws}bytes{ws}={ws}{a}{ws}-{ws}{b}{ws}",
                        st.sampled_from(["", " ", "\t"]), digits(), digits())
hostile = st.one_of(
    well_formed,
    st.builds(lambda a, b, c, d: f"bytes={a}-{b},{c}-{d}", digits(), digits(), digits(),
              digits()),
    st.text(alphabet=st.characters(codec="latin-1", exclude_categories=("Cc",)),
            max_size=60),
    st.text(alphabet="bytes=-0123456789, \t", max_size=80),
    st.sampled_from(["bytes=", "bytes=-", "bytes=--1", "items=0-1", "bytes=1-2-3",
                     "bytes=0-0", "bytes=-0", "bytes=" + "9" * 4301 + "-",
                     "bytes=-" + "9" * 4301, "bytes=0-" + "9" * 4301,
                     "bytes=" + "9" * 4301 + "-" + "9" * 4300]))


@hsettings(max_examples=150, deadline=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture,
                                  HealthCheck.too_slow])
@given(header=hostile)
def test_any_range_header_is_200_206_or_416_with_the_right_bytes(blob, header):
    client, url = blob
    r = client.get(url, headers={"Range": header})
    status, start, end = expected(header)
    assert r.status_code == status, (header[:80], r.status_code, r.text[:200])
    if status == 200:
        assert r.content == DATA
    elif status == 206:
        assert r.content == DATA[start:end + 1]
        assert r.headers["content-range"] == f"bytes {start}-{end}/{SIZE}"
    else:
        assert r.headers["content-range"] == f"bytes */{SIZE}"
        assert r.json["code"] == "range_not_satisfiable"


@pytest.mark.parametrize("header,status", [
    ("bytes=" + "9" * 4301 + "-", 416),
    ("bytes=-" + "9" * 4301, 206),
    ("bytes=0-" + "9" * 4301, 206),
    ("bytes=" + "0" * 5000 + "5-9", 206),
])
def test_ranges_with_thousands_of_digits(blob, header, status):
    client, url = blob
    r = client.get(url, headers={"Range": header})
    assert r.status_code == status, r.text[:300]
