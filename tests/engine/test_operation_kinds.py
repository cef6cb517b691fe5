"""The kinds' payload and result Structs store exactly the JSON stored before they existed,
and rows stored then decode into them."""
from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from wharf.accounts import kinds as accounts_kinds
from wharf.assets import kinds as assets_kinds
from wharf.blobs import kinds as blobs_kinds
from wharf.operations import kinds
from wharf.operations.registry import KINDS
from wharf.trash import kinds as trash_kinds
from wharf.units import kinds as units_kinds
from wharf.worktrees import kinds as worktrees_kinds

ID = "0" * 31
# What each kind stored before the Structs (dicts written field by field, in this order).
STORED: list[tuple[type[msgspec.Struct], dict[str, Any]]] = [
    (units_kinds.CreateResourcePayload,
     {"space_id": ID + "1", "parent_id": None, "name": "Plan", "unit_type": "doc",
      "node_id": ID + "2", "resource_id": ID + "3", "unit_id": ID + "4"}),
    (units_kinds.CreateResourceResult,
     {"node_id": ID + "2", "resource_id": ID + "3", "unit_id": ID + "4"}),
    (trash_kinds.PurgeTrashPayload,
     {"batch_id": ID + "5", "root_node_id": ID + "2", "space_id": ID + "1"}),
    (trash_kinds.PurgeTrashPayload,
     {"batch_id": ID + "5", "root_node_id": ID + "2", "space_id": ID + "1",
      "by_retention": True}),
    (trash_kinds.PurgeTrashResult,
     {"batch_id": ID + "5", "nodes_deleted": 3, "resources_deleted": 1, "objects_queued": 1,
      "batches_deleted": 2, "nested_batch_ids": [ID + "6"]}),
    (blobs_kinds.CreateBlobResourcePayload,
     {"session_id": ID + "7", "space_id": ID + "1", "parent_id": ID + "8",
      "filename": "a.csv", "node_id": ID + "2", "resource_id": ID + "3",
      "object_key": ID + "9", "size": 12, "sha256": "ab" * 32, "mime_type": "text/csv",
      "object_etag": "\"e\""}),
    (blobs_kinds.CreateBlobResourceResult, {"node_id": ID + "2", "resource_id": ID + "3"}),
    (blobs_kinds.ReplaceBlobContentPayload,
     {"resource_id": ID + "3", "node_id": ID + "2", "if_match": "\"abc\"",
      "object_key": ID + "9", "size": 0, "sha256": "cd" * 32,
      "mime_type": "application/octet-stream", "object_etag": "\"e\""}),
    (blobs_kinds.ReplaceBlobContentResult, {"resource_id": ID + "3", "etag": "\"abc\""}),
    (assets_kinds.PublishAssetPayload,
     {"upload_id": ID + "a", "asset_id": ID + "b", "unit_id": ID + "4",
      "object_key": "assets/" + ID + "c", "filename": "a.png", "media_type": "image/png",
      "size": 5}),
    (assets_kinds.PublishAssetPayload,
     {"upload_id": ID + "a", "asset_id": ID + "b", "unit_id": ID + "4",
      "object_key": "assets/" + ID + "c", "filename": "a.png", "media_type": "image/png",
      "size": 5, "content_sha256": "ab" * 32}),
    (assets_kinds.PublishAssetResult,  # described as the asset's metadata (AssetDescription)
     {"unit_id": ID + "4", "worktree_id": None, "media_type": "image/png",
      "detected_media_type": "image/png", "size": 5, "sha256": "ab" * 32,
      "content_url": "/api/assets/" + ID + "b/content", "asset_id": ID + "b"}),
    (worktrees_kinds.CreateWorktreePayload,
     {"worktree_id": ID + "d", "kind": "team", "name": "Review", "summary": None,
      "team_space_id": ID + "1", "visibility": "space"}),
    (worktrees_kinds.CreateWorktreeResult, {"worktree_id": ID + "d"}),
    (worktrees_kinds.DiscardWorktreePayload, {"worktree_id": ID + "d", "from_state": "ready"}),
    (worktrees_kinds.DiscardWorktreeResult,
     {"worktree_id": ID + "d", "state": "discarded", "assets_deleted": 2,
      "uploads_cancelled": 1, "intents_discarded": 0}),
    (accounts_kinds.DeleteAccountPayload, {"user_id": ID + "e"}),
    (accounts_kinds.DeleteAccountResult, {"user_id": ID + "e"}),
    (kinds.OperationError, {"code": "cancelled", "message": "Cancelled by the submitter.",
                            "retryable": False}),
    (kinds.OperationError, {"code": "permission_revoked", "message": "gone",
                            "retryable": False, "details": {"field": "x"}}),
]


@pytest.mark.parametrize("shape,stored", STORED)
def test_stored_rows_decode_and_encode_to_the_same_json(shape, stored):
    value = msgspec.convert(stored, shape)
    assert json.dumps(kinds.to_json(value)) == json.dumps(stored)


def test_older_results_read_with_the_fields_added_since():
    old_publish = {"asset_id": ID + "b", "unit_id": ID + "4", "size": 5, "sha256": "ab" * 32,
                   "media_type": "image/png",
                   "content_url": "/api/assets/" + ID + "b/content"}
    result = kinds.read_result("publish_asset", old_publish)
    assert isinstance(result, assets_kinds.PublishAssetResult)
    assert result.worktree_id is None and result.detected_media_type == "image/png"
    in_worktree = kinds.read_result("publish_asset", {**old_publish, "worktree_id": ID + "d"})
    assert isinstance(in_worktree, assets_kinds.PublishAssetResult)
    assert in_worktree.worktree_id == ID + "d"
    purge = kinds.read_result("purge_trash", {"batch_id": ID + "5", "nodes_deleted": 1,
                                              "resources_deleted": 0, "objects_queued": 0})
    assert isinstance(purge, trash_kinds.PurgeTrashResult) and purge.batches_deleted == 1


def test_unknown_keys_in_an_old_row_are_ignored():
    stored = {"batch_id": ID + "5", "root_node_id": ID + "2", "space_id": ID + "1",
              "later": 1}
    assert msgspec.convert(stored, trash_kinds.PurgeTrashPayload).batch_id == ID + "5"


def test_every_kind_has_a_payload_and_a_result():
    assert all(spec.payload and spec.result for spec in KINDS)
    assert set(KINDS.names()) == {
        "create_resource", "purge_trash", "create_blob_resource", "replace_blob_content",
        "publish_asset", "create_worktree", "discard_worktree",
        "add_worktree_unit", "create_worktree_unit", "merge_worktree",
        "activate_worktree_resource", "delete_account", "export_unit", "import_file",
        "export_takeout", "delete_space"}


def test_the_kinds_declare_what_the_engine_and_the_transport_read():
    """What the engine's sets said before each kind declared it (``KindSpec``)."""
    assert {s.name for s in KINDS if s.failure_consumes_input} == {
        "create_blob_resource", "replace_blob_content", "publish_asset", "discard_worktree"}
    assert KINDS.long_kinds() == {"create_blob_resource", "replace_blob_content",
                                  "export_unit", "import_file", "export_takeout"}
    assert KINDS.object_keys() == {"create_blob_resource": ("object_key",),
                                   "replace_blob_content": ("object_key",),
                                   "publish_asset": ("object_key",),
                                   "export_unit": ("object_key",),
                                   "import_file": ("object_key",),
                                   "export_takeout": ("object_key",)}
    for spec in KINDS:  # every payload field that holds an object key is declared
        assert set(spec.object_keys) == {
            f for f in spec.payload.__struct_fields__
            if f == "object_key" or f.endswith("_object_key")}, spec.name
