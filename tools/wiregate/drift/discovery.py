"""``wiregate drift --discover``: files in a checkout that look like a copy of the contract.

A file is a candidate when it has one of our schemas' ``$id`` or title, one of their file
names, a title naming one of our ``$defs`` entries (a single-record copy), or ``$defs`` /
``definitions`` entries with the same names as ours. ``node_modules`` and ``site-packages``
are searched too: an installed package is a copy like any other.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contracts import SCHEMA_FILES, Contract
from wiregate.drift.config import load_mirrors
from wiregate.errors import UserError
from wiregate.pointer import fragment
from wiregate.sources import parse_document

__all__ = ["Candidate", "RepositoryCandidates", "discover", "discover_repositories"]

#: Folders that never hold a copy worth reporting.
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".ruff_cache"})
#: Bytes a JSON Schema almost always contains; cheaper than parsing every package.json.
_SCHEMA_MARKERS = (b'"$schema"', b'"$defs"', b'"definitions"', b'"$id"', b'"title"')
_MAX_BYTES = 5_000_000


@dataclass(frozen=True)
class Candidate:
    """A file that looks like a copy, why, and the config it suggests."""

    path: str  # relative to the checkout
    schema: str  # the canonical schema it resembles
    canonical_at: str  # "#" for a whole-file copy, "#/$defs/Name" for a single record
    reasons: tuple[str, ...]
    shared_defs: tuple[str, ...] = ()
    error: str | None = None  # set when the file matched by name but cannot be parsed


def discover(contract: Contract, checkout: Path) -> list[Candidate]:
    """Every file under ``checkout`` that looks like a copy, sorted by path."""
    if not checkout.is_dir():
        raise UserError(f"{checkout}: no such directory")
    ours = _Fingerprints(contract)
    found = [
        candidate
        for path in _json_files(checkout)
        if (candidate := ours.match(checkout, path)) is not None
    ]
    return sorted(found, key=lambda c: c.path)


def _json_files(root: Path) -> Iterator[Path]:
    # Symlinks are followed (pnpm and workspaces link packages into node_modules, and a copy is
    # configured by its linked path); a folder that links back to one of its own ancestors is
    # not entered, so a link cycle ends.
    top = Path(root)
    for directory, dirnames, filenames in os.walk(root, followlinks=True):
        here = Path(directory)
        ancestors = {os.path.realpath(p) for p in (here, *here.parents) if p.is_relative_to(top)}
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIPPED_DIRS and os.path.realpath(here / d) not in ancestors
        )
        for name in filenames:
            if name.endswith(".json"):
                yield Path(directory) / name


class _Fingerprints:
    def __init__(self, contract: Contract) -> None:
        self.file_names = {file: name for name, file in SCHEMA_FILES.items()}
        self.ids: dict[str, str] = {}
        self.titles: dict[str, str] = {}
        for name, schema in contract.schemas.items():
            if isinstance(schema.get("$id"), str):
                self.ids[schema["$id"]] = name
            if isinstance(schema.get("title"), str):
                self.titles[schema["title"]] = name
        self.defs = contract.definitions  # def name -> schema name

    def match(self, checkout: Path, path: Path) -> Candidate | None:
        relative = path.relative_to(checkout).as_posix()
        by_name = self.file_names.get(path.name)
        try:
            if path.stat().st_size > _MAX_BYTES:
                return None
            data = path.read_bytes()
        except OSError:
            return None
        if by_name is None and not any(marker in data for marker in _SCHEMA_MARKERS):
            return None
        try:
            document = parse_document(data, relative)
        except UserError as exc:
            if by_name is None:
                return None
            return Candidate(relative, by_name, "#", ("file name",), error=str(exc))
        return self._judge(relative, by_name, document)

    def _judge(
        self, relative: str, by_name: str | None, document: dict[str, Any]
    ) -> Candidate | None:
        reasons: list[str] = []
        schema: str | None = None
        canonical_at = "#"
        # Any JSON file can reach here: "$id" or "title" may be a list or an object.
        schema_id = document.get("$id") if isinstance(document.get("$id"), str) else None
        title = document.get("title") if isinstance(document.get("title"), str) else None
        if schema_id in self.ids:
            schema = self.ids[schema_id]
            reasons.append("$id")
        if title in self.titles:
            schema = schema or self.titles[title]
            reasons.append("title")
        elif title is not None and title in self.defs:
            schema = schema or self.defs[title]
            canonical_at = fragment("$defs", title)
            reasons.append(f"title names $defs/{title}")
        if by_name is not None:
            schema = schema or by_name
            reasons.append("file name")
        defs = document.get("$defs", document.get("definitions"))
        shared = tuple(sorted(set(defs) & set(self.defs))) if isinstance(defs, dict) else ()
        if shared:
            schema = schema or self.defs[shared[0]]
            reasons.append("$defs " + ", ".join(shared))
        if schema is None:
            return None
        return Candidate(relative, schema, canonical_at, tuple(reasons), shared)


@dataclass(frozen=True)
class RepositoryCandidates:
    repository: str
    checkout: str
    candidates: tuple[Candidate, ...]


def discover_repositories(
    contract: Contract,
    overrides: Mapping[str, Path | None],
    environ: Mapping[str, str] | None = None,
) -> tuple[RepositoryCandidates, ...]:
    """Candidates in each ``--repo NAME=PATH`` checkout (any name, configured or not), or
    else in every configured repository whose checkout is present."""
    places: list[tuple[str, Path]] = []
    if overrides:
        config = None
        for name, path in overrides.items():
            if path is None:
                config = config or load_mirrors(contract)
                path, _ = config.checkout(config.repository(name), {}, environ)
            places.append((name, path))
    else:
        config = load_mirrors(contract)
        for repository in config.repositories:
            checkout, _ = config.checkout(repository, {}, environ)
            if checkout.is_dir():
                places.append((repository.name, checkout))
        if not places:
            raise UserError("no checkout to search: pass --repo NAME=PATH")
    return tuple(
        RepositoryCandidates(name, str(checkout), tuple(discover(contract, checkout)))
        for name, checkout in places
    )
