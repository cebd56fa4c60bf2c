"""The event log: event model and registry, Parquet and in-memory stores, Polars projections."""

from storage import payloads as _payloads  # noqa: F401  (fills the registry)
