"""One ``wharf fsck`` run: the object side, then the unit side, into one :class:`Report`.

The grace rule, checked before anything is read: ``WHARF_FSCK_GRACE_SECONDS`` must exceed
the longest time a live upload may still write its object, the larger of
``WHARF_UPLOAD_SESSION_TTL`` (a blob upload session, and a content replacement, write
until it expires) and ``WHARF_ASSET_UPLOAD_TTL`` plus the asset reservation's grace (an
asset upload's bytes may stream until then). A shorter grace is a configuration error,
whether or not this run repairs.

Bounded work: ``page_size`` rows or keys per read, candidates confirmed
``CONFIRM_BATCH`` at a time, at most ``max_findings`` findings listed (and repaired) per
run, and ``max_seconds`` (if given) of wall time, after which the run stops with
``complete`` false and the counts so far. By default the unit side runs only after a
complete object side, within what is left of ``max_seconds``; with ``unit_max_seconds``
it has a budget of its own, started when the object side ends, and runs even when the
object side stopped at its budget (the sweep: on a large store the object side alone can
take the whole budget, and the units would never be checked).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta

from storage.blobstore import BlobStore
from storage.db import Database
from storage.unitstore import UnitStore
from wharf.assets.upload import RESERVATION_GRACE
from wharf.fsck.objects import ObjectCheck
from wharf.fsck.report import Finding, Report
from wharf.fsck.units import UnitCheck
from wharf.infra.clock import utcnow
from wharf.infra.settings import ConfigError, Settings
from wharf.operations.registry import KINDS

DEFAULT_PAGE_SIZE = 1000
DEFAULT_MAX_FINDINGS = 10_000


def longest_upload(settings: Settings) -> int:
    """Seconds a live upload may still write its object after it reserved the key."""
    return max(settings.upload_session_ttl,
               settings.asset_upload_ttl + int(RESERVATION_GRACE.total_seconds()))


def check_grace(settings: Settings) -> None:
    floor = longest_upload(settings)
    if settings.fsck_grace_seconds <= floor:
        raise ConfigError(
            f"WHARF_FSCK_GRACE_SECONDS={settings.fsck_grace_seconds} must exceed the longest "
            f"time a live upload may still write its object ({floor} s: the larger of "
            f"WHARF_UPLOAD_SESSION_TTL and WHARF_ASSET_UPLOAD_TTL plus "
            f"{int(RESERVATION_GRACE.total_seconds())} s)")


def run_fsck(db: Database, store: BlobStore, unitstore: UnitStore, settings: Settings, *,
             repair: bool = False, now: datetime | None = None,
             max_findings: int = DEFAULT_MAX_FINDINGS, max_seconds: float | None = None,
             unit_max_seconds: float | None = None,
             page_size: int = DEFAULT_PAGE_SIZE,
             emit: Callable[[Finding], None] = lambda _finding: None) -> Report:
    """Compare the blob store and the unit store with the product database; ``emit`` gets
    each finding listed in detail, as it is confirmed (after its repair committed)."""
    check_grace(settings)
    # Open operations reference objects through their kinds' payloads: with no kind
    # registered every such object would look orphaned (RegistryEmpty, before any finding).
    KINDS.loaded()
    if page_size < 1 or max_findings < 0:
        raise ValueError("page_size must be at least 1 and max_findings at least 0")
    now = now or utcnow()
    out_of_time = _budget(max_seconds)
    report = Report(max_findings=max_findings, emit=emit)
    ObjectCheck(db, store, report, now=now, grace=timedelta(seconds=settings.fsck_grace_seconds),
                repair=repair, page_size=page_size, out_of_time=out_of_time).run()
    if unit_max_seconds is not None:
        UnitCheck(db, unitstore, report, now=now, page_size=page_size,
                  out_of_time=_budget(unit_max_seconds)).run()
    elif report.complete:
        UnitCheck(db, unitstore, report, now=now, page_size=page_size,
                  out_of_time=out_of_time).run()
    return report


def _budget(seconds: float | None) -> Callable[[], bool]:
    """A clock started now: true once ``seconds`` have passed (never, for None)."""
    stop_at = None if seconds is None else time.monotonic() + seconds

    def out_of_time() -> bool:
        return stop_at is not None and time.monotonic() >= stop_at
    return out_of_time
