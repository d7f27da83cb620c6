"""The dataset card of a trl run: ``README.md`` next to the outputs, in the Hugging Face
dataset-card format, so ``datasets.load_dataset(DIRECTORY, NAME)`` finds each output as a
config with its declared features, and the card says where the data came from.

The YAML header holds ``license``, ``task_categories``, ``configs`` (one per output, its
``data_files``) and ``dataset_info`` (each config's ``features``, in the YAML form of
``datasets.Features``); the body holds the manifest's lineage: every input with its sha256,
the contract the inputs were validated against, the G3 gate's settings and result, the
exporter's version. Nothing in it depends on the time of the run: the same inputs give the
same card. Strings are written as JSON strings, which YAML reads as they are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib import metadata
from typing import Any, Final, TypeAlias

import orjson

from contracts import SCHEMA_FILES, Contract
from datafactory.outputs import sha256_file
from datafactory.settings import Settings
from datafactory.targets.shape import OUTPUTS

__all__ = ["SPLIT", "contract_version", "dataset_card", "features"]

#: The split each output is in its config.
SPLIT: Final = "train"

# A feature: a dtype name, a list of a feature ([x]), or a struct (a dict of features).
Feature: TypeAlias = "str | list[Feature] | dict[str, Feature]"

_CALL: Final[dict[str, Feature]] = {
    "id": "string",
    "type": "string",
    "function": {"name": "string", "arguments": "string"},
}
_MESSAGE: Final[dict[str, Feature]] = {
    "role": "string",
    "content": "string",
    "tool_calls": [_CALL],
    "tool_call_id": "string",
}
_ROLLOUT: Final[dict[str, Feature]] = {
    "tools": "string",
    "rollout_id": "string",
    "task_hash": "string",
    "source": "string",
    "model_id": "string",
    "upstream_provenance": "string",
}
_BRANCH: Final[dict[str, Feature]] = {
    "temperature": "float64",
    "seed": "int64",
    "objective_score": "int64",
    "objective_status": "string",
    "judge_score": "float64",
    "total_score": "float64",
}
_TASKS: Final = {
    "dpo": "text-generation",
    "ppo": "reinforcement-learning",
    "kto": "text-generation",
    "sft": "text-generation",
}
_TRAINERS: Final = {
    "dpo": "DPOTrainer (conversational preference, explicit prompt)",
    "ppo": "GRPOTrainer / RLOOTrainer (prompt-only, with reward columns)",
    "kto": "KTOTrainer (unpaired preference)",
    "sft": "SFTTrainer (conversational language modelling)",
}


def features(output: str) -> dict[str, Feature]:
    """The columns of a trl output's records and their types, as ``datasets`` loads them
    (tool-call arguments as JSON strings)."""
    messages: list[Feature] = [_MESSAGE]
    if output == "dpo":
        branches: dict[str, Feature] = {}
        for side in ("chosen", "rejected"):
            branches[f"{side}_branch"] = "int64"
            branches.update({f"{side}_{k}": v for k, v in _BRANCH.items()})
        return {
            "prompt": messages,
            "chosen": messages,
            "rejected": messages,
            **_ROLLOUT,
            **branches,
        }
    own: dict[str, Feature]
    if output == "sft":
        own = {"messages": messages, "output_type": "string"}
    elif output == "kto":
        own = {"prompt": messages, "completion": messages, "label": "bool"}
    else:
        own = {"prompt": messages, "completion": messages, "reward": "float64"}
    return {**own, **_ROLLOUT, **_BRANCH, "branch_index": "int64"}


def _yaml_features(columns: Mapping[str, Feature]) -> list[dict[str, Any]]:
    """``datasets.Features._to_yaml_list`` of the columns."""
    out: list[dict[str, Any]] = []
    for name, feature in columns.items():
        if isinstance(feature, str):
            out.append({"name": name, "dtype": feature})
        elif isinstance(feature, list):
            item = feature[0]
            assert isinstance(item, dict), "lists of structs only"
            out.append({"name": name, "list": _yaml_features(item)})
        else:
            out.append({"name": name, "struct": _yaml_features(feature)})
    return out


def contract_version(contract: Contract) -> dict[str, dict[str, str]]:
    """Each schema of the contract: its ``$id`` (which carries its version) and sha256."""
    facts = {}
    for name in sorted(SCHEMA_FILES):
        digest = sha256_file(str(contract.schema_path(name)))
        facts[name] = {"id": str(contract.schemas[name].get("$id", "")), "sha256": digest}
    return facts


def _yaml(value: Any, indent: int = 0) -> list[str]:
    """Block-style YAML of JSON-like data; scalars as JSON (which YAML reads alike)."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}{key}:")
                lines += _yaml(item, indent + (0 if isinstance(item, list) else 2))
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
    else:
        for item in value:
            if not isinstance(item, (dict, list)):
                lines.append(f"{pad}- {_scalar(item)}")
                continue
            inner = _yaml(item, indent + 2)
            lines.append(f"{pad}- {inner[0].lstrip()}")
            lines += inner[1:]
    return lines


def _scalar(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


def _exporter_version() -> str:
    try:
        return metadata.version("wiregate")
    except metadata.PackageNotFoundError:  # run from a checkout that is not installed
        return "unknown"


def dataset_card(
    settings: Settings, manifest: Mapping[str, Any], card_path: str, contract: Mapping[str, Any]
) -> bytes:
    """The card's bytes for a trl run that wrote ``manifest``'s outputs; ``card_path``: where
    it goes (``data_files`` are relative to its directory); ``contract``:
    ``contract_version``'s facts."""
    here = os.path.dirname(os.path.abspath(card_path))
    outputs = [name for name in OUTPUTS if name in manifest["outputs"]]
    configs, infos = [], []
    for number, name in enumerate(outputs):
        path = os.path.relpath(os.path.abspath(manifest["outputs"][name]["path"]), here)
        config: dict[str, Any] = {
            "config_name": name,
            "data_files": [{"split": SPLIT, "path": path.replace(os.sep, "/")}],
        }
        if number == 0:
            config["default"] = True
        configs.append(config)
        if settings.tool_arguments == "string":  # objects have no one type
            infos.append({"config_name": name, "features": _yaml_features(features(name))})
    header: dict[str, Any] = {
        "license": settings.license,
        "task_categories": sorted({_TASKS[name] for name in outputs}),
        "tags": ["trl"],
        "configs": configs,
    }
    if infos:
        header["dataset_info"] = infos
    body = ["---", *_yaml(header), "---", "", "# Training records (TRL)", ""]
    body.append("Written by `datafactory --target trl`. Outputs:")
    body.append("")
    for name in outputs:
        facts = manifest["outputs"][name]
        body.append(
            f"- `{name}`: {facts['records']} records for {_TRAINERS[name]}; "
            f"sha256 `{facts['sha256']}`"
        )
    trl = manifest["trl"]
    body += ["", f"Tool-call arguments: {trl['tool_arguments']}.", "", "## Lineage", ""]
    body += ["Inputs:", ""]
    body += [
        f"- `{f['path']}`: {f['lines']} lines, sha256 `{f['sha256']}`" for f in manifest["inputs"]
    ]
    body += ["", "Contract the inputs were validated against:", ""]
    body += [f"- `{name}`: `{f['id']}`, sha256 `{f['sha256']}`" for name, f in contract.items()]
    g3 = manifest["g3"]
    eval_items = g3["eval_items"]
    gate = (
        f"eval items `{eval_items['path']}` ({eval_items['items']} items, sha256 "
        f"`{eval_items['sha256']}`)"
        if eval_items
        else "no eval items"
    )
    body += [
        "",
        f"G3 contamination gate: {g3['status']}; {g3['ngram']}-word n-grams, {gate}; "
        f"{g3['contaminated_rollouts']} contaminated rollouts"
        + (" dropped" if g3["dropped"] else "")
        + ".",
        "",
        f"Exporter: wiregate {_exporter_version()} (`{manifest['schema_version']}` manifest).",
        "",
    ]
    return "\n".join(body).encode("utf-8")
