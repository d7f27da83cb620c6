"""wiregate: the rollout-wire contract's validator, schema diff and drift gate."""

__version__ = "0.1.0"
