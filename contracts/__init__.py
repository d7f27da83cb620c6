"""The canonical rollout-wire contract: schemas, fixtures, config, and a small API to load them.

Commands act on the wiregate repository that contains the working directory (found the way
git finds its root) or on an explicit root; the copy bundled in the installed package is
used only outside such a repository.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

__all__ = [
    "SCHEMA_FILES",
    "Contract",
    "ContractError",
    "find_wiregate_root",
    "locate",
]

#: Short schema name -> file name inside ``contracts/``.
SCHEMA_FILES: dict[str, str] = {
    "rollout-wire": "rollout-wire.schema.json",
    "training-record": "training-record.schema.json",
    "trl-record": "trl-record.schema.json",
}

BUNDLED_DIR = Path(__file__).resolve().parent


class ContractError(Exception):
    """The contract cannot be found or read; the message names the file."""


def _is_wiregate_root(directory: Path) -> bool:
    if not (directory / "contracts" / SCHEMA_FILES["rollout-wire"]).is_file():
        return False
    pyproject = directory / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return False
    # A cheap textual check keeps start-up fast; the project table names the distribution.
    return any(line.strip().replace(" ", "") == 'name="wiregate"' for line in text.splitlines())


def find_wiregate_root(start: Path | None = None) -> Path | None:
    """The wiregate checkout containing ``start``: the nearest folder, up to the root of the
    git work tree, that holds the contract and names the wiregate distribution (so a wiregate
    folder inside a larger repository is found too)."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        if _is_wiregate_root(directory):
            return directory
        if (directory / ".git").exists():
            return None
    return None


@dataclass(frozen=True)
class Contract:
    """The contract files in one ``contracts/`` directory."""

    directory: Path
    bundled: bool

    def schema_path(self, name: str) -> Path:
        try:
            return self.directory / SCHEMA_FILES[name]
        except KeyError:
            known = ", ".join(SCHEMA_FILES)
            raise ContractError(f"unknown schema {name!r} (known: {known})") from None

    def load_schema(self, name: str) -> dict[str, Any]:
        return _load_json_object(self.schema_path(name))

    @cached_property
    def schemas(self) -> dict[str, dict[str, Any]]:
        return {name: self.load_schema(name) for name in SCHEMA_FILES}

    @cached_property
    def definitions(self) -> dict[str, str]:
        """Every ``$defs`` name -> the schema that defines it."""
        owner: dict[str, str] = {}
        for schema_name, schema in self.schemas.items():
            for def_name in schema.get("$defs", {}):
                if def_name in owner:
                    raise ContractError(
                        f"$defs/{def_name} is defined in both {owner[def_name]} and {schema_name}"
                    )
                owner[def_name] = schema_name
        return owner

    @cached_property
    def record_types(self) -> dict[str, str]:
        """Record type name -> schema name, in the order of each root ``oneOf``."""
        types: dict[str, str] = {}
        for schema_name, schema in self.schemas.items():
            for member in schema.get("oneOf", []):
                ref = member.get("$ref", "")
                types[ref.removeprefix("#/$defs/")] = schema_name
        return types

    @property
    def fixtures_dir(self) -> Path:
        return self.directory / "fixtures"

    def fixtures(self) -> Iterator[tuple[str, str, bool, Path]]:
        """(schema, definition, expected_valid, path) for every fixture file, sorted."""
        for path in sorted(self.fixtures_dir.glob("*/*/*/*.json")):
            label = path.parent.name
            if label not in ("valid", "invalid"):
                continue
            yield path.parent.parent.parent.name, path.parent.parent.name, label == "valid", path


#: A contract schema is a few hundred kilobytes; anything near this is not one.
MAX_SCHEMA_BYTES = 50_000_000


def read_schema_bytes(path: Path) -> bytes:
    """The bytes of a contract file: a regular file of bounded size (a FIFO in its place
    would block the read forever, ``/dev/zero`` would fill the memory)."""
    from wiregate.files import NotReadable, read_regular

    try:
        return read_regular(path, MAX_SCHEMA_BYTES)
    except NotReadable as exc:
        if exc.errno == errno.ENOENT:
            raise ContractError(f"{path}: file not found") from None
        reason = os.strerror(exc.errno) if exc.errno is not None else str(exc)
        raise ContractError(f"{path}: cannot read: {reason}") from None


def _load_json_object(path: Path) -> dict[str, Any]:
    raw = read_schema_bytes(path)
    try:
        data = json.loads(raw)
    except RecursionError:
        raise ContractError(f"{path}: not valid JSON: nested too deeply") from None
    except ValueError as exc:
        raise ContractError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ContractError(f"{path}: a schema must be a JSON object")
    return data


def locate(root: Path | None = None) -> Contract:
    """The contract of ``root`` (a wiregate checkout), of the enclosing repository, or bundled."""
    if root is not None:
        directory = root.resolve() / "contracts"
        if not (directory / SCHEMA_FILES["rollout-wire"]).is_file():
            raise ContractError(f"{root}: not a wiregate repository (no contracts/ schemas)")
        return Contract(directory, bundled=False)
    found = find_wiregate_root()
    if found is not None:
        return Contract(found / "contracts", bundled=False)
    return Contract(BUNDLED_DIR, bundled=True)
