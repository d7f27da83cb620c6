"""Code generation of typed models and exporter stubs from the contract."""
