"""datafactory: the exporter from agent rollouts (Layers 1 and 2) to training records (Layer 3).

Python API (the command ``datafactory`` / ``python -m datafactory`` runs the same pipeline):
``load_rollouts``, ``to_dpo``, ``to_ppo``, ``validate_g3``, ``export``.
"""

from __future__ import annotations

from datafactory.api import export, load_rollouts
from datafactory.g3 import EvalIndex, EvalItem, G3Report, validate_g3
from datafactory.manifest import Accounting
from datafactory.pairs import DpoSkip, to_dpo, to_ppo
from datafactory.pipeline import RunResult, Settings

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
