"""``wiregate drift --discover``: files in a checkout that look like a copy of the contract.

A file is a candidate when it has one of our schemas' ``$id`` or title, one of their file
names, a title naming one of our ``$defs`` entries (a single-record copy), or ``$defs`` /
``definitions`` entries with the same names as ours. ``node_modules`` and ``site-packages``
are searched too: an installed package is a copy like any other.

Code is searched too (outside ``node_modules`` and ``site-packages``: the extractor reads a
checkout's own types): exported TypeScript interfaces and type aliases and Python model
classes (:mod:`wiregate.extract.declarations`, never running the governed code) are
candidates for a canonical record type when they have its name or at least half of its
top-level property names.

Each candidate is scored by how much of the contract it covers: the share of the canonical
record types (``$defs`` entries) and their properties that it has too. Only a candidate at or
above :data:`PROPOSE_THRESHOLD` is proposed as a copy (two shared ``$defs`` names do not make
a copy); the others are listed with their score and said not to be proposed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contracts import SCHEMA_FILES, Contract
from wiregate.drift.config import CopySpec, load_mirrors
from wiregate.drift.expected import expected_copy
from wiregate.errors import UserError
from wiregate.files import (
    DEFAULT_MAX_BYTES,
    NotReadable,
    Skipped,
    not_a_directory,
    read_regular,
    walk_files,
)
from wiregate.pointer import fragment
from wiregate.sources import parse_document

if TYPE_CHECKING:
    import git

__all__ = [
    "PROPOSE_THRESHOLD",
    "Candidate",
    "Proposal",
    "RepositoryCandidates",
    "discover",
    "discover_repositories",
    "scan",
]

#: Folders that never hold a copy worth reporting.
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".ruff_cache"})
#: Bytes a JSON Schema almost always contains; cheaper than parsing every package.json.
_SCHEMA_MARKERS = (b'"$schema"', b'"$defs"', b'"definitions"', b'"$id"', b'"title"')
#: The share of the contract's record types and properties a file must cover to be proposed.
PROPOSE_THRESHOLD = 0.5
_GIT_SYMLINK = 0o120000


@dataclass(frozen=True)
class Candidate:
    """A file that looks like a copy, why, how much of the contract it covers, and whether it
    is proposed as a copy."""

    path: str  # relative to the checkout
    schema: str  # the canonical schema it resembles
    canonical_at: str  # "#" for a whole-file copy, "#/$defs/Name" for a single record
    reasons: tuple[str, ...]
    shared_defs: tuple[str, ...] = ()
    error: str | None = None  # set when the file matched by name but cannot be parsed
    score: float = 0.0  # share of the canonical record types and properties present, 0..1
    kind: str = "schema"  # or "typescript" / "python": a type declared in code
    declared: str | None = None  # the type name, or MODULE:CLASS
    line: int | None = None  # where the type is declared in ``path``
    python_path: str = "."

    @property
    def proposed(self) -> bool:
        return self.error is None and self.score >= PROPOSE_THRESHOLD


@dataclass(frozen=True)
class Proposal:
    """A ready-to-paste ``[[repository.copy]]`` entry: the proposed candidates that stand for
    the same part of the contract, best first."""

    id: str
    schema: str
    canonical_at: str
    paths: tuple[str, ...]
    kind: str = "schema"
    declared: str | None = None
    python_path: str = "."

    def toml(self) -> str:
        lines = ["[[repository.copy]]", f'id = "{self.id}"']
        if self.kind != "schema":
            lines.append(f'kind = "{self.kind}"')
        lines.append(f'schema = "{self.schema}"')
        lines.append(f'canonical_at = "{self.canonical_at}"')
        if self.kind == "python":
            # The module's file is derived from the model: no paths.
            lines.append(f"model = {_toml_string(self.declared or '')}")
            if self.python_path != ".":
                lines.append(f"python_path = {_toml_string(self.python_path)}")
            return "\n".join(lines) + "\n"
        if self.kind == "typescript":
            lines.append(f"type = {_toml_string(self.declared or '')}")
        lines.append("paths = [" + ", ".join(_toml_string(p) for p in self.paths) + "]")
        return "\n".join(lines) + "\n"


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def proposals(candidates: tuple[Candidate, ...] | list[Candidate]) -> tuple[Proposal, ...]:
    """The proposed candidates grouped by the part of the contract they copy; a type in code
    is a copy of its own (``<type>-type``, ``<class>-model``)."""
    groups: dict[tuple[str, str], list[str]] = {}
    code: list[Proposal] = []
    ids: set[str] = set()
    for candidate in candidates:
        if not candidate.proposed:
            continue
        if candidate.kind == "schema":
            groups.setdefault((candidate.schema, candidate.canonical_at), []).append(candidate.path)
            continue
        name = (candidate.declared or "").rpartition(":")[2]
        base = _kebab(name) + ("-type" if candidate.kind == "typescript" else "-model")
        copy_id, number = base, 1
        while copy_id in ids:  # the same name declared in two files
            number += 1
            copy_id = f"{base}-{number}"
        ids.add(copy_id)
        code.append(
            Proposal(
                copy_id,
                candidate.schema,
                candidate.canonical_at,
                (candidate.path,),
                candidate.kind,
                candidate.declared,
                candidate.python_path,
            )
        )
    schemas = tuple(
        Proposal(_copy_id(schema, at), schema, at, tuple(paths))
        for (schema, at), paths in groups.items()
    )
    return schemas + tuple(code)


def _kebab(name: str) -> str:
    kebab = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()
    return re.sub(r"[^a-z0-9._-]+", "-", kebab).strip("-._") or "copy"


def _copy_id(schema: str, canonical_at: str) -> str:
    if canonical_at == "#":
        return schema
    kebab = _kebab(canonical_at.rsplit("/", 1)[-1])
    return schema if kebab == "copy" else kebab


def discover(
    contract: Contract,
    checkout: Path,
    *,
    ref: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> list[Candidate]:
    """Every file under ``checkout`` that looks like a copy, best coverage first."""
    return scan(contract, checkout, ref=ref, max_bytes=max_bytes)[0]


def scan(
    contract: Contract,
    checkout: Path,
    *,
    ref: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> tuple[list[Candidate], list[Skipped]]:
    """The candidates under ``checkout`` (in its work tree, or committed at ``ref``), best
    coverage first, and what was skipped (a FIFO, a device, a file over ``max_bytes``, a
    folder too deep), each with its reason."""
    problem = not_a_directory(checkout)
    if problem is not None:
        raise UserError(f"{checkout}: {problem}")
    ours = _Fingerprints(contract)
    found: list[Candidate] = []
    skipped: list[Skipped] = []
    files = (
        _work_tree_files(checkout, max_bytes)
        if ref is None
        else _git_files(checkout, ref, max_bytes)
    )
    for item in files:
        if isinstance(item, Skipped):
            skipped.append(item)
            continue
        relative, data = item
        candidate = ours.match(relative, data)
        if candidate is not None:
            found.append(candidate)
    code, code_skipped = _code_candidates(ours, checkout, ref, max_bytes)
    found.extend(code)
    # Both walks meet a folder too deep or unreadable outside node_modules: one line.
    seen = {(item.path, item.reason) for item in skipped}
    skipped.extend(item for item in code_skipped if (item.path, item.reason) not in seen)
    found.sort(key=lambda c: (-c.score, c.path, c.line or 0))
    return found, skipped


def _work_tree_files(
    root: Path,
    max_bytes: int,
    suffixes: str | tuple[str, ...] = ".json",
    skipped_dirs: frozenset[str] = SKIPPED_DIRS,
) -> Iterator[tuple[str, bytes] | Skipped]:
    """The work tree's files with those suffixes, read (a bounded number of bytes), or why
    one was skipped."""
    for item in walk_files(root, suffixes, skipped_dirs):
        if isinstance(item, Skipped):
            yield item
            continue
        relative, path = item
        try:
            yield relative, read_regular(path, max_bytes)
        except NotReadable as exc:
            yield Skipped(relative, str(exc))


def _git_files(
    checkout: Path,
    ref: str,
    max_bytes: int,
    suffixes: tuple[str, ...] = (".json",),
    skip_dirs: frozenset[str] = SKIPPED_DIRS,
) -> Iterator[tuple[str, bytes] | Skipped]:
    """The files named ``*<suffix>`` committed at ``ref`` under ``checkout``; a symlink is not
    followed (git stores its target, not a file)."""
    import git

    from wiregate.gitsource import open_repo, path_in_repo, resolve_commit

    with open_repo(checkout) as repo:  # closes git's helper processes
        commit = repo.commit(resolve_commit(repo, ref))
        prefix = path_in_repo(repo, checkout, "").rstrip("/")
        prefix = "" if prefix == "." else prefix
        try:
            tree = commit.tree / prefix if prefix else commit.tree
        except KeyError:
            return
        for item in _traverse(tree, f"{checkout}@{ref}"):
            if not isinstance(item, git.Blob) or not item.name.endswith(suffixes):
                continue
            full = str(item.path)
            relative = full[len(prefix) + 1 :] if prefix else full
            if skip_dirs.intersection(relative.split("/")[:-1]):
                continue
            if item.mode == _GIT_SYMLINK:
                yield Skipped(relative, "a symbolic link, not followed at a ref")
            elif item.size > max_bytes:
                yield Skipped(relative, f"{item.size} bytes, over the limit of {max_bytes}")
            else:
                data: bytes = item.data_stream.read()
                yield relative, data


def _traverse(tree: git.Tree, where: str) -> Iterator[git.Blob | git.Tree | git.Submodule]:
    """Every entry below ``tree``; a crafted tree's ``..`` (git never commits one, a hand-made
    object may hold it), which GitPython refuses mid-walk, is a one-line error naming it."""
    try:
        yield from tree.traverse()  # type: ignore[misc]
    except ValueError:  # its text names the entry by a made-up path ('tree/..')
        raise UserError(
            f"{where}: a committed tree holds an entry git itself refuses (such as '..'): refused"
        ) from None


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
        self.contract = contract
        self.record_types = contract.record_types  # record type -> schema name
        self._targets: dict[tuple[str, str], _Target] = {}

    def match(self, relative: str, data: bytes) -> Candidate | None:
        by_name = self.file_names.get(relative.rsplit("/", 1)[-1])
        if by_name is None and not any(marker in data for marker in _SCHEMA_MARKERS):
            return None
        try:
            document = parse_document(data, relative)
        except UserError as exc:
            if by_name is None:
                return None
            return Candidate(relative, by_name, "#", ("file name",), error=str(exc))
        candidate = self._judge(relative, by_name, document)
        if candidate is None:
            return None
        wanted = self._target(candidate.schema, candidate.canonical_at)
        present = _features(document, wanted.records, candidate.canonical_at) & wanted.features
        score = len(present) / len(wanted.features) if wanted.features else 0.0
        return replace(candidate, score=score)

    def _target(self, schema: str, canonical_at: str) -> _Target:
        """The record types and properties of the part of the contract a copy stands for."""
        key = (schema, canonical_at)
        if key not in self._targets:
            if canonical_at == "#":
                records = tuple(r for r, owner in self.record_types.items() if owner == schema)
                document: Any = self.contract.schemas[schema]
            else:
                records = (canonical_at.rsplit("/", 1)[-1],)
                spec = CopySpec("-", schema, canonical_at, "#", "mirror", ("-",))
                document = expected_copy(self.contract, spec)
            features = _features(document, records, canonical_at)
            self._targets[key] = _Target(records, features)
        return self._targets[key]

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


# --- types declared in code ----------------------------------------------------------------

#: Where a checkout's own code is not: installed packages are extracted by nobody.
CODE_SKIPPED_DIRS = SKIPPED_DIRS | {"node_modules", "site-packages"}
_TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
_CODE_SUFFIXES = (*_TS_SUFFIXES, ".py")
#: Share of a record type's top-level property names a type must have to be a candidate.
_FIELD_SHARE = 0.5


def _code_files(
    checkout: Path, ref: str | None, max_bytes: int
) -> Iterator[tuple[str, bytes] | Skipped]:
    if ref is not None:
        yield from _git_files(checkout, ref, max_bytes, _CODE_SUFFIXES, CODE_SKIPPED_DIRS)
        return
    yield from _work_tree_files(checkout, max_bytes, _CODE_SUFFIXES, CODE_SKIPPED_DIRS)


def _code_candidates(
    ours: _Fingerprints, checkout: Path, ref: str | None, max_bytes: int
) -> tuple[list[Candidate], list[Skipped]]:
    """The exported TypeScript types and the Python model classes under ``checkout`` that
    have a record type's name or half its top-level property names, scored like a file."""
    from wiregate.extract.declarations import (
        DeclarationError,
        python_declarations,
        typescript_declarations,
    )

    skipped: list[Skipped] = []
    typescript: dict[str, bytes] = {}
    python: dict[str, bytes] = {}
    python_files: list[str] = []
    for item in _code_files(checkout, ref, max_bytes):
        if isinstance(item, Skipped):
            skipped.append(item)
            continue
        relative, data = item
        if relative.endswith(".py"):
            python_files.append(relative)  # __init__.py says where a package starts
            if b"class" in data:
                python[relative] = data
        elif b"interface" in data or b"type" in data:
            typescript[relative] = data
    declarations = []
    for relative, data in python.items():
        declarations.extend(python_declarations(relative, data, python_files))
    try:
        declarations.extend(typescript_declarations(typescript))
    except DeclarationError as exc:
        skipped.append(Skipped(f"{len(typescript)} TypeScript files", f"not searched: {exc}"))
    return _score_declarations(ours, declarations), skipped


def _score_declarations(ours: _Fingerprints, declarations: list[Any]) -> list[Candidate]:
    # A type's references are resolved by name: in its own file first, then anywhere.
    shared: dict[tuple[str, str], dict[str, Any]] = {}
    own: dict[tuple[str, str], dict[str, Any]] = {}
    for declaration in declarations:
        shared.setdefault((declaration.kind, ""), {}).setdefault(
            declaration.name, declaration.shape
        )
        own.setdefault((declaration.kind, declaration.path), {})[declaration.name] = (
            declaration.shape
        )
    targets = {
        record: ours._target(schema, fragment("$defs", record))
        for record, schema in ours.record_types.items()
    }
    found = []
    for declaration in declarations:
        if not declaration.exported:
            continue
        defs = {
            **shared[declaration.kind, ""],
            **own[declaration.kind, declaration.path],
        }
        document = {**declaration.shape, "$defs": defs}
        features = _features(document, ("",), "#/$defs/-")
        top = {feature[1] for feature in features if len(feature) == 2}
        best: tuple[float, bool, str, tuple[str, ...]] | None = None
        for record, target in targets.items():
            wanted = {feature[1] for feature in target.features if len(feature) == 2}
            reasons: list[str] = []
            if declaration.name == record:
                reasons.append("type name")
            if wanted and len(top & wanted) >= _FIELD_SHARE * len(wanted):
                reasons.append(f"field names {len(top & wanted)}/{len(wanted)}")
            if not reasons:
                continue
            present = {(record, *feature[1:]) for feature in features} & target.features
            score = len(present) / len(target.features) if target.features else 0.0
            key = (score, declaration.name == record, record, tuple(reasons))
            if best is None or key[:2] > best[:2]:
                best = key
        if best is None:
            continue
        score, _, record, matched = best
        found.append(
            Candidate(
                declaration.path,
                ours.record_types[record],
                fragment("$defs", record),
                matched,
                score=score,
                kind=declaration.kind,
                declared=declaration.declared,
                line=declaration.line,
                python_path=declaration.python_path,
            )
        )
    return found


@dataclass(frozen=True)
class _Target:
    records: tuple[str, ...]  # the record types the part of the contract holds
    features: frozenset[tuple[str, ...]]


#: Levels of nested properties that coverage counts (record.key.sub.subsub).
_FEATURE_DEPTH = 3


def _features(
    document: Any, records: tuple[str, ...], canonical_at: str
) -> frozenset[tuple[str, ...]]:
    """What coverage counts: each record type present, and each property path below it
    (through local ``$ref``s, ``items`` and ``anyOf``/``oneOf``/``allOf``), up to
    :data:`_FEATURE_DEPTH` levels. Names only, whether a definition is inlined or referenced:
    the diff judges the content once the copy is configured."""
    found: set[tuple[str, ...]] = set()
    if not isinstance(document, dict):
        return frozenset()

    def resolve(node: Any, seen: frozenset[str]) -> tuple[Any, frozenset[str]]:
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen or not ref.startswith(("#/$defs/", "#/definitions/")):
                return None, seen
            seen = seen | {ref}
            section, _, name = ref[2:].partition("/")
            defs = document.get(section)
            node = defs.get(name) if isinstance(defs, dict) else None
        return node, seen

    def walk(node: Any, path: tuple[str, ...], seen: frozenset[str]) -> None:
        node, seen = resolve(node, seen)
        if not isinstance(node, dict) or len(path) > _FEATURE_DEPTH:
            return
        props = node.get("properties")
        if isinstance(props, dict):
            for name, sub in props.items():
                found.add((*path, name))
                walk(sub, (*path, name), seen)
        if isinstance(node.get("items"), dict):
            walk(node["items"], path, seen)
        for key in ("anyOf", "oneOf", "allOf"):
            members = node.get(key)
            for member in members if isinstance(members, list) else ():
                walk(member, path, seen)

    for record in records:
        if canonical_at == "#":
            node = None
            for section in ("$defs", "definitions"):
                defs = document.get(section)
                if isinstance(defs, dict) and record in defs:
                    node = defs[record]
                    break
        else:
            node = document  # a single-record copy: the record is the root
        if isinstance(node, dict):
            found.add((record,))
            walk(node, (record,), frozenset())
    return frozenset(found)


@dataclass(frozen=True)
class RepositoryCandidates:
    repository: str
    checkout: str
    candidates: tuple[Candidate, ...]  # best coverage first
    skipped: tuple[Skipped, ...] = ()
    ref: str | None = None

    @property
    def proposals(self) -> tuple[Proposal, ...]:
        return proposals(self.candidates)


def discover_repositories(
    contract: Contract,
    overrides: Mapping[str, Path | None],
    environ: Mapping[str, str] | None = None,
    *,
    ref: str | None = None,
) -> tuple[RepositoryCandidates, ...]:
    """Candidates in each ``--repo NAME=PATH`` checkout (any name, configured or not), or
    else in every configured repository whose checkout is present; read at ``ref`` when
    given, else in the work tree."""
    places: list[tuple[str, Path]] = []
    max_bytes = DEFAULT_MAX_BYTES
    if overrides:
        config = None
        for name, path in overrides.items():
            if path is None:
                config = config or load_mirrors(contract)
                max_bytes = config.max_file_bytes
                path, _ = config.checkout(config.repository(name), {}, environ)
            places.append((name, path))
    else:
        config = load_mirrors(contract)
        max_bytes = config.max_file_bytes
        for repository in config.repositories:
            checkout, _ = config.checkout(repository, {}, environ)
            if checkout.is_dir():
                places.append((repository.name, checkout))
        if not places:
            raise UserError("no checkout to search: pass --repo NAME=PATH")
    found = []
    for name, checkout in places:
        candidates, skipped = scan(contract, checkout, ref=ref, max_bytes=max_bytes)
        found.append(
            RepositoryCandidates(name, str(checkout), tuple(candidates), tuple(skipped), ref)
        )
    return tuple(found)
