"""The record boundary: every record the exporter reads or writes passes through the types
generated from the contract (``datafactory.wire``, made by ``wiregate codegen``).

Two generated views of each record type:

* the dataclasses (``RolloutBranchRecord``, ...) with ``from_wire``/``to_wire``: the typed
  Python API (``load_rollouts`` yields them, ``to_dpo``/``to_ppo`` take and return them);
* the TypedDicts (``...Json`` below): the same records as the parsed JSON itself. The export
  run's hot path works on these: building ~30 dataclass objects per record cost more than all
  the rest of the run together, and a TypedDict costs nothing at run time while mypy still
  checks every key and value type the exporter reads or writes.

Nothing else in the package names the generated modules, so a regenerated contract shows up
here and, through mypy, wherever a field the exporter uses has changed.
"""

from __future__ import annotations

from typing import TypeAlias

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
from datafactory.wire import rollout_wire_dicts as _rollout_json
from datafactory.wire import training_record_dicts as _training_json

# The JSON shapes (TypedDicts) of the records, named after their dataclass with ``Json``.
BranchJson: TypeAlias = _rollout_json.RolloutBranchRecord
EventJson: TypeAlias = _rollout_json.ToolCallEvent
EventDataJson: TypeAlias = _rollout_json.ToolEventData
DpoRecordJson: TypeAlias = _rollout_json.DpoRecord
PpoRecordJson: TypeAlias = _rollout_json.PpoRecord
MessageJson: TypeAlias = _training_json.Message
ProvenanceJson: TypeAlias = _training_json.Provenance
DpoTrainingJson: TypeAlias = _training_json.DpoTrainingRecord
PpoTrainingJson: TypeAlias = _training_json.PpoTrainingRecord

__all__ = [
    "BranchJson",
    "BuildResult",
    "DpoRecord",
    "DpoRecordJson",
    "DpoTrainingJson",
    "DpoTrainingRecord",
    "EventDataJson",
    "EventJson",
    "LossWeightTokens",
    "Message",
    "MessageJson",
    "PpoRecord",
    "PpoRecordJson",
    "PpoTrainingJson",
    "PpoTrainingRecord",
    "Provenance",
    "ProvenanceJson",
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
