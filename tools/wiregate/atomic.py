"""Writing a file whole or not at all, with the permission bits a user expects: the one way
the project's commands replace a file they do not own the content of (generated code, the
drift baseline; the exporter's outputs keep the same bits through ``current_umask``)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["current_umask", "refusal", "write_atomically"]


def refusal(path: Path) -> str | None:
    """Why ``path`` may not be replaced, or None: an existing node that is not a regular
    file (a symbolic link, a directory, a device, a FIFO, a socket: the rename would replace
    the node itself), or a read-only file (the rename would bypass its permissions; refused
    as ``open`` refuses it, root included, whom ``open`` would let through)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:  # a loop or a file among the parents is reported on writing
        return None if exc.errno == errno.ENOTDIR else exc.strerror or str(exc)
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if not stat.S_IMODE(info.st_mode) & 0o222 or not os.access(path, os.W_OK):
        return "a read-only file"
    return None


def current_umask() -> int:
    """The process's umask, read without changing it (``os.umask`` sets it, racing any
    thread that creates a file meanwhile); where /proc has no ``Umask:``, set and reset."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomically(path: Path, data: bytes, mode: int | None = None) -> None:
    """A hidden temporary file beside ``path``, renamed over it: an interrupted run (Ctrl-C,
    SIGTERM) leaves the old file or the new one, never half of one, and no temporary file.
    ``mode``: the new file's permission bits; by default those of the file it replaces, or
    for a new file ``0666`` less the umask, as ``open`` gives (mkstemp's 0600 would hide it
    from the other users who read it)."""
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~current_umask()
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
