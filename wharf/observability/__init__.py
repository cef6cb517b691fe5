"""What a running process tells its operators: structured logs, traces, Prometheus
metrics and heartbeats.

Above :mod:`wharf.infra`, below the operations engine and every capability.
"""
