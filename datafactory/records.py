"""The record boundary: every record the exporter reads or writes passes through the models
generated from the contract (``datafactory.wire``, made by ``wiregate codegen``).

Nothing else in the package names the generated module, so a regenerated contract shows up
here and, through mypy, wherever a field the exporter uses has changed.
"""

from __future__ import annotations

from datafactory.wire import (
    BuildResult,
    DpoRecord,
    DpoTrainingRecord,
    LossWeightTokens,
    Message,
    PpoRecord,
    PpoTrainingRecord,
    Provenance,
    RolloutBranchRecord,
    RolloutTreeRecord,
    ToolCall,
    ToolCallEvent,
    ToolCallFunction,
    ToolEventData,
    TrainingRecord,
    WireError,
    from_wire,
    to_wire,
)

__all__ = [
    "BuildResult",
    "DpoRecord",
    "DpoTrainingRecord",
    "LossWeightTokens",
    "Message",
    "PpoRecord",
    "PpoTrainingRecord",
    "Provenance",
    "RolloutBranchRecord",
    "RolloutTreeRecord",
    "ToolCall",
    "ToolCallEvent",
    "ToolCallFunction",
    "ToolEventData",
    "TrainingRecord",
    "WireError",
    "from_wire",
    "to_wire",
]
