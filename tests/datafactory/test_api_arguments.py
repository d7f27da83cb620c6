"""The Python API's edges: empty rollouts, n-gram lengths that mean nothing, and what
``export`` names in its manifest, its rejects file and its errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from datafactory import (
    DpoSkip,
    EvalIndex,
    EvalItem,
    export,
    load_rollouts,
    to_dpo,
    to_ppo,
    validate_g3,
)
from datafactory.cli import main
from datafactory.records import RolloutBranchRecord, from_wire
from tests.datafactory.helpers import branch, read_jsonl, write_jsonl
from wiregate.errors import UserError
from wiregate.exactjson import exact_integers


def _typed(*records: dict[str, Any]) -> list[RolloutBranchRecord]:
    return [from_wire(RolloutBranchRecord, r) for r in records]


PAIR = (branch("r", 0, final_answer="good"), branch("r", 1, objective_score=0))
ITEMS = [EvalItem(1, "q1", "what is the capital of france")]


def test_to_dpo_of_no_branches_is_a_skip() -> None:
    assert to_dpo([]) == DpoSkip("", "fewer_than_two_usable_branches")


@pytest.mark.parametrize("ngram", [0, -1])
def test_to_dpo_and_to_ppo_refuse_an_ngram_below_one(ngram: int) -> None:
    message = f"ngram must be at least 1 (words per n-gram), got {ngram}"
    with pytest.raises(ValueError) as dpo:
        to_dpo(_typed(*PAIR), ngram=ngram)
    with pytest.raises(ValueError) as empty:
        to_dpo([], ngram=ngram)
    with pytest.raises(ValueError) as ppo:
        to_ppo(_typed(*PAIR), ngram=ngram)
    assert str(dpo.value) == str(empty.value) == str(ppo.value) == message


@pytest.mark.parametrize("n", [0, -3])
def test_validate_g3_refuses_an_n_below_one(n: int) -> None:
    message = f"n must be at least 1 (words per n-gram), got {n}"
    with pytest.raises(ValueError) as items:
        validate_g3([("r", "what is the capital of france")], ITEMS, n=n)
    with pytest.raises(ValueError) as index:
        EvalIndex(ITEMS, n)
    assert str(items.value) == str(index.value) == message


def test_eval_index_from_stdin_is_refused() -> None:
    with pytest.raises(UserError) as caught:
        EvalIndex.from_file("-")
    assert str(caught.value) == (
        "-: not a regular file: the eval items are read twice, "
        "and a pipe or device would be empty the second time"
    )


def test_export_names_its_records_in_the_manifest_and_rejects(tmp_path: Path) -> None:
    # The second record repeats (rollout_id, branch_index): the run rejects it.
    path = write_jsonl(tmp_path / "in.jsonl", [*PAIR, branch("r", 0, final_answer="again")])
    records = list(load_rollouts(str(path)))
    out = tmp_path / "out"
    out.mkdir()
    result = export(
        records,
        str(out / "dpo.jsonl"),
        str(out / "ppo.jsonl"),
        allow_missing_g3=True,
        rejects_path=str(out / "rejects.jsonl"),
        manifest_path=str(out / "manifest.json"),
    )
    assert result.exit_code == 0
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest == result.manifest
    ((name, facts),) = [(f["path"], f) for f in manifest["inputs"]]
    assert (name, facts["lines"]) == ("<records>", 3)
    assert manifest["lines"] == {"read": 3, "accepted": 2, "rejected": 1, "blank": 0}
    (reject,) = read_jsonl(out / "rejects.jsonl")
    assert (reject["file"], reject["line"], reject["reason"]) == (
        "<records>",
        3,
        "duplicate-branch",
    )
    assert reject["detail"] == (
        "duplicate (rollout_id, branch_index) = ('r', 0); first seen at <records>:1"
    )
    assert orjson.loads(reject["raw"])["final_answer"] == "again"
    assert [r["chosen"] for r in read_jsonl(out / "dpo.jsonl")] == ["good"]


@pytest.mark.parametrize(
    ("paths", "options", "message"),
    [
        ((None, None), {"allow_missing_g3": True}, "export needs dpo_path, ppo_path or both"),
        (
            ("d", None),
            {"allow_missing_g3": True, "output_format": "both"},
            "ppo_path is required with output_format='both'",
        ),
        (
            (None, "p"),
            {"allow_missing_g3": True, "output_format": "dpo"},
            "dpo_path is required with output_format='dpo'",
        ),
        (
            ("d", "p"),
            {"allow_missing_g3": True, "output_format": "xml"},
            "output_format must be one of dpo, ppo, both, kto, sft, got 'xml'",
        ),
        (
            ("d", "p"),
            {},
            "no eval_items given: the G3 contamination gate cannot run "
            "(pass allow_missing_g3=True to export without it)",
        ),
        (
            ("d", "p"),
            {"eval_items": "-"},
            "eval_items must be a file (it is read twice), not stdin",
        ),
        (
            ("d", "p"),
            {"allow_missing_g3": True, "ngram": 0},
            "ngram must be at least 1 (words per n-gram), got 0",
        ),
        (
            ("d", "p"),
            {"allow_missing_g3": True, "temp_dir": "{tmp}/none"},
            "temp_dir {tmp}/none: no such directory",
        ),
    ],
    ids=[
        "no-paths",
        "both-without-ppo",
        "dpo-without-dpo",
        "bad-format",
        "no-eval",
        "eval-stdin",
        "ngram",
        "temp-dir",
    ],
)
def test_export_errors_name_its_own_parameters(
    tmp_path: Path, paths: tuple[str | None, str | None], options: dict[str, Any], message: str
) -> None:
    consumed = []

    def records() -> Iterator[RolloutBranchRecord]:
        for record in _typed(*PAIR):
            consumed.append(record)
            yield record

    out = tmp_path / "out"
    out.mkdir()
    dpo, ppo = (str(out / p) if p else None for p in paths)
    options = {k: v.format(tmp=tmp_path) if isinstance(v, str) else v for k, v in options.items()}
    with pytest.raises(UserError) as caught:
        export(records(), dpo, ppo, **options)
    assert str(caught.value) == message.format(tmp=tmp_path)
    assert consumed == []  # checked before a record is read
    assert list(out.iterdir()) == []


def _itself() -> dict[str, Any]:
    """A record one of whose values contains itself (export() went round it for ever)."""
    record = dict(PAIR[0], provenance={"source": "x"})
    record["provenance"]["me"] = record["provenance"]
    return record


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_export_judges_what_json_can_say_as_the_command_does(tmp_path: Path) -> None:
    """A record orjson cannot write but JSON can say is judged as its line is in a file."""
    records = [
        *PAIR,
        dict(PAIR[0], seed=2**64),  # an integer past 64 bits
        dict(PAIR[0], branch_index=2, extra=_nested(300)),  # nesting past orjson's limit
        dict(PAIR[0], branch_index=3, task="lone \ud800 surrogate"),
        # orjson writes NaN and infinities as null: the record was accepted, altered
        dict(PAIR[0], branch_index=4, extra={"a": float("nan")}),
        dict(PAIR[0], branch_index=5, extra=[float("-inf")], seed=2**64),
        # past Python's 4,300 digits for int-to-text: the whole run failed, "not a JSON value"
        dict(PAIR[0], branch_index=6, seed=10**4400),
    ]
    path = tmp_path / "in.jsonl"
    with exact_integers():
        path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records))
    found: dict[str, Any] = {}
    for name in ("api", "cli"):
        out = tmp_path / name
        out.mkdir()
        paths = [str(out / f) for f in ("dpo.jsonl", "ppo.jsonl", "rejects.jsonl")]
        if name == "api":
            result = export(records, *paths[:2], allow_missing_g3=True, rejects_path=paths[2])
            assert result.exit_code == 0
        else:
            argv = ["--input", str(path), "--allow-missing-g3", "--output-dpo", paths[0]]
            argv += ["--output-ppo", paths[1], "--rejects", paths[2]]
            assert CliRunner().invoke(main, argv).exit_code == 0
        rejects = read_jsonl(out / "rejects.jsonl")
        found[name] = [(r["line"], r["reason"], r["detail"]) for r in rejects]
        found[name + " ppo"] = (out / "ppo.jsonl").read_bytes()
    assert [(line, reason) for line, reason, _ in found["api"]] == [
        (3, "unsupported-value"),
        (5, "unsupported-value"),  # a lone surrogate: valid JSON text that UTF-8 cannot hold
        (6, "invalid-json"),
        (7, "invalid-json"),
        (8, "unsupported-value"),
    ]
    assert (found["api"], found["api ppo"]) == (found["cli"], found["cli ppo"])


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (
            [{"a": {1, 2}}],
            "<records>:1: not a JSON value: Type is not JSON serializable: set",
        ),
        (
            [PAIR[0], b"bytes"],
            "<records>:2: not a JSON value: <class 'bytes'> is not a generated wire model",
        ),
        (
            [dict(PAIR[0], seed=2**70, extra={1: "a"})],
            "<records>:1: not a JSON value: Dict key must be str",
        ),
        (
            [{"a": _nested(2000)}],
            "<records>:1: not a JSON value: maximum recursion depth exceeded while encoding a JSON object",
        ),
        ([_itself()], "<records>:1: not a JSON value: it contains itself"),
        (  # its digits alone would take seconds to write (quadratic time)
            [dict(PAIR[0], seed=10**120_000)],
            "<records>:1: not a JSON value: an integer of more than 100,000 digits",
        ),
        (42, "export needs an iterable of records, got int"),
        ({"rollout_id": "r"}, "export needs an iterable of records, got dict"),
    ],
)
def test_export_refuses_what_is_no_json_value(tmp_path: Path, records: Any, message: str) -> None:
    with pytest.raises(UserError) as caught:
        export(records, str(tmp_path / "d.jsonl"), None, allow_missing_g3=True)
    assert str(caught.value) == message
    assert sorted(p.name for p in tmp_path.iterdir()) == []
