"""What a TRL record must look like for its trainer to read it right.

The contract's ``trl-record`` schema says each record type's columns, their types and the
form of every message and tool call; :class:`TrlCheck` validates each record against it (the
compiled validator, as for Layer 3 records) and then checks what JSON Schema cannot say: which
role stands where in a message list (a prompt is an optional system turn, then user turns; a
completion is assistant and tool turns ending with an assistant turn), that only assistant
turns call tools and only tool turns name a call, that every call is answered by a tool turn
before the next turn of another role (templates and the OpenAI API require it), and that
tool-call arguments have the form the run asked for. The first problem is returned as
``(JSON pointer, message)``; the export run treats one as a bug in the exporter (exit 3), as
it treats a Layer 3 record that breaks the contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from wiregate.record_validator import RecordValidator, ValidatorSet

__all__ = ["OUTPUTS", "RECORD_TYPES", "TrlCheck", "order_problem"]

#: The output names of the trl target (``Settings.formats``) and the record type each holds.
RECORD_TYPES: Final[Mapping[str, str]] = {
    "dpo": "TrlPreferenceRecord",
    "ppo": "TrlPromptRecord",
    "kto": "TrlKtoRecord",
    "sft": "TrlSftRecord",
}
OUTPUTS: Final = tuple(RECORD_TYPES)


class _Turns(NamedTuple):
    """A kind of message list: the roles it may hold (None: any), whether a user turn comes
    before it (a completion follows its prompt), and the role of its last turn."""

    roles: frozenset[str] | None
    asked: bool
    last: str
    ends: str  # what to say when the last turn has another role
    target: bool = False  # the last turn is what a trainer learns: it must hold text


_PROMPT: Final = _Turns(
    frozenset({"system", "user"}), False, "user", "the prompt ends with a user turn"
)
_COMPLETION: Final = _Turns(
    frozenset({"assistant", "tool"}), True, "assistant", "a completion ends with an assistant turn"
)
_CONVERSATION: Final = _Turns(
    None, False, "assistant", "a conversation ends with an assistant turn", target=True
)
#: The message lists of each output's records, in the order they are checked.
_LISTS: Final[Mapping[str, tuple[tuple[str, _Turns], ...]]] = {
    "dpo": (("prompt", _PROMPT), ("chosen", _COMPLETION), ("rejected", _COMPLETION)),
    "ppo": (("prompt", _PROMPT), ("completion", _COMPLETION)),
    "kto": (("prompt", _PROMPT), ("completion", _COMPLETION)),
    "sft": (("messages", _CONVERSATION),),
}


class TrlCheck:
    """The trl target's output check: the contract, then :func:`order_problem`. Validators
    are compiled on first use, so a Layer 3 run never needs the trl-record schema."""

    def __init__(self, validators: ValidatorSet, arguments: str) -> None:
        self._validators = validators
        self._compiled: dict[str, RecordValidator] = {}
        self.arguments = arguments
        #: ``id`` of message lists found sound (a rollout's records share lists).
        self.checked: set[tuple[int, int]] = set()

    def problem(self, output: str, record: Mapping[str, Any]) -> tuple[str, str] | None:
        """The first thing in ``record`` (a record of ``output``) that breaks the contract or
        that its trainer would misread, or None."""
        validator = self._compiled.get(output)
        if validator is None:
            validator = self._compiled[output] = self._validators.get(RECORD_TYPES[output])
        if not validator.is_valid(record):
            found = validator.problems(record)[0]
            return found.pointer, f"breaks the contract ({validator.name}): {found.message}"
        return order_problem(output, record, self.arguments, self.checked)

    def forget(self) -> None:
        """Drop the checked lists' ids (call when the records holding them are gone: an id is
        only unique while its list lives)."""
        self.checked.clear()


def order_problem(
    output: str,
    record: Mapping[str, Any],
    arguments: str,
    checked: set[tuple[int, int]] | None = None,
) -> tuple[str, str] | None:
    """What the contract cannot say of a record of ``output`` that is valid against it: role
    order, tool keys by role, the argument form (``arguments``: ``"string"`` or
    ``"object"``). ``checked``: ``id`` of message lists already found sound, kept alive by
    the caller (each list found sound is added)."""
    seen: set[tuple[int, int]] = checked if checked is not None else set()
    for column, kind in _LISTS[output]:
        problem = _turns(record[column], f"/{column}", kind, arguments, seen)
        if problem is not None:
            return problem
    return None


def _turns(
    messages: list[dict[str, Any]],
    at: str,
    kind: _Turns,
    arguments: str,
    seen: set[tuple[int, int]],
) -> tuple[str, str] | None:
    key = (id(messages), id(kind))  # a list found sound as this kind
    if key in seen:
        return None
    roles = kind.roles
    calling = False  # the turn before is a tool-calling assistant turn or a tool turn
    asked = kind.asked  # a user turn came before
    waiting: list[tuple[str, str]] = []  # (id, pointer) of the last calls not yet answered
    for number, message in enumerate(messages):
        role = message["role"]
        if role == "tool":  # answers the first call waiting under its id (ids may repeat)
            answered = message.get("tool_call_id")
            first = next((n for n, (i, _) in enumerate(waiting) if i == answered), None)
            if first is not None:
                del waiting[first]
        elif waiting:  # the turn after the calls' tool turns: each call needs its answer
            return waiting[0][1], "a tool call is answered by a tool turn before the next turn"
        if roles is not None and role not in roles:
            return f"{at}/{number}/role", f"one of {', '.join(sorted(roles))}, got {role!r}"
        if role == "system" and number:
            return f"{at}/{number}/role", "a system turn only opens the conversation"
        if (role == "tool") != ("tool_call_id" in message):
            return f"{at}/{number}", "a tool turn, and only a tool turn, names its call"
        calls = message.get("tool_calls")
        if calls is not None and role != "assistant":
            return f"{at}/{number}/tool_calls", "only an assistant turn calls tools"
        if role == "tool" and not calling:
            return f"{at}/{number}/role", "a tool turn follows a tool call or another tool turn"
        if role == "assistant" and not asked:
            return f"{at}/{number}/role", "an assistant turn follows a user turn"
        asked = asked or role == "user"
        calling = bool(calls) or (calling and role == "tool")
        if calls:
            waiting = [
                (call["id"], f"{at}/{number}/tool_calls/{position}")
                for position, call in enumerate(calls)
            ]
        if calls and arguments == "string":
            for position, call in enumerate(calls):
                if not isinstance(call["function"]["arguments"], str):
                    where = f"{at}/{number}/tool_calls/{position}/function/arguments"
                    return where, "a JSON string (--tool-arguments string)"
    if messages[-1]["role"] != kind.last:
        return f"{at}/{len(messages) - 1}/role", kind.ends
    if waiting:  # a last turn that calls tools
        return waiting[0][1], "a tool call is answered by a tool turn before the next turn"
    if kind.target and not messages[-1]["content"].strip():
        return f"{at}/{len(messages) - 1}/content", "the last turn, the training target, is blank"
    seen.add(key)
    return None
