"""datafactory: the exporter from agent rollouts (Layers 1 and 2) to training records (Layer 3).

Python API (the command ``datafactory`` / ``python -m datafactory`` runs the same pipeline):
``load_rollouts``, ``to_dpo``, ``to_ppo``, ``validate_g3``, ``export``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datafactory.api import export, load_rollouts
    from datafactory.contamination import EvalIndex, EvalItem, G3Report, validate_g3
    from datafactory.manifest import Accounting
    from datafactory.pairs import DpoSkip, to_dpo, to_ppo
    from datafactory.run import RunResult
    from datafactory.settings import Settings

# Imported when first used, so the command's entry point starts (and sets its signal
# handlers) before the exporter is loaded.
_WHERE = {
    "export": "datafactory.api",
    "load_rollouts": "datafactory.api",
    "EvalIndex": "datafactory.contamination",
    "EvalItem": "datafactory.contamination",
    "G3Report": "datafactory.contamination",
    "validate_g3": "datafactory.contamination",
    "Accounting": "datafactory.manifest",
    "DpoSkip": "datafactory.pairs",
    "to_dpo": "datafactory.pairs",
    "to_ppo": "datafactory.pairs",
    "RunResult": "datafactory.run",
    "Settings": "datafactory.settings",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'datafactory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Accounting",
    "DpoSkip",
    "EvalIndex",
    "EvalItem",
    "G3Report",
    "RunResult",
    "Settings",
    "export",
    "load_rollouts",
    "to_dpo",
    "to_ppo",
    "validate_g3",
]
