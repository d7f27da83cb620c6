"""The export run's stages, in the order data moves through them: ``load`` (per chunk of
input lines), ``group`` (the spill that brings each rollout together), ``build`` (per
partition of rollouts)."""
