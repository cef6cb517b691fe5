"""The settings of documents: units, their history and comments, worktrees and merges.
Declared as :mod:`wharf.infra.settings` declares the rest (a base of its ``Settings``, so
there is still one settings object; the README table lists these first)."""
from dataclasses import dataclass
from typing import Annotated

from wharf.infra import setting_readers as readers
from wharf.infra.setting_declaration import setting


@dataclass(frozen=True, kw_only=True)
class DocumentSettings:
    # imports of Office files (wharf/exchange, issue 38): limits on what one import reads
    import_max_cells: Annotated[int, setting(
        "most non-empty cells one imported spreadsheet (or CSV/TSV) may hold, all sheets "
        "together; more fails the `import_file` operation with `file_too_complex`",
        ge=1)] = 2_000_000
    import_max_sheets: Annotated[int, setting(
        "most sheets (or slides) one imported file may have; more fails the import with "
        "`file_too_complex`", ge=1)] = 200
    import_max_string_length: Annotated[int, setting(
        "longest text one imported cell, paragraph or text box may hold (characters); "
        "longer fails the import with `file_too_complex`", ge=1)] = 32767
    import_max_unpacked_bytes: Annotated[int, setting(
        "most bytes the members of an imported zip-based file (XLSX, XLSB, ODS, DOCX, PPTX) "
        "may unpack to, summed from the zip directory before anything is parsed; more fails "
        "the import with `file_too_complex`",
        ge=1, note="512 MiB")] = 512 * 1024 * 1024
    import_max_memory_bytes: Annotated[int, setting(
        "address space of the child process that reads an imported workbook (XLSX, XLS, "
        "XLSB, ODS: calamine holds a sheet as a dense grid and aborts when an allocation "
        "fails); a child that runs out fails the import with `file_too_complex`",
        ge=256 * 1024 * 1024, note="4 GiB")] = 4 * 1024 * 1024 * 1024
    soffice: Annotated[str, setting(
        "path of LibreOffice's `soffice`, used to convert legacy DOC and PPT imports to "
        "DOCX and PPTX (headless, a private profile per job); empty: those imports fail "
        "with `unsupported_format`", shown="empty: not configured")] = ""
    soffice_network: Annotated[str, setting(
        "the network LibreOffice's conversions get: `auto` runs each in a network "
        "namespace of its own (`unshare --net`, with `--map-root-user` when not root; no "
        "network, not even loopback) when the platform allows it, else with the host's "
        "network and a logged warning; `isolated` requires the namespace (without it DOC "
        "and PPT imports fail with `unsupported_format`); `host` never makes one",
        parse=readers.soffice_network)] = "auto"
    import_conversion_timeout: Annotated[float, setting(
        "seconds one LibreOffice conversion of an import may take; longer is killed and "
        "fails the import with `conversion_timeout`",
        ge=1.0, le=3600.0)] = 120.0
    worktree_max_units: Annotated[int, setting(
        "most units one worktree may hold (trunk units added and units new in it); one "
        "more is refused with 409 `worktree_unit_limit`",
        ge=1)] = 200
    worktree_max_open_per_user: Annotated[int, setting(
        "open worktrees (not merged or discarded yet, or still being created) one user may "
        "have, user and team worktrees together; one more is refused with 409 "
        "`worktree_limit`",
        ge=1)] = 20
    worktree_max_open_per_team_space: Annotated[int, setting(
        "open team worktrees one team space may have, whoever created them; one more is "
        "refused with 409 `worktree_limit`",
        ge=1)] = 100
    worktree_draft_quota_bytes: Annotated[int, setting(
        "bytes the drafts of one user's open worktrees may hold (each draft's base and "
        "head documents, compact UTF-8 JSON; adding a trunk unit stores two copies of it); "
        "an addition, a new unit or a draft changeset that would go past it is refused "
        "with 409 `draft_quota_exceeded`, nothing stored",
        ge=1, note="512 MiB")] = 512 * 1024 * 1024
    comment_max_threads_per_unit: Annotated[int, setting(
        "comment threads one unit may have; one more is refused with 409 "
        "`comment_thread_limit`", ge=1, le=1_000_000)] = 10000
    comment_max_replies_per_thread: Annotated[int, setting(
        "replies one comment thread may have (its first comment aside); one more is "
        "refused with 409 `comment_reply_limit`", ge=1, le=100_000)] = 1000
    merge_max_conflicts: Annotated[int, setting(
        "conflicts a worktree merge records per unit (its `conflict_count` keeps the true "
        "number; the same list found again by a re-merge is not stored again); a rebase "
        "reports at most this many unresolved",
        ge=1)] = 10_000
    worktree_retention: Annotated[int, setting(
        "a merged or discarded worktree's drafts and merge records are deleted this long "
        "after it was processed (the worktree and its unit list stay; a unit's draft and "
        "its conflicts then answer 410 `draft_purged`)",
        ge=0, note="30 days")] = 2592000
    # units (documents): bounds on what one changeset may build
    unit_max_snapshot_bytes: Annotated[int, setting(
        "largest unit document (compact UTF-8 JSON) a changeset may produce, and the most"
        " a single changeset may copy; beyond it 413 `unit_too_large`, nothing stored (at"
        " least 1024)",
        ge=1024, note="16 MiB")] = 16 * 1024 * 1024
    unit_cache_bytes: Annotated[int, setting(
        "unit documents each API and worker process keeps in memory, measured as their "
        "compact JSON (a document takes several times that as Python objects): a "
        "changeset to a kept document costs what the changeset changes; a document "
        "larger than this is read from its checkpoint for every changeset (`0`: none kept)",
        ge=0, note="256 MiB")] = 256 * 1024 * 1024
    history_session_gap: Annotated[float, setting(
        "`GET /api/units/{unit_id}/revisions?group=session`: consecutive revisions by one "
        "author at most this many seconds apart form one entry, as document editors "
        "show history",
        ge=1.0, le=86400.0, note="5 minutes")] = 300.0
    history_retention: Annotated[int, setting(
        "trunk revisions older than this many seconds are pruned down to the newest "
        "checkpoint before that time (the `prune_unit_history` sweep; the document at "
        "every later revision still reads, `GET …/revisions` says where history starts; "
        "never below a worktree draft's base); `0` keeps a unit's history for its life",
        ge=0, note="0: kept")] = 0
    # the request schema caps a changeset at 10000 operations
    unit_max_changeset_ops: Annotated[int, setting(
        "most operations in one changeset; more is 413 `changeset_too_large` (1–10000)",
        ge=1, le=10000)] = 1000
    # above ~400 the JSON encoders and comparisons near Python's recursion limit
    unit_max_depth: Annotated[int, setting(
        "deepest nesting a changeset may give a unit document (the document is level 1); "
        "deeper is 400 `unit_too_deep` (8–400)",
        ge=8, le=400)] = 400
    export_ttl: Annotated[int, setting(
        "seconds an export's or a takeout's file (`POST /api/units/{unit_id}/exports`, "
        "`POST /api/spaces/{space_id}/exports`, `POST /api/me/exports`) stays "
        "downloadable; then the `expire_exports` sweep deletes it (60–604800)",
        ge=60, le=604800, note="2 hours")] = 7200
    takeout_max_files: Annotated[int, setting(
        "most files (folders, blobs, assets, and two per unit) one takeout may hold; a "
        "larger space fails the `export_takeout` operation with `file_too_complex` "
        "(1–1000000)", ge=1, le=1_000_000)] = 100_000
    takeout_part_size: Annotated[int, setting(
        "bytes a takeout writes per part of its resumable upload (at least 5 MiB); a "
        "worker killed mid-takeout redoes at most the part it was writing; a takeout "
        "too large for 10,000 such parts uses larger ones",
        ge=5 * 1024 * 1024, note="16 MiB")] = 16 * 1024 * 1024
    search_index_delay: Annotated[float, setting(
        "seconds a changed unit waits before its text is extracted for content search "
        "(`GET /api/search?kind=content`), counted from its first change not yet indexed: "
        "a unit edited without pause is indexed once per this delay (0–3600)",
        ge=0.0, le=3600.0)] = 2.0
