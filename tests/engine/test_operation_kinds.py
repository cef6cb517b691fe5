"""The kinds' payload and result Structs store exactly the JSON stored before they existed,
and rows stored then decode into them."""
from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from wharf.operations import kinds

ID = "0" * 31
# What each kind stored before the Structs (dicts written field by field, in this order).
STORED: list[tuple[type[msgspec.Struct], dict[str, Any]]] = [
    (kinds.CreateResourcePayload,
     {"space_id": ID + "1", "parent_id": None, "name": "Plan", "unit_type": "doc",
      "node_id": ID + "2", "resource_id": ID + "3", "unit_id": ID + "4"}),
    (kinds.CreateResourceResult,
     {"node_id": ID + "2", "resource_id": ID + "3", "unit_id": ID + "4"}),
    (kinds.PurgeTrashPayload,
     {"batch_id": ID + "5", "root_node_id": ID + "2", "space_id": ID + "1"}),
    (kinds.PurgeTrashPayload,
     {"batch_id": ID + "5", "root_node_id": ID + "2", "space_id": ID + "1",
      "by_retention": True}),
    (kinds.PurgeTrashResult,
     {"batch_id": ID + "5", "nodes_deleted": 3, "resources_deleted": 1, "objects_queued": 1,
      "batches_deleted": 2, "nested_batch_ids": [ID + "6"]}),
    (kinds.CreateBlobResourcePayload,
     {"session_id": ID + "7", "space_id": ID + "1", "parent_id": ID + "8",
      "filename": "a.csv", "node_id": ID + "2", "resource_id": ID + "3",
      "object_key": ID + "9", "size": 12, "sha256": "ab" * 32, "mime_type": "text/csv",
      "object_etag": "\"e\""}),
    (kinds.CreateBlobResourceResult, {"node_id": ID + "2", "resource_id": ID + "3"}),
    (kinds.ReplaceBlobContentPayload,
     {"resource_id": ID + "3", "node_id": ID + "2", "if_match": "\"abc\"",
      "object_key": ID + "9", "size": 0, "sha256": "cd" * 32,
      "mime_type": "application/octet-stream", "object_etag": "\"e\""}),
    (kinds.ReplaceBlobContentResult, {"resource_id": ID + "3", "etag": "\"abc\""}),
    (kinds.PublishAssetPayload,
     {"upload_id": ID + "a", "asset_id": ID + "b", "unit_id": ID + "4",
      "object_key": "assets/" + ID + "c", "filename": "a.png", "media_type": "image/png",
      "size": 5}),
    (kinds.PublishAssetPayload,
     {"upload_id": ID + "a", "asset_id": ID + "b", "unit_id": ID + "4",
      "object_key": "assets/" + ID + "c", "filename": "a.png", "media_type": "image/png",
      "size": 5, "content_sha256": "ab" * 32}),
    (kinds.PublishAssetResult,  # described as the asset's metadata (AssetDescription)
     {"unit_id": ID + "4", "worktree_id": None, "media_type": "image/png",
      "detected_media_type": "image/png", "size": 5, "sha256": "ab" * 32,
      "content_url": "/api/assets/" + ID + "b/content", "asset_id": ID + "b"}),
    (kinds.CreateWorktreePayload,
     {"worktree_id": ID + "d", "kind": "team", "name": "Review", "summary": None,
      "team_space_id": ID + "1", "visibility": "space"}),
    (kinds.CreateWorktreeResult, {"worktree_id": ID + "d"}),
    (kinds.DiscardWorktreePayload, {"worktree_id": ID + "d", "from_state": "ready"}),
    (kinds.DiscardWorktreeResult,
     {"worktree_id": ID + "d", "state": "discarded", "assets_deleted": 2,
      "uploads_cancelled": 1, "intents_discarded": 0}),
    (kinds.DeleteAccountPayload, {"user_id": ID + "e"}),
    (kinds.DeleteAccountResult, {"user_id": ID + "e"}),
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
    assert isinstance(result, kinds.PublishAssetResult)
    assert result.worktree_id is None and result.detected_media_type == "image/png"
    in_worktree = kinds.read_result("publish_asset", {**old_publish, "worktree_id": ID + "d"})
    assert isinstance(in_worktree, kinds.PublishAssetResult)
    assert in_worktree.worktree_id == ID + "d"
    purge = kinds.read_result("purge_trash", {"batch_id": ID + "5", "nodes_deleted": 1,
                                              "resources_deleted": 0, "objects_queued": 0})
    assert isinstance(purge, kinds.PurgeTrashResult) and purge.batches_deleted == 1


def test_unknown_keys_in_an_old_row_are_ignored():
    stored = {"batch_id": ID + "5", "root_node_id": ID + "2", "space_id": ID + "1",
              "later": 1}
    assert msgspec.convert(stored, kinds.PurgeTrashPayload).batch_id == ID + "5"


def test_every_kind_has_a_payload_and_a_result():
    assert set(kinds.PAYLOADS) == set(kinds.RESULTS) == {
        "create_resource", "purge_trash", "create_blob_resource", "replace_blob_content",
        "publish_asset", "create_worktree", "discard_worktree",
        "add_worktree_unit", "create_worktree_unit", "merge_worktree",
        "activate_worktree_resource", "delete_account"}
