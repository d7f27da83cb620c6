"""``--tools FILE``: the tool specs the trl target's ``tools`` column is filled from."""

from __future__ import annotations

import os
from typing import Any

import orjson

from datafactory.settings import Given, SettingError
from datafactory.targets.trl import tool_catalogue

__all__ = ["MAX_TOOLS_BYTES", "read_tools"]

#: A tools file is read whole: a catalogue of tool specs, not data.
MAX_TOOLS_BYTES = 64 * 1024 * 1024


def read_tools(path: str) -> dict[str, dict[str, Any]]:
    """The tool specs of ``path`` by name (``targets.trl.tool_catalogue``): a JSON list of
    specs, a JSON object with a ``tools`` list, or JSONL (one spec per line). Raises
    ``SettingError`` (``tools_path``) naming the file, and the line for JSONL."""

    def fail(problem: str) -> SettingError:
        return SettingError("tools_path", Given("tools_path"), f" {path}: {problem}")

    # A FIFO would block the open below, a device never end: refused as inputs are.
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        raise fail("not a regular file")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TOOLS_BYTES + 1)
    except OSError as exc:
        raise fail(f"cannot read: {exc.strerror}") from None
    if len(data) > MAX_TOOLS_BYTES:
        raise fail(f"larger than {MAX_TOOLS_BYTES} bytes")
    specs: list[Any]
    try:
        whole = orjson.loads(data)
    except orjson.JSONDecodeError:
        specs = []
        for number, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            try:
                specs.append(orjson.loads(line))
            except orjson.JSONDecodeError as exc:
                raise fail(f"line {number}: not JSON: {exc}") from None
    else:
        if isinstance(whole, dict) and isinstance(whole.get("tools"), list):
            specs = whole["tools"]
        elif isinstance(whole, list):
            specs = whole
        else:
            specs = [whole]
    for position, spec in enumerate(specs):
        if not isinstance(spec, dict):
            raise fail(f"tool spec {position}: an object, got {type(spec).__name__}")
    try:
        return tool_catalogue(specs)
    except ValueError as exc:
        raise fail(str(exc)) from None
