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

from datafactory.records import Message, ToolCall, ToolCallFunction

__all__ = [
    "DEFAULT",
    "RECOVERY",
    "STATE_SUMMARY",
    "Conversation",
    "build_messages",
    "loss_weight_tokens",
]

DEFAULT, RECOVERY, STATE_SUMMARY = "default", "recovery", "state_summary"
UNKNOWN_TOOL = "unknown_tool"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode("utf-8")


def _field(data: Any, name: str) -> Any:
    return getattr(data, name, None) if data is not None else None


@dataclass
class Conversation:
    """The messages of one branch and which ``tool`` messages carry an error."""

    messages: list[Any]
    error_turns: frozenset[int]

    @property
    def loss_weight_tokens(self) -> str:
        return loss_weight_tokens(self.messages, self.error_turns)


def build_messages(task: str, events: Sequence[Any], final_answer: str) -> Conversation:
    """The conversation of one branch or Layer 2 record; see the module docstring."""
    # First pair each call with its result, then create the messages (they are not mutated).
    turns: list[tuple[Any, list[Any]]] = []  # (assistant call message, [result data or None])
    pending: list[tuple[str, list[Any]]] = []
    for event in events:
        data = event.data
        if event.event == "tool_call":
            call_id = _field(data, "call_id") or f"call_{len(turns)}"
            args = _field(data, "args")
            content = _field(data, "content")
            call = ToolCall(
                id=call_id,
                type="function",
                function=ToolCallFunction(
                    name=_field(data, "name") or UNKNOWN_TOOL,
                    arguments=_text(args if args is not None else {}),
                ),
            )
            slot: list[Any] = [None]
            turns.append(
                (
                    Message(
                        role="assistant",
                        content=content if isinstance(content, str) else None,
                        tool_calls=[call],
                    ),
                    slot,
                )
            )
            pending.append((call_id, slot))
        else:
            wanted = _field(data, "call_id")
            match = next((p for p in pending if p[0] == wanted), None) if wanted else None
            if match is None and pending:
                match = pending[0]
            if match is None:
                continue  # a result with no call to answer carries no turn of its own
            pending.remove(match)
            match[1][0] = data
    messages: list[Any] = [Message(role="user", content=task)]
    errors: list[int] = []
    for call_message, (result,) in turns:
        messages.append(call_message)
        error = _field(result, "error")
        if isinstance(error, str) and error:
            content = error
            errors.append(len(messages))
        else:
            content = _text(_field(result, "output"))
        messages.append(
            Message(role="tool", content=content, tool_call_id=call_message.tool_calls[0].id)
        )
    messages.append(Message(role="assistant", content=final_answer))
    return Conversation(messages, frozenset(errors))


def loss_weight_tokens(messages: Sequence[Any], error_turns: frozenset[int] = frozenset()) -> str:
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
        if message.role == "tool":
            error_seen = error_seen or index in error_turns
        elif message.role == "assistant":
            if error_seen:
                return RECOVERY
            if message.tool_calls and content_seen:
                summary = True
            if message.content:
                content_seen = True
    return STATE_SUMMARY if summary else DEFAULT
