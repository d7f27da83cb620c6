"""Property tests: random valid inputs never crash the exporter, the accounting identity
always holds, every output validates, and rewards lie in [0, 1]."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from contracts import locate
from datafactory.run import run
from datafactory.settings import Settings
from wiregate.errors import UserError
from wiregate.record_validator import ValidatorSet, guess_record_type

VALIDATORS = ValidatorSet(locate(None))
text = st.text(min_size=0, max_size=30)
json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)

canonical_event = st.builds(
    lambda kind, data: {"event": kind, "data": data},
    st.sampled_from(["tool_call", "tool_result"]),
    st.fixed_dictionaries(
        {},
        optional={
            "name": text,
            "args": st.dictionaries(text, json_leaf, max_size=2),
            "call_id": st.sampled_from(["a", "b", "c"]),
            "output": json_leaf,
            "error": st.none() | text,
            "content": text,
        },
    ),
)
camel_event = st.builds(
    lambda name, call: {
        "channel": "tools",
        "event": "tool_call",
        "data": {"toolName": name, "args": {}, "callId": call},
    },
    st.text(min_size=1, max_size=5),
    st.sampled_from(["a", "b"]),
)
flat_event = st.builds(
    lambda name, result, error, key: {
        "tool_name": name,
        key: {"x": 1},
        "result": result,
        "error": error,
    },
    st.text(min_size=1, max_size=5),
    json_leaf,
    st.none() | text,
    st.sampled_from(["args", "arguments"]),
)
build_result = st.none() | st.fixed_dictionaries(
    {"status": st.sampled_from(["pass", "fail", "skip", "success", "failed"])},
    optional={"exitCode": st.integers(0, 3), "ranAtMs": st.integers(0, 10**12)},
)


@st.composite
def branch_record(draw: Any, rollout: str, index: int) -> dict[str, Any]:
    objective = draw(st.sampled_from([0, 1]))
    record: dict[str, Any] = {
        "rollout_id": rollout,
        "task": draw(st.text(min_size=1, max_size=60)),
        "branch_index": index,
        "temperature": draw(st.floats(0, 2)),
        "session_id": "s",
        "tool_call_sequence": draw(
            st.lists(canonical_event | camel_event | flat_event, max_size=5)
        ),
        "final_answer": draw(text),
        "build_result": draw(build_result),
        "objective_score": objective,
        "objective_status": draw(st.sampled_from(["pass", "fail", "unknown"])),
        "rank": draw(st.integers(1, 5)),
    }
    if draw(st.booleans()):
        record["judge_score"] = draw(st.floats(0, 10))
    if draw(st.booleans()):
        record["total_score"] = draw(st.floats(-1, 3))
    return record


@st.composite
def rollout_file(draw: Any) -> list[bytes]:
    lines: list[bytes] = []
    for r in range(draw(st.integers(0, 4))):
        indices = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4))
        for index in indices:  # duplicates of an index are allowed: they must be rejected
            lines.append(orjson.dumps(draw(branch_record(f"r{r}", index))))
    lines += draw(st.lists(st.sampled_from([b"", b"{", b"[1]", b'{"x": 1}', b"\xff"]), max_size=3))
    shuffled: list[bytes] = draw(st.permutations(lines))
    return shuffled


def _settings(folder: Path, lines: list[bytes], output_format: str, **extra: Any) -> Settings:
    """A one-worker run of ``lines`` (written to ``folder/in.jsonl``) into ``folder``."""
    source = folder / "in.jsonl"
    source.write_bytes(b"".join(line + b"\n" for line in lines))
    return Settings(
        inputs=(str(source),),
        dpo_path=str(folder / "d.jsonl"),
        ppo_path=str(folder / "p.jsonl"),
        output_format=output_format,
        allow_missing_g3=True,
        workers=1,
        **extra,
    )


def _no_rollout(lines: list[bytes]) -> bool:
    """Whether no line could be a rollout (every one that is not blank is ``{"x": 1}``, or
    every line is blank)."""
    return all(line == b'{"x": 1}' for line in lines if line.strip())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rollout_file(), st.sampled_from(["both", "dpo", "ppo"]))
@example([b'{"x": 1}', b""], "both")
@example([], "both")
@example([b"", b" "], "ppo")
def test_random_valid_input_exports_consistently(lines: list[bytes], output_format: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        given = _settings(folder, lines, output_format, rejects_path=str(folder / "r.jsonl"))
        unknown = [line for line in lines if line.strip()]
        if _no_rollout(lines):
            # No line could be a rollout: the run stops saying what they were.
            with pytest.raises(UserError) as caught:
                run(given)
            found = f"{len(unknown)} unknown" if unknown else f"{len(lines)} blank lines"
            found = found if lines else "they are empty"
            what = "rollout records" if unknown else "records"
            assert str(caught.value) == f"no {what} in the inputs: {found}"
            assert sorted(p.name for p in folder.iterdir()) == ["in.jsonl"]
            return
        result = run(given)
        assert result.exit_code == 0
        manifest = result.manifest
        assert manifest is not None
        counts = manifest["lines"]
        assert counts["read"] == len(lines)
        assert counts["read"] == counts["accepted"] + counts["rejected"] + counts["blank"]
        rejects = (folder / "r.jsonl").read_bytes().splitlines()
        assert len(rejects) == counts["rejected"] == sum(manifest["rejected"].values())
        for name, record_type in (
            ("d.jsonl", "DpoTrainingRecord"),
            ("p.jsonl", "PpoTrainingRecord"),
        ):
            path = folder / name
            if not path.exists():
                continue
            for line in path.read_bytes().splitlines():
                record = orjson.loads(line)
                assert VALIDATORS.get(record_type).problems(record) == []
                if record_type == "PpoTrainingRecord":
                    assert 0.0 <= record["reward"] <= 1.0
        if output_format != "dpo":
            ppo = (folder / "p.jsonl").read_bytes().splitlines()
            assert len(ppo) == manifest["ppo"]["records"] == counts["accepted"]


#: The trl target's outputs, each with the contract's record type its lines are.
TRL_OUTPUTS = {
    "dpo": ("d.jsonl", "TrlPreferenceRecord"),
    "ppo": ("p.jsonl", "TrlPromptRecord"),
    "kto": ("k.jsonl", "TrlKtoRecord"),
    "sft": ("s.jsonl", "TrlSftRecord"),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rollout_file(),
    st.sampled_from(["both", "dpo", "ppo", "kto", "sft"]),
    st.sampled_from(["string", "object"]),
)
def test_random_valid_input_gives_trl_records_of_the_contract(
    lines: list[bytes], output_format: str, tool_arguments: str
) -> None:
    """Every record the trl target writes validates against the contract's trl-record schema,
    as the record type of its output, and the counts are the manifest's."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        own = {f"{name}_path": str(folder / f"{name[0]}.jsonl") for name in ("kto", "sft")}
        given = _settings(
            folder, lines, output_format, target="trl", tool_arguments=tool_arguments,
            card=False, **{k: v for k, v in own.items() if k == f"{output_format}_path"},
        )  # fmt: skip
        if _no_rollout(lines):
            with pytest.raises(UserError):  # no line could be a rollout (the test above)
                run(given)
            return
        result = run(given)
        assert result.exit_code == 0
        manifest = result.manifest
        assert manifest is not None
        wanted = ("dpo", "ppo") if output_format == "both" else (output_format,)
        written = {}
        for output in wanted:
            name, record_type = TRL_OUTPUTS[output]
            records = [orjson.loads(line) for line in (folder / name).read_bytes().splitlines()]
            for record in records:
                assert VALIDATORS.get(record_type).problems(record) == []
                assert VALIDATORS.get(guess_record_type(record) or "").name == record_type
            written[output] = len(records)
        counts = {
            "dpo": manifest["dpo"]["pairs"],
            "ppo": manifest["ppo"]["records"],
            "kto": manifest["trl"]["kto"]["records"],
            "sft": manifest["trl"]["sft"]["records"],
        }
        assert written == {output: counts[output] for output in wanted}
