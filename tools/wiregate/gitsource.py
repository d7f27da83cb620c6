"""Reading files from any git ref without touching the work tree: the one way wiregate does it.

:func:`resolve_commit` turns a ref into a commit (git itself resolves it) and :func:`file_at`
reads a file there; callers open the repository with :func:`open_repo` and close it (``with``)
so GitPython's helper processes end."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

import git

from wiregate.errors import UserError

__all__ = [
    "BlobTooLarge",
    "FileRevision",
    "UnknownRef",
    "file_at",
    "file_history",
    "open_repo",
    "path_in_repo",
    "resolve_commit",
    "shallow_boundary",
]


def open_repo(directory: str | Path) -> git.Repo:
    """The git repository at ``directory`` (its work tree root or any folder inside it)."""
    try:
        return git.Repo(directory, search_parent_directories=True)
    except git.NoSuchPathError:
        raise UserError(f"{directory}: no such directory") from None
    except git.InvalidGitRepositoryError:
        raise UserError(f"{directory}: not a git repository") from None


def shallow_boundary(repo: git.Repo) -> frozenset[str]:
    """The commits whose parents a shallow clone does not hold (empty for a complete one).

    git lists them in the ``shallow`` file of the (common) git directory; to ``git log`` they
    look like root commits, so every file in them seems added there."""
    try:
        text = (Path(repo.common_dir) / "shallow").read_text(encoding="ascii")
    except FileNotFoundError:
        return frozenset()
    except OSError as exc:
        raise UserError(f"{repo.working_dir}: cannot read the shallow-clone list: {exc}") from None
    return frozenset(text.split())


def resolve_commit(repo: git.Repo, ref: str) -> str:
    """The full sha of the commit ``ref`` names: any form git itself accepts (``HEAD~2``,
    ``HEAD@{yesterday}``, ``@{-1}``, ``main^{commit}``, ``:/message``, tags, short shas).

    git resolves it (``rev-parse``), not GitPython's own parser, which raises tracebacks on
    reflog forms; a ref git rejects is a one-line :class:`UserError`."""
    if ref.startswith(":/"):  # the message search runs to the end: no ^{commit} suffix
        found = _rev_parse(repo, ref)
        sha = _rev_parse(repo, f"{found}^{{commit}}") if found else None
    else:
        sha = _rev_parse(repo, f"{ref}^{{commit}}")
    if sha is None:
        found = None if ref.startswith(":/") else _rev_parse(repo, ref)
        if found is not None:  # HEAD^{tree}, a blob's sha: files are read at commits
            kind = repo.git.cat_file("-t", found).strip()
            raise UnknownRef(repo, f"git ref {ref!r} names a {kind}, not a commit")
        raise UnknownRef(repo, f"unknown git ref {ref!r}{_shallow_hint(repo)}")
    return sha


def _shallow_hint(repo: git.Repo) -> str:
    """Why a ref may be missing from a CI checkout: a shallow clone holds one commit and no
    other branch (``origin/main`` for ``--new-since``)."""
    if not shallow_boundary(repo):
        return ""
    return (
        " (a shallow clone: fetch the ref, `git fetch origin main`, or clone with fetch-depth: 0)"
    )


class UnknownRef(UserError):
    """A ref that names no commit; ``reason`` says so without naming the repository."""

    def __init__(self, repo: git.Repo, reason: str) -> None:
        super().__init__(f"{repo.working_dir}: {reason}")
        self.reason = reason


def _rev_parse(repo: git.Repo, spec: str) -> str | None:
    """The object ``spec`` names, or None. A range or an exclusion (``^HEAD``, ``A..B``)
    names no single object: rev-parse prints it as such (``^<sha>``), which is no object."""
    try:
        _, output, warnings = repo.git.rev_parse(
            "--verify", "--end-of-options", spec, with_extended_output=True
        )
    except git.GitCommandError:  # git's own message (to stderr) is not ours to show
        return None
    for line in warnings.splitlines():
        # A date older than the reflog: git answers with its oldest entry and a warning,
        # which would compare against a commit the ref never named at that date.
        if line.startswith("warning: log for ") and " only goes back to " in line:
            raise UnknownRef(repo, f"git ref {spec.removesuffix('^{commit}')!r}: {line[9:]}")
    found = output.strip()
    return found if _OBJECT_NAME.fullmatch(found) else None


_OBJECT_NAME = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # sha-1 or sha-256


class BlobTooLarge(UserError):
    """A committed file over the caller's size limit (known before anything is read)."""

    def __init__(self, path: str, commit: str, size: int, limit: int) -> None:
        super().__init__(f"{path} at {commit[:12]}: {size} bytes, over the limit of {limit}")
        self.size = size
        self.limit = limit


def file_at(repo: git.Repo, commit: str, path: str, max_bytes: int | None = None) -> bytes | None:
    """The bytes of ``path`` (relative to the repository root) at ``commit`` (a sha from
    :func:`resolve_commit` or the history), or None when no file is there. A blob larger than
    ``max_bytes`` is a :class:`UserError` (its size is known before anything is read)."""
    tree = repo.commit(commit).tree
    blob = _entry(tree, path, commit)
    for _ in range(_MAX_LINKS):
        if blob is None or blob.type != "blob" or blob.mode != _SYMLINK:
            break
        # A committed symbolic link holds its target's name: followed inside the commit's
        # tree as the work tree follows it, never read as the file's content.
        if blob.size > _MAX_LINK_BYTES:  # git stores any blob under a link's mode
            raise UserError(f"{path} at {commit[:12]}: a symbolic link of {blob.size} bytes")
        target = blob.data_stream.read().decode("utf-8", "surrogateescape")
        followed = posixpath.normpath(posixpath.join(posixpath.dirname(blob.path), target))
        if target.startswith("/") or followed == ".." or followed.startswith("../"):
            raise UserError(
                f"{path} at {commit[:12]}: a symbolic link to {target!r}, outside the repository"
            )
        blob = _entry(tree, followed, commit)
    else:
        raise UserError(f"{path} at {commit[:12]}: too many levels of symbolic links")
    if blob is None or blob.type != "blob":
        return None
    if max_bytes is not None and blob.size > max_bytes:
        raise BlobTooLarge(path, commit, blob.size, max_bytes)
    data: bytes = blob.data_stream.read()
    return data


_SYMLINK = 0o120000
_MAX_LINKS = 40  # as Linux follows at most 40
_MAX_LINK_BYTES = 4096  # PATH_MAX


def _entry(tree: git.Tree, path: str, commit: str) -> git.Blob | git.Tree | None:
    try:
        entry: git.Blob | git.Tree = tree / path
    except KeyError:
        return None
    except ValueError as exc:  # GitPython refuses a crafted tree's "..", ".git" or "a/b" entry
        raise UserError(f"{path} at {commit[:12]}: a tree git itself would refuse: {exc}") from None
    return entry


# --- history -------------------------------------------------------------------------------

_STATUS = {
    "A": "added",
    "M": "modified",
    "R": "renamed",
    "C": "copied",
    "D": "deleted",
    "T": "type-changed",
}
_RECORD = "\x1e"
_FIELD = "\x1f"


@dataclass(frozen=True)
class FileRevision:
    """One commit that touched a file: its path after the commit (before it, for a deletion)."""

    commit: str
    date: str
    subject: str
    status: str
    path: str
    old_path: str | None = None
    # A rename to a path outside the followed one: the history walked ends at this commit.
    moved_away: bool = False

    @property
    def deleted(self) -> bool:
        return self.status == "deleted"


def path_in_repo(repo: git.Repo, directory: str | Path, path: str) -> str:
    """``path`` inside ``directory`` as a path relative to the repository root.

    ``directory`` may be a folder inside the work tree (an installed package in a checked-in
    ``node_modules``, say); git always speaks of paths from the root.
    """
    root = Path(repo.working_dir).resolve()
    relative = Path(directory).resolve().relative_to(root) / PurePosixPath(path.lstrip("/"))
    return relative.as_posix()


def file_history(repo: git.Repo, paths: Sequence[str], ref: str = "HEAD") -> list[FileRevision]:
    """Every commit reachable from ``ref`` that touched the file, newest first.

    The file is the first of ``paths`` that exists at ``ref``, or, when none does (the copy
    was deleted), the one touched last. Renames are followed back through older names and
    deletions are listed like any other change.
    """
    commit = resolve_commit(repo, ref)
    followed = next((p for p in paths if file_at(repo, commit, p) is not None), None)
    if followed is None:
        last = repo.git.log("-1", "--name-only", "--format=", commit, "--", *paths)
        touched = [line for line in last.splitlines() if line.strip()]
        if not touched:
            return []
        followed = touched[0]
    output = repo.git.log(
        "--follow",
        "-M",
        # A merge that resolved the file differently from every parent is a revision too;
        # it is described against its first parent, the branch the history is walked on.
        "--diff-merges=first-parent",
        "--name-status",
        f"--format={_RECORD}%H{_FIELD}%aI{_FIELD}%s",
        commit,
        "--",
        followed,
    )
    revisions = (_parse_log_record(record) for record in output.split(_RECORD) if record.strip())
    return [_renamed_away(repo, r) if r.deleted else r for r in revisions if r is not None]


def _renamed_away(repo: git.Repo, revision: FileRevision) -> FileRevision:
    """A "deletion" that renamed the file to a path outside the followed one (``log --follow``
    only sees the old path go) is that rename."""
    # Against the first parent, the branch the history is walked on (as for merges above).
    output = repo.git.diff("-M", "--name-status", f"{revision.commit}^", revision.commit)
    for line in output.splitlines():
        fields = line.split("\t")
        if fields[0].startswith("R") and len(fields) == 3 and fields[1] == revision.path:
            return replace(
                revision, status="renamed", path=fields[2], old_path=fields[1], moved_away=True
            )
    return revision


def _parse_log_record(record: str) -> FileRevision | None:
    header, _, body = record.partition("\n")
    sha, date, subject = header.split(_FIELD, 2)
    status_line = next((line for line in body.splitlines() if line.strip()), None)
    if status_line is None:  # a merge identical to its first parent for this file
        return None
    fields = status_line.split("\t")
    status = _STATUS.get(fields[0][:1], fields[0])
    if status in ("renamed", "copied"):
        return FileRevision(sha, date, subject, status, path=fields[2], old_path=fields[1])
    return FileRevision(sha, date, subject, status, path=fields[1])
