"""Output stage: files appear under their final names only when the run succeeds.

Each output is written to a temporary file in the same directory (so the final ``rename``
is atomic on one file system) and renamed into place by ``commit``; until then a killed run
leaves at most a hidden ``.<name>.<random>.tmp`` file, never a partial file under the final
name. ``discard`` removes the temporary file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import IO

from wiregate.errors import UserError

__all__ = ["AtomicOutput", "sha256_file"]


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class AtomicOutput:
    """A file written under a temporary name, hashed as it is written, renamed at the end."""

    def __init__(self, path: str) -> None:
        self.path = path
        target = Path(path)
        directory = target.parent
        if not directory.is_dir():
            raise UserError(f"{path}: directory {str(directory)!r} does not exist")
        if target.is_dir():
            raise UserError(f"{path}: is a directory")
        try:
            fd, self.temp_path = tempfile.mkstemp(
                prefix=f".{target.name}.", suffix=".tmp", dir=directory
            )
        except OSError as exc:
            raise UserError(f"{path}: cannot write: {exc.strerror}") from None
        self._handle: IO[bytes] = os.fdopen(fd, "wb", buffering=1 << 20)
        self._digest = hashlib.sha256()
        self.records = 0

    def write(self, data: bytes, records: int) -> None:
        if data:
            self._handle.write(data)
            self._digest.update(data)
        self.records += records

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()

    def commit(self) -> None:
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        os.chmod(self.temp_path, 0o644)
        os.replace(self.temp_path, self.path)

    def discard(self) -> None:
        if not self._handle.closed:
            self._handle.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.temp_path)
