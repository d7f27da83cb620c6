"""Time ``wiregate diff`` as a whole process on two ~200 KB schemas (process start included).

Usage: python benchmarks/bench_diff.py [--runs N] [--size BYTES]

The revision changes a spread of things (a widened type, a new required name, a tightened
bound, an added property, an enum extended, a description), so the timing covers the full
pipeline: load, normalise, resolve references, structural facts, rules, report.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def make_schema(target_bytes: int) -> dict[str, Any]:
    """A multi-record document in the shape of the rollout-wire contract: many ``$defs``
    entries referencing shared definitions, a root ``oneOf`` over the record types."""
    defs: dict[str, Any] = {
        "Score": {"type": "number", "minimum": 0, "maximum": 1, "description": "A score."},
        "Status": {"type": "string", "enum": ["pass", "fail", "skip"]},
    }
    index = 0
    while len(json.dumps(defs, indent=2)) < target_bytes:
        properties: dict[str, Any] = {
            f"field_{j}": {
                "type": ["string", "integer", "number", "boolean"][j % 4],
                "description": f"Field {j} of record {index}: " + "text " * 6,
            }
            for j in range(24)
        }
        # Each record names its type, as the contract's records do: the root oneOf is a
        # discriminated union (records alike but for it would make it accept nothing).
        properties["record_type"] = {"const": f"record-{index}"}
        properties["score"] = {"$ref": "#/$defs/Score"}
        properties["status"] = {"$ref": "#/$defs/Status"}
        properties["items"] = {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": 64}},
            },
        }
        defs[f"Record{index}"] = {
            "type": "object",
            "title": f"Record {index}",
            "required": ["record_type", "field_0", "field_1", "score"],
            "additionalProperties": False,
            "properties": properties,
        }
        index += 1
    records = [name for name in defs if name.startswith("Record")]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in records[:40]],
    }


def revise(schema: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(schema)
    defs = new["$defs"]
    defs["Status"]["enum"].append("error")
    defs["Record3"]["properties"]["field_1"]["type"] = "number"
    defs["Record5"]["required"].append("field_2")
    defs["Record7"]["properties"]["items"]["items"]["properties"]["name"]["maxLength"] = 32
    defs["Record9"]["properties"]["extra"] = {"type": "string"}
    defs["Record11"]["description"] = "Changed."
    last = sorted(name for name in defs if name.startswith("Record"))[-1]
    defs[last]["properties"]["field_4"]["minimum"] = 0
    return new


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--size", type=int, default=200_000)
    args = parser.parse_args()
    wiregate = shutil.which("wiregate") or str(Path(sys.executable).parent / "wiregate")
    with tempfile.TemporaryDirectory() as folder:
        old_path, new_path = Path(folder) / "old.json", Path(folder) / "new.json"
        old = make_schema(args.size)
        old_path.write_text(json.dumps(old, indent=2), encoding="utf-8")
        new_path.write_text(json.dumps(revise(old), indent=2), encoding="utf-8")
        command = [wiregate, "diff", str(old_path), str(new_path), "--mode", "full"]
        timings = []
        completed = None
        for _ in range(args.runs):
            start = time.perf_counter()
            completed = subprocess.run(command, capture_output=True, text=True, check=False)
            timings.append(time.perf_counter() - start)
        assert completed is not None
        if completed.returncode not in (0, 1):
            print(completed.stderr, file=sys.stderr)
            return 2
        findings = completed.stdout.strip().splitlines()[2:-1]  # after the two draft lines
        sizes = old_path.stat().st_size // 1024, new_path.stat().st_size // 1024
        print(f"schemas: {sizes[0]} KB and {sizes[1]} KB, {len(old['$defs'])} definitions")
        print(f"findings: {len(findings)}; exit code {completed.returncode}")
        median = statistics.median(timings)
        print(
            f"wiregate diff wall time over {args.runs} runs: median {median:.3f} s, "
            f"min {min(timings):.3f} s, max {max(timings):.3f} s"
        )
        print("budget: 0.5 s -> " + ("OK" if statistics.median(timings) < 0.5 else "OVER"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
