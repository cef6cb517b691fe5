"""Completion webhooks: users register endpoints; when an operation they submitted
finishes, a signed delivery is written in the finishing transaction and sent by workers.

- ``events``: the event types (declared once) and the payload.
- ``addresses``: which URLs may be called (SSRF rules), checked at registration and again
  at each delivery, connecting to the very address checked.
- ``signing``: Standard Webhooks signatures.
- ``service``: register, list, delete; ``announce`` writes deliveries at completion.
- ``delivery``: sending one delivery, retrying, disabling an endpoint that keeps failing.
"""
