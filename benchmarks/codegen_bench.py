"""Speed of the generated wire types (msgspec Structs) and of ``wiregate codegen --check``.

Prints figures; asserts nothing (speed targets are read from the figures, not unit tests).
Usage: python benchmarks/codegen_bench.py [N]

On N synthetic branch records (about 1.4 kB each, 6 tool events, as the exporter benchmark
writes them) it times, per record: the orjson parse (the floor), the validating path's
acceptance (orjson, then the jsonschema-rs validator), the fast path (``decode_branch``:
msgspec decodes the bytes into the Structs in C), ``from_wire`` of the parsed dict,
``to_wire`` and ``encode``, and ``from_wire`` of records holding unknown keys (the slower
path that keeps them). Then the wall time of ``wiregate codegen --check`` on this checkout.
"""

from __future__ import annotations

import gc
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from contracts import locate
from datafactory.records import (
    RolloutBranchRecord,
    decode_branch,
    encode,
    from_wire,
    to_wire,
)
from wiregate.record_validator import ValidatorSet

ROOT = Path(__file__).resolve().parents[1]
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "file",
    "test",
    "build",
    "parse",
    "write",
    "read",
    "value",
    "index",
    "error",
]


def _branch(rng: random.Random, number: int) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    for call in range(3):
        call_id = f"call-{number}-{call}"
        args = {"path": f"src/{rng.choice(WORDS)}.py", "mode": "text"}
        name = rng.choice(["read_file", "write_file", "run_tests"])
        data = {"name": name, "args": args, "call_id": call_id}
        events.append({"event": "tool_call", "channel": "tools", "data": data})
        output = " ".join(rng.choice(WORDS) for _ in range(10))
        events.append({"event": "tool_result", "channel": "tools", "data": {"output": output}})
    objective = rng.randint(0, 1)
    judge = round(rng.uniform(0, 10), 2)
    return {
        "schema_version": "rollout-wire/v1",
        "rollout_id": f"rollout-{number // 4:08d}",
        "task": " ".join(rng.choice(WORDS) for _ in range(16)),
        "branch_index": number % 4,
        "temperature": 0.7,
        "session_id": f"session-{number:08d}",
        "seed": number,
        "tool_call_sequence": events,
        "final_answer": " ".join(rng.choice(WORDS) for _ in range(18)),
        "build_result": {"status": "pass", "exit_code": 0, "ran_at_ms": 1750000000000},
        "objective_score": objective,
        "objective_status": "pass" if objective else "fail",
        "judge_score": judge,
        "rank": 1,
        "total_score": objective + judge / 10 * 0.3,
    }


def _time(label: str, items: list[Any], work: Callable[[Any], object], repeat: int = 5) -> None:
    """The median over ``repeat`` passes of the CPU time per item."""
    runs = []
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        for item in items:
            work(item)
        runs.append(time.process_time() - start)
    per = statistics.median(runs) * 1e6 / len(items)
    print(f"{label:<52} {per:7.2f} us/record")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    rng = random.Random(7)
    records = [_branch(rng, i) for i in range(n)]
    lines = [orjson.dumps(record) for record in records]
    extra = [orjson.dumps({**r, "provenance": {"model": "m"}}) for r in records]
    print(f"{n:,} branch records, {sum(map(len, lines)) / n:,.0f} bytes each on average")
    validator = ValidatorSet(locate(ROOT)).get("RolloutBranchRecord")
    assert all(decode_branch(line) is not None for line in lines)

    _time("orjson.loads (the floor)", lines, orjson.loads)
    _time(
        "orjson.loads + jsonschema-rs is_valid",
        lines,
        lambda b: validator.is_valid(orjson.loads(b)),
    )
    _time("decode_branch (msgspec, bytes -> Structs)", lines, decode_branch)
    dicts = [orjson.loads(line) for line in lines]
    _time("from_wire (dict -> Structs)", dicts, lambda d: from_wire(RolloutBranchRecord, d))
    models = [decode_branch(line) for line in lines]
    _time("to_wire (Structs -> dict)", models, to_wire)
    _time("encode (Structs -> bytes)", models, encode)
    extra_dicts = [orjson.loads(line) for line in extra]
    _time(
        "from_wire, one unknown key (kept in wire_extra)",
        extra_dicts,
        lambda d: from_wire(RolloutBranchRecord, d),
    )

    wiregate = Path(sys.executable).parent / "wiregate"
    walls = []
    for _ in range(6):
        start = time.perf_counter()
        done = subprocess.run([str(wiregate), "--root", str(ROOT), "codegen", "--check"])
        walls.append(time.perf_counter() - start)
        assert done.returncode == 0
    # The first run may warm the file cache: the median of the other five.
    print(f"wiregate codegen --check (fresh): {statistics.median(walls[1:]):.3f} s wall median")


if __name__ == "__main__":
    main()
