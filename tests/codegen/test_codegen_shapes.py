"""The generated TypedDict shapes (``datafactory/wire/*_dicts.py``) against the contract."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, get_origin

import pytest
from datamodel_code_generator import generate as dmcg_generate
from typing_extensions import NotRequired, get_type_hints, is_typeddict

import codegen.generate
import datafactory.wire as wire
from codegen.layout import OUTPUT_DIR, shapes_module
from contracts import locate
from datafactory.wire import rollout_wire_dicts, training_record_dicts, trl_record_dicts

if TYPE_CHECKING:
    from tests.codegen.conftest import CliResult

    Cli = Callable[..., CliResult]

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTRACT = locate(REPO_ROOT)

SHAPES = {
    "rollout-wire": rollout_wire_dicts,
    "training-record": training_record_dicts,
    "trl-record": trl_record_dicts,
}


def _object_defs() -> list[tuple[str, str, dict[str, Any]]]:
    """(schema name, def name, definition) of every object ``$defs`` entry of both schemas."""
    return [
        (schema_name, def_name, definition)
        for schema_name, schema in CONTRACT.schemas.items()
        for def_name, definition in schema["$defs"].items()
        if isinstance(definition, dict) and definition.get("type") == "object"
    ]


OBJECT_DEFS = _object_defs()


def _typeddicts(module: ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if inspect.isclass(value) and value.__module__ == module.__name__ and is_typeddict(value)
    }


def _not_required(hint: object) -> bool:
    origin: object = get_origin(hint)
    return origin is NotRequired


def _closed(shape: Any) -> object:
    """PEP 728's ``__closed__``: True for ``closed=True``, None when not given (open)."""
    return shape.__closed__


def test_one_module_per_schema_named_after_it() -> None:
    assert [shapes_module(name) for name in CONTRACT.schemas] == [
        "rollout_wire_dicts",
        "training_record_dicts",
        "trl_record_dicts",
    ]
    assert {name: module.__name__ for name, module in SHAPES.items()} == {
        "rollout-wire": "datafactory.wire.rollout_wire_dicts",
        "training-record": "datafactory.wire.training_record_dicts",
        "trl-record": "datafactory.wire.trl_record_dicts",
    }


def test_the_typeddicts_are_exactly_the_object_defs() -> None:
    assert _typeddicts(rollout_wire_dicts) == {
        "BuildResult",
        "DpoObjectiveScore",
        "DpoProvenance",
        "DpoRecord",
        "ForkBranch",
        "LossWeightAnnotation",
        "PpoProvenance",
        "PpoRecord",
        "RolloutBranchRecord",
        "RolloutTreeRecord",
        "ToolCallEvent",
        "ToolEventData",
    }
    assert _typeddicts(training_record_dicts) == {
        "BranchFacts",
        "DpoTrainingRecord",
        "Message",
        "PpoTrainingRecord",
        "Provenance",
        "SftMessage",
        "SftProvenance",
        "SftTrainingRecord",
        "ToolCall",
        "ToolCallFunction",
        "TurnAnnotation",
    }
    assert _typeddicts(trl_record_dicts) == {
        "TrlKtoRecord",
        "TrlMessage",
        "TrlPreferenceRecord",
        "TrlPromptRecord",
        "TrlSftRecord",
        "TrlToolCall",
        "TrlToolCallFunction",
    }
    for schema_name, module in SHAPES.items():
        expected = {d for s, d, _ in OBJECT_DEFS if s == schema_name}
        assert _typeddicts(module) == expected, schema_name


@pytest.mark.parametrize(
    ("schema_name", "def_name", "definition"),
    OBJECT_DEFS,
    ids=[f"{schema_name}:{def_name}" for schema_name, def_name, _ in OBJECT_DEFS],
)
def test_each_typeddict_has_the_schema_keys_required_and_closed_as_the_schema(
    schema_name: str, def_name: str, definition: dict[str, Any]
) -> None:
    shape = getattr(SHAPES[schema_name], def_name)
    properties = set(definition.get("properties", {}))
    required = set(definition.get("required", []))
    hints = get_type_hints(shape, include_extras=True)
    assert set(hints) == properties
    assert shape.__required_keys__ == required
    assert shape.__optional_keys__ == properties - required
    assert {key for key, hint in hints.items() if _not_required(hint)} == (properties - required)
    closed = definition.get("additionalProperties", True) is False
    assert _closed(shape) is (True if closed else None)


def test_record_types_have_pinned_keys() -> None:
    branch = rollout_wire_dicts.RolloutBranchRecord
    assert branch.__required_keys__ == {
        "rollout_id",
        "task",
        "branch_index",
        "temperature",
        "session_id",
        "tool_call_sequence",
        "final_answer",
        "objective_score",
        "rank",
        "total_score",
    }
    assert branch.__optional_keys__ == {
        "schema_version",
        "seed",
        "build_result",
        "objective_status",
        "judge_score",
    }
    assert _closed(branch) is None  # open: producers add keys of their own

    message = training_record_dicts.Message
    assert message.__required_keys__ == {"role", "content"}
    assert message.__optional_keys__ == {"name", "tool_calls", "tool_call_id"}
    assert _closed(message) is True

    ppo = training_record_dicts.PpoTrainingRecord
    assert ppo.__required_keys__ == {
        "schema_version",
        "prompt",
        "messages",
        "reward",
        "loss_weight_tokens",
        "provenance",
    }
    assert ppo.__optional_keys__ == set()
    assert _closed(ppo) is True


def test_value_types_follow_the_schema_nullability() -> None:
    branch = get_type_hints(rollout_wire_dicts.RolloutBranchRecord, include_extras=True)
    assert branch["rank"] is int
    assert branch["judge_score"] == NotRequired[float]  # absent, never null
    assert branch["seed"] == NotRequired[int | None]  # optional and nullable
    assert branch["build_result"] == NotRequired[rollout_wire_dicts.BuildResult | None]
    assert branch["objective_score"] == Literal[0, 1]
    assert branch["tool_call_sequence"] == list[rollout_wire_dicts.ToolCallEvent]
    message = get_type_hints(training_record_dicts.Message, include_extras=True)
    assert message["content"] == str | None  # required and nullable
    assert message["role"] == Literal["system", "user", "assistant", "tool"]
    assert message["tool_calls"] == NotRequired[list[training_record_dicts.ToolCall]]


def test_non_object_defs_are_type_aliases_of_the_same_names() -> None:
    assert rollout_wire_dicts.ObjectiveStatus == Literal["pass", "fail", "unknown"]
    assert rollout_wire_dicts.NGramHash is str
    assert training_record_dicts.SchemaVersion == Literal["training-record/v2"]
    assert training_record_dicts.TrainingRecord == (
        training_record_dicts.DpoTrainingRecord
        | training_record_dicts.PpoTrainingRecord
        | training_record_dicts.SftTrainingRecord
    )


def test_the_package_does_not_reexport_the_shapes() -> None:
    """The package names are the dataclasses; the shapes are imported by module."""
    assert not is_typeddict(wire.Message)
    assert wire.Message.__module__ == "datafactory.wire.training_record"
    assert not [name for name in wire.__all__ if name.endswith("_dicts")]
    doc = wire.__doc__ or ""
    assert "``rollout_wire_dicts``, ``training_record_dicts`` and\n``trl_record_dicts``" in doc
    assert "``from datafactory.wire import trl_record_dicts``" in doc


def test_mypy_checks_plain_dicts_against_the_shapes() -> None:
    """mypy --strict (in ``make test``) checks this body. Strict mode warns on an unused
    ``type: ignore``, so each ignored line must stay an error: an unknown key, a missing
    required key, null for a non-nullable key, a value outside an enum."""
    message: training_record_dicts.Message = {"role": "assistant", "content": None}
    unknown: training_record_dicts.Message = {"role": "user", "content": "hi", "x": 1}  # type: ignore[typeddict-unknown-key]
    missing: training_record_dicts.Message = {"role": "user"}  # type: ignore[typeddict-item]
    null_name: training_record_dicts.Message = {"role": "user", "content": "a", "name": None}  # type: ignore[typeddict-item]
    role: training_record_dicts.Message = {"role": "robot", "content": "a"}  # type: ignore[typeddict-item]
    build: rollout_wire_dicts.BuildResult = {"status": "pass", "exit_code": None}
    no_status: rollout_wire_dicts.BuildResult = {"exit_code": 0}  # type: ignore[typeddict-item]
    # TypedDicts cost nothing at run time: the values are the plain dicts written above.
    assert [type(d) for d in (message, unknown, missing, null_name, role, build, no_status)] == (
        [dict] * 7
    )


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        (
            "    rank: int\n",
            "    rank: NotRequired[int]\n",
            "contracts/rollout-wire.schema.json: generated TypedDict RolloutBranchRecord "
            "differs from the schema: rank should be required",
        ),
        (
            "    judge_score: NotRequired[float]\n",
            "    judge_score: float\n    judge: str\n",
            "contracts/rollout-wire.schema.json: generated TypedDict RolloutBranchRecord "
            "differs from the schema: unexpected key judge; judge_score should be NotRequired",
        ),
        (
            "class DpoProvenance(TypedDict, closed=True):\n",
            "class DpoProvenance(TypedDict):\n",
            "contracts/rollout-wire.schema.json: generated TypedDict DpoProvenance "
            "differs from the schema: closed=True expected",
        ),
        (
            "class ForkBranch(TypedDict):\n",
            "class ForkBranch1(TypedDict):\n",
            "contracts/rollout-wire.schema.json: no TypedDict ForkBranch was generated",
        ),
    ],
    ids=["required-made-optional", "unexpected-key", "open-instead-of-closed", "renamed"],
)
def test_a_typeddict_that_differs_from_the_schema_is_refused(
    cli: Cli,
    contract_copy: Path,
    monkeypatch: pytest.MonkeyPatch,
    old: str,
    new: str,
    error: str,
) -> None:
    """The generator's TypedDicts are checked against the schema, as its dataclasses are."""

    def altered(*args: Any, **options: Any) -> Any:
        code = dmcg_generate(*args, **options)
        if options["output_model_type"] == "typing.TypedDict" and isinstance(code, str):
            code = code.replace(old, new)
        return code

    monkeypatch.setattr(codegen.generate, "generate", altered)
    # A schema edit, so that --check does not answer from the header hashes.
    schema_path = contract_copy / "contracts" / "rollout-wire.schema.json"
    schema_path.write_text(schema_path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in (contract_copy / OUTPUT_DIR).glob("*.py")}
    for command in (["codegen", "--check"], ["codegen"]):
        result = cli("--root", str(contract_copy), *command)
        assert (result.exit_code, result.stdout, result.stderr) == (
            2,
            "",
            f"wiregate: error: {error}\n",
        )
    assert {p.name: p.read_bytes() for p in (contract_copy / OUTPUT_DIR).glob("*.py")} == before
