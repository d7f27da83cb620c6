"""The one default diff policy of ``diff``, ``drift`` and ``check``.

Strict (set semantics) by default: a change is compatible only when every record one side
accepts the other accepts too. ``lenient`` is an explicit choice (``--policy``, or
``policy`` in mirrors.toml), and every summary line says which policy judged.
"""

from __future__ import annotations

__all__ = ["DEFAULT_POLICY"]

DEFAULT_POLICY = "strict"
