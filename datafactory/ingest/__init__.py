"""The ingest endpoint for the eliza rollout plugin's HTTP sink (``datafactory serve``): the
contract enforced at the door, every acknowledged record stored durably first.

``app`` (the ASGI application), ``store`` (SQLite in WAL mode), ``writer`` (group commit),
``metrics`` (Prometheus text), ``serve`` (uvicorn, signals) and ``cli`` (``datafactory serve``
and ``datafactory store``). The exporter reads a store with ``--input store:DIR``.
"""
