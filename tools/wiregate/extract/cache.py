"""Extracted schemas cached by the content of the files they came from.

An entry is found by a key naming what was asked (language, file or module, type, mode, the
versions of the tools) and holds the schema with the SHA-256 of every file the extraction
read, relative to the checkout, and of every path under the checkout it looked at and did not
read (an import that found nothing there, a package's other candidates): absent then, and
still absent for a hit. It is used only when each of those paths still has that content, so
an edit anywhere in the files a type depends on is seen, a file created where an import
looked is seen, and the same files at any commit (``--ref``, ``drift history``) hit the same
entry.

The folder is ``$WIREGATE_CACHE_DIR``, else ``$XDG_CACHE_HOME/wiregate``, else
``~/.cache/wiregate``: per user, outside every repository. A damaged or unreadable entry is a
miss, and a cache that cannot be written only costs time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from wiregate.files import NotReadable, read_regular

__all__ = ["cache_dir", "cache_key", "file_digests", "load", "store"]

#: Files hashed for an entry are read with the same bound as a copy, and so is an entry: one
#: larger is not written (the reader would refuse it, and every run would write it again).
_MAX_BYTES = 50_000_000
_FORMAT = 3  # bumped when the entry layout changes


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get("WIREGATE_CACHE_DIR"):
        return Path(env["WIREGATE_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "wiregate"


def cache_key(*parts: object) -> str:
    return hashlib.sha256(json.dumps([_FORMAT, *parts], sort_keys=True).encode()).hexdigest()


#: What a folder's path holds for an entry: module resolution looks inside a folder only
#: once it exists (``./lib`` for ``lib/index.ts``, ``node_modules`` after an install).
_FOLDER = "folder"


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(read_regular(path, _MAX_BYTES)).hexdigest()
    except NotReadable:
        return _FOLDER if path.is_dir() else None


def file_digests(root: Path, files: Iterable[str]) -> dict[str, str | None]:
    """``{relative path: sha256, "folder", or None when absent}`` of ``files`` under
    ``root``."""
    return {name: _digest(root / name) for name in sorted(set(files))}


def _entry_path(key: str) -> Path:
    return cache_dir() / "extract" / key[:2] / f"{key}.json"


def load(key: str, root: Path) -> tuple[Any, tuple[str, ...]] | None:
    """The cached value for ``key`` and the files it came from, if every one of them, and
    every path the extraction looked at, is unchanged under ``root``."""
    try:
        # Anything but a regular file of bounded size is a miss: an entry planted as a FIFO
        # blocked the read, one linked to /dev/zero filled memory.
        entry = json.loads(read_regular(_entry_path(key), _MAX_BYTES))
        files, looked = entry["files"], entry["looked"]
        if not isinstance(files, dict) or not isinstance(looked, dict):
            return None
        for name, digest in (*files.items(), *looked.items()):
            if _digest(root / name) != digest:
                return None
        return entry["value"], tuple(files)
    except (NotReadable, OSError, ValueError, KeyError, TypeError):
        return None


def store(
    key: str, root: Path, files: Iterable[str], value: Any, looked: Iterable[str] = ()
) -> None:
    """Remember ``value`` for ``key`` with the current content of ``files`` and ``looked``
    (paths the extraction looked at besides the files it came from) under ``root``."""
    files = set(files)
    entry = json.dumps(
        {
            "files": file_digests(root, files),
            "looked": file_digests(root, set(looked) - files),
            "value": value,
        }
    ).encode()
    if len(entry) > _MAX_BYTES:
        return
    path = _entry_path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written aside and renamed: a concurrent reader sees the old entry or the new one.
        fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except OSError:
        return  # a read-only cache only costs time
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(entry)
        os.replace(temporary, path)
    except OSError:
        pass  # a full disk only costs time
    finally:
        # Not left behind by a failed write or Ctrl-C (after the rename it is gone already).
        with contextlib.suppress(OSError):
            os.unlink(temporary)
