"""The product database schema: SQLAlchemy 2 typed models, one module per area, all
re-exported here (``from storage.models import User``). Importing this package declares
every table on ``Base.metadata`` (what Alembic compares and ``create_all`` builds). Ids are
generated in Python."""
from storage.models.assets import UnitAsset, UnitAssetUpload
from storage.models.audit import AuditLog
from storage.models.base import ID, TRACE_CONTEXT_LENGTH, Base
from storage.models.blobs import BlobResource, BlobUploadSession
from storage.models.comments import UnitComment, UnitCommentThread
from storage.models.deletion import DeletionRecord, ObjectDeletionJob
from storage.models.device import DeviceAuthorization
from storage.models.exports import Export, TakeoutItem, TakeoutRun
from storage.models.external import ExternalAuthorization, ExternalIdentity
from storage.models.feed import FeedTicket
from storage.models.fsck import FSCK_KEY_ORDER_INDEXES
from storage.models.heartbeats import ProcessHeartbeat
from storage.models.identity import ApiToken, AuthThrottle, LoginSession, PasswordCredential, User
from storage.models.issues import (
    Issue,
    IssueAssignee,
    IssueComment,
    IssueCounter,
    IssueEvent,
    IssueLabel,
    IssueLabelLink,
    IssueNodeRef,
)
from storage.models.operations import Operation, OperationAttempt, OutboxMessage
from storage.models.protection import ContentPermissionCollaborator, ContentPermissionObject
from storage.models.recovery import RecoveryCode
from storage.models.scheduler import ScheduleTick
from storage.models.search import SearchDirty, SearchDocument
from storage.models.sharing import LinkSharing, NodeGrant, RecentOpen, Star, TrashBatch
from storage.models.spaces import Node, Resource, Space, SpaceMember, UnitResource
from storage.models.webhooks import Webhook, WebhookDelivery
from storage.models.worktrees import Worktree, WorktreeEvent, WorktreeNodeIntent, WorktreeUnit

__all__ = [
    "FSCK_KEY_ORDER_INDEXES", "ID", "TRACE_CONTEXT_LENGTH", "ApiToken", "AuditLog",
    "AuthThrottle", "Base", "BlobResource", "BlobUploadSession",
    "ContentPermissionCollaborator", "ContentPermissionObject", "DeletionRecord",
    "DeviceAuthorization", "Export", "ExternalAuthorization", "ExternalIdentity",
    "FeedTicket",
    "Issue",
    "IssueAssignee", "IssueComment", "IssueCounter", "IssueEvent", "IssueLabel",
    "IssueLabelLink", "IssueNodeRef", "LinkSharing", "LoginSession", "Node", "NodeGrant",
    "ObjectDeletionJob", "Operation", "OperationAttempt", "OutboxMessage", "PasswordCredential",
    "ProcessHeartbeat", "RecentOpen", "RecoveryCode", "Resource", "ScheduleTick",
    "SearchDirty", "SearchDocument", "Space",
    "SpaceMember", "Star",
    "TakeoutItem", "TakeoutRun",
    "TrashBatch", "UnitAsset", "UnitAssetUpload", "UnitComment", "UnitCommentThread",
    "UnitResource", "User", "Webhook",
    "WebhookDelivery", "Worktree", "WorktreeEvent", "WorktreeNodeIntent", "WorktreeUnit",
]
