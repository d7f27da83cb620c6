"""Load stage, part 2: one raw line -> a canonical record, or the reason it is rejected.

Real producers disagree on details. These are repaired into the canonical form of the
contract, and each repair is counted by kind (once per record and kind):

* ``tool_call_sequence`` entries (the four shapes producers write):
  1. ``{"event", "data": {"name", "args", "call_id"}}``: canonical, kept as it is;
  2. ``{"channel", "event", "data": {"toolName", "args", "callId"}}``: data keys renamed
     (``tool_call:camelcase_data``);
  3. ``{"tool_name", "arguments", "result", "error"}`` and
  4. ``{"tool_name", "args", "result", "timestamp_ms", "state_changing"}``: one flat entry
     per call, split into a ``tool_call`` and a ``tool_result`` event
     (``tool_call:flat_arguments``, ``tool_call:flat_args``); other keys stay in the call's data.
     Arguments given as the JSON text of an object (OpenAI's form) are decoded
     (``tool_call:arguments_json_text``); text that encodes no object (or not exactly: a key twice,
     NaN, a number beyond a double or an integer beyond 64 bits) stays, and is rejected.
* ``build_result``: camelCase keys (``exitCode``, ``ranAtMs``) renamed
  (``build_result:camelcase_keys``); status ``success``/``failed`` -> ``pass``/``fail``
  (``build_result:status_alias``); no status but an integer exit code -> ``pass`` when it is
  0, else ``fail`` (``build_result:status_from_exit_code``).
* A branch record without ``total_score`` gets the RolloutRanker formula
  (``total_score:computed``); one without ``rank`` is ranked with its rollout
  (``rank:computed``), and so is one whose ``rank`` is not an integer >= 1 (a 0-based rank:
  ``rank:out_of_range``): the scores decide the ranking, never the given rank.
* A ``total_score`` outside [0, MAX_TOTAL] is kept, and counted (``reward:clamped``): its
  PPO reward is clamped to [0, 1].

Anything else that breaks the contract is rejected, never guessed at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeGuard

import orjson

from datafactory.rank import MAX_TOTAL
from datafactory.records import (
    BUILD_STATUS_ALIAS,
    CAMELCASE_BUILD,
    CAMELCASE_EVENTS,
    INT64_RANGE,
    PRODUCER_BUILD_KEYS,
    PRODUCER_EVENT_KEYS,
    STATUS_ALIASES,
    may_hold_wide_integer,
)
from wiregate.exactjson import unique_members
from wiregate.jsonl import beyond_reach
from wiregate.record_validator import ValidatorSet, guess_record_type

__all__ = [
    "BRANCH",
    "INPUT_TYPES",
    "LAYER2_DPO",
    "LAYER2_PPO",
    "SFT",
    "TREE",
    "Normalised",
    "Reject",
    "formula_total",
    "json_object",
    "normalise_line",
    "normalise_value",
    "read_exactly",
    "wide_integer",
]

BRANCH, TREE, LAYER2_DPO, LAYER2_PPO, SFT = (
    "RolloutBranchRecord",
    "RolloutTreeRecord",
    "DpoRecord",
    "PpoRecord",
    "SftTrainingRecord",
)
INPUT_TYPES = (BRANCH, TREE, LAYER2_DPO, LAYER2_PPO)  # the record types read as rollouts

# RolloutRanker: totalScore = objective x 1.0 + (judgeScore / 10) x 0.3; judge 5 when absent.
OBJECTIVE_WEIGHT = 1.0
JUDGE_WEIGHT = 0.3
DEFAULT_JUDGE_SCORE = 5.0


_ABSENT = object()


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_rank(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def formula_total(objective: float, judge: float | None) -> float:
    judge_value = DEFAULT_JUDGE_SCORE if judge is None else judge
    return objective * OBJECTIVE_WEIGHT + (judge_value / 10.0) * JUDGE_WEIGHT


class Reject(Exception):
    """A line that cannot be used: ``code`` is stable (manifest key), ``detail`` explains."""

    def __init__(
        self,
        code: str,
        detail: str,
        record_type: str | None = None,
        where: tuple[str, str] | None = None,
    ) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.record_type = record_type  # unsupported-record-type: what the line looks like
        # contract-violation: (JSON pointer, "RecordType: message") of the first problem
        self.where = where


@dataclass
class Normalised:
    """A canonical record (contract-valid), its type, and the repairs that made it so."""

    record_type: str
    data: dict[str, Any]
    repairs: list[str]
    rank_given: bool = True


_BUILD_KEYS = {produced: name for name, produced in PRODUCER_BUILD_KEYS.items()}
_DATA_KEYS = {produced: name for name, produced in PRODUCER_EVENT_KEYS.items()}


def _repair_build_result(value: Any, repairs: list[str]) -> Any:
    if not isinstance(value, dict):
        return value
    if any(key in value for key in _BUILD_KEYS):
        value = {_BUILD_KEYS.get(k, k): v for k, v in value.items()}
        repairs.append(CAMELCASE_BUILD)
    status = value.get("status")
    if isinstance(status, str) and status in STATUS_ALIASES:
        value = {**value, "status": STATUS_ALIASES[status]}
        repairs.append(BUILD_STATUS_ALIAS)
    elif "status" not in value and isinstance(value.get("exit_code"), int):
        code = value["exit_code"]
        value = {**value, "status": "pass" if code == 0 else "fail"}
        repairs.append("build_result:status_from_exit_code")
    return value


def _flat_events(entry: dict[str, Any], kinds: set[str]) -> list[dict[str, Any]]:
    args_key = "arguments" if "arguments" in entry else "args"
    data: dict[str, Any] = {"name": entry["tool_name"]}
    if args_key in entry:
        data["args"] = entry[args_key]
        decoded = json_object(data["args"])
        if decoded is not None:  # OpenAI's form: the arguments object as JSON text
            data["args"] = decoded
            kinds.add(ARGUMENTS_TEXT)
    for key, value in entry.items():
        if key not in ("tool_name", args_key, "result", "error", "call_id"):
            data[key] = value
    result: dict[str, Any] = {}
    if "call_id" in entry:
        data["call_id"] = result["call_id"] = entry["call_id"]
    if "result" in entry:
        result["output"] = entry["result"]
    if "error" in entry:
        result["error"] = entry["error"]
    return [{"event": "tool_call", "data": data}, {"event": "tool_result", "data": result}]


#: A flat entry's arguments given as the JSON text of an object, decoded.
ARGUMENTS_TEXT = "tool_call:arguments_json_text"


def json_object(text: Any) -> dict[str, Any] | None:
    """The object ``text`` encodes as JSON, when it says exactly that (``read_exactly``: no key
    given twice, no integer beyond 64 bits; orjson refuses NaN and numbers beyond a double,
    which it would write as null); None for anything else (not text, not JSON, no object)."""
    if not isinstance(text, str):
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not read_exactly(text.encode()):
        return None
    return value


def _repair_tool_calls(value: Any, repairs: list[str]) -> Any:
    if not isinstance(value, list):
        return value
    for e in value:  # canonical: the common case costs one scan
        if not isinstance(e, dict) or "event" not in e:
            break
        data = e.get("data")  # not an object: left for validation to reject
        if isinstance(data, dict) and any(key in data for key in _DATA_KEYS):
            break
    else:
        return value
    events: list[Any] = []
    kinds: set[str] = set()
    for entry in value:
        if not isinstance(entry, dict):
            events.append(entry)  # left for validation to reject
        elif "event" in entry:
            data = entry.get("data")
            if isinstance(data, dict) and any(k in data for k in _DATA_KEYS):
                entry = {**entry, "data": {_DATA_KEYS.get(k, k): v for k, v in data.items()}}
                kinds.add(CAMELCASE_EVENTS)
            events.append(entry)
        elif isinstance(entry.get("tool_name"), str):
            kinds.add("tool_call:flat_arguments" if "arguments" in entry else "tool_call:flat_args")
            events.extend(_flat_events(entry, kinds))
        else:
            events.append(entry)
    repairs.extend(sorted(kinds))
    return events


def normalise_value(value: Any, validators: ValidatorSet, sft: bool = False) -> Normalised:
    """Repair and validate one parsed line; ``sft``: SFT records are inputs too (``--target
    trl --format sft``). Raises ``Reject``."""
    if not isinstance(value, dict):
        raise Reject("not-an-object", f"a record is a JSON object, got {type(value).__name__}")
    record_type = guess_record_type(value)
    if record_type not in INPUT_TYPES and not (sft and record_type == SFT):
        what = (
            "not a rollout-wire record"
            if record_type is None
            else f"a --target trl {record_type}"
            if record_type.startswith("Trl")
            else f"a Layer 3 {record_type}"
        )
        hint = " (SFT records are read by --target trl --format sft)" if record_type == SFT else ""
        raise Reject(
            "unsupported-record-type",
            f"{what}; expected a Layer 1 or Layer 2 record{hint}",
            record_type or "unknown",
        )
    repairs: list[str] = []
    data = dict(value)
    if "tool_call_sequence" in data:
        data["tool_call_sequence"] = _repair_tool_calls(data["tool_call_sequence"], repairs)
    rank_given = True
    if record_type == BRANCH:
        if "build_result" in data:
            data["build_result"] = _repair_build_result(data["build_result"], repairs)
        objective = data.get("objective_score")
        judge = data.get("judge_score")
        if (
            "total_score" not in data
            and objective in (0, 1)
            and isinstance(judge, (int, float, type(None)))
        ):
            data["total_score"] = formula_total(objective, judge)
            repairs.append("total_score:computed")
        rank = data.get("rank", _ABSENT)
        if rank is _ABSENT or not _is_rank(rank):
            # The rank is recomputed from the scores anyway: a missing one, or one out of the
            # contract's range (0-based ranks), never costs the branch.
            data["rank"] = 1  # placeholder that keeps the record valid; ranked with its rollout
            rank_given = False
            repairs.append("rank:computed" if rank is _ABSENT else "rank:out_of_range")
        total = data.get("total_score")
        if _is_number(total) and not 0 <= total <= MAX_TOTAL:
            repairs.append("reward:clamped")  # its PPO reward is clamped to [0, 1]
    validator = validators.get(record_type)
    if not validator.is_valid(data):
        problem = validator.problems(data)[0]
        raise Reject(
            "contract-violation",
            f"{record_type} {problem.pointer}: {problem.message}",
            where=(problem.pointer, f"{record_type}: {problem.message}"),
        )
    return Normalised(record_type, data, repairs, rank_given)


def normalise_line(raw: bytes, validators: ValidatorSet, sft: bool = False) -> Normalised:
    """Parse one JSONL line (without its newline) and normalise it (``sft``: as for
    ``normalise_value``). Raises ``Reject``."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        reason = str(exc)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as uexc:
            raise Reject("invalid-utf8", f"not valid UTF-8 at byte {uexc.start}") from None
        if _at_non_finite(text, exc.pos):
            raise Reject("invalid-json", f"NaN and Infinity are not JSON: {reason}") from None
        beyond = beyond_reach(raw, exc)
        if beyond is not None:  # valid JSON; an integer is named as the 30-digit ones are
            wide = wide_integer(raw)
            detail = f"integer {wide} does not fit in 64 bits" if wide else f"{beyond}: {reason}"
            raise Reject("unsupported-value", detail) from None
        raise Reject("invalid-json", reason) from None
    wide = wide_integer(raw)
    if wide is not None:
        raise Reject("unsupported-value", f"integer {wide} does not fit in 64 bits")
    return normalise_value(value, validators, sft)


def wide_integer(raw: bytes) -> str | None:
    """The first integer of the JSON text that orjson cannot read exactly, as written, or
    None; parsed exactly only where ``may_hold_wide_integer``."""
    if not may_hold_wide_integer(raw):
        return None
    wide: list[str] = []

    def integer(token: str) -> int:
        if int(token) not in INT64_RANGE and not wide:
            wide.append(token)
        return 0

    try:
        json.loads(raw, parse_int=integer)
    except (ValueError, RecursionError):  # what orjson read, the standard library may not
        return None
    return wide[0] if wide else None


def read_exactly(raw: bytes) -> bool:
    """Whether ``orjson.loads(raw)`` (valid JSON) keeps everything the text says: no object key
    given twice (orjson keeps the last), no integer beyond 64 bits. Parsed exactly only where
    either may be."""
    if raw.count(b":") < 2 and not may_hold_wide_integer(raw):
        return True  # one member at most, no long number

    def integer(token: str) -> int:
        if int(token) not in INT64_RANGE:
            raise ValueError("beyond 64 bits")
        return 0

    try:
        json.loads(raw, object_pairs_hook=unique_members, parse_int=integer)
    except (ValueError, RecursionError):
        return False
    return True


def _at_non_finite(text: str, pos: int) -> bool:
    """Whether a parse error at ``pos`` (a character offset, as orjson gives it) is a NaN or
    Infinity token (orjson stops after the sign of ``-Infinity``); not the word in a string."""
    return text.startswith(("NaN", "Infinity", "-Infinity"), pos)
