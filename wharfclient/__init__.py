"""Wharf's HTTP client library and its CLI, ``wharf-client``.

Rules:
- HTTP only: nothing here imports the server's packages (``wharf``, ``api``, ``tasks``,
  ``storage``, ``wharfd``); import-linter's ``client-http-only`` contract says so.
- Every operation-creating write carries an Idempotency-Key generated once per write and
  re-sent on every retry of it, so a flaky network never doubles an operation
  (``wharfclient.http``). The state changes the server takes without a key (trash,
  restore, retry, cancel) are never re-sent blindly: after a lost answer the state is
  read back (``wharfclient.state_changes``).
- Transfers stream: no file or blob is ever held whole in memory (``wharfclient.transfer``).
"""
from wharfclient.config import Config, load_config
from wharfclient.http import ApiError, Unreachable, WharfClient, new_key

__all__ = ["ApiError", "Config", "Unreachable", "WharfClient", "load_config", "new_key"]
