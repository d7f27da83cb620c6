"""The contract's types for other languages: ``wiregate codegen --target typescript|pydantic``.

A governed repository can replace its hand-written types with these files and keep them
fresh: ``wiregate drift`` compares a copy declared ``kind = "generated"`` with what
:func:`generate` writes now. Every record type of every schema is covered: the schemas are
joined into one document (their ``$defs`` names are unique across the contract), each
schema's root ``oneOf`` becomes a union named by its title (``RolloutWire``,
``TrainingRecord``), and ``WireRecord`` is the union of those.

The output is deterministic: the generators are pinned (npm ``package-lock.json``,
``pyproject.toml``) and run with fixed options; line ends are LF; a header names the
contract's versions and the sha256 of each schema file, and the generator's version.
Outputs are cached by those (``wiregate.extract.cache``), so a warm run needs no generator.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from codegen.errors import CodegenError, shorten
from contracts import SCHEMA_FILES, Contract, ContractError
from wiregate.errors import UserError

__all__ = [
    "ROOT_NAME",
    "TARGETS",
    "TargetError",
    "check_output",
    "combined_schema",
    "generate",
    "header_lines",
    "is_fresh",
    "regenerate_command",
    "stale_diff",
    "write_output",
]

#: Target name -> what the README calls it.
TARGETS: dict[str, str] = {
    "typescript": "TypeScript (json-schema-to-typescript)",
    "pydantic": "Pydantic v2 models (datamodel-code-generator)",
}

#: The union of every record type of the contract.
ROOT_NAME = "WireRecord"


class TargetError(UserError):
    """The target cannot be generated (a generator missing or failing); one line. No node or
    npm package: :class:`wiregate.node.NodeToolMissing`, a :class:`UserError` too."""


def _lf(data: bytes) -> bytes:
    """``data`` with CRLF (and lone CR) line ends made LF."""
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def is_fresh(data: bytes, text: str) -> bool:
    """Whether a file's bytes are ``text`` once line ends are normalised (a CRLF checkout of
    a fresh file is fresh)."""
    return _lf(data) == _lf(text.encode("utf-8"))


def stale_diff(path: Path, text: str) -> str | None:
    """None when the file at ``path`` holds ``text`` (after normalising line ends), else a
    unified diff from what it holds (nothing, when it is missing) to ``text``."""
    import difflib
    import stat

    try:
        # A FIFO would block the read, a device never end it.
        if not stat.S_ISREG(path.stat().st_mode):
            raise TargetError(f"{path}: cannot read: not a regular file")
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        raise TargetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if data and is_fresh(data, text):
        return None
    current = _lf(data).decode("utf-8", "replace")
    lines = difflib.unified_diff(
        current.splitlines(keepends=True),
        text.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def schema_digests(contract: Contract) -> list[tuple[str, str, str]]:
    """(label, version, sha256 of the LF text) of each schema file, in contract order."""
    out = []
    for name in SCHEMA_FILES:
        label = f"contracts/{SCHEMA_FILES[name]}"
        try:
            data = contract.schema_path(name).read_bytes()
        except OSError as exc:
            raise TargetError(f"{label}: cannot read: {exc.strerror or exc}") from None
        out.append((label, _version(contract, name), hashlib.sha256(_lf(data)).hexdigest()))
    return out


def _version(contract: Contract, name: str) -> str:
    """``rollout-wire/v1`` from the schema's ``$id`` (its last two path segments)."""
    schema_id = _schemas(contract)[name].get("$id")
    if isinstance(schema_id, str) and schema_id.count("/") >= 2:
        return "/".join(schema_id.rstrip("/").split("/")[-2:])
    return name


def _schemas(contract: Contract) -> dict[str, dict[str, Any]]:
    try:
        return contract.schemas
    except ContractError as exc:
        raise TargetError(str(exc)) from None


def _check(contract: Contract) -> None:
    """Each schema is valid draft 2020-12, holds no lone surrogate, and its ``$ref``s name one
    of its definitions; no definition name is used twice: a generator would otherwise fail
    obscurely, or type what it cannot resolve as ``Any``."""
    from codegen.freshness import check_encodable
    from wiregate.metaschema import violation

    try:
        contract.definitions  # noqa: B018  (a name defined twice is an error)
    except ContractError as exc:
        raise TargetError(str(exc)) from None
    for name, schema in _schemas(contract).items():
        label = f"contracts/{SCHEMA_FILES[name]}"
        found = violation(schema, "2020-12")
        if found is not None:
            raise TargetError(
                f"{label}: not a valid JSON Schema (draft 2020-12) at {found.pointer or '/'}: "
                f"{shorten(found.message)}"
            )
        try:
            check_encodable(label, schema)
        except CodegenError as exc:
            raise TargetError(str(exc)) from None
        for at, ref in _refs(schema, ""):
            target = ref.removeprefix("#/$defs/")
            if not ref.startswith("#/$defs/") or target not in schema.get("$defs", {}):
                raise TargetError(
                    f"{label}: $ref {ref!r} at #{at} does not name a definition of the file"
                )


def _refs(node: Any, at: str) -> Iterable[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield at, value
            else:
                yield from _refs(value, f"{at}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _refs(value, f"{at}/{index}")


def combined_schema(contract: Contract) -> dict[str, Any]:
    """One draft 2020-12 document holding every definition of the contract, a union per
    schema (named by its title) and :data:`ROOT_NAME`, the union of those; ``_check``ed."""
    definitions: dict[str, Any] = {}
    members = []
    for schema in _schemas(contract).values():
        definitions.update(schema.get("$defs", {}))
    for name, schema in _schemas(contract).items():
        title = schema.get("title") or name
        if title in definitions or title == ROOT_NAME:
            label = f"contracts/{SCHEMA_FILES[name]}"
            raise TargetError(f"{label}: title {title!r} is also the name of a definition")
        union: dict[str, Any] = {"oneOf": schema.get("oneOf", [])}
        if "description" in schema:
            union = {"description": schema["description"], **union}
        definitions[title] = union
        members.append({"$ref": f"#/$defs/{title}"})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": ROOT_NAME,
        "description": "Any record of the contract, of any layer.",
        "oneOf": members,
        "$defs": definitions,
    }


def header_lines(digests: Iterable[tuple[str, str, str]], target: str, generator: str) -> list[str]:
    """The header's lines (without comment markers): what made the file, from what
    (``digests``: the contract's :func:`schema_digests`)."""
    return [
        f"Generated by `wiregate codegen --target {target}` from the contract. DO NOT EDIT:",
        "regenerate it with that command; `wiregate drift` reports a stale copy.",
        *(f"contract: {version} {label} sha256={digest}" for label, version, digest in digests),
        f"generator: {generator}",
    ]


def module_digest(*paths: Path) -> str:
    """sha256 of our own generator files: a change to the options regenerates."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode())
        digest.update(_lf(path.read_bytes()))
    return digest.hexdigest()


def generate(target: str, contract: Contract) -> str:
    """The text of ``target``'s file for ``contract`` (LF line ends, ends with a newline).
    A one-line :class:`TargetError` when it cannot be had."""
    if target == "typescript":
        from codegen.targets import typescript as module
    elif target == "pydantic":
        from codegen.targets import pydantic as module  # type: ignore[no-redef]
    else:
        raise TargetError(f"unknown target {target!r} (known: {', '.join(TARGETS)})")
    return _cached(target, contract, module.fingerprint, module.render)


def _cached(
    target: str,
    contract: Contract,
    fingerprint: Callable[[], list[str]],
    render: Callable[[Contract, list[tuple[str, str, str]]], str],
) -> str:
    from wiregate.extract import cache

    tools = fingerprint()  # raises when the generator is missing, cached or not
    _check(contract)  # before the cache: an output made before a check existed is not reused
    digests = schema_digests(contract)  # the cache key's and the header's: read once
    key = cache.cache_key("generated", target, tools, digests)
    found = cache.load(key, Path())
    if found is not None and isinstance(found[0], str):
        return found[0]
    text = render(contract, digests)
    cache.store(key, Path(), (), text)
    return text


def comment_header(lines: Iterable[str], marker: str) -> str:
    return "".join(f"{marker} {line}\n" for line in lines)


def regenerate_command(target: str, out: str) -> str:
    import shlex

    return shlex.join(["wiregate", "codegen", "--target", target, "--out", out])


def check_output(path: Path, contract: Contract | None = None) -> None:
    """Raise a one-line :class:`TargetError` when ``--out`` may not be replaced: a path into
    the contract being read (its schemas, fixtures, ``mirrors.toml``, baseline), or an
    existing node that is not a regular file (a symbolic link, a directory, a device, a FIFO,
    a socket: the rename would replace the node itself), or a read-only file."""
    from wiregate.atomic import refusal

    if contract is not None:
        directory = Path(os.path.realpath(contract.directory))
        if Path(os.path.realpath(path)).is_relative_to(directory):
            raise TargetError(
                f"{path}: cannot write: a file of the contract being read (under {directory})"
            )
    why = refusal(path)
    if why is not None:
        raise TargetError(f"{path}: cannot write: {why}")


def write_output(path: Path, text: str, contract: Contract | None = None) -> bool:
    """Write ``text`` to ``path`` unless it holds it already (after normalising line ends);
    whether it was written. Atomic: a hidden temporary file renamed over it, with the
    permission bits of the file it replaces (a new file: ``0666`` less the umask, as ``open``
    gives). What :func:`check_output` refuses is never touched."""
    from wiregate.atomic import write_atomically

    check_output(path, contract)
    data = text.encode("utf-8")
    try:
        with contextlib.suppress(FileNotFoundError):
            # Over twice the text's size, not even CRLF line ends make it the text: a huge
            # file is replaced without being read into memory first.
            if path.stat().st_size <= 2 * len(data) and is_fresh(path.read_bytes(), text):
                return False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # a file where a folder of the path should be
            raise TargetError(f"{path}: cannot write: a parent is not a directory") from None
        write_atomically(path, data)
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            raise TargetError(f"{path}: cannot write: a parent is not a directory") from None
        raise TargetError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return True
