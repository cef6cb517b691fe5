"""Retention: the schedule (which sweep runs when), the sweeps, and running one tick."""
