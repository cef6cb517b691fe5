"""Persistence: the SQLAlchemy schema, engine/session setup, the BlobStore and the UnitStore."""
