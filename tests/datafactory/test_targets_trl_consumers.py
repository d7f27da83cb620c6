"""The TRL target's records read by their real consumers: ``datasets``, TRL's data helpers and
the six shared chat templates (transformers' rendering path), on the real fixtures, the demo
data and random valid rollouts."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from datafactory import export
from datafactory.contract import exporter_contract
from datafactory.pairs import DpoSkip
from datafactory.records import BranchJson
from datafactory.targets import (
    TrlOptions,
    TrlRecord,
    arguments_as_objects,
    dpo_record,
    kto_records,
    prompt_records,
    rollout_records,
    sft_input_record,
    sft_records,
    tool_catalogue,
)
from datafactory.targets.shape import TrlCheck
from tests.datafactory.trl_consumers import (
    COMPLETIONS,
    DEEPSEEK,
    HERMES,
    LLAMA31,
    MISTRAL,
    QWEN3,
    QWEN25,
    TEMPLATES,
    TOJSON_ARGUMENTS,
    check_rendering,
    load_jsonl,
    offline_datasets,
    render,
    rollouts,
    tokenizers,
    write_jsonl,
)
from wiregate.record_validator import ValidatorSet, guess_record_type

pytest.importorskip("transformers", reason="transformers needs Python 3.11 (dev extra)")
pytest.importorskip("datasets", reason="datasets is in the dev extra (Python 3.11+)")

VALIDATORS = ValidatorSet(exporter_contract())
TargetRecords = Callable[[Sequence[BranchJson], TrlOptions], list[TrlRecord]]


def _dpo(branches: Sequence[BranchJson], options: TrlOptions) -> list[TrlRecord]:
    record = dpo_record(branches, options)
    return [] if isinstance(record, DpoSkip) else [record]


_ONE_BY_ONE: tuple[Callable[[Sequence[BranchJson], TrlOptions], Any], ...] = (
    dpo_record,
    prompt_records,
    kto_records,
    sft_records,
)
TARGETS: dict[str, TargetRecords] = {
    "dpo": _dpo,
    "prompt": prompt_records,
    "kto": kto_records,
    "sft": sft_records,
}


@pytest.fixture(scope="session")
def hf_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hf")


@pytest.fixture(scope="session")
def datasets(hf_cache: Path) -> Any:
    return offline_datasets(hf_cache)


@pytest.fixture(scope="session")
def templates(repo_root: Path) -> dict[str, Any]:
    folder = (repo_root / ".." / "shared" / "chat-templates").resolve()
    if not folder.is_dir():
        pytest.skip("../shared/chat-templates is not present beside the repository")
    return tokenizers(folder)


def _trl() -> Any:
    return pytest.importorskip(
        "trl.data_utils", reason="TRL is installed without its torch requirement (Makefile)"
    )


def _build(groups: dict[str, list[BranchJson]], options: TrlOptions) -> dict[str, list[TrlRecord]]:
    built: dict[str, list[TrlRecord]] = {kind: [] for kind in TARGETS}
    for branches in groups.values():
        records = rollout_records(branches, options)
        assert records == tuple(build(branches, options) for build in _ONE_BY_ONE)
        assert records.dpo is not None  # every kind is wanted by default
        built["dpo"] += [] if isinstance(records.dpo, DpoSkip) else [records.dpo]
        built["prompt"] += records.prompt
        built["kto"] += records.kto
        built["sft"] += records.sft
    # Every record is its output's record type of the contract, in the turn order it says.
    check = TrlCheck(VALIDATORS, options.tool_arguments)
    for kind, rows in built.items():
        for row in rows:
            assert check.problem(_OUTPUT[kind], row) is None, row
    return built


#: The exporter's output of each record kind.
_OUTPUT = {"dpo": "dpo", "prompt": "ppo", "kto": "kto", "sft": "sft"}


def _loaded(
    datasets: Any, folder: Path, cache: Path, records: dict[str, list[TrlRecord]]
) -> Iterator[tuple[str, Any]]:
    for kind, rows in records.items():
        if rows:
            dataset = load_jsonl(datasets, write_jsonl(folder / f"{kind}.jsonl", rows), cache)
            assert dataset.num_rows == len(rows)
            yield kind, dataset


# The inputs with branch records, and the records each target makes of them.
CORPUS_INPUTS = {
    "trace-pipeline/data-loop-rollout-branches.v1.jsonl": {
        "dpo": 1,
        "prompt": 2,
        "kto": 2,
        "sft": 1,
    },
    "trace-pipeline/golden-rollout-policy-blocked.v1.jsonl": {
        "dpo": 0,
        "prompt": 1,
        "kto": 0,
        "sft": 0,
    },
    "trace-pipeline/golden-rollout-repair-success.v1.jsonl": {
        "dpo": 1,
        "prompt": 2,
        "kto": 2,
        "sft": 1,
    },
    "trace-pipeline/golden-rollout-success.v1.jsonl": {"dpo": 0, "prompt": 1, "kto": 1, "sft": 1},
    "trace-pipeline/smoke-rollout-smoke.jsonl": {"dpo": 0, "prompt": 3, "kto": 3, "sft": 2},
    "wasmagent-js/ranked-rollouts.v1.jsonl": {"dpo": 1, "prompt": 2, "kto": 2, "sft": 1},
    "wasmagent-js/rollout-branches.v1.jsonl": {"dpo": 1, "prompt": 2, "kto": 2, "sft": 1},
}
DEMO_COUNTS = {"dpo": 2, "prompt": 7, "kto": 6, "sft": 4}


def _check_file(
    path: Path, expected: dict[str, int], datasets: Any, templates: dict[str, Any], tmp_path: Path
) -> None:
    records = _build(rollouts(path, VALIDATORS), TrlOptions())
    assert {kind: len(rows) for kind, rows in records.items()} == expected
    for kind, dataset in _loaded(datasets, tmp_path, tmp_path, records):
        for row in dataset:
            for name in TEMPLATES:
                check_rendering(kind, row, templates[name], name)


def test_corpus_fixtures_load_and_render(
    corpus_dir: Path, datasets: Any, templates: dict[str, Any], tmp_path: Path
) -> None:
    fixtures = corpus_dir / "fixtures"
    with_branches = sorted(
        str(p.relative_to(fixtures)) for p in fixtures.rglob("*.jsonl") if rollouts(p, VALIDATORS)
    )
    assert with_branches == sorted(CORPUS_INPUTS)
    for index, (name, expected) in enumerate(CORPUS_INPUTS.items()):
        folder = tmp_path / str(index)
        folder.mkdir()
        _check_file(fixtures / name, expected, datasets, templates, folder)


def test_demo_data_loads_and_renders(
    repo_root: Path, datasets: Any, templates: dict[str, Any], tmp_path: Path
) -> None:
    _check_file(
        repo_root / "contracts" / "examples" / "rollouts.jsonl",
        DEMO_COUNTS,
        datasets,
        templates,
        tmp_path,
    )


def test_upstream_provenance_survives_loading(
    corpus_dir: Path, datasets: Any, tmp_path: Path
) -> None:
    path = corpus_dir / "fixtures" / "trace-pipeline" / "smoke-rollout-smoke.jsonl"
    records = _build(rollouts(path, VALIDATORS), TrlOptions())
    row = load_jsonl(datasets, write_jsonl(tmp_path / "p.jsonl", records["prompt"]), tmp_path)[0]
    assert (row["source"], row["model_id"], row["rollout_id"]) == (
        "bscode-smoke",
        "claude-sonnet-4-6",
        "rollout-smoke-001",
    )
    assert orjson.loads(row["upstream_provenance"])["policy_bundle_digest"].startswith("c2f53438")
    assert (row["temperature"], row["objective_status"]) == (0.7, "pass")
    # datasets 5.2 reads a file whose message objects differ in keys through its JSON fallback
    # (pandas' parser, not precise_float): 1 / 1.3 comes back as 0.7692307692.
    assert row["reward"] == pytest.approx(1.0 / 1.3, rel=1e-9)
    assert row["reward"] != 1.0 / 1.3


def test_wasmagent_pair_keeps_both_trajectories(
    corpus_dir: Path, datasets: Any, tmp_path: Path
) -> None:
    path = corpus_dir / "fixtures" / "wasmagent-js" / "rollout-branches.v1.jsonl"
    (record,) = _build(rollouts(path, VALIDATORS), TrlOptions())["dpo"]
    row = load_jsonl(datasets, write_jsonl(tmp_path / "d.jsonl", [record]), tmp_path)[0]
    assert row["prompt"] == [{"role": "user", "content": "Add a hello world button to the page"}]
    chosen_args, rejected_args = (
        orjson.loads(row[key][0]["tool_calls"][0]["function"]["arguments"])
        for key in ("chosen", "rejected")
    )
    assert chosen_args["content"].startswith("export function HelloButton()")
    assert rejected_args["content"] == "TODO: implement button"
    assert [row["chosen"][-1]["content"], row["rejected"][-1]["content"]] == [
        "Added HelloButton component to src/Button.tsx",
        "Created a placeholder for the button",
    ]
    assert (row["chosen_branch"], row["rejected_branch"]) == (0, 1)


# TRL's own data helpers.


def test_trl_helpers_read_every_target(
    repo_root: Path, datasets: Any, templates: dict[str, Any], tmp_path: Path
) -> None:
    trl = _trl()
    groups = rollouts(repo_root / "contracts" / "examples" / "rollouts.jsonl", VALIDATORS)
    catalogue = tool_catalogue(
        [
            {
                "name": "read_file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
            {
                "type": "function",
                "function": {"name": "write_file", "description": "Write a file."},
            },
            {"name": "run_tests"},
        ]
    )
    for tools in (None, catalogue):
        folder = tmp_path / ("known" if tools else "unknown")
        folder.mkdir()
        records = _build(groups, TrlOptions(tools=tools))
        for kind, dataset in _loaded(datasets, folder, folder, records):
            for row in dataset:
                assert trl.is_conversational(row)
                assert trl.maybe_extract_prompt(row) == row  # the explicit prompt is kept
                row_tools = orjson.loads(row["tools"]) if row["tools"] else None
                # Every known tool, in the catalogue's order, whatever the row called (grep,
                # called in the demo, is not in it; some rows call none).
                assert [t["function"]["name"] for t in row_tools or ()] == list(tools or ())
                for name in TEMPLATES:
                    example = arguments_as_objects(row) if name in TOJSON_ARGUMENTS else row
                    keys = ("messages",) if kind == "sft" else ("prompt", *COMPLETIONS[kind])
                    example = {key: example[key] for key in keys} | (
                        {"label": row["label"]} if kind == "kto" else {}
                    )
                    if name == HERMES and row_tools is None:
                        # TRL passes `tools or None`; this template iterates tools always.
                        with pytest.raises(TypeError, match="'NoneType' object is not iterable"):
                            trl.maybe_apply_chat_template(example, templates[name], tools=row_tools)
                        continue
                    text = trl.maybe_apply_chat_template(example, templates[name], tools=row_tools)
                    for key in COMPLETIONS[kind]:
                        whole = render(
                            templates[name], name, example["prompt"] + example[key], row_tools
                        )
                        assert text["prompt"] + text[key] == whole, (name, kind)
                    if kind == "sft":
                        assert text["text"] == render(
                            templates[name], name, example["messages"], row_tools
                        )
            if kind == "dpo":
                unpaired = trl.unpair_preference_dataset(dataset)
                assert unpaired.num_rows == 2 * dataset.num_rows
                assert unpaired["label"] == [True] * dataset.num_rows + [False] * dataset.num_rows
                assert unpaired[0]["completion"] == dataset[0]["chosen"]
                assert unpaired[dataset.num_rows]["completion"] == dataset[0]["rejected"]
                for row in unpaired:
                    example = {k: row[k] for k in ("prompt", "completion", "label")}
                    out = trl.maybe_apply_chat_template(example, templates[QWEN3])
                    assert out["label"] == row["label"]


# Random valid rollouts.

_TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=30)
_KEY = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
_VALUE = st.one_of(
    st.integers(-5, 5), st.booleans(), _TEXT, st.none(), st.lists(st.integers(0, 3), max_size=2)
)


@st.composite
def _events(draw: st.DrawFn) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        data: dict[str, Any] = {
            "name": draw(st.sampled_from(["read_file", "write_file", "run_tests", "search"])),
            "args": draw(st.dictionaries(_KEY, _VALUE, max_size=3)),
        }
        if draw(st.booleans()):
            data["content"] = draw(_TEXT)
        events.append({"event": "tool_call", "data": data})
        if draw(st.booleans()):
            events.append(
                {"event": "tool_result", "data": {"output": draw(st.one_of(_TEXT, _VALUE))}}
            )
        elif draw(st.booleans()):
            events.append({"event": "tool_result", "data": {"error": draw(_TEXT)}})
    return events


@st.composite
def _rollout(draw: st.DrawFn) -> list[dict[str, Any]]:
    task = draw(_TEXT)
    branches = []
    for index in range(draw(st.integers(1, 4))):
        objective = draw(st.sampled_from([0, 1]))
        judge = draw(st.one_of(st.none(), st.integers(0, 10)))
        branch: dict[str, Any] = {
            "rollout_id": "r",
            "task": task,
            "branch_index": index,
            "temperature": draw(st.sampled_from([0.0, 0.7, 1.0])),
            "session_id": "s",
            "tool_call_sequence": draw(_events()),
            "final_answer": draw(st.one_of(st.just(""), _TEXT)),
            "objective_score": objective,
            "rank": draw(st.integers(1, 4)),
            "total_score": objective + (5 if judge is None else judge) / 10 * 0.3,
        }
        status = draw(st.sampled_from([None, "given", "unknown"]))
        if status is not None:
            branch["objective_status"] = (
                "unknown" if status == "unknown" else ("pass" if objective else "fail")
            )
        if judge is not None:
            branch["judge_score"] = judge
        assert VALIDATORS.get("RolloutBranchRecord").is_valid(branch)
        branches.append(branch)
    return branches


_CATALOGUE = tool_catalogue(
    [
        {
            "name": "read_file",
            "description": "Read.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "file"}},
            },
        },
        {"name": "write_file", "description": "Write."},
        {"name": "search"},
    ]
)


@settings(max_examples=30)
@given(
    rollout=_rollout(),
    options=st.builds(
        TrlOptions,
        tool_arguments=st.sampled_from(["string", "object"]),
        system=st.one_of(st.none(), _TEXT),
        tools=st.sampled_from([None, _CATALOGUE]),
    ),
)
def test_random_rollouts_load_and_render(
    rollout: list[Any], options: TrlOptions, datasets: Any, templates: dict[str, Any]
) -> None:
    records = _build({"r": rollout}, options)
    try:
        import trl.data_utils as trl
    except ImportError:  # TRL is installed without its requirements (Makefile)
        trl = None
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for kind, dataset in _loaded(datasets, folder, folder, records):
            for row in dataset:
                assert trl is None or trl.is_conversational(row)
                for template in TEMPLATES:
                    if template == MISTRAL and options.system is not None:
                        continue  # drops a system turn; see the test below
                    check_rendering(kind, row, templates[template], template)


# What each template needs, pinned on a minimal tool-calling conversation.


def _conversation(arguments: Any, content: Any = "", call_id: str = "call00000") -> list[Any]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "write_file", "arguments": arguments},
    }
    return [
        {"role": "user", "content": "Write a.py"},
        {"role": "assistant", "content": content, "tool_calls": [call]},
        {"role": "tool", "content": "ok", "tool_call_id": call_id},
        {"role": "assistant", "content": "Done"},
    ]


def test_hermes_tool_use_needs_a_tools_list_with_descriptions(templates: dict[str, Any]) -> None:
    import jinja2

    tokenizer = templates[HERMES]
    messages = _conversation('{"path":"a.py"}')
    with pytest.raises(TypeError, match="'NoneType' object is not iterable"):
        tokenizer.apply_chat_template(messages, tools=None, tokenize=False)
    assert "Here are the available tools: <tools>  </tools>" in tokenizer.apply_chat_template(
        messages, tools=[], tokenize=False
    )
    spec = {"name": "write_file", "parameters": {"type": "object", "properties": {}}}
    with pytest.raises(jinja2.UndefinedError, match="'dict object' has no attribute 'description'"):
        tokenizer.apply_chat_template(messages, tools=[spec], tokenize=False)
    text = tokenizer.apply_chat_template(
        messages, tools=list(tool_catalogue([spec]).values()), tokenize=False
    )
    assert (
        '{"type": "function", "function": {"name": "write_file", "description": "write_file() - \n\n", "parameters": {}}'
        in text
    )


def test_qwen3_needs_text_content_on_a_tool_calling_turn(templates: dict[str, Any]) -> None:
    import jinja2

    tokenizer = templates[QWEN3]
    with pytest.raises(jinja2.UndefinedError, match="'dict object' has no attribute 'content'"):
        tokenizer.apply_chat_template(_conversation("{}", content=None), tokenize=False)
    text = tokenizer.apply_chat_template(_conversation("{}", content=""), tokenize=False)
    assert (
        '<|im_start|>assistant\n<tool_call>\n{"name": "write_file", "arguments": {}}\n</tool_call><|im_end|>'
        in text
    )


def test_mistral_needs_nine_character_call_ids(templates: dict[str, Any]) -> None:
    import jinja2

    tokenizer = templates[MISTRAL]
    with pytest.raises(
        jinja2.TemplateError, match="Tool call IDs should be alphanumeric strings with length 9!"
    ):
        tokenizer.apply_chat_template(_conversation("{}", call_id="c1"), tokenize=False)
    text = tokenizer.apply_chat_template(_conversation("{}"), tokenize=False)
    assert '[TOOL_CALLS][{"name": "write_file", "arguments": "{}", "id": "call00000"}]</s>' in text


@pytest.mark.parametrize("template", TEMPLATES)
def test_string_arguments_and_the_object_loader(templates: dict[str, Any], template: str) -> None:
    messages = _conversation('{"path":"a.py"}')
    as_written = render(templates[template], template, messages, None)
    as_objects = render(
        templates[template],
        template,
        arguments_as_objects({"messages": messages})["messages"],
        None,
    )
    assert '{"path": "a.py"}' in as_objects
    if template in TOJSON_ARGUMENTS:
        # tojson of a string: the model would learn to emit a JSON string, not an object.
        assert '"{\\"path\\":\\"a.py\\"}"' in as_written
    else:
        assert '{"path":"a.py"}' in as_written


def test_mistral_renders_a_system_turn_only_when_the_user_turn_is_last(
    templates: dict[str, Any],
) -> None:
    # Mistral Nemo puts the system text into the user turn only when that turn is the last
    # message: with a completion after it, the system text is gone and the rendered prompt is
    # no prefix. Records for it are written without a system turn (TrlOptions.system=None).
    tokenizer = templates[MISTRAL]
    prompt = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    head = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    whole = tokenizer.apply_chat_template(
        [*prompt, {"role": "assistant", "content": "Hello"}], tokenize=False
    )
    assert (head, whole) == ("<s>[INST]Be brief.\n\nHi[/INST]", "<s>[INST]Hi[/INST]Hello</s>")


def test_sft_input_records_load_and_render(
    repo_root: Path, datasets: Any, templates: dict[str, Any], tmp_path: Path
) -> None:
    """The trl SFT records made of SFT input records (the contract's SftTrainingRecord
    fixtures: trace-pipeline's model dump with null keys, a tool-calling conversation with a
    system turn) load with ``datasets`` and render through every shared template."""
    folder = repo_root / "contracts/fixtures/training-record/SftTrainingRecord/valid"
    inputs = [orjson.loads(path.read_bytes()) for path in sorted(folder.glob("*.json"))]
    check = TrlCheck(VALIDATORS, "string")
    rows = [sft_input_record(record, TrlOptions(tools=_CATALOGUE)) for record in inputs]
    for row in rows:
        assert check.problem("sft", row) is None, row
    dataset = load_jsonl(datasets, write_jsonl(tmp_path / "sft.jsonl", rows), tmp_path)
    assert dataset.num_rows == len(inputs) == 3
    for row in dataset:
        system = row["messages"][0]["role"] == "system"
        for template in TEMPLATES:
            if template == MISTRAL and system:
                continue  # drops a system turn; see the test below
            check_rendering("sft", row, templates[template], template)


def _layer3_outcome(row: Any, tokenizer: Any, template: str) -> str:
    """How one template renders a Layer 3 record's ``messages`` (null keys dropped, as
    ``datasets`` fills them, arguments as objects): "ok" (the task and every call appear, and
    for a DPO record the rendered ``prompt_messages`` with a generation prompt is a prefix),
    "not a prefix", or the template's error."""
    messages = arguments_as_objects({"messages": row["messages"]})["messages"]
    try:
        full = render(tokenizer, template, messages, None)
        if "prompt_messages" in row:
            head_turns = arguments_as_objects({"messages": row["prompt_messages"]})["messages"]
            if not full.startswith(render(tokenizer, template, head_turns, None, True)):
                return "not a prefix"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    assert row["prompt"].strip() in full and all(  # templates strip text, as check_rendering allows
        call["function"]["name"] in full for m in messages for call in m.get("tool_calls") or ()
    ), (template, row)
    return "ok"


def test_layer3_records_render_where_the_templates_allow(
    repo_root: Path, corpus_dir: Path, datasets: Any, templates: dict[str, Any], tmp_path: Path
) -> None:
    """Layer 3 records (the contract's training records: producer call ids, ``content`` null
    on a tool-calling turn, ``prompt_messages`` ending at the last tool turn) load with
    ``datasets``; what each shared template makes of them is pinned here and listed in the
    README, with ``--target trl`` as the option that fixes it."""
    inputs = [
        str(repo_root / "contracts/examples/rollouts.jsonl"),
        *map(str, sorted((corpus_dir / "fixtures").rglob("*rollout*.jsonl"))),
    ]
    result = export(
        [], str(tmp_path / "dpo.jsonl"), str(tmp_path / "ppo.jsonl"), inputs=inputs,
        allow_missing_g3=True, workers=1,
    )  # fmt: skip
    assert result.exit_code == 0
    outcomes: dict[str, set[str]] = {name: set() for name in TEMPLATES}
    for name, rows in (("dpo", 5), ("ppo", 18)):
        dataset = load_jsonl(datasets, tmp_path / f"{name}.jsonl", tmp_path)
        assert dataset.num_rows == rows
        for row in dataset:
            assert VALIDATORS.get(guess_record_type(row) or "").name in (
                "DpoTrainingRecord", "PpoTrainingRecord",
            )  # fmt: skip
            for template in TEMPLATES:
                outcomes[template].add(_layer3_outcome(row, templates[template], template))
    assert outcomes == {
        HERMES: {"ok", "not a prefix"},
        QWEN25: {"ok"},
        QWEN3: {"ok", "UndefinedError: 'dict object' has no attribute 'content'"},
        DEEPSEEK: {"ok"},
        LLAMA31: {"ok"},
        MISTRAL: {
            "ok",
            "TemplateError: Tool call IDs should be alphanumeric strings with length 9!",
        },
    }


#: What each template may make of a Layer 3 record (the README's list; see the test above).
LAYER3_OUTCOMES = {
    HERMES: {"ok", "not a prefix"},
    QWEN25: {"ok"},
    QWEN3: {"ok", "UndefinedError: 'dict object' has no attribute 'content'"},
    DEEPSEEK: {"ok"},
    LLAMA31: {"ok"},
    MISTRAL: {"ok", "TemplateError: Tool call IDs should be alphanumeric strings with length 9!"},
}


@settings(max_examples=20, deadline=None)
@given(rollout=_rollout())
def test_random_rollouts_layer3_records_validate_load_and_render_as_listed(
    rollout: list[Any], datasets: Any, templates: dict[str, Any]
) -> None:
    """The layer3 target on random valid rollouts: every record validates against the
    contract, loads with ``datasets``, and every template renders it or fails only as the
    README lists."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        result = export(
            rollout, str(folder / "dpo.jsonl"), str(folder / "ppo.jsonl"),
            allow_missing_g3=True, workers=1,
        )  # fmt: skip
        assert result.exit_code == 0
        for output in ("dpo", "ppo"):
            path = folder / f"{output}.jsonl"
            rows = [orjson.loads(line) for line in path.read_bytes().splitlines()]
            for row in rows:
                record_type = guess_record_type(row) or ""
                assert VALIDATORS.get(record_type).problems(row) == []
            if not rows:
                continue
            dataset = load_jsonl(datasets, path, folder)
            assert dataset.num_rows == len(rows)
            for row in dataset:
                for template in TEMPLATES:
                    outcome = _layer3_outcome(row, templates[template], template)
                    assert outcome in LAYER3_OUTCOMES[template], (template, outcome)
