"""``contracts/mirrors.toml``: which repositories keep a copy of the contract, and where.

The file is validated against ``contracts/mirrors.schema.json``; every mistake is one line
naming the file and the key (``repository[1].copy[0].paths``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from contracts import SCHEMA_FILES, Contract
from wiregate import pointer as json_pointer
from wiregate.configfile import load_config_toml
from wiregate.errors import UserError
from wiregate.files import DEFAULT_MAX_BYTES
from wiregate.policy import DEFAULT_POLICY

__all__ = [
    "DEFAULT_POLICY",
    "MIRRORS_FILE",
    "ROLE_DIRECTION",
    "CopySpec",
    "MirrorsConfig",
    "RefBounds",
    "RepositorySpec",
    "env_var_name",
    "load_config_toml",
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
    optional: bool = False  # absent from a present checkout is fine
    where: str = ""  # its key in mirrors.toml, "repository[0].copy[1]"
    # Code copies: "typescript" (``type`` declared in the file ``paths`` names) or "python"
    # (``model`` = MODULE:CLASS importable from ``python_path``; ``paths`` are its module
    # files, derived). Their schema is extracted (wiregate.extract), then judged the same way.
    kind: str = "schema"
    type: str | None = None
    model: str | None = None
    python_path: str = "."
    mode: str | None = None  # Pydantic schema mode, python copies only
    # "generated": a file `wiregate codegen --target TARGET` writes (``paths`` is its one
    # path), checked for staleness byte for byte, not judged (``schema`` is "").
    target: str | None = None

    @property
    def code(self) -> bool:
        return self.kind in ("typescript", "python")

    @property
    def name(self) -> str:
        """The type or class a code copy stands for (the copy id for a schema copy)."""
        return self.type or (self.model or "").rpartition(":")[2] or self.id

    @property
    def direction(self) -> str:
        return ROLE_DIRECTION[self.role]

    def path_key(self, index: int) -> str:
        if self.kind == "generated":
            return f"{self.where}.path"
        return f"{self.where}.paths[{index}]"


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


#: Bytes of one file, and of all files, written from git for a code copy's extraction at a
#: ref: ten times a file read (a generated module of megabytes is there as in the work tree),
#: half of node's 2 GB heap in all (a program reading more could not be compiled anyway).
DEFAULT_MAX_REF_FILE_BYTES = 50_000_000
DEFAULT_MAX_REF_BYTES = 1_000_000_000


@dataclass(frozen=True)
class RefBounds:
    """What the temporary checkout of a code copy's files at a ref may hold (``max_ref_file_bytes``,
    ``max_ref_bytes``): a hostile commit's blobs of gigabytes must not fill the disk."""

    file_bytes: int = DEFAULT_MAX_REF_FILE_BYTES
    total_bytes: int = DEFAULT_MAX_REF_BYTES


DEFAULT_REF_BOUNDS = RefBounds()


@dataclass(frozen=True)
class MirrorsConfig:
    path: Path
    base_dir: Path
    repositories: tuple[RepositorySpec, ...]
    max_file_bytes: int = DEFAULT_MAX_BYTES
    ref_bounds: RefBounds = DEFAULT_REF_BOUNDS

    def select(
        self, repositories: Collection[str] | None = None, copies: Collection[str] | None = None
    ) -> tuple[tuple[RepositorySpec, tuple[CopySpec, ...]], ...]:
        """The repositories named (default: all) with the copies named (``--copy ID``,
        default: all), in the config's order. A name that matches nothing is a UserError, so a
        typo never makes a gate pass by checking nothing."""
        for name in repositories or ():
            self.repository(name)
        chosen = [r for r in self.repositories if repositories is None or r.name in repositories]
        if copies is not None:
            known = {spec.id for repository in chosen for spec in repository.copies}
            for copy_id in copies:
                if copy_id not in known:
                    where = ", ".join(r.name for r in chosen)
                    raise UserError(
                        f"--copy {copy_id!r}: no such copy in {where} "
                        f"(known: {', '.join(sorted(known))})"
                    )
        selected = []
        for repository in chosen:
            specs = tuple(s for s in repository.copies if copies is None or s.id in copies)
            if specs:
                selected.append((repository, specs))
        return tuple(selected)

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


def load_mirrors(contract: Contract, path: Path | None = None) -> MirrorsConfig:
    """The mirrors config beside ``contract`` (or at ``path``), validated."""
    path = path or contract.directory / MIRRORS_FILE
    data = load_config_toml(path, MIRRORS_SCHEMA_FILE, _check_mirrors)
    default_policy = data.get("policy", DEFAULT_POLICY)
    repositories = []
    seen: set[str] = set()
    variables: dict[str, str] = {}  # WIREGATE_REPO_<NAME> -> the name it was made from
    for index, entry in enumerate(data["repository"]):
        where = f"{path}: repository[{index}]"
        if entry["name"] in seen:
            raise UserError(f"{where}.name: {entry['name']!r} is declared twice")
        seen.add(entry["name"])
        variable = env_var_name(entry["name"])
        if variable in variables:  # one variable would move both checkouts
            raise UserError(
                f"{where}.name: {entry['name']!r} and {variables[variable]!r} share the "
                f"override variable {variable}: rename one"
            )
        variables[variable] = entry["name"]
        copies = []
        copy_ids: set[str] = set()
        for copy_index, copy in enumerate(entry["copy"]):
            copy_where = f"{where}.copy[{copy_index}]"
            if copy["id"] in copy_ids:
                raise UserError(f"{copy_where}.id: {copy['id']!r} is declared twice")
            copy_ids.add(copy["id"])
            if copy.get("kind") == "generated":
                copies.append(
                    CopySpec(
                        id=copy["id"],
                        schema="",
                        canonical_at="#",
                        copy_at="#",
                        role=copy.get("role", entry["role"]),
                        paths=(copy["path"],),
                        optional=copy.get("optional", False),
                        where=f"repository[{index}].copy[{copy_index}]",
                        kind="generated",
                        target=copy["target"],
                    )
                )
                continue
            if copy["schema"] not in SCHEMA_FILES:
                known = ", ".join(SCHEMA_FILES)
                raise UserError(
                    f"{copy_where}.schema: unknown schema {copy['schema']!r} (known: {known})"
                )
            canonical_at = copy.get("canonical_at", "#")
            kind = copy.get("kind", "schema")
            role = copy.get("role", entry["role"])
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
                    role=role,
                    paths=tuple(copy["paths"]) if "paths" in copy else module_paths(copy),
                    optional=copy.get("optional", False),
                    where=f"repository[{index}].copy[{copy_index}]",
                    kind=kind,
                    type=copy.get("type"),
                    model=copy.get("model"),
                    python_path=copy.get("python_path", "."),
                    mode=copy.get("mode") or _default_mode(kind, role),
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
    return MirrorsConfig(
        path=path,
        base_dir=base_dir,
        repositories=tuple(repositories),
        max_file_bytes=data.get("max_file_bytes", DEFAULT_MAX_BYTES),
        ref_bounds=RefBounds(
            data.get("max_ref_file_bytes", DEFAULT_MAX_REF_FILE_BYTES),
            data.get("max_ref_bytes", DEFAULT_MAX_REF_BYTES),
        ),
    )


def _default_mode(kind: str, role: str) -> str | None:
    """A producer's model is judged by what it writes, anyone else's by what it accepts."""
    if kind != "python":
        return None
    return "serialization" if role == "producer" else "validation"


def module_paths(copy: Mapping[str, Any]) -> tuple[str, ...]:
    """The files a python copy's module may be in, relative to the checkout: ``a/b.py`` or
    ``a/b/__init__.py`` under its ``python_path``."""
    module = copy["model"].partition(":")[0].replace(".", "/")
    base = copy.get("python_path", ".").strip("/")
    prefix = "" if base in ("", ".") else base + "/"
    return (f"{prefix}{module}.py", f"{prefix}{module}/__init__.py")


_KIND_KEYS = {
    "schema": ("paths", frozenset({"type", "model", "python_path", "mode", "target", "path"})),
    "typescript": (
        "type",
        frozenset({"model", "python_path", "mode", "copy_at", "target", "path"}),
    ),
    "python": ("model", frozenset({"paths", "type", "copy_at", "target", "path"})),
    "generated": (
        "target",
        frozenset(
            {"schema", "canonical_at", "copy_at", "paths", "type", "model", "python_path", "mode"}
        ),
    ),
}


def _check_kinds(data: Any, path: Path) -> None:
    """Keys that do not belong to a copy's kind, in our words (the schema says it too, in
    the validator's)."""
    repositories = data.get("repository") if isinstance(data, dict) else None
    for index, entry in enumerate(repositories if isinstance(repositories, list) else ()):
        copies = entry.get("copy") if isinstance(entry, dict) else None
        for copy_index, copy in enumerate(copies if isinstance(copies, list) else ()):
            if not isinstance(copy, dict) or copy.get("kind", "schema") not in _KIND_KEYS:
                continue
            kind = copy.get("kind", "schema")
            needed, foreign = _KIND_KEYS[kind]
            key = f"{path}: repository[{index}].copy[{copy_index}]"
            wrong = sorted(foreign & copy.keys())
            if wrong:
                raise UserError(f"{key}.{wrong[0]}: not a key of a copy of kind {kind!r}")
            if needed not in copy:
                raise UserError(f"{key}: a copy of kind {kind!r} needs {needed!r}")


def _os_limit(name: str, default: int) -> int:
    try:
        return os.pathconf("/", name)
    except (OSError, ValueError, AttributeError):  # not on this OS
        return default


#: Bytes in a path and in one of its components, as the OS counts them (Linux: 4096 and 255).
PATH_MAX = _os_limit("PC_PATH_MAX", 4096)
NAME_MAX = _os_limit("PC_NAME_MAX", 255)
_DRIVE = re.compile(r"^[A-Za-z]:")


def path_problem(value: str) -> str | None:
    """Why ``value`` cannot be a copy's path inside a checkout, or None. Checked before the
    schema so the message is ours (and never echoes a 5,000-character value)."""
    if "\0" in value:
        return "contains a NUL byte"
    size = len(value.encode("utf-8", "surrogatepass"))
    if size >= PATH_MAX:
        return f"is {size} bytes long, over the OS limit of {PATH_MAX - 1} (PATH_MAX)"
    if value.startswith(("/", "\\")) or _DRIVE.match(value):
        return f"{value!r} is absolute: paths are relative to the checkout"
    parts = value.replace("\\", "/").split("/")
    if ".." in parts:
        return f"{value!r} contains '..': paths must stay inside the checkout"
    longest = max(len(part.encode("utf-8", "surrogatepass")) for part in parts)
    if longest > NAME_MAX:
        return f"a component is {longest} bytes long, over the OS limit of {NAME_MAX} (NAME_MAX)"
    return None


def _check_mirrors(data: Any, path: Path) -> None:
    _check_paths(data, path)
    _check_kinds(data, path)


def _check_paths(data: Any, path: Path) -> None:
    repositories = data.get("repository") if isinstance(data, dict) else None
    for index, entry in enumerate(repositories if isinstance(repositories, list) else ()):
        copies = entry.get("copy") if isinstance(entry, dict) else None
        for copy_index, copy in enumerate(copies if isinstance(copies, list) else ()):
            paths = copy.get("paths") if isinstance(copy, dict) else None
            for path_index, value in enumerate(paths if isinstance(paths, list) else ()):
                problem = path_problem(value) if isinstance(value, str) else None
                if problem:
                    key = f"repository[{index}].copy[{copy_index}].paths[{path_index}]"
                    raise UserError(f"{path}: {key}: {problem}")
            for name in ("python_path", "path"):
                value = copy.get(name) if isinstance(copy, dict) else None
                problem = path_problem(value) if isinstance(value, str) else None
                if problem:
                    key = f"repository[{index}].copy[{copy_index}].{name}"
                    raise UserError(f"{path}: {key}: {problem}")


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
    kind: str
    declared: str | None


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
        "kind": spec.kind,
        "declared": spec.type or spec.model or spec.target,
    }
