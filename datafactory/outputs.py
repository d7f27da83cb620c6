"""Output stage: files appear under their final names only when the run succeeds; the lines
of the rejects file and the G3 report.

Each output is written to a temporary file in its target's directory (so the final
``rename`` is atomic on one file system); until ``commit_all`` a killed run leaves at most a
hidden ``.<name>.<random>.tmp`` file, never a partial file under the final name. An existing
output that is a symlink is followed (its target is replaced, the link stays); one that is
not a regular file (a device, a FIFO, a socket) is refused, since the rename would replace
the node itself with a regular file.

Several renames cannot be one atomic step, so ``commit_all`` narrows the window: every file
is flushed, synced and closed first (where a full disk shows), and only then renamed, in
order; a failed rename names the files already in place.

An output keeps the permission bits of the file it replaces; a new one gets ``0666`` less
the umask, as ``open`` would give it, or the mode its creator asks for (the rejects file,
which holds raw input lines, is ``0600``). Until the rename the temporary file is ``0600``.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from datafactory import interrupts
from datafactory.manifest import path_text
from wiregate.atomic import current_umask
from wiregate.errors import UserError

if TYPE_CHECKING:
    from datafactory.contamination import Contamination
    from datafactory.settings import Settings

__all__ = [
    "CARD",
    "G3_REPORT",
    "MANIFEST",
    "AtomicOutput",
    "OutputsPartlyWritten",
    "append_lines",
    "commit_all",
    "g3_report",
    "naming",
    "open_outputs",
    "reject_line",
    "sha256_file",
    "workspace",
]


def naming(exc: OSError, path: str) -> OSError:
    """``exc`` naming ``path`` when it names no file: a failed write (a full disk) says which
    file, as a failed open does."""
    return exc if exc.filename else OSError(exc.errno, exc.strerror, path)


MANIFEST = "manifest"
CARD = "card"  # the dataset card (README.md) of the trl target
G3_REPORT = "g3_report"


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class OutputsPartlyWritten(Exception):
    """A rename failed after others succeeded: ``in_place`` are under their final names
    (with this run's content), the rest were discarded."""

    def __init__(self, message: str, in_place: list[str]) -> None:
        super().__init__(message)
        self.in_place = in_place


class AtomicOutput:
    """A file written under a temporary name, hashed as it is written, renamed at the end."""

    def __init__(self, path: str, new_mode: int | None = None) -> None:
        self.path = path  # as the user gave it: messages and the manifest name it so
        # The file the rename replaces: a symlink's target, so the link itself stays.
        self.target = os.path.realpath(path)
        directory = Path(self.target).parent
        if not directory.is_dir():
            shown = directory if os.path.islink(path) else Path(path).parent
            raise UserError(f"{path}: directory {str(shown)!r} does not exist")
        try:
            mode = os.stat(self.target).st_mode
            self.mode = stat.S_IMODE(mode)  # as the file it replaces
        except FileNotFoundError:
            mode = stat.S_IFREG
            self.mode = new_mode if new_mode is not None else 0o666 & ~current_umask()
        except OSError as exc:  # a symlink loop, a path through a file
            raise UserError(f"{path}: cannot write: {exc.strerror}") from None
        if stat.S_ISDIR(mode):
            raise UserError(f"{path}: is a directory")
        if not stat.S_ISREG(mode):
            raise UserError(
                f"{path}: not a regular file (outputs are written to a temporary file "
                "and renamed into place)"
            )
        try:
            fd, self.temp_path = tempfile.mkstemp(
                prefix=f".{Path(self.target).name}.", suffix=".tmp", dir=directory
            )
        except OSError as exc:
            raise UserError(f"{path}: cannot write: {exc.strerror}") from None
        self._handle: IO[bytes] = os.fdopen(fd, "wb", buffering=1 << 20)
        self._digest = hashlib.sha256()
        self._committed = False
        self._handed = 0  # bytes handed to the disk early (``start_writeback``)
        self.records = 0

    def write(self, data: bytes, records: int) -> None:
        if data:
            try:
                self._handle.write(data)
            except OSError as exc:
                raise naming(exc, self.path) from None
            self._digest.update(data)
        self.records += records

    @property
    def sha256(self) -> str:
        return self._digest.hexdigest()

    def start_writeback(self) -> None:
        """Hand what is written so far to the disk now, without waiting: the commit's
        ``fsync`` then has little left to wait for (Linux starts writing dirty pages back
        at ``POSIX_FADV_DONTNEED``; the pages are not read again)."""
        try:
            self._handle.flush()
        except OSError as exc:
            raise naming(exc, self.path) from None
        if hasattr(os, "posix_fadvise"):  # the part written since the last call
            end = self._handle.tell()
            fd, start = self._handle.fileno(), self._handed
            with contextlib.suppress(OSError):  # advice: a file system may not take it
                os.posix_fadvise(fd, start, end - start, os.POSIX_FADV_DONTNEED)
            self._handed = end

    def finish(self) -> None:
        """Everything on disk under the temporary name: the step a full disk can fail."""
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        os.chmod(self.temp_path, self.mode)

    def rename(self) -> None:
        os.replace(self.temp_path, self.target)
        self._committed = True

    def discard(self) -> None:
        """Remove the temporary file (nothing once the output is in place)."""
        if self._committed:
            return
        if not self._handle.closed:
            with contextlib.suppress(OSError):  # a full disk fails the close's flush too
                self._handle.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.temp_path)


def commit_all(outputs: Sequence[AtomicOutput]) -> None:
    """Put every output in place, in order (so the last, the manifest, vouches for the rest).

    A failure while finishing any file discards all of them and raises ``OSError`` naming
    that output: nothing is written. A failed rename discards the outputs not yet in place;
    the first rename failing raises ``OSError`` likewise, a later one
    ``OutputsPartlyWritten``."""
    for output in outputs:
        try:
            output.finish()
        except OSError as exc:
            for other in outputs:
                other.discard()
            raise OSError(exc.errno, _reason(exc), output.path) from None
    in_place: list[str] = []
    for number, output in enumerate(outputs):
        try:
            output.rename()
        except OSError as exc:
            for other in outputs[number:]:
                other.discard()
            if not in_place:
                raise OSError(exc.errno, _reason(exc), output.path) from None
            not_written = ", ".join(o.path for o in outputs[number:])
            raise OutputsPartlyWritten(
                f"{output.path}: {_reason(exc)}; already in place: {', '.join(in_place)}; "
                f"not written: {not_written}",
                in_place,
            ) from None
        in_place.append(output.path)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def open_outputs(settings: Settings) -> dict[str, AtomicOutput]:
    """Each output's temporary file, by name (``dpo``, ``ppo``, ``kto``, ``sft``, ``rejects``,
    ``G3_REPORT``, ``MANIFEST``, ``CARD``); those made are discarded when one fails. The
    rejects file, which holds raw input lines, is created readable by its owner only."""
    outputs: dict[str, AtomicOutput] = {}
    wanted = {
        "dpo": settings.dpo_path,
        "ppo": settings.ppo_path,
        "kto": settings.kto_path,
        "sft": settings.sft_path,
    }
    try:
        for name in sorted(settings.formats):
            path = wanted[name]
            assert path is not None, "check_settings requires the outputs of the format"
            outputs[name] = AtomicOutput(path)
        if settings.rejects_path:
            outputs["rejects"] = AtomicOutput(settings.rejects_path, new_mode=0o600)
        if settings.g3_report_path:
            outputs[G3_REPORT] = AtomicOutput(settings.g3_report_path)
        if settings.manifest_path:
            outputs[MANIFEST] = AtomicOutput(settings.manifest_path)
        if settings.card_path:
            outputs[CARD] = AtomicOutput(settings.card_path)
    except BaseException:
        for output in outputs.values():
            output.discard()
        raise
    return outputs


def g3_report(found: list[Contamination]) -> bytes:
    """The G3 report file: each contaminated rollout, its eval item, the shared n-gram."""
    report = {
        "contaminated": [
            {"rollout_id": c.rollout_id, "eval_item_id": c.eval_item_id, "ngram": c.ngram}
            for c in found
        ]
    }
    return orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n"


def reject_line(
    display: str, number: int, code: str, detail: str, raw: bytes, length: int = 0
) -> bytes:
    """A rejects-file record; ``length``: the line's, when ``raw`` is only its first bytes
    (a line over the limit is never held whole), given as ``raw_length``."""
    record: dict[str, Any] = {
        "file": path_text(display),
        "line": number,
        "reason": code,
        "detail": detail,
    }
    if length:
        record["raw_length"] = length
        raw = _whole_characters(raw)
    try:
        record["raw"] = raw.decode("utf-8")
    except UnicodeDecodeError:  # kept verbatim all the same, as base64
        record["raw_base64"] = base64.b64encode(raw).decode("ascii")
    return orjson.dumps(record) + b"\n"


def _whole_characters(head: bytes) -> bytes:
    """A line's first bytes without a UTF-8 sequence cut at their end (as they are when
    they are not UTF-8 anyway)."""
    for cut in range(4):
        try:
            head[: len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return head[: len(head) - cut]
    return head


def append_lines(output: AtomicOutput | None, path: str, lines: int) -> None:
    """Append the ``lines`` lines of the file at ``path`` to ``output`` (None: not wanted),
    in blocks; the file is removed once copied."""
    with open(path, "rb") as handle:
        while output is not None and (block := handle.read(1 << 20)):
            output.write(block, 0)
    os.unlink(path)
    if output is not None:
        output.records += lines
        output.start_writeback()


@contextmanager
def workspace(settings: Settings) -> Iterator[tuple[dict[str, AtomicOutput], str]]:
    """The outputs' temporary files (``open_outputs``) and a temporary directory for the
    run's spill; on failure nothing is left of either."""
    outputs: dict[str, AtomicOutput] = {}
    spill: tempfile.TemporaryDirectory[str] | None = None
    try:
        with interrupts.deferred():  # no temporary file made but not yet known
            outputs = open_outputs(settings)
            spill = tempfile.TemporaryDirectory(prefix="datafactory-", dir=settings.temp_dir)
        yield outputs, spill.name
    except BaseException:
        with interrupts.deferred():
            for output in outputs.values():
                output.discard()
        raise
    finally:
        with interrupts.deferred():
            if spill is not None:
                spill.cleanup()
