"""The Falcon WSGI app: routing, auth, problem+json errors, the OpenAPI document."""
