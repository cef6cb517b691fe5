"""Alembic environment and versions, and the startup ``prepare`` step."""
