"""The event log: event model and registry, Parquet and in-memory stores, Polars projections.

The event types are registered by ``storage/payloads.py``, imported at the registry's first look-up
(``storage/registry.py``): importing ``storage.errors`` does not load them."""
