"""Accounts: account deletion (requested, carried out by an operation) and what it reaches.
"""
