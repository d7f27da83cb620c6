"""The type declarations of source files, read without running them: exported TypeScript
interfaces and type aliases (the TypeScript parser, run by Node.js, parses each file on its
own: no program, no type checker, nothing read from disk) and Python classes that are
Pydantic models, dataclasses, TypedDicts or msgspec Structs (``ast``: the governed code is
never imported).

Each declaration comes with a *shape*: a small JSON Schema of its property names (nested
object types, arrays, unions and references to other declarations by name), enough for
``wiregate drift --discover`` to score it against a canonical record type. Types are not
judged here: a configured copy is extracted with the real tools.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from wiregate.extract.typescript import (
    ExtractionError,
    _node,
    _tool_versions,
    timeout_seconds,
)
from wiregate.node import node_modules_dir

__all__ = ["Declaration", "DeclarationError", "python_declarations", "typescript_declarations"]

_SCRIPT = Path(__file__).with_name("ts_declarations.cjs")
#: Levels of nested annotations read (``list[dict[str, list[X]]]`` ...): names below them are
#: not scored, and a hostile annotation cannot exhaust the stack.
_MAX_DEPTH = 16
_MODEL_BASES = frozenset({"BaseModel", "TypedDict", "Struct", "RootModel"})
_DATACLASS = frozenset({"dataclass", "dataclasses.dataclass", "pydantic.dataclasses.dataclass"})


class DeclarationError(Exception):
    """The TypeScript files could not be read (no node, no tools, a time-out); one line."""


@dataclass(frozen=True)
class Declaration:
    """A type declared in a file: how a ``[[repository.copy]]`` names it, and its shape."""

    kind: str  # "typescript" | "python"
    path: str  # the declaring file, relative to the checkout
    name: str  # the type's (class's) name
    line: int
    column: int
    shape: dict[str, Any]  # a JSON Schema of its property names; "$ref" to "#/$defs/<name>"
    module: str | None = None  # Python: the dotted module importable from python_path
    python_path: str = "."
    # A TypeScript declaration that is not exported names a type others refer to, but cannot
    # be a copy (the extractor reads exported types).
    exported: bool = True

    @property
    def declared(self) -> str:
        """The copy's ``type`` (TypeScript) or ``model`` (Python)."""
        return f"{self.module}:{self.name}" if self.kind == "python" else self.name


# --- TypeScript ----------------------------------------------------------------------------


def typescript_declarations(
    files: Mapping[str, bytes], timeout: float | None = None
) -> list[Declaration]:
    """The interfaces and type aliases declared in ``files`` (path relative to the checkout ->
    content), exported or not, in one run of Node.js; a file that does not parse has none."""
    if not files:
        return []
    try:
        node = _node()
        modules = node_modules_dir()
        _tool_versions(modules)
    except ExtractionError as exc:  # node or the npm tools missing
        raise DeclarationError(str(exc)) from None
    request = {"files": {name: data.decode("utf-8", "replace") for name, data in files.items()}}
    limit = timeout_seconds() if timeout is None else timeout
    try:
        completed = subprocess.run(
            [node, str(_SCRIPT), str(modules)],
            input=json.dumps(request).encode(),
            capture_output=True,
            timeout=limit,
            check=False,
            env={"PATH": os.environ.get("PATH", ""), "NODE_OPTIONS": "--max-old-space-size=2048"},
        )
    except subprocess.TimeoutExpired:
        raise DeclarationError(
            f"reading the TypeScript files timed out after {limit:g} s (WIREGATE_EXTRACT_TIMEOUT)"
        ) from None
    except OSError as exc:
        raise DeclarationError(f"cannot run node ({node}): {exc.strerror or exc}") from None
    try:
        reply = json.loads(completed.stdout)
        found = reply["files"]
    except (ValueError, KeyError, TypeError):
        raise DeclarationError(
            f"the TypeScript parser gave no result (exit status {completed.returncode})"
        ) from None
    declarations = []
    for path in sorted(found):
        for item in found[path] if isinstance(found[path], list) else ():
            declarations.append(
                Declaration(
                    "typescript",
                    path,
                    str(item["name"]),
                    int(item["line"]),
                    int(item["column"]),
                    _ts_schema(item["shape"]),
                    exported=bool(item.get("exported")),
                )
            )
    return declarations


def _ts_schema(shape: Any) -> dict[str, Any]:
    """The node script's shape as JSON Schema (``{"ref": N}`` -> ``{"$ref": "#/$defs/N"}``)."""
    if not isinstance(shape, dict):
        return {}
    schema: dict[str, Any] = {}
    if isinstance(shape.get("ref"), str):
        schema["$ref"] = f"#/$defs/{shape['ref']}"
    if isinstance(shape.get("properties"), dict):
        schema["properties"] = {k: _ts_schema(v) for k, v in shape["properties"].items()}
    if isinstance(shape.get("items"), dict):
        schema["items"] = _ts_schema(shape["items"])
    for key in ("anyOf", "allOf"):
        if isinstance(shape.get(key), list):
            schema[key] = [_ts_schema(member) for member in shape[key]]
    return schema


# --- Python --------------------------------------------------------------------------------


def module_of(path: str, files: Iterable[str]) -> tuple[str, str] | None:
    """(python_path, dotted module) of the ``.py`` file ``path``: the module's package is the
    run of folders above it that hold an ``__init__.py`` (among ``files``); None when a part
    is not a Python name (``scripts/export-schemas.py`` is not importable)."""
    known = set(files)
    parts = list(PurePosixPath(path).parent.parts)
    depth = len(parts)
    while depth > 0 and "/".join([*parts[:depth], "__init__.py"]) in known:
        depth -= 1
    stem = PurePosixPath(path).stem
    dotted = parts[depth:] + ([] if stem == "__init__" else [stem])
    if not dotted or not all(part.isidentifier() for part in dotted):
        return None
    return "/".join(parts[:depth]) or ".", ".".join(dotted)


def python_declarations(path: str, data: bytes, files: Iterable[str]) -> list[Declaration]:
    """The model classes (Pydantic, dataclass, TypedDict, msgspec Struct, or a subclass of
    one declared in the same file) at the top level of a module, read with ``ast``."""
    place = module_of(path, files)
    if place is None:
        return []
    try:
        tree = ast.parse(data, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # not Python we can read: no declaration
    lines = data.splitlines()
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    models: set[str] = set()
    changed = True
    while changed:  # a subclass of a model declared further down is a model too
        changed = False
        for node in classes:
            if node.name not in models and _is_model(node, models):
                models.add(node.name)
                changed = True
    found = []
    for node in classes:
        if node.name not in models:
            continue
        before = lines[node.lineno - 1][: node.col_offset].decode("utf-8", "replace")
        found.append(
            Declaration(
                "python",
                path,
                node.name,
                node.lineno,
                len(before) + 1,
                _class_schema(node, models),
                module=place[1],
                python_path=place[0],
            )
        )
    return found


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.Subscript):  # Generic[T], TypedDict's total=... aside
        return _dotted(node.value)
    return ""


def _is_model(node: ast.ClassDef, models: set[str]) -> bool:
    for decorator in node.decorator_list:
        if _dotted(decorator) in _DATACLASS:
            return True
    for base in node.bases:
        name = _dotted(base)
        if name.rpartition(".")[2] in _MODEL_BASES or name in models:
            return True
    return False


def _class_schema(node: ast.ClassDef, models: set[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for statement in node.body:
        if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
            continue
        name = statement.target.id
        if name.startswith("_") or name == "model_config":
            continue
        if _dotted(statement.annotation).rpartition(".")[2] == "ClassVar":
            continue
        properties[_alias(statement.value) or name] = _annotation(statement.annotation, 0)
    schema: dict[str, Any] = {"properties": properties}
    bases = [_dotted(base) for base in node.bases]
    inherited = [{"$ref": f"#/$defs/{name}"} for name in bases if name in models]
    if inherited:
        schema["allOf"] = inherited
    return schema


def _alias(value: ast.expr | None) -> str | None:
    """The property name of ``Field(alias="x")`` (or ``serialization_alias``)."""
    if not isinstance(value, ast.Call):
        return None
    for keyword in value.keywords:
        if (
            keyword.arg in ("alias", "serialization_alias")
            and isinstance(keyword.value, ast.Constant)
            and isinstance(keyword.value.value, str)
        ):
            return keyword.value.value
    return None


_SEQUENCES = frozenset(
    {"list", "List", "Sequence", "tuple", "Tuple", "set", "Set", "frozenset", "FrozenSet"}
)
_WRAPPERS = frozenset({"Optional", "Annotated", "Required", "NotRequired", "ReadOnly", "Final"})


def _annotation(node: ast.expr, depth: int) -> dict[str, Any]:
    """An annotation as a shape: a class by name, ``list[X]``, ``X | Y``, ``Optional[X]``."""
    if depth > _MAX_DEPTH:
        return {}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:  # a forward reference: "Message"
            return _annotation(ast.parse(node.value, mode="eval").body, depth + 1)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return {"anyOf": [_annotation(node.left, depth + 1), _annotation(node.right, depth + 1)]}
    if isinstance(node, ast.Subscript):
        outer = _dotted(node.value).rpartition(".")[2]
        arguments = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if outer in _SEQUENCES and arguments:
            return {"items": _annotation(arguments[0], depth + 1)}
        if outer == "Union":
            return {"anyOf": [_annotation(a, depth + 1) for a in arguments]}
        if outer in _WRAPPERS and arguments:
            return _annotation(arguments[0], depth + 1)
        return {}
    name = _dotted(node).rpartition(".")[2]
    return {"$ref": f"#/$defs/{name}"} if name and name[0].isupper() else {}
