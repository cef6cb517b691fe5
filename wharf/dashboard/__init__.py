"""The operators' dashboard: the figures behind ``/ops`` and ``wharf status``.
"""
