"""The feed process's metrics (``/metrics`` on its port; ``WHARF_METRICS_TOKEN`` as the
API's)."""
from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from wharf.observability.metrics import REGISTRY

CONNECTIONS = Gauge("wharf_feed_connections", "Open feed connections", ["transport"],
                    registry=REGISTRY)
DELIVERED = Counter("wharf_feed_events_delivered_total",
                    "Events written to a connection or put on its queue", ["type"],
                    registry=REGISTRY)
DROPPED = Counter("wharf_feed_connections_dropped_total",
                  "Connections closed because their buffer was full (slow consumers)",
                  registry=REGISTRY)
REFUSED = Counter("wharf_feed_connections_refused_total",
                  "Feed connections refused, by reason", ["reason"], registry=REGISTRY)
RESYNCS = Counter("wharf_feed_resyncs_total",
                  "resync events sent to every connection (the bus was unreachable or lost "
                  "events)", registry=REGISTRY)
FANOUT = Histogram("wharf_feed_fanout_seconds",
                   "From an event's cursor time (when the bus stored it) to its frame "
                   "written to, or queued for, its last subscriber", registry=REGISTRY,
                   buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
                            float("inf")))
