"""Sharing: per-node grants and public links.
"""
