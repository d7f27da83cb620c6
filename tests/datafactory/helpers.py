"""Helpers for the datafactory tests: record factories, JSONL files, command results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from datafactory.settings import available_cpus

#: For tests that run two workers: more workers than CPUs is a usage error.
TWO_CPUS = pytest.mark.skipif(available_cpus() < 2, reason="--workers 2 needs two CPUs")


def branch(
    rollout_id: str = "r-1",
    branch_index: int = 0,
    *,
    task: str = "Add a hello world button to the page",
    final_answer: str | None = None,
    objective_score: int = 1,
    **fields: Any,
) -> dict[str, Any]:
    """A valid Layer 1 branch record; keyword arguments override or add fields."""
    record: dict[str, Any] = {
        "schema_version": "rollout-wire/v1",
        "rollout_id": rollout_id,
        "task": task,
        "branch_index": branch_index,
        "temperature": 0.7,
        "session_id": f"s-{rollout_id}",
        "tool_call_sequence": [],
        "final_answer": final_answer if final_answer is not None else f"answer {branch_index}",
        "build_result": None,
        "objective_score": objective_score,
        "objective_status": "pass" if objective_score else "fail",
        "rank": 1,
        "total_score": float(objective_score),
    }
    record.update(fields)
    return record


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def read_jsonl(path: Path) -> list[Any]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str
    out: Path

    def dpo(self) -> list[Any]:
        return read_jsonl(self.out / "dpo.jsonl")

    def ppo(self) -> list[Any]:
        return read_jsonl(self.out / "ppo.jsonl")

    def rejects(self) -> list[Any]:
        return read_jsonl(self.out / "rejects.jsonl")

    def manifest(self) -> Any:
        return orjson.loads((self.out / "manifest.json").read_bytes())


RunCli = Callable[..., Run]
