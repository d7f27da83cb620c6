"""The real consumers of the TRL target, for its tests: ``datasets`` loading the JSONL, the
shared chat templates rendered by transformers, TRL's data helpers.

Nothing here reaches a hub: tokenizers are built from a one-word ``tokenizers`` model with
the template's text, and ``datasets`` runs offline with its cache in a test folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import orjson

from datafactory.records import BranchJson
from datafactory.repair import BRANCH, Reject, normalise_line
from datafactory.targets import arguments_as_objects
from wiregate.record_validator import ValidatorSet

HERMES = "NousResearch-Hermes-3-Llama-3.1-8B-tool_use"
QWEN25 = "Qwen-Qwen2.5-7B-Instruct"
QWEN3 = "Qwen-Qwen3-0.6B"
DEEPSEEK = "deepseek-ai-DeepSeek-V3.1"
LLAMA31 = "meta-llama-Llama-3.1-8B-Instruct"
MISTRAL = "mistralai-Mistral-Nemo-Instruct-2407"
TEMPLATES = (HERMES, QWEN25, QWEN3, DEEPSEEK, LLAMA31, MISTRAL)
#: Templates that ``tojson`` a call's arguments: a JSON string renders as a string literal,
#: so they need ``arguments_as_objects``. Qwen3 and Hermes 3 insert a string as it is.
TOJSON_ARGUMENTS = frozenset({QWEN25, DEEPSEEK, LLAMA31, MISTRAL})

#: The completion columns of each target's records (SFT has ``messages`` only).
COMPLETIONS: dict[str, tuple[str, ...]] = {
    "dpo": ("chosen", "rejected"),
    "prompt": ("completion",),
    "kto": ("completion",),
    "sft": (),
}


def tokenizers(templates_dir: Path) -> dict[str, Any]:
    """One tokenizer per shared template, rendering through transformers' own path."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    built = {}
    for name in TEMPLATES:
        text = (templates_dir / f"{name}.jinja").read_text(encoding="utf-8")
        model = Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
        built[name] = PreTrainedTokenizerFast(
            tokenizer_object=model, chat_template=text, bos_token="<s>", eos_token="</s>"
        )
    return built


def offline_datasets(cache: Path) -> Any:
    """The ``datasets`` module, imported offline with its caches under ``cache``."""
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_HOME"] = str(cache / "hf-home")
    import datasets

    datasets.disable_progress_bars()
    return datasets


def load_jsonl(datasets: Any, path: Path, cache: Path) -> Any:
    """``datasets.load_dataset("json", ...)`` of one file: its ``train`` split."""
    return datasets.load_dataset(
        "json", data_files=str(path), split="train", cache_dir=str(cache / "datasets")
    )


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(record) + b"\n" for record in records))
    return path


def rollouts(path: Path, validators: ValidatorSet) -> dict[str, list[BranchJson]]:
    """The branch records of a JSONL file as the load stage repairs them, by rollout."""
    groups: dict[str, list[BranchJson]] = {}
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        try:
            record = normalise_line(line, validators)
        except Reject:
            continue
        if record.record_type == BRANCH:
            branch = cast(BranchJson, record.data)
            groups.setdefault(branch["rollout_id"], []).append(branch)
    return groups


def render(
    tokenizer: Any,
    template: str,
    messages: Sequence[Mapping[str, Any]],
    tools: list[Any] | None,
    generation_prompt: bool = False,
) -> str:
    """One rendering; Hermes 3's tool-use template iterates ``tools`` unconditionally, so a
    record without known tools is rendered there with an empty list."""
    if template == HERMES and tools is None:
        tools = []
    text = tokenizer.apply_chat_template(
        list(messages), tools=tools, tokenize=False, add_generation_prompt=generation_prompt
    )
    return cast(str, text)


def _calls(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [call["function"] for m in messages for call in (m.get("tool_calls") or ())]


def check_rendering(kind: str, row: Mapping[str, Any], tokenizer: Any, template: str) -> None:
    """Render one loaded record through one template, with its arguments as written and as
    objects (``arguments_as_objects``): nothing raises, the rendered prompt is a prefix of
    prompt + each completion, the task text and every tool call appear."""
    for example in (dict(row), arguments_as_objects(row)):
        tools = orjson.loads(row["tools"]) if row["tools"] is not None else None
        if kind == "sft":
            messages = example["messages"]
            task = next(m["content"] for m in messages if m["role"] == "user")
            conversations = [("", render(tokenizer, template, messages, tools), messages)]
        else:
            prompt = example["prompt"]
            task = next(m["content"] for m in prompt if m["role"] == "user")
            head = render(tokenizer, template, prompt, tools, generation_prompt=True)
            assert task.strip() in head, (template, kind)
            conversations = [
                (head, render(tokenizer, template, prompt + example[key], tools), example[key])
                for key in COMPLETIONS[kind]
            ]
        for head, full, turns in conversations:
            assert full.startswith(head), (template, kind, head, full)
            assert task.strip() in full, (template, kind)
            for function in _calls(turns):
                assert function["name"] in full, (template, function)
                arguments = function["arguments"]
                if isinstance(arguments, dict):
                    for key in arguments:
                        assert json.dumps(key, ensure_ascii=False) in full, (template, key)
                elif template not in TOJSON_ARGUMENTS:
                    assert arguments in full, (template, arguments)
