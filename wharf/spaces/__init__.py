"""Spaces and nodes: personal and team spaces, members and roles, the node tree,
and the access resolver every capability asks (who may do what to a node).
"""
