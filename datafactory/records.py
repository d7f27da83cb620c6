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
from dataclasses import dataclass
from types import GenericAlias
from typing import Any, Literal, TypeAlias, TypeVar

import msgspec
import orjson
from msgspec import UNSET, UnsetType

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
    "BUILD_STATUS_ALIAS",
    "CAMELCASE_BUILD",
    "CAMELCASE_EVENTS",
    "INT64_RANGE",
    "NO_EXTRA",
    "PRODUCER_BUILD_KEYS",
    "PRODUCER_EVENT_KEYS",
    "STATUS_ALIASES",
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
    "may_hold_wide_integer",
    "to_wire",
]

_T = TypeVar("_T", bound=msgspec.Struct)

# orjson reads an integer beyond 64 bits as a float, which would change it silently, and
# writes no value nested 254 deep. Such an integer has at least 19 digits: a run that long
# (cheap to look for, rare in real records) is the one sign of it, and only then is the text
# read as numbers. One pass maps each digit to "0" and each opening bracket to "{", the rest
# to " ": it finds the runs and counts the nesting at once.
_SHAPE = bytes(48 if 48 <= c <= 57 else 123 if c in b"{[" else 32 for c in range(256))
_WIDE_RUN = b"0" * 19
_WIDE_INTEGER = re.compile(rb"(?<![0-9.])[0-9]{19,}(?![0-9.eE])")
_NESTING = 254
INT64_RANGE = range(-(2**63), 2**64)  # the integers orjson reads and writes exactly


def may_hold_wide_integer(raw: bytes) -> bool:
    """Whether the JSON text has a run of 19 digits (anywhere, a string's too): only then can
    it hold an integer orjson does not read exactly."""
    return _WIDE_RUN in raw.translate(_SHAPE)


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
    if not _exact_type(cls):
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


def _exact_type(cls: type[msgspec.Struct]) -> bool:
    """Whether ``cls`` (or the type it reads as) carries every constraint of its schema."""
    return not any(base.__name__ in INEXACT for base in cls.__mro__)


def _decodable(line: bytes) -> bool:
    """False for a line the typed decoders leave to the validating path whatever its type:
    an integer of 19 digits or more (not a fraction's digits; a string's too, which only
    defers), or 254 brackets. ``may_hold_wide_integer`` and the nesting in one pass."""
    shaped = line.translate(_SHAPE)
    if _WIDE_RUN in shaped and _WIDE_INTEGER.search(line):
        return False
    return shaped.count(b"{") < _NESTING


def _never(_line: bytes) -> None:
    return None


decode_branch = fast_decoder(RolloutBranchRecord)


def _as_produced(
    cls: type[msgspec.Struct], fields: list[Any], form: str = "", **config: Any
) -> Any:
    """A subclass of ``cls`` with ``fields`` declared again: the same type to every reader of
    its attributes, read from other keys (``rename`` covers only the fields it declares)."""
    name = f"{cls.__name__}AsProduced{form}"
    return msgspec.defstruct(name, fields, bases=(cls,), kw_only=True, **config)


def _fields(cls: type[msgspec.Struct], **types: Any) -> list[Any]:
    """``cls``'s fields for ``_as_produced``, the types of those named in ``types`` replaced."""
    return [
        (f.name, types.get(f.name, f.type))
        if f.required
        else (f.name, types.get(f.name, f.type), f.default)
        for f in msgspec.structs.fields(cls)
    ]


#: The producer's camelCase keys of tool-event data (``{"toolName", "args", "callId"}``) and
#: of a build result, by the contract's names; the build statuses it writes, by the
#: contract's; and the repairs that make them canonical (``datafactory.repair``).
PRODUCER_EVENT_KEYS = {"name": "toolName", "call_id": "callId"}
PRODUCER_BUILD_KEYS = {"exit_code": "exitCode", "ran_at_ms": "ranAtMs"}
STATUS_ALIASES = {"success": "pass", "failed": "fail"}
CAMELCASE_EVENTS = "tool_call:camelcase_data"
CAMELCASE_BUILD = "build_result:camelcase_keys"
BUILD_STATUS_ALIAS = "build_result:status_alias"

# The producer's forms read into the canonical types: a branch whose only repairs would be
# these takes the fast path too (its outputs do not read ``build_result``); any other repair,
# or a mix of forms inside one record, still defers.
_ProducedEventData = _as_produced(ToolEventData, _fields(ToolEventData), rename=PRODUCER_EVENT_KEYS)
_ProducedEvent = _as_produced(ToolCallEvent, [("data", _ProducedEventData)])
_STATUS = next(f for f in msgspec.structs.fields(BuildResult) if f.name == "status")
_AnyStatus = _STATUS.type | Literal[tuple(STATUS_ALIASES)]
_BUILDS: dict[str, Any] = {
    "": None,
    "status": _as_produced(BuildResult, _fields(BuildResult, status=_AnyStatus), "Status"),
    "camel": _as_produced(
        BuildResult, _fields(BuildResult, status=_AnyStatus), "Camel", rename=PRODUCER_BUILD_KEYS
    ),
}


@dataclass(frozen=True)
class _Form:
    """One form of a branch line: the producer's tool events or not, and its build result's
    form ("": the contract's, "status": the producer's statuses, "camel": its keys too)."""

    events: bool
    build: str
    decoder: msgspec.json.Decoder[RolloutBranchRecord]


def _form(events: bool, build: str) -> _Form:
    fields: list[Any] = []
    if events:
        fields.append(("tool_call_sequence", GenericAlias(list, (_ProducedEvent,))))
    if build:
        fields.append(("build_result", _BUILDS[build] | None | UnsetType, UNSET))
    cls = _as_produced(RolloutBranchRecord, fields, f"{int(events)}{build}") if fields else None
    return _Form(events, build, msgspec.json.Decoder(cls or RolloutBranchRecord))


#: Every form, the contract's first (index 0).
_FORMS = [_form(events, build) for events in (False, True) for build in _BUILDS]
_EXACT_BRANCH = _exact_type(RolloutBranchRecord)
_PRODUCER_KEYS = tuple(orjson.dumps(key) for key in PRODUCER_EVENT_KEYS.values())
_BUILD_KEYS = tuple(orjson.dumps(key) for key in PRODUCER_BUILD_KEYS.values())
_ALIASES = tuple(orjson.dumps(status) for status in STATUS_ALIASES)


def decode_branch_forms(
    line: bytes, first: int = 0
) -> tuple[RolloutBranchRecord | None, int, tuple[str, ...]]:
    """(record, form, repairs) of a branch line that is valid as it is (form 0, no repair) or
    in the producer's forms (its tool events' keys, its build result's keys and statuses:
    the repairs they stand for, each as ``datafactory.repair`` counts it); (None, 0, ()) when
    none decodes it: the validating path judges. The line is screened once for all.
    ``first``: the form to try first (the line before's: a file is mostly of one form).
    A record that a producer's form reads but holds none of its keys or statuses (no tool
    event, say) is canonical: the contract's form reads it too."""
    if not _EXACT_BRANCH or not _decodable(line):
        return None, 0, ()
    if first and (read := _read_as(first, line)):
        return read
    try:
        return _FORMS[0].decoder.decode(line), 0, ()
    except _DEFERRED:
        pass
    form = _form_of(line)
    if form and form != first and (read := _read_as(form, line)):
        return read
    return None, 0, ()


def _read_as(form: int, line: bytes) -> tuple[RolloutBranchRecord, int, tuple[str, ...]] | None:
    """The line read in a producer's ``form``, when it decodes and holds one of the form's
    keys or statuses (else it is canonical, or not of this form)."""
    try:
        record = _FORMS[form].decoder.decode(line)
    except _DEFERRED:
        return None
    repairs = _repairs(_FORMS[form], record)
    return (record, form, repairs) if repairs else None


def _form_of(line: bytes) -> int:
    """The form the line's bytes suggest (a key or status may also be inside a text: the
    decoder tells)."""
    events = any(key in line for key in _PRODUCER_KEYS)
    if any(key in line for key in _BUILD_KEYS):
        build = "camel"
    elif any(status in line for status in _ALIASES):
        build = "status"
    else:
        build = ""
    return next(n for n, f in enumerate(_FORMS) if (f.events, f.build) == (events, build))


def _repairs(form: _Form, record: RolloutBranchRecord) -> tuple[str, ...]:
    """The repairs the validating path counts for a record ``form`` read."""
    repairs: list[str] = []
    if form.events and any(
        event.data.name is not UNSET or event.data.call_id is not UNSET
        for event in record.tool_call_sequence
    ):
        repairs.append(CAMELCASE_EVENTS)
    build = record.build_result
    if form.build and isinstance(build, BuildResult):
        if form.build == "camel" and (build.exit_code is not UNSET or build.ran_at_ms is not UNSET):
            repairs.append(CAMELCASE_BUILD)
        if build.status in STATUS_ALIASES:
            repairs.append(BUILD_STATUS_ALIAS)
    return tuple(repairs)


def decode_produced_branch(line: bytes) -> RolloutBranchRecord | None:
    """``decode_branch`` of a line whose tool events carry the producer's camelCase keys, and
    only those (then its one repair is ``CAMELCASE_EVENTS``); None otherwise."""
    record, _, repairs = decode_branch_forms(line, _EVENTS_ONLY)
    return record if repairs == (CAMELCASE_EVENTS,) else None


_EVENTS_ONLY = next(n for n, f in enumerate(_FORMS) if f.events and not f.build)


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
