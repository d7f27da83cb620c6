"""The real revision history of the rollout-wire and training-record schemas (read from
../shared/corpus/schemas): every consecutive pair gets exactly the findings pinned here."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from wiregate.diff import diff
from wiregate.errors import UserError
from wiregate.sources import load_source

# (old file, new file) under schemas/ -> (id, old pointer, new pointer, backward, forward)
# under the strict policy.
EXPECTED: dict[tuple[str, str], list[tuple[str, str, str, bool, bool]]] = {
    (
        "trace-pipeline/2026-06-24-8679835-dpo-training-record.schema.json",
        "trace-pipeline/2026-06-25-755234b-dpo-training-record.schema.json",
    ): [
        ("annotation-changed", "#/$id", "#/$id", True, True),
    ],
    (
        "trace-pipeline/2026-06-25-755234b-dpo-training-record.schema.json",
        "trace-pipeline/2026-07-12-692ee62-dpo-training-record.schema.json",
    ): [
        ("property-added-to-open-model", "#", "#/properties/loss_weight_annotations", False, True),
        (
            "enum-extended",
            "#/properties/loss_weight_tokens/enum",
            "#/properties/loss_weight_tokens/enum",
            True,
            False,
        ),
        ("definition-added", "#", "#/$defs/TurnAnnotation", True, True),
    ],
    (
        "trace-pipeline/2026-06-24-8679835-ppo-training-record.schema.json",
        "trace-pipeline/2026-06-25-755234b-ppo-training-record.schema.json",
    ): [
        ("annotation-changed", "#/$id", "#/$id", True, True),
    ],
    (
        "trace-pipeline/2026-06-25-755234b-ppo-training-record.schema.json",
        "trace-pipeline/2026-07-12-692ee62-ppo-training-record.schema.json",
    ): [
        ("property-added-to-open-model", "#", "#/properties/loss_weight_annotations", False, True),
        (
            "enum-extended",
            "#/properties/loss_weight_tokens/enum",
            "#/properties/loss_weight_tokens/enum",
            True,
            False,
        ),
        ("definition-added", "#", "#/$defs/TurnAnnotation", True, True),
    ],
    (
        "trace-pipeline/2026-06-24-8679835-rollout-wire.schema.json",
        "trace-pipeline/2026-06-25-755234b-rollout-wire.schema.json",
    ): [
        ("annotation-changed", "#/$id", "#/$id", True, True),
    ],
    (
        "trace-pipeline/2026-06-25-755234b-rollout-wire.schema.json",
        "trace-pipeline/2026-07-12-692ee62-rollout-wire.schema.json",
    ): [
        ("property-added-to-open-model", "#", "#/properties/seed", False, True),
        # One widening (ToolCallEntry -> anyOf [ToolCallEntry, any object]), not a pile of
        # removals inside a definition that still exists.
        (
            "items-widened",
            "#/properties/tool_call_sequence/items",
            "#/properties/tool_call_sequence/items",
            True,
            False,
        ),
    ],
    (
        "trace-pipeline/2026-07-12-692ee62-rollout-wire.schema.json",
        "trace-pipeline/2026-07-16-1947f4a-rollout-wire.schema.json",
    ): [
        ("required-added", "#/required", "#/required", False, True),
    ],
    (
        "trace-pipeline/2026-07-16-1947f4a-rollout-wire.schema.json",
        "trace-pipeline/2026-07-16-b1750b5-rollout-wire.schema.json",
    ): [],
    (
        "wasmagent-js/2026-06-23-1e83a05-rollout-wire.schema.json",
        "wasmagent-js/2026-06-23-842dfa5-rollout-wire.schema.json",
    ): [],
    (
        "wasmagent-js/2026-06-23-842dfa5-rollout-wire.schema.json",
        "wasmagent-js/2026-06-24-bcdd2be-rollout-wire.schema.json",
    ): [
        (
            "property-added-to-open-model",
            "#/$defs/RolloutBranchRecord",
            "#/$defs/RolloutBranchRecord/properties/objective_status",
            False,
            True,
        ),
    ],
    (
        "wasmagent-js/2026-06-24-bcdd2be-rollout-wire.schema.json",
        "wasmagent-js/2026-06-25-1e0fcfa-rollout-wire.schema.json",
    ): [
        ("one-of-added", "#", "#/oneOf", False, True),
        ("description-changed", "#/description", "#/description", True, True),
    ],
    (
        "wasmagent-js/2026-06-25-1e0fcfa-rollout-wire.schema.json",
        "wasmagent-js/2026-06-25-cfebd44-rollout-wire.schema.json",
    ): [],
    (
        "wasmagent-js/2026-06-25-cfebd44-rollout-wire.schema.json",
        "wasmagent-js/2026-07-10-8c9cd5d-rollout-wire.schema.json",
    ): [
        ("one-of-member-added", "#/oneOf", "#/oneOf/1", False, False),
        ("definition-added", "#", "#/$defs/RolloutTreeRecord", True, True),
    ],
    (
        "trace-pipeline/2026-06-24-8679835-sft-training-record.schema.json",
        "trace-pipeline/2026-06-25-755234b-sft-training-record.schema.json",
    ): [
        ("annotation-changed", "#/$id", "#/$id", True, True),
    ],
    (
        "trace-pipeline/2026-06-25-755234b-sft-training-record.schema.json",
        "trace-pipeline/2026-07-12-692ee62-sft-training-record.schema.json",
    ): [
        ("property-added-to-open-model", "#", "#/properties/loss_weight_annotations", False, True),
        (
            "enum-extended",
            "#/properties/loss_weight_tokens/enum",
            "#/properties/loss_weight_tokens/enum",
            True,
            False,
        ),
        ("definition-added", "#", "#/$defs/TurnAnnotation", True, True),
    ],
    (
        "wasmagent-js/2026-06-23-1e83a05-training-record.schema.json",
        "wasmagent-js/2026-06-23-33b8735-training-record.schema.json",
    ): [
        (
            "property-added-to-open-model",
            "#/$defs/DpoTrainingRecord",
            "#/$defs/DpoTrainingRecord/properties/prompt_messages",
            False,
            True,
        ),
        (
            "property-added-to-open-model",
            "#/$defs/Provenance",
            "#/$defs/Provenance/properties/task_hash",
            False,
            True,
        ),
        (
            "required-removed",
            "#/$defs/Provenance/required",
            "#/$defs/Provenance/required",
            True,
            False,
        ),
    ],
    (
        "wasmagent-js/2026-06-23-33b8735-training-record.schema.json",
        "wasmagent-js/2026-06-23-842dfa5-training-record.schema.json",
    ): [
        (
            "required-added",
            "#/$defs/Provenance/required",
            "#/$defs/Provenance/required",
            False,
            True,
        ),
        (
            "property-removed-from-open-model",
            "#/$defs/DpoTrainingRecord/properties/prompt_messages",
            "#/$defs/DpoTrainingRecord",
            True,
            False,
        ),
        (
            "property-removed-from-open-model",
            "#/$defs/Provenance/properties/task_hash",
            "#/$defs/Provenance",
            True,
            False,
        ),
    ],
}

BROKEN = "wasmagent-js/2026-06-23-bbf64c7-training-record.schema.json"  # committed as invalid JSON


def _pairs(corpus: Path) -> list[tuple[str, str]]:
    index = json.loads((corpus / "schemas" / "index.json").read_text(encoding="utf-8"))
    histories: dict[tuple[str, str], list[str]] = defaultdict(list)
    for entry in index["entries"]:
        histories[(entry["repo"], entry["path_in_repo"])].append(
            entry["file"].removeprefix("schemas/")
        )
    return [pair for files in histories.values() for pair in itertools.pairwise(files)]


def _load(corpus: Path, name: str) -> dict[str, Any]:
    document = load_source(str(corpus / "schemas" / name)).document
    assert isinstance(document, dict)  # every real revision is an object
    return document


def test_every_consecutive_pair_is_pinned(corpus_dir: Path) -> None:
    pairs = _pairs(corpus_dir)
    assert len(pairs) == 18
    assert sorted(p for p in pairs if BROKEN not in p) == sorted(EXPECTED)


@pytest.mark.parametrize(("old_name", "new_name"), sorted(EXPECTED))
def test_findings_of_each_revision(corpus_dir: Path, old_name: str, new_name: str) -> None:
    result = diff(_load(corpus_dir, old_name), _load(corpus_dir, new_name))
    found = [(c.id, c.old_pointer, c.new_pointer, c.backward, c.forward) for c in result.changes]
    assert found == EXPECTED[(old_name, new_name)]


def test_a_committed_broken_file_is_a_load_error(corpus_dir: Path) -> None:
    path = corpus_dir / "schemas" / BROKEN
    with pytest.raises(UserError, match=r"bbf64c7-training-record\.schema\.json: not valid JSON"):
        load_source(str(path))


FORMATTING_ONLY = [
    (
        "wasmagent-js/2026-06-23-1e83a05-rollout-wire.schema.json",
        "wasmagent-js/2026-06-23-842dfa5-rollout-wire.schema.json",
    ),
    (
        "wasmagent-js/2026-06-25-1e0fcfa-rollout-wire.schema.json",
        "wasmagent-js/2026-06-25-cfebd44-rollout-wire.schema.json",
    ),
    # Only the order of `required` changed.
    (
        "trace-pipeline/2026-07-16-1947f4a-rollout-wire.schema.json",
        "trace-pipeline/2026-07-16-b1750b5-rollout-wire.schema.json",
    ),
]


@pytest.mark.parametrize(("old_name", "new_name"), FORMATTING_ONLY)
def test_formatting_only_revisions_have_no_findings(
    corpus_dir: Path, old_name: str, new_name: str
) -> None:
    old, new = _load(corpus_dir, old_name), _load(corpus_dir, new_name)
    assert (
        old != new
        or (corpus_dir / "schemas" / old_name).read_bytes()
        != (corpus_dir / "schemas" / new_name).read_bytes()
    )
    assert diff(old, new, mode="full").identical


def test_objective_status_is_forward_compatible_and_backward_only_when_lenient(
    corpus_dir: Path,
) -> None:
    old = _load(corpus_dir, "wasmagent-js/2026-06-23-842dfa5-rollout-wire.schema.json")
    new = _load(corpus_dir, "wasmagent-js/2026-06-24-bcdd2be-rollout-wire.schema.json")
    strict = diff(old, new, mode="full")
    assert [(c.id, c.new_pointer) for c in strict.changes] == [
        ("property-added-to-open-model", "#/$defs/RolloutBranchRecord/properties/objective_status")
    ]
    assert strict.forward_compatible and not strict.backward_compatible
    lenient = diff(old, new, mode="full", policy="lenient")
    assert lenient.compatible
    assert [c.tolerated_by for c in lenient.changes] == ["lenient"]


def test_added_root_one_of_narrows_the_root(corpus_dir: Path) -> None:
    old = _load(corpus_dir, "wasmagent-js/2026-06-24-bcdd2be-rollout-wire.schema.json")
    new = _load(corpus_dir, "wasmagent-js/2026-06-25-1e0fcfa-rollout-wire.schema.json")
    result = diff(old, new)
    one_of = [c for c in result.changes if c.id == "one-of-added"]
    assert [(c.old_pointer, c.new_pointer, c.backward, c.forward) for c in one_of] == [
        ("#", "#/oneOf", False, True)
    ]
    assert not result.compatible


def test_rollout_tree_record_widens_the_root_one_of(corpus_dir: Path) -> None:
    """A new oneOf member widens the root. The record models are open, so strictly a branch
    record that also carries `branches` and `fork_map` would now match two members and be
    rejected: backward compatible under the lenient policy (no undeclared keys), not
    strictly; never forward compatible (old readers reject tree records)."""
    old = _load(corpus_dir, "wasmagent-js/2026-06-25-cfebd44-rollout-wire.schema.json")
    new = _load(corpus_dir, "wasmagent-js/2026-07-10-8c9cd5d-rollout-wire.schema.json")
    strict = diff(old, new)
    assert [(c.id, c.new_pointer, c.backward, c.forward, c.message) for c in strict.changes] == [
        (
            "one-of-member-added",
            "#/oneOf/1",
            False,
            False,
            "oneOf member RolloutTreeRecord added; a value matching it and another member "
            "is now rejected",
        ),
        (
            "definition-added",
            "#/$defs/RolloutTreeRecord",
            True,
            True,
            "definition 'RolloutTreeRecord' added",
        ),
    ]
    lenient = diff(old, new, policy="lenient")
    assert lenient.compatible and not lenient.forward_compatible
    assert [c.tolerated_by for c in lenient.changes] == ["lenient", None]


def test_tool_call_sequence_becoming_required_is_not_backward_compatible(
    corpus_dir: Path,
) -> None:
    old = _load(corpus_dir, "trace-pipeline/2026-07-12-692ee62-rollout-wire.schema.json")
    new = _load(corpus_dir, "trace-pipeline/2026-07-16-1947f4a-rollout-wire.schema.json")
    result = diff(old, new, mode="full")
    assert [(c.id, c.message, c.backward, c.forward) for c in result.changes] == [
        (
            "required-added",
            "property 'tool_call_sequence' became required: old records without it are rejected",
            False,
            True,
        )
    ]
    assert not result.compatible and not diff(old, new, policy="lenient").compatible


def test_tool_call_entries_widened_to_any_object_is_one_finding(corpus_dir: Path) -> None:
    old = _load(corpus_dir, "trace-pipeline/2026-06-25-755234b-rollout-wire.schema.json")
    new = _load(corpus_dir, "trace-pipeline/2026-07-12-692ee62-rollout-wire.schema.json")
    (widened,) = [c for c in diff(old, new).changes if c.id == "items-widened"]
    assert widened.message == (
        "items widened from ToolCallEntry to anyOf [ToolCallEntry, any object], which accepts "
        "every value the old one did"
    )
    assert (widened.root_old_pointer, widened.root_new_pointer) == (
        "#/properties/tool_call_sequence/items",
        "#/properties/tool_call_sequence/items",
    )
