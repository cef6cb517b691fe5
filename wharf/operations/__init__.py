"""The operations engine: durable, idempotent cross-system work (DESIGN §3).

- ``service``: submit (idempotency, fingerprint, outbox), read, retry, cancel.
- ``executor``: lease claim, permission re-check, side effects, classified errors,
  completion in one transaction with the product rows.
- ``recovery``: the outbox relay and the sweep that re-enqueues due or orphaned work.
- ``notify``: wake long-polls when an operation finishes.
"""
