"""Wharf core: configuration, ids, errors and one module per capability.

Plain Python: nothing in this package imports Falcon or Dramatiq.
"""
