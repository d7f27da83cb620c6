"""A branch's whole conversation as OpenAI-format chat messages, and its loss weighting.

The conversation is: the user task; then, for each ``tool_call`` event, an assistant message
carrying the call in ``tool_calls`` (its content is the event's ``data.content`` text when the
producer recorded one, else null) followed by a ``tool`` message with the result that answers
it (its output, its error, or both: the output, then the error on a line of its own); then the
final assistant answer. A result is matched to its call by ``call_id``, else to the oldest
unanswered call; a call that was never answered gets an empty ``tool`` message so every call
is answered, as chat templates require; a result that answers no call has no turn, and is
counted (``unmatched_results``, the manifest's ``tool_result:without_call``). Calls without an
id get ``call_<n>`` (n = position of the call in the sequence).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from msgspec import UNSET

from datafactory.records import (
    NO_EXTRA,
    EventJson,
    LossWeightTokens,
    MessageJson,
    ToolCallEvent,
)

__all__ = [
    "DEFAULT",
    "RECOVERY",
    "STATE_SUMMARY",
    "Conversation",
    "build_messages",
    "build_typed_messages",
    "loss_weight_tokens",
    "prompt_text",
    "unmatched_results",
]

DEFAULT: LossWeightTokens = "default"
RECOVERY: LossWeightTokens = "recovery"
STATE_SUMMARY: LossWeightTokens = "state_summary"
UNKNOWN_TOOL = "unknown_tool"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode("utf-8")


#: One event as the conversation reads it, from a JSON event or a typed one (absent: None):
#: (is a call, call_id, name, args, content, output, error).
_Step = tuple[bool, Any, Any, Any, Any, Any, Any]
#: A call (its id, its step) and the step of its result (None: none).
_Pair = tuple[tuple[str, _Step], "_Step | None"]


@dataclass
class Conversation:
    """The messages of one branch and which ``tool`` messages carry an error."""

    messages: list[MessageJson]
    error_turns: frozenset[int]
    loss_weight_tokens: LossWeightTokens
    unmatched_results: int = 0  # tool results that answer no call: no turn of their own


def build_messages(task: str, events: Sequence[EventJson], final_answer: str) -> Conversation:
    """The conversation of one branch or Layer 2 record; see the module docstring."""
    return _built(task, _steps(events), final_answer)


def build_typed_messages(
    task: str, events: Sequence[ToolCallEvent], final_answer: str
) -> Conversation:
    """``build_messages`` of typed events (the load stage's fast path): the same messages as
    of their JSON, read from the Structs without a dict in between."""
    pairs = _typed_alternating(events)
    if pairs is not None:
        return _conversation(task, pairs, final_answer)
    return _built(task, [_typed_step(event) for event in events], final_answer)


def _typed_step(event: ToolCallEvent) -> _Step:
    data = event.data
    extra = data.wire_extra
    name, args, call_id, output, error = (
        data.name, data.args, data.call_id, data.output, data.error
    )  # fmt: skip
    return (
        event.event == "tool_call",
        None if call_id is UNSET else call_id,
        None if name is UNSET else name,
        None if args is UNSET else args,
        None if extra is NO_EXTRA else extra.get("content"),
        None if output is UNSET else output,
        None if error is UNSET else error,
    )


def _typed_alternating(events: Sequence[ToolCallEvent]) -> list[_Pair] | None:
    """``_alternating`` of typed events, made in the same pass as their steps (the common
    case, read with the fewest steps)."""
    if len(events) % 2:
        return None
    pairs: list[_Pair] = []
    for n in range(0, len(events), 2):
        call, result = events[n], events[n + 1]
        if call.event != "tool_call" or result.event == "tool_call":
            return None
        data, answer = call.data, result.data
        extra, args, output = data.wire_extra, data.args, answer.output
        # An id, a name or an error read only for its truth here: UNSET is false as None is.
        step = (
            True,
            None,
            data.name or None,
            None if args is UNSET else args,
            None if extra is NO_EXTRA else extra.get("content"),
            None,
            None,
        )
        outcome = (False, None, None, None, None, None if output is UNSET else output, answer.error)
        pairs.append(((data.call_id or f"call_{n // 2}", step), outcome))
    return pairs


def _steps(events: Sequence[EventJson]) -> list[_Step]:
    steps: list[_Step] = []
    for event in events:
        data = event["data"]
        get = data.get
        step = (event["event"] == "tool_call", get("call_id"), get("name"), get("args"))
        steps.append((*step, get("content"), get("output"), get("error")))
    return steps


def _built(task: str, steps: list[_Step], final_answer: str) -> Conversation:
    pairs, unmatched = _pairs(steps)
    return _conversation(task, pairs, final_answer, unmatched)


def _pairs(steps: list[_Step]) -> tuple[list[_Pair], int]:
    """The steps paired (alternating when they are, else by ``_paired_steps``), and how many
    results answered no call."""
    pairs = _alternating_steps(steps)
    return (pairs, 0) if pairs is not None else _paired_steps(steps)


def _paired(events: Sequence[EventJson]) -> list[_Pair]:
    return _paired_steps(_steps(events))[0]


def unmatched_results(events: Sequence[EventJson]) -> int:
    """How many of a branch's tool results answer no call (before any call, or after every
    call was answered): the conversation has no turn for them, so the run counts them."""
    return _pairs(_steps(events))[1]


def _alternating(events: Sequence[EventJson]) -> list[_Pair] | None:
    return _alternating_steps(_steps(events))


def _paired_steps(steps: list[_Step]) -> tuple[list[_Pair], int]:
    """Any order of events: each result answers its call by id, else the oldest unanswered;
    and how many results answered none."""
    # Pair each call with its result first, then create the messages (never mutated).
    pairs: list[tuple[str, _Step]] = []  # (call id, the tool_call event)
    results: list[_Step | None] = []  # the answering tool_result, or None
    by_id: dict[str, int] = {}  # call id -> index of an unanswered call
    unanswered: list[int] = []  # indices of unanswered calls, oldest first
    unmatched = 0
    for step in steps:
        given_id = step[1]
        if step[0]:
            call_id = given_id or f"call_{len(pairs)}"
            by_id.setdefault(call_id, len(pairs))
            unanswered.append(len(pairs))
            pairs.append((call_id, step))
            results.append(None)
            continue
        index = by_id.pop(given_id, None) if given_id else None
        if index is None:
            if not unanswered:
                unmatched += 1  # a result with no call to answer carries no turn of its own
                continue
            index = unanswered[0]
            if by_id.get(pairs[index][0]) == index:
                del by_id[pairs[index][0]]
        unanswered.remove(index)
        results[index] = step
    return list(zip(pairs, results, strict=True)), unmatched


def _alternating_steps(steps: list[_Step]) -> list[_Pair] | None:
    """The pairs of the common case, call, result, call, result...: each result answers the
    call just before it, whatever its id says (as the general rules pair them); None when
    the events are not in that order."""
    if len(steps) % 2:
        return None
    pairs: list[_Pair] = []
    for n in range(0, len(steps), 2):
        call, result = steps[n], steps[n + 1]
        if not call[0] or result[0]:
            return None
        pairs.append(((call[1] or f"call_{n // 2}", call), result))
    return pairs


def _conversation(
    task: str, pairs: list[_Pair], final_answer: str, unmatched: int = 0
) -> Conversation:
    """The messages of the calls (with their ids) and their results (None: unanswered);
    ``unmatched``: how many results answered no call."""
    messages: list[MessageJson] = [{"role": "user", "content": task}]
    errors: list[int] = []
    dumps = orjson.dumps
    for (call_id, (_, _, name, args, content, _, _)), result in pairs:
        # Producers may record the assistant's text with the call (an extra key of the data).
        if args is None:
            arguments = "{}"
        elif type(args) is dict:  # the common case, without the call of ``_text``
            arguments = dumps(args).decode("utf-8")
        else:
            arguments = _text(args)
        messages.append(
            {
                "role": "assistant",
                "content": content if isinstance(content, str) else None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": name or UNKNOWN_TOOL,
                            "arguments": arguments,
                        },
                    }
                ],
            }
        )
        error = result[6] if result is not None else None
        if result is None:
            text = ""
        else:
            output = result[5]
            text = output if isinstance(output, str) else _text(output)
        if error:
            errors.append(len(messages))
            # A result may carry both (what a command printed, then why it failed): the error
            # alone lost the output.
            text = f"{text}\n{error}" if text else error
        messages.append({"role": "tool", "content": text, "tool_call_id": call_id})
    messages.append({"role": "assistant", "content": final_answer})
    error_turns = frozenset(errors)
    return Conversation(messages, error_turns, loss_weight_tokens(messages, error_turns), unmatched)


def prompt_text(messages: Sequence[MessageJson]) -> str:
    """The prompt as plain text: the content of the conversation's leading system and user
    turns, joined with a blank line (the contract's ``Prompt``)."""
    texts: list[str] = []
    for message in messages:
        if message["role"] not in ("system", "user"):
            break
        texts.append(message["content"] or "")
    return "\n\n".join(texts)


def loss_weight_tokens(
    messages: Sequence[MessageJson], error_turns: frozenset[int] = frozenset()
) -> LossWeightTokens:
    """The loss weighting of a conversation, by this rule (first match wins):

    * ``recovery``: a tool result carried an error (its index is in ``error_turns``) and the
      agent went on to a later assistant turn;
    * ``state_summary``: an assistant turn with content precedes a further tool call (in a
      later assistant turn);
    * ``default``: otherwise.
    """
    error_seen = False
    summary = False
    content_seen = False
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "tool":
            error_seen = error_seen or index in error_turns
        elif role == "assistant":
            if error_seen:
                return RECOVERY
            if content_seen and message.get("tool_calls"):
                summary = True
            if message["content"]:
                content_seen = True
    return STATE_SUMMARY if summary else DEFAULT
