"""Dramatiq broker setup, actors, the outbox relay and the scheduler. Thin: call the core."""
