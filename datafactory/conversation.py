"""A branch's whole conversation as OpenAI-format chat messages, and its loss weighting.

The conversation is: the user task; then, for each ``tool_call`` event, an assistant message
carrying the call in ``tool_calls`` (its content is the event's ``data.content`` text when the
producer recorded one, else null) followed by a ``tool`` message with the result (or the
error) that answers it; then the final assistant answer. A result is matched to its call by
``call_id``, else to the oldest unanswered call; a call that was never answered gets an
empty ``tool`` message so every call is answered, as chat templates require. Calls without
an id get ``call_<n>`` (n = position of the call in the sequence).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from datafactory.records import EventDataJson, EventJson, LossWeightTokens, MessageJson

__all__ = [
    "DEFAULT",
    "RECOVERY",
    "STATE_SUMMARY",
    "Conversation",
    "build_messages",
    "loss_weight_tokens",
    "prompt_text",
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


#: A call (its id, the data of its tool_call event) and the data of its result (None: none).
_Pair = tuple[tuple[str, EventDataJson], "EventDataJson | None"]


@dataclass
class Conversation:
    """The messages of one branch and which ``tool`` messages carry an error."""

    messages: list[MessageJson]
    error_turns: frozenset[int]
    loss_weight_tokens: LossWeightTokens


def build_messages(task: str, events: Sequence[EventJson], final_answer: str) -> Conversation:
    """The conversation of one branch or Layer 2 record; see the module docstring."""
    pairs = _alternating(events)
    return _conversation(task, _paired(events) if pairs is None else pairs, final_answer)


def _paired(events: Sequence[EventJson]) -> list[_Pair]:
    """Any order of events: each result answers its call by id, else the oldest unanswered."""
    # Pair each call with its result first, then create the messages (never mutated).
    pairs: list[tuple[str, EventDataJson]] = []  # (call id, data of the tool_call event)
    results: list[EventDataJson | None] = []  # data of the answering tool_result, or None
    by_id: dict[str, int] = {}  # call id -> index of an unanswered call
    unanswered: list[int] = []  # indices of unanswered calls, oldest first
    for event in events:
        data = event["data"]
        given_id = data.get("call_id")
        if event["event"] == "tool_call":
            call_id = given_id or f"call_{len(pairs)}"
            by_id.setdefault(call_id, len(pairs))
            unanswered.append(len(pairs))
            pairs.append((call_id, data))
            results.append(None)
            continue
        index = by_id.pop(given_id, None) if given_id else None
        if index is None:
            if not unanswered:
                continue  # a result with no call to answer carries no turn of its own
            index = unanswered[0]
            if by_id.get(pairs[index][0]) == index:
                del by_id[pairs[index][0]]
        unanswered.remove(index)
        results[index] = data
    return list(zip(pairs, results, strict=True))


def _alternating(events: Sequence[EventJson]) -> list[_Pair] | None:
    """The pairs of the common case, call, result, call, result...: each result answers the
    call just before it, whatever its id says (as the general rules pair them); None when
    the events are not in that order."""
    if len(events) % 2:
        return None
    pairs: list[_Pair] = []
    for n in range(0, len(events), 2):
        call, result = events[n], events[n + 1]
        if call["event"] != "tool_call" or result["event"] == "tool_call":
            return None
        data = call["data"]
        pairs.append(((data.get("call_id") or f"call_{n // 2}", data), result["data"]))
    return pairs


def _conversation(task: str, pairs: list[_Pair], final_answer: str) -> Conversation:
    """The messages of the calls (with their ids) and their results (None: unanswered)."""
    messages: list[MessageJson] = [{"role": "user", "content": task}]
    errors: list[int] = []
    for (call_id, data), result in pairs:
        # Producers may record the assistant's text with the call (an extra key of the data).
        content = data.get("content")
        args = data.get("args")
        messages.append(
            {
                "role": "assistant",
                "content": content if isinstance(content, str) else None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": data.get("name") or UNKNOWN_TOOL,
                            "arguments": "{}" if args is None else _text(args),
                        },
                    }
                ],
            }
        )
        error = result.get("error") if result is not None else None
        if error:
            errors.append(len(messages))
            text = error
        elif result is None:
            text = ""
        else:
            output = result.get("output")
            text = output if isinstance(output, str) else _text(output)
        messages.append({"role": "tool", "content": text, "tool_call_id": call_id})
    messages.append({"role": "assistant", "content": final_answer})
    error_turns = frozenset(errors)
    return Conversation(messages, error_turns, loss_weight_tokens(messages, error_turns))


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
