"""datafactory: the exporter from agent rollouts (Layers 1 and 2) to training records (Layer 3).

Python API (the command ``datafactory`` / ``python -m datafactory`` runs the same pipeline):
``load_rollouts``, ``to_dpo``, ``to_ppo``, ``validate_g3``, ``export``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datafactory.api import export, load_rollouts
    from datafactory.g3 import EvalIndex, EvalItem, G3Report, validate_g3
    from datafactory.manifest import Accounting
    from datafactory.pairs import DpoSkip, to_dpo, to_ppo
    from datafactory.pipeline import RunResult, Settings

# Imported when first used, so the command's entry point starts (and sets its signal
# handlers) before the exporter is loaded.
_WHERE = {
    "export": "datafactory.api",
    "load_rollouts": "datafactory.api",
    "EvalIndex": "datafactory.g3",
    "EvalItem": "datafactory.g3",
    "G3Report": "datafactory.g3",
    "validate_g3": "datafactory.g3",
    "Accounting": "datafactory.manifest",
    "DpoSkip": "datafactory.pairs",
    "to_dpo": "datafactory.pairs",
    "to_ppo": "datafactory.pairs",
    "RunResult": "datafactory.pipeline",
    "Settings": "datafactory.pipeline",
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
