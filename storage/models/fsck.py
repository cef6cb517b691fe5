"""wharf fsck's bytewise key order on PostgreSQL (migration 0012)."""
from sqlalchemy import Index

from storage.models.assets import UnitAsset, UnitAssetUpload
from storage.models.blobs import BlobResource, BlobUploadSession
from storage.models.deletion import ObjectDeletionJob
from storage.models.exports import Export
from storage.models.spaces import UnitResource

#: ``wharf fsck`` reads each object-key column (and ``unit_resources.unit_id``) in keyset
#: pages ``ORDER BY key COLLATE "C"`` when the database's default collation is not
#: bytewise: these indexes serve those pages. PostgreSQL only: SQLite's default order
#: already is bytewise, and its unique indexes serve it.
#: (The collation rides in ``postgresql_ops``, rendered after the column, because
#: PostgreSQL reflects such an index as a plain column index, which is what Alembic's
#: comparison then sees on both sides.)
FSCK_KEY_ORDER_INDEXES: tuple[Index, ...] = tuple(
    Index(f"ix_{column.class_.__tablename__}_{column.key}_c", column,
          postgresql_ops={column.key: 'COLLATE "C"'}).ddl_if(dialect="postgresql")
    for column in (BlobResource.object_key, BlobUploadSession.object_key,
                   UnitAsset.object_key, UnitAssetUpload.object_key,
                   ObjectDeletionJob.object_key, UnitResource.unit_id,
                   Export.object_key))
