"""Trash: moving nodes to the trash, restoring them and purging them for good.
"""
