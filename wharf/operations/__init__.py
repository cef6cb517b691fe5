"""The operations engine: durable, idempotent cross-system work (DESIGN §3).

- ``registry``: the operation kinds, each declared by its capability (``KindSpec``);
  ``kinds``: what every kind's payload and result share, the error shape.
- ``service``: submit (outbox), read, retry, cancel; ``reading``: an operation as its
  readers see it (``OperationRecord``); ``idempotency``: the keys' rules (also upload
  sessions').
- ``executor``: a batch at a time: ``claiming`` (the lease claim), permission re-check,
  side effects (``leases``: kept meanwhile), completion in one transaction with the
  product rows, ``outcomes`` (classified errors: retry or fail).
- ``finish``: the one terminal writer.
- ``recovery``: the outbox relay and the sweep that re-enqueues due or orphaned work.
- ``notify``: wake long-polls when an operation finishes.
"""
