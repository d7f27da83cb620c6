"""``--target trl``: records in the dataset formats Hugging Face TRL's trainers read.

Every builder takes the branches of one rollout (the contract's ``RolloutBranchRecord`` as
JSON, repaired by the load stage; ``rank`` is never read, the scores decide) and returns
plain JSON-ready dicts, one per output line:

* ``dpo_record``: conversational preference with an explicit prompt (``DPOTrainer``):
  ``prompt`` (the system and user turns), ``chosen`` and ``rejected`` (each branch's OWN
  assistant and tool turns up to its final answer). The pair is ``pairs.choose_pair``'s.
* ``prompt_records``: prompt-completion with reward columns, one per branch (``GRPOTrainer``
  and ``RLOOTrainer`` read ``prompt``; the other columns reach the reward functions).
* ``kto_records``: unpaired preference (``KTOTrainer``): ``prompt``, ``completion``,
  ``label`` (the objective passed).
* ``sft_records``: the passing branches' whole conversations as ``messages``
  (``SFTTrainer``).

``rollout_records`` gives all four at once, building each branch's turns once.

Every record has a ``tools`` column: the JSON-encoded list of the OpenAI tool specs of the
tools its trajectories called, when ``TrlOptions.tools`` knows them, else null (never
absent). TRL's trainers decode a string ``tools`` value themselves; a string keeps Arrow
schema inference working whatever the schemas look like.

Messages carry only the keys that apply (a user turn has no ``tool_calls`` key), because
templates test for a key's presence (Hermes 3: ``message.tool_calls is not defined``). An
assistant turn that calls a tool has ``content`` ``""`` when the producer recorded no text:
Qwen3's template concatenates ``content`` and fails on null, and every other shared template
treats ``""`` as no text. Tool-call arguments are a JSON string (``tool_arguments="string"``,
the OpenAI form, Arrow-safe) or an object (``"object"``); ``arguments_as_objects`` turns a
loaded record's strings into objects for templates that ``tojson`` them. Tool-call ids are
``call00000``, ``call00001``, ... by position (``tool_call_ids="short"``: nine alphanumeric
characters, which Mistral's template requires) or the producer's (``"given"``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple, TypeAlias, cast

import orjson

from datafactory.conversation import build_messages
from datafactory.pairs import SOURCE, DpoSkip, choose_pair, task_hash
from datafactory.rank import BranchScore, reward, total_score
from datafactory.records import BranchJson
from datafactory.repair import json_object

__all__ = [
    "CALL_ID_LENGTH",
    "MESSAGE_COLUMNS",
    "RECORD_KINDS",
    "RolloutRecords",
    "TrlOptions",
    "TrlRecord",
    "Turns",
    "arguments_as_objects",
    "branch_turns",
    "dpo_record",
    "kto_records",
    "passed",
    "prompt_records",
    "rollout_records",
    "sft_input_record",
    "sft_records",
    "tool_catalogue",
]

#: One output line of a TRL target.
TrlRecord: TypeAlias = dict[str, Any]
ToolArguments: TypeAlias = Literal["string", "object"]
ToolCallIds: TypeAlias = Literal["short", "given"]

#: The columns of a record that hold message lists.
MESSAGE_COLUMNS: Final = ("prompt", "chosen", "rejected", "completion", "messages")
#: Length of a ``short`` tool-call id (Mistral's templates accept no other).
CALL_ID_LENGTH: Final = 9


@dataclass(frozen=True)
class TrlOptions:
    """How the records are written.

    ``tools``: the tool specs the run knows, by tool name (``tool_catalogue``); None when
    the input knows none (the ``tools`` column is then null). ``system``: a system turn to
    open every prompt with, when the run has one."""

    tool_arguments: ToolArguments = "string"
    tool_call_ids: ToolCallIds = "short"
    system: str | None = None
    tools: Mapping[str, Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        if self.tool_arguments not in ("string", "object"):
            raise ValueError(f"tool_arguments: 'string' or 'object', got {self.tool_arguments!r}")
        if self.tool_call_ids not in ("short", "given"):
            raise ValueError(f"tool_call_ids: 'short' or 'given', got {self.tool_call_ids!r}")


_DEFAULT = TrlOptions()


def tool_catalogue(specs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Tool specs by name, each in the OpenAI form ``{"type": "function", "function":
    {"name", "description", "parameters"}}``; a bare function object (``{"name", ...}``) is
    wrapped. A missing ``description`` becomes ``""`` and missing ``parameters`` (or their
    ``properties``) empty: Hermes 3's template reads both unconditionally. Raises
    ``ValueError`` for a spec without a name, a second spec of a name, and a ``description``,
    ``parameters`` or ``properties`` of the wrong type (none is changed or dropped silently)."""
    catalogue: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for position, spec in enumerate(specs):
        given = spec.get("function", spec) if spec.get("type") == "function" else spec
        name = given.get("name") if isinstance(given, Mapping) else None
        if not isinstance(name, str) or not name:
            raise ValueError(f"tool spec {position}: no function name")
        if name in first:
            raise ValueError(
                f"tool spec {position}: {name!r} again (first: tool spec {first[name]})"
            )
        first[name] = position
        function = dict(cast(Mapping[str, Any], given))
        if function.get("description") is None:  # absent or null
            function["description"] = ""
        if function.get("parameters") is None:
            function["parameters"] = {"type": "object"}
        problem = _spec_problem(function)
        if problem is not None:
            raise ValueError(f"tool spec {position} ({name}): {problem}")
        parameters = dict(function["parameters"])
        if parameters.get("properties") is None:  # absent or null
            parameters["properties"] = {}
        function["parameters"] = parameters
        catalogue[name] = {"type": "function", "function": function}
    return catalogue


def _spec_problem(function: Mapping[str, Any]) -> str | None:
    """What is of the wrong type in a tool's function object, or None."""
    parameters = function["parameters"]
    for key, value, kind, wanted in (
        ("description", function["description"], str, "a string"),
        ("parameters", parameters, Mapping, "a JSON object (a JSON Schema)"),
    ):
        if not isinstance(value, kind):
            return f"{key} must be {wanted}, got {type(value).__name__}"
    properties = parameters.get("properties")
    if properties is not None and not isinstance(properties, Mapping):
        return f"parameters.properties must be a JSON object, got {type(properties).__name__}"
    return None


class Turns(NamedTuple):
    """One branch as chat turns: ``prompt`` (system and user), ``completion`` (its assistant
    and tool turns up to the final answer) and the names of the tools it called, in order."""

    prompt: list[dict[str, Any]]
    completion: list[dict[str, Any]]
    tool_names: tuple[str, ...]


def _call_id(position: int) -> str:
    short = f"call{position:05d}"
    return short if len(short) == CALL_ID_LENGTH else f"c{position:08d}"


def _as_object(arguments: Any) -> Any:
    """JSON-string arguments as the object they encode; anything else unchanged, so a template
    still gets what the producer wrote: a string that encodes no object, or one whose object
    would not say the same (``repair.json_object``)."""
    decoded = json_object(arguments)
    return arguments if decoded is None else decoded


def _written_call(call: Mapping[str, Any], names: list[str], options: TrlOptions) -> dict[str, Any]:
    """A tool call as a trl record writes it: its id by position (``names``: the names of the
    trajectory's calls so far, this one appended) or as given, its arguments in the form of
    ``options``."""
    function = call["function"]
    call_id = _call_id(len(names)) if options.tool_call_ids == "short" else call["id"]
    names.append(function["name"])
    arguments: Any = function["arguments"]
    if options.tool_arguments == "object":
        arguments = _as_object(arguments)
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": function["name"], "arguments": arguments},
    }


def branch_turns(branch: BranchJson, options: TrlOptions = _DEFAULT) -> Turns:
    """The chat turns of one branch; see the module docstring for their shape."""
    conversation = build_messages(
        branch["task"], branch["tool_call_sequence"], branch["final_answer"]
    )
    prompt: list[dict[str, Any]] = []
    if options.system is not None:
        prompt.append({"role": "system", "content": options.system})
    prompt.append({"role": "user", "content": branch["task"]})
    completion: list[dict[str, Any]] = []
    names: list[str] = []
    call_id = ""
    # build_messages puts each call's tool message right after it: ids map by position.
    for message in conversation.messages[1:]:
        calls = message.get("tool_calls")
        if message["role"] == "tool":
            completion.append(
                {"role": "tool", "content": message["content"] or "", "tool_call_id": call_id}
            )
        elif calls:
            turn_calls = []
            for call in calls:
                written = _written_call(call, names, options)
                call_id = written["id"]
                turn_calls.append(written)
            content = message["content"] or ""
            completion.append({"role": "assistant", "content": content, "tool_calls": turn_calls})
        else:
            completion.append({"role": "assistant", "content": message["content"] or ""})
    return Turns(prompt, completion, tuple(names))


def _tools_column(options: TrlOptions) -> str | None:
    """Every known spec, in the catalogue's order, the same for every record: the tools the
    agent had, as a model is given them at inference. Only those a record's trajectory
    called, first call first, told the prompt which tools the answer used and in what order,
    and a record that called none had no tool block: a difference that predicts the label."""
    if not options.tools:
        return None
    return orjson.dumps(list(options.tools.values())).decode("utf-8")


def passed(branch: BranchJson) -> bool:
    """Whether the branch's objective passed: its ``objective_status`` when it has one,
    else ``objective_score`` 1."""
    status = branch.get("objective_status")
    if status is not None:
        return status == "pass"
    return int(branch["objective_score"]) == 1


def _usable(branch: BranchJson) -> bool:
    return branch.get("objective_status") != "unknown"


def _upstream(branch: BranchJson) -> Mapping[str, Any]:
    given = cast(Mapping[str, Any], branch).get("provenance")
    return cast(Mapping[str, Any], given) if isinstance(given, Mapping) else {}


def _rollout_columns(branch: BranchJson, hashed: str) -> TrlRecord:
    """Columns of the rollout a record comes from (``hashed``: the task's ``task_hash``);
    upstream provenance is kept as it was."""
    upstream = _upstream(branch)
    source = upstream.get("source")
    model_id = upstream.get("model_id", cast(Mapping[str, Any], branch).get("model_id"))
    return {
        "rollout_id": branch["rollout_id"],
        "task_hash": hashed,
        "source": source if isinstance(source, str) else SOURCE,
        "model_id": model_id if isinstance(model_id, str) else None,
        # A JSON string: producers' provenance objects differ in keys and value types.
        "upstream_provenance": orjson.dumps(upstream).decode("utf-8") if upstream else None,
    }


def _branch_columns(branch: BranchJson, prefix: str = "") -> TrlRecord:
    """Per-branch facts, with one type per column (Arrow infers one type per column)."""
    judge = branch.get("judge_score")
    seed = branch.get("seed")
    columns: TrlRecord = {
        "branch": int(branch["branch_index"]),  # JSON Schema lets 1.0 be an integer
        "temperature": float(branch["temperature"]),
        "seed": None if seed is None else int(seed),
        "objective_score": int(branch["objective_score"]),
        "objective_status": branch.get("objective_status"),
        "judge_score": None if judge is None else float(judge),
        "total_score": total_score(branch),
    }
    if not prefix:
        columns["branch_index"] = columns.pop("branch")
        return columns
    return {f"{prefix}_{key}": value for key, value in columns.items()}


TurnsOf: TypeAlias = Callable[[BranchJson], Turns]


class _Built:
    """Each branch's turns and columns, built once per call (by ``id``: the branches outlive
    the call), so the records of a rollout share them."""

    def __init__(self, options: TrlOptions) -> None:
        self.options = options
        self.tools = _tools_column(options)
        self._turns: dict[int, Turns] = {}
        self._rollout: dict[int, TrlRecord] = {}
        self._columns: dict[int, TrlRecord] = {}
        self._task_hashes: dict[str, str] = {}  # a rollout's branches share their task

    def turns(self, branch: BranchJson) -> Turns:
        turns = self._turns.get(id(branch))
        if turns is None:
            turns = self._turns[id(branch)] = branch_turns(branch, self.options)
        return turns

    def rollout(self, branch: BranchJson) -> TrlRecord:
        """The rollout's columns of a record from ``branch``."""
        columns = self._rollout.get(id(branch))
        if columns is None:
            task = branch["task"]
            hashed = self._task_hashes.get(task)
            if hashed is None:
                hashed = self._task_hashes[task] = task_hash(task)
            columns = self._rollout[id(branch)] = _rollout_columns(branch, hashed)
        return columns

    def columns(self, branch: BranchJson) -> TrlRecord:
        """The rollout's and the branch's columns (unprefixed) of a per-branch record."""
        columns = self._columns.get(id(branch))
        if columns is None:
            columns = self._columns[id(branch)] = {
                **self.rollout(branch),
                **_branch_columns(branch),
            }
        return columns


def _dpo(branches: Sequence[BranchJson], built: _Built) -> TrlRecord | DpoSkip:
    scored = [(BranchScore.of(branch), branch) for branch in branches]
    pair = choose_pair([score for score, _ in scored], tasks=(b["task"] for b in branches))
    if isinstance(pair, str):
        return DpoSkip(branches[0]["rollout_id"] if branches else "", pair)
    chosen_score, rejected_score = pair
    chosen = next(branch for score, branch in scored if score is chosen_score)
    rejected = next(branch for score, branch in scored if score is rejected_score)
    chosen_turns = built.turns(chosen)
    rejected_turns = built.turns(rejected)
    return {
        "prompt": chosen_turns.prompt,
        "chosen": chosen_turns.completion,
        "rejected": rejected_turns.completion,
        "tools": built.tools,
        **built.rollout(chosen),
        **_branch_columns(chosen, "chosen"),
        **_branch_columns(rejected, "rejected"),
    }


def _in_order(branches: Sequence[BranchJson]) -> list[BranchJson]:
    return sorted(branches, key=lambda branch: int(branch["branch_index"]))


def _prompt(branches: Sequence[BranchJson], built: _Built) -> list[TrlRecord]:
    records = []
    for branch in _in_order(branches):
        turns = built.turns(branch)
        records.append(
            {
                "prompt": turns.prompt,
                "completion": turns.completion,
                "reward": reward(total_score(branch)),
                "tools": built.tools,
                **built.columns(branch),
            }
        )
    return records


def _kto(branches: Sequence[BranchJson], built: _Built) -> list[TrlRecord]:
    records = []
    for branch in _in_order(branches):
        if not _usable(branch) or not branch["final_answer"].strip():
            continue
        turns = built.turns(branch)
        records.append(
            {
                "prompt": turns.prompt,
                "completion": turns.completion,
                "label": passed(branch),
                "tools": built.tools,
                **built.columns(branch),
            }
        )
    return records


def _sft(branches: Sequence[BranchJson], built: _Built) -> list[TrlRecord]:
    records = []
    for branch in _in_order(branches):
        if not passed(branch) or not branch["final_answer"].strip():
            continue
        turns = built.turns(branch)
        records.append(
            {
                "messages": turns.prompt + turns.completion,
                "output_type": "final_answer",
                "tools": built.tools,
                **built.columns(branch),
            }
        )
    return records


def dpo_record(
    branches: Sequence[BranchJson], options: TrlOptions = _DEFAULT
) -> TrlRecord | DpoSkip:
    """The preference record of one rollout, or a ``DpoSkip`` saying why it has none (the
    reasons of ``pairs.choose_pair``; an empty rollout is ``fewer_than_two_usable_branches``
    with an empty rollout id)."""
    return _dpo(branches, _Built(options))


def prompt_records(
    branches: Sequence[BranchJson], options: TrlOptions = _DEFAULT
) -> list[TrlRecord]:
    """One prompt-completion record per branch, in ``branch_index`` order, with ``reward``
    (``rank.reward``: the total score normalised to [0, 1]) and the branch's scores."""
    return _prompt(branches, _Built(options))


def kto_records(branches: Sequence[BranchJson], options: TrlOptions = _DEFAULT) -> list[TrlRecord]:
    """One unpaired record per usable branch (``objective_status`` not ``unknown``) with a
    non-blank final answer, in ``branch_index`` order; ``label`` is ``passed(branch)``."""
    return _kto(branches, _Built(options))


def sft_records(branches: Sequence[BranchJson], options: TrlOptions = _DEFAULT) -> list[TrlRecord]:
    """The whole conversation of each passing branch with a non-blank final answer, in
    ``branch_index`` order, as ``messages``."""
    return _sft(branches, _Built(options))


#: The branch columns of an SFT record made from an SFT input, which has no branch.
_NO_BRANCH: Final[TrlRecord] = dict.fromkeys(
    ("temperature", "seed", "objective_score", "objective_status", "judge_score")
) | {"total_score": None, "branch_index": None}


def sft_input_record(record: Mapping[str, Any], options: TrlOptions = _DEFAULT) -> TrlRecord:
    """The SFT record of an SFT input record (the contract's ``SftTrainingRecord``, valid):
    its messages in the trl form (null keys dropped, tool-call arguments and ids as for a
    branch; a tool turn's ``tool_call_id`` mapped to the id its call got, or when the input
    names none or an unknown one, to the oldest call not answered yet, as a branch's results
    are paired, else to the latest call's), its ``output_type``, its provenance as the
    lineage columns and ``upstream_provenance``; the branch columns are null. A tool turn
    that follows no call keeps no id: ``targets.shape`` then says so."""
    messages: list[dict[str, Any]] = []
    names: list[str] = []
    # The input's call id -> the ids written for its calls not answered yet, in call order
    # (a producer may give two calls one id: the first tool turn answers the first call).
    waiting: dict[str, list[str]] = {}
    unanswered: list[str] = []  # the written ids not answered yet, oldest first
    latest = ""
    for given in record["messages"]:
        role, content = given["role"], given["content"]
        turn: dict[str, Any] = {"role": role, "content": content}
        calls = given.get("tool_calls")
        if role == "tool":
            named = given.get("tool_call_id")
            queue = waiting.get(named, []) if isinstance(named, str) else []
            call_id = queue.pop(0) if queue else unanswered[0] if unanswered else latest
            if call_id in unanswered:
                unanswered.remove(call_id)
                for ids in waiting.values():
                    if call_id in ids:
                        ids.remove(call_id)
            if call_id:
                turn["tool_call_id"] = call_id
        elif calls:
            written = []
            for call in calls:
                written.append(_written_call(call, names, options))
                latest = written[-1]["id"]
                waiting.setdefault(call["id"], []).append(latest)
                unanswered.append(latest)
            turn["tool_calls"] = written
        messages.append(turn)
    provenance = record["provenance"]
    task = next((m["content"] for m in record["messages"] if m["role"] == "user"), "")
    rollout_id = provenance.get("rollout_id")
    return {
        "messages": messages,
        "output_type": record["output_type"],
        "tools": _tools_column(options),
        "rollout_id": rollout_id or None,
        "task_hash": task_hash(task),
        "source": provenance["source"],
        "model_id": None,
        "upstream_provenance": orjson.dumps(provenance).decode("utf-8"),
        **_NO_BRANCH,
    }


#: The record kinds of ``rollout_records``, by the name of its field.
RECORD_KINDS: Final = frozenset({"dpo", "prompt", "kto", "sft"})


class RolloutRecords(NamedTuple):
    """Every TRL record of one rollout (``rollout_records``)."""

    dpo: TrlRecord | DpoSkip | None  # None: not wanted
    prompt: list[TrlRecord]
    kto: list[TrlRecord]
    sft: list[TrlRecord]


def rollout_records(
    branches: Sequence[BranchJson],
    options: TrlOptions = _DEFAULT,
    wanted: Collection[str] = RECORD_KINDS,
) -> RolloutRecords:
    """The records of the builders of ``wanted`` (of ``RECORD_KINDS``) for one rollout, each
    branch's turns and columns built once (so records share them: write them, do not
    mutate them); a kind not wanted gives None (``dpo``) or no record."""
    built = _Built(options)
    return RolloutRecords(
        _dpo(branches, built) if "dpo" in wanted else None,
        _prompt(branches, built) if "prompt" in wanted else [],
        _kto(branches, built) if "kto" in wanted else [],
        _sft(branches, built) if "sft" in wanted else [],
    )


def _template_message(message: Mapping[str, Any]) -> dict[str, Any]:
    # Drop nulls: Arrow gives every message every key any message has, and templates test
    # keys for presence (Hermes 3, Llama 3.1: "'tool_calls' in message").
    turn = {key: value for key, value in message.items() if value is not None}
    calls = turn.get("tool_calls")
    if isinstance(calls, list):
        turn["tool_calls"] = [
            {
                **call,
                "function": {
                    **call["function"],
                    "arguments": _as_object(call["function"].get("arguments")),
                },
            }
            if isinstance(call, Mapping) and isinstance(call.get("function"), Mapping)
            else call
            for call in calls
        ]
    return turn


def arguments_as_objects(example: Mapping[str, Any]) -> dict[str, Any]:
    """The loader for templates that need tool-call arguments as mappings (they ``tojson``
    or iterate them: Qwen2.5, Llama 3.1, Mistral, DeepSeek V3.1).

    Returns a copy of one record (as written, or as ``datasets`` gives it back) in which
    every message list has each tool call's JSON-string ``arguments`` decoded to the object
    it encodes (a string that encodes no object stays a string), null-valued message keys
    removed (``datasets`` fills a key absent from a message with null), and a JSON-string
    ``tools`` decoded to its list. Use it per example before ``apply_chat_template``, or as
    ``dataset.map(arguments_as_objects)`` with ``datasets`` 5 or later (which keeps
    heterogeneous objects as JSON)."""
    loaded = dict(example)
    for key in MESSAGE_COLUMNS:
        messages = example.get(key)
        if isinstance(messages, list):
            loaded[key] = [_template_message(m) if isinstance(m, Mapping) else m for m in messages]
    tools = example.get("tools")
    if isinstance(tools, str):
        loaded["tools"] = orjson.loads(tools)
    return loaded
