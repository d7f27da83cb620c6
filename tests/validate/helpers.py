"""Shared by the ``wiregate validate`` tests: a valid DpoRecord, JSONL writing, running the CLI."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from wiregate.cli import main

TASK = "Add a hello world button to the page"
HEX = hashlib.sha256(TASK.encode()).hexdigest()[:16]


def dpo_record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "prompt": TASK,
        "chosen": "Added HelloButton",
        "rejected": "Created a placeholder",
        "tool_call_sequence": [],
        "provenance": {
            "source": "wasmagent-rollout",
            "rollout_id": "r-1",
            "chosen_branch": 0,
            "rejected_branch": 1,
            "objective_score": {"chosen": 1, "rejected": 0},
            "exported_at_ms": 0,
            "n_gram_hash": HEX,
        },
    }
    record.update(changes)
    return record


def write_jsonl(path: Path, lines: list[bytes | dict[str, Any]]) -> Path:
    raw = [line if isinstance(line, bytes) else json.dumps(line).encode() for line in lines]
    path.write_bytes(b"\n".join(raw) + b"\n")
    return path


def run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a crash shows its traceback, not just exit code 1
    return result.exit_code, result.stdout, result.stderr
