"""The record boundary: every record the exporter reads or writes passes through the types
generated from the contract (``datafactory.wire``, made by ``wiregate codegen``).

Two generated views of each record type:

* the msgspec Structs (``RolloutBranchRecord``, ...) with ``from_wire``/``to_wire``: the typed
  Python API (``load_rollouts`` yields them, ``to_dpo``/``to_ppo`` take and return them).
  msgspec decodes them from JSON bytes in C: ``decode_branch`` and its siblings below are the
  fast path of acceptance;
* the TypedDicts (``...Json`` below): the same records as the parsed JSON itself, at no run-time
  cost, while mypy still checks every key and value type the exporter reads or writes.

Nothing else in the package names the generated modules, so a regenerated contract shows up
here and, through mypy, wherever a field the exporter uses has changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import GenericAlias
from typing import Any, TypeAlias, TypeVar

import msgspec
import orjson
from msgspec import UNSET

from datafactory.wire import (
    INEXACT,
    NO_EXTRA,
    BranchFacts,
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
    SftTrainingRecord,
    ToolCall,
    ToolCallEvent,
    ToolCallFunction,
    ToolEventData,
    TrainingRecord,
    TrlKtoRecord,
    TrlPreferenceRecord,
    TrlPromptRecord,
    TrlSftRecord,
    WireError,
    WireExtra,
    decode,
    encode,
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
BranchFactsJson: TypeAlias = _training_json.BranchFacts

__all__ = [
    "CAMELCASE_EVENTS",
    "NO_EXTRA",
    "PRODUCER_EVENT_KEYS",
    "BranchFacts",
    "BranchFactsJson",
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
    "SftTrainingRecord",
    "ToolCall",
    "ToolCallEvent",
    "ToolCallFunction",
    "ToolEventData",
    "TrainingRecord",
    "TrlKtoRecord",
    "TrlPreferenceRecord",
    "TrlPromptRecord",
    "TrlSftRecord",
    "WireError",
    "WireExtra",
    "decode",
    "decode_branch",
    "decode_branch_forms",
    "decode_dpo_record",
    "decode_dpo_training",
    "decode_ppo_record",
    "decode_ppo_training",
    "decode_produced_branch",
    "decode_sft_training",
    "decode_tree",
    "decode_trl_kto",
    "decode_trl_preference",
    "decode_trl_prompt",
    "decode_trl_sft",
    "encode",
    "fast_decoder",
    "from_wire",
    "to_wire",
]

_T = TypeVar("_T", bound=msgspec.Struct)

# orjson, which the validating path parses with, reads an integer beyond 64 bits as a float
# and writes no value nested 254 deep: such a line is the validating path's to judge. A run of
# 19 digits (cheap to look for) is rare; only then is it read as a number: an integer of 19
# digits or more, not a fraction's digits (anywhere, inside a string too: that only defers).
# One pass maps each digit to "0" and each opening bracket to "{", the rest to " ".
_SHAPE = bytes(48 if 48 <= c <= 57 else 123 if c in b"{[" else 32 for c in range(256))
_WIDE_RUN = b"0" * 19
_WIDE_INTEGER = re.compile(rb"(?<![0-9.])[0-9]{19,}(?![0-9.eE])")
_NESTING = 254


def fast_decoder(cls: type[_T]) -> Callable[[bytes], _T | None]:
    """The fast path of acceptance for one record type: ``decode(line)`` is the record when
    msgspec accepts the JSON line as ``cls`` (every constraint of the contract held, no key
    the schema does not name), else None: not accepted here, ask the JSON Schema validator,
    which judges every rejection. What it accepts, the validator accepts, as the same value
    (``to_wire(record) == orjson.loads(line)``; tests/datafactory/test_fast_path.py).

    It defers (None) on: an unknown key of an open object (kept by ``from_wire``), ``1.0``
    where an integer is due, a key given twice whose first value does not fit, invalid JSON
    or UTF-8, an integer of 19 digits or more (or 19 digits in a string), 254 brackets or
    more, and every line of a record type whose Structs cannot carry each of its schema's
    constraints (``INEXACT``)."""
    if any(base.__name__ in INEXACT for base in cls.__mro__):
        return _never
    decoder = msgspec.json.Decoder(cls)

    def fast_decode(line: bytes) -> _T | None:
        if not _decodable(line):
            return None
        try:
            return decoder.decode(line)
        except _DEFERRED:  # ValidationError is a DecodeError
            return None

    return fast_decode


_DEFERRED = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)


def _decodable(line: bytes) -> bool:
    """False for a line the typed decoders leave to the validating path whatever its type:
    an integer of 19 digits or more (or such a run of digits anywhere), or 254 brackets."""
    shaped = line.translate(_SHAPE)
    if _WIDE_RUN in shaped and _WIDE_INTEGER.search(line):
        return False
    return shaped.count(b"{") < _NESTING


def _never(_line: bytes) -> None:
    return None


decode_branch = fast_decoder(RolloutBranchRecord)


def _as_produced(cls: type[msgspec.Struct], fields: list[Any], **config: Any) -> Any:
    """A subclass of ``cls`` with ``fields`` declared again: the same type to every reader of
    its attributes, read from other keys (``rename`` covers only the fields it declares)."""
    name = f"{cls.__name__}AsProduced"
    return msgspec.defstruct(name, fields, bases=(cls,), kw_only=True, **config)


#: The producer's camelCase keys of tool-event data (``{"toolName", "args", "callId"}``) by
#: the contract's names, and the repair that renames them (``datafactory.repair``).
PRODUCER_EVENT_KEYS = {"name": "toolName", "call_id": "callId"}
CAMELCASE_EVENTS = "tool_call:camelcase_data"

# Such events read under the producer's keys, into the canonical types: a record whose one
# repair that would be takes the fast path too; any other repair still defers.
_ProducedEventData = _as_produced(
    ToolEventData,
    [(f.name, f.type, f.default) for f in msgspec.structs.fields(ToolEventData)],
    rename=PRODUCER_EVENT_KEYS,
)
_ProducedEvent = _as_produced(ToolCallEvent, [("data", _ProducedEventData)])
_ProducedBranch = _as_produced(
    RolloutBranchRecord, [("tool_call_sequence", GenericAlias(list, (_ProducedEvent,)))]
)
_PRODUCER_KEYS = tuple(orjson.dumps(key) for key in PRODUCER_EVENT_KEYS.values())
_decode_produced: Callable[[bytes], RolloutBranchRecord | None] = fast_decoder(_ProducedBranch)


def decode_produced_branch(line: bytes) -> RolloutBranchRecord | None:
    """``decode_branch`` of a line whose tool events carry the producer's camelCase keys, and
    only those (then its one repair is ``CAMELCASE_EVENTS``); None otherwise, at the cost of a
    look for those keys when the line has none."""
    if not any(key in line for key in _PRODUCER_KEYS):
        return None
    return _decode_produced(line)


_exact_branch = not any(base.__name__ in INEXACT for base in RolloutBranchRecord.__mro__)
_branch_decoder = msgspec.json.Decoder(RolloutBranchRecord)
_produced_decoder = msgspec.json.Decoder(_ProducedBranch)


def decode_branch_forms(
    line: bytes, produced_first: bool = False
) -> tuple[RolloutBranchRecord | None, bool]:
    """(``decode_branch(line)``, False) when that is a record; else when the line is in the
    producer's form (``decode_produced_branch``), (its record, True); else (None, False).
    The line is screened once for both. A line with a producer's key in an event's data is
    never of the canonical form (an unknown key defers), and one without is canonical
    whichever decoder reads it; ``produced_first``: try the producer's decoder first (the
    line before was of that form: a file is mostly of one)."""
    if not _exact_branch or not _decodable(line):
        return None, False
    if produced_first:
        try:
            record = _produced_decoder.decode(line)
        except _DEFERRED:
            pass
        else:
            if _producer_keys_used(record):
                return record, True
    try:
        return _branch_decoder.decode(line), False
    except _DEFERRED:
        pass
    if not produced_first and any(key in line for key in _PRODUCER_KEYS):
        try:
            record = _produced_decoder.decode(line)
        except _DEFERRED:
            pass
        else:
            return record, _producer_keys_used(record)
    return None, False


def _producer_keys_used(record: RolloutBranchRecord) -> bool:
    """Whether an event's data of a record the producer's decoder read holds one of its keys
    (``toolName`` and ``callId`` are read into ``name`` and ``call_id``)."""
    return any(
        event.data.name is not UNSET or event.data.call_id is not UNSET
        for event in record.tool_call_sequence
    )


decode_tree = fast_decoder(RolloutTreeRecord)
decode_dpo_record = fast_decoder(DpoRecord)
decode_ppo_record = fast_decoder(PpoRecord)
decode_dpo_training = fast_decoder(DpoTrainingRecord)
decode_ppo_training = fast_decoder(PpoTrainingRecord)
decode_sft_training = fast_decoder(SftTrainingRecord)
decode_trl_preference = fast_decoder(TrlPreferenceRecord)
decode_trl_prompt = fast_decoder(TrlPromptRecord)
decode_trl_kto = fast_decoder(TrlKtoRecord)
decode_trl_sft = fast_decoder(TrlSftRecord)
