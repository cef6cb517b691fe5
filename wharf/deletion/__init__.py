"""Deletion: object deletion jobs, the deletion ledger and the reference check behind them.
"""
