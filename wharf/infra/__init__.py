"""Infrastructure every capability builds on: settings, ids, clock, errors, the
caller's context, pagination, validation, audit, per-user limits, stop signals and
who operates.

The bottom of the core: nothing here imports a capability or the operations engine.
"""
