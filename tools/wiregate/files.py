"""Reading a governed checkout that may be hostile: only regular files, a bounded number of
bytes, each real directory once, a bounded depth.

A checkout is someone else's tree: a FIFO would block ``open``, ``/dev/zero`` would fill the
memory, a pnpm-style symlink DAG multiplies paths exponentially and a link loop never ends.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_DEPTH",
    "NotReadable",
    "Skipped",
    "not_a_directory",
    "not_a_regular_file",
    "read_regular",
    "resolved_inside",
    "walk_files",
]

#: Bytes read from one file at most (``max_file_bytes`` in mirrors.toml overrides it).
DEFAULT_MAX_BYTES = 5_000_000
#: Folder levels below the checkout that discovery searches.
MAX_DEPTH = 64

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotReadable(Exception):
    """A file that is not read: not a regular file, too large, or unopenable. The message is
    the reason, without the path (callers name the file their own way); ``errno`` is the
    operating system's, when it refused."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def not_a_directory(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` (symlinks followed) is no directory to read a checkout from, or None when
    it is one: ``no such directory``, ``not a directory (a FIFO)``, or the system's reason
    (a name too long)."""
    return _not_a(path, stat.S_ISDIR, "no such directory", "not a directory")


def not_a_regular_file(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` (symlinks followed) is no regular file to read, or None when it is one."""
    return _not_a(path, stat.S_ISREG, "file not found", "not a regular file")


def _not_a(
    path: str | os.PathLike[str], wanted: Callable[[int], bool], missing: str, other: str
) -> str | None:
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return missing
    except (OSError, ValueError) as exc:  # a name too long, a NUL, a loop, no permission
        return getattr(exc, "strerror", None) or str(exc)
    if wanted(mode):
        return None
    return f"{other} ({'a file' if stat.S_ISREG(mode) else _kind(mode)})"


def read_regular(path: str | os.PathLike[str], max_bytes: int, *, follow: bool = True) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes`` bytes.

    ``O_NONBLOCK`` makes opening a FIFO return at once (instead of waiting for a writer), and
    the type is checked on the opened descriptor, so nothing can swap the file in between.
    ``follow=False`` adds ``O_NOFOLLOW``: the caller has resolved the path already.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise NotReadable(f"cannot open: {exc.strerror or exc}", exc.errno) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotReadable(f"{_kind(info.st_mode)}, not a regular file")
        if info.st_size > max_bytes:
            raise NotReadable(f"{info.st_size} bytes, over the limit of {max_bytes}")
        chunks = []
        left = max_bytes + 1  # a file that grows while read is still caught
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise NotReadable(f"more than {max_bytes} bytes, over the limit")
        return data
    except OSError as exc:
        raise NotReadable(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def resolved_inside(root: str, path: str | os.PathLike[str]) -> tuple[str, bool]:
    """``path`` with its symlinks resolved, and whether that is ``root`` (resolved already)
    or below it: a symlink must not lead a read out of the checkout (to ``/etc/passwd``,
    ``/dev/zero`` or ``/``)."""
    real = os.path.realpath(path)
    return real, os.path.commonpath([root, real]) == root


@dataclass(frozen=True)
class Skipped:
    """Something the walk did not enter or read, and why (one line in the report)."""

    path: str  # relative to the root, POSIX separators
    reason: str


def walk_files(
    root: Path, suffix: str | tuple[str, ...], skip_dirs: frozenset[str], max_depth: int = MAX_DEPTH
) -> Iterator[tuple[str, Path] | Skipped]:
    """``(relative path, path)`` of every entry whose name ends with ``suffix`` (or one of
    them), breadth first; a folder too deep or unreadable comes as :class:`Skipped`.

    Symlinks that stay inside ``root`` are followed (pnpm and workspaces link packages into
    node_modules, and a copy is configured by its linked path), but each real directory
    (device, inode) is entered once: a symlink DAG or loop costs time linear in the real tree.
    A symlink that resolves outside ``root`` comes as :class:`Skipped`, as ``wiregate drift``
    refuses such a path. Breadth first, with dot-folders after the others, so a directory is
    named by its shortest, plainest path (``node_modules/@scope/pkg`` rather than
    ``node_modules/.pnpm/pkg@1/...``).
    """
    visited: set[tuple[int, int]] = set()
    try:
        info = os.stat(root)
    except OSError as exc:
        yield Skipped(".", f"cannot open: {exc.strerror}")
        return
    real_root = os.path.realpath(root)
    visited.add((info.st_dev, info.st_ino))
    queue: deque[tuple[str, int]] = deque([("", 0)])
    while queue:
        relative, depth = queue.popleft()
        directory = root / relative if relative else root
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda e: (e.name.startswith("."), e.name))
        except OSError as exc:
            yield Skipped(relative or ".", f"cannot list: {exc.strerror}")
            continue
        for entry in entries:
            child = f"{relative}/{entry.name}" if relative else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                is_dir = False
            if is_dir and entry.name in skip_dirs:
                continue
            if not is_dir and not entry.name.endswith(suffix):
                continue  # never read: where it leads does not matter
            if entry.is_symlink():
                real, inside = resolved_inside(real_root, entry.path)
                if not inside:
                    yield Skipped(child, f"resolves to {real}, outside the checkout")
                    continue
            if is_dir:
                try:
                    target = entry.stat(follow_symlinks=True)
                except OSError:
                    continue
                key = (target.st_dev, target.st_ino)
                if key in visited:
                    continue
                visited.add(key)
                if depth + 1 > max_depth:
                    yield Skipped(child, f"deeper than {max_depth} levels, not searched")
                    continue
                queue.append((child, depth + 1))
            else:
                yield child, Path(entry.path)
