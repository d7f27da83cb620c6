"""``contracts/mirrors.toml``: which repositories keep a copy of the contract, and where.

The file is validated against ``contracts/mirrors.schema.json``; every mistake is one line
naming the file and the key (``repository[1].copy[0].paths``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypedDict

import jsonschema_rs

from contracts import BUNDLED_DIR, SCHEMA_FILES, Contract
from wiregate import pointer as json_pointer
from wiregate.errors import UserError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "MIRRORS_FILE",
    "ROLE_DIRECTION",
    "CopySpec",
    "MirrorsConfig",
    "RepositorySpec",
    "env_var_name",
    "load_mirrors",
    "parse_repo_overrides",
    "resolve_pointer",
]

MIRRORS_FILE = "mirrors.toml"
MIRRORS_SCHEMA_FILE = "mirrors.schema.json"

#: The diff mode a copy must pass, from the role of the repository that keeps it.
ROLE_DIRECTION: dict[str, str] = {"producer": "forward", "consumer": "backward", "mirror": "full"}


@dataclass(frozen=True)
class CopySpec:
    """One copy of (part of) the contract inside a governed repository."""

    id: str
    schema: str
    canonical_at: str
    copy_at: str
    role: str
    paths: tuple[str, ...]

    @property
    def direction(self) -> str:
        return ROLE_DIRECTION[self.role]


@dataclass(frozen=True)
class RepositorySpec:
    name: str
    checkout: str
    role: str
    policy: str
    copies: tuple[CopySpec, ...]

    def copy(self, copy_id: str) -> CopySpec:
        for spec in self.copies:
            if spec.id == copy_id:
                return spec
        known = ", ".join(spec.id for spec in self.copies)
        raise UserError(f"repository {self.name!r} has no copy {copy_id!r} (known: {known})")


@dataclass(frozen=True)
class MirrorsConfig:
    path: Path
    base_dir: Path
    repositories: tuple[RepositorySpec, ...]

    def repository(self, name: str) -> RepositorySpec:
        for repository in self.repositories:
            if repository.name == name:
                return repository
        known = ", ".join(r.name for r in self.repositories)
        raise UserError(f"{self.path}: no repository named {name!r} (known: {known})")

    def checkout(
        self,
        repository: RepositorySpec,
        overrides: Mapping[str, Path | None],
        environ: Mapping[str, str] | None = None,
    ) -> tuple[Path, bool]:
        """Where ``repository`` is checked out, and whether the user named that place.

        ``--repo NAME=PATH`` beats ``WIREGATE_REPO_<NAME>``, which beats the config file.
        """
        override = overrides.get(repository.name)
        if override is not None:
            return override, True
        value = (os.environ if environ is None else environ).get(env_var_name(repository.name))
        if value:
            return Path(value), True
        # normpath, not resolve: "../x" reads as a sibling in messages, symlinks stay as named.
        return Path(os.path.normpath(self.base_dir / repository.checkout)), False


def env_var_name(repository: str) -> str:
    return "WIREGATE_REPO_" + repository.upper().replace("-", "_").replace(".", "_")


def parse_repo_overrides(values: Sequence[str]) -> dict[str, Path | None]:
    """``--repo NAME=PATH`` (or ``NAME`` alone: the configured place) -> {name: path or None}."""
    overrides: dict[str, Path | None] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not name or (sep and not path):
            raise UserError(f"--repo {value!r}: expected NAME=PATH or NAME")
        overrides[name] = Path(path) if sep else None
    return overrides


@cache
def _config_validator() -> Any:
    # The config schema ships with the package, like the contract it describes. jsonschema-rs
    # rather than jsonschema: it imports several times faster, and drift runs in hooks.
    schema = json.loads((BUNDLED_DIR / MIRRORS_SCHEMA_FILE).read_text(encoding="utf-8"))
    return jsonschema_rs.validator_for(schema)


def _key(path: Sequence[str | int]) -> str:
    key = ""
    for part in path:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    return key or "(top level)"


def load_mirrors(contract: Contract, path: Path | None = None) -> MirrorsConfig:
    """The mirrors config beside ``contract`` (or at ``path``), validated."""
    path = path or contract.directory / MIRRORS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: file not found") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML: {exc}") from None

    errors = sorted(_config_validator().iter_errors(data), key=lambda e: str(e.instance_path))
    if errors:
        error = errors[0]
        raise UserError(f"{path}: {_key(list(error.instance_path))}: {error.message}")

    default_policy = data.get("policy", "strict")
    repositories = []
    seen: set[str] = set()
    for index, entry in enumerate(data["repository"]):
        where = f"{path}: repository[{index}]"
        if entry["name"] in seen:
            raise UserError(f"{where}.name: {entry['name']!r} is declared twice")
        seen.add(entry["name"])
        copies = []
        copy_ids: set[str] = set()
        for copy_index, copy in enumerate(entry["copy"]):
            copy_where = f"{where}.copy[{copy_index}]"
            if copy["id"] in copy_ids:
                raise UserError(f"{copy_where}.id: {copy['id']!r} is declared twice")
            copy_ids.add(copy["id"])
            if copy["schema"] not in SCHEMA_FILES:
                known = ", ".join(SCHEMA_FILES)
                raise UserError(
                    f"{copy_where}.schema: unknown schema {copy['schema']!r} (known: {known})"
                )
            canonical_at = copy.get("canonical_at", "#")
            if resolve_pointer(contract.schemas[copy["schema"]], canonical_at) is None:
                raise UserError(
                    f"{copy_where}.canonical_at: {canonical_at!r} does not exist in "
                    f"{SCHEMA_FILES[copy['schema']]}"
                )
            copies.append(
                CopySpec(
                    id=copy["id"],
                    schema=copy["schema"],
                    canonical_at=canonical_at,
                    copy_at=copy.get("copy_at", "#"),
                    role=copy.get("role", entry["role"]),
                    paths=tuple(copy["paths"]),
                )
            )
        repositories.append(
            RepositorySpec(
                name=entry["name"],
                checkout=entry["checkout"],
                role=entry["role"],
                policy=entry.get("policy", default_policy),
                copies=tuple(copies),
            )
        )
    base_dir = contract.directory.parent if not contract.bundled else Path.cwd()
    return MirrorsConfig(path=path, base_dir=base_dir, repositories=tuple(repositories))


def resolve_pointer(document: Any, at: str) -> Any:
    """The value at a ``#/a/b`` JSON pointer, or None when there is none (or it is malformed)."""
    try:
        return json_pointer.resolve(document, at)
    except json_pointer.PointerError:
        return None


class CopyIdentity(TypedDict):
    repository: str
    checkout: str
    copy_id: str
    role: str
    direction: str
    policy: str
    schema: str
    canonical_at: str


def copy_identity(repository: RepositorySpec, spec: CopySpec, checkout: Path) -> CopyIdentity:
    """The fields that say which copy a result or a history is about (both report them)."""
    return {
        "repository": repository.name,
        "checkout": str(checkout),
        "copy_id": spec.id,
        "role": spec.role,
        "direction": spec.direction,
        "policy": repository.policy,
        "schema": spec.schema,
        "canonical_at": spec.canonical_at,
    }
