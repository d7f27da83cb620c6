"""Speed of the generated wire converters and of ``wiregate codegen --check``.

Prints figures; asserts nothing (speed targets are read from the figures, not unit tests).
Usage: python benchmarks/codegen_bench.py [N]
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from contracts import locate
from datafactory.wire import from_wire, to_wire

ROOT = Path(__file__).resolve().parents[1]


def _records() -> list[tuple[type[Any], dict[str, Any]]]:
    import datafactory.wire as wire

    contract = locate(ROOT)
    return [
        (getattr(wire, definition), json.loads(path.read_text(encoding="utf-8")))
        for _schema, definition, valid, path in contract.fixtures()
        if valid
    ]


def _rate(label: str, n: int, seconds: float) -> None:
    print(f"{label:<34} {n / seconds:>12,.0f} records/s  ({seconds * 1e6 / n:.2f} us/record)")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    fixtures = _records()
    batch = [fixtures[i % len(fixtures)] for i in range(n)]

    start = time.perf_counter()
    models = [from_wire(cls, data) for cls, data in batch]
    _rate("from_wire (valid fixtures, mixed)", n, time.perf_counter() - start)

    start = time.perf_counter()
    for model in models:
        to_wire(model)
    _rate("to_wire", n, time.perf_counter() - start)

    start = time.perf_counter()
    for cls, data in batch:
        to_wire(from_wire(cls, data))
    _rate("round trip", n, time.perf_counter() - start)

    wiregate = Path(sys.executable).parent / "wiregate"
    for _ in range(2):  # the first run may warm the file cache
        start = time.perf_counter()
        done = subprocess.run([str(wiregate), "--root", str(ROOT), "codegen", "--check"])
        elapsed = time.perf_counter() - start
    print(f"wiregate codegen --check (fresh)   {elapsed:.3f} s wall, exit {done.returncode}")


if __name__ == "__main__":
    main()
