"""Request, response and query types of the HTTP API (msgspec Structs), one module per area.

These classes are the one schema source: request bodies and query strings are decoded into
them (``api.contract.read_body``/``read_query``), responders answer with them (encoded by
msgspec) and the OpenAPI document's components are generated from them.
"""
