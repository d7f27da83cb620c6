"""What a TRL record must look like for its trainer to read it right.

The trl target's records are not contract records, so each is checked here instead: the
columns its trainer reads are there, every message list holds messages with the roles that
belong where they are, every tool call is complete. ``shape_problem`` returns the first
problem as ``(JSON pointer, message)``; the export run treats one as a bug in the exporter
(exit 3), as it treats a Layer 3 record that breaks the contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["COLUMNS", "OUTPUTS", "shape_problem"]

#: The output names of the trl target (``Settings.formats``) and the record each holds.
OUTPUTS: Final = ("dpo", "ppo", "kto", "sft")

#: The columns every record of an output has (its trainer's, then the lineage columns).
_LINEAGE: Final = ("tools", "rollout_id", "task_hash", "source", "model_id")
COLUMNS: Final[Mapping[str, tuple[str, ...]]] = {
    "dpo": ("prompt", "chosen", "rejected", *_LINEAGE),
    "ppo": ("prompt", "completion", "reward", *_LINEAGE),
    "kto": ("prompt", "completion", "label", *_LINEAGE),
    "sft": ("messages", *_LINEAGE),
}

_PROMPT_ROLES: Final = frozenset({"system", "user"})
_COMPLETION_ROLES: Final = frozenset({"assistant", "tool"})
_ROLES: Final = _PROMPT_ROLES | _COMPLETION_ROLES


def shape_problem(
    output: str,
    record: Mapping[str, Any],
    arguments: str,
    checked: set[tuple[int, int]] | None = None,
) -> tuple[str, str] | None:
    """The first thing in ``record`` (a record of ``output``) that its trainer would misread,
    or None; ``arguments``: ``"string"`` or ``"object"``, the form of tool-call arguments;
    ``checked``: the ``id`` of message lists found sound already, by a caller whose records
    share lists it keeps alive (each list found sound is added)."""
    seen: set[tuple[int, int]] = checked if checked is not None else set()
    for column in COLUMNS[output]:
        if column not in record:
            return f"/{column}", "missing"
    if output == "sft":
        return _messages(record["messages"], "/messages", None, arguments, seen)
    problem = _messages(record["prompt"], "/prompt", _PROMPT_ROLES, arguments, seen)
    if problem is None and record["prompt"][-1]["role"] != "user":
        problem = f"/prompt/{len(record['prompt']) - 1}/role", "the prompt ends with a user turn"
    completions = ("chosen", "rejected") if output == "dpo" else ("completion",)
    for column in completions:
        problem = problem or _completion(record[column], f"/{column}", arguments, seen)
    if problem is None and output == "ppo":
        value = record["reward"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            problem = "/reward", f"a number in [0, 1], got {value!r}"
    if problem is None and output == "kto" and not isinstance(record["label"], bool):
        problem = "/label", f"a boolean, got {record['label']!r}"
    return problem


def _completion(
    messages: Any, at: str, arguments: str, seen: set[tuple[int, int]]
) -> tuple[str, str] | None:
    problem = _messages(messages, at, _COMPLETION_ROLES, arguments, seen)
    if problem is None and messages[-1]["role"] != "assistant":
        return f"{at}/{len(messages) - 1}/role", "a completion ends with an assistant turn"
    return problem


def _messages(
    messages: Any, at: str, roles: frozenset[str] | None, arguments: str, seen: set[tuple[int, int]]
) -> tuple[str, str] | None:
    if not isinstance(messages, list) or not messages:
        return at, "a non-empty list of messages"
    key = (id(messages), id(roles))  # a list checked for these roles
    if key in seen:
        return None
    for number, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"{at}/{number}", "a message is an object"
        role = message.get("role")
        if roles is not None and role not in roles:
            return f"{at}/{number}/role", f"one of {', '.join(sorted(roles))}, got {role!r}"
        if role not in _ROLES:
            return f"{at}/{number}/role", f"not a chat role: {role!r}"
        if type(message.get("content")) is not str:
            return f"{at}/{number}/content", "a string"
        if role == "tool" and type(message.get("tool_call_id")) is not str:
            return f"{at}/{number}/tool_call_id", "a tool turn names its call"
        calls = message.get("tool_calls")
        if calls:
            for position, call in enumerate(calls):
                problem = _call(call, f"{at}/{number}/tool_calls/{position}", arguments)
                if problem is not None:
                    return problem
    seen.add(key)
    return None


def _call(call: Any, at: str, arguments: str) -> tuple[str, str] | None:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or call.get("type") != "function":
        return at, 'a tool call is {"id", "type": "function", "function"}'
    if not isinstance(call.get("id"), str):
        return f"{at}/id", "a string"
    if not isinstance(function.get("name"), str):
        return f"{at}/function/name", "a string"
    given = function.get("arguments")
    if arguments == "string" and not isinstance(given, str):
        return f"{at}/function/arguments", "a JSON string (--tool-arguments string)"
    return None
