"""The JSON Schema of exported TypeScript types, by ts-json-schema-generator (npm, pinned in
the project's ``package-lock.json`` and installed by ``npm ci``), run by Node.js as a
subprocess with a time limit.

The governed checkout's own ``tsconfig.json`` (the nearest above the file) says how to read
it; its npm dependencies are not needed (imports they would satisfy stay unresolved, the type
checker is not run), but a syntax error is a compile error. Referenced types are resolved
across the checkout's files and inlined.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from wiregate.errors import UserError
from wiregate.extract import cache as extract_cache
from wiregate.node import NodeToolMissing, find_node, node_modules_dir, package_versions
from wiregate.pointer import PointerError, join, split

__all__ = [
    "DEFAULT_TIMEOUT",
    "Extracted",
    "ExtractionError",
    "SourcePosition",
    "extract_types",
    "tsconfig_for",
]

#: Seconds one extraction may take (``WIREGATE_EXTRACT_TIMEOUT`` overrides it).
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 86_400.0  # a day: inf, 1e300 overflow the timer
#: Node.js's heap limit for one extraction (MB): a type that expands without end stops there.
NODE_HEAP_MB = 2048
_SCRIPT = Path(__file__).with_name("ts_extract.cjs")
_PACKAGES = ("ts-json-schema-generator", "typescript")


class ExtractionError(UserError):
    """A code copy whose schema cannot be extracted; one line naming the file and the type."""


#: Where a place of an extracted schema is declared: (file relative to the checkout, 1-based
#: line, 1-based column in Unicode code points).
SourcePosition = tuple[str, int, int]


@dataclass(frozen=True)
class Extracted:
    schema: dict[str, Any]
    files: tuple[str, ...]  # every file it came from, relative to the checkout
    # JSON pointer in ``schema`` -> where the property or type there is declared.
    positions: Mapping[str, SourcePosition] = field(default_factory=dict)

    def locate(self, pointer: str) -> SourcePosition | None:
        """Where ``pointer`` is declared, or its nearest declared ancestor (a keyword such as
        ``required`` is written where its object type is)."""
        try:
            tokens = split(pointer)
        except PointerError:
            return None
        for length in range(len(tokens), -1, -1):
            found = self.positions.get(join("#", *tokens[:length]))
            if found is not None:
                return found
        return None

    def cached(self) -> dict[str, Any]:
        """What the cache keeps of it (the files are the cache's own)."""
        return {"schema": self.schema, "positions": {k: list(v) for k, v in self.positions.items()}}

    @classmethod
    def from_cache(cls, value: Any, files: tuple[str, ...]) -> Extracted | None:
        if not isinstance(value, dict) or not isinstance(value.get("schema"), dict):
            return None
        return cls(value["schema"], files, _positions(value.get("positions")))


def _positions(value: Any) -> dict[str, SourcePosition]:
    """The well-formed entries of an extraction's (or a cache entry's) positions."""
    found: dict[str, SourcePosition] = {}
    for pointer, at in value.items() if isinstance(value, dict) else ():
        if (
            isinstance(pointer, str)
            and isinstance(at, list)
            and len(at) == 3
            and isinstance(at[0], str)
            and all(isinstance(n, int) and n > 0 for n in at[1:])
        ):
            try:  # written as shown (escaped, not percent-encoded); looked up by its tokens
                found[join("#", *split(pointer, percent_encoded=False))] = (at[0], at[1], at[2])
            except PointerError:
                continue
    return found


def cached_results(keys: Mapping[str, str], root: Path) -> dict[str, Extracted | ExtractionError]:
    """``{name: extraction}`` of the ``keys`` (name -> cache key) whose cache entry still
    holds for the files under ``root``."""
    results: dict[str, Extracted | ExtractionError] = {}
    for name, key in keys.items():
        cached = extract_cache.load(key, root)
        found = Extracted.from_cache(*cached) if cached is not None else None
        if found is not None:
            results[name] = found
    return results


def stored(
    key: str, root: Path, files: Sequence[str], outcome: Mapping[str, Any], looked: Any = None
) -> Extracted:
    """A successful ``outcome`` of an extraction (schema and positions) that read ``files``
    and looked at the paths ``looked`` too (a reply's list), cached under ``key``."""
    extracted = Extracted(
        outcome["schema"], tuple(sorted(set(files))), _positions(outcome.get("positions"))
    )
    extract_cache.store(key, root, files, extracted.cached(), _relative_paths(looked))
    return extracted


def timeout_seconds(environ: Mapping[str, str] | None = None) -> float:
    value = (os.environ if environ is None else environ).get("WIREGATE_EXTRACT_TIMEOUT")
    if not value:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        raise UserError(f"WIREGATE_EXTRACT_TIMEOUT={value!r}: not a number of seconds") from None
    if not 0 < seconds <= MAX_TIMEOUT:  # NaN and inf too: a timer cannot wait for ever
        raise UserError(
            f"WIREGATE_EXTRACT_TIMEOUT={value!r}: must be more than 0 and at most "
            f"{MAX_TIMEOUT:g} seconds"
        )
    return seconds


def _node() -> str:
    try:
        return find_node("TypeScript copies need")
    except NodeToolMissing as exc:
        raise ExtractionError(str(exc)) from None


@cache
def _tool_versions(modules: Path) -> tuple[str, ...]:
    try:
        versions = package_versions(modules, _PACKAGES, "@")
    except NodeToolMissing as exc:
        raise ExtractionError(str(exc)) from None
    versions.append(hashlib.sha256(_SCRIPT.read_bytes()).hexdigest())
    return tuple(versions)


def tsconfig_for(root: Path, path: str) -> tuple[str | None, list[str]]:
    """The nearest ``tsconfig.json`` at or above ``path``'s folder inside ``root`` (relative,
    or None), and every ``tsconfig*.json`` from that folder up to ``root`` (what ``extends``
    usually names): both are part of what an extraction read."""
    parts = Path(path).parent.parts
    nearest = None
    configs = []
    for depth in range(len(parts), -1, -1):
        folder = Path(*parts[:depth]) if depth else Path()
        try:
            names = sorted(os.listdir(root / folder))
        except OSError:
            continue
        for name in names:
            if name.startswith("tsconfig") and name.endswith(".json"):
                configs.append((folder / name).as_posix())
                if name == "tsconfig.json" and nearest is None:
                    nearest = (folder / name).as_posix()
    return nearest, configs


def extract_types(
    root: Path, path: str, types: Sequence[str], timeout: float | None = None
) -> dict[str, Extracted | ExtractionError]:
    """``{type: its schema or the error for that type}`` for the exported ``types`` declared in
    ``path`` (relative to the checkout ``root``); cached types are not extracted again, the
    others in one run of Node.js. A problem with the whole file (no node, tools missing, a
    compile error, a time-out) raises :class:`ExtractionError`."""
    modules = node_modules_dir()
    versions = _tool_versions(modules)
    tsconfig, configs = tsconfig_for(root, path)
    keys = {name: extract_cache.cache_key("typescript", versions, path, name) for name in types}
    results = cached_results(keys, root)
    missing = [name for name in types if name not in results]
    if not missing:
        return results
    request = {"root": os.path.abspath(root), "path": path, "tsconfig": tsconfig, "types": missing}
    reply = _run(_node(), modules, request, root, path, timeout)
    if "error" in reply:
        raise ExtractionError(f"{root / path}: {_describe(reply)}")
    files = [*reply["files"], *configs]
    looked = reply.get("looked")
    for name in missing:
        outcome = reply["types"][name]
        if "error" in outcome:
            results[name] = ExtractionError(f"{root / path}: {_describe(outcome, name)}")
        else:
            if outcome["schema"].get("definitions") == {}:
                del outcome["schema"]["definitions"]  # expose none leaves an empty one behind
            results[name] = stored(keys[name], root, files, outcome, looked)
    return results


def _relative_paths(value: Any) -> list[str]:
    """The paths of a reply's ``looked``, each relative and inside the checkout (anything
    else is not the cache's to check)."""
    if not isinstance(value, list):
        return []
    return [
        name
        for name in value
        if isinstance(name, str) and not Path(name).is_absolute() and ".." not in Path(name).parts
    ]


def _describe(reply: Mapping[str, Any], name: str | None = None) -> str:
    kind, error = reply.get("kind"), str(reply["error"])
    if kind == "compile":
        return f"TypeScript compile error: {error}"
    if kind == "no-type":
        return f"no exported interface or type alias named {name!r}"
    if kind == "not-type":
        return error
    if kind == "inexact":
        return f"{name}: cannot be extracted exactly: {error}"
    return f"{name}: ts-json-schema-generator failed: {error}" if name else error


def _run(
    node: str,
    modules: Path,
    request: Mapping[str, Any],
    root: Path,
    path: str,
    timeout: float | None,
) -> dict[str, Any]:
    limit = timeout_seconds() if timeout is None else timeout
    try:
        completed = subprocess.run(
            [node, str(_SCRIPT), str(modules), json.dumps(request)],
            capture_output=True,
            timeout=limit,
            cwd=os.path.abspath(root),
            stdin=subprocess.DEVNULL,
            check=False,
            # No proxy or registry settings reach it: the generator reads local files only.
            env={
                "PATH": os.environ.get("PATH", ""),
                "NODE_OPTIONS": f"--max-old-space-size={NODE_HEAP_MB}",
            },
        )
    except subprocess.TimeoutExpired:
        raise ExtractionError(
            f"{root / path}: TypeScript extraction timed out after {limit:g} s "
            "(WIREGATE_EXTRACT_TIMEOUT)"
        ) from None
    except OSError as exc:
        raise ExtractionError(f"cannot run node ({node}): {exc.strerror or exc}") from None
    try:
        reply = json.loads(completed.stdout)
        if not isinstance(reply, dict):
            raise ValueError(reply)
    except ValueError:
        stderr = completed.stderr.decode("utf-8", "replace")
        if "JavaScript heap out of memory" in stderr:  # V8's last words, then SIGABRT
            raise ExtractionError(
                f"{root / path}: Node.js ran out of memory (its {NODE_HEAP_MB} MB heap limit) "
                f"extracting {', '.join(request['types'])}"
            ) from None
        last = stderr.strip().splitlines()
        detail = last[-1] if last else f"exit status {completed.returncode}"
        raise ExtractionError(
            f"{root / path}: ts-json-schema-generator gave no result: {detail}"
        ) from None
    return reply
