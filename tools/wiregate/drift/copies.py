"""Finding and reading a copy of the contract inside a checkout: in its work tree, or at a git
ref through GitPython without touching the work tree."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from wiregate.drift.config import DEFAULT_REF_BOUNDS, CopySpec, RefBounds
from wiregate.errors import UserError
from wiregate.files import DEFAULT_MAX_BYTES, NotReadable, read_regular, resolved_inside

if TYPE_CHECKING:
    import git

__all__ = ["CodeRoot", "CopySource", "CopyUnreadable", "FoundCopy", "GitTree", "WorkTree"]


class CopyUnreadable(UserError):
    """A copy's file that is there but cannot be read (a FIFO, too large): ``path`` is the
    candidate, relative to the checkout, so reports can point at it."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class FoundCopy:
    path: str  # the candidate that matched, relative to the checkout
    data: bytes
    label: str  # how error messages name it


class CopySource(Protocol):
    """Where the files of one checkout are read from."""

    def find(self, spec: CopySpec) -> FoundCopy | None:
        """The first of the copy's candidate paths that exists, read."""

    def missing_message(self, copy_id: str, candidates: tuple[str, ...]) -> str:
        """One line saying none of the candidates exists."""

    def close(self) -> None:
        """Release what reading needed (git's helper processes)."""

    def code_root(self) -> CodeRoot:
        """Where a code copy's files are read from by the language's tools."""


class WorkTree:
    """Files as they are on disk (no git needed: an installed site-packages works too)."""

    def __init__(
        self, checkout: Path, max_bytes: int = DEFAULT_MAX_BYTES, config: str = "mirrors.toml"
    ) -> None:
        self.checkout = checkout
        self.max_bytes = max_bytes
        self.config = config  # names the file in errors about a configured path

    def find(self, spec: CopySpec) -> FoundCopy | None:
        root = os.path.realpath(self.checkout)
        for index, candidate in enumerate(spec.paths):
            path = self.checkout / candidate
            if not os.path.lexists(path):
                continue
            # A configured path must stay inside the checkout once its symlinks are resolved:
            # a link to /etc/passwd or /dev/zero is a configuration problem, not a copy.
            real, inside = resolved_inside(root, path)
            if not inside:
                raise UserError(
                    f"{self.config}: {spec.path_key(index)}: {candidate!r} resolves to {real}, "
                    f"outside the checkout {self.checkout}"
                )
            if not os.path.exists(real):
                continue  # a dangling link: no copy there
            try:
                # A folder, a FIFO or a device there is a one-line error, not "not found".
                # Resolved already: O_NOFOLLOW refuses a link swapped in meanwhile.
                data = read_regular(real, self.max_bytes, follow=False)
            except NotReadable as exc:
                raise CopyUnreadable(f"{path}: {exc}", candidate) from None
            return FoundCopy(candidate, data, str(path))
        return None

    def missing_message(self, copy_id: str, candidates: tuple[str, ...]) -> str:
        said = f"{self.checkout}: copy {copy_id!r} not found (tried: {', '.join(candidates)})"
        # `--repo NAME=.` from a subfolder: the copy is there, from the work tree's root.
        top = _enclosing_work_tree(self.checkout)
        if top is not None and any(os.path.lexists(top / path) for path in candidates):
            said += (
                f"; {self.checkout} is inside the git work tree {top}, which has it: give its root"
            )
        return said

    def close(self) -> None:
        pass

    def code_root(self) -> CodeRoot:
        return CodeRoot(self.checkout)


class CodeRoot:
    """A folder holding (part of) a checkout for a code copy's extraction: the work tree
    itself, or files written from git (``materialise``) into a temporary folder."""

    def __init__(self, path: Path, tree: GitTree | None = None) -> None:
        self.path = path
        self.tree = tree
        # Each materialisation once, and its error again: a later extraction must not run on
        # the files written before one was refused, as if the rest had never been committed.
        self._done: dict[tuple[object, ...], UserError | None] = {}

    def named(self, error: UserError) -> UserError:
        """``error`` naming ``CHECKOUT@REF`` where it names the temporary folder, which is gone
        by the time it is read."""
        if self.tree is None or str(self.path) not in str(error):
            return error
        shown = str(error).replace(str(self.path), f"{self.tree.checkout}@{self.tree.ref}")
        return type(error)(shown)

    def materialise_extends(self, is_config: Callable[[str], bool]) -> None:
        """At a ref: what the config files written so far extend by a relative path
        (``"extends": "./config/base.json"``, or a list of them), and what those extend.
        Once: the configs are all written by then, and a walk of the folder finds no other."""
        self._once(("extends", is_config), lambda tree: self._write_extended(tree, is_config))

    def _write_extended(self, tree: GitTree, is_config: Callable[[str], bool]) -> None:
        todo = [path for path in self.path.rglob("*.json") if is_config(path.name)]
        seen: set[str] = set()
        while todo:
            config = todo.pop()
            try:  # bounded, as every file wiregate reads: a config is a few lines
                text = read_regular(config, tree.max_bytes).decode("utf-8", "replace")
            except NotReadable:
                continue  # the extraction says what is wrong with it
            for target in _extended(text):
                if not target.startswith("."):
                    continue  # a package's config: under node_modules, never committed
                for candidate in (target, f"{target}.json"):
                    full = os.path.normpath(config.parent / candidate)
                    relative = os.path.relpath(full, self.path)
                    if relative.startswith("..") or relative in seen:
                        continue
                    seen.add(relative)
                    written = tree.write_file(self.path, relative.replace(os.sep, "/"))
                    if written is not None:
                        todo.append(written)
                        break

    def materialise(self, folder: str, recursive: bool, keep: Callable[[str], bool]) -> None:
        """Write the files of ``folder`` (relative to the checkout; all levels below it with
        ``recursive``) whose name ``keep`` accepts, as committed: nothing for a work tree."""
        # The key holds ``keep``: TypeScript's and Python's files of one folder differ.
        self._once(
            (folder, recursive, keep),
            lambda tree: tree.write_files(self.path, folder, recursive, keep),
        )

    def _once(self, key: tuple[object, ...], write: Callable[[GitTree], None]) -> None:
        """``write(tree)`` at a ref, the first time ``key`` is asked; its error again
        each later time."""
        if self.tree is None or key in self._done:
            failed = self._done.get(key)
            if failed is not None:
                raise failed
            return
        self._done[key] = None
        try:
            write(self.tree)
        except UserError as exc:
            self._done[key] = exc
            raise


def _enclosing_work_tree(folder: Path) -> Path | None:
    """The git work tree ``folder`` is a subfolder of (not its root), or None."""
    try:
        folder = folder.resolve()
    except OSError:
        return None
    if (folder / ".git").exists():
        return None
    return next((p for p in folder.parents if (p / ".git").exists()), None)


_SYMLINK_MODE = "120000"
_EXTENDS = re.compile(r'"extends"\s*:\s*("(?:[^"\\]|\\.)*"|\[[^\]]*\])')
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _extended(config: str) -> list[str]:
    """The paths a tsconfig's ``extends`` names (a string or a list; comments, which tsconfig
    allows, are no obstacle to a search)."""
    found = _EXTENDS.search(config)
    if found is None:
        return []
    names = []
    for name in _STRING.findall(found.group(1)):
        try:
            names.append(json.loads(f'"{name}"'))
        except json.JSONDecodeError:  # no path (``"./a\\q"``): the compiler says what is wrong
            continue
    return names


class GitTree:
    """Files as committed at a ref; one-line UserError for not-a-repository or unknown ref."""

    def __init__(
        self,
        checkout: Path,
        ref: str,
        max_bytes: int = DEFAULT_MAX_BYTES,
        repo: git.Repo | None = None,
        bounds: RefBounds = DEFAULT_REF_BOUNDS,
    ) -> None:
        # GitPython is imported only when a ref is read: it would double the start-up time of
        # every plain `wiregate drift` run in a pre-commit hook.
        from wiregate.gitsource import open_repo, resolve_commit

        self.checkout = checkout
        self.ref = ref
        self.max_bytes = max_bytes
        self.bounds = bounds
        self._written: dict[str, int] = {}  # bytes of each file written to the code root
        self._total = 0  # their sum
        self._owned = repo is None  # a repository given is closed by whoever opened it
        self.repo: git.Repo = open_repo(checkout) if repo is None else repo
        self._code: CodeRoot | None = None
        try:
            self.commit = resolve_commit(self.repo, ref)
        except UserError:
            self.close()
            raise

    def find(self, spec: CopySpec) -> FoundCopy | None:
        from wiregate.gitsource import BlobTooLarge, file_at, path_in_repo

        for candidate in spec.paths:
            path = path_in_repo(self.repo, self.checkout, candidate)
            try:
                data = file_at(self.repo, self.commit, path, self.max_bytes)
            except BlobTooLarge as exc:
                raise CopyUnreadable(str(exc), candidate) from None
            if data is not None:
                return FoundCopy(candidate, data, f"{self.checkout}@{self.ref}:{candidate}")
        return None

    def missing_message(self, copy_id: str, candidates: tuple[str, ...]) -> str:
        return (
            f"{self.checkout}@{self.ref}: copy {copy_id!r} not found at that ref "
            f"(tried: {', '.join(candidates)})"
        )

    def close(self) -> None:
        if self._code is not None:
            import shutil

            shutil.rmtree(self._code.path, ignore_errors=True)
            self._code = None
            self._written, self._total = {}, 0
        if self._owned:
            self.repo.close()

    def code_root(self) -> CodeRoot:
        if self._code is None:
            import tempfile

            try:
                folder = tempfile.mkdtemp(prefix="wiregate-ref-")
            except OSError as exc:  # TMPDIR missing or read-only
                raise UserError(f"cannot make a temporary folder: {exc}") from None
            self._code = CodeRoot(Path(folder), self)
        return self._code

    def write_files(
        self, target: Path, folder: str, recursive: bool, keep: Callable[[str], bool]
    ) -> None:
        """The committed files of ``folder`` (relative to the checkout) that ``keep`` accepts,
        written under ``target`` at the same relative paths; ``node_modules`` is left out.
        Each blob is copied by its id from the listing, in blocks (one object read; a file the
        work tree holds is there at the ref too, a generated module of megabytes included,
        within ``bounds``); a symbolic link is followed inside the commit (``write_file``)."""
        from wiregate.gitsource import path_in_repo

        base = path_in_repo(self.repo, self.checkout, folder or ".").rstrip("/")
        base = "" if base == "." else base
        args = ["-r"] if recursive else []
        # -l: each blob's size, so one over the bounds is refused before a byte is written.
        listing = self.repo.git.ls_tree(
            *args, "-l", "-z", self.commit, "--", f"{base}/" if base else "."
        )
        made: set[Path] = set()
        for line in filter(None, listing.split("\0")):
            facts, _, name = line.partition("\t")
            mode, kind, sha, size = facts.split()
            inside = name[len(base) + 1 :] if base else name
            parts = inside.split("/")
            if kind != "blob" or "node_modules" in parts or not keep(parts[-1]):
                continue
            relative = f"{folder}/{inside}" if folder not in ("", ".") else inside
            if any(part in ("", ".", "..") for part in parts):
                # git never commits such a name, but a crafted tree holds any: ``../x.py``
                # would be written outside the temporary folder.
                raise UserError(
                    f"{self.checkout}@{self.ref}:{relative}: a committed path with a "
                    "'.', '..' or empty component: refused"
                )
            path = target / relative
            if mode == _SYMLINK_MODE:
                self.write_file(target, relative)
                continue
            self._claim(relative, int(size))
            try:
                if path.parent not in made:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    made.add(path.parent)
                with path.open("wb") as out:  # copied in blocks: no blob is held in memory
                    shutil.copyfileobj(self.repo.odb.stream(bytes.fromhex(sha)), out, 1 << 20)
            except OSError as exc:  # a full disk, a name the file system refuses
                raise self._unwritable(relative, exc) from None

    def write_file(self, target: Path, relative: str) -> Path | None:
        """The committed file at ``relative`` (to the checkout; a symbolic link followed
        inside the commit) written under ``target`` at the same path, or None when there is
        none, or it cannot be had (a link out of the repository, a link loop): an extraction
        then sees no file there, as for a file never committed. A file over ``bounds`` is a
        UserError: left out, it would make the extraction silently wrong."""
        from wiregate.gitsource import BlobTooLarge, file_at, path_in_repo

        name = path_in_repo(self.repo, self.checkout, relative)
        try:
            data = file_at(self.repo, self.commit, name, self.bounds.file_bytes)
        except BlobTooLarge as exc:
            self._claim(relative, exc.size)
            raise  # _claim refused it already
        except UserError:
            return None
        if data is None:
            return None
        self._claim(relative, len(data))
        path = target / relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as exc:
            raise self._unwritable(relative, exc) from None
        return path

    def _claim(self, relative: str, size: int) -> None:
        """Count the ``size`` bytes of ``relative`` (rewritten, it counts once) against
        ``bounds`` before they are written; over either bound is a one-line UserError."""
        where = f"{self.checkout}@{self.ref}:{relative}"
        limit = self.bounds.file_bytes
        if size > limit:
            raise UserError(
                f"{where}: {size} bytes, over the limit of {limit} for one file written "
                "from git (max_ref_file_bytes in mirrors.toml)"
            )
        total = self._total - self._written.get(relative, 0) + size
        limit = self.bounds.total_bytes
        if total > limit:
            raise UserError(
                f"{where}: {size} bytes, taking the files written from git to {total} bytes, "
                f"over the limit of {limit} (max_ref_bytes in mirrors.toml)"
            )
        self._written[relative] = size
        self._total = total

    def _unwritable(self, relative: str, exc: OSError) -> UserError:
        reason = exc.strerror or str(exc)
        return UserError(
            f"{self.checkout}@{self.ref}:{relative}: cannot be written from git: {reason}"
        )
