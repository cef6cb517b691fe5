"""HTTP resources: plain classes with on_get/on_post; parse, authorize, call the core."""
