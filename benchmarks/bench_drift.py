"""Benchmark ``wiregate drift`` and ``wiregate drift history`` as a user runs them (a new process
each time, start-up included) and print the median wall times.

    .venv/bin/python benchmarks/bench_drift.py [--runs 7]

1. ``wiregate drift`` over three repositories (producer, consumer, mirror) with one copy each.
   Target: under 1 s.
2. ``wiregate drift history`` over a repository of 1,000 commits, 50 of which change the copy
   (each to a different content, so nothing is answered from a cache). Target: under 5 s.
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

ROOT = Path(__file__).resolve().parents[1]
WIREGATE = [str(Path(sys.executable).with_name("wiregate"))]
COMMITS = 1_000
TOUCHING = 50
COPY_PATH = "schemas/rollout-wire.schema.json"

MIRRORS = """
version = 1
[[repository]]
name = "producer"
checkout = "../producer"
role = "producer"
[[repository.copy]]
id = "rollout-wire"
schema = "rollout-wire"
paths = ["schemas/rollout-wire.schema.json"]

[[repository]]
name = "consumer"
checkout = "../consumer"
role = "consumer"
[[repository.copy]]
id = "rollout-wire"
schema = "rollout-wire"
canonical_at = "#/$defs/RolloutBranchRecord"
paths = ["schemas/rollout-wire.schema.json"]

[[repository]]
name = "mirror"
checkout = "../mirror"
role = "mirror"
[[repository.copy]]
id = "rollout-wire"
schema = "rollout-wire"
paths = ["schemas/rollout-wire.schema.json"]
"""


def _git(directory: Path, *args: str, stdin: bytes | None = None) -> None:
    subprocess.run(["git", *args], cwd=directory, input=stdin, check=True, capture_output=True)


def _revision(canonical: dict[str, Any], index: int) -> bytes:
    """The copy as of its ``index``-th change: each revision adds one optional property."""
    document = copy.deepcopy(canonical)
    branch = document["$defs"]["RolloutBranchRecord"]
    for n in range(index):
        branch["properties"][f"extra_{n}"] = {"type": "string", "description": f"revision {n}"}
    return json.dumps(document, indent=2).encode() + b"\n"


def _single_record(root: Path) -> dict[str, Any]:
    """The consumer's copy: RolloutBranchRecord alone, with the definitions it references."""
    from contracts import locate
    from wiregate.drift import expected_copy, load_mirrors

    contract = locate(root)
    spec = load_mirrors(contract).repository("consumer").copy("rollout-wire")
    return expected_copy(contract, spec)


def build_workspace(base: Path) -> tuple[Path, Path]:
    """A wiregate root with a three-repository mirrors.toml, its three checkouts, and the
    1,000-commit history repository. Returns (root, history checkout)."""
    root = base / "wiregate"
    (root / "contracts").mkdir(parents=True)
    for name in ("rollout-wire.schema.json", "training-record.schema.json"):
        shutil.copy(ROOT / "contracts" / name, root / "contracts" / name)
    (root / "contracts" / "mirrors.toml").write_text(MIRRORS, encoding="utf-8")
    canonical = json.loads((ROOT / "contracts" / "rollout-wire.schema.json").read_bytes())

    copies = {
        "producer": _revision(canonical, 1),
        "consumer": json.dumps({"title": "RolloutBranchRecord", **_single_record(root)}).encode(),
        "mirror": (ROOT / "contracts" / "rollout-wire.schema.json").read_bytes(),
    }
    for name, data in copies.items():
        target = base / name / COPY_PATH
        target.parent.mkdir(parents=True)
        target.write_bytes(data)

    history = base / "history"
    history.mkdir()
    _git(history, "init", "-q", "-b", "main")
    touching = {round(i * COMMITS / TOUCHING) for i in range(TOUCHING)}
    stream = bytearray()
    revision = 0
    for n in range(COMMITS):
        message = f"commit {n}".encode()
        stream += b"commit refs/heads/main\n"
        stream += (
            f"committer Bench <bench@example.invalid> {1_780_000_000 + n * 60} +0000\n".encode()
        )
        stream += b"data %d\n%s\n" % (len(message), message)
        if n in touching:
            data = _revision(canonical, revision)
            revision += 1
            stream += f"M 100644 inline {COPY_PATH}\n".encode()
        else:
            data = f"line {n}\n".encode()
            stream += b"M 100644 inline notes.txt\n"
        stream += b"data %d\n%s\n" % (len(data), data)
    _git(history, "fast-import", "--quiet", stdin=bytes(stream))
    _git(history, "reset", "-q", "--hard", "main")
    assert revision == TOUCHING
    return root, history


def median_seconds(command: list[str], runs: int) -> tuple[float, str]:
    times = []
    output = ""
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode == 2:
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
        output = done.stdout
    return statistics.median(times), output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        root, history = build_workspace(Path(temporary))
        drift, drift_out = median_seconds([*WIREGATE, "--root", str(root), "drift"], args.runs)
        walk, walk_out = median_seconds(
            [
                *WIREGATE,
                "--root",
                str(root),
                "drift",
                "history",
                "--repo",
                f"consumer={history}",
                "--format",
                "json",
            ],
            args.runs,
        )
    revisions = len(json.loads(walk_out)["histories"][0]["revisions"])
    print(
        f"wiregate drift, 3 repositories x 1 copy: median {drift:.3f} s over {args.runs} runs "
        f"(target < 1 s) [{drift_out.strip().splitlines()[-1]}]"
    )
    print(
        f"wiregate drift history, {COMMITS} commits, {revisions} touching the copy: "
        f"median {walk:.3f} s over {args.runs} runs (target < 5 s)"
    )


if __name__ == "__main__":
    main()
